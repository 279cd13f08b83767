package autodiff_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/transform/autodiff"
)

// model builds small models by hand, nodes typed as loading does.
type model struct {
	t     testing.TB
	opset int64
	g     *onnx.Graph
	feeds map[string]onnx.Value
	rng   *rand.Rand
}

func newModel(t testing.TB, opset int64) *model {
	return &model{t: t, opset: opset, g: &onnx.Graph{Name: "m"}, feeds: map[string]onnx.Value{},
		rng: rand.New(rand.NewPCG(1, 2))}
}

// randn is a float32 tensor of normal draws.
func (m *model) randn(shape ...int) *onnx.Tensor {
	t := onnx.NewTensor(onnx.Float, shape...)
	for i := range t.Float32s() {
		t.Float32s()[i] = float32(m.rng.NormFloat64())
	}
	return t
}

// input declares a graph input and feeds it t.
func (m *model) input(name string, t *onnx.Tensor) {
	ti := &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: t.Type, HasShape: true}
	for _, d := range t.Shape {
		ti.Shape = append(ti.Shape, onnx.Dim{Size: int64(d)})
	}
	m.g.Inputs = append(m.g.Inputs, &onnx.ValueInfo{Name: name, Type: ti})
	m.feeds[name] = t
}

// param adds an initializer (a parameter when it is floating-point).
func (m *model) param(name string, t *onnx.Tensor) {
	m.g.Initializers = append(m.g.Initializers, &onnx.Initializer{Name: name, Tensor: t})
}

// node appends a node; its first output becomes a graph output when out.
func (m *model) node(op string, inputs, outputs []string, attrs ...*onnx.Attribute) {
	m.t.Helper()
	n := &onnx.Node{Name: outputs[0], OpType: op, Inputs: inputs, Outputs: outputs, Attributes: attrs, Opset: m.opset, Graph: m.g}
	if err := onnx.TypeNode(n); err != nil {
		m.t.Fatal(err)
	}
	m.g.Nodes = append(m.g.Nodes, n)
}

func (m *model) build(outputs ...string) *onnx.Model {
	for _, o := range outputs {
		m.g.Outputs = append(m.g.Outputs, &onnx.ValueInfo{Name: o})
	}
	return &onnx.Model{IRVersion: 8, Opsets: map[string]int64{"": m.opset}, Graph: m.g}
}

func ints(name string, v ...int64) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrInts, Ints: v}
}

func intAttr(name string, v int64) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrInt, Int: v}
}

func floatAttr(name string, v float32) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrFloat, Float: v}
}

func strAttr(name, v string) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrString, String: v}
}

func nativeNet(m *onnx.Model) (network.Network, error) {
	return backend.New("native", m, backend.Options{Threads: 1})
}

// checkGradients appends an MSE loss of output against a random target,
// builds the training graph, runs it on the native backend and compares
// every gradient with the native backend's own backprop (itself checked
// against central differences by gradcheck). It returns the training
// graph's result for further checks.
func checkGradients(t *testing.T, m *model, output string) *autodiff.Result {
	t.Helper()
	mm := m.build(output)
	feeds := withTarget(t, m, mm, m.feeds, output)
	loss, err := network.AppendLoss(mm, network.LossMeanSquaredError, output, "target")
	if err != nil {
		t.Fatal(err)
	}
	res, err := trainingGraph(t, mm, loss, feeds)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range res.Model.Graph.Nodes {
		if n.Domain != "" {
			t.Fatalf("the training graph has %v of domain %q", n, n.Domain)
		}
	}
	compareWithNative(t, res, mm, loss, feeds)
	return res
}

// checkBatches is checkGradients with the batch dimension (dim 0 of every
// graph input) left free: build makes the model at batch sizes 2 and 3
// (the parameters of the first are kept), the model is probed with both
// feed sets, and the one training graph's gradients are compared with the
// native backend's own on both.
func checkBatches(t *testing.T, opset int64, build func(m *model, batch int), output string) {
	t.Helper()
	m := newModel(t, opset)
	build(m, 2)
	m3 := newModel(t, opset)
	m3.rng = m.rng
	build(m3, 3)
	mm := m.build(output)
	for _, in := range mm.Graph.Inputs {
		in.Type.Shape[0] = onnx.Dim{Size: -1, Param: "N"}
	}
	feeds := []map[string]onnx.Value{withTarget(t, m, mm, m.feeds, output), withTarget(t, m, mm, m3.feeds, output)}
	loss, err := network.AppendLoss(mm, network.LossMeanSquaredError, output, "target")
	if err != nil {
		t.Fatal(err)
	}
	res, err := trainingGraph(t, mm, loss, feeds...)
	if err != nil {
		t.Fatal(err)
	}
	compareWithNative(t, res, mm, loss, feeds...)
}

