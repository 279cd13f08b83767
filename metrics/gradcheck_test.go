package metrics_test

import (
	"context"
	"errors"
	"fmt"
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
				limit = 4e-3
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
	// Outputs none of whose elements is finite.
	dir = gradCaseDir(t, "test_div_all_zero", []*onnx.Node{node("Div", []string{"x", "z"}, []string{"y"})},
		[]string{"x", "z"}, []*onnx.Tensor{x, onnx.FromSlice([]float32{0, 0, 0}, 3)}, []string{"y"})
	r = gradOne(t, dir, metrics.GradConfig{})
	if r.Status != metrics.Skipped || !strings.Contains(r.Reason, "no floating-point output") || !strings.Contains(r.Reason, "no finite element") || r.NonFinite != 3 {
		t.Errorf("inf outputs: %s %q, %d non-finite", r.Status, r.Reason, r.NonFinite)
	}
}

// One non-finite output element is left out of L; the others are checked,
// and so are the gradients of the elements that reach only them.
func TestGradCheckNonFiniteOutputElements(t *testing.T) {
	x := onnx.FromSlice([]float32{1, 2, 3}, 3)
	dir := gradCaseDir(t, "test_div_zero", []*onnx.Node{node("Div", []string{"x", "z"}, []string{"y"})},
		[]string{"x", "z"}, []*onnx.Tensor{x, onnx.FromSlice([]float32{1, 0, 4}, 3)}, []string{"y"})
	r := gradOne(t, dir, metrics.GradConfig{})
	// x[1] and z[1] reach only y[1] = 2/0: backprop gives them 0 · ∞.
	if r.Status != metrics.Passed || r.NonFinite != 1 || r.Tensors != 2 || r.Elements != 4 || r.Undefined != 2 {
		t.Errorf("%s %q: %d non-finite, %d tensors, %d elements, %d undefined", r.Status, r.Reason, r.NonFinite, r.Tensors, r.Elements, r.Undefined)
	}
	// A wrong gradient still fails, and the reason counts what was left out.
	name := registerWrap(t, false, func(w *wrapNet) { w.scaleGrads, w.scaleOnly = 1.01, "x" })
	r = gradOne(t, dir, metrics.GradConfig{Backend: name})
	if r.Status != metrics.Failed || !strings.Contains(r.Reason, "dL/dx[") || !strings.Contains(r.Reason, "1 non-finite output elements left out of L") {
		t.Errorf("dx scaled by 1.01: %s %q", r.Status, r.Reason)
	}
	// Sqrt of a negative number is NaN: its gradient is NaN too.
	dir = gradCaseDir(t, "test_sqrt_negative", []*onnx.Node{node("Sqrt", []string{"x"}, []string{"y"})},
		[]string{"x"}, []*onnx.Tensor{onnx.FromSlice([]float32{4, -1, 0.25, 9}, 4)}, []string{"y"})
	r = gradOne(t, dir, metrics.GradConfig{})
	if r.Status != metrics.Passed || r.NonFinite != 1 || r.Elements != 3 || r.Undefined != 1 {
		t.Errorf("sqrt: %s %q: %d non-finite, %d elements, %d undefined", r.Status, r.Reason, r.NonFinite, r.Elements, r.Undefined)
	}
}

