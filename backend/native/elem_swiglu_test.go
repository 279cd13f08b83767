package native

import (
	"math"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// Expected values are worked out by hand from the operator's definition,
// https://onnx.ai/onnx/operators/onnx__SwiGLU.html

func TestSwiGLU(t *testing.T) {
	a := onnx.FromSlice([]float32{0, 1, -1, 2}, 2, 2)
	b := onnx.FromSlice([]float32{5, 2, 3, -1}, 2, 2)
	// sigmoid(1) = 0.7310585786, sigmoid(-1) = 0.2689414214, sigmoid(2) = 0.8807970780
	got := runNodeOK(t, 28, "SwiGLU", nil, 1, a, b)
	floatsClose(t, "SwiGLU", got[0].Float32s(), []float64{0, 1.4621171573, -0.8068242641, -1.7615941560}, 1e-6)
	if !slices.Equal(got[0].Shape, []int{2, 2}) {
		t.Errorf("SwiGLU shape %v", got[0].Shape)
	}
	got = runNodeOK(t, 28, "SwiGLU", []*onnx.Attribute{floatAttr("alpha", 2)}, 1, a, b)
	// 1*sigmoid(2)*2, -1*sigmoid(-2)*3, 2*sigmoid(4)*-1 (sigmoid(4) = 0.9820137900)
	floatsClose(t, "SwiGLU alpha=2", got[0].Float32s(), []float64{0, 1.7615941560, -0.3576087660, -1.9640275801}, 1e-6)
	ad := onnx.FromSlice([]float64{1}, 1)
	bd := onnx.FromSlice([]float64{2}, 1)
	if v := runNodeOK(t, 28, "SwiGLU", nil, 1, ad, bd)[0].Float64s()[0]; math.Abs(v-1.4621171572600098) > 1e-12 {
		t.Errorf("SwiGLU double: %v", v)
	}
	ah := &onnx.Tensor{Type: onnx.Float16, Shape: []int{1}, Data: f16Values(1)}
	bh := &onnx.Tensor{Type: onnx.Float16, Shape: []int{1}, Data: f16Values(2)}
	if v := float32Values(runNodeOK(t, 28, "SwiGLU", nil, 1, ah, bh)[0])[0]; v != onnx.F16From(1.4621172).Float32() {
		t.Errorf("SwiGLU float16: %v", v)
	}
	if _, err := runNode(t, 28, "SwiGLU", nil, 1, a, onnx.FromSlice([]float32{1, 2}, 2)); err == nil {
		t.Error("SwiGLU broadcast shapes")
	}
}
