package metrics

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"
)

// Quantiles summarises the wall times of repeated runs, in milliseconds:
// the extremes, the 10th and 90th percentiles (nearest rank) and the
// median, how precisely the median is known and how much the runs vary
// (TimingStats), and the runs themselves, so that two reports can be
// tested against each other (d500 bench-compare).
type Quantiles struct {
	Min        float64    `json:"min"`
	P10        float64    `json:"p10"`
	Median     float64    `json:"median"`
	P90        float64    `json:"p90"`
	Max        float64    `json:"max"`
	MedianCI95 [2]float64 `json:"median_ci95"`
	CV         float64    `json:"cv"`
	Samples    []float64  `json:"samples_ms,omitempty"`
}

// PairResult is the outcome of timing two runs interleaved: the latencies
// of A and of B, and Ratio, A's median over B's (above 1, A is slower).
type PairResult struct {
	Runs  int       `json:"runs"` // timed runs of each
	A     Quantiles `json:"a_ms"`
	B     Quantiles `json:"b_ms"`
	Ratio float64   `json:"ratio"`
	// the summed wall times of the timed runs, for BenchResults
	totalA, totalB time.Duration
	// the timed runs themselves, for PoolPairs
	timesA, timesB []time.Duration
}

// PoolPairs is the result of the timed runs of several BenchPairs of the
// same two runs taken together: their quantiles and ratio are those of
// all the runs. Timing a pair in several passes minutes apart and pooling
// them keeps a stretch of minutes in which the machine is slower or
// faster from deciding the result alone, as it does when all the runs
// fall inside it. With no results it returns the zero result.
func PoolPairs(rs ...PairResult) PairResult {
	var p PairResult
	for _, r := range rs {
		p.Runs += r.Runs
		p.totalA += r.totalA
		p.totalB += r.totalB
		p.timesA = append(p.timesA, r.timesA...)
		p.timesB = append(p.timesB, r.timesB...)
	}
	if len(p.timesA) == 0 {
		return PairResult{}
	}
	p.A = quantiles(p.timesA)
	if len(p.timesB) > 0 {
		p.B = quantiles(p.timesB)
		p.Ratio = p.A.Median / p.B.Median
	}
	return p
}

// BenchResults restates the result as two BenchResults, the form Bench
// gives (the 10th percentiles left out).
func (r PairResult) BenchResults() (a, b BenchResult) {
	one := func(q Quantiles, total time.Duration) BenchResult {
		res := BenchResult{Iterations: r.Runs, Latency: LatencyMS{Min: q.Min, Median: q.Median, P90: q.P90, Max: q.Max,
			MedianCI95: q.MedianCI95, CV: q.CV, Samples: q.Samples}}
		if total > 0 {
			res.ThroughputPerS = float64(r.Runs) / total.Seconds()
		}
		return res
	}
	return one(r.A, r.totalA), one(r.B, r.totalB)
}

// PairConfig says how BenchPair runs: Warmup untimed runs of each, then
// Runs timed ones of each, or fewer when Budget is set and the warm-up
// shows that Runs pairs would take longer than Budget (but never fewer
// than MinRuns, 1 when 0). Stop, when set, is checked between pairs.
type PairConfig struct {
	Warmup  int
	Runs    int
	MinRuns int
	Budget  time.Duration
	Stop    context.Context
}

// BenchPair times a and b alternately — a, b, a, b, … — so that a drift of
// the machine's speed during the measurement (another job starting, the
// clock frequency changing) falls on both alike and their ratio stays
// meaningful. The warm-up alternates too. b may be nil: then a alone is
// timed, the same way, and B and Ratio stay zero. The first error stops it
// and is returned naming the side and run; a cancelled Stop returns its
// error.
func BenchPair(a, b func() error, cfg PairConfig) (PairResult, error) {
	return benchPair(a, b, cfg, time.Now)
}

