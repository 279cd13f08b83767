package native

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// elemRun is runNode1 that fails the test on an error.
func elemRun(t *testing.T, opset int64, opType string, attrs []*onnx.Attribute, inputs ...*onnx.Tensor) *onnx.Tensor {
	t.Helper()
	got, err := runNode1(t, opset, opType, attrs, inputs...)
	if err != nil {
		t.Fatalf("%s-%d: %v", opType, opset, err)
	}
	return got
}

func TestElemCastFloat8Saturate(t *testing.T) {
	x := onnx.FromSlice([]float32{1000, -1000, float32(math.Inf(1)), 0.3}, 4)
	to := intAttr("to", int64(onnx.Float8E4M3FN))
	got := elemRun(t, 19, "Cast", []*onnx.Attribute{to}, x).Data.([]onnx.F8E4M3FN)
	want := []float32{448, -448, 448, 0.3125} // 0.3 lies between 0.28125 and 0.3125, nearer the latter
	for i, w := range want {
		if got[i].Float32() != w {
			t.Errorf("saturating E4M3FN[%d] = %v, want %v", i, got[i].Float32(), w)
		}
	}
	got = elemRun(t, 19, "Cast", []*onnx.Attribute{to, intAttr("saturate", 0)}, x).Data.([]onnx.F8E4M3FN)
	if !got[0].IsNaN() || !got[1].IsNaN() || !got[2].IsNaN() {
		t.Errorf("non-saturating E4M3FN of out-of-range values: %v", got)
	}
	e5 := elemRun(t, 19, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Float8E5M2)), intAttr("saturate", 0)}, x).Data.([]onnx.F8E5M2)
	if !math.IsInf(float64(e5[2].Float32()), 1) || e5[0].Float32() != 1024 {
		t.Errorf("E5M2 without saturation: %v %v", e5[0].Float32(), e5[2].Float32())
	}
	// CastLike takes the type, and saturate, from its second input.
	like := onnx.FromSlice([]onnx.F8E4M3FN{0}, 1)
	got = elemRun(t, 19, "CastLike", nil, x, like).Data.([]onnx.F8E4M3FN)
	if got[0].Float32() != 448 {
		t.Errorf("CastLike to E4M3FN: %v", got[0].Float32())
	}
}

func TestElemCastRounding(t *testing.T) {
	// float32 -> bfloat16 rounds to nearest even (not truncation): a tie
	// with an odd lower neighbour goes up.
	tie := math.Float32frombits(0x3F518000)
	up := math.Float32frombits(0x3F50C000 + 1) // above a tie: up
	got := elemRun(t, 13, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.BFloat16))}, onnx.FromSlice([]float32{tie, up}, 2)).Data.([]onnx.BF16)
	if got[0] != 0x3F52 || got[1] != 0x3F51 {
		t.Errorf("bfloat16 rounding: %#x %#x", got[0], got[1])
	}
	// float64 -> float16 rounds once: just above a tie rounds up, where
	// rounding through float32 first would give the tie and then even.
	d := 1 + math.Ldexp(1, -11) + math.Ldexp(1, -40)
	h := elemRun(t, 13, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Float16))}, onnx.FromSlice([]float64{d}, 1)).Data.([]onnx.F16)
	if h[0].Float32() != 1+1.0/1024 {
		t.Errorf("float64 -> float16 of %v = %v, want %v", d, h[0].Float32(), 1+1.0/1024)
	}
	// int4/uint4 round half to even and keep the low 4 bits (-10 -> 6, 8 -> -8).
	x := onnx.FromSlice([]float32{-9.5, 2.5, 3.5, 7.6, -0.4}, 5)
	i4 := elemRun(t, 21, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Int4))}, x)
	if i4.Type != onnx.Int4 || !slices.Equal(i4.Data.([]int8), []int8{6, 2, 4, -8, 0}) {
		t.Errorf("Cast to int4: %v", i4)
	}
	u4 := elemRun(t, 21, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Uint4))}, x)
	if !slices.Equal(u4.Data.([]uint8), []uint8{6, 2, 4, 8, 0}) {
		t.Errorf("Cast to uint4: %v", u4)
	}
	back := elemRun(t, 21, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Float))}, i4)
	if !slices.Equal(back.Float32s(), []float32{6, 2, 4, -8, 0}) {
		t.Errorf("Cast from int4: %v", back)
	}
	// Floats truncate toward zero into integers; bool is nonzero.
	ints := elemRun(t, 13, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Int32))}, onnx.FromSlice([]float64{-2.7, 2.7}, 2))
	if !slices.Equal(ints.Int32s(), []int32{-2, 2}) {
		t.Errorf("Cast to int32: %v", ints)
	}
	bools := elemRun(t, 13, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Bool))}, onnx.FromSlice([]int64{0, -3}, 2))
	if !slices.Equal(bools.Bools(), []bool{false, true}) {
		t.Errorf("Cast to bool: %v", bools)
	}
	// Cast-1 names the type as a string.
	old := elemRun(t, 1, "Cast", []*onnx.Attribute{stringAttr("to", "DOUBLE")}, onnx.FromSlice([]int32{3}, 1))
	if !slices.Equal(old.Float64s(), []float64{3}) {
		t.Errorf("Cast-1 to DOUBLE: %v", old)
	}
}

