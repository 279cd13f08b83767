package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// naiveGemm is the textbook triple loop in float64, the reference the
// blocked GEMM is checked against.
func naiveGemm(m, n, k int, alpha float64, a []float64, transA bool, b []float64, transB bool, beta float64, c []float64) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var sum float64
			for p := range k {
				av := a[i*k+p]
				if transA {
					av = a[p*m+i]
				}
				bv := b[p*n+j]
				if transB {
					bv = b[j*k+p]
				}
				sum += av * bv
			}
			out[i*n+j] = alpha*sum + beta*c[i*n+j]
		}
	}
	return out
}

func randomSlice(r *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = r.Float64()*2 - 1
	}
	return s
}

// The blocked GEMM agrees with the triple loop whatever the shapes (edges
// of every block size), transposes and threads, with every implementation
// this machine runs (assembly on amd64 with AVX2/FMA, and the portable
// one).
func TestGemmMatchesNaiveReference(t *testing.T) {
	impls := Implementations()
	if impls[len(impls)-1].Name != "portable" {
		t.Fatalf("the last implementation is %q, want the portable one", impls[len(impls)-1].Name)
	}
	for _, impl := range impls {
		t.Run(impl.Name, func(t *testing.T) { checkGemmAgainstNaive(t, &impl) })
	}
}

func checkGemmAgainstNaive(t *testing.T, im *Impl) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := [][3]int{{1, 1, 1}, {3, 5, 7}, {4, 4, 4}, {5, 3, 1}, {6, 16, 9}, {7, 17, 2}, {17, 9, 300}, {65, 257, 31}, {97, 33, 5}, {130, 70, 513}, {1, 300, 20}, {2, 1000, 37}, {4, 33, 1000}, {5, 40, 9}}
	for _, sz := range sizes {
		m, n, k := sz[0], sz[1], sz[2]
		for _, trans := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, threads := range []int{1, 3} {
				name := fmt.Sprintf("%dx%dx%d/tA=%v/tB=%v/threads=%d", m, n, k, trans[0], trans[1], threads)
				t.Run(name, func(t *testing.T) {
					a, b, c := randomSlice(r, m*k), randomSlice(r, k*n), randomSlice(r, m*n)
					alpha, beta := 0.75, -1.5
					want := naiveGemm(m, n, k, alpha, a, trans[0], b, trans[1], beta, c)

					lda, ldb := k, n
					if trans[0] {
						lda = m
					}
					if trans[1] {
						ldb = k
					}
					got64 := append([]float64{}, c...)
					multiply(im, m, n, k, alpha, NewMatrix(a, lda, trans[0]), NewMatrix(b, ldb, trans[1]), beta, got64, n, threads)
					for i := range want {
						if math.Abs(got64[i]-want[i]) > 1e-9*float64(k+1) {
							t.Fatalf("float64 element %d: got %v, want %v", i, got64[i], want[i])
						}
					}

					a32, b32, c32 := toF32(a), toF32(b), toF32(c)
					multiply(im, m, n, k, float32(alpha), NewMatrix(a32, lda, trans[0]), NewMatrix(b32, ldb, trans[1]), float32(beta), c32, n, threads)
					for i := range want {
						if math.Abs(float64(c32[i])-want[i]) > 1e-5*float64(k+1) {
							t.Fatalf("float32 element %d: got %v, want %v", i, c32[i], want[i])
						}
					}
				})
			}
		}
	}
}

// With beta 0, C is written without being read: a NaN there does not
// propagate, on the few-rows path and the blocked one alike.
func TestGemmBetaZeroIgnoresNaNInC(t *testing.T) {
	for _, impl := range Implementations() {
		for _, m := range []int{1, 7} {
			a, b := make([]float32, 2*m), []float32{3, 4}
			c := make([]float32, m)
			for i := range m {
				a[2*i], a[2*i+1] = 1, 2
				c[i] = float32(math.NaN())
			}
			multiply(&impl, m, 1, 2, 1, NewMatrix(a, 2, false), NewMatrix(b, 1, false), 0, c, 1, 1)
			for i := range c {
				if c[i] != 11 {
					t.Fatalf("%s, m=%d: row %d got %v, want 11", impl.Name, m, i, c[i])
				}
			}
		}
	}
}

