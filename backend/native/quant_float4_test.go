package native

import (
	"math"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// ONNX's generator case test_quantizelinear_float4e2m1: x / scale per row
// (axis 0), saturated to ±6 and rounded to the float4 grid.
// https://onnx.ai/onnx/operators/onnx__QuantizeLinear.html
func TestQuantizeLinearFloat4GeneratorCase(t *testing.T) {
	x := onnx.FromSlice([]float32{0, 2.5, 4.8, 8.6, -30, -20, 6, 9, float32(math.Copysign(0, -1)), -2.5, -4.8, -8.6}, 3, 4)
	scale := onnx.FromSlice([]float32{2, 3, 4}, 3)
	zp := onnx.FromSlice([]onnx.F4E2M1{0, 0, 0}, 3)
	y, err := runNode1(t, 23, "QuantizeLinear", []*onnx.Attribute{intAttr("axis", 0)}, x, scale, zp)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{0, 1, 2, 4, -6, -6, 2, 3, 0, -0.5, -1, -2}
	got := make([]float32, y.Len())
	for i, v := range y.Data.([]onnx.F4E2M1) {
		got[i] = v.Float32()
	}
	if y.Type != onnx.Float4E2M1 || !slices.Equal(got, want) {
		t.Errorf("y = %v %v, want %v", y.Type, got, want)
	}
}

// NaN quantized to float4e2m1, which has no NaN, is what Cast gives it:
// ONNX's reference converts x / scale (+ zero point) with the same numpy
// conversion as Cast, and the newest Cast test data has NaN as 0x8 (the
// negative zero). Infinities saturate to ±6 as in Cast.
func TestQuantizeLinearFloat4NaNLikeCast(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	x := onnx.FromSlice([]float32{nan, inf, -inf, 1}, 4)
	for _, v := range []int64{23, 25} {
		y, err := runNode1(t, v, "QuantizeLinear", nil, x, onnx.Scalar[float32](1), onnx.Scalar(onnx.F4E2M1(0)))
		if err != nil {
			t.Fatal(err)
		}
		want := []onnx.F4E2M1{0x8, 0x7, 0xf, 0x2}
		if got := y.Data.([]onnx.F4E2M1); !slices.Equal(got, want) {
			t.Errorf("QuantizeLinear-%d to float4e2m1 of [NaN +Inf -Inf 1] = %x, want %x", v, got, want)
		}
		c, err := runNode1(t, v, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Float4E2M1))}, x)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.Data.([]onnx.F4E2M1), y.Data.([]onnx.F4E2M1)) {
			t.Errorf("Cast-%d = %x, QuantizeLinear = %x: they should agree", v, c.Data, y.Data)
		}
	}
}