func TestElemCastStrings(t *testing.T) {
	s := onnx.FromSlice([]string{"0.5", "NaN", "-INF", "+INF", " 12 "}, 5)
	f := elemRun(t, 13, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Float))}, s).Float32s()
	if f[0] != 0.5 || !math.IsNaN(float64(f[1])) || !math.IsInf(float64(f[2]), -1) || !math.IsInf(float64(f[3]), 1) || f[4] != 12 {
		t.Errorf("strings to float: %v", f)
	}
	big := elemRun(t, 13, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Int64))}, onnx.FromSlice([]string{"9007199254740993"}, 1))
	if big.Int64s()[0] != 9007199254740993 {
		t.Errorf("string to int64 lost precision: %v", big)
	}
	if _, err := runNode1(t, 13, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.Float))}, onnx.FromSlice([]string{"abc"}, 1)); err == nil {
		t.Error("Cast of \"abc\" to float must fail")
	}
	nums := onnx.FromSlice([]float32{0.1, 1, -2.5, 1e-5, 1e20, float32(math.NaN()), float32(math.Inf(-1))}, 7)
	got := elemRun(t, 13, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.String))}, nums).Strings()
	want := []string{"0.1", "1.0", "-2.5", "1e-05", "1e+20", "nan", "-inf"}
	if !slices.Equal(got, want) {
		t.Errorf("float to string: %q, want %q", got, want)
	}
	h := elemRun(t, 13, "Cast", []*onnx.Attribute{intAttr("to", int64(onnx.String))}, onnx.FromSlice([]onnx.F16{onnx.F16From(0.1)}, 1)).Strings()
	if h[0] != "0.1" {
		t.Errorf("float16 0.1 to string: %q", h[0])
	}
}

func TestElemModSigns(t *testing.T) {
	a := onnx.FromSlice([]int32{-4, 7, 5, -7}, 4)
	b := onnx.FromSlice([]int32{3, -3, 8, -3}, 4)
	got := elemRun(t, 13, "Mod", nil, a, b).Int32s()
	if !slices.Equal(got, []int32{2, -2, 5, -1}) {
		t.Errorf("Mod fmod=0: %v", got)
	}
	got = elemRun(t, 13, "Mod", []*onnx.Attribute{intAttr("fmod", 1)}, a, b).Int32s()
	if !slices.Equal(got, []int32{-1, 1, 5, -1}) {
		t.Errorf("Mod fmod=1: %v", got)
	}
	fa := onnx.FromSlice([]float32{-4.5, 7}, 2)
	fb := onnx.FromSlice([]float32{2}, 1)
	if _, err := runNode1(t, 13, "Mod", nil, fa, fb); err == nil {
		t.Error("float Mod with fmod=0 must fail")
	}
	if f := elemRun(t, 13, "Mod", []*onnx.Attribute{intAttr("fmod", 1)}, fa, fb).Float32s(); !slices.Equal(f, []float32{-0.5, 1}) {
		t.Errorf("float fmod: %v", f)
	}
	if _, err := runNode1(t, 13, "Mod", nil, a, onnx.FromSlice([]int32{0}, 1)); err == nil {
		t.Error("integer Mod by zero must fail")
	}
}

