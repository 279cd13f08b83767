package metrics

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// Gradient checking (layers 0 and 1): backpropagation against central
// differences on ONNX test cases.
//
// For a case, the checked function is
//
//	L = Σ_k Σ_i w_k[i] · y_k[i]
//
// over the floating-point graph outputs y_k at the first data set's
// inputs, with fixed pseudo-random weights w_k uniform in [-1, 1) (drawn
// from the seed and the case's name, so a case gets the same weights
// whatever else runs). An output element that is not finite at the test
// inputs gets the weight 0: it is left out of L (GradResult.NonFinite
// counts them), and the rest of the case is checked. L is built into a
// copy of the model: each output is reshaped to [1, n_k] and multiplied
// (MatMul) by a constant [n_k, 1] weight, and the terms are added. The
// gradient of L that InferenceAndBackprop computes with respect to every
// floating-point graph input and every parameter (floating-point
// initializer) on a differentiable path to an output is compared, on at
// most Samples elements per tensor chosen at random, with central
// differences
//
//	n = (L(x₊) − L(x₋)) / (x₊ − x₋)
//
// where x₊, x₋ are x ± h rounded to the tensor's type, and h = Step ·
// max(1, |x|). The differences are taken on the outputs themselves, not on
// a computed L: the model without L runs at x₊ and x₋, and
// Σ w ⊙ (y(x₊) − y(x₋)) is summed in float64, so that the outputs x does
// not move contribute exactly nothing and only the rounding of the ones it
// moves is noise.
//
// Precision: a model is checked in float64 when it can be: its float,
// float16 and bfloat16 inputs, initializers, constants and declared types
// (and the types Cast, the random operators and the normalizations'
// stash_type produce) are converted to double, and if the backend cannot
// build, run or differentiate that model, the case is checked in its own
// precision (float32) instead. A float32 check compares float32 backprop
// with differences of the float64 model whenever the backend can run that
// model forward (it may lack only the float64 gradient rules): its
// differences are then exact to far below float32's rounding, and the
// tolerance need only cover the rounding of backprop itself. Without a
// float64 forward, the differences are float32's, with a larger step. An
// output still computed in float32 in the converted model makes the check
// float32's, and so does a backend that answers a float64 model in float32
// precision (its moved outputs are all float32 numbers: see
// float32Kernel). Outputs that the producing operator's schema marks
// non-differentiable (BatchNormalization's running statistics) are not
// part of L.
//
// Error measure: per element, rel = |a − n| / max(|a|, |n|, Floor), where a
// is the backprop gradient; an element passes when rel ≤ RelTol, so a
// gradient smaller than Floor in magnitude (in both a and n) only has to
// agree within RelTol · Floor absolutely. RelTol is that of the precision
// of backprop, Step and Floor those of the precision of the differences.
// The floor also grows with the rounding noise of the difference: Floor is
// raised to NoiseFactor · ε · S / (h · RelTol), where ε is the machine
// epsilon of the outputs the difference is taken on and S = Σ |w| · |y|
// over the output elements that moved (and those too large to show the
// smallest move seen: ε · |y| above it), so an element is never failed for
// less than the noise of the difference itself. At a kink (an element
// within h of a point where the function is not differentiable, such as
// Relu at 0 or a tie in Max), backprop's one-sided derivative is accepted
// when it agrees with one of the one-sided differences
// (L(x₊) − L(x)) / (x₊ − x) or (L(x) − L(x₋)) / (x − x₋) within the same
// tolerance. An element that still fails is checked again with steps h/10
// and h/100 (same floor), and with Richardson's extrapolation of each pair
// of steps, whose h² error terms cancel: they remove the truncation error
// of a step too large for the function (softmax at x = 10000, where h =
// 1e-6·|x| = 0.01, or 10 for float32 differences), and they recognise a
// jump of L (Sign at 0, a step of Floor), where L(x₊) − L(x₋) does not
// shrink with the step: such an element is left out, as is one where L is
// not finite or cannot be computed at x ± h (outside the function's
// domain), one that is not finite itself, and, in a case with non-finite
// outputs, one whose backprop gradient is not finite (it reaches only
// outputs left out of L). A case none of whose elements could be checked
// is skipped.
//
// Skips: a case is skipped, with its reason, when it has no
// floating-point output (integer, boolean or string outputs do not depend
// smoothly on anything) or none with a finite element, when no
// floating-point input or parameter reaches an output through inputs the
// operators' schemas mark differentiable, when the outputs are not
// deterministic (random operators), and when the backend lacks an
// operator or a gradient rule (an error wrapping network.ErrUnsupported;
// the reason is the backend's). Anything else that goes wrong is a
// failure, a forward pass that fails at the test inputs included.

// GradTolerance is the step and tolerance of the gradient check in one
// precision.
type GradTolerance struct {
	// Step is the relative finite-difference step: h = Step · max(1, |x|),
	// used when the differences are taken in this precision.
	Step float64
	// RelTol bounds the relative error of every element of a gradient
	// computed in this precision.
	RelTol float64
	// Floor is the gradient magnitude below which errors count absolutely,
	// used when the differences are taken in this precision (their noise
	// sets it, not backprop's).
	Floor float64
	// NoiseFactor scales the floor that the rounding noise of the
	// differences sets.
	NoiseFactor float64
}

