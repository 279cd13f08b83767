package autodiff_test

import (
	"fmt"
	"math"
	"math/rand/v2"
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
	// The target: the output's shape, from one inference.
	net, err := nativeNet(mm)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := net.Inference(m.feeds)
	net.Close()
	if err != nil {
		t.Fatal(err)
	}
	y := outs[output].(*onnx.Tensor)
	feeds := map[string]onnx.Value{}
	for k, v := range m.feeds {
		feeds[k] = v
	}
	target := onnx.NewTensor(y.Type, y.Shape...)
	for i := range y.Len() {
		setF(target, i, m.rng.NormFloat64())
	}
	feeds["target"] = target
	loss, err := network.AppendLoss(mm, network.LossMeanSquaredError, output, "target")
	if err != nil {
		t.Fatal(err)
	}

	// The native backend's own gradients.
	ref, err := nativeNet(mm)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if _, err := ref.InferenceAndBackprop(feeds, loss); err != nil {
		t.Fatal(err)
	}

	low, err := autodiff.Lower(mm)
	if err != nil {
		t.Fatal(err)
	}
	info, err := autodiff.Probe(nativeNet, low, feeds)
	if err != nil {
		t.Fatal(err)
	}
	res, err := autodiff.Gradients(low, autodiff.Options{Loss: loss, WRT: wrt, Info: info})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range res.Model.Graph.Nodes {
		if n.Domain != "" {
			t.Fatalf("the training graph has %v of domain %q", n, n.Domain)
		}
	}
	tn, err := nativeNet(res.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer tn.Close()
	got, err := tn.Inference(feeds)
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
			t.Errorf("gradient of %s: %v", pg.Param, err)
		}
	}
	return res
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
