package native

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// Mod-28 with fmod=0 on floats is a - floor(a/b)*b with the sign of b,
// and the special cases its definition lists
// (https://onnx.ai/onnx/operators/onnx__Mod.html).
func TestModFloorOnFloats(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	a := []float64{5, -5, 5, -5, 5.5, -5.5, 0, math.Copysign(0, -1), 6, -6, inf, 2, 2, -2, 2, -2, nan, 2}
	b := []float64{3, 3, -3, -3, 2, 2, -3, 3, -3, 3, 2, 0, inf, inf, -inf, -inf, 2, nan}
	want := []float64{2, 1, -1, -2, 1.5, 0.5, math.Copysign(0, -1), 0, math.Copysign(0, -1), 0, nan, nan, 2, inf, -inf, -2, nan, nan}
	same := func(x, y float64) bool {
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.IsNaN(x) && math.IsNaN(y)
		}
		return x == y && math.Signbit(x) == math.Signbit(y)
	}
	n := len(a)
	got := elemRun(t, 28, "Mod", nil, onnx.FromSlice(a, n), onnx.FromSlice(b, n)).Float64s()
	for i := range want {
		if !same(got[i], want[i]) {
			t.Errorf("double %v mod %v = %v, want %v", a[i], b[i], got[i], want[i])
		}
	}
	a32, b32 := make([]float32, n), make([]float32, n)
	for i := range a {
		a32[i], b32[i] = float32(a[i]), float32(b[i])
	}
	got32 := elemRun(t, 28, "Mod", []*onnx.Attribute{intAttr("fmod", 0)}, onnx.FromSlice(a32, n), onnx.FromSlice(b32, n)).Float32s()
	for i := range want {
		if !same(float64(got32[i]), want[i]) {
			t.Errorf("float %v mod %v = %v, want %v", a[i], b[i], got32[i], want[i])
		}
	}
	// float16 goes through float32.
	h := func(v ...float32) *onnx.Tensor {
		d := make([]onnx.F16, len(v))
		for i, x := range v {
			d[i] = onnx.F16From(x)
		}
		return &onnx.Tensor{Type: onnx.Float16, Shape: []int{len(v)}, Data: d}
	}
	gh := elemRun(t, 28, "Mod", nil, h(-5.5, 7), h(2, -4)).Data.([]onnx.F16)
	if gh[0].Float32() != 0.5 || gh[1].Float32() != -1 {
		t.Errorf("float16 mod: %v %v, want 0.5 -1", gh[0].Float32(), gh[1].Float32())
	}
	// fmod=1 keeps the dividend's sign; integers are unchanged.
	f := elemRun(t, 28, "Mod", []*onnx.Attribute{intAttr("fmod", 1)}, onnx.FromSlice([]float64{-5}, 1), onnx.FromSlice([]float64{3}, 1)).Float64s()
	if f[0] != -2 {
		t.Errorf("fmod=1: -5 mod 3 = %v, want -2", f[0])
	}
	i := elemRun(t, 28, "Mod", nil, onnx.FromSlice([]int32{-7, 7}, 2), onnx.FromSlice([]int32{3, -3}, 2)).Int32s()
	if !slices.Equal(i, []int32{2, -2}) {
		t.Errorf("int32 mod: %v, want [2 -2]", i)
	}
	// Before version 28 fmod=0 is defined for integers only.
	if _, err := runNode1(t, 13, "Mod", nil, onnx.FromSlice([]float32{1}, 1), onnx.FromSlice([]float32{2}, 1)); err == nil {
		t.Error("Mod-13 fmod=0 on floats: expected an error")
	}
}

// BitShift-28 takes signed integers: right shifts are arithmetic, left
// shifts drop the bits past the width, and a negative count or one not
// below the width leaves only the sign fill
// (https://onnx.ai/onnx/operators/onnx__BitShift.html).
func TestBitShiftSigned(t *testing.T) {
	left := []*onnx.Attribute{stringAttr("direction", "LEFT")}
	right := []*onnx.Attribute{stringAttr("direction", "RIGHT")}
	x := onnx.FromSlice([]int8{1, -1, 64, 3, 5}, 5)
	y := onnx.FromSlice([]int8{3, 1, 1, 8, -1}, 5)
	if got := elemRun(t, 28, "BitShift", left, x, y).Data.([]int8); !slices.Equal(got, []int8{8, -2, -128, 0, 0}) {
		t.Errorf("int8 LEFT: %v", got)
	}
	x = onnx.FromSlice([]int8{-128, -5, 100, -5, 5, -7}, 6)
	y = onnx.FromSlice([]int8{1, 1, 2, 8, -1, -3}, 6)
	if got := elemRun(t, 28, "BitShift", right, x, y).Data.([]int8); !slices.Equal(got, []int8{-64, -3, 25, -1, 0, -1}) {
		t.Errorf("int8 RIGHT: %v", got)
	}
	x64 := onnx.FromSlice([]int64{1, -1, -1, math.MinInt64}, 4)
	y64 := onnx.FromSlice([]int64{63, 64, 70, 63}, 4)
	if got := elemRun(t, 28, "BitShift", right, x64, y64).Int64s(); !slices.Equal(got, []int64{0, -1, -1, -1}) {
		t.Errorf("int64 RIGHT: %v", got)
	}
	if got := elemRun(t, 28, "BitShift", left, x64, y64).Int64s(); !slices.Equal(got, []int64{math.MinInt64, 0, 0, 0}) {
		t.Errorf("int64 LEFT: %v", got)
	}
	for _, c := range []struct {
		x, y *onnx.Tensor
		want []int64
	}{
		{onnx.FromSlice([]int16{-300, 300}, 2), onnx.FromSlice([]int16{2, 16}, 2), []int64{-75, 0}},
		{onnx.FromSlice([]int32{-1 << 30, 7}, 2), onnx.FromSlice([]int32{31, 1}, 2), []int64{-1, 3}},
	} {
		got := elemRun(t, 28, "BitShift", right, c.x, c.y)
		if g, _ := intsOf(got); !slices.Equal(g, c.want) {
			t.Errorf("%v RIGHT: %v, want %v", got.Type, g, c.want)
		}
	}
	if got := elemRun(t, 28, "BitShift", right, onnx.FromSlice([]uint32{1 << 31, 7}, 2), onnx.FromSlice([]uint32{31, 32}, 2)).Data.([]uint32); !slices.Equal(got, []uint32{1, 0}) {
		t.Errorf("uint32 RIGHT: %v, want [1 0]", got)
	}
	// Version 11 is for unsigned integers only.
	if got := elemRun(t, 11, "BitShift", left, onnx.FromSlice([]uint8{3}, 1), onnx.FromSlice([]uint8{6}, 1)).Data.([]uint8); got[0] != 192 {
		t.Errorf("uint8 LEFT: %v", got)
	}
	_, err := runNode1(t, 11, "BitShift", left, onnx.FromSlice([]int8{1}, 1), onnx.FromSlice([]int8{1}, 1))
	if !errors.Is(err, network.ErrUnsupported) {
		t.Errorf("BitShift-11 on int8: %v, want unsupported", err)
	}
}
