package gemm

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/deep500/deep500-go/backend/native/internal/par"
)

// This file is the blocked product: C = alpha*op(A)*op(B) + beta*C for
// float32 and float64, where op is an optional transpose.
//
// The layout follows the classic Goto/BLIS scheme, in plain Go:
//   - C is cut into tiles of mcTile x ncTile; goroutines take tiles from a
//     shared counter, so work spreads over every core without a scheduler.
//   - For each tile, K is walked in slices of kcSlice. The slice of A
//     (mcTile x kcSlice) and of B (kcSlice x ncTile) are copied ("packed")
//     into contiguous panels, mr rows of A or nr columns of B interleaved,
//     so the inner loop reads both sequentially from L1/L2 whatever the
//     transposes and leading dimensions were. A B with contiguous rows
//     is read in place instead where the kernel can (readBInPlace).
//   - A micro-kernel keeps an mr x nr block of C in registers across the
//     K slice and touches C once per slice: on amd64 with AVX-512, the
//     generated kernels of gemm_avx512_amd64.s (6x64 float32, 6x32
//     float64: 24 zmm registers of sums); with AVX2 and FMA, those of
//     gemm_amd64.s (6x16 float32, 6x8 float64: twelve ymm registers);
//     elsewhere the portable 4x4 kernel below, whose 16 sums the compiler
//     keeps in registers. The dispatch table (dispatch.go) says which.

// Float is the set of element types the blocked product is written for.
type Float interface{ float32 | float64 }

// The tile sizes fit a 1 MB L2 (AMD Zen 4): a packed 96x256 block of A
// (96 KB float32) and a 256x512 block of B (512 KB). 512 columns pack A
// half as often as 256 did (1024³ float32 on one thread went from about
// 0.68 to 0.75 of the FMA peak); taller tiles would pack B less often but
// leave fewer tiles to share among threads in the deep layers of a
// network (512 rows, 49 columns).
const (
	mcTile  = 96  // rows of a tile (a multiple of every kernel's mr)
	ncTile  = 512 // columns of a tile (a multiple of every kernel's nr)
	kcSlice = 256 // depth of a packed slice

	// ParallelMin is the number of multiply-adds below which a product
	// runs on the calling goroutine. Handing a tile to a spinning worker
	// of package par costs about half a microsecond, the time of some
	// 20 000 multiply-adds on the AVX-512 kernel; below 4× that, the
	// narrower tiles and the wait for the slower goroutine eat the gain.
	ParallelMin = 1 << 16
)

// Matrix is a read-only view of a row-major matrix, possibly transposed:
// element (i, j) is data[i*rowStep + j*colStep]; it may carry the
// matrix's packed form (Packed.Matrix).
type Matrix[T Float] struct {
	data             []T
	rowStep, colStep int
	packed           *Packed[T] // nil unless made by Packed.Matrix
}

// NewMatrix views data, stored row-major with leading dimension ld, as the
// matrix op(X): transposed when trans is set.
func NewMatrix[T Float](data []T, ld int, trans bool) Matrix[T] {
	if trans {
		return Matrix[T]{data: data, rowStep: 1, colStep: ld}
	}
	return Matrix[T]{data: data, rowStep: ld, colStep: 1}
}

// Tiles is the number of output tiles the blocked product cuts an m x n
// product into: the most goroutines one product can use. Callers with
// many small products spread whole products instead when it is below
// their thread count.
func Tiles(m, n int) int { return ((m + mcTile - 1) / mcTile) * ((n + ncTile - 1) / ncTile) }

// Multiply computes C = alpha*A*B + beta*C, where A is m x k, B is k x n
// and C is m x n row-major with leading dimension ldc. When beta is 0, C
// is overwritten without being read (so NaNs in it do not propagate), as
// BLAS does. threads bounds the goroutines used (0 or less: GOMAXPROCS).
func Multiply[T Float](m, n, k int, alpha T, a, b Matrix[T], beta T, c []T, ldc int, threads int) {
	multiply(active, m, n, k, alpha, a, b, beta, c, ldc, threads)
}