// The defaults of the gradient check. In float64 the central difference's
// truncation error (h²·f”'/6) and rounding error (ε·|y|/h) are both far
// below 1e-6 relative for the test cases' values. A float32 gradient is
// compared with float64 differences when the model runs in double, and
// then only the rounding of its own backprop (a few ε₃₂ times the
// magnitude of what it sums: below 5e-4 on every case of the ONNX suites)
// separates it from them: 4e-3 leaves room for that and still fails a
// gradient 1% off. Differences taken in float32 have a noise of ε₃₂·|y|/h
// per output moved, which a step of 1e-3 keeps near 1e-4 relative, and a
// floor of 1e-1 keeps gradients near 0 from failing on it; NoiseFactor 2
// bounds the rounding of y at the two points.
var (
	GradToleranceFloat64 = GradTolerance{Step: 1e-6, RelTol: 1e-5, Floor: 1e-3, NoiseFactor: 10}
	GradToleranceFloat32 = GradTolerance{Step: 1e-3, RelTol: 4e-3, Floor: 1e-1, NoiseFactor: 2}
)

// DefaultGradSamples is the number of elements checked per tensor when
// GradConfig.Samples is 0.
const DefaultGradSamples = 32

// GradConfig says how to check gradients.
type GradConfig struct {
	// Backend is the registered name of the backend under test.
	Backend string
	// Options are passed to backend.New.
	Options backend.Options
	// Filter, when set, keeps only the cases whose names it matches.
	Filter *regexp.Regexp
	// Seed chooses the weights w_k and the sampled elements.
	Seed uint64
	// Samples bounds the elements checked per tensor (0: DefaultGradSamples;
	// negative: every element).
	Samples int
	// Float32Only turns the float64 conversion of backprop off: every case
	// is differentiated in its own precision (its differences are still
	// taken on the float64 model when the backend can run it).
	Float32Only bool
	// Float64 and Float32 override the default tolerances when not zero.
	Float64, Float32 GradTolerance
	// OnResult, when set, is called after each case.
	OnResult func(GradResult)
}

// GradResult is the outcome of the gradient check of one case: the
// Result of the report, and what was checked.
type GradResult struct {
	Result
	// Precision is the type the case was differentiated in (onnx.Double or
	// onnx.Float), or onnx.Undefined when it was skipped before.
	Precision onnx.DataType
	// Differences is the type the outputs the finite differences were
	// taken on had (onnx.Double for a float32 case whose model also runs
	// in double), onnx.Undefined when none were taken.
	Differences onnx.DataType
	// Tensors and Elements count the inputs and parameters checked and
	// their sampled elements; Kinks counts the elements accepted by a
	// one-sided difference; Jumps and Undefined count the elements left
	// out because L is discontinuous there, or not defined (not finite, or
	// refused by the backend) at x ± h, or because backprop's gradient is
	// not finite where outputs were left out of L.
	Tensors, Elements, Kinks, Jumps, Undefined int
	// NonFinite counts the output elements left out of L because they are
	// not finite at the test inputs.
	NonFinite int
	// Float32Kernel says the model is float64 but the backend computed it
	// in float32 precision: it was checked with float32's tolerances.
	Float32Kernel bool
	// Worst names the element of the largest relative error, as
	// "input X[3]" or "param W[0]".
	Worst string
}

// GradCheck checks the gradients of the cases with cfg.Backend and returns
// the results in order. It stops early, between two cases, when ctx is
// done; the report then holds the cases that ran and Interrupted is set.
// The only error is a backend that cannot be used at all.
func GradCheck(ctx context.Context, cases []Case, cfg GradConfig) (*Report, error) {
	if _, err := backend.Get(cfg.Backend); err != nil {
		return nil, err
	}
	r := NewReport(cfg.Backend)
	for _, c := range cases {
		if cfg.Filter != nil && !cfg.Filter.MatchString(c.Name) {
			continue
		}
		if ctx.Err() != nil {
			r.Interrupted = true
			break
		}
		res := GradCheckCase(c, cfg)
		r.Add(res.Result)
		if cfg.OnResult != nil {
			cfg.OnResult(res)
		}
	}
	return r, nil
}

// GradCheckCase checks one case. It never panics: a panic in the loader,
// the backend or the check is recovered and reported as a failure.
func GradCheckCase(c Case, cfg GradConfig) (res GradResult) {
	start := time.Now()
	res.Name = c.Name
	defer func() {
		if p := recover(); p != nil {
			res.Status = Failed
			res.Reason = panicReason(p)
		}
		res.Seconds = time.Since(start).Seconds()
	}()
	gc := &gradCase{c: c, cfg: cfg, res: &res}
	res.Status, res.Reason = gc.run()
	return res
}

// gradCase holds the state of one case while it is checked.
type gradCase struct {
	c   Case
	cfg GradConfig
	res *GradResult
	// wideErr is why the float64 version of the model could not be
	// checked, when it could not.
	wideErr error
	// wide is the float64 version of the model and its feeds, where the
	// model has anything to widen: a float32 check takes its differences
	// on it when the backend can run it.
	wide      *onnx.Model
	wideFeeds map[string]onnx.Value
}

// gradStageError is an error of the backend while building, running or
// differentiating a model: in float64 it sends the case back to float32,
// in float32 it is the outcome.
type gradStageError struct {
	stage   string
	err     error
	forward bool // building or running the model itself, before L
}

func (e *gradStageError) Error() string { return e.stage + ": " + e.err.Error() }
func (e *gradStageError) Unwrap() error { return e.err }

