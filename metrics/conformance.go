package metrics

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Status is the outcome of a case.
type Status string

// The outcomes of a case.
const (
	Passed  Status = "passed"
	Failed  Status = "failed"
	Skipped Status = "skipped"
)

// Result is the outcome of one case. The JSON field names are part of the
// command-line contract.
type Result struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Reason says why a case failed or was skipped; empty when it passed.
	Reason string `json:"reason"`
	// MaxAbsError and MaxRelError are the largest errors over the
	// floating-point outputs of every data set (see Diff).
	MaxAbsError float64 `json:"max_abs_error"`
	MaxRelError float64 `json:"max_rel_error"`
	// Seconds is the wall time of the whole case: loading the model,
	// building the network, reading the data, every inference and the
	// comparisons.
	Seconds float64 `json:"seconds"`
	// Operators lists the operator types the case's model uses, sorted
	// and comma-separated (a domain other than ONNX's own prefixes its
	// operators: "com.microsoft.Gelu"), so that reports can group cases
	// by operator; empty when the model could not be read.
	Operators string `json:"operators,omitempty"`
}

// Config says how to run cases.
type Config struct {
	// Backend is the registered name of the backend under test.
	Backend string
	// Options are passed to backend.New.
	Options backend.Options
	// Tolerance for floating-point outputs; the zero value means
	// ONNXTolerance.
	Tolerance Tolerance
	// Filter, when set, keeps only the cases whose names it matches.
	Filter *regexp.Regexp
	// OnResult, when set, is called after each case (to print progress).
	OnResult func(Result)
}

// Run runs the cases with cfg.Backend and returns their results in order.
// It stops early, between two cases, when ctx is done; the report then
// holds the cases that ran and Interrupted is set. The only error is a
// backend that cannot be used at all (unknown or not in this build).
func Run(ctx context.Context, cases []Case, cfg Config) (*Report, error) {
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
		res := RunCase(c, cfg)
		r.Add(res)
		if cfg.OnResult != nil {
			cfg.OnResult(res)
		}
	}
	return r, nil
}

// RunCase runs one case: load its model, build it with the backend, and
// for every data set feed the inputs, run inference and compare each graph
// output with the expected one. It never panics: a panic in the loader,
// the backend or the comparison is recovered and reported as a failure.
func RunCase(c Case, cfg Config) (res Result) {
	start := time.Now()
	res = Result{Name: c.Name}
	defer func() {
		if p := recover(); p != nil {
			res.Status = Failed
			res.Reason = panicReason(p)
		}
		res.Seconds = time.Since(start).Seconds()
	}()
	tol := cfg.Tolerance
	if tol == (Tolerance{}) {
		tol = ONNXTolerance
	}
	cr := caseRun{dir: c.Dir, cfg: cfg, tol: tol}
	res.Status, res.Reason = cr.run()
	res.MaxAbsError, res.MaxRelError, res.Operators = cr.maxAbs, cr.maxRel, cr.operators
	return res
}

// unknownOperator says what becomes of a case whose model has a node with
// an operator no schema defines. In a domain of ONNX's or this project's,
// the model is bad: the case fails, naming the node, whatever the backend,
// since no backend could run it. In any other domain it is a custom
// operator nobody registered here, which the backend lacks: skipped, as an
// unsupported operator is.
func unknownOperator(model *onnx.Model) (status Status, reason string, found bool) {
	unknown := model.UnknownNodes()
	if len(unknown) == 0 {
		return "", "", false
	}
	for _, n := range unknown {
		if ops.ReservedDomain(onnx.CanonicalDomain(n.Domain)) {
			return Failed, fmt.Sprintf("bad model: node %v: %s, which no operator schema defines", n, n.Op.(*onnx.UnknownOperator).Reason()), true
		}
	}
	n := unknown[0]
	return Skipped, fmt.Sprintf("unsupported: node %v: custom %s: no kernel is registered for it (native.RegisterKernel)", n, n.Op.(*onnx.UnknownOperator).Reason()), true
}

// OperatorsOf lists the operator types of g's nodes, sorted, unique and
// comma-separated, a domain other than ONNX's own before its operators.
func OperatorsOf(g *onnx.Graph) string {
	var ops []string
	for _, n := range g.Nodes {
		op := n.OpType
		if n.Domain != "" && n.Domain != "ai.onnx" {
			op = n.Domain + "." + op
		}
		ops = append(ops, op)
	}
	slices.Sort(ops)
	return strings.Join(slices.Compact(ops), ",")
}

// caseRun holds the state of one case while it runs.
type caseRun struct {
	dir            string
	cfg            Config
	tol            Tolerance
	maxAbs, maxRel float64
	operators      string
}