// Every implementation propagates NaN and infinities in A and B as the
// portable one does (which element of C is NaN, +Inf or -Inf), and agrees
// with it on the finite ones, on odd sizes and on the few-rows path.
func TestGemmSpecialValuesMatchPortable(t *testing.T) {
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1))}
	r := rand.New(rand.NewPCG(5, 6))
	for _, impl := range Implementations() {
		// Past the few-rows path (m > FewRowsMax), every width of the
		// last block of columns, 1 to 4 vectors: with transB, B is packed
		// and the narrow kernels read the wide one's panel.
		for _, sz := range [][3]int{{1, 37, 19}, {3, 9, 8}, {7, 23, 17}, {13, 40, 33}, {13, 1, 33}, {9, 3, 17}, {40, 4, 70},
			{7, 70, 9}, {6, 84, 5}, {9, 100, 11}, {5, 128, 4}} {
			m, n, k := sz[0], sz[1], sz[2]
			for _, trans := range []bool{false, true} {
				a, b := toF32(randomSlice(r, m*k)), toF32(randomSlice(r, k*n))
				for range 3 {
					a[r.IntN(len(a))] = specials[r.IntN(len(specials))]
					b[r.IntN(len(b))] = specials[r.IntN(len(specials))]
				}
				ldb := n
				if trans {
					ldb = k
				}
				got, want := make([]float32, m*n), make([]float32, m*n)
				multiply(&impl, m, n, k, 1, NewMatrix(a, k, false), NewMatrix(b, ldb, trans), 0, got, n, 1)
				multiply(&portable, m, n, k, 1, NewMatrix(a, k, false), NewMatrix(b, ldb, trans), 0, want, n, 1)
				for i := range want {
					g, w := float64(got[i]), float64(want[i])
					same := math.IsNaN(g) && math.IsNaN(w) || math.IsInf(w, 0) && g == w ||
						!math.IsNaN(w) && !math.IsInf(w, 0) && math.Abs(g-w) <= 1e-5*float64(k)
					if !same {
						t.Fatalf("%s %dx%dx%d transB=%v: element %d got %v, portable %v", impl.Name, m, n, k, trans, i, g, w)
					}
				}
			}
		}
	}
}

// A product whose B comes from a block writer (here copying a stored B)
// equals the product of the stored B, through every implementation
// (in place or packed), on one thread and two; the blocks it asks for
// lie inside B.
func TestMultiplyImplicitBMatchesStoredB(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, impl := range Implementations() {
		for _, sz := range [][3]int{{5, 300, 7}, {97, 33, 260}, {6, 16, 9}, {130, 1100, 300}, {7, 65, 3}} {
			m, n, k := sz[0], sz[1], sz[2]
			a, b := toF32(randomSlice(r, m*k)), toF32(randomSlice(r, k*n))
			bm := NewMatrix(b, n, false)
			want, got := make([]float32, m*n), make([]float32, m*n)
			multiply(&impl, m, n, k, 1, NewMatrix(a, k, false), bm, 0, want, n, 1)
			writeB := func(dst []float32, p0, j0, kc, nc int) {
				if p0 < 0 || j0 < 0 || kc < 1 || nc < 1 || p0+kc > k || j0+nc > n {
					// Errorf: writers run on the product's workers.
					t.Errorf("%s %dx%dx%d: asked for the %dx%d block at (%d, %d)", impl.Name, m, n, k, kc, nc, p0, j0)
					return
				}
				for p := range kc {
					copy(dst[p*nc:(p+1)*nc], b[(p0+p)*n+j0:])
				}
			}
			for _, threads := range []int{1, 2} {
				multiplyImplicitB(&impl, m, n, k, 1, NewMatrix(a, k, false), writeB, 0, got, n, threads)
				for i := range want {
					if math.Abs(float64(got[i]-want[i])) > 1e-5*float64(k) {
						t.Fatalf("%s %dx%dx%d, %d threads: element %d got %v, want %v", impl.Name, m, n, k, threads, i, got[i], want[i])
					}
				}
			}
		}
	}
}