// multiply is Multiply with the implementation im.
func multiply[T Float](im *Impl, m, n, k int, alpha T, a, b Matrix[T], beta T, c []T, ldc int, threads int) {
	multiplyFused(im, m, n, k, alpha, a, b, beta, c, ldc, threads, nil)
}

// MultiplyFused is Multiply followed by the epilogue ep (nil: none), which
// each tile of C goes through as soon as its product is complete: C =
// ep(alpha*A*B + beta*C). A bias in ep with beta 0 costs no pass filling C
// first.
func MultiplyFused[T Float](m, n, k int, alpha T, a, b Matrix[T], beta T, c []T, ldc int, threads int, ep *Epilogue[T]) {
	multiplyFused(active, m, n, k, alpha, a, b, beta, c, ldc, threads, ep)
}

// multiplyFused is MultiplyFused with the implementation im.
func multiplyFused[T Float](im *Impl, m, n, k int, alpha T, a, b Matrix[T], beta T, c []T, ldc int, threads int, ep *Epilogue[T]) {
	if gemmWithoutProduct(m, n, k, alpha, beta, c, ldc) {
		ep.Apply(c, ldc, m, n)
		return
	}
	if gemmFewRows(im, m, n, k, alpha, a, b, beta, c, ldc, threads) || gemmFewColumns(im, m, n, k, alpha, a, b, beta, c, ldc) {
		ep.Apply(c, ldc, m, n)
		return
	}
	gemmTiled(im, m, n, k, alpha, a, b, nil, beta, c, ldc, threads, ep)
}

// BlockWriter writes the kc x nc block at (p0, j0) of a B matrix that is
// never stored whole (the im2col matrix of a convolution) into dst,
// row-major with leading dimension nc. The blocked product reads the
// block as it reads a stored B: in place where its kernel can, packed
// otherwise.
type BlockWriter[T Float] func(dst []T, p0, j0, kc, nc int)

// MultiplyImplicitB is Multiply with B given by its writer: C =
// alpha*A*B + beta*C for a k x n B that writeB produces a block at a time.
func MultiplyImplicitB[T Float](m, n, k int, alpha T, a Matrix[T], writeB BlockWriter[T], beta T, c []T, ldc int, threads int) {
	multiplyImplicitB(active, m, n, k, alpha, a, writeB, beta, c, ldc, threads)
}

// multiplyImplicitB is MultiplyImplicitB with the implementation im.
func multiplyImplicitB[T Float](im *Impl, m, n, k int, alpha T, a Matrix[T], writeB BlockWriter[T], beta T, c []T, ldc int, threads int) {
	multiplyImplicitBFused(im, m, n, k, alpha, a, writeB, beta, c, ldc, threads, nil)
}

// MultiplyImplicitBFused is MultiplyImplicitB followed by the epilogue ep
// (nil: none), as MultiplyFused.
func MultiplyImplicitBFused[T Float](m, n, k int, alpha T, a Matrix[T], writeB BlockWriter[T], beta T, c []T, ldc int, threads int, ep *Epilogue[T]) {
	multiplyImplicitBFused(active, m, n, k, alpha, a, writeB, beta, c, ldc, threads, ep)
}

// multiplyImplicitBFused is MultiplyImplicitBFused with the implementation im.
func multiplyImplicitBFused[T Float](im *Impl, m, n, k int, alpha T, a Matrix[T], writeB BlockWriter[T], beta T, c []T, ldc int, threads int, ep *Epilogue[T]) {
	if gemmWithoutProduct(m, n, k, alpha, beta, c, ldc) {
		ep.Apply(c, ldc, m, n)
		return
	}
	gemmTiled(im, m, n, k, alpha, a, Matrix[T]{}, writeB, beta, c, ldc, threads, ep)
}

