package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestCol2ImGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	x := func(shape ...int) map[string]*onnx.Tensor {
		return map[string]*onnx.Tensor{"X": randDoubles(r, shape...)}
	}
	runGradCases(t, 8, []gradShapeCase{
		{name: "Col2Im 2D", nodes: []*onnx.Node{testNode(t, 18, "Col2Im", []string{"X", "IS", "BS"}, []string{"Y"})},
			feeds: x(2, 2*4, 6), consts: map[string]*onnx.Tensor{"IS": i64s(3, 4), "BS": i64s(2, 2)}, out: "Y"},
		// image 5x4, block 2x3, pads 1,0,1,1, strides 2,1, dilations 1,2: out (5+2-2)/2+1=3, (4+1-5)/1+1=1
		{name: "Col2Im strides pads dilations", nodes: []*onnx.Node{testNode(t, 18, "Col2Im", []string{"X", "IS", "BS"}, []string{"Y"},
			intsAttr("pads", 1, 0, 1, 1), intsAttr("strides", 2, 1), intsAttr("dilations", 1, 2))},
			feeds: x(1, 2*6, 3), consts: map[string]*onnx.Tensor{"IS": i64s(5, 4), "BS": i64s(2, 3)}, out: "Y"},
		{name: "Col2Im 1D", nodes: []*onnx.Node{testNode(t, 18, "Col2Im", []string{"X", "IS", "BS"}, []string{"Y"}, intsAttr("strides", 2))},
			feeds: x(1, 3, 3), consts: map[string]*onnx.Tensor{"IS": i64s(7), "BS": i64s(3)}, out: "Y"},
	})
}
