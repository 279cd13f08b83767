package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// DiffConfig says how to run a differential test between two backends.
type DiffConfig struct {
	// Backend is the backend under test, Against the one it is compared
	// with.
	Backend, Against string
	// Options are passed to both backends' New.
	Options backend.Options
	// Cases is the number of cases per operator version (at least 1).
	Cases int
	// Seed selects the cases: the same seed makes the same cases.
	Seed uint64
	// Tolerance for floating-point outputs; the zero value means
	// CrossBackendTolerance.
	Tolerance Tolerance
	// Filter, when set, keeps only the cases whose names it matches
	// ("Conv-v11/float/case0").
	Filter *regexp.Regexp
	// OnResult, when set, is called after each case.
	OnResult func(Result)
	// SaveDir, when set, receives every failed case as an ONNX test case
	// folder (model.onnx, test_data_set_0/input_K.pb and output_K.pb),
	// named after the case, so that `d500 conformance` reproduces it. The
	// expected outputs are Against's (Backend's where Against failed).
	SaveDir string
}

// DiffReport is the report of a differential test: a conformance report
// (the cases' results and counts) with the two backends, the seed and the
// number of cases per operator version. Its JSON form:
//
//	{"backend":A, "against":B, "seed":S, "cases_per_op":N,
//	 "passed":N, "failed":N, "skipped":N, "tests":[...], "environment":{...}}
type DiffReport struct {
	Report
	Against    string `json:"against"`
	Seed       uint64 `json:"seed"`
	CasesPerOp int    `json:"cases_per_op"`
}