// gemmWithoutProduct handles the products that multiply nothing (C empty,
// alpha 0 or k 0: C = beta*C, A and B unread, as BLAS does) and reports
// whether it did.
func gemmWithoutProduct[T Float](m, n, k int, alpha, beta T, c []T, ldc int) bool {
	if m == 0 || n == 0 {
		return true
	}
	if alpha == 0 || k == 0 {
		scaleRows(m, n, beta, c, ldc)
		return true
	}
	return false
}

// gemmTiled is the blocked product of gemm, with B read from b or, when
// writeB is not nil, written by it a block at a time; each finished tile
// then goes through ep when it is not nil.
func gemmTiled[T Float](im *Impl, m, n, k int, alpha T, a, b Matrix[T], writeB BlockWriter[T], beta T, c []T, ldc int, threads int, ep *Epilogue[T]) {
	// With beta 0 the first K slice stores its products instead of
	// adding them (overwrite), which saves a pass clearing C.
	if beta != 0 {
		scaleRows(m, n, beta, c, ldc)
	}
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if m*n*k < ParallelMin {
		threads = 1
	}
	kern := kernelFor[T](im)
	mc, nc := tileShape(m, n, kern.Mr, kern.Nr, threads)
	tilesN := (n + nc - 1) / nc
	tiles := ((m + mc - 1) / mc) * tilesN
	threads = min(threads, tiles)

	// Pack buffers sized for the largest block this product needs: small
	// products then use little.
	job := gemmJob[T]{im: im, m: m, n: n, k: k, alpha: alpha, a: a, b: b, writeB: writeB, c: c, ldc: ldc, mc: mc, nc: nc, tiles: tiles, tilesN: tilesN, kern: kern, overwrite: beta == 0,
		packedA: panelsA(a, m, k, kern.Mr)}
	if job.packedA == nil {
		job.packASize = roundUp(min(mc, m), kern.Mr) * min(kcSlice, k)
	}
	if writeB == nil {
		job.packedB = panelsB(b, k, n, kern.Nr)
	}
	// B packed once is read as it is; otherwise B is read in place where
	// the kernel can, and packed per tile where not.
	if job.packedB == nil {
		job.inPlaceB = readBInPlace(kern, b, writeB != nil)
		if !job.inPlaceB {
			job.packBSize = roundUp(min(nc, n), kern.Nr) * min(kcSlice, k)
		}
	}
	if writeB != nil {
		job.blockBSize = min(nc, n) * min(kcSlice, k)
	}
	if ep != nil {
		// Copied, so that the caller's epilogue does not escape with
		// the job to the goroutines (or their pool).
		job.epilogue, job.hasEpilogue = *ep, true
	}
	if threads <= 1 {
		var next atomic.Int64
		job.work(&next)
		return
	}
	gemmParallel(job, threads)
}

// tileShape is the shape of the tiles of C that threads goroutines share
// for an m x n product on a kernel of mr x nr blocks: the cache-sized
// mcTile x ncTile, unless that leaves fewer than two tiles per goroutine
// (the shared counter then cannot even out tiles of unequal size). Then
// the tiles get narrower first, which re-packs only A's small panels per
// tile (the weights of a layer), and shorter only when the columns are
// too few, which re-packs B's block for every row of tiles.
func tileShape(m, n, mr, nr, threads int) (mc, nc int) {
	mc, nc = mcTile, ncTile
	if threads <= 1 {
		return mc, nc
	}
	want := 2 * threads
	tilesM := (m + mc - 1) / mc
	if tilesM*((n+nc-1)/nc) >= want {
		return mc, nc
	}
	perRow := (want + tilesM - 1) / tilesM // column tiles wanted in a row of tiles
	nc = max(nr, roundUp((n+perRow-1)/perRow, nr))
	tilesN := (n + nc - 1) / nc
	if tilesM*tilesN >= want {
		return mc, nc
	}
	perColumn := (want + tilesN - 1) / tilesN
	mc = max(mr, roundUp((m+perColumn-1)/perColumn, mr))
	return mc, nc
}

