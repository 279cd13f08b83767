package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Every implementation agrees with the triple loop on every m in 1..40
// and n in 1..70 (every partial block of every kernel shape: rows below
// mr, columns below nr and their masks, each narrow kernel of the last
// columns), with the depth, the transposes and
// alpha and beta varying from product to product, and on a few products
// larger than a tile in every dimension.
func TestGemmOddSizesMatchNaive(t *testing.T) {
	depths := []int{1, 2, 7, 17, 40}
	scales := [][2]float64{{1, 0}, {1, 1}, {-0.5, 0.25}, {2, -1}}
	for _, impl := range Implementations() {
		t.Run(impl.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, 12))
			i := 0
			for m := 1; m <= 40; m++ {
				for n := 1; n <= 70; n++ {
					i++
					k := depths[i%len(depths)]
					s := scales[(i/len(depths))%len(scales)]
					checkProduct(t, r, &impl, m, n, k, s[0], s[1], i%4, 1)
				}
			}
			// On two threads: large products; few-rows ones, whose
			// columns are split; and small ones, whose tiles are cut
			// narrower or shorter for the threads (tileShape).
			for _, sz := range [][3]int{{200, 1100, 300}, {97, 577, 513}, {1, 1100, 300}, {3, 577, 513}, {4, 130, 600}, {16, 1024, 144}, {64, 64, 40}, {37, 300, 33}} {
				for trans := range 4 {
					checkProduct(t, r, &impl, sz[0], sz[1], sz[2], 0.5, 1.5, trans, 2)
				}
			}
		})
	}
}

// checkProduct compares one float64 and one float32 product of random
// operands (transposes: bit 0 for A, bit 1 for B) with naiveGemm. C sits
// in a larger buffer, its rows 3 elements apart more than its width and
// 2 more rows after it, all NaN: a kernel that writes outside the block
// (a mask or a row too many) fails too.
func checkProduct(t *testing.T, r *rand.Rand, im *Impl, m, n, k int, alpha, beta float64, trans, threads int) {
	t.Helper()
	transA, transB := trans&1 != 0, trans&2 != 0
	a, b, c := randomSlice(r, m*k), randomSlice(r, k*n), randomSlice(r, m*n)
	want := naiveGemm(m, n, k, alpha, a, transA, b, transB, beta, c)
	lda, ldb, ldc := k, n, n+3
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	name := fmt.Sprintf("%dx%dx%d alpha=%v beta=%v transA=%v transB=%v", m, n, k, alpha, beta, transA, transB)
	check := func(what string, got func(i int) float64) {
		for i := range (m + 2) * ldc {
			row, col := i/ldc, i%ldc
			g := got(i)
			if row >= m || col >= n {
				if !math.IsNaN(g) {
					t.Fatalf("%s %s: wrote %v outside C, at row %d column %d", name, what, g, row, col)
				}
				continue
			}
			w, tol := want[row*n+col], 1e-12*float64(k+1)
			if what == "float32" {
				tol = 2e-6 * float64(k+1)
			}
			if math.Abs(g-w) > tol {
				t.Fatalf("%s %s: element (%d, %d) got %v, want %v", name, what, row, col, g, w)
			}
		}
	}

	got64 := make([]float64, (m+2)*ldc)
	for i := range got64 {
		got64[i] = math.NaN()
	}
	for i := range m {
		copy(got64[i*ldc:], c[i*n:(i+1)*n])
	}
	multiply(im, m, n, k, alpha, NewMatrix(a, lda, transA), NewMatrix(b, ldb, transB), beta, got64, ldc, threads)
	check("float64", func(i int) float64 { return got64[i] })

	got32 := toF32(got64)
	for i := range got32 {
		got32[i] = float32(math.NaN())
	}
	for i := range m {
		copy(got32[i*ldc:], toF32(c[i*n:(i+1)*n]))
	}
	multiply(im, m, n, k, float32(alpha), NewMatrix(toF32(a), lda, transA), NewMatrix(toF32(b), ldb, transB), float32(beta), got32, ldc, threads)
	check("float32", func(i int) float64 { return float64(got32[i]) })
}

// Signed zeros come out of every implementation as out of the portable
// one, bit for bit: C's -0 kept or replaced according to beta, and the
// sign alpha gives a zero product when C is overwritten; on the blocked
// path and the few-columns one.
func TestGemmSignedZerosMatchPortable(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	// 70: the last 6 columns through the narrowest kernel.
	for _, n := range []int{70, 1, 3} {
		checkSignedZeros(t, r, 9, n, 5)
	}
}