func (gc *gradCase) run() (Status, string) {
	model, err := onnx.Load(filepath.Join(gc.c.Dir, ModelFile))
	if err != nil {
		return Failed, err.Error()
	}
	if model.Graph == nil {
		return Failed, ModelFile + " has no graph"
	}
	if status, reason, found := unknownOperator(model); found {
		return status, reason
	}
	feeds, err := gc.readInputs(model.Graph)
	if err != nil {
		return Failed, err.Error()
	}
	// A model with nothing to widen is double already (or has no floating
	// point at all): it is checked in float64 as it is.
	prec := onnx.Double
	wide, wfeeds, changed := gradWiden(model, feeds)
	if changed {
		prec = onnx.Float
		gc.wide, gc.wideFeeds = wide, wfeeds
		if !gc.cfg.Float32Only && wide != nil {
			status, reason, err := gc.check(wide, wfeeds, onnx.Double)
			if err == nil {
				return status, reason
			}
			*gc.res = GradResult{Result: Result{Name: gc.c.Name}}
			gc.wideErr = err
		}
	}
	status, reason, err := gc.check(model, feeds, prec)
	if err == nil {
		return status, reason
	}
	gc.res.Precision, gc.res.Differences = onnx.Undefined, onnx.Undefined
	var se *gradStageError
	switch {
	case errors.Is(err, network.ErrUnsupported):
		return Skipped, err.Error()
	case errors.As(err, &se) && se.forward:
		// The model does not run at the test inputs: whatever its
		// gradients, the case is broken (conformance reports it too).
		return Failed, "the forward pass fails at the test inputs: " + err.Error()
	}
	return Failed, err.Error()
}

// readInputs reads the first data set's input files: input K feeds the
// K-th graph input that is not an initializer, as in conformance.
func (gc *gradCase) readInputs(g *onnx.Graph) (map[string]onnx.Value, error) {
	sets, err := dataSets(gc.c.Dir)
	if err != nil {
		return nil, err
	}
	setDir := filepath.Join(gc.c.Dir, sets[0])
	inFiles, err := numbered(setDir, "input_", ".pb", false)
	if err != nil {
		return nil, err
	}
	inputs := feedableInputs(g)
	if len(inFiles) > len(inputs) {
		return nil, fmt.Errorf("%s has %d input files but the graph has %d inputs to feed", sets[0], len(inFiles), len(inputs))
	}
	feeds := make(map[string]onnx.Value, len(inFiles))
	for k, f := range inFiles {
		_, v, err := onnx.ReadValue(filepath.Join(setDir, f), inputs[k].Type)
		if err != nil {
			return nil, err
		}
		feeds[inputs[k].Name] = v
	}
	return feeds, nil
}

// gradWiden returns the float64 version of a model and its feeds; changed
// tells whether the model or its feeds hold anything to widen (wide is nil
// when the copy could not be made).
func gradWiden(m *onnx.Model, feeds map[string]onnx.Value) (wide *onnx.Model, wfeeds map[string]onnx.Value, changed bool) {
	c, err := gradCloneModel(m)
	if err != nil {
		return nil, nil, true
	}
	changed = gradWidenModel(c)
	wfeeds = make(map[string]onnx.Value, len(feeds))
	for name, v := range feeds {
		w, ch := gradWidenValue(v)
		wfeeds[name] = w
		changed = changed || ch
	}
	if !changed {
		return nil, nil, false
	}
	wide, err = gradCloneModel(c)
	if err != nil {
		return nil, nil, true
	}
	return wide, wfeeds, true
}

// gradSource is a tensor the check differentiates with respect to.
type gradSource struct {
	name  string
	param bool         // a parameter (fed with Feed), else a graph input
	value *onnx.Tensor // its value at the test point
}

func (s gradSource) label() string {
	if s.param {
		return "param " + s.name
	}
	return "input " + s.name
}