func (cr *caseRun) run() (Status, string) {
	model, err := onnx.Load(filepath.Join(cr.dir, ModelFile))
	if err != nil {
		return Failed, err.Error()
	}
	if model.Graph == nil {
		return Failed, ModelFile + " has no graph"
	}
	cr.operators = OperatorsOf(model.Graph)
	if status, reason, found := unknownOperator(model); found {
		return status, reason
	}
	sets, err := dataSets(cr.dir)
	if err != nil {
		return Failed, err.Error()
	}
	net, err := backend.New(cr.cfg.Backend, model, cr.cfg.Options)
	if err != nil {
		if errors.Is(err, network.ErrUnsupported) {
			return Skipped, err.Error()
		}
		return Failed, "build network: " + err.Error()
	}
	if net == nil {
		return Failed, "build network: the backend returned no network and no error"
	}
	defer net.Close()

	inputs := feedableInputs(model.Graph)
	// Every data set runs even after a mismatch, so the error maxima cover
	// the whole case; the reason names the first mismatch.
	var firstMismatch string
	for _, set := range sets {
		status, reason := cr.dataSet(model.Graph, inputs, set, net)
		switch status {
		case Skipped:
			if firstMismatch != "" {
				return Failed, firstMismatch
			}
			return Skipped, reason
		case Failed:
			if firstMismatch == "" {
				firstMismatch = reason
			}
		}
	}
	if firstMismatch != "" {
		return Failed, firstMismatch
	}
	return Passed, ""
}

// feedableInputs lists the graph inputs a caller feeds: those that are not
// also initializers (older models list their weights as inputs too).
func feedableInputs(g *onnx.Graph) []*onnx.ValueInfo {
	init := map[string]bool{}
	for _, in := range g.Initializers {
		init[in.Name] = true
	}
	for _, in := range g.SparseInitializers {
		init[in.Name] = true
	}
	var out []*onnx.ValueInfo
	for _, v := range g.Inputs {
		if !init[v.Name] {
			out = append(out, v)
		}
	}
	return out
}

// dataSet runs one test_data_set_N folder.
func (cr *caseRun) dataSet(g *onnx.Graph, inputs []*onnx.ValueInfo, set string, net network.Network) (Status, string) {
	setDir := filepath.Join(cr.dir, set)
	inFiles, err := numbered(setDir, "input_", ".pb", false)
	if err != nil {
		return Failed, err.Error()
	}
	outFiles, err := numbered(setDir, "output_", ".pb", false)
	if err != nil {
		return Failed, err.Error()
	}
	if len(inFiles) > len(inputs) {
		return Failed, fmt.Sprintf("%s has %d input files but the graph has %d inputs to feed", set, len(inFiles), len(inputs))
	}
	if len(outFiles) != len(g.Outputs) {
		return Failed, fmt.Sprintf("%s has %d output files but the graph has %d outputs", set, len(outFiles), len(g.Outputs))
	}
	// Input K feeds the K-th graph input, as ONNX's runner feeds them by
	// position; the declared type lets sequences and optionals decode.
	feeds := make(map[string]onnx.Value, len(inFiles))
	for k, f := range inFiles {
		_, v, err := onnx.ReadValue(filepath.Join(setDir, f), inputs[k].Type)
		if err != nil {
			return Failed, err.Error() // ReadValue's errors name the file
		}
		feeds[inputs[k].Name] = v
	}
	wants := make([]onnx.Value, len(outFiles))
	for k, f := range outFiles {
		_, v, err := onnx.ReadValue(filepath.Join(setDir, f), g.Outputs[k].Type)
		if err != nil {
			return Failed, err.Error()
		}
		wants[k] = v
	}

	got, err := net.Inference(feeds)
	if err != nil {
		if errors.Is(err, network.ErrUnsupported) {
			return Skipped, err.Error()
		}
		return Failed, fmt.Sprintf("%s: inference: %v", set, err)
	}
	var firstMismatch string
	for k, out := range g.Outputs {
		v, ok := got[out.Name]
		if !ok {
			if firstMismatch == "" {
				firstMismatch = fmt.Sprintf("output %q (%s): missing from the backend's results", out.Name, set)
			}
			continue
		}
		d := Compare(v, wants[k], cr.tol)
		cr.maxAbs = max(cr.maxAbs, d.MaxAbs)
		cr.maxRel = max(cr.maxRel, d.MaxRel)
		if !d.Equal() && firstMismatch == "" {
			firstMismatch = fmt.Sprintf("output %q (%s): %s", out.Name, set, d.Mismatch)
		}
	}
	if firstMismatch != "" {
		return Failed, firstMismatch
	}
	return Passed, ""
}

// panicReason describes a recovered panic on one line: its value and the
// first frames of the stack below the runtime's own, so the report points
// at the code to fix.
func panicReason(p any) string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs) // skip Callers, panicReason, the deferred func
	frames := runtime.CallersFrames(pcs[:n])
	var where []string
	for len(where) < 4 {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") && f.Function != "" {
			where = append(where, fmt.Sprintf("%s (%s:%d)", shortFunc(f.Function), filepath.Base(f.File), f.Line))
		}
		if !more {
			break
		}
	}
	msg := fmt.Sprintf("panic: %v", p)
	if len(where) > 0 {
		msg += " at " + strings.Join(where, " <- ")
	}
	return msg
}

// shortFunc drops the module path from a function name:
// "github.com/x/y/backend/native.(*exec).run" becomes "native.(*exec).run".
func shortFunc(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		return name[i+1:]
	}
	return name
}
