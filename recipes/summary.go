package recipes

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// RunFigures are what one run of a recipe gave.
type RunFigures struct {
	Run  int    `json:"run"` // from 1
	Seed uint64 `json:"seed"`
	// ExitStatus is `d500 train`'s; Error its message when it failed.
	ExitStatus int     `json:"exit_status"`
	Error      string  `json:"error,omitempty"`
	Steps      int     `json:"steps"`
	Samples    int     `json:"samples"`
	Seconds    float64 `json:"seconds"`
	// FinalLoss and TestAccuracy are the last training loss and test
	// accuracy (nil: none).
	FinalLoss    *float64 `json:"final_loss"`
	TestAccuracy *float64 `json:"test_accuracy"`
	// ReachedTarget says whether an evaluation reached the target, and
	// the figures to it when one did.
	ReachedTarget   bool    `json:"reached_target"`
	SecondsToTarget float64 `json:"seconds_to_target,omitempty"`
	SamplesToTarget int     `json:"samples_to_target,omitempty"`
	StepsToTarget   int     `json:"steps_to_target,omitempty"`
	CSV             string  `json:"csv,omitempty"`
}

// Interval is a mean with its 95% confidence interval over the runs it
// was taken from (Lo and Hi NaN, JSON null, from fewer than two).
type Interval struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"ci95_lo"`
	Hi   float64 `json:"ci95_hi"`
	// N counts the runs used, Dropped those left out (the fastest and
	// slowest, from five runs up).
	N       int `json:"n"`
	Dropped int `json:"dropped"`
}

// Summary is the runs of a recipe summed up.
type Summary struct {
	Runs    int `json:"runs"`
	Reached int `json:"reached_target"`
	// SecondsToTarget and SamplesToTarget are set when every run reached
	// the target.
	SecondsToTarget *Interval `json:"seconds_to_target,omitempty"`
	SamplesToTarget *Interval `json:"samples_to_target,omitempty"`
	TestAccuracy    *Interval `json:"test_accuracy,omitempty"`
}

// MeanInterval is the mean of xs with a 95% Student-t confidence
// interval; with olympic set and five values or more, the smallest and
// largest are dropped first, as MLPerf scores time to train (a fast or
// slow outlier then moves the figure less). Fewer than two values give no
// interval (NaN bounds).
func MeanInterval(xs []float64, olympic bool) Interval {
	v := append([]float64{}, xs...)
	sort.Float64s(v)
	dropped := 0
	if olympic && len(v) >= 5 {
		v, dropped = v[1:len(v)-1], 2
	}
	iv := Interval{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), N: len(v), Dropped: dropped}
	if len(v) == 0 {
		return iv
	}
	iv.Mean = stat.Mean(v, nil)
	if len(v) >= 2 {
		se := stat.StdDev(v, nil) / math.Sqrt(float64(len(v)))
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(v) - 1)}.Quantile(0.975)
		iv.Lo, iv.Hi = iv.Mean-t*se, iv.Mean+t*se
	}
	return iv
}

// Summarize sums up the runs' figures.
func Summarize(runs []RunFigures) Summary {
	s := Summary{Runs: len(runs)}
	var secs, samples, accs []float64
	for _, r := range runs {
		if r.ReachedTarget {
			s.Reached++
			secs = append(secs, r.SecondsToTarget)
			samples = append(samples, float64(r.SamplesToTarget))
		}
		if r.TestAccuracy != nil {
			accs = append(accs, *r.TestAccuracy)
		}
	}
	if s.Reached == len(runs) && s.Reached > 0 {
		st, sa := MeanInterval(secs, true), MeanInterval(samples, true)
		s.SecondsToTarget, s.SamplesToTarget = &st, &sa
	}
	if len(accs) > 0 {
		a := MeanInterval(accs, false)
		s.TestAccuracy = &a
	}
	return s
}

// Verdict is one acceptance criterion checked.
type Verdict struct {
	Criterion string `json:"criterion"`
	Holds     bool   `json:"holds"`
	Detail    string `json:"detail"`
}

// Check checks the acceptance criteria on the runs. A run that failed
// (exit status other than 0) misses every criterion.
func (a Acceptance) Check(runs []RunFigures, s Summary) []Verdict {
	var out []Verdict
	failed := 0
	for _, r := range runs {
		if r.ExitStatus != 0 {
			failed++
		}
	}
	out = append(out, Verdict{"every run completes", failed == 0, fmt.Sprintf("%d of %d runs failed", failed, len(runs))})
	if t := a.TargetAccuracy; t != nil {
		out = append(out, Verdict{fmt.Sprintf("every run reaches test accuracy %g", *t), s.Reached == len(runs),
			fmt.Sprintf("%d of %d runs reached it", s.Reached, len(runs))})
	}
	if m := a.MaxSecondsToTarget; m != nil {
		v := Verdict{Criterion: fmt.Sprintf("mean time to the target at most %gs", *m), Detail: "not every run reached the target"}
		if s.SecondsToTarget != nil {
			v.Holds = s.SecondsToTarget.Mean <= *m
			v.Detail = fmt.Sprintf("mean %.3gs", s.SecondsToTarget.Mean)
		}
		out = append(out, v)
	}
	if m := a.MinTestAccuracy; m != nil {
		v := Verdict{Criterion: fmt.Sprintf("every run's final test accuracy at least %g", *m), Holds: len(runs) > 0}
		worst := math.Inf(1)
		for _, r := range runs {
			if r.TestAccuracy == nil || *r.TestAccuracy < *m {
				v.Holds = false
			}
			if r.TestAccuracy != nil {
				worst = math.Min(worst, *r.TestAccuracy)
			}
		}
		v.Detail = fmt.Sprintf("lowest %.4g", worst)
		out = append(out, v)
	}
	if m := a.MaxFinalLoss; m != nil {
		v := Verdict{Criterion: fmt.Sprintf("every run's final loss at most %g", *m), Holds: len(runs) > 0}
		worst := math.Inf(-1)
		for _, r := range runs {
			if r.FinalLoss == nil || *r.FinalLoss > *m {
				v.Holds = false
			}
			if r.FinalLoss != nil {
				worst = math.Max(worst, *r.FinalLoss)
			}
		}
		v.Detail = fmt.Sprintf("highest %.4g", worst)
		out = append(out, v)
	}
	return out
}
