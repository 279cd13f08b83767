package gemm

import "github.com/deep500/deep500-go/backend/native/internal/par"

// FewRowsMax is the most rows of A (and C) for which gemmFewRows is used
// instead of the blocked product: with so few rows, packing B into panels
// costs about as much as the multiply-adds it feeds, since each packed
// value is used only once or twice. Batch-1 inference through Gemm and
// MatMul is the common case.
const FewRowsMax = 4

// fewRowsMinColumns is the fewest columns of C one goroutine of the
// few-rows path takes: a run of vector kernels over a few cache lines.
const fewRowsMinColumns = 64

// gemmFewRows computes C = alpha·A·B + beta·C for an A of few rows with
// vector kernels and without packing: when B's rows are contiguous, each
// row of C is a sum of rows of B scaled by A's elements (axpy); when its
// columns are (B transposed, as the weights of a Gemm with transB), each
// element of C is a dot product of a row of A with a column of B. Such a
// product reads all of B once, so it is bound by memory; with threads
// over 1, large ones split C's columns (and so B) over goroutines. It
// reports whether it applied (im has row kernels for T, and B is laid out
// one way or the other).
func gemmFewRows[T Float](im *Impl, m, n, k int, alpha T, a, b Matrix[T], beta T, c []T, ldc int, threads int) bool {
	kern, ok := rowKernels[T](im)
	if !ok || m > FewRowsMax || b.colStep != 1 && b.rowStep != 1 {
		return false
	}
	job := fewRowsJob[T]{kern: kern, m: m, n: n, k: k, alpha: alpha, a: a, b: b, beta: beta, c: c, ldc: ldc}
	if b.colStep != 1 && a.colStep != 1 {
		// The dot products want A's rows contiguous: gather them (A
		// transposed) into a pooled buffer.
		buf := PackBuffer[T](m * k)
		defer ReleasePackBuffer(buf)
		rows := (*buf)[:m*k]
		for i := range m {
			for p := range k {
				rows[i*k+p] = a.data[i*a.rowStep+p*a.colStep]
			}
		}
		job.a = Matrix[T]{data: rows, rowStep: k, colStep: 1}
	}
	parts := 1
	if threads > 1 && m*n*k >= ParallelMin {
		parts = min(threads, n/fewRowsMinColumns)
	}
	if parts <= 1 {
		job.columns(0, n)
		return true
	}
	pool := fewRowsJobPool[T]()
	p := pool.get()
	if p == nil {
		p = new(fewRowsParallel[T])
	}
	p.fewRowsJob, p.parts = job, parts
	par.Spread(parts, p)
	p.fewRowsJob = fewRowsJob[T]{} // keep no operand alive in the pool
	pool.put(p)
	return true
}

// fewRowsJob is one product of the few-rows path.
type fewRowsJob[T Float] struct {
	kern        *RowKernels[T]
	m, n, k     int
	alpha, beta T
	a, b        Matrix[T] // A's rows contiguous when B's columns are
	c           []T
	ldc         int
}

// columns computes columns [lo, hi) of C.
func (j *fewRowsJob[T]) columns(lo, hi int) {
	a, b, k := j.a, j.b, j.k
	scaleRows(j.m, hi-lo, j.beta, j.c[lo:], j.ldc)
	for i := range j.m {
		row := j.c[i*j.ldc+lo : i*j.ldc+hi]
		if b.colStep == 1 {
			for p := range k {
				j.kern.Axpy(j.alpha*a.data[i*a.rowStep+p*a.colStep], b.data[p*b.rowStep+lo:p*b.rowStep+hi], row)
			}
			continue
		}
		arow := a.data[i*a.rowStep : i*a.rowStep+k]
		for jj := range row {
			col := (lo + jj) * b.colStep
			row[jj] += j.alpha * j.kern.Dot(arow, b.data[col:col+k])
		}
	}
}

// fewRowsParallel is a few-rows product shared by par.Spread's workers:
// part w computes the w-th of parts runs of C's columns, each a whole
// number of fewRowsMinColumns blocks but the last.
type fewRowsParallel[T Float] struct {
	fewRowsJob[T]
	parts int
}

func (p *fewRowsParallel[T]) Work(w int) {
	blocks := (p.n + fewRowsMinColumns - 1) / fewRowsMinColumns
	lo := min(p.n, w*blocks/p.parts*fewRowsMinColumns)
	hi := min(p.n, (w+1)*blocks/p.parts*fewRowsMinColumns)
	if lo < hi {
		p.columns(lo, hi)
	}
}

var (
	fewRowsJobs32 freeList[fewRowsParallel[float32]]
	fewRowsJobs64 freeList[fewRowsParallel[float64]]
)

func fewRowsJobPool[T Float]() *freeList[fewRowsParallel[T]] {
	var zero T
	if _, ok := any(zero).(float32); ok {
		return any(&fewRowsJobs32).(*freeList[fewRowsParallel[T]])
	}
	return any(&fewRowsJobs64).(*freeList[fewRowsParallel[T]])
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
