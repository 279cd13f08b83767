package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestTriluGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	x := func(shape ...int) map[string]*onnx.Tensor {
		return map[string]*onnx.Tensor{"X": randDoubles(r, shape...)}
	}
	runGradCases(t, 11, []gradShapeCase{
		{name: "Trilu upper", nodes: []*onnx.Node{testNode(t, 14, "Trilu", []string{"X"}, []string{"Y"})}, feeds: x(2, 3, 4), out: "Y"},
		{name: "Trilu lower k", nodes: []*onnx.Node{testNode(t, 14, "Trilu", []string{"X", "K"}, []string{"Y"}, intAttr("upper", 0))},
			feeds: x(2, 4, 3), consts: map[string]*onnx.Tensor{"K": onnx.FromSlice([]int64{-1})}, out: "Y"},
		{name: "Trilu upper k", nodes: []*onnx.Node{testNode(t, 14, "Trilu", []string{"X", "K"}, []string{"Y"})},
			feeds: x(4, 5), consts: map[string]*onnx.Tensor{"K": onnx.FromSlice([]int64{2})}, out: "Y"},
	})
}
