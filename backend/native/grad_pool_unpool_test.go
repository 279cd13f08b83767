package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestMaxUnpoolGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	x := func(shape ...int) map[string]*onnx.Tensor {
		return map[string]*onnx.Tensor{"X": randDoubles(r, shape...)}
	}
	ind := func(shape []int, v ...int64) *onnx.Tensor { return onnx.FromSlice(v, shape...) }
	runGradCases(t, 7, []gradShapeCase{
		{name: "MaxUnpool 9", nodes: []*onnx.Node{testNode(t, 9, "MaxUnpool", []string{"X", "I"}, []string{"Y"}, intsAttr("kernel_shape", 2, 2), intsAttr("strides", 2, 2))},
			feeds: x(1, 2, 2, 2), consts: map[string]*onnx.Tensor{"I": ind([]int{1, 2, 2, 2}, 0, 3, 9, 15, 16, 18, 24, 31)}, out: "Y"},
		{name: "MaxUnpool repeated index", nodes: []*onnx.Node{testNode(t, 11, "MaxUnpool", []string{"X", "I"}, []string{"Y"}, intsAttr("kernel_shape", 2, 2), intsAttr("strides", 2, 2))},
			feeds: x(1, 1, 2, 2), consts: map[string]*onnx.Tensor{"I": ind([]int{1, 1, 2, 2}, 5, 5, 10, 2)}, out: "Y"},
		{name: "MaxUnpool output_shape pads", nodes: []*onnx.Node{testNode(t, 22, "MaxUnpool", []string{"X", "I", "S"}, []string{"Y"}, intsAttr("kernel_shape", 3), intsAttr("strides", 2), intsAttr("pads", 1, 0))},
			feeds: x(2, 1, 3), consts: map[string]*onnx.Tensor{"I": ind([]int{2, 1, 3}, 0, 3, 5, 6, 8, 11), "S": i64s(2, 1, 8)}, out: "Y"},
	})
}
