package native

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// sigClose fails unless got and want agree to a relative and absolute
// tolerance tol.
func sigClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > tol*(1+math.Abs(want[i])) || math.IsNaN(got[i]) != math.IsNaN(want[i]) {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func sigFloats(t *testing.T, x *onnx.Tensor) []float64 {
	t.Helper()
	v, err := float64sOf(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// naiveDFT is the definition, O(n^2).
func naiveDFT(x []complex128, inverse bool) []complex128 {
	n := len(x)
	out := make([]complex128, n)
	sign := -1.0
	if inverse {
		sign = 1
	}
	for k := range n {
		var s complex128
		for j := range n {
			s += x[j] * cmplx.Exp(complex(0, sign*2*math.Pi*float64(j*k)/float64(n)))
		}
		if inverse {
			s /= complex(float64(n), 0)
		}
		out[k] = s
	}
	return out
}

func TestDFTVersionsAndOptions(t *testing.T) {
	// A [2, 3, 5, 1] real signal; transform along axis 2 (length 5).
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, 2*3*5)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	in := onnx.FromSlice(x, 2, 3, 5, 1)
	want := func(n, outLen int, inverse bool) []float64 {
		var res []float64
		for b := range 2 {
			lines := make([][]complex128, 3)
			for i := range 3 {
				line := make([]complex128, n)
				for j := range min(n, 5) {
					line[j] = complex(float64(x[(b*3+i)*5+j]), 0)
				}
				lines[i] = naiveDFT(line, inverse)
			}
			// output [2, 3, outLen, 2]: axis 2 is the transformed one.
			for i := range 3 {
				for k := range outLen {
					res = append(res, real(lines[i][k]), imag(lines[i][k]))
				}
			}
		}
		return res
	}
	// Version 17: axis attribute.
	out, err := runOp(t, "", 17, "DFT", []*onnx.Attribute{intAttr("axis", 2)}, 1, in)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out[0].Shape, []int{2, 3, 5, 2}) {
		t.Fatalf("shape %v", out[0].Shape)
	}
	sigClose(t, "v17", sigFloats(t, out[0]), want(5, 5, false), 1e-5)
	// Version 20: axis input, dft_length zero-padding to 8, onesided.
	out, err = runOp(t, "", 20, "DFT", []*onnx.Attribute{intAttr("onesided", 1)}, 1, in, onnx.Scalar[int64](8), onnx.Scalar[int64](-2))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out[0].Shape, []int{2, 3, 5, 2}) {
		t.Fatalf("onesided shape %v", out[0].Shape)
	}
	sigClose(t, "v20 onesided padded", sigFloats(t, out[0]), want(8, 5, false), 1e-5)
	// Version 20 default axis (-2) with truncation to 3, inverse.
	out, err = runOp(t, "", 20, "DFT", []*onnx.Attribute{intAttr("inverse", 1)}, 1, in, onnx.Scalar[int32](3))
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "v20 inverse truncated", sigFloats(t, out[0]), want(3, 3, true), 1e-5)
	// Inverse of the forward transform of a complex double signal.
	c := onnx.FromSlice([]float64{1, 2, 3, -1, 0.5, 0, -2, 4, 7, 1, 3, 3, 0, 0}, 1, 7, 2)
	fwd, err := runOp(t, "", 20, "DFT", nil, 1, c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := runOp(t, "", 20, "DFT", []*onnx.Attribute{intAttr("inverse", 1)}, 1, fwd[0])
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "round trip", back[0].Float64s(), c.Float64s(), 1e-12)
	// Errors.
	for _, bad := range []struct {
		in    *onnx.Tensor
		extra []*onnx.Tensor
	}{
		{onnx.FromSlice([]float32{1, 2, 3}, 1, 1, 3), nil},                                       // last dim 3
		{in, []*onnx.Tensor{onnx.Scalar[int64](0)}},                                              // dft_length 0
		{in, []*onnx.Tensor{nil, onnx.Scalar[int64](3)}},                                         // axis is the complex one
		{in, []*onnx.Tensor{onnx.FromSlice([]int64{4, 4}, 2)}},                                   // dft_length not scalar
		{onnx.FromSlice([]int32{1, 2}, 1, 2, 1), nil},                                            // integer signal
		{in, []*onnx.Tensor{onnx.Scalar[int64](1 << 40)}},                                        // huge length
		{onnx.FromSlice([]float32{1}, 1), nil},                                                   // rank 1
		{in, []*onnx.Tensor{nil, onnx.Scalar[int64](-5)}},                                        // axis below -r
		{onnx.FromSlice([]float32{1, 2}, 1, 2, 1), []*onnx.Tensor{nil, onnx.Scalar[float32](1)}}, // float axis
	} {
		if _, err := runOp(t, "", 20, "DFT", nil, 1, append([]*onnx.Tensor{bad.in}, bad.extra...)...); err == nil {
			t.Errorf("DFT(%v, %v): expected an error", bad.in.Shape, bad.extra)
		}
	}
}

