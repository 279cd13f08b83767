package cli

import (
	"fmt"
	"io"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/metrics"
)

const gradcheckSynopsis = "[--backend B] [--run REGEX] [--json FILE] [--csv FILE] [--threads N] [--seed N] [--samples N] [--float32] [-v] DIR..."

// gradcheckDoc is printed by -h after the flags: how the check works.
const gradcheckDoc = `
For each case, L = sum_k sum(w_k * y_k) over the floating-point outputs y_k at
the first data set's inputs (w_k fixed, uniform in [-1,1), from --seed; 0 for
an output element that is not finite there) is differentiated by the backend
(InferenceAndBackprop) with respect to every floating-point input and
parameter on a differentiable path, and compared with central differences
sum(w*(y(x+h) - y(x-h))) / 2h, summed in float64, on at most --samples
elements per tensor. A model is checked in float64 when the backend can run
it converted to double, else in its own precision; a float32 gradient is
compared with the float64 model's differences when the backend runs that
model forward:
  float64 backprop:                      h = 1e-6*max(1,|x|), tolerance 1e-5
  float32 backprop, float64 differences: h = 1e-6*max(1,|x|), tolerance 4e-3
  float32 backprop, float32 differences: h = 1e-3*max(1,|x|), tolerance 4e-3
The error of an element is |a-n| / max(|a|, |n|, floor), with floor 1e-3
(float64 differences) or 1e-1 (float32 differences), raised to cover the
rounding noise of the differences. At a kink, a one-sided difference that
matches is accepted; an element that fails is tried again with h/10 and h/100
and their Richardson extrapolation (same floor), and left out when L jumps
there (its difference does not shrink with h) or is undefined at x+-h.
Outputs computed in float32 inside a converted model (say, statistics whose
precision an attribute fixes) make the case float32. A case is skipped, with
the reason, when it has no floating-point output with a finite element, no
differentiable path from an input or parameter, random outputs, or when the
backend lacks an operator or gradient rule. A forward pass that fails at the
test inputs is a failure.
`

// cmdGradcheck checks a backend's gradients on ONNX test cases (layers 0
// and 1).
func cmdGradcheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("gradcheck", gradcheckSynopsis, stderr)
	usageDocs.Store(fs, gradcheckDoc)
	f := addCaseFlags(fs, "backend to check", "check only the cases whose name (suite/case, e.g. node/test_relu) matches this regular expression")
	seed := fs.Uint64("seed", 0, "seed of the weights w_k and of the sampled elements")
	samples := fs.Int("samples", metrics.DefaultGradSamples, "elements checked per input or parameter (0: all)")
	float32Only := fs.Bool("float32", false, "check every case in its own precision, without the float64 conversion")
	dirs, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if code := f.check(fs, stderr, dirs); code >= 0 {
		return code
	}
	if *samples < 0 {
		return usageError(fs, stderr, "--samples must not be negative, got %d", *samples)
	}
	cases, filter, code := selectCases(fs, dirs, *f.run, stderr)
	if code >= 0 {
		return code
	}

	if code := checkOutputs(fs, stderr, f.outputs()...); code >= 0 {
		return code
	}
	ctx, release := interruptible("gradcheck", "stopping after the current case", stderr)
	defer release()

	n := *samples
	if n == 0 {
		n = -1 // every element
	}
	var results []metrics.GradResult
	cfg := metrics.GradConfig{
		Backend:     *f.backend,
		Options:     backend.Options{Threads: *f.threads},
		Filter:      filter,
		Seed:        *seed,
		Samples:     n,
		Float32Only: *float32Only,
		OnResult: func(r metrics.GradResult) {
			results = append(results, r)
			printResult(stdout, r.Result, *f.verbose, func() string {
				return fmt.Sprintf("(%s, %d tensors, %d elements, %d at kinks, %d at jumps left out, max rel error %.3g, %.3fs)",
					r.PrecisionNote(), r.Tensors, r.Elements, r.Kinks, r.Jumps, r.MaxRelError, r.Seconds)
			})
		},
	}
	rep, err := metrics.GradCheck(ctx, cases, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "d500 gradcheck: %v\n", err)
		return exitUsage
	}

	status := finishReport("gradcheck", rep, stderr, f.files(rep)...)
	gradcheckClosingNote(stdout, results)
	fmt.Fprintln(stdout, rep.Summary())
	return status
}

// gradcheckClosingNote prints the precisions the checked cases ran in and
// the worst relative errors, before the summary line.
func gradcheckClosingNote(w io.Writer, results []metrics.GradResult) {
	var f64, f32, coarse, elements int
	for _, r := range results {
		if r.Status == metrics.Skipped {
			continue
		}
		if r.Float32Kernel {
			coarse++
		}
		switch r.PrecisionName() {
		case "float64":
			f64++
		case "float32":
			f32++
		}
		elements += r.Elements
	}
	if f64+f32 == 0 {
		return
	}
	fmt.Fprintf(w, "checked %d cases (%d in float64, %d in float32), %d elements\n", f64+f32, f64, f32, elements)
	if coarse > 0 {
		fmt.Fprintf(w, "%d of the float32 cases are float64 models the backend computes in float32 precision\n", coarse)
	}
	worst := metrics.WorstGradResults(results, 5)
	if len(worst) > 0 {
		fmt.Fprintln(w, "worst relative errors:")
		for _, r := range worst {
			fmt.Fprintf(w, "  %.3g  %s  %s (%s)\n", r.MaxRelError, r.Name, r.Worst, r.PrecisionNote())
		}
	}
}