func TestElemVariadic(t *testing.T) {
	a := onnx.FromSlice([]float32{1, 5, float32(math.NaN())}, 3)
	b := onnx.FromSlice([]float32{3}, 1)
	c := onnx.FromSlice([]float32{2, 2, 2, 6, 6, 6}, 2, 3)
	got := elemRun(t, 13, "Max", nil, a, b, c)
	f := got.Float32s()
	if !slices.Equal(got.Shape, []int{2, 3}) || f[0] != 3 || f[1] != 5 || !math.IsNaN(float64(f[2])) || f[3] != 6 || f[4] != 6 {
		t.Errorf("Max: %v", got)
	}
	if f := elemRun(t, 13, "Min", nil, a, b, c).Float32s(); f[0] != 1 || f[1] != 2 || f[3] != 1 {
		t.Errorf("Min: %v", f)
	}
	if f := elemRun(t, 13, "Mean", nil, b, c).Float32s(); !slices.Equal(f, []float32{2.5, 2.5, 2.5, 4.5, 4.5, 4.5}) {
		t.Errorf("Mean: %v", f)
	}
	if f := elemRun(t, 13, "Sum", nil, c).Float32s(); !slices.Equal(f, c.Float32s()) {
		t.Errorf("Sum of one: %v", f)
	}
	if got := elemRun(t, 13, "Max", nil, onnx.FromSlice([]uint64{1 << 63, 3}, 2), onnx.FromSlice([]uint64{5}, 1)).Data.([]uint64); !slices.Equal(got, []uint64{1 << 63, 5}) {
		t.Errorf("Max of uint64: %v", got)
	}
	// Before version 8 the inputs must have one shape.
	if _, err := runNode1(t, 6, "Max", nil, a, b); err == nil {
		t.Error("Max-6 must refuse shapes [3] and [1]")
	}
	if f := elemRun(t, 1, "Sum", []*onnx.Attribute{intsAttr("consumed_inputs", 0, 0)}, b, b).Float32s(); f[0] != 6 {
		t.Errorf("Sum-1: %v", f)
	}
	h := onnx.FromSlice([]onnx.F16{onnx.F16From(1), onnx.F16From(2)}, 2)
	if got := elemRun(t, 13, "Mean", nil, h, h, h).Data.([]onnx.F16); got[1].Float32() != 2 {
		t.Errorf("float16 Mean: %v", got)
	}
}