func TestSTFTMatchesDefinition(t *testing.T) {
	sig := make([]float32, 2*20)
	for i := range sig {
		sig[i] = float32(math.Sin(float64(i)*0.7) + 0.1*float64(i%3))
	}
	in := onnx.FromSlice(sig, 2, 20, 1)
	win := []float32{0.1, 0.5, 1, 0.5, 0.1, 0.2}
	out, err := runOp(t, "", 17, "STFT", nil, 1, in, onnx.Scalar[int64](4), onnx.FromSlice(win, 6))
	if err != nil {
		t.Fatal(err)
	}
	frames := (20-6)/4 + 1
	if !slices.Equal(out[0].Shape, []int{2, frames, 4, 2}) {
		t.Fatalf("shape %v", out[0].Shape)
	}
	var want []float64
	for b := range 2 {
		for f := range frames {
			line := make([]complex128, 6)
			for j := range 6 {
				line[j] = complex(float64(sig[b*20+f*4+j])*float64(win[j]), 0)
			}
			X := naiveDFT(line, false)
			for k := range 4 {
				want = append(want, real(X[k]), imag(X[k]))
			}
		}
	}
	sigClose(t, "stft", sigFloats(t, out[0]), want, 1e-5)
	// frame_length without a window, two-sided.
	out, err = runOp(t, "", 17, "STFT", []*onnx.Attribute{intAttr("onesided", 0)}, 1, in, onnx.Scalar[int64](7), nil, onnx.Scalar[int64](5))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out[0].Shape, []int{2, 3, 5, 2}) {
		t.Fatalf("shape %v", out[0].Shape)
	}
	// Disagreeing window and frame_length; zero step; frame longer than the signal.
	if _, err := runOp(t, "", 17, "STFT", nil, 1, in, onnx.Scalar[int64](4), onnx.FromSlice(win, 6), onnx.Scalar[int64](5)); err == nil {
		t.Error("window length 6 with frame_length 5: expected an error")
	}
	if _, err := runOp(t, "", 17, "STFT", nil, 1, in, onnx.Scalar[int64](0), onnx.FromSlice(win, 6)); err == nil {
		t.Error("frame_step 0: expected an error")
	}
	if _, err := runOp(t, "", 17, "STFT", nil, 1, in, onnx.Scalar[int64](1), nil, onnx.Scalar[int64](21)); err == nil {
		t.Error("frame_length 21 > 20: expected an error")
	}
}

func TestWindowFunctions(t *testing.T) {
	// Hann periodic, size 4: 0.5 - 0.5 cos(2 pi n / 4) = 0, 0.5, 1, 0.5.
	out, err := runOp(t, "", 17, "HannWindow", nil, 1, onnx.Scalar[int64](4))
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "hann", sigFloats(t, out[0]), []float64{0, 0.5, 1, 0.5}, 1e-7)
	// Hamming symmetric, size 3: 25/46 - 21/46 cos(pi n) = 4/46, 1, 4/46.
	out, err = runOp(t, "", 17, "HammingWindow", []*onnx.Attribute{intAttr("periodic", 0), intAttr("output_datatype", int64(onnx.Double))}, 1, onnx.Scalar[int32](3))
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Type != onnx.Double {
		t.Fatalf("type %v", out[0].Type)
	}
	sigClose(t, "hamming", out[0].Float64s(), []float64{4.0 / 46, 1, 4.0 / 46}, 1e-12)
	// Blackman periodic, size 4: 0.42 - 0.5 cos + 0.08 cos(2x).
	out, err = runOp(t, "", 17, "BlackmanWindow", []*onnx.Attribute{intAttr("output_datatype", int64(onnx.Float16))}, 1, onnx.Scalar[int64](4))
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "blackman", sigFloats(t, out[0]), []float64{0, 0.34, 1, 0.34}, 1e-3)
	if _, err := runOp(t, "", 17, "HannWindow", nil, 1, onnx.Scalar[int64](-1)); err == nil {
		t.Error("size -1: expected an error")
	}
	if _, err := runOp(t, "", 17, "HannWindow", []*onnx.Attribute{intAttr("output_datatype", int64(onnx.String))}, 1, onnx.Scalar[int64](3)); err == nil {
		t.Error("string output: expected an error")
	}
}

func TestMelWeightMatrix(t *testing.T) {
	out, err := runOp(t, "", 17, "MelWeightMatrix", nil, 1,
		onnx.Scalar[int64](4), onnx.Scalar[int64](32), onnx.Scalar[int64](16000), onnx.Scalar[float32](0), onnx.Scalar[float32](8000))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out[0].Shape, []int{17, 4}) {
		t.Fatalf("shape %v", out[0].Shape)
	}
	// Every filter is a triangle with a peak of 1 and values in [0, 1].
	v := sigFloats(t, out[0])
	for i := range 4 {
		peak := 0.0
		for j := range 17 {
			w := v[j*4+i]
			if w < 0 || w > 1 {
				t.Fatalf("weight [%d,%d] = %v", j, i, w)
			}
			peak = max(peak, w)
		}
		if peak != 1 {
			t.Fatalf("filter %d peaks at %v", i, peak)
		}
	}
	if _, err := runOp(t, "", 17, "MelWeightMatrix", nil, 1,
		onnx.Scalar[int64](0), onnx.Scalar[int64](32), onnx.Scalar[int64](16000), onnx.Scalar[float32](0), onnx.Scalar[float32](8000)); err == nil {
		t.Error("num_mel_bins 0: expected an error")
	}
}
