package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func isNaN32(v float32) bool { return v != v }

// finiteVector is a row of n normal deviates of the given scale.
func finiteVector(r *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * scale)
	}
	return x
}

// The reductions agree with the portable ones on every length: Max
// exactly, the sums within the reordering of their lanes.
func TestRowKernelsMatchPortable(t *testing.T) {
	for _, impl := range Implementations() {
		t.Run(impl.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, 8))
			for _, n := range testLengths() {
				x := finiteVector(r, n, 3)
				if got, want := impl.Max(x), portable.Max(x); got != want {
					t.Fatalf("Max n=%d: got %v, want %v", n, got, want)
				}
				var abs, sq float64
				for _, v := range x {
					abs += math.Abs(float64(v))
					sq += float64(v-0.25) * float64(v-0.25)
				}
				tol := 0x1p-24 * (float64(n)/8 + 4)
				if got, want := impl.Sum(x), portable.Sum(x); math.Abs(float64(got-want)) > tol*abs {
					t.Fatalf("Sum n=%d: got %v, want %v", n, got, want)
				}
				if got, want := impl.SumSquaredDeviations(x, 0.25), portable.SumSquaredDeviations(x, 0.25); math.Abs(float64(got-want)) > tol*sq {
					t.Fatalf("SumSquaredDeviations n=%d: got %v, want %v", n, got, want)
				}

				got, want := make([]float32, n+1), make([]float32, n)
				got[n] = 42
				gs, ws := impl.ExpSum(got, x, 1.5), portable.ExpSum(want, x, 1.5)
				var esum float64
				for i := range want {
					esum += float64(want[i])
					// The vector kernels round x-m to float32 first: |x-m| ulp more.
					if !tailClose(got[i], want[i], 2*expULPs+math.Abs(float64(x[i])-1.5), 0) {
						t.Fatalf("ExpSum n=%d x[%d]=%v: got %v, want %v", n, i, x[i], got[i], want[i])
					}
				}
				if math.Abs(float64(gs-ws)) > (tol+(2*expULPs+8)*0x1p-24)*esum || got[n] != 42 {
					t.Fatalf("ExpSum n=%d: sum %v, want %v (guard %v)", n, gs, ws, got[n])
				}

				scale, bias := finiteVector(r, n, 1), finiteVector(r, n, 1)
				impl.NormAffine(got, x, scale, bias, 0.5, 1.25)
				portable.NormAffine(want, x, scale, bias, 0.5, 1.25)
				for i := range want {
					mag := math.Abs(float64((x[i]-0.5)*1.25*scale[i])) + math.Abs(float64(bias[i]))
					if math.Abs(float64(got[i]-want[i])) > 3*0x1p-24*mag {
						t.Fatalf("NormAffine n=%d i=%d: got %v, want %v", n, i, got[i], want[i])
					}
				}
				if got[n] != 42 {
					t.Fatalf("NormAffine n=%d wrote past the end", n)
				}
			}
		})
	}
}

