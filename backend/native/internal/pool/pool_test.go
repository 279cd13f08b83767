package pool

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refMax is the scalar loop of package native over one window: the first
// maximum in row-major order, the first NaN winning.
func refMax(src []float32, o, stride, rows, kw, sw int) (best float32, nan bool) {
	found := false
	for r := range rows {
		for j := range kw {
			v := src[r*stride+o*sw+j]
			if !found || v > best || (v != v && best == best) {
				best, found = v, true
			}
			nan = nan || v != v
		}
	}
	return best, nan
}

// refAvg is the scalar loop's average: a float64 sum in row-major order.
func refAvg(src []float32, o, stride, rows, kw, sw int, divisor float64) float32 {
	var sum float64
	for r := range rows {
		for j := range kw {
			sum += float64(src[r*stride+o*sw+j])
		}
	}
	return float32(sum / divisor)
}

// fill draws inputs rich in ties: small integers, both zeros, both
// infinities when inf, and NaNs when nan.
func fill(rng *rand.Rand, x []float32, inf, nan bool) {
	negZero := float32(math.Copysign(0, -1))
	for i := range x {
		switch c := rng.IntN(16); {
		case c < 3:
			x[i] = 0
		case c < 6:
			x[i] = negZero
		case c == 6 && inf:
			x[i] = float32(math.Inf(1 - 2*rng.IntN(2)))
		case c == 7 && nan && rng.IntN(8) == 0:
			x[i] = float32(math.NaN())
		case c < 11:
			x[i] = float32(rng.IntN(5) - 4)
		default:
			x[i] = float32(rng.NormFloat64())
		}
	}
}

var widths = append(func() []int {
	w := make([]int, 40)
	for i := range w {
		w[i] = i + 1
	}
	return w
}(), 57, 112)

// Every implementation against the scalar loop, bit for bit: MaxPool's
// first maximum (-0 and +0 in window order, ±Inf), its NaN report, and
// AveragePool's float64 sums, over kernels 1..5, strides 1..3 and output
// rows of every width to 40 and 57 and 112 (partial vectors, one vector,
// overlapping last vectors).
func TestWindowsMatchScalarLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, impl := range Implementations() {
		for _, n := range widths {
			for kw := 1; kw <= 5; kw++ {
				for sw := 1; sw <= 3; sw++ {
					rows := 1 + (n+kw+sw)%5
					stride := (n-1)*sw + kw + rng.IntN(3)
					src := make([]float32, windowSpan(n, stride, rows, kw, sw))
					dst := make([]float32, n)
					name := fmt.Sprintf("%s n=%d rows=%d kw=%d sw=%d", impl.Name, n, rows, kw, sw)
					for _, inputs := range []struct{ inf, nan bool }{{false, false}, {true, false}, {true, true}} {
						fill(rng, src, inputs.inf, inputs.nan)
						anyNaN, anyInf := false, false
						for o := range n {
							for r := range rows {
								for _, v := range src[r*stride+o*sw : r*stride+o*sw+kw] {
									anyNaN = anyNaN || v != v
									anyInf = anyInf || math.IsInf(float64(v), 0)
								}
							}
						}
						ok := impl.MaxWindows(dst, src, stride, rows, kw, sw)
						// A false report is allowed only with infinities
						// about (the AVX-512 kernels sum each window).
						switch {
						case ok && anyNaN:
							t.Fatalf("%s: reported no NaN for windows holding one", name)
						case !ok && !anyNaN && !anyInf:
							t.Fatalf("%s: reported a NaN for finite windows", name)
						}
						if ok {
							for o := range n {
								want, _ := refMax(src, o, stride, rows, kw, sw)
								if math.Float32bits(dst[o]) != math.Float32bits(want) {
									t.Fatalf("%s: max[%d] = %v (%#x), want %v (%#x)", name, o, dst[o], math.Float32bits(dst[o]), want, math.Float32bits(want))
								}
							}
						}
						divisor := float64(rows*kw + rng.IntN(3))
						impl.AvgWindows(dst, src, stride, rows, kw, sw, divisor)
						for o := range n {
							want := refAvg(src, o, stride, rows, kw, sw, divisor)
							if math.Float32bits(dst[o]) != math.Float32bits(want) && !(want != want && dst[o] != dst[o]) {
								t.Fatalf("%s: avg[%d] = %v, want %v", name, o, dst[o], want)
							}
						}
					}
				}
			}
		}
	}
}

// The vector kernels read nothing past the last window: src is cut to
// exactly the elements the windows cover, so a read beyond it would fall
// outside the slice's memory as Go laid it out, and the results must not
// depend on what follows.
func TestWindowsReadOnlyTheirWindows(t *testing.T) {
	for _, impl := range Implementations() {
		for _, sw := range []int{1, 2} {
			const n, rows, kw = 37, 3, 3
			stride := (n-1)*sw + kw
			span := windowSpan(n, stride, rows, kw, sw)
			buf := make([]float32, span+64)
			for i := range buf {
				buf[i] = float32(i % 7)
			}
			for i := span; i < len(buf); i++ {
				buf[i] = 1000 // larger than every window element
			}
			dst := make([]float32, n)
			if !impl.MaxWindows(dst, buf[:span], stride, rows, kw, sw) {
				t.Fatalf("%s sw=%d: reported a NaN", impl.Name, sw)
			}
			for o := range n {
				if want, _ := refMax(buf, o, stride, rows, kw, sw); dst[o] != want {
					t.Fatalf("%s sw=%d: max[%d] = %v, want %v", impl.Name, sw, o, dst[o], want)
				}
			}
		}
	}
}

// Vectorised is false for the portable implementation and, for the
// others, true for the rows their kernels take.
func TestVectorised(t *testing.T) {
	for _, impl := range Implementations() {
		want := impl.Name != "portable"
		if got := impl.Vectorised(16, 2); got != want {
			t.Errorf("%s: Vectorised(16, 2) = %v, want %v", impl.Name, got, want)
		}
		if impl.Vectorised(16, 3) || impl.Vectorised(7, 1) {
			t.Errorf("%s: vector code for stride 3 or 7 outputs", impl.Name)
		}
	}
}

// The portable implementation is always listed, last.
func TestImplementationsEndWithPortable(t *testing.T) {
	list := Implementations()
	if list[len(list)-1].Name != "portable" {
		t.Fatalf("implementations %v: want portable last", list)
	}
	t.Logf("implementations: %d, first %s", len(list), list[0].Name)
}
