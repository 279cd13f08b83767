package vec

import "fmt"

// The kernels of MulAddTransB and MulAdd on amd64 (dotrows_amd64.s) are
// generated with avo by _asm -file dotrows.
//
//go:generate go run -C _asm . -file dotrows -out ../dotrows_amd64.s -stubs ../dotrows_amd64.go -pkg vec

// MulAddTransB adds A·Bᵀ to C: c[i·ldc+j] += Σ_{p<k} a[i·lda+p]·b[j·ldb+p]
// for i < m and j < n, the sum over p taken in order (each product
// accumulated into the partial sums one at a time, in a different order
// from the portable loop on the vector paths). It is the product of a few
// rows (a recurrent state, one token) with the rows of a weight matrix,
// which the blocked GEMM would first pack: here each output is a dot
// product of two contiguous rows, eight of them computed together so that
// B is read once per row of A and the horizontal sums are shared. The
// slices must hold every element the indices reach; it panics otherwise,
// as a slice index out of range does.
func MulAddTransB(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m <= 0 || n <= 0 {
		return
	}
	if k < 0 || lda < k || ldb < k || ldc < n ||
		len(a) < (m-1)*lda+k || len(b) < (n-1)*ldb+k || len(c) < (m-1)*ldc+n {
		panic(fmt.Sprintf("vec: MulAddTransB(%d, %d, %d) with lda %d, ldb %d, ldc %d on slices of %d, %d and %d elements",
			m, n, k, lda, ldb, ldc, len(a), len(b), len(c)))
	}
	if k == 0 {
		return
	}
	mulAddTransB(m, n, k, a, lda, b, ldb, c, ldc)
}

// mulAddTransBPortable is the reference: one dot product per element.
func mulAddTransBPortable(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := range m {
		arow := a[i*lda : i*lda+k]
		crow := c[i*ldc : i*ldc+n]
		for j := range crow {
			brow := b[j*ldb : j*ldb+k]
			s := crow[j]
			for p, x := range arow {
				s += x * brow[p]
			}
			crow[j] = s
		}
	}
}
