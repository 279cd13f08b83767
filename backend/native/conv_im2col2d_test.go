package native

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/onnx"
)

// A convolution gives the same bits whether its im2col matrix is written
// whole or packed block by block (the GEMM sees identical panels), with
// and without bias, on one and two threads.
func TestConvImplicitIm2colMatchesMaterialised(t *testing.T) {
	defer func(v int) { convImplicitMin = v }(convImplicitMin)
	r := rand.New(rand.NewPCG(9, 9))
	rnd := func(shape ...int) *onnx.Tensor {
		x := onnx.NewTensor(onnx.Float, shape...)
		for i := range x.Float32s() {
			x.Float32s()[i] = float32(r.NormFloat64())
		}
		return x
	}
	for _, c := range []struct {
		x, w    []int
		strides []int64
		bias    bool
	}{
		{x: []int{2, 5, 19, 23}, w: []int{12, 5, 3, 3}, strides: []int64{1, 1}, bias: true},
		{x: []int{1, 4, 30, 30}, w: []int{9, 4, 5, 5}, strides: []int64{2, 2}},
	} {
		x, w, b := rnd(c.x...), rnd(c.w...), rnd(c.w[0])
		inputs := []string{"X", "W"}
		inits := []*onnx.Initializer{{Name: "W", Tensor: w}}
		if c.bias {
			inputs = append(inputs, "B")
			inits = append(inits, &onnx.Initializer{Name: "B", Tensor: b})
		}
		node := testNode(t, 17, "Conv", inputs, []string{"Y"}, intsAttr("pads", 1, 2, 2, 1), intsAttr("strides", c.strides...))
		m := testModel([]*onnx.Node{node}, []*onnx.ValueInfo{{Name: "X", Type: floatTensorType(int64s(c.x)...)}}, []*onnx.ValueInfo{{Name: "Y"}}, inits...)
		var outs [2][]float32
		for _, threads := range []int{1, 2} {
			for i, min := range []int{math.MaxInt, 0} {
				convImplicitMin = min
				net, err := New(m, backend.Options{Threads: threads})
				if err != nil {
					t.Fatal(err)
				}
				out, err := net.Inference(map[string]onnx.Value{"X": x})
				if err != nil {
					t.Fatal(err)
				}
				outs[i] = append([]float32(nil), out["Y"].(*onnx.Tensor).Float32s()...)
				net.Close()
			}
			for i, v := range outs[0] {
				if math.Float32bits(outs[1][i]) != math.Float32bits(v) {
					t.Fatalf("x %v, w %v, %d threads: element %d is %v packed directly, %v materialised", c.x, c.w, threads, i, outs[1][i], v)
				}
			}
		}
	}
}

func int64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}
