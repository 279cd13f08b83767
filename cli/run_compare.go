package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// comparedRun is one backend of `d500 run --compare`: its timing, how
// much slower than it the --backend's median latency is, and how far its
// outputs are from the --backend's.
type comparedRun struct {
	runReport
	// MedianRatio is the --backend's median latency over this one's:
	// above 1, the --backend is slower.
	MedianRatio float64 `json:"median_ratio"`
	MaxAbsError float64 `json:"max_abs_error"`
	MaxRelError float64 `json:"max_rel_error"`
	// Skipped says why the backend did not run the model (it lacks an
	// operator or type: network.ErrUnsupported); its figures are then
	// zero.
	Skipped string `json:"skipped,omitempty"`
}

// compareTolerance is how close another backend's outputs must be for a
// comparison of speeds to mean anything: the cross-backend tests' rule,
// its absolute part scaled to each output's magnitude (ScaledTo).
var compareTolerance = metrics.CrossBackendTolerance

// benchCompared runs the same model on each backend of names, with the
// same feeds and options, checks that its outputs agree with want (the
// --backend's), and times it interleaved with the --backend (runBase):
// base, other, base, other, …, so that the machine's drift falls on both
// alike. It prints the lines of both and the ratio of median latencies,
// and returns the --backend's figures from the first pair. A backend that
// cannot run the model (network.ErrUnsupported) is reported as skipped,
// with the reason; any other failure is an error. When names is empty or
// every backend is skipped, the --backend is timed alone.
func benchCompared(names []string, model *onnx.Model, modelPath string, feeds map[string]onnx.Value, want map[string]onnx.Value,
	outputs []string, runBase func() error, baseName string, opts backend.Options, warmup, n int, stdout io.Writer) (metrics.BenchResult, []comparedRun, error) {
	var base metrics.BenchResult
	var runs []comparedRun
	for _, name := range names {
		var r comparedRun
		var baseHere metrics.BenchResult
		net, err := backend.New(name, model, opts)
		if err == nil {
			r, baseHere, err = benchOne(net, name, modelPath, feeds, want, outputs, runBase, warmup, n)
			net.Close()
		}
		if errors.Is(err, network.ErrUnsupported) {
			fmt.Fprintf(stdout, "%s: skipped: %v\n", name, err)
			runs = append(runs, comparedRun{runReport: runReport{Backend: name, Model: modelPath}, Skipped: err.Error()})
			continue
		}
		if err != nil {
			return base, runs, fmt.Errorf("--compare %s: %w", name, err)
		}
		if base.Iterations == 0 {
			base = baseHere
		}
		r.MedianRatio = baseHere.Latency.Median / r.Latency.Median
		printBench(stdout, baseName, baseHere)
		printBench(stdout, name, r.BenchResult)
		fmt.Fprintf(stdout, "%s / %s median latency: %.2fx, timed interleaved (outputs agree: max abs error %.3g, max rel error %.3g)\n",
			baseName, name, r.MedianRatio, r.MaxAbsError, r.MaxRelError)
		runs = append(runs, r)
	}
	if base.Iterations == 0 { // none compared, or every one skipped: time the --backend alone
		res, err := metrics.Bench(runBase, warmup, n)
		if err != nil {
			return base, runs, err
		}
		printBench(stdout, baseName, res)
		base = res
	}
	return base, runs, nil
}

// benchOne checks one network's outputs against want and times it
// interleaved with runBase, returning its figures and the base's.
func benchOne(net network.Network, name, modelPath string, feeds, want map[string]onnx.Value, outputs []string, runBase func() error, warmup, n int) (comparedRun, metrics.BenchResult, error) {
	got, err := net.Inference(feeds)
	if err != nil {
		return comparedRun{}, metrics.BenchResult{}, err
	}
	r := comparedRun{runReport: runReport{Backend: name, Model: modelPath}}
	for _, o := range outputs {
		d := metrics.Compare(got[o], want[o], compareTolerance.ScaledTo(want[o]))
		if d.Mismatch != "" {
			return comparedRun{}, metrics.BenchResult{}, fmt.Errorf("output %q differs from the --backend's: %s", o, d.Mismatch)
		}
		r.MaxAbsError, r.MaxRelError = max(r.MaxAbsError, d.MaxAbs), max(r.MaxRelError, d.MaxRel)
	}
	res, err := metrics.BenchPair(runBase, func() error { _, err := net.Inference(feeds); return err }, metrics.PairConfig{Warmup: warmup, Runs: n})
	if err != nil {
		return comparedRun{}, metrics.BenchResult{}, err
	}
	base, other := res.BenchResults()
	r.BenchResult = other
	return r, base, nil
}

// printBench prints the timing line of a backend: the quantiles, the 95%
// confidence interval of the median, the coefficient of variation and the
// throughput.
func printBench(w io.Writer, name string, res metrics.BenchResult) {
	l := res.Latency
	fmt.Fprintf(w, "%s: %d runs, latency ms min %.3f median %.3f (95%% CI %.3f–%.3f) p90 %.3f max %.3f, CV %.1f%%, %.1f runs/s\n",
		name, res.Iterations, l.Min, l.Median, l.MedianCI95[0], l.MedianCI95[1], l.P90, l.Max, 100*l.CV, res.ThroughputPerS)
}

// parseCompare splits --compare's comma-separated backends, checking each
// is known and differs from the --backend.
func parseCompare(list, base string) ([]string, error) {
	if list == "" {
		return nil, nil
	}
	var names []string
	for _, n := range strings.Split(list, ",") {
		if n == base {
			return nil, fmt.Errorf("--compare %s: that is the --backend", n)
		}
		if _, err := backend.Get(n); err != nil {
			return nil, fmt.Errorf("--compare: %w", err)
		}
		names = append(names, n)
	}
	return names, nil
}