// benchPair is BenchPair with the clock as a parameter, so tests can drive
// it with fake durations.
func benchPair(a, b func() error, cfg PairConfig, now func() time.Time) (PairResult, error) {
	if cfg.Runs <= 0 {
		return PairResult{}, fmt.Errorf("a pair benchmark needs at least one run, got %d", cfg.Runs)
	}
	if cfg.Warmup < 0 || cfg.MinRuns < 0 || cfg.Budget < 0 {
		return PairResult{}, fmt.Errorf("a pair benchmark needs non-negative warm-up, minimum runs and budget, got %d, %d, %v", cfg.Warmup, cfg.MinRuns, cfg.Budget)
	}
	stopped := func() error {
		if cfg.Stop == nil {
			return nil
		}
		return cfg.Stop.Err()
	}
	timed := func(run func() error) (time.Duration, error) {
		if run == nil {
			return 0, nil
		}
		start := now()
		err := run()
		return now().Sub(start), err
	}
	var warmPair time.Duration // the slowest warm-up pair, to plan the runs
	for i := range cfg.Warmup {
		if err := stopped(); err != nil {
			return PairResult{}, err
		}
		da, err := timed(a)
		if err != nil {
			return PairResult{}, fmt.Errorf("A: warm-up run %d: %w", i+1, err)
		}
		db, err := timed(b)
		if err != nil {
			return PairResult{}, fmt.Errorf("B: warm-up run %d: %w", i+1, err)
		}
		warmPair = max(warmPair, da+db)
	}
	runs := plannedRuns(cfg, warmPair)
	ta, tb := make([]time.Duration, runs), make([]time.Duration, runs)
	for i := range runs {
		if err := stopped(); err != nil {
			return PairResult{}, err
		}
		var err error
		if ta[i], err = timed(a); err != nil {
			return PairResult{}, fmt.Errorf("A: timed run %d: %w", i+1, err)
		}
		if tb[i], err = timed(b); err != nil {
			return PairResult{}, fmt.Errorf("B: timed run %d: %w", i+1, err)
		}
	}
	res := PairResult{Runs: runs, A: quantiles(ta), totalA: sum(ta), totalB: sum(tb), timesA: ta}
	if b != nil {
		res.B = quantiles(tb)
		res.Ratio = res.A.Median / res.B.Median
		res.timesB = tb
	}
	return res, nil
}

func sum(ds []time.Duration) time.Duration {
	var s time.Duration
	for _, d := range ds {
		s += d
	}
	return s
}

// plannedRuns is cfg.Runs, cut to what fits in cfg.Budget at the pace of
// the slowest warm-up pair, and at least cfg.MinRuns (and 1).
func plannedRuns(cfg PairConfig, pair time.Duration) int {
	runs := cfg.Runs
	if cfg.Budget > 0 && pair > 0 {
		runs = min(runs, int(cfg.Budget/pair))
	}
	return min(cfg.Runs, max(runs, cfg.MinRuns, 1))
}

// quantiles computes min, 10th percentile, median, 90th percentile and
// max of times (not empty), with the median's confidence interval and the
// coefficient of variation (SummarizeTimings), and keeps the times in
// milliseconds, in the order they were taken; the percentiles are
// nearest-rank (the ⌈pn⌉-th smallest), the median of an even count the
// mean of the middle two.
func quantiles(times []time.Duration) Quantiles {
	samples := make([]float64, len(times))
	for i, d := range times {
		samples[i] = float64(d) / float64(time.Millisecond)
	}
	sorted := slices.Sorted(slices.Values(samples))
	n := len(sorted)
	rank := func(tenths int) int { return max((tenths*n+9)/10, 1) } // ⌈tenths/10 · n⌉
	q := Quantiles{
		Min:     sorted[0],
		P10:     sorted[rank(1)-1],
		Median:  sortedMedian(sorted),
		P90:     sorted[rank(9)-1],
		Max:     sorted[n-1],
		Samples: samples,
	}
	// Durations are finite and, from a monotonic clock, not negative; a
	// clock stepped backwards would leave the two figures zero.
	if st, err := SummarizeTimings(samples); err == nil {
		q.MedianCI95, q.CV = st.MedianCI95, st.CV
	}
	return q
}

// Allocations are the Go heap allocations of one run, averaged over a
// block of runs.
type Allocations struct {
	Runs         int     `json:"runs"`
	AllocsPerRun float64 `json:"allocs_per_run"`
	BytesPerRun  float64 `json:"bytes_per_run"`
}

// MeasureAllocations calls run n times and reports the heap allocations
// (count and bytes) per call, read with runtime.ReadMemStats before and
// after the block. Every goroutine's allocations count, so a run's worker
// goroutines are included; so would be those of anything else running in
// the process, which is why the caller runs nothing else meanwhile. Warm
// run up first: its first calls allocate what later ones reuse.
func MeasureAllocations(run func() error, n int) (Allocations, error) {
	if n <= 0 {
		return Allocations{}, fmt.Errorf("measuring allocations needs at least one run, got %d", n)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		if err := run(); err != nil {
			return Allocations{}, fmt.Errorf("run %d: %w", i+1, err)
		}
	}
	runtime.ReadMemStats(&after)
	return Allocations{
		Runs:         n,
		AllocsPerRun: float64(after.Mallocs-before.Mallocs) / float64(n),
		BytesPerRun:  float64(after.TotalAlloc-before.TotalAlloc) / float64(n),
	}, nil
}
