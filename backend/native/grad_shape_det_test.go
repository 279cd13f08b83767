package native

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

func TestDetGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	x := func(shape ...int) map[string]*onnx.Tensor {
		return map[string]*onnx.Tensor{"X": randDoubles(r, shape...)}
	}
	runGradCases(t, 10, []gradShapeCase{
		{name: "Det 3x3", nodes: []*onnx.Node{testNode(t, 11, "Det", []string{"X"}, []string{"Y"})}, feeds: x(3, 3), out: "Y"},
		{name: "Det batch", nodes: []*onnx.Node{testNode(t, 22, "Det", []string{"X"}, []string{"Y"})}, feeds: x(2, 3, 4, 4), out: "Y"},
		{name: "Det 1x1", nodes: []*onnx.Node{testNode(t, 22, "Det", []string{"X"}, []string{"Y"})}, feeds: x(2, 1, 1), out: "Y"},
	})
}

func TestDetGradientSingular(t *testing.T) {
	m := graphOf(t, []*onnx.Node{testNode(t, 22, "Det", []string{"X"}, []string{"Y"})}, map[string][]int64{"X": {2, 2}}, "Y", nil)
	net, err := New(m, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = net.InferenceAndBackprop(map[string]onnx.Value{"X": onnx.FromSlice([]float64{1, 2, 2, 4}, 2, 2)}, "Y")
	if !errors.Is(err, network.ErrUnsupported) {
		t.Fatalf("singular Det: got %v, want an unsupported error", err)
	}
}