// The reductions and row maps pass NaN, ±Inf and ±0 through as the
// portable ones do: Max exactly on rows without NaN, the sums and the
// mapped rows NaN and infinite exactly where the portable ones are.
func TestRowKernelsSpecialValuesMatchPortable(t *testing.T) {
	same := func(got, want float32) bool {
		g, w := float64(got), float64(want)
		switch {
		case math.IsNaN(g) || math.IsNaN(w):
			return math.IsNaN(g) && math.IsNaN(w)
		case math.IsInf(g, 0) || math.IsInf(w, 0):
			return g == w
		}
		return true // finite: the tolerances are TestRowKernelsMatchPortable's
	}
	for _, impl := range Implementations() {
		t.Run(impl.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(6, 9))
			for _, n := range testLengths() {
				for round := range 4 {
					x := finiteVector(r, n, 3)
					for i := range x {
						if r.IntN(4) == 0 {
							x[i] = specials[r.IntN(len(specials))]
						}
					}
					// Max of a row holding a NaN is unspecified (see Max);
					// ±Inf and ±0 must give the portable answer.
					if got, want := impl.Max(x), portable.Max(x); !slices.ContainsFunc(x, isNaN32) && got != want {
						t.Fatalf("Max n=%d round %d %v: got %v, want %v", n, round, x, got, want)
					}
					if got, want := impl.Sum(x), portable.Sum(x); !same(got, want) {
						t.Fatalf("Sum n=%d round %d %v: got %v, want %v", n, round, x, got, want)
					}
					if got, want := impl.SumSquaredDeviations(x, 0.25), portable.SumSquaredDeviations(x, 0.25); !same(got, want) {
						t.Fatalf("SumSquaredDeviations n=%d round %d %v: got %v, want %v", n, round, x, got, want)
					}
					got, want := make([]float32, n), make([]float32, n)
					impl.ExpSum(got, x, 1.5)
					portable.ExpSum(want, x, 1.5)
					for i := range want {
						if !same(got[i], want[i]) {
							t.Fatalf("ExpSum n=%d x[%d]=%v: got %v, want %v", n, i, x[i], got[i], want[i])
						}
					}
					scale, bias := finiteVector(r, n, 1), finiteVector(r, n, 1)
					impl.NormAffine(got, x, scale, bias, 0.5, 1.25)
					portable.NormAffine(want, x, scale, bias, 0.5, 1.25)
					for i := range want {
						if !same(got[i], want[i]) {
							t.Fatalf("NormAffine n=%d x[%d]=%v: got %v, want %v", n, i, x[i], got[i], want[i])
						}
					}
				}
			}
		})
	}
}

// Softmax and LogSoftmax against float64, on rows of every test length
// and spreads from 0.01 to 30 (so that exp(x-max) reaches 1e-40), and
// on rows holding NaN, +Inf and -Inf.
func TestSoftmaxAccuracy(t *testing.T) {
	for _, impl := range Implementations() {
		t.Run(impl.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(21, 3))
			worstSM, worstLSM := 0.0, 0.0
			for _, n := range append(testLengths(), 1000, 4097) {
				for _, spread := range []float64{0.01, 1, 5, 30} {
					x := finiteVector(r, n, spread)
					want := make([]float64, n)
					mx := math.Inf(-1)
					for _, v := range x {
						mx = math.Max(mx, float64(v))
					}
					var s float64
					for i, v := range x {
						want[i] = math.Exp(float64(v) - mx)
						s += want[i]
					}
					got := make([]float32, n)
					impl.Softmax(got, x)
					for i := range x {
						w := want[i] / s
						ulps := math.Abs(float64(got[i])-w) / ulp32(w)
						bound := softmaxULPs + math.Abs(float64(x[i])-mx) + float64(n)/64
						worstSM = max(worstSM, ulps/bound*softmaxULPs)
						if ulps > bound {
							t.Fatalf("Softmax n=%d spread=%v x[%d]=%v: got %v, want %v (%.3g ulp, bound %.3g)", n, spread, i, x[i], got[i], w, ulps, bound)
						}
					}
					impl.LogSoftmax(got, x)
					for i := range x {
						w := float64(x[i]) - mx - math.Log(s)
						e := math.Abs(float64(got[i])-w) / (1 + math.Abs(w))
						worstLSM = max(worstLSM, e)
						if e > logSoftmaxAbs {
							t.Fatalf("LogSoftmax n=%d spread=%v x[%d]=%v: got %v, want %v", n, spread, i, x[i], got[i], w)
						}
					}
				}
			}
			t.Logf("%s: Softmax max error %.3g ulp (+|x-max|+len/64), LogSoftmax %.3g·(1+|y|)", impl.Name, worstSM, worstLSM)

			for _, special := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
				x := finiteVector(r, 21, 1)
				x[13] = special
				got := make([]float32, len(x))
				for _, f := range []func(y, x []float32){impl.Softmax, impl.LogSoftmax} {
					f(got, x)
					for i, v := range got {
						if !nan32(v) {
							t.Fatalf("with %v at 13: element %d is %v, want NaN", special, i, v)
						}
					}
				}
			}
			// -Inf is a zero probability (or -Inf log-probability) among
			// finite values.
			x := []float32{1, float32(math.Inf(-1)), 2}
			got := make([]float32, 3)
			impl.Softmax(got, x)
			if got[1] != 0 || math.Abs(float64(got[0]+got[2])-1) > 1e-6 {
				t.Fatalf("Softmax(1, -Inf, 2) = %v", got)
			}
			impl.LogSoftmax(got, x)
			if !math.IsInf(float64(got[1]), -1) {
				t.Fatalf("LogSoftmax(1, -Inf, 2) = %v", got)
			}
		})
	}
}

