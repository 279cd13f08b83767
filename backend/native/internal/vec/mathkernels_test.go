package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// unaryCase is one element-wise kernel with its float64 reference and the
// error bound its doc comment states: |got - want| <= ulps·ulp(want) + abs,
// ulp(want) the spacing of float32 at want (2^-149 for subnormals).
type unaryCase struct {
	name string
	of   func(Impl) func(y, x []float32)
	ref  func(float64) float64
	ulps float64
	abs  float64
	span float64 // the dense sweep covers [-span, span]
	// growth, when not nil, is added to ulps at x: the part of the error
	// that grows with the input (GeluTanh's negative tail).
	growth func(x float64) float64
}

func unaryCases() []unaryCase {
	return []unaryCase{
		{"Exp", func(m Impl) func(y, x []float32) { return m.Exp }, math.Exp, expULPs, 0, 110, nil},
		{"Sigmoid", func(m Impl) func(y, x []float32) { return m.Sigmoid }, sigmoid64, sigmoidULPs, 0, 110, nil},
		{"Tanh", func(m Impl) func(y, x []float32) { return m.Tanh }, math.Tanh, tanhULPs, 0, 12, nil},
		{"Erf", func(m Impl) func(y, x []float32) { return m.Erf }, math.Erf, erfULPs, 0, 6, nil},
		{"GeluErf", func(m Impl) func(y, x []float32) { return m.GeluErf }, geluErf64, geluErfULPs, geluErfAbs, 16, nil},
		{"GeluTanh", func(m Impl) func(y, x []float32) { return m.GeluTanh }, geluTanh64, geluTanhULPs, 0, 16, geluTanhGrowth},
		{"HardSwish", func(m Impl) func(y, x []float32) { return m.HardSwish }, hardSwish64, hardSwishULPs, 0, 8, nil},
		{"HardSigmoid(0.2,0.5)", func(m Impl) func(y, x []float32) { return hardSigmoidAt(m, 0.2, 0.5) },
			func(x float64) float64 { return min(max(float64(float32(0.2))*x+0.5, 0), 1) }, hardSigmoidULPs, 0, 8, nil},
		{"HardSigmoid(-1/6,0.25)", func(m Impl) func(y, x []float32) { return hardSigmoidAt(m, -1.0/6, 0.25) },
			func(x float64) float64 { return min(max(float64(float32(-1.0/6))*x+0.25, 0), 1) }, hardSigmoidULPs, 0, 8, nil},
	}
}

func hardSigmoidAt(m Impl, alpha, beta float32) func(y, x []float32) {
	return func(y, x []float32) { m.HardSigmoid(y, x, alpha, beta) }
}

// ulp32 is the spacing of float32 values at v's magnitude.
func ulp32(v float64) float64 {
	a := math.Abs(float64(float32(v)))
	if a < 0x1p-126 {
		return 0x1p-149
	}
	if math.IsInf(a, 0) {
		return math.Inf(1)
	}
	_, e := math.Frexp(a) // a = f·2^e, f in [0.5, 1)
	return math.Ldexp(1, e-24)
}

