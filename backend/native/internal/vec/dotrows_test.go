package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// mulAddTransBReference is MulAddTransB in float64, with the sum of the
// products' magnitudes for the error bound.
func mulAddTransBReference(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) (want, scale []float64) {
	want, scale = make([]float64, len(c)), make([]float64, len(c))
	for i, v := range c {
		want[i], scale[i] = float64(v), math.Abs(float64(v))
	}
	for i := range m {
		for j := range n {
			for p := range k {
				prod := float64(a[i*lda+p]) * float64(b[j*ldb+p])
				want[i*ldc+j] += prod
				scale[i*ldc+j] += math.Abs(prod)
			}
		}
	}
	return want, scale
}

// sparseSpecials puts a special value (NaN, ±Inf, signed zeros) at about
// one element in 97, few enough that most sums stay finite.
func sparseSpecials(r *rand.Rand, x []float32) {
	for i := range x {
		if r.IntN(97) == 0 {
			x[i] = specials[r.IntN(len(specials))]
		}
	}
}

// Every implementation matches the float64 sum on every size around the
// vector widths and the groups of eight columns, with NaN and infinities
// propagated as the arithmetic has them, and leaves the elements of C
// between its rows (ldc > n) alone.
func TestMulAddTransBMatchesReference(t *testing.T) {
	impls := mulAddTransBImpls()
	if impls[len(impls)-1].name != "portable" {
		t.Fatalf("the last implementation is %q, want the portable one", impls[len(impls)-1].name)
	}
	var ks, ns []int
	for v := range 18 {
		ks, ns = append(ks, v), append(ns, v)
	}
	ks = append(ks, 31, 32, 33, 64, 65, 100)
	ns = append(ns, 23, 24, 25, 64, 200)
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(12, 1))
			for _, m := range []int{1, 2, 3, 5} {
				for _, n := range ns {
					for _, k := range ks {
						lda, ldb, ldc := k+r.IntN(3), k+r.IntN(3), n+r.IntN(3)
						a := randomVector(r, max(0, (m-1)*lda+k), 1)
						b := randomVector(r, max(0, (n-1)*ldb+k), 1)
						c := randomVector(r, max(0, (m-1)*ldc+n), 1)
						for _, x := range [][]float32{a, b, c} {
							for i := range x {
								x[i] = float32(r.NormFloat64())
							}
							sparseSpecials(r, x)
						}
						want, scale := mulAddTransBReference(m, n, k, a, lda, b, ldb, c, ldc)
						got := append([]float32(nil), c...)
						impl.run(m, n, k, a, lda, b, ldb, got, ldc)
						for i := range got {
							if err := compareSum(got[i], want[i], scale[i]); err != nil {
								t.Fatalf("m=%d n=%d k=%d lda=%d ldb=%d ldc=%d: c[%d] %v", m, n, k, lda, ldb, ldc, i, err)
							}
						}
					}
				}
			}
		})
	}
}

// compareSum checks a float32 sum of products against its float64
// value: the same NaN or infinity, or within float32 rounding of every
// partial sum (scale is the sum of the magnitudes).
func compareSum(got float32, want, scale float64) error {
	g := float64(got)
	switch {
	case math.IsNaN(want):
		if !math.IsNaN(g) {
			return fmt.Errorf("is %v, want NaN", got)
		}
	case math.IsInf(want, 0):
		if g != want {
			return fmt.Errorf("is %v, want %v", got, want)
		}
	case math.Abs(g-want) > 1e-6*(scale+1):
		return fmt.Errorf("is %v, want %v (sum of magnitudes %v)", got, want, scale)
	}
	return nil
}

// MulAddTransB leaves C alone when there is nothing to add, and panics on
// a slice too short for its indices instead of reading past it.
func TestMulAddTransBEdges(t *testing.T) {
	c := []float32{1, 2, 3}
	MulAddTransB(1, 3, 0, nil, 0, nil, 0, c, 3)
	MulAddTransB(0, 3, 4, nil, 4, nil, 4, c, 3)
	if c[0] != 1 || c[1] != 2 || c[2] != 3 {
		t.Fatalf("an empty product changed C to %v", c)
	}
	MulAddTransB(1, 3, 2, []float32{1, 2}, 2, []float32{1, 0, 0, 1, 1, 1}, 2, c, 3)
	if c[0] != 2 || c[1] != 4 || c[2] != 6 {
		t.Fatalf("C = %v, want [2 4 6]", c)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a B too short for n rows did not panic")
		}
	}()
	MulAddTransB(1, 3, 2, []float32{1, 2}, 2, []float32{1, 0, 0, 1, 1}, 2, c, 3)
}

func BenchmarkMulAddTransB(b *testing.B) {
	for _, impl := range mulAddTransBImpls() {
		for _, shape := range [][3]int{{1, 256, 64}, {1, 128, 64}, {8, 256, 64}} {
			m, n, k := shape[0], shape[1], shape[2]
			b.Run(fmt.Sprintf("%s/%dx%dx%d", impl.name, m, n, k), func(b *testing.B) {
				a, w, c := make([]float32, m*k), make([]float32, n*k), make([]float32, m*n)
				for i := range w {
					w[i] = float32(i%7) * 0.1
				}
				for b.Loop() {
					impl.run(m, n, k, a, k, w, k, c, n)
				}
			})
		}
	}
}