// gemmJob is one product, shared by the goroutines that compute its tiles.
type gemmJob[T Float] struct {
	im                   *Impl
	m, n, k              int
	alpha                T
	a, b                 Matrix[T]
	writeB               BlockWriter[T] // when not nil, B's blocks come from it
	blockBSize           int            // elements of the block writeB writes
	inPlaceB             bool           // B's panels are read in place, none packed (readBInPlace)
	packedA, packedB     *Packed[T]     // when not nil, the operand's blocks are read from it
	c                    []T
	ldc                  int
	mc, nc               int // the tile shape: rows and columns of C
	tiles, tilesN        int
	kern                 MicroKernel[T]
	overwrite            bool        // the first K slice stores into C (beta 0)
	epilogue             Epilogue[T] // run on each tile after its last K slice, if hasEpilogue
	hasEpilogue          bool
	packASize, packBSize int // the pack buffers' sizes (0: the operand is packed already)
}

// work computes tiles taken from next until none is left.
func (j *gemmJob[T]) work(next *atomic.Int64) {
	var packA, packB, blockB *[]T
	if j.packASize > 0 {
		packA = PackBuffer[T](j.packASize)
		defer ReleasePackBuffer(packA)
	}
	if j.packBSize > 0 {
		packB = PackBuffer[T](j.packBSize)
		defer ReleasePackBuffer(packB)
	}
	if j.writeB != nil {
		blockB = PackBuffer[T](j.blockBSize)
		defer ReleasePackBuffer(blockB)
	}
	for {
		t := int(next.Add(1)) - 1
		if t >= j.tiles {
			return
		}
		i0, j0 := (t/j.tilesN)*j.mc, (t%j.tilesN)*j.nc
		mc, nc := min(j.mc, j.m-i0), min(j.nc, j.n-j0)
		for p0 := 0; p0 < j.k; p0 += kcSlice {
			kc := min(kcSlice, j.k-p0)
			var pa, pb []T
			// A packed operand holds the block of any tile whose first
			// row (column) is a multiple of mr (nr), as every tile's is.
			if j.packedA != nil {
				pa = j.packedA.block(i0, p0, kc, mc)
			} else {
				pa = *packA
				packPanelsA(pa, j.a, i0, p0, mc, kc, j.kern.Mr)
			}
			if j.packedB != nil {
				pb = j.packedB.block(j0, p0, kc, nc)
			} else {
				// B's block: at (p0, j0) of the stored B, or written whole.
				b, bp0, bj0 := j.b, p0, j0
				if j.writeB != nil {
					j.writeB(*blockB, p0, j0, kc, nc)
					b, bp0, bj0 = NewMatrix((*blockB)[:kc*nc], nc, false), 0, 0
				}
				if j.inPlaceB {
					macroKernelInPlaceB(j.kern, mc, nc, kc, j.alpha, pa, b, bp0, bj0, j.c[i0*j.ldc+j0:], j.ldc, j.overwrite && p0 == 0)
					continue
				}
				pb = *packB
				packPanelsB(j.im, pb, b, bp0, bj0, kc, nc, j.kern.Nr)
			}
			macroKernel(j.kern, mc, nc, kc, j.alpha, pa, pb, j.c[i0*j.ldc+j0:], j.ldc, j.overwrite && p0 == 0)
		}
		if j.hasEpilogue {
			// The tile was just written: it is still in cache.
			j.epilogue.apply(j.c, j.ldc, i0, j0, mc, nc)
		}
	}
}

// gemmParallel runs a job on threads workers (par.Spread), which take
// tiles from a shared counter. The job and its counter live in a pooled
// parallelJob, so a parallel product allocates nothing once warm.
func gemmParallel[T Float](job gemmJob[T], threads int) {
	pool := parallelJobPool[T]()
	p := pool.get()
	if p == nil {
		p = new(parallelJob[T])
	}
	p.gemmJob = job
	p.next.Store(0)
	par.Spread(threads, p)
	p.gemmJob = gemmJob[T]{} // keep no operand alive in the pool
	pool.put(p)
}

