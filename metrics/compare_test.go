package metrics

import (
	"math"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func f32(shape []int, v ...float32) *onnx.Tensor { return onnx.FromSlice(v, shape...) }

func mustEqual(t *testing.T, got, want onnx.Value) Diff {
	t.Helper()
	d := Compare(got, want, ONNXTolerance)
	if !d.Equal() {
		t.Fatalf("Compare(%v, %v) = %q, want equal", onnx.DescribeValue(got), onnx.DescribeValue(want), d.Mismatch)
	}
	return d
}

func mustDiffer(t *testing.T, got, want onnx.Value, contains ...string) Diff {
	t.Helper()
	d := Compare(got, want, ONNXTolerance)
	if d.Equal() {
		t.Fatalf("Compare(%v, %v) equal, want a mismatch", onnx.DescribeValue(got), onnx.DescribeValue(want))
	}
	for _, s := range contains {
		if !strings.Contains(d.Mismatch, s) {
			t.Errorf("mismatch %q does not contain %q", d.Mismatch, s)
		}
	}
	return d
}

func TestCompareNaN(t *testing.T) {
	nan := float32(math.NaN())
	mustEqual(t, f32([]int{2}, nan, 1), f32([]int{2}, nan, 1))
	mustDiffer(t, f32([]int{2}, nan, 1), f32([]int{2}, 0, 1), "1 of 2 elements differ", "got NaN want 0")
	mustDiffer(t, f32([]int{2}, 0, 1), f32([]int{2}, nan, 1), "got 0 want NaN")
	// NaN must not make the error maxima NaN.
	d := mustDiffer(t, f32([]int{2}, nan, 1.5), f32([]int{2}, 0, 1))
	if d.MaxAbs != 0.5 || d.MaxRel != 0.5 {
		t.Errorf("maxima %v %v, want 0.5 0.5", d.MaxAbs, d.MaxRel)
	}
}

func TestCompareInf(t *testing.T) {
	inf := math.Inf(1)
	mustEqual(t, onnx.FromSlice([]float64{inf, -inf}, 2), onnx.FromSlice([]float64{inf, -inf}, 2))
	mustDiffer(t, onnx.FromSlice([]float64{inf}, 1), onnx.FromSlice([]float64{-inf}, 1), "got +Inf want -Inf")
	mustDiffer(t, onnx.FromSlice([]float64{1e308}, 1), onnx.FromSlice([]float64{inf}, 1), "want +Inf")
	mustDiffer(t, onnx.FromSlice([]float64{inf}, 1), onnx.FromSlice([]float64{1e308}, 1), "got +Inf")
}

func TestCompareToleranceEdge(t *testing.T) {
	// allowed = 1e-7 + 1e-3*1000 = 1.0000001
	mustEqual(t, onnx.FromSlice([]float64{1001}, 1), onnx.FromSlice([]float64{1000}, 1))
	mustEqual(t, onnx.FromSlice([]float64{999}, 1), onnx.FromSlice([]float64{1000}, 1))
	mustDiffer(t, onnx.FromSlice([]float64{1001.0001}, 1), onnx.FromSlice([]float64{1000}, 1))
	// Relative to the expected value, not the result: |1001-1000| is within
	// 1e-3 of 1001 but not of 1000 when rtol is a bit smaller.
	tol := Tolerance{RTol: 0.999e-3, ATol: 0}
	if d := Compare(onnx.FromSlice([]float64{1001}, 1), onnx.FromSlice([]float64{1000}, 1), tol); d.Equal() {
		t.Error("1001 vs 1000 with rtol 0.999e-3 compared equal")
	}
	// The bound itself is inside: d <= atol + rtol*|want|.
	tol = Tolerance{RTol: 0, ATol: 0.5}
	if d := Compare(onnx.FromSlice([]float64{1.5}, 1), onnx.FromSlice([]float64{1}, 1), tol); !d.Equal() {
		t.Errorf("difference equal to atol compared unequal: %s", d.Mismatch)
	}
	// Near zero only atol counts.
	mustEqual(t, f32(nil, 1e-8), f32(nil, 0))
	mustDiffer(t, f32(nil, 1e-6), f32(nil, 0))
}

func TestCompareReasonAndMaxima(t *testing.T) {
	want := f32([]int{2, 3}, 1, 2, 3, 4, 5, 6)
	got := f32([]int{2, 3}, 1, 2, 3.5, 4, 5, 7)
	d := mustDiffer(t, got, want, "2 of 6 elements differ, worst at [1 2]: got 7 want 6")
	if d.MaxAbs != 1 {
		t.Errorf("MaxAbs %v, want 1", d.MaxAbs)
	}
	if math.Abs(d.MaxRel-0.5/3) > 1e-12 {
		t.Errorf("MaxRel %v, want %v", d.MaxRel, 0.5/3)
	}
	// A scalar's position is [].
	mustDiffer(t, f32(nil, 2), f32(nil, 1), "1 of 1 elements differ, worst at []: got 2 want 1")
}

func TestCompareIntegersExact(t *testing.T) {
	mustEqual(t, onnx.FromSlice([]int64{1, -5}, 2), onnx.FromSlice([]int64{1, -5}, 2))
	// Within rtol 1e-3, but integers must be exact.
	mustDiffer(t, onnx.FromSlice([]int64{1000001}, 1), onnx.FromSlice([]int64{1000000}, 1), "got 1000001 want 1000000")
	mustDiffer(t, onnx.FromSlice([]uint8{255, 3}, 2), onnx.FromSlice([]uint8{255, 4}, 2), "worst at [1]")
	mustDiffer(t, onnx.FromSlice([]bool{true, false}, 2), onnx.FromSlice([]bool{true, true}, 2), "got false want true")
	mustDiffer(t, onnx.FromSlice([]string{"a", "b"}, 2), onnx.FromSlice([]string{"a", "c"}, 2), `got "b" want "c"`)
	mustEqual(t, onnx.FromSlice([]string{"a", "b"}, 2), onnx.FromSlice([]string{"a", "b"}, 2))
}

func TestCompareTypeAndShape(t *testing.T) {
	mustDiffer(t, f32([]int{1}, 1), onnx.FromSlice([]float64{1}, 1), "data type float, want double")
	mustDiffer(t, onnx.FromSlice([]int32{1}, 1), onnx.FromSlice([]int64{1}, 1), "data type int32, want int64")
	mustDiffer(t, f32([]int{2, 3}, 1, 2, 3, 4, 5, 6), f32([]int{3, 2}, 1, 2, 3, 4, 5, 6), "shape [2 3], want [3 2]")
	mustDiffer(t, f32([]int{1}, 1), f32(nil, 1), "shape [1], want []")
	mustDiffer(t, nil, f32(nil, 1), "got no value")
	mustDiffer(t, &onnx.Sequence{}, f32(nil, 1), "got seq of 0, want tensor(float)[]")
	// A result whose slice does not fit its shape is reported, not read.
	mustDiffer(t, &onnx.Tensor{Type: onnx.Float, Shape: []int{3}, Data: []float32{1}}, f32([]int{3}, 1, 2, 3), "malformed result")
	// Empty tensors of the same shape are equal.
	mustEqual(t, f32([]int{0, 3}), f32([]int{0, 3}))
}

func TestCompareReducedFloats(t *testing.T) {
	h := func(v ...float32) *onnx.Tensor {
		out := make([]onnx.F16, len(v))
		for i, x := range v {
			out[i] = onnx.F16From(x)
		}
		return onnx.FromSlice(out, len(v))
	}
	mustEqual(t, h(1, 2, float32(math.NaN())), h(1, 2, float32(math.NaN())))
	mustDiffer(t, h(1, 2.5), h(1, 2), "got 2.5 want 2")
	b := func(v float32) *onnx.Tensor { return onnx.FromSlice([]onnx.BF16{onnx.BF16From(v)}, 1) }
	mustEqual(t, b(3), b(3))
	mustDiffer(t, b(3), b(4))
	mustDiffer(t, h(1), b(1), "data type float16, want bfloat16")
}

func TestCompareComplex(t *testing.T) {
	mustEqual(t, onnx.FromSlice([]complex64{1 + 2i}, 1), onnx.FromSlice([]complex64{1 + 2i}, 1))
	mustDiffer(t, onnx.FromSlice([]complex64{1 + 3i}, 1), onnx.FromSlice([]complex64{1 + 2i}, 1), "1 of 1")
}

func TestCompareContainers(t *testing.T) {
	seq := func(vs ...onnx.Value) *onnx.Sequence { return &onnx.Sequence{Values: vs} }
	mustEqual(t, seq(f32(nil, 1), f32([]int{2}, 1, 2)), seq(f32(nil, 1), f32([]int{2}, 1, 2)))
	mustDiffer(t, seq(f32(nil, 1)), seq(f32(nil, 1), f32(nil, 2)), "sequence of 1 elements, want 2")
	mustDiffer(t, seq(f32(nil, 1), f32(nil, 3)), seq(f32(nil, 1), f32(nil, 2)), "sequence element 1: 1 of 1 elements differ")

	none := &onnx.Optional{}
	some := &onnx.Optional{Value: f32(nil, 1)}
	mustEqual(t, none, none)
	mustEqual(t, nil, none)
	mustEqual(t, some, some)
	mustEqual(t, f32(nil, 1), some) // a bare value for a present optional
	mustDiffer(t, none, some, "got an empty optional")
	mustDiffer(t, some, none, "want an empty optional")
	mustDiffer(t, &onnx.Optional{Value: f32(nil, 2)}, some, "got 2 want 1")

	m := func(keys []int64, vals ...onnx.Value) *onnx.Map {
		return &onnx.Map{Keys: onnx.FromSlice(keys, len(keys)), Values: seq(vals...)}
	}
	// Key order does not matter.
	mustEqual(t, m([]int64{1, 2}, f32(nil, 10), f32(nil, 20)), m([]int64{2, 1}, f32(nil, 20), f32(nil, 10)))
	mustDiffer(t, m([]int64{1, 3}, f32(nil, 10), f32(nil, 20)), m([]int64{1, 2}, f32(nil, 10), f32(nil, 20)), "map lacks key 2")
	mustDiffer(t, m([]int64{1}, f32(nil, 11)), m([]int64{1}, f32(nil, 10)), "map key 1: ")
	sm := &onnx.Map{Keys: onnx.FromSlice([]string{"a"}, 1), Values: seq(f32(nil, 1))}
	mustDiffer(t, m([]int64{1}, f32(nil, 1)), sm, "map key type int64, want string")
}

func TestCompareSparse(t *testing.T) {
	sp := &onnx.SparseTensor{Shape: []int{4}, Values: f32([]int{1}, 5), Indices: onnx.FromSlice([]int64{2}, 1)}
	mustEqual(t, sp, sp)
	mustEqual(t, f32([]int{4}, 0, 0, 5, 0), sp)
	mustDiffer(t, f32([]int{4}, 0, 5, 0, 0), sp, "worst at [1]")
}

// ScaledTo multiplies the absolute tolerance by the output's largest
// finite magnitude above 1: an error of 5e-5 on a logit near 0 among
// logits up to 100 passes CrossBackendTolerance scaled (atol 1e-3) and
// fails it unscaled; outputs within ±1 and non-float values keep it.
func TestToleranceScaledTo(t *testing.T) {
	want := onnx.FromSlice([]float32{100, -40, 0.01, float32(math.Inf(1))}, 4)
	got := onnx.FromSlice([]float32{100.05, -40.01, 0.01005, float32(math.Inf(1))}, 4)
	scaled := CrossBackendTolerance.ScaledTo(want)
	if scaled.ATol != 100*CrossBackendTolerance.ATol || scaled.RTol != CrossBackendTolerance.RTol {
		t.Fatalf("ScaledTo = %+v, want atol %g", scaled, 100*CrossBackendTolerance.ATol)
	}
	if d := Compare(got, want, scaled); !d.Equal() {
		t.Errorf("scaled: %s", d.Mismatch)
	}
	if d := Compare(got, want, CrossBackendTolerance); d.Equal() {
		t.Errorf("unscaled: 5e-5 on 0.01 accepted")
	}
	if d := Compare(onnx.FromSlice([]float32{0.5, 1.0011}, 2), onnx.FromSlice([]float32{0.5, 1}, 2), CrossBackendTolerance.ScaledTo(onnx.FromSlice([]float32{0.5, 1}, 2))); d.Equal() {
		t.Errorf("outputs within ±1: an error of 1.1e-3 on 1 accepted")
	}
	for _, v := range []onnx.Value{onnx.FromSlice([]int64{1000}, 1), onnx.FromSlice([]float64{-0.5, math.NaN()}, 2)} {
		if got := CrossBackendTolerance.ScaledTo(v); got != CrossBackendTolerance {
			t.Errorf("ScaledTo(%v) = %+v, want it unchanged", v, got)
		}
	}
}