// LayerNorm against float64 on rows of every test length, offsets that
// make the mean large against the spread, and a NaN.
func TestLayerNormAccuracy(t *testing.T) {
	for _, impl := range Implementations() {
		t.Run(impl.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(4, 4))
			worst := 0.0
			for _, n := range append(testLengths()[1:], 768, 4097) {
				for _, offset := range []float32{0, 3, -100} {
					x := finiteVector(r, n, 1)
					for i := range x {
						x[i] += offset
					}
					scale, bias := finiteVector(r, n, 1), finiteVector(r, n, 1)
					const eps = 1e-5
					var mean, q float64
					for _, v := range x {
						mean += float64(v)
					}
					mean /= float64(n)
					for _, v := range x {
						q += (float64(v) - mean) * (float64(v) - mean)
					}
					inv := 1 / math.Sqrt(q/float64(n)+eps)
					got := make([]float32, n)
					gm, gi := impl.LayerNorm(got, x, scale, bias, eps)
					if math.Abs(float64(gm)-mean) > 1e-6*(1+math.Abs(mean)) || math.Abs(float64(gi)-inv) > 1e-5*inv {
						t.Fatalf("n=%d offset=%v: mean, invStd %v, %v; want %v, %v", n, offset, gm, gi, mean, inv)
					}
					for i, v := range x {
						d := (float64(v) - mean) * inv
						w := d*float64(scale[i]) + float64(bias[i])
						mag := math.Abs(float64(scale[i]))*(max(1, math.Abs(d))+math.Abs(mean)*inv) + math.Abs(float64(bias[i]))
						e := math.Abs(float64(got[i])-w) / mag
						worst = max(worst, e)
						if e > layerNormAbs {
							t.Fatalf("n=%d offset=%v i=%d: got %v, want %v", n, offset, i, got[i], w)
						}
					}
				}
			}
			t.Logf("%s: LayerNorm max error %.3g·(|scale|·(max(1,|x-mean|·inv) + |mean|·inv) + |bias|)", impl.Name, worst)

			x := finiteVector(r, 19, 1)
			x[4] = float32(math.NaN())
			ones, zeros := make([]float32, 19), make([]float32, 19)
			for i := range ones {
				ones[i] = 1
			}
			got := make([]float32, 19)
			impl.LayerNorm(got, x, ones, zeros, 1e-5)
			for i, v := range got {
				if !nan32(v) {
					t.Fatalf("with a NaN: element %d is %v, want NaN", i, v)
				}
			}
		})
	}
}

// BenchmarkRows times Softmax and LayerNorm on rows of the transformer
// preset's lengths (32 steps, d_model 64) and a long row.
func BenchmarkRows(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{32, 64, 1024} {
		x, y := finiteVector(r, n, 2), make([]float32, n)
		scale, bias := finiteVector(r, n, 1), finiteVector(r, n, 1)
		for _, impl := range Implementations() {
			b.Run(fmt.Sprintf("Softmax/n=%d/%s", n, impl.Name), func(b *testing.B) {
				for b.Loop() {
					impl.Softmax(y, x)
				}
				b.ReportMetric(float64(b.N)*float64(n)/float64(b.Elapsed().Nanoseconds()), "elem/ns")
			})
			b.Run(fmt.Sprintf("LayerNorm/n=%d/%s", n, impl.Name), func(b *testing.B) {
				for b.Loop() {
					impl.LayerNorm(y, x, scale, bias, 1e-5)
				}
				b.ReportMetric(float64(b.N)*float64(n)/float64(b.Elapsed().Nanoseconds()), "elem/ns")
			})
		}
	}
}