// parallelJob is a product shared by par.Spread's workers.
type parallelJob[T Float] struct {
	gemmJob[T]
	next atomic.Int64 // the next tile to compute
}

// Work computes tiles until none is left (par.Task).
func (p *parallelJob[T]) Work(int) { p.work(&p.next) }

var (
	parallelJobs32 freeList[parallelJob[float32]]
	parallelJobs64 freeList[parallelJob[float64]]
)

func parallelJobPool[T Float]() *freeList[parallelJob[T]] {
	var zero T
	if _, ok := any(zero).(float32); ok {
		return any(&parallelJobs32).(*freeList[parallelJob[T]])
	}
	return any(&parallelJobs64).(*freeList[parallelJob[T]])
}

// freeList keeps values for reuse: the pack buffers and parallel jobs.
// Unlike a sync.Pool it never drops them (a garbage collection empties a
// sync.Pool, and a goroutine that moved to another processor misses the
// values put on the first, both costing allocations in a warm inference);
// it holds at most as many as were in use at once.
type freeList[T any] struct {
	mu    sync.Mutex
	items []*T
}

// get takes a value, or returns nil when none is free.
func (f *freeList[T]) get() *T {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.items)
	if n == 0 {
		return nil
	}
	p := f.items[n-1]
	f.items[n-1] = nil
	f.items = f.items[:n-1]
	return p
}

// put gives p back for reuse.
func (f *freeList[T]) put(p *T) {
	f.mu.Lock()
	f.items = append(f.items, p)
	f.mu.Unlock()
}

// The pack buffers are pooled, so that the products of a training step or
// an inference do not allocate them again at every run. There is one pool
// per power-of-two capacity: a buffer taken for n elements comes from the
// class of the next power of two, so it always fits, and products of
// different sizes do not evict each other's buffers.
var (
	gemmPackPools32 [bits.UintSize]freeList[[]float32]
	gemmPackPools64 [bits.UintSize]freeList[[]float64]
)

func gemmPackPool[T Float](class int) *freeList[[]T] {
	var zero T
	if _, ok := any(zero).(float32); ok {
		return any(&gemmPackPools32[class]).(*freeList[[]T])
	}
	return any(&gemmPackPools64[class]).(*freeList[[]T])
}

// PackBuffer returns a pooled buffer of n elements (contents unspecified:
// packing overwrites what it reads), for packing panels or a block of B;
// ReleasePackBuffer gives it back.
func PackBuffer[T Float](n int) *[]T {
	class := bits.Len(uint(max(n, 1) - 1)) // 1<<class >= n
	if p := gemmPackPool[T](class).get(); p != nil && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]T, n, 1<<class)
	return &s
}

// ReleasePackBuffer returns a buffer from PackBuffer to the pool; the
// caller must not use it afterwards.
func ReleasePackBuffer[T Float](p *[]T) {
	if c := cap(*p); c > 0 {
		gemmPackPool[T](bits.Len(uint(c)) - 1).put(p) // the class whose size its capacity covers
	}
}

// roundUp rounds n up to a multiple of step.
func roundUp(n, step int) int { return (n + step - 1) / step * step }