func TestElemBitwise(t *testing.T) {
	a := onnx.FromSlice([]int8{-1, 12, 0x55}, 3)
	b := onnx.FromSlice([]int8{0x0f, 10, -0x56}, 3)
	if got := elemRun(t, 18, "BitwiseAnd", nil, a, b).Data.([]int8); !slices.Equal(got, []int8{0x0f, 8, 0}) {
		t.Errorf("BitwiseAnd: %v", got)
	}
	if got := elemRun(t, 18, "BitwiseOr", nil, a, b).Data.([]int8); !slices.Equal(got, []int8{-1, 14, -1}) {
		t.Errorf("BitwiseOr: %v", got)
	}
	if got := elemRun(t, 18, "BitwiseXor", nil, a, b).Data.([]int8); !slices.Equal(got, []int8{-16, 6, -1}) {
		t.Errorf("BitwiseXor: %v", got)
	}
	if got := elemRun(t, 18, "BitwiseNot", nil, onnx.FromSlice([]uint16{0, 0xff00}, 2)).Data.([]uint16); !slices.Equal(got, []uint16{0xffff, 0x00ff}) {
		t.Errorf("BitwiseNot: %v", got)
	}
	if _, err := runNode1(t, 18, "BitwiseAnd", nil, onnx.FromSlice([]float32{1}, 1), onnx.FromSlice([]float32{1}, 1)); !errors.Is(err, network.ErrUnsupported) {
		t.Errorf("BitwiseAnd of floats: %v", err)
	}
	x := onnx.FromSlice([]uint8{200, 1, 3}, 3)
	y := onnx.FromSlice([]uint8{1, 9, 1}, 3)
	if got := elemRun(t, 11, "BitShift", []*onnx.Attribute{stringAttr("direction", "LEFT")}, x, y).Data.([]uint8); !slices.Equal(got, []uint8{144, 0, 6}) {
		t.Errorf("BitShift LEFT: %v", got)
	}
	if got := elemRun(t, 11, "BitShift", []*onnx.Attribute{stringAttr("direction", "RIGHT")}, x, y).Data.([]uint8); !slices.Equal(got, []uint8{100, 0, 1}) {
		t.Errorf("BitShift RIGHT: %v", got)
	}
}

func TestElemPowTypes(t *testing.T) {
	got := elemRun(t, 15, "Pow", nil, onnx.FromSlice([]int64{3, -2, 1 << 32}, 3), onnx.FromSlice([]int32{2, 3, 2}, 3))
	if !slices.Equal(got.Int64s(), []int64{9, -8, 0}) { // 2^64 wraps to 0 as in numpy
		t.Errorf("int64 ** int32: %v", got)
	}
	got = elemRun(t, 15, "Pow", nil, onnx.FromSlice([]float32{4, 2}, 2), onnx.FromSlice([]uint64{2}, 1))
	if !slices.Equal(got.Float32s(), []float32{16, 4}) {
		t.Errorf("float ** uint64: %v", got)
	}
	got = elemRun(t, 15, "Pow", nil, onnx.FromSlice([]int32{4}, 1), onnx.FromSlice([]float32{0.5}, 1))
	if got.Int32s()[0] != 2 {
		t.Errorf("int32 ** float: %v", got)
	}
	// Pow-1 with broadcast=1 and axis=0.
	x := onnx.FromSlice([]float32{1, 2, 3, 4}, 2, 2)
	got = elemRun(t, 1, "Pow", []*onnx.Attribute{intAttr("broadcast", 1), intAttr("axis", 0)}, x, onnx.FromSlice([]float32{2, 3}, 2))
	if !slices.Equal(got.Float32s(), []float32{1, 4, 27, 64}) {
		t.Errorf("Pow-1 legacy broadcast: %v", got)
	}
}

func TestElemClipVersions(t *testing.T) {
	x := onnx.FromSlice([]float32{-5, 0.5, 5}, 3)
	if got := elemRun(t, 1, "Clip", nil, x).Float32s(); !slices.Equal(got, []float32{-5, 0.5, 5}) {
		t.Errorf("Clip-1 without bounds: %v", got)
	}
	if got := elemRun(t, 1, "Clip", []*onnx.Attribute{floatAttr("min", 0)}, x).Float32s(); !slices.Equal(got, []float32{0, 0.5, 5}) {
		t.Errorf("Clip-1 min: %v", got)
	}
	if got := elemRun(t, 6, "Clip", []*onnx.Attribute{floatAttr("max", 1)}, x).Float32s(); !slices.Equal(got, []float32{-5, 0.5, 1}) {
		t.Errorf("Clip-6 max: %v", got)
	}
	if got := elemRun(t, 11, "Clip", nil, x, onnx.Scalar[float32](-1), onnx.Scalar[float32](1)).Float32s(); !slices.Equal(got, []float32{-1, 0.5, 1}) {
		t.Errorf("Clip-11: %v", got)
	}
	k := &clipKernel{}
	got, err := k.compute(onnx.FromSlice([]int64{-5, 3, 9}, 3), nil, onnx.Scalar[int64](4))
	if err != nil || !slices.Equal(got.Int64s(), []int64{-5, 3, 4}) {
		t.Errorf("Clip of int64 with max only: %v %v", got, err)
	}
	if _, err := k.compute(x, onnx.FromSlice([]float32{1, 2}, 2), nil); err == nil {
		t.Error("Clip with a non-scalar bound must fail")
	}
}