// check checks the gradients of m at feeds in precision prec. A non-nil
// error is a backend error (see gradStageError); otherwise status and
// reason are the outcome.
func (gc *gradCase) check(m *onnx.Model, feeds map[string]onnx.Value, prec onnx.DataType) (Status, string, error) {
	net, err := backend.New(gc.cfg.Backend, m, gc.cfg.Options)
	if err != nil {
		return "", "", &gradStageError{stage: "build network", err: err, forward: true}
	}
	if net == nil {
		return "", "", &gradStageError{stage: "build network", forward: true, err: errors.New("the backend returned no network and no error")}
	}
	// The network of the model itself stays open: it takes the
	// differences when the float64 model cannot.
	defer net.Close()
	outs, err := net.Inference(feeds)
	if err != nil {
		return "", "", &gradStageError{stage: "inference", err: err, forward: true}
	}
	params := map[string]*onnx.Tensor{}
	for _, p := range net.Params() {
		t, err := network.FetchTensor(net, p)
		if err == nil && gradCheckable(t.Type) {
			params[p] = t
		}
	}

	// The terms of L: the floating-point outputs, without their
	// non-finite elements.
	rng := rand.New(rand.NewPCG(gc.cfg.Seed, gradHash(gc.c.Name)))
	var terms []gradTerm
	var termNames, others []string
	lossType := onnx.Undefined
	noise := 0.0 // Σ |w ⊙ y|
	nonFinite := 0
	nonDiff := gradNonDifferentiableOutputs(m.Graph)
	for _, o := range m.Graph.Outputs {
		if nonDiff[o.Name] {
			others = append(others, fmt.Sprintf("%s %s (non-differentiable)", o.Name, onnx.DescribeValue(outs[o.Name])))
			continue
		}
		t, ok := outs[o.Name].(*onnx.Tensor)
		if slices.Contains(termNames, o.Name) {
			continue // an output listed twice is one term
		}
		if !ok || !t.Type.IsFloat() {
			others = append(others, fmt.Sprintf("%s %s", o.Name, onnx.DescribeValue(outs[o.Name])))
			continue
		}
		if t.Len() == 0 {
			others = append(others, fmt.Sprintf("%s %s (empty)", o.Name, onnx.DescribeValue(t)))
			continue
		}
		vals, ok := gradFloats(t)
		if !ok {
			others = append(others, fmt.Sprintf("%s %s", o.Name, onnx.DescribeValue(t)))
			continue
		}
		if lossType == onnx.Undefined {
			lossType = prec
			if t.Type == onnx.Double {
				lossType = onnx.Double
			}
		}
		// A weight is drawn for every element, finite or not, so that
		// the others keep theirs.
		w := make([]float64, len(vals))
		finite := 0
		for i, v := range vals {
			r := rng.Float64()*2 - 1
			if !gradFinite(v) {
				continue
			}
			w[i] = gradRound(lossType, r)
			noise += math.Abs(w[i] * v)
			finite++
		}
		nonFinite += len(vals) - finite
		if finite == 0 {
			others = append(others, fmt.Sprintf("%s %s (no finite element)", o.Name, onnx.DescribeValue(t)))
			continue
		}
		terms = append(terms, gradTerm{output: o.Name, typ: t.Type, n: len(vals), wf: w, w: gradTensorOf(w, lossType, len(w), 1)})
		termNames = append(termNames, o.Name)
	}
	gc.res.NonFinite = nonFinite
	if len(terms) == 0 {
		return Skipped, "no floating-point output to differentiate (outputs: " + strings.Join(others, ", ") + ")", nil
	}
	// An output computed in float32 in a widened model makes L only as
	// precise as float32: the check then takes float32's tolerance.
	for _, t := range terms {
		if t.typ != onnx.Double {
			prec = onnx.Float
		}
	}
	gc.res.Precision = prec
	tol := gc.tolerance(prec)

	// The sources: floating-point inputs and parameters on a
	// differentiable path to one of the terms.
	var candidates, unchecked []string
	for name, v := range feeds {
		if t, ok := v.(*onnx.Tensor); ok && gradCheckable(t.Type) {
			candidates = append(candidates, name)
		} else if ok && t.Type.IsFloat() {
			unchecked = append(unchecked, name)
		}
	}
	for name := range params {
		candidates = append(candidates, name)
	}
	sort.Strings(candidates)
	reach := gradReaching(m.Graph, candidates, termNames)
	var sources []gradSource
	for _, in := range m.Graph.Inputs { // graph order
		if t, ok := feeds[in.Name].(*onnx.Tensor); ok && reach[in.Name] {
			sources = append(sources, gradSource{name: in.Name, value: t})
		}
	}
	for _, init := range m.Graph.Initializers {
		if t, ok := params[init.Name]; ok && reach[init.Name] {
			if _, fed := feeds[init.Name]; !fed {
				sources = append(sources, gradSource{name: init.Name, param: true, value: t})
			}
		}
	}
	if len(sources) == 0 && len(unchecked) > 0 && gc.wideErr != nil {
		// Reduced-precision inputs are checked in float64 only.
		return "", "", gc.wideErr
	}
	if len(sources) == 0 {
		what := "no floating-point input or parameter"
		if len(candidates) > 0 {
			what = "none of the floating-point inputs and parameters (" + strings.Join(candidates, ", ") + ")"
		}
		return Skipped, "no differentiable path: " + what + " reaches a floating-point output through differentiable inputs", nil
	}

	lm, loss, err := gradLossModel(m, terms, lossType)
	if err != nil {
		return Failed, "append L = Σ w ⊙ y to the model: " + err.Error(), nil
	}
	lnet, err := backend.New(gc.cfg.Backend, lm, gc.cfg.Options)
	if err != nil {
		return "", "", &gradStageError{stage: "build network with L", err: err}
	}
	defer lnet.Close()
	bout, err := lnet.InferenceAndBackprop(feeds, loss)
	if err != nil {
		return "", "", &gradStageError{stage: "backprop", err: err}
	}
	if _, err := gradScalar(bout[loss]); err != nil {
		return Failed, "L after backprop: " + err.Error(), nil
	}
	analytic := make([][]float64, len(sources))
	for i, s := range sources {
		g, err := network.FetchTensor(lnet, network.GradName(s.name))
		if err != nil {
			return Failed, fmt.Sprintf("fetch the gradient of %s: %v", s.label(), err), nil
		}
		if !sameShape(g.Shape, s.value.Shape) {
			return Failed, fmt.Sprintf("the gradient of %s has shape %v, the value %v", s.label(), g.Shape, s.value.Shape), nil
		}
		a, ok := gradFloats(g)
		if !ok {
			return Failed, fmt.Sprintf("the gradient of %s is %s", s.label(), onnx.DescribeValue(g)), nil
		}
		analytic[i] = slices.Clone(a)
	}

	// The differences: on the float64 model when a float32 case has one
	// the backend runs, else on this model.
	var ev *gradEval
	if prec == onnx.Float {
		ev = gc.reference(terms, sources)
	}
	if ev == nil {
		ev = &gradEval{net: net, feeds: maps(feeds), terms: terms, coarse: prec == onnx.Float}
		for _, s := range sources {
			ev.base = append(ev.base, s.value)
		}
		if ev.y0, err = ev.outputs(); err != nil {
			return Failed, "inference after backprop: " + err.Error(), nil
		}
	} else {
		defer ev.net.Close()
	}
	again, err := ev.outputs()
	if err != nil {
		return Failed, "inference after backprop: " + err.Error(), nil
	}
	if k := gradFirstDifferent(ev.y0, again); k >= 0 {
		return Skipped, fmt.Sprintf("the outputs are not deterministic (two inferences on the same inputs give different values of %q): random operators cannot be checked by differences", terms[k].output), nil
	}
	if prec == onnx.Double && ev.prec == onnx.Double {
		coarse, err := ev.float32Kernel(sources, gc.tolerance(onnx.Double).Step)
		if err != nil {
			return Failed, err.Error(), nil
		}
		if coarse {
			// The backend answers this float64 model in float32
			// precision: its differences carry float32's rounding, so
			// both they and backprop take float32's step and tolerance.
			ev.coarse = true
			ev.prec, ev.eps = onnx.Float, max(ev.eps, gradEpsilon(onnx.Float))
			prec = onnx.Float
			tol = gc.tolerance(prec)
			gc.res.Precision = prec
			gc.res.Float32Kernel = true
		}
	}
	gc.res.Differences = ev.prec
	tolEv := gc.tolerance(ev.prec)
	l0, _, _ := ev.delta(ev.y0, nil)

	n := gc.cfg.Samples
	if n == 0 {
		n = DefaultGradSamples
	}
	var firstBad string
	bad := 0
	for si, s := range sources {
		gc.res.Tensors++
		pick := gradSample(s.value.Len(), n, gc.cfg.Seed, gradHash(gc.c.Name+"\x00"+s.name))
		base := ev.base[si]
		work := base.Clone()
		if !s.param {
			ev.feeds[s.name] = work
		}
		for _, i := range pick {
			x := gradGet(work, i)
			a := analytic[si][i]
			if !gradFinite(x) {
				gc.res.Undefined++ // no neighbourhood to take differences in
				continue
			}
			if !gradFinite(a) && nonFinite > 0 {
				// Backprop carries 0 · ∞ from an output left out of L.
				gc.res.Undefined++
				continue
			}
			h := tolEv.Step * math.Max(1, math.Abs(x))
			floor := func(d gradDiff) float64 {
				return math.Max(tolEv.Floor, tolEv.NoiseFactor*ev.eps*d.scale/((d.xp-d.xm)/2)/tol.RelTol)
			}
			d, err := ev.central(s, work, i, x, h)
			if err != nil {
				return Failed, err.Error(), nil
			}
			if !d.defined {
				gc.res.Undefined++ // x ± h leaves the function's domain
				continue
			}
			num := d.num
			rel := gradRel(a, num, floor(d))
			if !(rel <= tol.RelTol) && !math.IsNaN(a) && d.oneSided {
				// A kink within h: accept a one-sided derivative.
				rr, rl := gradRel(a, d.right, floor(d)), gradRel(a, d.left, floor(d))
				if min(rr, rl) <= tol.RelTol {
					gc.res.Kinks++
					rel, num = rr, d.right
					if rl < rr {
						rel, num = rl, d.left
					}
				}
			}
			if !(rel <= tol.RelTol) && !math.IsNaN(a) {
				// Steps 10 and 100 times smaller reduce the truncation
				// error of the central difference (large where the step,
				// relative to |x|, is large for the function: softmax at
				// x = 10000) a hundred- and ten-thousandfold; and they
				// tell a jump of L (Sign at 0, a step of Floor), where the
				// difference of L does not shrink with the step, which is
				// left out. The floor stays that of h: a smaller step
				// must not buy a looser tolerance.
				deltas := []float64{math.Abs(d.delta)}
				coarse := d.num
				for _, div := range []float64{10, 100} {
					fine, err := ev.central(s, work, i, x, h/div)
					if err != nil {
						return Failed, err.Error(), nil
					}
					if !fine.defined {
						break
					}
					deltas = append(deltas, math.Abs(fine.delta))
					if r := gradRel(a, fine.num, floor(d)); r <= tol.RelTol {
						rel, num = r, fine.num
						break
					}
					// Richardson's extrapolation: the h² terms of the
					// two differences cancel (float32 differences, whose
					// step cannot shrink far, need it).
					ext := (100*fine.num - coarse) / 99
					if r := gradRel(a, ext, floor(d)); r <= tol.RelTol {
						rel, num = r, ext
						break
					}
					coarse = fine.num
				}
				if !(rel <= tol.RelTol) && len(deltas) == 3 && deltas[0] > 100*ev.eps*math.Max(noise, math.Abs(l0)) &&
					deltas[1] > deltas[0]/2 && deltas[2] > deltas[1]/2 {
					gc.res.Jumps++
					continue
				}
			}
			gc.res.Elements++
			abs := math.Abs(a - num)
			if math.IsNaN(rel) {
				rel = math.Inf(1)
			}
			if abs > gc.res.MaxAbsError || math.IsNaN(abs) {
				gc.res.MaxAbsError = abs
			}
			if rel > gc.res.MaxRelError {
				gc.res.MaxRelError = rel
				gc.res.Worst = fmt.Sprintf("%s[%d]", s.label(), i)
			}
			if !(rel <= tol.RelTol) {
				bad++
				if firstBad == "" {
					firstBad = fmt.Sprintf("dL/d%s[%d] = %.8g by backprop, %.8g by central differences (relative error %.3g > %g)",
						s.name, i, a, num, rel, tol.RelTol)
				}
			}
		}
		if s.param {
			if err := ev.net.Feed(s.name, base); err != nil {
				return Failed, fmt.Sprintf("restore %s: %v", s.label(), err), nil
			}
		} else {
			ev.feeds[s.name] = base
		}
	}
	var leftOut string
	if nonFinite > 0 {
		leftOut = fmt.Sprintf("; %d non-finite output elements left out of L", nonFinite)
	}
	if gc.res.Elements == 0 {
		return Skipped, fmt.Sprintf("no element could be checked: L jumps at %d of the sampled elements and is undefined (not finite, or the backend refuses the inputs) next to %d%s",
			gc.res.Jumps, gc.res.Undefined, leftOut), nil
	}
	if bad > 0 {
		how := precName(prec)
		if ev.prec != prec {
			how += " backprop against " + precName(ev.prec) + " differences"
		}
		return Failed, fmt.Sprintf("%s; %d of %d checked elements beyond tolerance (%s)%s", firstBad, bad, gc.res.Elements, how, leftOut), nil
	}
	return Passed, "", nil
}

