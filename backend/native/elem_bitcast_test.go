package native

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// Expected values are worked out by hand from the operator's definition,
// https://onnx.ai/onnx/operators/onnx__BitCast.html

func TestBitCast(t *testing.T) {
	cast := func(to onnx.DataType, x *onnx.Tensor) *onnx.Tensor {
		t.Helper()
		return runNodeOK(t, 26, "BitCast", []*onnx.Attribute{intAttr("to", int64(to))}, 1, x)[0]
	}
	got := cast(onnx.Int32, onnx.FromSlice([]float32{1, -2, 0}, 3))
	if !slices.Equal(got.Int32s(), []int32{0x3F800000, -0x40000000, 0}) || !slices.Equal(got.Shape, []int{3}) {
		t.Errorf("float -> int32: %v", got)
	}
	got = cast(onnx.Uint32, onnx.FromSlice([]float32{-2}, 1, 1))
	if d := got.Data.([]uint32); d[0] != 0xC0000000 || !slices.Equal(got.Shape, []int{1, 1}) {
		t.Errorf("float -> uint32: %v", got)
	}
	got = cast(onnx.Float, onnx.FromSlice([]int32{0x40490FDB}))
	if got.Float32s()[0] != float32(math.Pi) {
		t.Errorf("int32 -> float: %v", got)
	}
	got = cast(onnx.Uint8, onnx.FromSlice([]int8{-1, -128, 5}, 3))
	if !slices.Equal(got.Data.([]uint8), []uint8{255, 128, 5}) {
		t.Errorf("int8 -> uint8: %v", got)
	}
	got = cast(onnx.Float16, onnx.FromSlice([]uint16{0x3C00, 0xC000}, 2))
	if w := float32Values(got); !slices.Equal(w, []float32{1, -2}) {
		t.Errorf("uint16 -> float16: %v", w)
	}
	got = cast(onnx.Int16, &onnx.Tensor{Type: onnx.BFloat16, Shape: []int{1}, Data: []onnx.BF16{onnx.BF16From(-1)}})
	if got.Data.([]int16)[0] != -16512 { // 0xBF80
		t.Errorf("bfloat16 -> int16: %v", got)
	}
	got = cast(onnx.Double, onnx.FromSlice([]int64{0x3FF0000000000000, -0x4000000000000000}, 2))
	if !slices.Equal(got.Float64s(), []float64{1, -2}) {
		t.Errorf("int64 -> double: %v", got)
	}
	got = cast(onnx.Uint64, onnx.FromSlice([]complex64{complex(1, 2)}))
	if got.Data.([]uint64)[0] != 0x400000003F800000 {
		t.Errorf("complex64 -> uint64: %#x", got.Data.([]uint64)[0])
	}
	got = cast(onnx.Complex64, onnx.FromSlice([]float64{math.Float64frombits(0x400000003F800000)}))
	if got.Data.([]complex64)[0] != complex(1, 2) {
		t.Errorf("double -> complex64: %v", got)
	}
	got = cast(onnx.Uint4, &onnx.Tensor{Type: onnx.Int4, Shape: []int{3}, Data: []int8{-1, -8, 7}})
	if got.Type != onnx.Uint4 || !slices.Equal(got.Data.([]uint8), []uint8{15, 8, 7}) {
		t.Errorf("int4 -> uint4: %v", got)
	}
	got = cast(onnx.Int4, &onnx.Tensor{Type: onnx.Uint4, Shape: []int{3}, Data: []uint8{8, 15, 1}})
	if got.Type != onnx.Int4 || !slices.Equal(got.Data.([]int8), []int8{-8, -1, 1}) {
		t.Errorf("uint4 -> int4: %v", got)
	}
	got = cast(onnx.Int2, &onnx.Tensor{Type: onnx.Uint2, Shape: []int{4}, Data: []uint8{0, 1, 2, 3}})
	if !slices.Equal(got.Data.([]int8), []int8{0, 1, -2, -1}) {
		t.Errorf("uint2 -> int2: %v", got)
	}
	got = cast(onnx.Float4E2M1, &onnx.Tensor{Type: onnx.Uint4, Shape: []int{1}, Data: []uint8{2}})
	if got.Data.([]onnx.F4E2M1)[0] != 2 {
		t.Errorf("uint4 -> float4e2m1: %v", got)
	}
	got = cast(onnx.Uint8, onnx.FromSlice([]bool{true, false}, 2))
	if !slices.Equal(got.Data.([]uint8), []uint8{1, 0}) {
		t.Errorf("bool -> uint8: %v", got)
	}
	got = cast(onnx.Bool, onnx.FromSlice([]uint8{0, 1, 2}, 3))
	if !slices.Equal(got.Bools(), []bool{false, true, true}) {
		t.Errorf("uint8 -> bool: %v", got)
	}
	got = cast(onnx.Float8E4M3FN, onnx.FromSlice([]int8{0x38}))
	if got.Data.([]onnx.F8E4M3FN)[0] != 0x38 {
		t.Errorf("int8 -> float8e4m3fn: %v", got)
	}
	c := []complex128{complex(1, -1)}
	got = cast(onnx.Complex128, onnx.FromSlice(c))
	if got.Data.([]complex128)[0] != c[0] {
		t.Errorf("complex128 -> complex128: %v", got)
	}
	// Widths must match; 'to' must be a type.
	if _, err := runNode(t, 26, "BitCast", []*onnx.Attribute{intAttr("to", int64(onnx.Float16))}, 1, onnx.FromSlice([]float32{1})); err == nil || !strings.Contains(err.Error(), "width") {
		t.Errorf("float -> float16: %v", err)
	}
	if _, err := runNode(t, 26, "BitCast", []*onnx.Attribute{intAttr("to", 99)}, 1, onnx.FromSlice([]float32{1})); err == nil {
		t.Error("BitCast to 99 was accepted")
	}
}