func TestElemComparisonsAndLogic(t *testing.T) {
	s := onnx.FromSlice([]string{"a", "b"}, 2)
	if got := elemRun(t, 19, "Equal", nil, s, onnx.FromSlice([]string{"b"}, 1)).Bools(); !slices.Equal(got, []bool{false, true}) {
		t.Errorf("Equal of strings: %v", got)
	}
	a := onnx.FromSlice([]float32{1, 2, 3, 4}, 2, 2)
	b := onnx.FromSlice([]float32{2, 3}, 2)
	if got := elemRun(t, 16, "GreaterOrEqual", nil, a, b).Bools(); !slices.Equal(got, []bool{false, false, true, true}) {
		t.Errorf("GreaterOrEqual: %v", got)
	}
	if got := elemRun(t, 1, "Less", []*onnx.Attribute{intAttr("broadcast", 1), intAttr("axis", 0)}, a, b).Bools(); !slices.Equal(got, []bool{true, false, false, false}) {
		t.Errorf("Less-1 axis 0: %v", got)
	}
	p := onnx.FromSlice([]bool{true, false}, 2)
	q := onnx.FromSlice([]bool{true, true, false, false}, 2, 2)
	if got := elemRun(t, 7, "Xor", nil, p, q).Bools(); !slices.Equal(got, []bool{false, true, true, false}) {
		t.Errorf("Xor: %v", got)
	}
	if got := elemRun(t, 9, "Where", nil, p, onnx.FromSlice([]string{"x"}, 1), onnx.FromSlice([]string{"y0", "y1", "y2", "y3"}, 2, 2)).Strings(); !slices.Equal(got, []string{"x", "y1", "x", "y3"}) {
		t.Errorf("Where of strings: %v", got)
	}
	if got := elemRun(t, 20, "IsInf", []*onnx.Attribute{intAttr("detect_negative", 0)}, onnx.FromSlice([]float32{float32(math.Inf(-1)), float32(math.Inf(1)), 0}, 3)).Bools(); !slices.Equal(got, []bool{false, true, false}) {
		t.Errorf("IsInf positive only: %v", got)
	}
	if got := elemRun(t, 20, "IsNaN", nil, onnx.FromSlice([]onnx.BF16{onnx.BF16From(float32(math.NaN())), 0}, 2)).Bools(); !slices.Equal(got, []bool{true, false}) {
		t.Errorf("IsNaN of bfloat16: %v", got)
	}
}