// WriteJSON writes the report as indented JSON.
func (r *DiffReport) WriteJSON(w io.Writer) error {
	out := *r
	out.Tests = make([]Result, len(r.Tests))
	for i, t := range r.Tests {
		out.Tests[i] = finite(t)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(&out)
}

// WriteJSONFile writes the report as JSON to path; see WriteFile.
func (r *DiffReport) WriteJSONFile(path string) error { return WriteFile(path, r.WriteJSON) }

// DiffSchemas lists the operator versions both backends support, as their
// Supports functions say (a backend that cannot say is taken to support
// every version; its cases then skip where it lacks one).
func DiffSchemas(a, b string) ([]*ops.SchemaInfo, error) {
	ba, err := backend.Get(a)
	if err != nil {
		return nil, err
	}
	bb, err := backend.Get(b)
	if err != nil {
		return nil, err
	}
	var out []*ops.SchemaInfo
	for _, s := range ops.Schemas() {
		if ba.Supports != nil && !ba.Supports(s.Domain, s.OpType, s.SinceVersion) {
			continue
		}
		if bb.Supports != nil && !bb.Supports(s.Domain, s.OpType, s.SinceVersion) {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// RunDiff generates cfg.Cases random one-node models per operator version
// both backends support, runs each on both and compares their outputs.
// Between two cases it stops when ctx is done (Interrupted is then set).
// The only error is a backend that cannot be used at all.
func RunDiff(ctx context.Context, cfg DiffConfig) (*DiffReport, error) {
	schemas, err := DiffSchemas(cfg.Backend, cfg.Against)
	if err != nil {
		return nil, err
	}
	cases := max(cfg.Cases, 1)
	rep := &DiffReport{Report: *NewReport(cfg.Backend), Against: cfg.Against, Seed: cfg.Seed, CasesPerOp: cases}
	rep.Check = "difftest"
	for _, s := range schemas {
		for k := range cases {
			if ctx.Err() != nil {
				rep.Interrupted = true
				return rep, nil
			}
			res, ok := runDiffCase(s, k, cfg)
			if !ok {
				continue
			}
			rep.Add(res)
			if cfg.OnResult != nil {
				cfg.OnResult(res)
			}
		}
	}
	return rep, nil
}

// runDiffCase generates and runs case k of s; ok is false when the filter
// leaves it out.
func runDiffCase(s *ops.SchemaInfo, k int, cfg DiffConfig) (res Result, ok bool) {
	start := time.Now()
	c, genErr := safeGenerate(s, cfg.Seed, k)
	if cfg.Filter != nil && !cfg.Filter.MatchString(c.Name) {
		return Result{}, false
	}
	res = Result{Name: c.Name, Operators: c.Op}
	defer func() { res.Seconds = time.Since(start).Seconds() }()
	if genErr != nil {
		if errors.Is(genErr, errCannotGenerate) {
			res.Status, res.Reason = Skipped, genErr.Error()
		} else {
			res.Status, res.Reason = Failed, "generator: "+genErr.Error()
		}
		return res, true
	}
	tol := cfg.Tolerance
	if tol == (Tolerance{}) {
		tol = CrossBackendTolerance
	}
	outA, errA := runOnBackend(cfg.Backend, c, cfg.Options)
	outB, errB := runOnBackend(cfg.Against, c, cfg.Options)
	res.Status, res.Reason, res.MaxAbsError, res.MaxRelError = judge(cfg.Backend, cfg.Against, c, outA, outB, errA, errB, tol)
	if res.Status == Failed && cfg.SaveDir != "" {
		want := outB
		if errB != nil {
			want = outA
		}
		if err := saveDiffCase(cfg.SaveDir, c, want); err != nil {
			res.Reason += "; saving the case: " + err.Error()
		}
	}
	return res, true
}

// saveDiffCase writes case c as an ONNX test case folder under dir, with
// want as its expected outputs.
func saveDiffCase(dir string, c *diffCase, want map[string]onnx.Value) error {
	caseDir := filepath.Join(dir, strings.NewReplacer("/", "_", ".", "_").Replace(c.Name))
	set := filepath.Join(caseDir, "test_data_set_0")
	if err := os.MkdirAll(set, 0o755); err != nil {
		return err
	}
	if err := onnx.Save(c.Model, filepath.Join(caseDir, ModelFile)); err != nil {
		return err
	}
	for k, in := range feedableInputs(c.Model.Graph) {
		if err := onnx.WriteValue(filepath.Join(set, fmt.Sprintf("input_%d.pb", k)), in.Name, c.Feeds[in.Name]); err != nil {
			return err
		}
	}
	for k, name := range c.Model.Graph.OutputNames() {
		v, ok := want[name]
		if !ok {
			continue
		}
		if err := onnx.WriteValue(filepath.Join(set, fmt.Sprintf("output_%d.pb", k)), name, v); err != nil {
			return err
		}
	}
	return nil
}

// safeGenerate is generate with a panic in a rule turned into an error.
func safeGenerate(s *ops.SchemaInfo, seed uint64, k int) (c *diffCase, err error) {
	defer func() {
		if p := recover(); p != nil {
			if c == nil {
				c = &diffCase{Name: fmt.Sprintf("%s-v%d/case%d", ruleKey(s.Domain, s.OpType), s.SinceVersion, k), Op: ruleKey(s.Domain, s.OpType)}
			}
			err = errors.New(panicReason(p))
		}
	}()
	return generate(s, seed, k)
}

// runOnBackend builds the case's model with one backend and runs it once,
// on its own copy of the feeds; a panic is an error.
func runOnBackend(name string, c *diffCase, opts backend.Options) (out map[string]onnx.Value, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, errors.New(panicReason(p))
		}
	}()
	net, err := backend.New(name, c.Model, opts)
	if err != nil {
		return nil, err
	}
	if net == nil {
		return nil, errors.New("the backend returned no network and no error")
	}
	defer net.Close()
	feeds := make(map[string]onnx.Value, len(c.Feeds))
	for k, v := range c.Feeds {
		feeds[k] = cloneValue(v)
	}
	return net.Inference(feeds)
}

// cloneValue deep-copies a value, so neither backend sees what the other
// may have done to its inputs.
func cloneValue(v onnx.Value) onnx.Value {
	switch x := v.(type) {
	case *onnx.Tensor:
		return x.Clone()
	case *onnx.Sequence:
		s := &onnx.Sequence{Elem: x.Elem, Values: make([]onnx.Value, len(x.Values))}
		for i, e := range x.Values {
			s.Values[i] = cloneValue(e)
		}
		return s
	case *onnx.Map:
		m := &onnx.Map{}
		if x.Keys != nil {
			m.Keys = x.Keys.Clone()
		}
		if x.Values != nil {
			m.Values = cloneValue(x.Values).(*onnx.Sequence)
		}
		return m
	case *onnx.Optional:
		o := &onnx.Optional{Elem: x.Elem}
		if x.Value != nil {
			o.Value = cloneValue(x.Value)
		}
		return o
	}
	return v
}

// unsupported reports whether a backend's error says it lacks what the
// case needs (a kernel for these types, a feature) rather than that the
// case is wrong. ONNX Runtime's backend wraps every refusal of a session
// as unsupported, and reports a kernel's refusal at run time as a plain
// error: of ONNX Runtime's messages, those that say it has no kernel or
// does not support something count.
func unsupported(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	if !strings.Contains(msg, "onnxruntime: ") {
		return errors.Is(err, network.ErrUnsupported)
	}
	if !strings.Contains(msg, "ONNX Runtime cannot build a session") && errors.Is(err, network.ErrUnsupported) {
		return true // the backend's own limits (values onnxruntime_go cannot pass)
	}
	for _, s := range ortRefusals {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// ortRefusals are the phrases of ONNX Runtime's messages that say it
// lacks a kernel, a type or a feature. InsertedPrecisionFreeCast is its
// float16 fallback, which inserts Cast nodes that an opset-1 model cannot
// hold: a model of opset 1 with float16 tensors cannot run at all.
var ortRefusals = []string{
	"Could not find an implementation", "is not a registered function/op", "NOT_IMPLEMENTED",
	"not implemented", "not supported", "Not supported", "does not support", "is not currently registered or supported",
	"Unsupported value attribute datatype", "InsertedPrecisionFreeCast",
}

// judge decides a case from both backends' outputs or errors: a backend
// that lacks what the case needs skips it, one that fails where the other
// runs fails it, and otherwise every output is compared (got: backend a,
// want: backend b).
func judge(a, b string, c *diffCase, outA, outB map[string]onnx.Value, errA, errB error, tol Tolerance) (Status, string, float64, float64) {
	switch {
	case unsupported(errA):
		return Skipped, oneLineErr(errA), 0, 0
	case unsupported(errB):
		return Skipped, oneLineErr(errB), 0, 0
	case errA != nil && errB != nil:
		return Skipped, fmt.Sprintf("both backends reject the case: %s: %s; %s: %s", a, oneLineErr(errA), b, oneLineErr(errB)), 0, 0
	case errA != nil:
		return Failed, fmt.Sprintf("%s fails: %s; %s runs it", a, oneLineErr(errA), b), 0, 0
	case errB != nil:
		return Failed, fmt.Sprintf("%s fails: %s; %s runs it", b, oneLineErr(errB), a), 0, 0
	}
	var maxAbs, maxRel float64
	var mismatch []string
	for _, name := range c.Model.Graph.OutputNames() {
		ga, okA := outA[name]
		gb, okB := outB[name]
		switch {
		case !okA && !okB:
			continue
		case !okA:
			mismatch = append(mismatch, fmt.Sprintf("output %q: missing from %s's results", name, a))
			continue
		case !okB:
			mismatch = append(mismatch, fmt.Sprintf("output %q: missing from %s's results", name, b))
			continue
		}
		if c.Random != "" {
			if msg := typeAndShapeDiff(ga, gb); msg != "" {
				mismatch = append(mismatch, fmt.Sprintf("output %q (random: %s; type and shape compared): %s", name, c.Random, msg))
			}
			continue
		}
		d := Compare(ga, gb, tol)
		maxAbs, maxRel = max(maxAbs, d.MaxAbs), max(maxRel, d.MaxRel)
		if !d.Equal() {
			mismatch = append(mismatch, fmt.Sprintf("output %q: %s", name, d.Mismatch))
		}
	}
	if len(mismatch) > 0 {
		return Failed, strings.Join(mismatch, "; "), maxAbs, maxRel
	}
	return Passed, "", maxAbs, maxRel
}

// typeAndShapeDiff compares what random outputs can be compared by: the
// kind of value, the element type and the shape.
func typeAndShapeDiff(got, want onnx.Value) string {
	g, okG := got.(*onnx.Tensor)
	w, okW := want.(*onnx.Tensor)
	switch {
	case !okG || !okW:
		if onnx.DescribeValue(got) != onnx.DescribeValue(want) {
			return fmt.Sprintf("got %s, want %s", onnx.DescribeValue(got), onnx.DescribeValue(want))
		}
	case g.Type != w.Type:
		return fmt.Sprintf("data type %v, want %v", g.Type, w.Type)
	case !sameShape(g.Shape, w.Shape):
		return fmt.Sprintf("shape %v, want %v", g.Shape, w.Shape)
	}
	return ""
}

func oneLineErr(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