// reference returns an evaluator of the differences on the float64 model,
// or nil when there is none or the backend cannot run it: it must give
// double outputs of the same sizes, finite where L weighs them, and hold
// every source in double.
func (gc *gradCase) reference(terms []gradTerm, sources []gradSource) *gradEval {
	if gc.wide == nil {
		return nil
	}
	net, err := backend.New(gc.cfg.Backend, gc.wide, gc.cfg.Options)
	if err != nil || net == nil {
		return nil
	}
	ev := &gradEval{net: net, feeds: maps(gc.wideFeeds), terms: terms}
	ok := func() bool {
		for _, s := range sources {
			var t *onnx.Tensor
			if s.param {
				if t, err = network.FetchTensor(net, s.name); err != nil {
					return false
				}
			} else {
				t, _ = ev.feeds[s.name].(*onnx.Tensor)
			}
			if t == nil || t.Type != onnx.Double || !sameShape(t.Shape, s.value.Shape) {
				return false
			}
			ev.base = append(ev.base, t)
		}
		y0, err := ev.outputs()
		if err != nil || ev.prec != onnx.Double {
			return false
		}
		for k, t := range terms {
			for i, w := range t.wf {
				if w != 0 && !gradFinite(y0[k][i]) {
					return false
				}
			}
		}
		ev.y0 = y0
		return true
	}()
	if !ok {
		net.Close()
		return nil
	}
	return ev
}