// A model that does not run at the test inputs fails the case: there is
// nothing wrong with its gradients to report, but the case is broken.
func TestGradCheckForwardErrorFails(t *testing.T) {
	// MatMul of [3] by [2]: the shapes do not agree.
	dir := gradCaseDir(t, "test_bad_matmul", []*onnx.Node{node("MatMul", []string{"x", "z"}, []string{"y"})},
		[]string{"x", "z"}, []*onnx.Tensor{onnx.FromSlice([]float32{1, 2, 3}, 3), onnx.FromSlice([]float32{1, 2}, 2)}, []string{"y"})
	r := gradOne(t, dir, metrics.GradConfig{})
	if r.Status != metrics.Failed || !strings.HasPrefix(r.Reason, "the forward pass fails at the test inputs: ") || r.PrecisionName() != "" {
		t.Errorf("%s %q (precision %q)", r.Status, r.Reason, r.PrecisionName())
	}
	// An operator the backend lacks is still a skip.
	name := registerWrap(t, false, func(*wrapNet) {})
	backend.Register(backend.Backend{Name: name, New: func(*onnx.Model, backend.Options) (network.Network, error) {
		return nil, network.Unsupportedf("every operator")
	}})
	r = gradOne(t, filepath.Join(nodeSuite, "test_relu"), metrics.GradConfig{Backend: name})
	if r.Status != metrics.Skipped || !strings.Contains(r.Reason, "unsupported: every operator") {
		t.Errorf("unsupported: %s %q", r.Status, r.Reason)
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

// wraps counts the backends registerWrap registered.
var wraps int

// wrapNet is a native network with a test's changes.
type wrapNet struct {
	network.Network
	scaleGrads float64 // multiplies fetched gradients when not 0
	scaleOnly  string  // the one gradient scaleGrads multiplies ("": all)
	noisy      bool    // Inference adds a growing offset to every output
	rounds     bool    // Inference rounds double outputs to float32 numbers
	noBackprop bool
	calls      int
}

func (w *wrapNet) Fetch(names ...string) ([]onnx.Value, error) {
	vs, err := w.Network.Fetch(names...)
	if err != nil || w.scaleGrads == 0 {
		return vs, err
	}
	for i, n := range names {
		if strings.HasSuffix(n, ".grad") && (w.scaleOnly == "" || n == network.GradName(w.scaleOnly)) {
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
	if err == nil && w.rounds {
		for _, v := range out {
			if t, ok := v.(*onnx.Tensor); ok {
				for j, x := range t.Float64s() {
					t.Float64s()[j] = float64(float32(x))
				}
			}
		}
	}
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

// registerWrap registers a backend under a new name whose networks are
// native ones changed by configure; rejectDouble makes it fail to build
// models with double inputs.
func registerWrap(t *testing.T, rejectDouble bool, configure func(*wrapNet)) string {
	wraps++
	name := fmt.Sprintf("wrap-%s-%d", t.Name(), wraps)
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

// A gradient 0.1% off fails in float64.
func TestGradCheckWrongGradientFails(t *testing.T) {
	name := registerWrap(t, false, func(w *wrapNet) { w.scaleGrads = 1.001 })
	r := gradOne(t, filepath.Join(nodeSuite, "test_gemm_default_matrix_bias"), metrics.GradConfig{Backend: name})
	if r.Status != metrics.Failed || !strings.Contains(r.Reason, "by backprop") || !strings.Contains(r.Reason, "central differences") ||
		!strings.HasSuffix(r.Reason, "(float64)") {
		t.Errorf("gradients scaled by 1.001: %s %q", r.Status, r.Reason)
	}
	if r.MaxRelError < 0.0009 {
		t.Errorf("max rel error %g for gradients scaled by 1.001", r.MaxRelError)
	}
}

// One gradient 1% off fails the float32 check, whether its differences
// are taken on the float64 model (the backend runs it forward) or on the
// float32 one (it cannot), on the operators networks are trained with;
// the true gradients pass both ways.
func TestGradCheckFloat32CatchesOnePercent(t *testing.T) {
	for _, c := range []struct{ name, grad string }{
		{"test_conv_with_strides_padding", "x"},
		{"test_conv_with_strides_padding", "W"},
		{"test_gemm_default_matrix_bias", "a"},
		{"test_gemm_default_matrix_bias", "c"},
		{"test_softmax_axis_1", "x"},
		{"test_batchnorm_example", "x"},
		{"test_batchnorm_example", "s"},
		{"test_batchnorm_example", "var"},
		{"test_averagepool_2d_default", "x"},
		{"test_maxpool_2d_default", "x"},
	} {
		for _, noDouble := range []bool{false, true} {
			diffs := "float64"
			if noDouble {
				diffs = "float32"
			}
			for _, scale := range []float64{1, 1.01} {
				name := registerWrap(t, noDouble, func(w *wrapNet) { w.scaleGrads, w.scaleOnly = scale, c.grad })
				r := gradOne(t, filepath.Join(nodeSuite, c.name), metrics.GradConfig{Backend: name, Float32Only: true})
				what := fmt.Sprintf("%s, d%s scaled by %g, %s differences", c.name, c.grad, scale, diffs)
				if r.PrecisionName() != "float32" || precName(r.Differences) != diffs {
					t.Errorf("%s: checked in %s against %v differences", what, r.PrecisionName(), r.Differences)
				}
				switch {
				case scale == 1 && r.Status != metrics.Passed:
					t.Errorf("%s: %s %q", what, r.Status, r.Reason)
				case scale != 1 && (r.Status != metrics.Failed || !strings.Contains(r.Reason, "dL/d"+c.grad+"[")):
					t.Errorf("%s: %s %q, want a failure naming d%s", what, r.Status, r.Reason, c.grad)
				}
				if scale != 1 && (r.MaxRelError <= metrics.GradToleranceFloat32.RelTol || r.MaxRelError > 0.02) {
					t.Errorf("%s: max rel error %g", what, r.MaxRelError)
				}
			}
		}
	}
}

// A backend that answers float64 models in float32 precision (as ONNX
// Runtime's Shrink does) is recognised: the case is checked with float32's
// step and tolerances, which pass the true gradients and fail one 1% off.
// A float64 kernel is never taken for one.
func TestGradCheckRecognisesFloat32Kernels(t *testing.T) {
	for _, c := range []struct{ name, grad string }{
		{"test_conv_with_strides_padding", "W"},
		{"test_gemm_default_matrix_bias", "a"},
		{"test_softmax_axis_1", "x"},
		{"test_batchnorm_example", "s"},
		{"test_maxpool_2d_default", "x"},
		{"test_shrink_hard", "x"},
	} {
		for _, rounds := range []bool{false, true} {
			for _, scale := range []float64{1, 1.01} {
				name := registerWrap(t, false, func(w *wrapNet) { w.rounds, w.scaleGrads, w.scaleOnly = rounds, scale, c.grad })
				r := gradOne(t, filepath.Join(nodeSuite, c.name), metrics.GradConfig{Backend: name})
				what := fmt.Sprintf("%s, d%s scaled by %g, outputs rounded to float32 %v", c.name, c.grad, scale, rounds)
				want := "float64"
				if rounds {
					want = "float32"
				}
				if r.Float32Kernel != rounds || r.PrecisionName() != want || precName(r.Differences) != want {
					t.Errorf("%s: float32 kernel %v, checked in %s against %v differences", what, r.Float32Kernel, r.PrecisionName(), r.Differences)
				}
				switch {
				case scale == 1 && r.Status != metrics.Passed:
					t.Errorf("%s: %s %q", what, r.Status, r.Reason)
				case scale != 1 && (r.Status != metrics.Failed || !strings.Contains(r.Reason, "dL/d"+c.grad+"[")):
					t.Errorf("%s: %s %q, want a failure naming d%s", what, r.Status, r.Reason, c.grad)
				}
			}
		}
	}
}

func precName(t onnx.DataType) string {
	switch t {
	case onnx.Double:
		return "float64"
	case onnx.Float:
		return "float32"
	}
	return t.String()
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
