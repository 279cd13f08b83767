package native

import (
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// Expected values are worked out by hand from the operator's definition,
// https://onnx.ai/onnx/operators/onnx__CausalConvWithState.html

func TestCausalConvWithState(t *testing.T) {
	x := onnx.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 1, 2, 3)
	w := onnx.FromSlice([]float32{1, 2, 3, 0, 1, 0}, 2, 1, 3)
	bias := onnx.FromSlice([]float32{10, -1}, 2)
	// seq = [0, 0, x...]: channel 0 gives 3, 8, 14; channel 1 gives 0, 4, 5.
	got := runNodeOK(t, 27, "CausalConvWithState", nil, 2, x, w, bias)
	floatsClose(t, "output", got[0].Float32s(), []float64{13, 18, 24, -1, 3, 4}, 0)
	floatsClose(t, "present", got[1].Float32s(), []float64{2, 3, 5, 6}, 0)
	if !slices.Equal(got[1].Shape, []int{1, 2, 2}) {
		t.Errorf("present shape %v", got[1].Shape)
	}
	past := onnx.FromSlice([]float32{7, 8, 9, 10}, 1, 2, 2)
	got = runNodeOK(t, 27, "CausalConvWithState", nil, 2, x, w, nil, past)
	floatsClose(t, "output with past", got[0].Float32s(), []float64{26, 16, 14, 10, 4, 5}, 0)
	floatsClose(t, "present with past", got[1].Float32s(), []float64{2, 3, 5, 6}, 0)
	// An input shorter than k-1 keeps part of the past in the state.
	x1 := onnx.FromSlice([]float32{1, 4}, 1, 2, 1)
	got = runNodeOK(t, 27, "CausalConvWithState", nil, 2, x1, w, nil, past)
	floatsClose(t, "short output", got[0].Float32s(), []float64{26, 10}, 0)
	floatsClose(t, "short present", got[1].Float32s(), []float64{8, 1, 10, 4}, 0)
	// SiLU: v * sigmoid(v); sigmoid(4) = 0.9820137900, sigmoid(5) = 0.9933071491.
	got = runNodeOK(t, 27, "CausalConvWithState", []*onnx.Attribute{stringAttr("activation", "silu")}, 2, x, w)
	floatsClose(t, "silu", got[0].Float32s(), []float64{3 * 0.9525741268, 8 * 0.9996646499, 14 * 0.9999991685, 0, 4 * 0.9820137900, 5 * 0.9933071491}, 1e-6)
	// k = 1: an empty state.
	w1 := onnx.FromSlice([]float32{2, -1}, 2, 1, 1)
	got = runNodeOK(t, 27, "CausalConvWithState", nil, 2, x, w1)
	floatsClose(t, "k=1", got[0].Float32s(), []float64{2, 4, 6, -4, -5, -6}, 0)
	if !slices.Equal(got[1].Shape, []int{1, 2, 0}) {
		t.Errorf("k=1 state shape %v", got[1].Shape)
	}
	// float16 (a batch of two).
	xh := &onnx.Tensor{Type: onnx.Float16, Shape: []int{2, 1, 2}, Data: f16Values(1, 2, 3, 4)}
	wh := &onnx.Tensor{Type: onnx.Float16, Shape: []int{1, 1, 2}, Data: f16Values(0.5, 1)}
	got = runNodeOK(t, 27, "CausalConvWithState", nil, 2, xh, wh)
	if w := float32Values(got[0]); !slices.Equal(w, []float32{1, 2.5, 3, 5.5}) || got[0].Type != onnx.Float16 {
		t.Errorf("float16 output %v", w)
	}
	if w := float32Values(got[1]); !slices.Equal(w, []float32{2, 4}) {
		t.Errorf("float16 state %v", w)
	}
	if _, err := runNode(t, 27, "CausalConvWithState", nil, 2, x, onnx.FromSlice([]float32{1, 2}, 1, 1, 2)); err == nil {
		t.Error("weight with the wrong channel count was accepted")
	}
	if _, err := runNode(t, 27, "CausalConvWithState", nil, 2, x, w, nil, onnx.FromSlice([]float32{1, 2}, 1, 2, 1)); err == nil {
		t.Error("past_state of the wrong length was accepted")
	}
	if _, err := runNode(t, 27, "CausalConvWithState", []*onnx.Attribute{stringAttr("activation", "relu")}, 2, x, w); err == nil {
		t.Error("activation relu was accepted")
	}
}
