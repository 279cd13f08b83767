package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// specials are the values every kernel must pass through as the portable
// loop does.
var specials = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 6, -6, 0.5}

// testLengths are the lengths tried: every length up to 40 (the
// assembly's multiples of 8 and every tail) and a few longer odd ones.
func testLengths() []int {
	var ns []int
	for n := range 41 {
		ns = append(ns, n)
	}
	return append(ns, 63, 100, 257)
}

func randomVector(r *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		if r.IntN(4) == 0 {
			x[i] = specials[r.IntN(len(specials))]
		} else {
			x[i] = float32(r.NormFloat64() * scale)
		}
	}
	return x
}

func nan32(v float32) bool { return v != v }

// sameBits reports whether got and want are the same value, signed zeros
// told apart and any NaN equal to any NaN.
func sameBits(got, want float32) bool {
	return math.Float32bits(got) == math.Float32bits(want) || nan32(got) && nan32(want)
}

// close reports whether got is want up to the difference one fused
// multiply-add (one rounding instead of two) or a reordered sum can make.
func close(got, want float32, tol float64) bool {
	g, w := float64(got), float64(want)
	if math.IsNaN(g) || math.IsNaN(w) {
		return math.IsNaN(g) && math.IsNaN(w)
	}
	if math.IsInf(g, 0) || math.IsInf(w, 0) {
		return g == w
	}
	return math.Abs(g-w) <= tol*max(1, math.Abs(w))
}

// Every implementation agrees with the portable one on every length,
// NaN, infinities and signed zeros included: bit for bit where the kernel
// only selects or compares, up to rounding where it multiplies and adds.
func TestImplementationsMatchPortable(t *testing.T) {
	impls := Implementations()
	if impls[len(impls)-1].Name != "portable" {
		t.Fatalf("the last implementation is %q, want the portable one", impls[len(impls)-1].Name)
	}
	for _, impl := range impls {
		t.Run(impl.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 7))
			for _, n := range testLengths() {
				x, dy := randomVector(r, n, 8), randomVector(r, n, 1)
				got, want := make([]float32, n), make([]float32, n)

				impl.Clip(got, x, 0, 6)
				portable.Clip(want, x, 0, 6)
				for i := range x {
					if !sameBits(got[i], want[i]) {
						t.Fatalf("Clip n=%d x[%d]=%v: got %v, want %v", n, i, x[i], got[i], want[i])
					}
				}

				// BiasClip is ScaleShift by 1 then Clip, bit for bit,
				// of the same implementation and of the portable one.
				for _, b := range []float32{0.75, -3, float32(math.Copysign(0, -1))} {
					impl.BiasClip(got, x, b, 0, 6)
					impl.ScaleShift(want, x, 1, b)
					impl.Clip(want, want, 0, 6)
					alone := make([]float32, n)
					portable.BiasClip(alone, x, b, 0, 6)
					for i := range x {
						if !sameBits(got[i], want[i]) || !sameBits(got[i], alone[i]) {
							t.Fatalf("BiasClip n=%d b=%v x[%d]=%v: got %v, ScaleShift+Clip %v, portable %v", n, b, i, x[i], got[i], want[i], alone[i])
						}
					}
				}

				impl.ReluGrad(got, dy, x)
				portable.ReluGrad(want, dy, x)
				for i := range x {
					if !sameBits(got[i], want[i]) {
						t.Fatalf("ReluGrad n=%d x[%d]=%v dy=%v: got %v, want %v", n, i, x[i], dy[i], got[i], want[i])
					}
				}

				impl.ScaleShift(got, x, 1.5, -0.25)
				portable.ScaleShift(want, x, 1.5, -0.25)
				for i := range x {
					if !close(got[i], want[i], 1e-6) {
						t.Fatalf("ScaleShift n=%d x[%d]=%v: got %v, want %v", n, i, x[i], got[i], want[i])
					}
				}

				copy(got, dy)
				copy(want, dy)
				impl.Axpy(-0.75, x, got)
				portable.Axpy(-0.75, x, want)
				for i := range x {
					if !close(got[i], want[i], 1e-6) {
						t.Fatalf("Axpy n=%d x[%d]=%v y=%v: got %v, want %v", n, i, x[i], dy[i], got[i], want[i])
					}
				}
			}
		})
	}
}

// Dot agrees with a float64 sum over finite values (its lanes reorder the
// sum, so it is compared with the exact value, not the portable loop's),
// and propagates NaN and infinities as the portable loop does.
func TestDotImplementations(t *testing.T) {
	for _, impl := range Implementations() {
		t.Run(impl.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 9))
			for _, n := range testLengths() {
				x, y := make([]float32, n), make([]float32, n)
				var exact, abs float64
				for i := range x {
					x[i], y[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
					exact += float64(x[i]) * float64(y[i])
					abs += math.Abs(float64(x[i]) * float64(y[i]))
				}
				got := float64(impl.Dot(x, y))
				if math.Abs(got-exact) > 1e-6*max(1, abs) {
					t.Fatalf("Dot n=%d: got %v, want %v", n, got, exact)
				}
				if n == 0 {
					continue
				}
				for _, s := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
					x[n/2] = s
					got, want := impl.Dot(x, y), portable.Dot(x, y)
					if !sameBits(got, want) && !(nan32(got) && nan32(want)) {
						t.Fatalf("Dot n=%d with %v: got %v, portable %v", n, s, got, want)
					}
				}
			}
		})
	}
}

func BenchmarkAxpy(b *testing.B) {
	x, y := make([]float32, 4096), make([]float32, 4096)
	for _, impl := range Implementations() {
		b.Run(impl.Name, func(b *testing.B) {
			b.SetBytes(int64(8 * len(x)))
			for b.Loop() {
				impl.Axpy(0.5, x, y)
			}
		})
	}
}
