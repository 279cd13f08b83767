package autodiff

import (
	"math"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/onnx"
)

// The rules of operator versions older than opset 8 cannot be reached
// through Gradients (its seed needs Expand, opset 8): these tests call
// them on a builder directly.

// nnTestGraph is a graph at opset with float inputs x and dy of shape,
// and one node of op reading ins (of x and dy) and writing y (of the same
// shape).
func nnTestGraph(t *testing.T, opset int64, shape []int64, op string, ins []string, attrs ...*onnx.Attribute) (*builder, *onnx.Node) {
	t.Helper()
	g := &onnx.Graph{Name: "g"}
	ti := &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float, HasShape: true}
	for _, d := range shape {
		ti.Shape = append(ti.Shape, onnx.Dim{Size: d})
	}
	for _, in := range []string{"x", "dy"} {
		g.Inputs = append(g.Inputs, &onnx.ValueInfo{Name: in, Type: ti})
	}
	n := &onnx.Node{Name: "n", OpType: op, Inputs: ins, Outputs: []string{"y"}, Attributes: attrs, Opset: opset, Graph: g}
	if err := onnx.TypeNode(n); err != nil {
		t.Fatal(err)
	}
	g.Nodes = append(g.Nodes, n)
	info := map[string]Info{}
	for _, v := range []string{"x", "y", "dy"} {
		info[v] = Info{Type: onnx.Float, Shape: shape}
	}
	return newBuilder(g, opset, info), n
}

func TestMaxPool1GradientUnsupported(t *testing.T) {
	b, n := nnTestGraph(t, 7, []int64{1, 1, 4, 4}, "MaxPool", []string{"x"}, attrInts("kernel_shape", 2, 2))
	maxPoolGrad(b, n, []string{"dy"}, []bool{true})
	if b.err == nil || !strings.Contains(b.err.Error(), "Indices") {
		t.Fatalf("error %v, want one about the Indices output", b.err)
	}
}

func TestOldOpsetBroadcastUnsupported(t *testing.T) {
	b, n := nnTestGraph(t, 6, []int64{1, 2, 3}, "InstanceNormalization", []string{"x", "x", "x"})
	instanceNormGrad(b, n, []string{"dy"}, []bool{true, false, false})
	if b.err == nil || !strings.Contains(b.err.Error(), "opset 7") {
		t.Fatalf("error %v, want one about opset 7", b.err)
	}
}

// TestDropout6TrainingGradient: Dropout-6 in training (is_test 0) gets a
// mask output, of X's type, and dX = dY·mask/(1 − ratio).
func TestDropout6TrainingGradient(t *testing.T) {
	b, n := nnTestGraph(t, 6, []int64{20, 5}, "Dropout", []string{"x"}, attrFloat("ratio", 0.25))
	dx := dropoutGrad(b, n, []string{"dy"}, []bool{true})
	if b.err != nil {
		t.Fatal(b.err)
	}
	if len(n.Outputs) != 2 || n.Outputs[1] == "" {
		t.Fatalf("the node's outputs are %v; want a mask added", n.Outputs)
	}
	g := b.g
	for _, o := range []string{"y", n.Outputs[1], dx[0]} {
		g.Outputs = append(g.Outputs, &onnx.ValueInfo{Name: o})
	}
	net, err := backend.New("native", &onnx.Model{IRVersion: 3, Opsets: map[string]int64{"": 6}, Graph: g}, backend.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	x, dy := onnx.NewTensor(onnx.Float, 20, 5), onnx.NewTensor(onnx.Float, 20, 5)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(i%7) - 2.5
		dy.Float32s()[i] = float32(i%5) + 0.5
	}
	out, err := net.Inference(map[string]onnx.Value{"x": x, "dy": dy})
	if err != nil {
		t.Fatal(err)
	}
	y, mask, got := out["y"].(*onnx.Tensor).Float32s(), out[n.Outputs[1]].(*onnx.Tensor).Float32s(), out[dx[0]].(*onnx.Tensor).Float32s()
	kept := 0
	for i := range got {
		if mask[i] != 0 && mask[i] != 1 {
			t.Fatalf("mask element %d is %g", i, mask[i])
		}
		if want := x.Float32s()[i] * mask[i] / 0.75; math.Abs(float64(y[i]-want)) > 1e-6 {
			t.Fatalf("y element %d is %g, want %g: the mask is not the forward's", i, y[i], want)
		}
		if want := dy.Float32s()[i] * mask[i] / 0.75; math.Abs(float64(got[i]-want)) > 1e-6 {
			t.Fatalf("dx element %d is %g, want %g", i, got[i], want)
		}
		kept += int(mask[i])
	}
	if kept == 0 || kept == len(got) {
		t.Fatalf("%d of %d elements kept", kept, len(got))
	}
}
