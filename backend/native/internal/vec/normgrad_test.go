package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// DotCentered agrees with float64 sums within the lanes' reordering, and
// Affine2 is exact up to its fused rounding, on every length; neither
// reads or writes past len(x).
func TestNormGradKernelsMatchPortable(t *testing.T) {
	for _, impl := range Implementations() {
		t.Run(impl.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 9))
			for _, n := range testLengths() {
				dy, x := finiteVector(r, n+1, 2), finiteVector(r, n, 3)
				dy[n] = float32(math.NaN()) // past the end: must not be read
				var absD, absDX float64
				for i := range x {
					absD += math.Abs(float64(dy[i]))
					absDX += math.Abs(float64(dy[i]) * (float64(x[i]) - 0.5))
				}
				tol := 0x1p-24 * (float64(n)/8 + 4)
				gs, gd := impl.DotCentered(dy, x, 0.5)
				ws, wd := portable.DotCentered(dy[:n], x, 0.5)
				if math.Abs(float64(gs-ws)) > tol*absD || math.Abs(float64(gd-wd)) > (tol+0x1p-23)*absDX {
					t.Fatalf("DotCentered n=%d: got (%v, %v), want (%v, %v)", n, gs, gd, ws, wd)
				}

				a, b := finiteVector(r, n, 2), finiteVector(r, n+1, 2)
				got := make([]float32, n+1)
				got[n] = 42
				impl.Affine2(got, a, b, 0.75, -1.25, 0.5)
				for i := range n {
					want := 0.75*float64(a[i]) - 1.25*float64(b[i]) + 0.5
					scale := 0.75*math.Abs(float64(a[i])) + 1.25*math.Abs(float64(b[i])) + 0.5
					if math.Abs(float64(got[i])-want) > 0x1p-22*scale {
						t.Fatalf("Affine2 n=%d [%d]: got %v, want %v", n, i, got[i], want)
					}
				}
				if got[n] != 42 {
					t.Fatalf("Affine2 n=%d wrote past the end: %v", n, got[n])
				}
			}
		})
	}
}

// A NaN or Inf in the data reaches both sums and the map's output.
func TestNormGradKernelsPropagateNaN(t *testing.T) {
	for _, impl := range Implementations() {
		for _, n := range []int{1, 7, 16, 33} {
			dy, x := make([]float32, n), make([]float32, n)
			for i := range x {
				dy[i], x[i] = 1, float32(i)
			}
			x[n-1] = float32(math.Inf(1))
			if _, d := impl.DotCentered(dy, x, 0); !math.IsInf(float64(d), 1) {
				t.Fatalf("%s DotCentered n=%d: Inf in x gave %v", impl.Name, n, d)
			}
			dy[n-1] = float32(math.NaN())
			if s, _ := impl.DotCentered(dy, x, 0); !isNaN32(s) {
				t.Fatalf("%s DotCentered n=%d: NaN in dy gave sum %v", impl.Name, n, s)
			}
			y := make([]float32, n)
			impl.Affine2(y, dy, x, 1, 1, 0)
			if !isNaN32(y[n-1]) {
				t.Fatalf("%s Affine2 n=%d: NaN gave %v", impl.Name, n, y[n-1])
			}
		}
	}
}

// With NaN, +Inf, -Inf or -0 at the start, middle or end of a run of odd
// length, the vector kernels give what the portable loops give: NaN where
// they give NaN and the same infinity, and Affine2 the same bits (-0
// included) on values whose products and sums are exact.
func TestNormGradKernelsSpecialValuesMatchPortable(t *testing.T) {
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1))}
	for _, impl := range Implementations() {
		for _, n := range []int{1, 7, 17, 33} {
			for _, v := range specials {
				for _, at := range []int{0, n / 2, n - 1} {
					for which := range 2 {
						a, b := make([]float32, n), make([]float32, n)
						for i := range a {
							a[i], b[i] = float32(i%5)-2, float32(i%3)*0.5
						}
						if which == 0 {
							a[at] = v
						} else {
							b[at] = v
						}
						gs, gd := impl.DotCentered(a, b, 0.25)
						ws, wd := portable.DotCentered(a, b, 0.25)
						for _, p := range [][2]float32{{gs, ws}, {gd, wd}} {
							if isInfOrNaN(p[1]) && !sameBits(p[0], p[1]) {
								t.Fatalf("%s DotCentered n=%d %v at %d of operand %d: got (%v, %v), want (%v, %v)", impl.Name, n, v, at, which, gs, gd, ws, wd)
							}
						}
						got, want := make([]float32, n), make([]float32, n)
						impl.Affine2(got, a, b, -0.5, 2, float32(math.Copysign(0, -1)))
						portable.Affine2(want, a, b, -0.5, 2, float32(math.Copysign(0, -1)))
						for i := range want {
							if !sameBits(got[i], want[i]) {
								t.Fatalf("%s Affine2 n=%d %v at %d of operand %d: [%d] got %v, want %v", impl.Name, n, v, at, which, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

func isInfOrNaN(v float32) bool { return v != v || math.IsInf(float64(v), 0) }
