package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestTopKGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	x := func(shape ...int) map[string]*onnx.Tensor {
		return map[string]*onnx.Tensor{"X": randDoubles(r, shape...)}
	}
	runGradCases(t, 5, []gradShapeCase{
		{name: "TopK 1", nodes: []*onnx.Node{testNode(t, 1, "TopK", []string{"X"}, []string{"Y", "I"}, intAttr("k", 2))}, feeds: x(2, 3, 4), out: "Y"},
		{name: "TopK 10 axis", nodes: []*onnx.Node{testNode(t, 10, "TopK", []string{"X", "K"}, []string{"Y", "I"}, intAttr("axis", 1))},
			feeds: x(2, 4, 3), consts: map[string]*onnx.Tensor{"K": i64s(3)}, out: "Y"},
		{name: "TopK 11 smallest", nodes: []*onnx.Node{testNode(t, 11, "TopK", []string{"X", "K"}, []string{"Y", "I"}, intAttr("axis", -3), intAttr("largest", 0), intAttr("sorted", 0))},
			feeds: x(4, 2, 3), consts: map[string]*onnx.Tensor{"K": i64s(2)}, out: "Y"},
	})
}
