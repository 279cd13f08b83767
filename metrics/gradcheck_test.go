package metrics_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

const pytorchSuite = "/usr/share/libonnx-testdata/data/pytorch-converted"

// gradOne checks the gradients of the one case in dir.
func gradOne(t *testing.T, dir string, cfg metrics.GradConfig) metrics.GradResult {
	t.Helper()
	cases, err := metrics.FindCases(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 1 {
		t.Fatalf("FindCases(%s) found %d cases, want 1", dir, len(cases))
	}
	if cfg.Backend == "" {
		cfg.Backend = "native"
	}
	var got []metrics.GradResult
	cfg.OnResult = func(r metrics.GradResult) { got = append(got, r) }
	rep, err := metrics.GradCheck(context.Background(), cases, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tests) != 1 || len(got) != 1 {
		t.Fatalf("report has %d results, callback saw %d, want 1", len(rep.Tests), len(got))
	}
	if rep.Tests[0] != got[0].Result {
		t.Errorf("report %+v and callback %+v disagree", rep.Tests[0], got[0].Result)
	}
	return got[0]
}

// gradCaseDir writes a case folder <tmp>/custom/<name> for a model built
// from nodes at opset 17, with float inputs fed from values (in order)
// and declared outputs of unknown shape.
func gradCaseDir(t *testing.T, name string, nodes []*onnx.Node, inputs []string, values []*onnx.Tensor, outputs []string, inits ...*onnx.Initializer) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "custom", name)
	g := &onnx.Graph{Name: name, Nodes: nodes, Initializers: inits}
	for i, in := range inputs {
		g.Inputs = append(g.Inputs, &onnx.ValueInfo{Name: in, Type: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: values[i].Type}})
	}
	for _, out := range outputs {
		g.Outputs = append(g.Outputs, &onnx.ValueInfo{Name: out})
	}
	m := &onnx.Model{IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
	if err := onnxSaveAll(dir, m); err != nil {
		t.Fatal(err)
	}
	for i, in := range inputs {
		if err := onnx.WriteValue(filepath.Join(dir, "test_data_set_0", "input_"+strconv.Itoa(i)+".pb"), in, values[i]); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func onnxSaveAll(dir string, m *onnx.Model) error {
	if err := os.MkdirAll(filepath.Join(dir, "test_data_set_0"), 0o755); err != nil {
		return err
	}
	return onnx.Save(m, filepath.Join(dir, metrics.ModelFile))
}

func node(op string, in, out []string, attrs ...*onnx.Attribute) *onnx.Node {
	return &onnx.Node{OpType: op, Inputs: in, Outputs: out, Attributes: attrs}
}

func TestGradCheckRealCasesPass(t *testing.T) {
	for _, dir := range []string{
		filepath.Join(nodeSuite, "test_gemm_all_attributes"),
		filepath.Join(nodeSuite, "test_matmul_3d"),
		filepath.Join(nodeSuite, "test_sigmoid"),
		filepath.Join(pytorchSuite, "test_Linear"),
	} {
		for _, f32 := range []bool{false, true} {
			r := gradOne(t, dir, metrics.GradConfig{Float32Only: f32})
			if r.Status != metrics.Passed {
				t.Errorf("%s (float32 only %v): %s: %s", r.Name, f32, r.Status, r.Reason)
				continue
			}
			want := "float64"
			if f32 {
				want = "float32"
			}
			if r.PrecisionName() != want || r.Tensors == 0 || r.Elements == 0 || r.Reason != "" || r.Worst == "" {
				t.Errorf("%s: precision %q (want %s), %d tensors, %d elements, reason %q, worst %q",
					r.Name, r.PrecisionName(), want, r.Tensors, r.Elements, r.Reason, r.Worst)
			}
			limit := 1e-5
			if f32 {
				limit = 2e-2
			}
			if r.MaxRelError > limit || r.MaxAbsError < 0 {
				t.Errorf("%s: max rel error %g, abs %g", r.Name, r.MaxRelError, r.MaxAbsError)
			}
		}
	}
	// test_Linear has an input, a weight and a bias; 32 samples at most
	// of each.
	r := gradOne(t, filepath.Join(pytorchSuite, "test_Linear"), metrics.GradConfig{})
	if r.Tensors != 3 || r.Elements > 3*metrics.DefaultGradSamples {
		t.Errorf("test_Linear: %d tensors, %d elements", r.Tensors, r.Elements)
	}
	all := gradOne(t, filepath.Join(pytorchSuite, "test_Linear"), metrics.GradConfig{Samples: -1})
	if all.Elements <= r.Elements {
		t.Errorf("every element: %d elements, sampled: %d", all.Elements, r.Elements)
	}
}

func TestGradCheckSkips(t *testing.T) {
	r := gradOne(t, filepath.Join(nodeSuite, "test_add_uint8"), metrics.GradConfig{})
	if r.Status != metrics.Skipped || !strings.Contains(r.Reason, "no floating-point output") || !strings.Contains(r.Reason, "uint8") {
		t.Errorf("integer outputs: %s %q", r.Status, r.Reason)
	}
	// A float output that depends on x only through its shape.
	x := onnx.FromSlice([]float32{1, 2, 3}, 3)
	dir := gradCaseDir(t, "test_shape_only", []*onnx.Node{
		node("Shape", []string{"x"}, []string{"s"}),
		node("ConstantOfShape", []string{"s"}, []string{"y"}, &onnx.Attribute{Name: "value", Type: onnx.AttrTensor, Tensor: onnx.FromSlice([]float32{2}, 1)}),
	}, []string{"x"}, []*onnx.Tensor{x}, []string{"y"})
	r = gradOne(t, dir, metrics.GradConfig{})
	if r.Status != metrics.Skipped || !strings.Contains(r.Reason, "no differentiable path") || !strings.Contains(r.Reason, "x") {
		t.Errorf("no path: %s %q", r.Status, r.Reason)
	}
	// A non-finite output.
	dir = gradCaseDir(t, "test_div_zero", []*onnx.Node{node("Div", []string{"x", "z"}, []string{"y"})},
		[]string{"x", "z"}, []*onnx.Tensor{x, onnx.FromSlice([]float32{1, 0, 1}, 3)}, []string{"y"})
	r = gradOne(t, dir, metrics.GradConfig{})
	if r.Status != metrics.Skipped || !strings.Contains(r.Reason, "not finite") {
		t.Errorf("inf output: %s %q", r.Status, r.Reason)
	}
}

// Relu at exactly 0 is a kink: backprop's one-sided derivative is
// accepted; elsewhere the check is as strict as ever.
func TestGradCheckKink(t *testing.T) {
	x := onnx.FromSlice([]float32{-1.5, 0, 0.75, 2}, 4)
	dir := gradCaseDir(t, "test_relu_at_zero", []*onnx.Node{node("Relu", []string{"x"}, []string{"y"})},
		[]string{"x"}, []*onnx.Tensor{x}, []string{"y"})
	for _, f32 := range []bool{false, true} {
		r := gradOne(t, dir, metrics.GradConfig{Float32Only: f32})
		if r.Status != metrics.Passed || r.Kinks != 1 || r.Elements != 4 {
			t.Errorf("float32 only %v: %s %q, %d kinks, %d elements", f32, r.Status, r.Reason, r.Kinks, r.Elements)
		}
	}
}

// wrapNet is a native network with a test's changes.
type wrapNet struct {
	network.Network
	scaleGrads float64 // multiplies every fetched gradient when not 0
	noisy      bool    // Inference adds a growing offset to every output
	noBackprop bool
	calls      int
}

func (w *wrapNet) Fetch(names ...string) ([]onnx.Value, error) {
	vs, err := w.Network.Fetch(names...)
	if err != nil || w.scaleGrads == 0 {
		return vs, err
	}
	for i, n := range names {
		if strings.HasSuffix(n, ".grad") {
			t := vs[i].(*onnx.Tensor)
			for j := range t.Float64s() {
				t.Float64s()[j] *= w.scaleGrads
			}
			for j := range t.Float32s() {
				t.Float32s()[j] *= float32(w.scaleGrads)
			}
		}
	}
	return vs, nil
}

func (w *wrapNet) Inference(feeds map[string]onnx.Value) (map[string]onnx.Value, error) {
	out, err := w.Network.Inference(feeds)
	if err != nil || !w.noisy {
		return out, err
	}
	w.calls++
	for _, v := range out {
		t := v.(*onnx.Tensor)
		for j := range t.Float64s() {
			t.Float64s()[j] += float64(w.calls) * 1e-3
		}
		for j := range t.Float32s() {
			t.Float32s()[j] += float32(w.calls) * 1e-3
		}
	}
	return out, nil
}

func (w *wrapNet) InferenceAndBackprop(feeds map[string]onnx.Value, loss string) (map[string]onnx.Value, error) {
	if w.noBackprop {
		return nil, network.Unsupportedf("backprop of this test's backend")
	}
	return w.Network.InferenceAndBackprop(feeds, loss)
}

// registerWrap registers a backend under a test-specific name whose
// networks are native ones changed by configure; rejectDouble makes it
// fail to build models with double initializers or inputs.
func registerWrap(t *testing.T, rejectDouble bool, configure func(*wrapNet)) string {
	name := "wrap-" + t.Name()
	backend.Register(backend.Backend{
		Name: name,
		New: func(m *onnx.Model, opts backend.Options) (network.Network, error) {
			if rejectDouble {
				for _, in := range m.Graph.Inputs {
					if in.Type != nil && in.Type.Elem == onnx.Double {
						return nil, errors.New("this test's backend has no double kernels")
					}
				}
			}
			n, err := backend.New("native", m, opts)
			if err != nil {
				return nil, err
			}
			w := &wrapNet{Network: n}
			configure(w)
			return w, nil
		},
	})
	return name
}

// A gradient 0.1% off fails in float64; in float32, whose tolerance is
// 2%, one 5% off does.
func TestGradCheckWrongGradientFails(t *testing.T) {
	for _, c := range []struct {
		scale float64
		f32   bool
	}{{1.001, false}, {1.05, true}} {
		name := registerWrap(t, false, func(w *wrapNet) { w.scaleGrads = c.scale })
		r := gradOne(t, filepath.Join(nodeSuite, "test_gemm_default_matrix_bias"), metrics.GradConfig{Backend: name, Float32Only: c.f32})
		if r.Status != metrics.Failed || !strings.Contains(r.Reason, "by backprop") || !strings.Contains(r.Reason, "central differences") {
			t.Errorf("gradients scaled by %g (float32 only %v): %s %q", c.scale, c.f32, r.Status, r.Reason)
		}
		if r.MaxRelError < (c.scale-1)*0.9 {
			t.Errorf("max rel error %g for gradients scaled by %g", r.MaxRelError, c.scale)
		}
	}
}

func TestGradCheckNondeterministicSkipped(t *testing.T) {
	name := registerWrap(t, false, func(w *wrapNet) { w.noisy = true })
	r := gradOne(t, filepath.Join(nodeSuite, "test_relu"), metrics.GradConfig{Backend: name})
	if r.Status != metrics.Skipped || !strings.Contains(r.Reason, "not deterministic") {
		t.Errorf("%s %q", r.Status, r.Reason)
	}
}

func TestGradCheckUnsupportedBackpropSkipped(t *testing.T) {
	name := registerWrap(t, false, func(w *wrapNet) { w.noBackprop = true })
	r := gradOne(t, filepath.Join(nodeSuite, "test_relu"), metrics.GradConfig{Backend: name})
	if r.Status != metrics.Skipped || !strings.Contains(r.Reason, "backprop of this test's backend") {
		t.Errorf("%s %q", r.Status, r.Reason)
	}
}

// A backend that cannot run the double version of a model is checked in
// float32.
func TestGradCheckFallsBackToFloat32(t *testing.T) {
	name := registerWrap(t, true, func(*wrapNet) {})
	r := gradOne(t, filepath.Join(nodeSuite, "test_tanh"), metrics.GradConfig{Backend: name})
	if r.Status != metrics.Passed || r.PrecisionName() != "float32" {
		t.Errorf("%s %q in %q", r.Status, r.Reason, r.PrecisionName())
	}
}

// The float64 conversion reaches constants, Cast targets and subgraph-free
// models' initializers; the converted model computes the same function.
func TestGradCheckWidenedConstantsAndCasts(t *testing.T) {
	x := onnx.FromSlice([]float32{0.5, -0.25, 1.5}, 3)
	dir := gradCaseDir(t, "test_widen", []*onnx.Node{
		node("Constant", nil, []string{"c"}, &onnx.Attribute{Name: "value_float", Type: onnx.AttrFloat, Float: 0.5}),
		node("Constant", nil, []string{"d"}, &onnx.Attribute{Name: "value_floats", Type: onnx.AttrFloats, Floats: []float32{1, 2, 3}}),
		node("Mul", []string{"x", "c"}, []string{"xc"}),
		node("Add", []string{"xc", "d"}, []string{"xd"}),
		node("Cast", []string{"xd"}, []string{"xf"}, &onnx.Attribute{Name: "to", Type: onnx.AttrInt, Int: int64(onnx.Float)}),
		node("Mul", []string{"xf", "w"}, []string{"y"}),
	}, []string{"x"}, []*onnx.Tensor{x}, []string{"y"},
		&onnx.Initializer{Name: "w", Tensor: onnx.FromSlice([]float32{1, -2, 3}, 3)})
	r := gradOne(t, dir, metrics.GradConfig{})
	// Cast may have no backward rule yet: then the case is skipped for
	// that reason, else it passes in float64.
	switch {
	case r.Status == metrics.Passed:
		if r.PrecisionName() != "float64" || r.Tensors != 2 {
			t.Errorf("precision %q, %d tensors", r.PrecisionName(), r.Tensors)
		}
	case r.Status == metrics.Skipped && strings.Contains(r.Reason, "Cast"):
	default:
		t.Errorf("%s %q", r.Status, r.Reason)
	}
}

func TestGradCheckFilterAndInterrupt(t *testing.T) {
	cases, err := metrics.FindCases(filepath.Join(nodeSuite, "test_relu"), filepath.Join(nodeSuite, "test_tanh"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := metrics.GradCheck(context.Background(), cases, metrics.GradConfig{Backend: "native", Filter: regexp.MustCompile("tanh")})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tests) != 1 || rep.Tests[0].Name != "node/test_tanh" || rep.Passed != 1 {
		t.Errorf("filtered run: %+v", rep)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err = metrics.GradCheck(ctx, cases, metrics.GradConfig{Backend: "native"})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || len(rep.Tests) != 0 {
		t.Errorf("cancelled run: interrupted %v, %d results", rep.Interrupted, len(rep.Tests))
	}
	if _, err := metrics.GradCheck(context.Background(), cases, metrics.GradConfig{Backend: "nosuch"}); err == nil {
		t.Error("unknown backend accepted")
	}
}

func TestWorstGradResults(t *testing.T) {
	rs := []metrics.GradResult{
		{Result: metrics.Result{Name: "a", Status: metrics.Passed, MaxRelError: 1e-9}, Precision: onnx.Double},
		{Result: metrics.Result{Name: "b", Status: metrics.Skipped}},
		{Result: metrics.Result{Name: "c", Status: metrics.Failed, MaxRelError: 0.5}, Precision: onnx.Float},
		{Result: metrics.Result{Name: "d", Status: metrics.Passed, MaxRelError: 1e-7}, Precision: onnx.Double},
	}
	w := metrics.WorstGradResults(rs, 2)
	if len(w) != 2 || w[0].Name != "c" || w[1].Name != "d" {
		t.Errorf("worst: %+v", w)
	}
}

// At x = 1e5 the relative step (h = 0.1 in float64) is far too large for
// tanh(x − 1e5): the central difference's truncation error fails the
// tolerance, and the check's smaller steps recover the true derivative.
func TestGradCheckRefinesLargeSteps(t *testing.T) {
	x := onnx.FromSlice([]float64{1e5 + 0.3, 1e5 - 0.2, 1e5 + 0.05}, 3)
	dir := gradCaseDir(t, "test_tanh_far", []*onnx.Node{
		node("Sub", []string{"x", "c"}, []string{"d"}),
		node("Tanh", []string{"d"}, []string{"y"}),
	}, []string{"x"}, []*onnx.Tensor{x}, []string{"y"},
		&onnx.Initializer{Name: "c", Tensor: onnx.FromSlice([]float64{1e5}, 1)})
	r := gradOne(t, dir, metrics.GradConfig{})
	if r.Status != metrics.Passed || r.PrecisionName() != "float64" || r.MaxRelError > 1e-5 {
		t.Errorf("%s %q (%s), max rel error %g", r.Status, r.Reason, r.PrecisionName(), r.MaxRelError)
	}
	// The parameter c is checked too.
	if r.Tensors != 2 || r.Elements != 4 {
		t.Errorf("%d tensors, %d elements", r.Tensors, r.Elements)
	}
}

// A case whose operator no schema defines fails as a bad model in the
// gradient check too, as in conformance.
func TestGradCheckUnknownOperatorFails(t *testing.T) {
	dir := unaryCase(t, "test_no_such_op", "NoSuchOp")
	r := gradOne(t, dir, metrics.GradConfig{Backend: "native"})
	if r.Status != metrics.Failed || !strings.Contains(r.Reason, "bad model") || !strings.Contains(r.Reason, "NoSuchOp") {
		t.Errorf("%s %q, want failed naming NoSuchOp", r.Status, r.Reason)
	}
}