func (gc *gradCase) tolerance(prec onnx.DataType) GradTolerance {
	if prec == onnx.Double {
		if gc.cfg.Float64 != (GradTolerance{}) {
			return gc.cfg.Float64
		}
		return GradToleranceFloat64
	}
	if gc.cfg.Float32 != (GradTolerance{}) {
		return gc.cfg.Float32
	}
	return GradToleranceFloat32
}

func precName(t onnx.DataType) string {
	if t == onnx.Double {
		return "float64"
	}
	return "float32"
}

// PrecisionName is "float64" or "float32" for a result's Precision, ""
// when the case was not checked.
func (r GradResult) PrecisionName() string {
	if r.Precision == onnx.Undefined {
		return ""
	}
	return precName(r.Precision)
}

// PrecisionNote is PrecisionName, with "float32 (a float64 model the
// backend computes in float32)" for a Float32Kernel case.
func (r GradResult) PrecisionNote() string {
	if r.Float32Kernel {
		return "float32: a float64 model the backend computes in float32"
	}
	return r.PrecisionName()
}

// gradRel is |a − n| / max(|a|, |n|, floor).
func gradRel(a, n, floor float64) float64 {
	return math.Abs(a-n) / math.Max(floor, math.Max(math.Abs(a), math.Abs(n)))
}

// gradEval takes differences of L: it runs a network of the model without
// L with one element of a source changed, and sums w ⊙ Δy in float64.
type gradEval struct {
	net   network.Network
	feeds map[string]onnx.Value
	terms []gradTerm
	// base holds each source's value in this network's model (double for
	// the float64 model of a float32 case).
	base []*onnx.Tensor
	// y0 are the outputs of the terms at the test point.
	y0 [][]float64
	// prec is double when every output of a term is, else float; eps is
	// the machine epsilon of the coarsest of them.
	prec onnx.DataType
	eps  float64
	// coarse says the model computes in float32 whatever its outputs'
	// types: prec is then float and eps at least float32's.
	coarse bool
}

// outputs runs the network at ev.feeds and returns a copy of the terms'
// outputs; it sets prec and eps from their types.
func (ev *gradEval) outputs() ([][]float64, error) {
	out, err := ev.net.Inference(ev.feeds)
	if err != nil {
		return nil, err
	}
	ys := make([][]float64, len(ev.terms))
	ev.prec, ev.eps = onnx.Double, 0x1p-52
	for k, t := range ev.terms {
		v, ok := out[t.output].(*onnx.Tensor)
		if !ok || v == nil {
			return nil, fmt.Errorf("output %q is %s", t.output, onnx.DescribeValue(out[t.output]))
		}
		f, ok := gradFloats(v)
		if !ok || len(f) != t.n {
			return nil, fmt.Errorf("output %q is %s, was %d elements of %v", t.output, onnx.DescribeValue(v), t.n, t.typ)
		}
		ys[k] = slices.Clone(f) // the backend may reuse its buffers
		if v.Type != onnx.Double {
			ev.prec = onnx.Float
		}
		ev.eps = max(ev.eps, gradEpsilon(v.Type))
	}
	if ev.coarse {
		ev.prec, ev.eps = onnx.Float, max(ev.eps, gradEpsilon(onnx.Float))
	}
	return ys, nil
}