// sweepInputs is every 4099th float32 bit pattern (all magnitudes, both
// signs, subnormals included), a dense uniform sweep of [-span, span],
// and the special values.
func sweepInputs(span float64) []float32 {
	var xs []float32
	for b := uint64(0); b < 1<<32; b += 4099 {
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	const dense = 1 << 19
	for i := 0; i <= dense; i++ {
		xs = append(xs, float32(-span+2*span*float64(i)/dense))
	}
	return append(xs, edgeValues()...)
}

// edgeValues are NaN, the infinities, signed zeros, the smallest
// subnormal and normal numbers, the largest finite number, and the
// points where exp overflows and underflows.
func edgeValues() []float32 {
	var xs []float32
	for _, v := range []float64{math.NaN(), math.Inf(1), 0, 0x1p-149, 0x1p-126, math.MaxFloat32,
		88.72283, 88.72284, 88.8, 89, 103.97, 103.98, 104, 87.33, 87.34, 3, 6, 1, 0.625, 4, 1.0 / 3} {
		xs = append(xs, float32(v), -float32(v))
	}
	return xs
}

// unaryError returns the error of got against the reference value want in
// units of ulp(want) once abs is taken off, and whether the pair breaks a
// rule that is not a matter of rounding: NaN exactly where want is NaN,
// and exactly 0, ±1, ±Inf where float32(want) is one of them (saturation).
func unaryError(got float32, want, abs float64) (ulps float64, exact bool) {
	g := float64(got)
	if math.IsNaN(want) || math.IsNaN(g) {
		return 0, math.IsNaN(want) && math.IsNaN(g)
	}
	w32 := float64(float32(want))
	if w32 == 0 || math.Abs(w32) == 1 || math.IsInf(w32, 0) {
		if g != w32 || (w32 == 0 && math.Signbit(g) != math.Signbit(w32)) {
			return math.Inf(1), false
		}
		return 0, true
	}
	return max(0, math.Abs(g-want)-abs) / ulp32(want), true
}

// TestActivationAccuracy measures each implementation's largest error
// against the float64 math package over the sweep and asserts the bound
// stated in the kernel's doc comment. The measured figures are logged
// (go test -v) for the doc comments.
func TestActivationAccuracy(t *testing.T) {
	for _, c := range unaryCases() {
		xs := sweepInputs(c.span)
		y := make([]float32, len(xs))
		for _, impl := range Implementations() {
			t.Run(c.name+"/"+impl.Name, func(t *testing.T) {
				c.of(impl)(y, xs)
				worst, at := 0.0, float32(0) // the largest error over its bound
				for i, x := range xs {
					want := c.ref(float64(x))
					e, ok := unaryError(y[i], want, c.abs)
					if !ok {
						t.Fatalf("%s(%v) = %v, want %v exactly", c.name, x, y[i], float32(want))
					}
					bound := c.ulps
					if c.growth != nil {
						bound += c.growth(float64(x))
					}
					if e/bound > worst/c.ulps {
						worst, at = e*c.ulps/bound, x
					}
				}
				// worst is scaled to the bound at x = 0 when the bound grows.
				t.Logf("%s %s: max error %.3g ulp (+%g) at x = %v", c.name, impl.Name, worst, c.abs, at)
				if worst > c.ulps {
					t.Errorf("%s %s: max error %.3g ulp at x = %v (%v, want %v), bound %g",
						c.name, impl.Name, worst, at, y[slicesIndex(xs, at)], c.ref(float64(at)), c.ulps)
				}
			})
		}
	}
}

func slicesIndex(xs []float32, v float32) int {
	for i, x := range xs {
		if math.Float32bits(x) == math.Float32bits(v) {
			return i
		}
	}
	return 0
}

// TestActivationTails runs every kernel on every length 0..40, 63, 100
// and 257, with special values at random places and a guard past the
// end, against the portable implementation: within the stated bound
// (twice it, both being within it of the exact value), nothing written
// past len(x).
func TestActivationTails(t *testing.T) {
	const guard = 3
	for _, c := range unaryCases() {
		for _, impl := range Implementations() {
			r := rand.New(rand.NewPCG(11, 13))
			for _, n := range testLengths() {
				x := randomVector(r, n, 4)
				for i := range x {
					if r.IntN(5) == 0 {
						e := edgeValues()
						x[i] = e[r.IntN(len(e))]
					}
				}
				got := make([]float32, n+guard)
				want := make([]float32, n)
				for i := range got {
					got[i] = 42
				}
				c.of(impl)(got, x)
				c.of(portable)(want, x)
				for i := range want {
					bound := c.ulps
					if c.growth != nil {
						bound += c.growth(float64(x[i]))
					}
					if !tailClose(got[i], want[i], 2*bound, 2*c.abs) {
						t.Fatalf("%s %s n=%d x[%d]=%v: got %v, portable %v", c.name, impl.Name, n, i, x[i], got[i], want[i])
					}
				}
				for i := n; i < n+guard; i++ {
					if got[i] != 42 {
						t.Fatalf("%s %s n=%d wrote %v at %d, past the end", c.name, impl.Name, n, got[i], i)
					}
				}
			}
		}
	}
}

// tailClose compares two float32 results up to ulps·ulp + abs, NaN equal
// to NaN, infinities and zeros (of either sign) exactly.
func tailClose(got, want float32, ulps, abs float64) bool {
	g, w := float64(got), float64(want)
	if math.IsNaN(g) || math.IsNaN(w) {
		return math.IsNaN(g) && math.IsNaN(w)
	}
	if math.IsInf(g, 0) || math.IsInf(w, 0) {
		return g == w
	}
	return math.Abs(g-w) <= ulps*ulp32(w)+abs
}

func BenchmarkActivations(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	x := randomVector(r, 4096, 3)
	for i := range x {
		if x[i] != x[i] || math.IsInf(float64(x[i]), 0) {
			x[i] = 0.5
		}
	}
	y := make([]float32, len(x))
	for _, c := range unaryCases() {
		for _, impl := range Implementations() {
			f := c.of(impl)
			b.Run(fmt.Sprintf("%s/%s", c.name, impl.Name), func(b *testing.B) {
				for b.Loop() {
					f(y, x)
				}
				b.ReportMetric(float64(b.N)*float64(len(x))/float64(b.Elapsed().Nanoseconds()), "elem/ns")
			})
		}
	}
}
