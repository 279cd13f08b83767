package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestLpNormalizationGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 40))
	x := func(shape ...int) map[string]*onnx.Tensor {
		return map[string]*onnx.Tensor{"X": randDoubles(r, shape...)}
	}
	runGradCases(t, 9, []gradShapeCase{
		{name: "LpNorm p2 default axis", nodes: []*onnx.Node{testNode(t, 1, "LpNormalization", []string{"X"}, []string{"Y"})}, feeds: x(2, 3, 4), out: "Y"},
		{name: "LpNorm p1 axis0", nodes: []*onnx.Node{testNode(t, 22, "LpNormalization", []string{"X"}, []string{"Y"}, intAttr("p", 1), intAttr("axis", 0))}, feeds: x(3, 4), out: "Y"},
		{name: "LpNorm p2 axis1", nodes: []*onnx.Node{testNode(t, 22, "LpNormalization", []string{"X"}, []string{"Y"}, intAttr("axis", 1))}, feeds: x(2, 3, 2), out: "Y"},
	})
}
