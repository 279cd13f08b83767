package gemm

// FewRowsMax is the most rows of A (and C) for which gemmFewRows is used
// instead of the blocked product: with so few rows, packing B into panels
// costs about as much as the multiply-adds it feeds, since each packed
// value is used only once or twice. Batch-1 inference through Gemm and
// MatMul is the common case.
const FewRowsMax = 4

// gemmFewRows computes C = alpha·A·B + beta·C for an A of few rows, row by row with vector kernels and without packing:
// when B's rows are contiguous, each row of C is a sum of rows of B
// scaled by A's elements (axpy); when its columns are (B transposed, as
// the weights of a Gemm with transB), each element of C is a dot product
// of a row of A with a column of B. It reports whether it applied (im has
// row kernels for T, and B is laid out one way or the other).
func gemmFewRows[T Float](im *Impl, m, n, k int, alpha T, a, b Matrix[T], beta T, c []T, ldc int) bool {
	kern, ok := rowKernels[T](im)
	if !ok || m > FewRowsMax || b.colStep != 1 && b.rowStep != 1 {
		return false
	}
	scaleRows(m, n, beta, c, ldc)
	switch {
	case b.colStep == 1:
		for i := range m {
			row := c[i*ldc : i*ldc+n]
			for p := range k {
				kern.Axpy(alpha*a.data[i*a.rowStep+p*a.colStep], b.data[p*b.rowStep:p*b.rowStep+n], row)
			}
		}
	case b.rowStep == 1:
		var buf []T
		for i := range m {
			// A's row, contiguous: as stored, or gathered (A transposed).
			var arow []T
			if a.colStep == 1 {
				arow = a.data[i*a.rowStep : i*a.rowStep+k]
			} else {
				if buf == nil {
					buf = make([]T, k)
				}
				for p := range k {
					buf[p] = a.data[i*a.rowStep+p*a.colStep]
				}
				arow = buf
			}
			row := c[i*ldc : i*ldc+n]
			for j := range row {
				row[j] += alpha * kern.Dot(arow, b.data[j*b.colStep:j*b.colStep+k])
			}
		}
	}
	return true
}

// FewColumnsMax is the most columns of B (and C) for which
// gemmFewColumns is used instead of the blocked product: a product of
// one to four columns (a 1×1 convolution on a 1×1 image, as the
// squeeze-excitation blocks of MobileNet-v3 run; a matrix times a few
// vectors) would pack all of A for a kernel whose 64-column block is
// nearly all padding.
const FewColumnsMax = 4

// gemmFewColumns computes C = alpha·A·B + beta·C for a B of few columns,
// each element of C the dot product of a row of A with a column of B,
// without packing: A's rows must be contiguous; a column of B that is
// not is gathered once. It reports whether it applied (im has row
// kernels for T, and the shapes and layout fit).
func gemmFewColumns[T Float](im *Impl, m, n, k int, alpha T, a, b Matrix[T], beta T, c []T, ldc int) bool {
	kern, ok := rowKernels[T](im)
	if !ok || n > FewColumnsMax || a.colStep != 1 {
		return false
	}
	if beta != 0 {
		scaleRows(m, n, beta, c, ldc)
	}
	var buf *[]T
	for j := range n {
		var col []T
		if b.rowStep == 1 {
			col = b.data[j*b.colStep : j*b.colStep+k]
		} else {
			if buf == nil {
				buf = PackBuffer[T](k)
				defer ReleasePackBuffer(buf)
			}
			col = *buf
			for p := range col {
				col[p] = b.data[p*b.rowStep+j*b.colStep]
			}
		}
		for i := range m {
			v := alpha * kern.Dot(a.data[i*a.rowStep:i*a.rowStep+k], col)
			if beta == 0 {
				// Stored, as the blocked product stores its first K
				// slice: C is not read, and a -0 product stays -0.
				c[i*ldc+j] = v
			} else {
				c[i*ldc+j] += v
			}
		}
	}
	return true
}
