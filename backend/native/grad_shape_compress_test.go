package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestCompressGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	x := func(shape ...int) map[string]*onnx.Tensor {
		return map[string]*onnx.Tensor{"X": randDoubles(r, shape...)}
	}
	bools := func(v ...bool) *onnx.Tensor { return onnx.FromSlice(v, len(v)) }
	runGradCases(t, 12, []gradShapeCase{
		{name: "Compress axis", nodes: []*onnx.Node{testNode(t, 11, "Compress", []string{"X", "C"}, []string{"Y"}, intAttr("axis", 1))},
			feeds: x(2, 4, 3), consts: map[string]*onnx.Tensor{"C": bools(true, false, true)}, out: "Y"},
		{name: "Compress neg axis", nodes: []*onnx.Node{testNode(t, 11, "Compress", []string{"X", "C"}, []string{"Y"}, intAttr("axis", -1))},
			feeds: x(2, 3), consts: map[string]*onnx.Tensor{"C": bools(false, true, true)}, out: "Y"},
		{name: "Compress flat 9", nodes: []*onnx.Node{testNode(t, 9, "Compress", []string{"X", "C"}, []string{"Y"})},
			feeds: x(2, 3), consts: map[string]*onnx.Tensor{"C": bools(true, false, true, true, false)}, out: "Y"},
	})
}