// gradEpsilon is the machine epsilon of a floating-point type.
func gradEpsilon(t onnx.DataType) float64 {
	switch t {
	case onnx.Double:
		return 0x1p-52
	case onnx.Float16:
		return 0x1p-10
	case onnx.BFloat16:
		return 0x1p-7
	}
	return 0x1p-23
}

// delta returns Σ w ⊙ (a − b) (b nil: Σ w ⊙ a) and the S of the noise
// floor; ok is false when an element L weighs is not finite. S sums |w| ·
// max(|a|, |b|) over the elements that moved and over those that did not
// but are too large to have shown the smallest move seen (ε · |y| at least
// that move: an output of 1e198 absorbs a change of 1e-6 that its
// neighbours show); when nothing moved, over every element.
func (ev *gradEval) delta(a, b [][]float64) (d, scale float64, ok bool) {
	minMove := math.Inf(1)
	for k, t := range ev.terms {
		for i, w := range t.wf {
			if w == 0 {
				continue
			}
			x, y := a[k][i], 0.0
			if b != nil {
				y = b[k][i]
			}
			if !gradFinite(x) || !gradFinite(y) {
				return 0, 0, false
			}
			if x != y {
				d += w * (x - y)
				scale += math.Abs(w) * math.Max(math.Abs(x), math.Abs(y))
				minMove = math.Min(minMove, math.Abs(x-y))
			}
		}
	}
	for k, t := range ev.terms {
		for i, w := range t.wf {
			if w == 0 {
				continue
			}
			x, y := a[k][i], 0.0
			if b != nil {
				y = b[k][i]
			}
			if m := math.Max(math.Abs(x), math.Abs(y)); x == y && (ev.eps*m >= minMove || math.IsInf(minMove, 1)) {
				scale += math.Abs(w) * m
			}
		}
	}
	return d, scale, true
}

// gradFirstDifferent returns the first term whose outputs differ between
// a and b (NaN equal to NaN), or -1.
func gradFirstDifferent(a, b [][]float64) int {
	for k := range a {
		for i, x := range a[k] {
			if y := b[k][i]; x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
				return k
			}
		}
	}
	return -1
}

func (ev *gradEval) perturbed(s gradSource, work *onnx.Tensor, i int, v float64) ([][]float64, error) {
	gradSet(work, i, v)
	if s.param {
		if err := ev.net.Feed(s.name, work); err != nil {
			return nil, &gradFeedError{err}
		}
	}
	return ev.outputs()
}

// gradDiff is a central difference at x: xp = x + h and xm = x − h
// rounded to the tensor's type; num is the central difference, right and
// left the one-sided ones (when oneSided), delta is L(xp) − L(xm) and
// scale the S of the noise floor. defined is false when L is not finite
// or cannot be computed at xp or xm.
type gradDiff struct {
	xp, xm           float64
	num, right, left float64
	delta, scale     float64
	defined          bool
	oneSided         bool
}

// central evaluates the outputs at element i of s moved to x ± h, and
// restores the element (a parameter is fed back after its last element).
// An error that is not the backend's, such as a failed Feed, is returned.
func (ev *gradEval) central(s gradSource, work *onnx.Tensor, i int, x, h float64) (gradDiff, error) {
	d := gradDiff{xp: gradRound(work.Type, x+h), xm: gradRound(work.Type, x-h)}
	defer gradSet(work, i, x)
	if d.xp == d.xm {
		return d, nil
	}
	up, errUp := ev.perturbed(s, work, i, d.xp)
	down, errDown := ev.perturbed(s, work, i, d.xm)
	for _, err := range []error{errUp, errDown} {
		var fe *gradFeedError
		if errors.As(err, &fe) {
			return d, fmt.Errorf("perturb %s[%d]: %w", s.label(), i, err)
		}
	}
	// The model failing to run at a perturbed point (a scale below 1
	// where the operator needs at least 1, say) is a point outside its
	// domain.
	if errUp != nil || errDown != nil {
		return d, nil
	}
	var ok bool
	if d.delta, d.scale, ok = ev.delta(up, down); !ok {
		return d, nil
	}
	d.defined = true
	d.num = d.delta / (d.xp - d.xm)
	r, sr, okR := ev.delta(up, ev.y0)
	l, sl, okL := ev.delta(ev.y0, down)
	if okR && okL && d.xp != x && d.xm != x {
		d.oneSided = true
		d.right, d.left = r/(d.xp-x), l/(x-d.xm)
		d.scale = max(d.scale, sr, sl)
	}
	return d, nil
}

