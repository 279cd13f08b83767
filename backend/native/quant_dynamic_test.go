package native

import (
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// DynamicQuantizeLinear's scale is (max(0, max x) - min(0, min x)) / 255
// (https://onnx.ai/onnx/operators/onnx__DynamicQuantizeLinear.html, and its
// function body: ReduceMin/ReduceMax, Min/Max with 0, Sub, Div by 255). An
// empty input reduces to the empty-set values ±inf, both clamped to 0, so
// the scale is 0, as it is for an input of zeros. ONNX Runtime returns 1
// for the empty input (its own convention), ONNX's reference fails on it
// and gives 1/255 for zeros. The zero point, 0 - 0/0 by the formula, is 0.
func TestDynamicQuantizeLinearZeroRange(t *testing.T) {
	for _, x := range []*onnx.Tensor{
		onnx.FromSlice([]float32{}, 4, 0, 1),
		onnx.FromSlice([]float32{0, 0, 0}, 3),
	} {
		out, err := runNode(t, 11, "DynamicQuantizeLinear", nil, 3, x)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out[0].Shape, x.Shape) || slices.ContainsFunc(out[0].Data.([]uint8), func(v uint8) bool { return v != 0 }) {
			t.Errorf("%v: y = %v, want zeros of shape %v", x.Shape, out[0], x.Shape)
		}
		if len(out[1].Shape) != 0 || out[1].Float32s()[0] != 0 {
			t.Errorf("%v: y_scale = %v, want scalar 0", x.Shape, out[1])
		}
		if len(out[2].Shape) != 0 || out[2].Data.([]uint8)[0] != 0 {
			t.Errorf("%v: y_zero_point = %v, want scalar 0", x.Shape, out[2])
		}
	}
}

// The first case of ONNX's generator (test_dynamicquantizelinear): scale
// 5/255, zero point round(3 / scale) = 153.
func TestDynamicQuantizeLinearGeneratorCase(t *testing.T) {
	x := onnx.FromSlice([]float32{0, 2, -3, -2.5, 1.34, 0.5}, 6)
	out, err := runNode(t, 11, "DynamicQuantizeLinear", nil, 3, x)
	if err != nil {
		t.Fatal(err)
	}
	scale := float32(5.0) / 255
	if got := out[1].Float32s()[0]; got != scale {
		t.Errorf("y_scale = %v, want %v", got, scale)
	}
	if got := out[2].Data.([]uint8)[0]; got != 153 {
		t.Errorf("y_zero_point = %v, want 153", got)
	}
	// round(x / scale) + 153 saturated; 0.5 / scale is 25.5 in float32 and
	// rounds to the even 26.
	want := []uint8{153, 255, 0, 26, 221, 179}
	if got := out[0].Data.([]uint8); !slices.Equal(got, want) {
		t.Errorf("y = %v, want %v", got, want)
	}
}
