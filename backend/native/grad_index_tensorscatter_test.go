package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestTensorScatterGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(57, 58))
	cu := func(c, u []int) map[string]*onnx.Tensor {
		return map[string]*onnx.Tensor{"C": randDoubles(r, c...), "U": randDoubles(r, u...)}
	}
	runGradCases(t, 14, []gradShapeCase{
		{name: "TensorScatter linear", nodes: []*onnx.Node{testNode(t, 24, "TensorScatter", []string{"C", "U", "W"}, []string{"Y"}, intAttr("axis", 2))},
			feeds: cu([]int{2, 2, 5, 3}, []int{2, 2, 2, 3}), consts: map[string]*onnx.Tensor{"W": i64s(1, 3)}, out: "Y"},
		{name: "TensorScatter circular", nodes: []*onnx.Node{testNode(t, 24, "TensorScatter", []string{"C", "U", "W"}, []string{"Y"}, strAttrOf("mode", "circular"), intAttr("axis", 1))},
			feeds: cu([]int{2, 4, 2}, []int{2, 3, 2}), consts: map[string]*onnx.Tensor{"W": i64s(2, 3)}, out: "Y"},
		{name: "TensorScatter no indices", nodes: []*onnx.Node{testNode(t, 24, "TensorScatter", []string{"C", "U"}, []string{"Y"}, intAttr("axis", -2))},
			feeds: cu([]int{1, 4, 2}, []int{1, 2, 2}), out: "Y"},
	})
}