func TestGemmSimpleIntegers(t *testing.T) {
	// [[1 2 3] [4 5 6]] x [[1 0] [0 1] [1 1]] = [[4 5] [10 11]]; then 2*AB + 1*C.
	a := []int32{1, 2, 3, 4, 5, 6}
	b := []int32{1, 0, 0, 1, 1, 1}
	c := []int32{1, 1, 1, 1}
	MultiplySimple(2, 2, 3, 2, a, 3, false, b, 2, false, 1, c, 2)
	want := []int32{9, 11, 21, 23}
	for i := range want {
		if c[i] != want[i] {
			t.Fatalf("got %v, want %v", c, want)
		}
	}
	// Transposed operands: A stored as 3x2, B stored as 2x3.
	at := []int32{1, 4, 2, 5, 3, 6}
	bt := []int32{1, 0, 1, 0, 1, 1}
	c = []int32{0, 0, 0, 0}
	MultiplySimple(2, 2, 3, 1, at, 2, true, bt, 3, true, 0, c, 2)
	want = []int32{4, 5, 10, 11}
	for i := range want {
		if c[i] != want[i] {
			t.Fatalf("transposed: got %v, want %v", c, want)
		}
	}
}

func toF32(s []float64) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}

func BenchmarkGemm(b *testing.B) {
	for _, impl := range Implementations() {
		b.Run(impl.Name, func(b *testing.B) { benchmarkGemm(b, &impl) })
	}
}

func benchmarkGemm(b *testing.B, im *Impl) {
	for _, n := range []int{64, 256, 512} {
		for _, threads := range []int{1, 0} {
			b.Run(fmt.Sprintf("float32/%d/threads=%d", n, threads), func(b *testing.B) {
				r := rand.New(rand.NewPCG(3, 4))
				x, y := toF32(randomSlice(r, n*n)), toF32(randomSlice(r, n*n))
				c := make([]float32, n*n)
				b.SetBytes(0)
				b.ResetTimer()
				for b.Loop() {
					multiply(im, n, n, n, 1, NewMatrix(x, n, false), NewMatrix(y, n, false), 0, c, n, threads)
				}
				b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
			})
		}
		b.Run(fmt.Sprintf("float64/%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 4))
			x, y := randomSlice(r, n*n), randomSlice(r, n*n)
			c := make([]float64, n*n)
			for b.Loop() {
				multiply(im, n, n, n, 1, NewMatrix(x, n, false), NewMatrix(y, n, false), 0, c, n, 0)
			}
			b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
}

// Packing B panels lays out B[p0+p, j0+jr+j] at panel jr, row p, lane j,
// and zeros past the block's last column, whatever B's layout: the
// transposed one (contiguous columns) has its own loop.
func TestPackPanelsBLayouts(t *testing.T) {
	for _, impl := range Implementations() {
		t.Run(impl.Name, func(t *testing.T) { checkPackPanelsBLayouts(t, &impl) })
	}
}

func checkPackPanelsBLayouts(t *testing.T, im *Impl) {
	const k, n = 37, 45
	data := make([]float32, k*n)
	for i := range data {
		data[i] = float32(i + 1)
	}
	for _, trans := range []bool{false, true} {
		ld := n
		if trans {
			ld = k
		}
		b := NewMatrix(data, ld, trans)
		at := func(p, j int) float32 { return b.data[p*b.rowStep+j*b.colStep] }
		for _, blk := range [][5]int{{0, 0, k, n, 16}, {3, 5, 20, 29, 16}, {1, 2, 36, 43, 8}, {0, 40, 7, 5, 4}, {0, 0, k, n, 64}, {2, 3, 33, 42, 64}, {1, 0, 24, 45, 32}} {
			p0, j0, kc, nc, nr := blk[0], blk[1], blk[2], blk[3], blk[4]
			got := make([]float32, roundUp(nc, nr)*kc)
			for i := range got {
				got[i] = float32(math.NaN())
			}
			packPanelsB(im, got, b, p0, j0, kc, nc, nr)
			for jr := 0; jr < nc; jr += nr {
				for p := range kc {
					for j := range nr {
						var want float32
						if jr+j < nc {
							want = at(p0+p, j0+jr+j)
						}
						if g := got[jr*kc+p*nr+j]; g != want {
							t.Fatalf("trans %v, block %v: panel %d row %d lane %d = %v, want %v", trans, blk, jr/nr, p, j, g, want)
						}
					}
				}
			}
		}
	}
}
