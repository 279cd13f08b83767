package native

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// Large Add, Mul by a scalar, BatchNormalization, MaxPool and Clip split their
// work over two workers through tasks the kernels keep: on two threads a
// warm run allocates nothing and gives exactly the one-thread results.
// X is [1, 8, 256, 256] (524,288 elements: at least two par.Grain chunks
// for each operator).
func TestParallelKernelTasksAllocateNothing(t *testing.T) {
	nodes := []*onnx.Node{
		testNode(t, 17, "Add", []string{"X", "X2"}, []string{"S"}),
		testNode(t, 17, "Mul", []string{"S", "Half"}, []string{"P"}),
		testNode(t, 17, "BatchNormalization", []string{"P", "Sc", "B", "M", "V"}, []string{"N"}),
		testNode(t, 17, "MaxPool", []string{"N"}, []string{"Q"}, intsAttr("kernel_shape", 2, 2), intsAttr("strides", 2, 2)),
		testNode(t, 17, "Clip", []string{"Q", "Lo", "Hi"}, []string{"Y"}),
	}
	channel := func(f func(c int) float32) *onnx.Tensor {
		v := onnx.NewTensor(onnx.Float, 8)
		for c := range 8 {
			v.Float32s()[c] = f(c)
		}
		return v
	}
	m := testModel(nodes,
		[]*onnx.ValueInfo{{Name: "X", Type: floatTensorType(1, 8, 256, 256)}, {Name: "X2", Type: floatTensorType(1, 8, 256, 256)}},
		[]*onnx.ValueInfo{{Name: "Y"}},
		&onnx.Initializer{Name: "Half", Tensor: onnx.FromSlice([]float32{0.5})},
		&onnx.Initializer{Name: "Lo", Tensor: onnx.Scalar(float32(-1))},
		&onnx.Initializer{Name: "Hi", Tensor: onnx.Scalar(float32(2))},
		&onnx.Initializer{Name: "Sc", Tensor: channel(func(c int) float32 { return 1 + float32(c)/4 })},
		&onnx.Initializer{Name: "B", Tensor: channel(func(c int) float32 { return float32(c) - 3 })},
		&onnx.Initializer{Name: "M", Tensor: channel(func(c int) float32 { return 0.1 * float32(c) })},
		&onnx.Initializer{Name: "V", Tensor: channel(func(c int) float32 { return 2 })},
	)
	x, x2 := onnx.NewTensor(onnx.Float, 1, 8, 256, 256), onnx.NewTensor(onnx.Float, 1, 8, 256, 256)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(math.Sin(float64(i) * 0.013))
		x2.Float32s()[i] = float32(math.Cos(float64(i) * 0.029))
	}
	feeds := map[string]onnx.Value{"X": x, "X2": x2}
	outputs := map[int]*onnx.Tensor{}
	for _, threads := range []int{1, 2} {
		net, err := New(m, backend.Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		dst := map[string]onnx.Value{}
		run := func() {
			if _, err := network.InferInto(net, feeds, dst); err != nil {
				t.Fatal(err)
			}
		}
		run()
		if threads == 2 {
			if a := testing.AllocsPerRun(5, run); a != 0 {
				t.Errorf("%v allocations per run on 2 threads, want 0", a)
			}
		}
		outputs[threads] = dst["Y"].(*onnx.Tensor)
		net.Close()
	}
	// Spot-check an output against the formula, then the two runs
	// against each other.
	one, two := outputs[1].Float32s(), outputs[2].Float32s()
	c, oh, ow := 2, 17, 40
	want := float32(math.Inf(-1))
	for dh := range 2 {
		for dw := range 2 {
			i := (c*256+2*oh+dh)*256 + 2*ow + dw
			p := (x.Float32s()[i] + x2.Float32s()[i]) * 0.5
			a := (1 + float32(c)/4) / float32(math.Sqrt(2+1e-5))
			want = max(want, (p-0.1*float32(c))*a+float32(c)-3)
		}
	}
	want = min(max(want, -1), 2)
	if got := one[(c*128+oh)*128+ow]; math.Abs(float64(got-want)) > 1e-5 {
		t.Fatalf("Y[0,%d,%d,%d] = %v, want %v", c, oh, ow, got, want)
	}
	for i := range one {
		if one[i] != two[i] {
			t.Fatalf("Y[%d] is %v on one thread and %v on two", i, one[i], two[i])
		}
	}
}