// float32Kernel tells whether the network answers its float64 model in
// float32 precision (ONNX Runtime's Shrink on double does). The first few
// elements of each source are moved, one at a time, by a step that a
// float32 cannot hold (x + 1e-6·max(1, |x|)). A float64 kernel moves its
// outputs to values that are not float32 numbers, save by a chance of
// about 2⁻²⁹ per element; a float32 kernel moves them to float32 numbers
// of many significant bits. One moved output that is not a float32 number
// settles it as float64; otherwise it is float32 when a moved output is a
// float32 number of more than 12 significant bits. Outputs that do not
// move, or move to round numbers (a step function such as Floor jumping
// from 2 to 3), say nothing either way. Every source is restored.
func (ev *gradEval) float32Kernel(sources []gradSource, step float64) (bool, error) {
	const probes = 8 // elements tried per source
	coarse := false
	for si, s := range sources {
		base := ev.base[si]
		work := base.Clone()
		if !s.param {
			ev.feeds[s.name] = work
		}
		verdict, err := ev.probePrecision(s, work, probes, step)
		if s.param {
			if ferr := ev.net.Feed(s.name, base); ferr != nil && err == nil {
				err = fmt.Errorf("restore %s: %w", s.label(), ferr)
			}
		} else {
			ev.feeds[s.name] = base
		}
		switch {
		case err != nil:
			return false, err
		case verdict < 0:
			return false, nil
		case verdict > 0:
			coarse = true
		}
	}
	return coarse, nil
}

// probePrecision moves the first n elements of s (held in work) by the
// relative step, one at a time, and returns -1 when an output moved to a
// value that is not a float32 number, 1 when none did and one moved to a
// float32 number of more than 12 significant bits, else 0.
func (ev *gradEval) probePrecision(s gradSource, work *onnx.Tensor, n int, step float64) (int, error) {
	verdict := 0
	for i := range min(n, work.Len()) {
		x := gradGet(work, i)
		if !gradFinite(x) {
			continue
		}
		ys, err := ev.perturbed(s, work, i, x+step*math.Max(1, math.Abs(x)))
		gradSet(work, i, x)
		if fe := (*gradFeedError)(nil); errors.As(err, &fe) {
			return 0, fmt.Errorf("perturb %s[%d]: %w", s.label(), i, err)
		}
		if err != nil {
			continue // outside the function's domain
		}
		for k := range ys {
			for j, y := range ys[k] {
				if y == ev.y0[k][j] || !gradFinite(y) {
					continue
				}
				if float64(float32(y)) != y {
					return -1, nil
				}
				if mant := math.Float64bits(y) & (1<<52 - 1); 52-bits.TrailingZeros64(mant) > 12 {
					verdict = 1
				}
			}
		}
	}
	return verdict, nil
}

// gradFeedError is a Feed the check needed that the backend refused.
type gradFeedError struct{ err error }

func (e *gradFeedError) Error() string { return e.err.Error() }
func (e *gradFeedError) Unwrap() error { return e.err }

func gradFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func maps(m map[string]onnx.Value) map[string]onnx.Value {
	out := make(map[string]onnx.Value, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// gradScalar reads the one element of L.
func gradScalar(v onnx.Value) (float64, error) {
	t, ok := v.(*onnx.Tensor)
	if !ok || t == nil || t.Len() != 1 {
		return 0, fmt.Errorf("L is %s, not a one-element tensor", onnx.DescribeValue(v))
	}
	f, ok := gradFloats(t)
	if !ok {
		return 0, fmt.Errorf("L is %s", onnx.DescribeValue(v))
	}
	return f[0], nil
}

// gradFloats returns a floating-point tensor's elements as float64 (the
// tensor's own slice when it is double).
func gradFloats(t *onnx.Tensor) ([]float64, bool) {
	switch d := t.Data.(type) {
	case []float64:
		return d, true
	case []float32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out, true
	case []onnx.F16:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v.Float32())
		}
		return out, true
	case []onnx.BF16:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v.Float32())
		}
		return out, true
	}
	return nil, false
}

func gradTensorOf(vals []float64, typ onnx.DataType, shape ...int) *onnx.Tensor {
	if typ == onnx.Double {
		return onnx.FromSlice(append([]float64{}, vals...), shape...)
	}
	d := make([]float32, len(vals))
	for i, v := range vals {
		d[i] = float32(v)
	}
	return onnx.FromSlice(d, shape...)
}

func gradGet(t *onnx.Tensor, i int) float64 {
	if d, ok := t.Data.([]float32); ok {
		return float64(d[i])
	}
	return t.Data.([]float64)[i]
}

func gradSet(t *onnx.Tensor, i int, v float64) {
	if d, ok := t.Data.([]float32); ok {
		d[i] = float32(v)
		return
	}
	t.Data.([]float64)[i] = v
}

// gradRound rounds v to the precision of typ.
func gradRound(typ onnx.DataType, v float64) float64 {
	if typ == onnx.Float {
		return float64(float32(v))
	}
	return v
}

func gradHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// gradSample picks at most k distinct indices below n (all when k < 0 or
// n ≤ k), sorted, seeded.
func gradSample(n, k int, seed, stream uint64) []int {
	if k < 0 || n <= k {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	r := rand.New(rand.NewPCG(seed, stream))
	// Floyd's algorithm: k distinct values without an n-sized table.
	chosen := make(map[int]bool, k)
	for j := n - k; j < n; j++ {
		t := r.IntN(j + 1)
		if chosen[t] {
			t = j
		}
		chosen[t] = true
	}
	out := make([]int, 0, k)
	for i := range chosen {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// WorstGradResults returns up to k results that were checked (passed or
// failed), largest relative error first.
func WorstGradResults(results []GradResult, k int) []GradResult {
	var out []GradResult
	for _, r := range results {
		if r.Status != Skipped && r.Precision != onnx.Undefined {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].MaxRelError > out[j].MaxRelError })
	if len(out) > k {
		out = out[:k]
	}
	return out
}