func TestElemUnaryAndActivations(t *testing.T) {
	x := onnx.FromSlice([]float32{-2.5, -0.5, 0.5, 1.5, 2.5}, 5)
	if got := elemRun(t, 22, "Round", nil, x).Float32s(); !slices.Equal(got, []float32{-2, 0, 0, 2, 2}) {
		t.Errorf("Round: %v", got)
	}
	if got := elemRun(t, 13, "Sign", nil, onnx.FromSlice([]int64{-7, 0, 9}, 3)).Int64s(); !slices.Equal(got, []int64{-1, 0, 1}) {
		t.Errorf("Sign of int64: %v", got)
	}
	if got := elemRun(t, 13, "Abs", nil, onnx.FromSlice([]int64{math.MinInt64 + 1}, 1)).Int64s(); got[0] != math.MaxInt64 {
		t.Errorf("Abs of int64 must be exact: %v", got)
	}
	v := []float64{-2.5, -0.5, 0.5, 1.5, 2.5}
	def := func(f func(float64) float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = f(x)
		}
		return out
	}
	phi := func(x float64) float64 { return 0.5 * (1 + math.Erf(x/math.Sqrt2)) }
	assertClose(t, elemRun(t, 20, "Gelu", nil, x).Float32s(), def(func(x float64) float64 { return x * phi(x) }))
	assertClose(t, elemRun(t, 20, "Gelu", []*onnx.Attribute{stringAttr("approximate", "tanh")}, x).Float32s(),
		def(func(x float64) float64 {
			return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
		}))
	assertClose(t, elemRun(t, 18, "Mish", nil, x).Float32s(), def(func(x float64) float64 { return x * math.Tanh(math.Log(1+math.Exp(x))) }))
	assertClose(t, elemRun(t, 22, "Mish", nil, x).Float32s(), def(func(x float64) float64 { return x * math.Tanh(math.Log(1+math.Exp(x))) }))
	assertClose(t, elemRun(t, 24, "Swish", []*onnx.Attribute{floatAttr("alpha", 2)}, x).Float32s(), def(func(x float64) float64 { return x / (1 + math.Exp(-2*x)) }))
	assertClose(t, elemRun(t, 22, "HardSwish", nil, x).Float32s(), def(func(x float64) float64 { return x * math.Max(0, math.Min(1, x/6+0.5)) }))
	assertClose(t, elemRun(t, 12, "Celu", []*onnx.Attribute{floatAttr("alpha", 2)}, x).Float32s(), def(func(x float64) float64 {
		return math.Max(0, x) + math.Min(0, 2*(math.Exp(x/2)-1))
	}))
	assertClose(t, elemRun(t, 22, "Selu", nil, x).Float32s(), def(func(x float64) float64 {
		if x > 0 {
			return 1.050701 * x
		}
		return 1.050701 * 1.6732632 * (math.Exp(x) - 1)
	}))
	assertClose(t, elemRun(t, 1, "Selu", nil, x).Float32s(), def(func(x float64) float64 {
		if x > 0 {
			return 1.0507 * x
		}
		return 1.0507 * 1.6732 * (math.Exp(x) - 1)
	}))
	assertClose(t, elemRun(t, 22, "Softplus", nil, x).Float32s(), def(func(x float64) float64 { return math.Log(1 + math.Exp(x)) }))
	assertClose(t, elemRun(t, 9, "Shrink", []*onnx.Attribute{floatAttr("lambd", 1), floatAttr("bias", 0.5)}, x).Float32s(), []float64{-2, 0, 0, 1, 2})
	if got := elemRun(t, 9, "Shrink", []*onnx.Attribute{floatAttr("lambd", 1), floatAttr("bias", 1)}, onnx.FromSlice([]int32{-3, 1, 4}, 3)).Int32s(); !slices.Equal(got, []int32{-2, 0, 3}) {
		t.Errorf("Shrink of int32: %v", got)
	}
	if _, err := runNode1(t, 13, "Exp", nil, onnx.FromSlice([]int32{1}, 1)); !errors.Is(err, network.ErrUnsupported) {
		t.Errorf("Exp of int32: %v", err)
	}
}

