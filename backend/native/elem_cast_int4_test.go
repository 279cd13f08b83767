package native

import (
	"math"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// The expected values below are those of ONNX's Cast test cases
// (onnx/backend/test/case/node/cast.py, test_cast_FLOAT_to_{INT4,UINT4,
// INT2,UINT2,FLOAT4E2M1}) as the newest test data holds them.

func TestCastSubByteWraps(t *testing.T) {
	var in4 []float32
	for v := -9; v < 16; v++ {
		in4 = append(in4, float32(v))
	}
	x4 := onnx.FromSlice(in4, 5, 5)
	wantI4 := []int8{7, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1}
	wantU4 := []uint8{7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	for _, opset := range []int64{21, 25} {
		got := elemRun(t, opset, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Int4))}, x4)
		if got.Type != onnx.Int4 || !slices.Equal(got.Data.([]int8), wantI4) {
			t.Errorf("Cast-%d float -> int4 = %v, want %v", opset, got.Data, wantI4)
		}
		got = elemRun(t, opset, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Uint4))}, x4)
		if got.Type != onnx.Uint4 || !slices.Equal(got.Data.([]uint8), wantU4) {
			t.Errorf("Cast-%d float -> uint4 = %v, want %v", opset, got.Data, wantU4)
		}
	}
	x2 := onnx.FromSlice([]float32{-3, -2, -1, 0, 1, 2, 3}, 7, 1)
	got := elemRun(t, 25, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Int2))}, x2)
	if want := []int8{1, -2, -1, 0, 1, -2, -1}; got.Type != onnx.Int2 || !slices.Equal(got.Data.([]int8), want) {
		t.Errorf("float -> int2 = %v, want %v", got.Data, want)
	}
	got = elemRun(t, 25, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Uint2))}, x2)
	if want := []uint8{1, 2, 3, 0, 1, 2, 3}; got.Type != onnx.Uint2 || !slices.Equal(got.Data.([]uint8), want) {
		t.Errorf("float -> uint2 = %v, want %v", got.Data, want)
	}
	// CastLike takes the same path.
	like := &onnx.Tensor{Type: onnx.Int4, Shape: []int{1}, Data: []int8{0}}
	got = elemRun(t, 21, "CastLike", nil, x4, like)
	if got.Type != onnx.Int4 || !slices.Equal(got.Data.([]int8), wantI4) {
		t.Errorf("CastLike float -> int4 = %v, want %v", got.Data, wantI4)
	}
}

// Integers narrow by keeping their low bits (ONNX's rule for fixed-point
// targets), exactly, even where float64 cannot hold the source; floats
// round half to even before that.
func TestCastSubByteLowBits(t *testing.T) {
	i64 := onnx.FromSlice([]int64{1<<40 + 5, -(1 << 53) - 3, 1<<62 + 9}, 3)
	got := elemRun(t, 21, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Int4))}, i64)
	if want := []int8{5, -3, -7}; !slices.Equal(got.Data.([]int8), want) {
		t.Errorf("int64 -> int4 = %v, want %v", got.Data, want)
	}
	u64 := onnx.FromSlice([]uint64{math.MaxUint64, 1<<63 | 6}, 2)
	got = elemRun(t, 21, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Uint4))}, u64)
	if want := []uint8{15, 6}; !slices.Equal(got.Data.([]uint8), want) {
		t.Errorf("uint64 -> uint4 = %v, want %v", got.Data, want)
	}
	f := onnx.FromSlice([]float64{7.5, 8.5, -8.5, 2.5, -0.4, math.NaN(), math.Inf(1)}, 7)
	got = elemRun(t, 21, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Int4))}, f)
	if want := []int8{-8, -8, -8, 2, 0, 0, 0}; !slices.Equal(got.Data.([]int8), want) {
		t.Errorf("double -> int4 = %v, want %v", got.Data, want)
	}
}

func TestCastFloat4E2M1Special(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	x := onnx.FromSlice([]float32{0.48, 0.25, 1.05, -3.5, -8, 9, 1000000, 1e-7, nan, inf, inf, -inf, -4, 0.01, float32(math.Copysign(0, -1))}, 3, 5)
	want := []onnx.F4E2M1{0x1, 0x0, 0x2, 0xe, 0xf, 0x7, 0x7, 0x0, 0x8, 0x7, 0x7, 0xf, 0xe, 0x0, 0x8}
	for _, sat := range []int64{1, 0} {
		got := elemRun(t, 23, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Float4E2M1)), intAttr("saturate", sat)}, x)
		if !slices.Equal(got.Data.([]onnx.F4E2M1), want) {
			t.Errorf("saturate=%d: float -> float4e2m1 = %x, want %x", sat, got.Data, want)
		}
	}
	// A NaN with its sign bit set gives the other zero.
	neg := onnx.FromSlice([]float32{float32(math.Copysign(math.NaN(), -1))}, 1)
	got := elemRun(t, 23, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Float4E2M1))}, neg)
	if d := got.Data.([]onnx.F4E2M1); d[0] != 0x0 {
		t.Errorf("-NaN -> float4e2m1 = %#x, want 0x0", d[0])
	}
}