// compareWithNative runs the training graph on each feed set and compares
// its gradients with the native backend's backprop of mm. Both networks
// are fresh for each feed set: a Dropout with a seed draws the same mask
// in both.
func compareWithNative(t *testing.T, res *autodiff.Result, mm *onnx.Model, loss string, feeds ...map[string]onnx.Value) {
	t.Helper()
	for k, fs := range feeds {
		tn, err := nativeNet(res.Model)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := nativeNet(mm)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ref.InferenceAndBackprop(fs, loss); err != nil {
			t.Fatal(err)
		}
		got, err := tn.Inference(fs)
		if err != nil {
			t.Fatal(err)
		}
		for _, pg := range res.Grads {
			want, err := network.FetchTensor(ref, network.GradName(pg.Param))
			if err != nil {
				t.Fatal(err)
			}
			g, ok := got[pg.Grad].(*onnx.Tensor)
			if !ok {
				t.Fatalf("%s: no gradient output", pg.Grad)
			}
			if err := closeTo(g, want, 1e-4); err != nil {
				t.Errorf("feed set %d: gradient of %s: %v", k, pg.Param, err)
			}
		}
		ref.Close()
		tn.Close()
	}
}

// expectFail checks that building the training graph of the model fails
// with an error that mentions want.
func expectFail(t *testing.T, m *model, output, want string) {
	t.Helper()
	mm := m.build(output)
	feeds := withTarget(t, m, mm, m.feeds, output)
	loss, err := network.AppendLoss(mm, network.LossMeanSquaredError, output, "target")
	if err != nil {
		t.Fatal(err)
	}
	_, err = trainingGraph(t, mm, loss, feeds)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got error %v, want one that mentions %q", err, want)
	}
}

// trainingGraph lowers and probes mm (with every feed set) and builds its
// training graph for loss with respect to every floating-point input and
// initializer.
func trainingGraph(t *testing.T, mm *onnx.Model, loss string, feeds ...map[string]onnx.Value) (*autodiff.Result, error) {
	t.Helper()
	var wrt []string
	for _, in := range mm.Graph.Inputs {
		if in.Type.Elem.IsFloat() {
			wrt = append(wrt, in.Name)
		}
	}
	for _, in := range mm.Graph.Initializers {
		if in.Tensor.Type.IsFloat() {
			wrt = append(wrt, in.Name)
		}
	}
	low, err := autodiff.Lower(mm)
	if err != nil {
		t.Fatal(err)
	}
	info, err := autodiff.Probe(nativeNet, low, feeds...)
	if err != nil {
		t.Fatal(err)
	}
	return autodiff.Gradients(low, autodiff.Options{Loss: loss, WRT: wrt, Info: info})
}

// withTarget returns feeds plus a random "target" shaped like output.
func withTarget(t *testing.T, m *model, mm *onnx.Model, feeds map[string]onnx.Value, output string) map[string]onnx.Value {
	t.Helper()
	net, err := nativeNet(mm)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := net.Inference(feeds)
	net.Close()
	if err != nil {
		t.Fatal(err)
	}
	y := outs[output].(*onnx.Tensor)
	out := map[string]onnx.Value{}
	for k, v := range feeds {
		out[k] = v
	}
	target := onnx.NewTensor(y.Type, y.Shape...)
	for i := range y.Len() {
		setF(target, i, m.rng.NormFloat64())
	}
	out["target"] = target
	return out
}

func setF(t *onnx.Tensor, i int, v float64) {
	switch d := t.Data.(type) {
	case []float32:
		d[i] = float32(v)
	case []float64:
		d[i] = v
	}
}

func getF(t *onnx.Tensor, i int) float64 {
	switch d := t.Data.(type) {
	case []float32:
		return float64(d[i])
	case []float64:
		return d[i]
	}
	return math.NaN()
}

func closeTo(got, want *onnx.Tensor, tol float64) error {
	if fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
		return fmt.Errorf("shape %v, want %v", got.Shape, want.Shape)
	}
	scale := 0.0
	for i := range want.Len() {
		scale = math.Max(scale, math.Abs(getF(want, i)))
	}
	for i := range want.Len() {
		a, b := getF(got, i), getF(want, i)
		if math.Abs(a-b) > tol*math.Max(1, scale) || math.IsNaN(a) != math.IsNaN(b) {
			return fmt.Errorf("element %d is %g, want %g", i, a, b)
		}
	}
	return nil
}
