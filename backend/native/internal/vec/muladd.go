package vec

import "fmt"

// MulAdd adds A·B to C: c[i·ldc+j] += Σ_{p<k} a[i·lda+p]·b[p·ldb+j] for
// i < m and j < n, B row-major. The vector paths keep blocks of C (four
// rows by up to two vectors of columns) in registers over the whole of k
// and pack nothing: for the small products of attention heads (32 x 16 by
// 16 x 32), where the blocked GEMM's packing and its 64-column
// micro-kernel cost more than the multiply-adds. Each sum is taken in
// order over p, starting from C's value. The slices must hold every
// element the indices reach; it panics otherwise, as a slice index out of
// range does.
func MulAdd(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m <= 0 || n <= 0 || k <= 0 {
		return
	}
	if lda < k || ldb < n || ldc < n || len(a) < (m-1)*lda+k || len(b) < (k-1)*ldb+n || len(c) < (m-1)*ldc+n {
		panic(fmt.Sprintf("vec: MulAdd(%d, %d, %d) with lda %d, ldb %d, ldc %d on slices of %d, %d and %d elements",
			m, n, k, lda, ldb, ldc, len(a), len(b), len(c)))
	}
	mulAdd(m, n, k, a, lda, b, ldb, c, ldc)
}

// MulAddVectorised reports whether MulAdd runs vector kernels here (it
// runs the portable loop otherwise, slower than the blocked GEMM).
func MulAddVectorised() bool { return mulAddVectorised }

// mulAddVectorised is MulAddVectorised's answer, found once.
var mulAddVectorised = mulAddImpls()[0].name != "portable"

// mulAddPortable is the reference: each element of C a sum over p in
// order.
func mulAddPortable(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := range m {
		crow := c[i*ldc : i*ldc+n]
		for p := range k {
			x := a[i*lda+p]
			brow := b[p*ldb : p*ldb+n]
			for j := range crow {
				crow[j] += x * brow[j]
			}
		}
	}
}
