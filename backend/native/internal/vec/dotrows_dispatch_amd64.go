//go:build amd64 && !purego

package vec

import "golang.org/x/sys/cpu"

// mulAddTransB is the best kernel this processor runs. The AVX-512 one
// also uses YMM registers past the sixteenth (AVX512VL) and BZHI (BMI2)
// for its tail mask.
var mulAddTransB = mulAddTransBImpls()[0].run

// mulAddTransBImpl is one implementation of MulAddTransB, named for tests
// and benchmarks.
type mulAddTransBImpl struct {
	name string
	run  func(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int)
}

// mulAddTransBImpls lists the implementations this machine runs, best
// first, the portable one last.
func mulAddTransBImpls() []mulAddTransBImpl {
	var list []mulAddTransBImpl
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasBMI2 {
			list = append(list, mulAddTransBImpl{"avx512", withDotRows8(dotRows8PairAVX512, dotRows8AVX512)})
		}
		list = append(list, mulAddTransBImpl{"avx2", withDotRows8(nil, dotRows8AVX2)})
	}
	return append(list, mulAddTransBImpl{"portable", mulAddTransBPortable})
}

// dotRowsKernel is the signature of the generated kernels: for the
// dotRows8 kernels m rows (or m pairs of rows) of A by 8·groups rows of B;
// for the mulAddRows kernels m groups of rows of A, n columns of B.
type dotRowsKernel func(m, groups, k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

// withDotRows8 runs the columns in groups of eight through the kernels,
// rows of A two at a time through pair (when not nil) and the rest
// through single, and the n mod 8 columns left in the portable loop. The
// caller (MulAddTransB) has checked the slices' lengths.
func withDotRows8(pair, single dotRowsKernel) func(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	return func(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
		groups := n / 8
		if groups > 0 && k > 0 && m > 0 {
			pairs := 0
			if pair != nil {
				pairs = m / 2
			}
			if pairs > 0 {
				pair(pairs, groups, k, &a[0], lda, &b[0], ldb, &c[0], ldc)
			}
			if done := 2 * pairs; done < m {
				single(m-done, groups, k, &a[done*lda], lda, &b[0], ldb, &c[done*ldc], ldc)
			}
		}
		if rest := n - 8*groups; rest > 0 {
			done := 8 * groups
			mulAddTransBPortable(m, rest, k, a, lda, b[done*ldb:], ldb, c[done:], ldc)
		}
	}
}

// mulAdd is the best MulAdd kernel this processor runs.
var mulAdd = mulAddImpls()[0].run

// mulAddImpls lists the MulAdd implementations this machine runs, best
// first, the portable one last.
func mulAddImpls() []mulAddTransBImpl {
	var list []mulAddTransBImpl
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		if cpu.X86.HasAVX512F && cpu.X86.HasBMI2 {
			list = append(list, mulAddTransBImpl{"avx512", withMulAddRows(mulAddRows4AVX512, mulAddRows1AVX512)})
		}
		list = append(list, mulAddTransBImpl{"avx2", withMulAddRows(mulAddRows4AVX2, mulAddRows1AVX2)})
	}
	return append(list, mulAddTransBImpl{"portable", mulAddPortable})
}

// withMulAddRows runs the rows of A four at a time through four and the
// m mod 4 left through one. The caller (MulAdd) has checked the slices'
// lengths and that no size is zero.
func withMulAddRows(four, one dotRowsKernel) func(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	return func(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
		if m <= 0 || n <= 0 || k <= 0 {
			return
		}
		groups := m / 4
		if groups > 0 {
			four(groups, n, k, &a[0], lda, &b[0], ldb, &c[0], ldc)
		}
		if done := 4 * groups; done < m {
			one(m-done, n, k, &a[done*lda], lda, &b[0], ldb, &c[done*ldc], ldc)
		}
	}
}
