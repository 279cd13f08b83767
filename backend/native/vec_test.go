package native

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The vector kernels agree with their portable loops on every length
// (the assembly's multiples of 8 and the tails), NaN, infinities and
// signed zeros included.
func TestVectorKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 6, -6, 0.5}
	nan32 := func(v float32) bool { return v != v }
	for n := range 41 {
		x := make([]float32, n)
		for i := range x {
			if r.IntN(4) == 0 {
				x[i] = specials[r.IntN(len(specials))]
			} else {
				x[i] = float32(r.NormFloat64() * 8)
			}
		}
		got, want := make([]float32, n), make([]float32, n)
		clipF32(got, x, 0, 6)
		clipTail(want, x, 0, 6)
		for i := range x {
			same := got[i] == want[i] && math.Signbit(float64(got[i])) == math.Signbit(float64(want[i]))
			if !same && !(nan32(got[i]) && nan32(want[i])) {
				t.Fatalf("clip n=%d x[%d]=%v: got %v, want %v", n, i, x[i], got[i], want[i])
			}
		}
		dy := make([]float32, n)
		for i := range dy {
			if r.IntN(4) == 0 {
				dy[i] = specials[r.IntN(len(specials))]
			} else {
				dy[i] = float32(r.NormFloat64())
			}
		}
		reluGradF32(got, dy, x)
		reluGradTail(want, dy, x)
		for i := range x {
			same := math.Float32bits(got[i]) == math.Float32bits(want[i])
			if !same && !(nan32(got[i]) && nan32(want[i])) {
				t.Fatalf("relu gradient n=%d x[%d]=%v dy=%v: got %v, want %v", n, i, x[i], dy[i], got[i], want[i])
			}
		}
		scaleShiftF32(got, x, 1.5, -0.25)
		for i, v := range x {
			w := float64(v)*1.5 - 0.25
			g := float64(got[i])
			if math.IsNaN(w) != math.IsNaN(g) || !math.IsNaN(w) && g != w && math.Abs(g-w) > 1e-6*math.Abs(w) {
				t.Fatalf("scale-shift n=%d x[%d]=%v: got %v, want %v", n, i, v, g, w)
			}
		}
	}
}
