package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Every MulAdd implementation matches the float64 sum on sizes around the
// groups of four rows and the one- and two-vector column blocks and their
// masked tail, NaN and infinities propagated, and leaves the elements of
// C between its rows (ldc > n) alone.
func TestMulAddMatchesReference(t *testing.T) {
	impls := mulAddImpls()
	if impls[len(impls)-1].name != "portable" {
		t.Fatalf("the last implementation is %q, want the portable one", impls[len(impls)-1].name)
	}
	if MulAddVectorised() != (len(impls) > 1) {
		t.Fatalf("MulAddVectorised is %v with implementations %v", MulAddVectorised(), impls)
	}
	var ns []int
	for v := 1; v <= 35; v++ {
		ns = append(ns, v)
	}
	ns = append(ns, 47, 48, 49, 64, 100)
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 9))
			for _, m := range []int{1, 3, 4, 5, 8, 9} {
				for _, n := range ns {
					for _, k := range []int{1, 2, 7, 16, 33} {
						lda, ldb, ldc := k+r.IntN(3), n+r.IntN(3), n+r.IntN(3)
						a := make([]float32, (m-1)*lda+k)
						b := make([]float32, (k-1)*ldb+n)
						c := make([]float32, (m-1)*ldc+n)
						for _, x := range [][]float32{a, b, c} {
							for i := range x {
								x[i] = float32(r.NormFloat64())
							}
							sparseSpecials(r, x)
						}
						want := make([]float64, len(c))
						scale := make([]float64, len(c))
						for i, v := range c {
							want[i], scale[i] = float64(v), math.Abs(float64(v))
						}
						for i := range m {
							for j := range n {
								for p := range k {
									prod := float64(a[i*lda+p]) * float64(b[p*ldb+j])
									want[i*ldc+j] += prod
									scale[i*ldc+j] += math.Abs(prod)
								}
							}
						}
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

// MulAdd does nothing on an empty product and panics on a short slice.
func TestMulAddEdges(t *testing.T) {
	c := []float32{1, 2}
	MulAdd(1, 2, 0, nil, 0, nil, 2, c, 2)
	MulAdd(1, 2, 2, []float32{1, 2}, 2, []float32{1, 0, 0, 1}, 2, c, 2)
	if c[0] != 2 || c[1] != 4 {
		t.Fatalf("C = %v, want [2 4]", c)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a B too short for k rows did not panic")
		}
	}()
	MulAdd(1, 2, 2, []float32{1, 2}, 2, []float32{1, 0, 0}, 2, c, 2)
}

func BenchmarkMulAdd(b *testing.B) {
	for _, impl := range mulAddImpls() {
		for _, shape := range [][3]int{{32, 32, 16}, {32, 16, 32}, {8, 256, 64}, {8, 128, 64}} {
			m, n, k := shape[0], shape[1], shape[2]
			b.Run(fmt.Sprintf("%s/%dx%dx%d", impl.name, m, n, k), func(b *testing.B) {
				a, w, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
				for b.Loop() {
					impl.run(m, n, k, a, k, w, n, c, n)
				}
			})
		}
	}
}
