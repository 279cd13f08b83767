package transform_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/transform"
)

// testGraph builds small models by hand, nodes typed as loading does.
type testGraph struct {
	t     testing.TB
	opset int64
	g     *onnx.Graph
}

func newTestGraph(t testing.TB, opset int64) *testGraph {
	t.Helper()
	return &testGraph{t: t, opset: opset, g: &onnx.Graph{Name: t.Name()}}
}

// input declares a float graph input; a negative dimension is symbolic.
func (b *testGraph) input(name string, dims ...int64) {
	b.inputOf(name, onnx.Float, dims...)
}

func (b *testGraph) inputOf(name string, elem onnx.DataType, dims ...int64) {
	ti := &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: elem, HasShape: true}
	for _, d := range dims {
		if d < 0 {
			ti.Shape = append(ti.Shape, onnx.Dim{Size: -1, Param: "N"})
		} else {
			ti.Shape = append(ti.Shape, onnx.Dim{Size: d})
		}
	}
	b.g.Inputs = append(b.g.Inputs, &onnx.ValueInfo{Name: name, Type: ti})
}

func (b *testGraph) output(names ...string) {
	for _, n := range names {
		b.g.Outputs = append(b.g.Outputs, &onnx.ValueInfo{Name: n})
	}
}

func (b *testGraph) init(name string, t *onnx.Tensor) {
	b.g.Initializers = append(b.g.Initializers, &onnx.Initializer{Name: name, Tensor: t})
}

// node appends a node named after its first output.
func (b *testGraph) node(op string, inputs, outputs []string, attrs ...*onnx.Attribute) *onnx.Node {
	b.t.Helper()
	n := &onnx.Node{Name: outputs[0], OpType: op, Inputs: inputs, Outputs: outputs, Attributes: attrs, Opset: b.opset, Graph: b.g}
	if err := onnx.TypeNode(n); err != nil {
		b.t.Fatal(err)
	}
	b.g.Nodes = append(b.g.Nodes, n)
	return n
}

func (b *testGraph) model() *onnx.Model {
	return &onnx.Model{IRVersion: 8, Opsets: map[string]int64{"": b.opset}, Graph: b.g}
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

// randomTensor is normally distributed float32 data of that shape.
func randomTensor(rng *rand.Rand, shape ...int) *onnx.Tensor {
	t := onnx.NewTensor(onnx.Float, shape...)
	for i := range t.Float32s() {
		t.Float32s()[i] = float32(rng.NormFloat64())
	}
	return t
}

// positiveTensor is uniform in [0.5, 1.5): variances and scales.
func positiveTensor(rng *rand.Rand, n int) *onnx.Tensor {
	t := onnx.NewTensor(onnx.Float, n)
	for i := range t.Float32s() {
		t.Float32s()[i] = 0.5 + float32(rng.Float64())
	}
	return t
}

// optimize runs transform.Optimize with the native backend as evaluator
// and checks that the caller's model was left exactly as it was.
func optimize(t *testing.T, m *onnx.Model) (*onnx.Model, transform.Report) {
	t.Helper()
	before, err := onnx.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	out, rep, err := transform.Optimize(m, transform.Options{Evaluate: transform.BackendEvaluator("native")})
	if err != nil {
		t.Fatalf("Optimize: %v", err)
	}
	after, err := onnx.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("Optimize modified the caller's model")
	}
	return out, rep
}

// run executes m on the native backend.
func run(t *testing.T, m *onnx.Model, feeds map[string]onnx.Value) map[string]onnx.Value {
	t.Helper()
	net, err := backend.New("native", m, backend.Options{Threads: 1})
	if err != nil {
		t.Fatalf("native: %v", err)
	}
	defer net.Close()
	out, err := net.Inference(feeds)
	if err != nil {
		t.Fatalf("inference: %v", err)
	}
	// Kernels reuse their output buffers; keep copies.
	for k, v := range out {
		if tt, ok := v.(*onnx.Tensor); ok {
			out[k] = tt.Clone()
		}
	}
	return out
}

// assertEquivalent runs the original and the optimized model on the same
// feeds and requires equal outputs: the same names, types and shapes, and
// values that agree within metrics.CrossBackendTolerance (two float32
// computations summing in different orders).
func assertEquivalent(t *testing.T, original, optimized *onnx.Model, feeds map[string]onnx.Value) {
	t.Helper()
	assertEquivalentWithin(t, original, optimized, feeds, false)
}

// assertEquivalentWithin is assertEquivalent, with the tolerance's
// absolute part scaled to each output's largest magnitude when scaled is
// set (metrics.Tolerance.ScaledTo, the rule for whole networks' outputs).
func assertEquivalentWithin(t *testing.T, original, optimized *onnx.Model, feeds map[string]onnx.Value, scaled bool) {
	t.Helper()
	want := run(t, original, feeds)
	got := run(t, optimized, feeds)
	if len(got) != len(want) {
		t.Fatalf("optimized model returns %d outputs, the original %d", len(got), len(want))
	}
	for name, w := range want {
		tol := metrics.CrossBackendTolerance
		if scaled {
			tol = tol.ScaledTo(w)
		}
		if d := metrics.Compare(got[name], w, tol); !d.Equal() {
			t.Fatalf("output %q: optimized differs from original: %s", name, d.Mismatch)
		}
	}
}

// opTypes lists the op types of m's nodes in order.
func opTypes(m *onnx.Model) []string {
	var out []string
	for _, n := range m.Graph.Nodes {
		out = append(out, n.OpType)
	}
	return out
}

// count counts m's nodes of an op type.
func count(m *onnx.Model, op string) int {
	c := 0
	for _, n := range m.Graph.Nodes {
		if n.OpType == op {
			c++
		}
	}
	return c
}

// passCount returns what the report says a pass did.
func passCount(rep transform.Report, pass string) int {
	for _, p := range rep.Passes {
		if p.Pass == pass {
			return p.Count
		}
	}
	return -1
}
