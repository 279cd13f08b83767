package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestCenterCropPadGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	x := func(shape ...int) map[string]*onnx.Tensor {
		return map[string]*onnx.Tensor{"X": randDoubles(r, shape...)}
	}
	runGradCases(t, 6, []gradShapeCase{
		{name: "CenterCropPad crop+pad", nodes: []*onnx.Node{testNode(t, 18, "CenterCropPad", []string{"X", "S"}, []string{"Y"})},
			feeds: x(5, 2, 4), consts: map[string]*onnx.Tensor{"S": i64s(2, 5, 4)}, out: "Y"},
		{name: "CenterCropPad axes odd", nodes: []*onnx.Node{testNode(t, 18, "CenterCropPad", []string{"X", "S"}, []string{"Y"}, intsAttr("axes", -1, 0))},
			feeds: x(4, 3, 6), consts: map[string]*onnx.Tensor{"S": i64s(3, 7)}, out: "Y"},
	})
}