func checkSignedZeros(t *testing.T, r *rand.Rand, m, n, k int) {
	negZero := math.Copysign(0, -1)
	zeros := func(size int) []float64 {
		s := make([]float64, size)
		for i := range s {
			if r.IntN(2) == 0 {
				s[i] = negZero
			}
		}
		return s
	}
	for _, impl := range Implementations() {
		for _, alpha := range []float64{1, -1} {
			for _, beta := range []float64{0, 1} {
				// B as stored is read in place; transposed, it is packed.
				for _, trans := range []bool{false, true} {
					ldb := n
					if trans {
						ldb = k
					}
					a, b, c := zeros(m*k), zeros(k*n), zeros(m*n)
					got, want := append([]float64{}, c...), append([]float64{}, c...)
					multiply(&impl, m, n, k, alpha, NewMatrix(a, k, false), NewMatrix(b, ldb, trans), beta, got, n, 1)
					multiply(&portable, m, n, k, alpha, NewMatrix(a, k, false), NewMatrix(b, ldb, trans), beta, want, n, 1)
					got32, want32 := toF32(c), toF32(c)
					multiply(&impl, m, n, k, float32(alpha), NewMatrix(toF32(a), k, false), NewMatrix(toF32(b), ldb, trans), float32(beta), got32, n, 1)
					multiply(&portable, m, n, k, float32(alpha), NewMatrix(toF32(a), k, false), NewMatrix(toF32(b), ldb, trans), float32(beta), want32, n, 1)
					for i := range want {
						if math.Signbit(got[i]) != math.Signbit(want[i]) || got[i] != 0 {
							t.Fatalf("%s %dx%dx%d alpha=%v beta=%v trans=%v float64: element %d got %v, portable %v", impl.Name, m, n, k, alpha, beta, trans, i, got[i], want[i])
						}
						if math.Signbit(float64(got32[i])) != math.Signbit(float64(want32[i])) || got32[i] != 0 {
							t.Fatalf("%s %dx%dx%d alpha=%v beta=%v trans=%v float32: element %d got %v, portable %v", impl.Name, m, n, k, alpha, beta, trans, i, got32[i], want32[i])
						}
					}
				}
			}
		}
	}
}

// Every implementation agrees with the portable one on products whose B
// is read in place (row-major, at least one whole panel of the widest
// kernel) with a leading dimension past its width (the columns in
// between are NaN: reading one shows), across tile edges in every
// dimension, with NaN, infinities and signed zeros in A and B, and a C
// with a leading dimension of its own and NaN around it.
func TestGemmStridedBMatchesPortable(t *testing.T) {
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 0}
	// Every width of the last block of columns: 1 to 4 vectors, whole
	// or under a mask.
	shapes := [][3]int{{1, 64, 1}, {5, 64, 3}, {6, 65, 4}, {7, 127, 5}, {13, 128, 9}, {97, 200, 17}, {12, 600, 258}, {100, 530, 260},
		{2, 10, 3}, {3, 20, 8}, {4, 40, 5}, {9, 100, 7}, {8, 48, 6}, {5, 96, 2}}
	r := rand.New(rand.NewPCG(21, 22))
	for _, impl := range Implementations() {
		for i, sz := range shapes {
			m, n, k := sz[0], sz[1], sz[2]
			for _, extra := range []int{0, 3, 64} {
				ldb, ldc := n+extra, n+2
				a := toF32(randomSlice(r, m*k))
				b := make([]float32, k*ldb)
				for p := range k {
					for j := range ldb {
						b[p*ldb+j] = float32(math.NaN())
						if j < n {
							b[p*ldb+j] = float32(r.Float64()*2 - 1)
						}
					}
				}
				for range 3 {
					a[r.IntN(len(a))] = specials[r.IntN(len(specials))]
					b[r.IntN(k)*ldb+r.IntN(n)] = specials[r.IntN(len(specials))]
				}
				alpha, beta := float32(1), float32(0)
				if i%2 == 1 {
					alpha, beta = -0.5, 1.5
				}
				c := make([]float32, (m+1)*ldc)
				for j := range c {
					c[j] = float32(math.NaN())
					if j/ldc < m && j%ldc < n {
						c[j] = float32(r.Float64())
					}
				}
				got, want := append([]float32(nil), c...), append([]float32(nil), c...)
				for _, threads := range []int{1, 2} {
					multiply(&impl, m, n, k, alpha, NewMatrix(a, k, false), NewMatrix(b, ldb, false), beta, got, ldc, threads)
					multiply(&portable, m, n, k, alpha, NewMatrix(a, k, false), NewMatrix(b, ldb, false), beta, want, ldc, 1)
					for j := range want {
						g, w := float64(got[j]), float64(want[j])
						same := math.IsNaN(g) && math.IsNaN(w) || math.IsInf(w, 0) && g == w ||
							!math.IsNaN(w) && !math.IsInf(w, 0) && math.Abs(g-w) <= 1e-4*float64(k) && (w != 0 || math.Signbit(g) == math.Signbit(w))
						if !same {
							t.Fatalf("%s %dx%dx%d ldb=%d threads=%d: C[%d, %d] got %v, portable %v", impl.Name, m, n, k, ldb, threads, j/ldc, j%ldc, g, w)
						}
					}
				}
			}
		}
	}
}
