package fft

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// naiveDFT is the definition, X[k] = Σ x[j] exp(∓2πi jk/n), in O(n²).
func naiveDFT(x []complex128, inverse bool) []complex128 {
	n := len(x)
	sign := -1.0
	if inverse {
		sign = 1
	}
	out := make([]complex128, n)
	for k := range n {
		var s complex128
		for j, v := range x {
			// jk mod n keeps the angle small and exact.
			s += v * cmplx.Rect(1, sign*2*math.Pi*float64(j*k%n)/float64(n))
		}
		out[k] = s
	}
	return out
}

// Plans of powers of two and of other lengths (prime, odd, even) agree
// with the definition, forward and inverse, and a cached plan is reused.
func TestTransformMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	var cache Cache
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 31, 64, 100, 127, 128, 243} {
		for _, inverse := range []bool{false, true} {
			x := make([]complex128, n)
			for i := range x {
				x[i] = complex(r.NormFloat64(), r.NormFloat64())
			}
			want := naiveDFT(x, inverse)
			p := cache.Plan(n, inverse)
			if again := cache.Plan(n, inverse); again != p {
				t.Fatalf("n=%d: the cache built the plan twice", n)
			}
			got := append([]complex128(nil), x...)
			p.Transform(got, make([]complex128, p.ScratchLen()))
			for k := range want {
				if cmplx.Abs(got[k]-want[k]) > 1e-9*float64(n) {
					t.Fatalf("n=%d inverse=%v: X[%d] = %v, want %v", n, inverse, k, got[k], want[k])
				}
			}
		}
	}
}

// A forward transform followed by an inverse one, scaled by 1/n, gives
// the input back.
func TestInverseUndoesForward(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{6, 32, 45} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(r.NormFloat64(), 0)
		}
		y := append([]complex128(nil), x...)
		fwd, inv := NewPlan(n, false), NewPlan(n, true)
		fwd.Transform(y, make([]complex128, fwd.ScratchLen()))
		inv.Transform(y, make([]complex128, inv.ScratchLen()))
		for i := range x {
			if cmplx.Abs(y[i]/complex(float64(n), 0)-x[i]) > 1e-12*float64(n) {
				t.Fatalf("n=%d: element %d came back as %v, want %v", n, i, y[i]/complex(float64(n), 0), x[i])
			}
		}
	}
}
