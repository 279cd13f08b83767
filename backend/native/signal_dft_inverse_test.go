package native

import (
	"math"
	"math/cmplx"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// irfftDirect is the inverse real DFT by its definition: the n-point
// spectrum is bins 0..n/2 of x (zero past its end) completed by conjugate
// symmetry, and the result is the real part of its inverse transform.
func irfftDirect(x []complex128, n int) []float64 {
	full := make([]complex128, n)
	for k := range n {
		b := k
		if k > n/2 {
			b = n - k
		}
		if b < len(x) {
			full[k] = x[b]
			if b != k {
				full[k] = cmplx.Conj(x[b])
			}
		}
	}
	out := make([]float64, n)
	for t := range n {
		var s complex128
		for k, v := range full {
			s += v * cmplx.Exp(complex(0, 2*math.Pi*float64(k*t)/float64(n)))
		}
		out[t] = real(s) / float64(n)
	}
	return out
}

// ONNX's test_dft_irfft: the one-sided spectrum (6 bins) of each column of
// arange(100).reshape(10, 10), transformed back, is the signal of length
// 2*(6-1) = 10 again.
func TestDFTInverseOnesided(t *testing.T) {
	const n, cols, bins = 10, 10, 6
	in := make([]float32, bins*cols*2)
	for c := range cols {
		for k := range bins {
			var s complex128
			for j := range n {
				s += complex(float64(j*cols+c), 0) * cmplx.Exp(complex(0, -2*math.Pi*float64(k*j)/n))
			}
			p := (k*cols + c) * 2
			in[p], in[p+1] = float32(real(s)), float32(imag(s))
		}
	}
	x := onnx.FromSlice(in, 1, bins, cols, 2)
	want := make([]float64, n*cols)
	for i := range want {
		want[i] = float64(i)
	}
	check := func(name string, got *onnx.Tensor, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got.Shape) != 4 || got.Shape[0] != 1 || got.Shape[1] != n || got.Shape[2] != cols || got.Shape[3] != 1 {
			t.Fatalf("%s: shape %v, want [1 %d %d 1]", name, got.Shape, n, cols)
		}
		for i, v := range got.Float32s() {
			if math.Abs(float64(v)-want[i]) > 1e-3 {
				t.Fatalf("%s: y[%d] = %v, want %v", name, i, v, want[i])
			}
		}
	}
	attrs := []*onnx.Attribute{intAttr("onesided", 1), intAttr("inverse", 1)}
	got, err := runNode1(t, 17, "DFT", append(attrs, intAttr("axis", 1)), x)
	check("DFT-17", got, err)
	got, err = runNode1(t, 20, "DFT", attrs, x, nil, onnx.FromSlice([]int64{1}))
	check("DFT-20", got, err)
}

// An explicit dft_length takes bins 0..n/2 of the input (padding with
// zeros), and the imaginary parts of bin 0 and, for even n, bin n/2 do not
// matter.
func TestDFTInverseOnesidedLength(t *testing.T) {
	bins := []complex128{complex(3, 7), complex(-1, 2), complex(0.5, -1.5), complex(2, 4)}
	in := make([]float64, 0, 2*len(bins))
	for _, b := range bins {
		in = append(in, real(b), imag(b))
	}
	x := onnx.FromSlice(in, 1, len(bins), 2)
	attrs := []*onnx.Attribute{intAttr("onesided", 1), intAttr("inverse", 1)}
	for _, n := range []int{4, 5, 9, 2} {
		got, err := runNode1(t, 20, "DFT", attrs, x, onnx.FromSlice([]int64{int64(n)}))
		if err != nil {
			t.Fatalf("dft_length %d: %v", n, err)
		}
		want := irfftDirect(bins, n)
		if len(got.Shape) != 3 || got.Shape[1] != n || got.Shape[2] != 1 {
			t.Fatalf("dft_length %d: shape %v, want [1 %d 1]", n, got.Shape, n)
		}
		for i, v := range got.Float64s() {
			if math.Abs(v-want[i]) > 1e-12 {
				t.Errorf("dft_length %d: y[%d] = %v, want %v", n, i, v, want[i])
			}
		}
	}
	// Bin 0's imaginary part, 7, is ignored: with n = 2 the result is
	// (X0 + X1, X0 - X1) / 2 over the real parts.
	got, err := runNode1(t, 20, "DFT", attrs, x, onnx.FromSlice([]int64{2}))
	if err != nil {
		t.Fatal(err)
	}
	if d := got.Float64s(); d[0] != 1 || d[1] != 2 {
		t.Errorf("dft_length 2: %v, want [1 2]", d)
	}
}
