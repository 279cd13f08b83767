package native

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
// of every block size), transposes and threads, with the micro-kernel
// this machine selects (assembly on amd64 with AVX2/FMA) and with the
// portable one.
func TestGemmMatchesNaiveReference(t *testing.T) {
	t.Logf("assembly micro-kernels: %v", useAsmKernels)
	checkGemmAgainstNaive(t)
	if useAsmKernels {
		t.Run("portable", func(t *testing.T) {
			useAsmKernels = false
			defer func() { useAsmKernels = true }()
			checkGemmAgainstNaive(t)
		})
	}
}

func checkGemmAgainstNaive(t *testing.T) {
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
					gemm(m, n, k, alpha, newMatrix(a, lda, trans[0]), newMatrix(b, ldb, trans[1]), beta, got64, n, threads)
					for i := range want {
						if math.Abs(got64[i]-want[i]) > 1e-9*float64(k+1) {
							t.Fatalf("float64 element %d: got %v, want %v", i, got64[i], want[i])
						}
					}

					a32, b32, c32 := toF32(a), toF32(b), toF32(c)
					gemm(m, n, k, float32(alpha), newMatrix(a32, lda, trans[0]), newMatrix(b32, ldb, trans[1]), float32(beta), c32, n, threads)
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

func TestGemmBetaZeroIgnoresNaNInC(t *testing.T) {
	a, b := []float32{1, 2}, []float32{3, 4}
	c := []float32{float32(math.NaN())}
	gemm(1, 1, 2, 1, newMatrix(a, 2, false), newMatrix(b, 1, false), 0, c, 1, 1)
	if c[0] != 11 {
		t.Fatalf("got %v, want 11", c[0])
	}
}

func TestGemmSimpleIntegers(t *testing.T) {
	// [[1 2 3] [4 5 6]] x [[1 0] [0 1] [1 1]] = [[4 5] [10 11]]; then 2*AB + 1*C.
	a := []int32{1, 2, 3, 4, 5, 6}
	b := []int32{1, 0, 0, 1, 1, 1}
	c := []int32{1, 1, 1, 1}
	gemmSimple(2, 2, 3, 2, a, 3, false, b, 2, false, 1, c, 2)
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
	gemmSimple(2, 2, 3, 1, at, 2, true, bt, 3, true, 0, c, 2)
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
	for _, n := range []int{64, 256, 512} {
		for _, threads := range []int{1, 0} {
			b.Run(fmt.Sprintf("float32/%d/threads=%d", n, threads), func(b *testing.B) {
				r := rand.New(rand.NewPCG(3, 4))
				x, y := toF32(randomSlice(r, n*n)), toF32(randomSlice(r, n*n))
				c := make([]float32, n*n)
				b.SetBytes(0)
				b.ResetTimer()
				for b.Loop() {
					gemm(n, n, n, 1, newMatrix(x, n, false), newMatrix(y, n, false), 0, c, n, threads)
				}
				b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
			})
		}
		b.Run(fmt.Sprintf("float64/%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 4))
			x, y := randomSlice(r, n*n), randomSlice(r, n*n)
			c := make([]float64, n*n)
			for b.Loop() {
				gemm(n, n, n, 1, newMatrix(x, n, false), newMatrix(y, n, false), 0, c, n, 0)
			}
			b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
}

// Packing B panels lays out B[p0+p, j0+jr+j] at panel jr, row p, lane j,
// and zeros past the block's last column, whatever B's layout: the
// transposed one (contiguous columns) has its own loop.
func TestPackPanelsBLayouts(t *testing.T) {
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
		b := newMatrix(data, ld, trans)
		at := func(p, j int) float32 { return b.data[p*b.rowStep+j*b.colStep] }
		for _, blk := range [][5]int{{0, 0, k, n, 16}, {3, 5, 20, 29, 16}, {1, 2, 36, 43, 8}, {0, 40, 7, 5, 4}} {
			p0, j0, kc, nc, nr := blk[0], blk[1], blk[2], blk[3], blk[4]
			got := make([]float32, roundUp(nc, nr)*kc)
			for i := range got {
				got[i] = float32(math.NaN())
			}
			packPanelsB(got, b, p0, j0, kc, nc, nr)
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