func TestElemLogSoftmaxHardmaxSemantics(t *testing.T) {
	x := onnx.FromSlice([]float32{0, 1, 2, 3}, 2, 2)
	// Version 1 at axis 0 normalises all four values as one row.
	s := math.Log(math.Exp(0) + math.Exp(1) + math.Exp(2) + math.Exp(3))
	assertClose(t, elemRun(t, 1, "LogSoftmax", []*onnx.Attribute{intAttr("axis", 0)}, x).Float32s(), []float64{-s, 1 - s, 2 - s, 3 - s})
	// Version 13 at axis 0 normalises each column.
	l := math.Log(1 + math.Exp(2))
	assertClose(t, elemRun(t, 13, "LogSoftmax", []*onnx.Attribute{intAttr("axis", 0)}, x).Float32s(), []float64{-l, -l, 2 - l, 2 - l})
	if got := elemRun(t, 11, "Hardmax", []*onnx.Attribute{intAttr("axis", 0)}, x).Float32s(); !slices.Equal(got, []float32{0, 0, 0, 1}) {
		t.Errorf("Hardmax-11 axis 0: %v", got)
	}
	if got := elemRun(t, 13, "Hardmax", []*onnx.Attribute{intAttr("axis", 0)}, x).Float32s(); !slices.Equal(got, []float32{0, 0, 1, 1}) {
		t.Errorf("Hardmax-13 axis 0: %v", got)
	}
	// Ties take the first maximum.
	if got := elemRun(t, 13, "Hardmax", nil, onnx.FromSlice([]float32{2, 2, 1}, 3)).Float32s(); !slices.Equal(got, []float32{1, 0, 0}) {
		t.Errorf("Hardmax tie: %v", got)
	}
	if _, err := runNode1(t, 13, "LogSoftmax", []*onnx.Attribute{intAttr("axis", 2)}, x); err == nil {
		t.Error("LogSoftmax axis 2 of a matrix must fail")
	}
}

func TestElemDropout(t *testing.T) {
	x := onnx.FromSlice([]float32{1, 2, 3, 4}, 4)
	// Version 7: the mask has the input's type; inference is the identity.
	k := &dropoutKernel{}
	out, mask, err := k.compute(x, 0.5, false, true)
	if err != nil || !slices.Equal(out.Float32s(), x.Float32s()) || !slices.Equal(mask.Float32s(), []float32{1, 1, 1, 1}) {
		t.Fatalf("Dropout-7: %v %v %v", out, mask, err)
	}
	if got := elemRun(t, 1, "Dropout", []*onnx.Attribute{intAttr("is_test", 1)}, x).Float32s(); !slices.Equal(got, x.Float32s()) {
		t.Errorf("Dropout-1 is_test: %v", got)
	}
	// Version 12 training: kept values are scaled by 1/(1-ratio), and the
	// same seed gives the same mask.
	big := onnx.NewTensor(onnx.Float, 1000)
	for i := range big.Float32s() {
		big.Float32s()[i] = 1
	}
	seed := intAttr("seed", 7)
	a := elemRun(t, 13, "Dropout", []*onnx.Attribute{seed}, big, onnx.Scalar[float32](0.25), onnx.Scalar(true))
	b := elemRun(t, 13, "Dropout", []*onnx.Attribute{seed}, big, onnx.Scalar[float32](0.25), onnx.Scalar(true))
	zeros := 0
	for i, v := range a.Float32s() {
		switch v {
		case 0:
			zeros++
		case 1 / 0.75:
		default:
			t.Fatalf("training Dropout value %v", v)
		}
		if v != b.Float32s()[i] {
			t.Fatal("the same seed must give the same mask")
		}
	}
	if zeros < 180 || zeros > 320 {
		t.Errorf("%d of 1000 dropped with ratio 0.25", zeros)
	}
	// Not training: identity whatever the ratio.
	if got := elemRun(t, 13, "Dropout", nil, x, onnx.Scalar[float32](0.9)).Float32s(); !slices.Equal(got, x.Float32s()) {
		t.Errorf("Dropout-13 inference: %v", got)
	}
}

func TestElemPReluBroadcast(t *testing.T) {
	x := onnx.FromSlice([]float32{-1, 1, -2, 2, -3, 3}, 1, 3, 2)
	// Version 6 style: a slope per channel given as [C].
	got := elemRun(t, 6, "PRelu", nil, x, onnx.FromSlice([]float32{1, 2, 3}, 3))
	if !slices.Equal(got.Float32s(), []float32{-1, 1, -4, 2, -9, 3}) {
		t.Errorf("PRelu per channel: %v", got)
	}
	got = elemRun(t, 16, "PRelu", nil, x, onnx.FromSlice([]float32{0.5, 0}, 2))
	if !slices.Equal(got.Float32s(), []float32{-0.5, 1, -1, 2, -1.5, 3}) {
		t.Errorf("PRelu numpy broadcast: %v", got)
	}
}