// scaleRows multiplies the m x n block of C by beta (writing zeros when
// beta is 0).
func scaleRows[T Float](m, n int, beta T, c []T, ldc int) {
	if beta == 1 {
		return
	}
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// packPanelsA copies the mc x kc block of A at (i0, p0) into dst as panels
// of mr rows: panel r holds, for each p, the mr values A[i, p] side by
// side. Rows past the matrix are zero so the micro-kernel never needs an
// edge case on its inputs.
func packPanelsA[T Float](dst []T, a Matrix[T], i0, p0, mc, kc, mr int) {
	for ir := 0; ir < mc; ir += mr {
		panel := dst[ir*kc : (ir+mr)*kc]
		rows := min(mr, mc-ir)
		if mr == 6 && rows == 6 && a.colStep == 1 {
			packPanelA6(panel, a.data[(i0+ir)*a.rowStep+p0:], a.rowStep, kc)
			continue
		}
		for r := range mr {
			if r >= rows {
				for p := range kc {
					panel[p*mr+r] = 0
				}
				continue
			}
			base := (i0+ir+r)*a.rowStep + p0*a.colStep
			if a.colStep == 1 {
				for p, v := range a.data[base : base+kc] {
					panel[p*mr+r] = v
				}
				continue
			}
			for p := range kc {
				panel[p*mr+r] = a.data[base+p*a.colStep]
			}
		}
	}
}

// packPanelA6 is packPanelsA for a whole panel of the assembly kernels'
// six rows, from an A whose rows are contiguous (src at the panel's first
// element, rows ld apart): it writes the panel in order, six rows read
// side by side, which is about twice as fast as a row at a time.
func packPanelA6[T Float](panel, src []T, ld, kc int) {
	r0, r1, r2 := src[:kc], src[ld:ld+kc], src[2*ld:2*ld+kc]
	r3, r4, r5 := src[3*ld:3*ld+kc], src[4*ld:4*ld+kc], src[5*ld:5*ld+kc]
	panel = panel[:6*kc]
	for p := range kc {
		out := panel[p*6 : p*6+6 : p*6+6]
		out[0], out[1], out[2], out[3], out[4], out[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
	}
}

// PackPanelsB copies the kc x nc block of B at (p0, j0) into dst as panels
// of nr columns: panel c holds, for each p, the nr values B[p, j] side by
// side, zero-padded past the matrix. dst holds roundUp(nc, nr)*kc values.
func PackPanelsB[T Float](dst []T, b Matrix[T], p0, j0, kc, nc, nr int) {
	packPanelsB(active, dst, b, p0, j0, kc, nc, nr)
}

// packPanelsB is PackPanelsB with the implementation im.
func packPanelsB[T Float](im *Impl, dst []T, b Matrix[T], p0, j0, kc, nc, nr int) {
	if b.rowStep == 1 && b.colStep != 1 {
		packPanelsBColumns(im, dst, b, p0, j0, kc, nc, nr)
		return
	}
	if b.colStep == 1 {
		// Rows of B are contiguous: read each row of the block once,
		// along its length, copying its pieces into every panel (walking
		// a panel's rows instead reads B at its leading dimension, a
		// stride the cache maps to too few sets).
		whole := nc / nr * nr
		for p := range kc {
			base := (p0+p)*b.rowStep + j0
			row := b.data[base : base+nc]
			for jr := 0; jr < whole; jr += nr {
				copyPanelRow(dst[jr*kc+p*nr:jr*kc+p*nr+nr], row[jr:jr+nr])
			}
			if whole < nc {
				out := dst[whole*kc+p*nr : whole*kc+p*nr+nr]
				n := copy(out, row[whole:])
				clear(out[n:])
			}
		}
		return
	}
	for jr := 0; jr < nc; jr += nr {
		panel := dst[jr*kc : (jr+nr)*kc]
		cols := min(nr, nc-jr)
		for p := range kc {
			base := (p0+p)*b.rowStep + (j0+jr)*b.colStep
			out := panel[p*nr : p*nr+nr]
			for j := range nr {
				if j < cols {
					out[j] = b.data[base+j*b.colStep]
				} else {
					out[j] = 0
				}
			}
		}
	}
}

// copyPanelRow copies src into dst, a row of a panel as wide as either.
// The kernels' widths are copied as arrays, in moves the compiler
// unrolls, instead of calling memmove for every row: packing a tile's
// block went 1.1 to 1.7 times as fast (BenchmarkPackPanelsB, rows of 4
// to 64 elements; 16 float32, the AVX2 kernel's, 4.7 → 7.4 GB/s).
func copyPanelRow[T Float](dst, src []T) {
	switch len(dst) {
	case 4:
		*(*[4]T)(dst) = *(*[4]T)(src)
	case 8:
		*(*[8]T)(dst) = *(*[8]T)(src)
	case 16:
		*(*[16]T)(dst) = *(*[16]T)(src)
	case 32:
		*(*[32]T)(dst) = *(*[32]T)(src)
	case 64:
		*(*[64]T)(dst) = *(*[64]T)(src)
	default:
		copy(dst, src)
	}
}

// packPanelsBColumns is packPanelsB for a B whose columns are contiguous
// (a transposed operand, as the weight gradient of a convolution reads its
// im2col matrix): each column is read along its length and spread into
// its lane of the panel, instead of gathering nr elements a column apart
// for every p.
func packPanelsBColumns[T Float](im *Impl, dst []T, b Matrix[T], p0, j0, kc, nc, nr int) {
	// float32 panels as wide as a multiple of 8 take 8 columns at a time
	// through an 8×8 register transpose (im.TransposePanel8).
	dst32, is32 := any(dst).([]float32)
	src32, _ := any(b.data).([]float32)
	for jr := 0; jr < nc; jr += nr {
		panel := dst[jr*kc : (jr+nr)*kc]
		cols := min(nr, nc-jr)
		for j := 0; j < cols; {
			width, from := 1, 0
			if is32 && im.TransposePanel8 != nil && nr%8 == 0 && j%8 == 0 && j+8 <= cols {
				width = 8
				from = im.TransposePanel8(dst32[jr*kc+j:], src32[(j0+jr+j)*b.colStep+p0:], b.colStep, kc, nr)
			}
			for c := j; c < j+width && from < kc; c++ {
				src := b.data[(j0+jr+c)*b.colStep+p0+from:]
				src = src[:kc-from]
				lane := panel[from*nr+c:]
				for p, v := range src {
					lane[p*nr] = v
				}
			}
			j += width
		}
		for j := cols; j < nr; j++ {
			for p := range kc {
				panel[p*nr+j] = 0
			}
		}
	}
}

// macroKernel multiplies a packed mc x kc block of A by a packed kc x nc
// block of B with the micro-kernel k and adds alpha times the product
// into C (stores it, with overwrite).
func macroKernel[T Float](k MicroKernel[T], mc, nc, kc int, alpha T, packA, packB []T, c []T, ldc int, overwrite bool) {
	for jr := 0; jr < nc; jr += k.Nr {
		pb := packB[jr*kc : (jr+k.Nr)*kc]
		cols := min(k.Nr, nc-jr)
		for ir := 0; ir < mc; ir += k.Mr {
			pa := packA[ir*kc : (ir+k.Mr)*kc]
			rows := min(k.Mr, mc-ir)
			k.Run(kc, alpha, pa, pb, c[ir*ldc+jr:], ldc, rows, cols, overwrite)
		}
	}
}

// readBInPlace reports whether the blocked product reads B's panels of
// Nr columns where B is stored (MicroKernel.RunInPlace) instead of
// packing them: when the kernel can and B has contiguous rows (stored
// so, or written by a BlockWriter).
//
// Each row of a 64-column float32 panel is four cache lines, which the
// kernel reads as fast from B's rows as from a packed panel, so the
// packing copy is saved: measured on one thread (Zen 4, shared machine),
// products of convolution shapes (BenchmarkMultiplyConvShapes) ran 10 to
// 40% faster (16×3025×64: 98 → 70 µs; 64×3025×144: 650 → 555 µs), and
// 1024³ too (23.4 → 21.2 ms), although a 4 KB row stride is the worst
// case for the cache's sets. The AVX2 kernel's 16-column rows are one
// cache line, mostly straddling two when read in place: a strided twin
// of it won on some shapes and lost on others (576×49×96 111 → 142 µs,
// 1000×169×512 2.29 → 2.42 ms at best), so it packs B still.
func readBInPlace[T Float](k MicroKernel[T], b Matrix[T], written bool) bool {
	return k.RunInPlace != nil && (written || b.colStep == 1)
}

// macroKernelInPlaceB is macroKernel for a B read in place (readBInPlace):
// the panels of the kc x nc block at (p0, j0) of B, the last one partial
// or not, go to the micro-kernel as they are stored.
func macroKernelInPlaceB[T Float](k MicroKernel[T], mc, nc, kc int, alpha T, packA []T, b Matrix[T], p0, j0 int, c []T, ldc int, overwrite bool) {
	for jr := 0; jr < nc; jr += k.Nr {
		src := b.data[p0*b.rowStep+j0+jr:]
		cols := min(k.Nr, nc-jr)
		for ir := 0; ir < mc; ir += k.Mr {
			pa := packA[ir*kc : (ir+k.Mr)*kc]
			rows := min(k.Mr, mc-ir)
			k.RunInPlace(kc, alpha, pa, src, b.rowStep, c[ir*ldc+jr:], ldc, rows, cols, overwrite)
		}
	}
}

// addBlock adds alpha times the rows x cols valid part of a block of
// sums (row-major, nr per row) to C, or stores it with overwrite.
func addBlock[T Float](acc []T, nr int, alpha T, c []T, ldc, rows, cols int, overwrite bool) {
	if nr == 16 && cols == 16 && alpha == 1 {
		// The whole width of the float32 kernel's block with alpha 1
		// (every convolution and most products): fixed-size rows, so
		// the loops carry no bounds checks. Same arithmetic as below.
		for i := range rows {
			row, sums := (*[16]T)(c[i*ldc:i*ldc+16]), (*[16]T)(acc[i*16:i*16+16])
			if overwrite {
				*row = *sums
				continue
			}
			for j := range row {
				row[j] += sums[j]
			}
		}
		return
	}
	for i := range rows {
		row := c[i*ldc : i*ldc+cols]
		sums := acc[i*nr : i*nr+cols]
		if overwrite {
			for j := range row {
				row[j] = alpha * sums[j]
			}
			continue
		}
		for j := range row {
			row[j] += alpha * sums[j]
		}
	}
}

// microKernel4x4 computes a 4x4 block of A*B over kc steps in 16 local
// sums (which the compiler keeps in registers) and adds alpha times it to
// the rows x cols valid part of C (stores it, with overwrite).
func microKernel4x4[T Float](kc int, alpha T, pa, pb, c []T, ldc, rows, cols int, overwrite bool) {
	var c00, c01, c02, c03, c10, c11, c12, c13 T
	var c20, c21, c22, c23, c30, c31, c32, c33 T
	pa, pb = pa[:kc*4], pb[:kc*4]
	for p := 0; p < len(pa); p += 4 {
		a := pa[p : p+4 : p+4]
		b := pb[p : p+4 : p+4]
		a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	sums := [16]T{c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33}
	addBlock(sums[:], 4, alpha, c, ldc, rows, cols, overwrite)
}

// Number is the set of element types MultiplySimple takes.
type Number interface {
	float32 | float64 | int8 | int16 | int32 | int64 |
		uint8 | uint16 | uint32 | uint64
}

// MultiplySimple is the unblocked counterpart of Multiply, for integers:
// C = alpha*A*B + beta*C in a straightforward i-p-j loop (row of C
// updated along contiguous rows of B), A and B stored row-major with
// leading dimensions lda and ldb, transposed when transA or transB is
// set. Integer MatMul and Gemm are rare enough not to need blocking.
func MultiplySimple[T Number](m, n, k int, alpha T, a []T, lda int, transA bool, b []T, ldb int, transB bool, beta T, c []T, ldc int) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		for j := range row {
			row[j] *= beta
		}
		for p := range k {
			var av T
			if transA {
				av = a[p*lda+i]
			} else {
				av = a[i*lda+p]
			}
			av *= alpha
			if av == 0 {
				continue
			}
			for j := range row {
				if transB {
					row[j] += av * b[j*ldb+p]
				} else {
					row[j] += av * b[p*ldb+j]
				}
			}
		}
	}
}
