package gemm

// An operand that many products share (a layer's weights, used at every
// inference) can be packed once into the panels the micro-kernel reads,
// instead of at every product: Packed holds that form, and the Matrix it
// returns carries it into Multiply, MultiplyFused and the implicit-B
// products, whose blocked path then reads its panels where it would have
// packed them. Every other path (few rows, a product of other sizes, an
// implementation whose kernel has another shape) reads the operand as
// given, so a packed operand is never wrong, only sometimes unused.
//
// The layout depends on the K slice depth (kcSlice) and on the kernel's
// panel width (mr for A, nr for B), not on the tile sizes: for each K
// slice p0, every panel of the whole operand, kc values deep, one after
// the other. The block of any tile whose first row (column) is a multiple
// of the panel width is then contiguous, at
//
//	p0*padded + i0*kc  (padded: m, or n, rounded up to the panel width)
//
// which is exactly what packPanelsA (PackPanelsB) would have written for
// it.

// packedSide says which operand of the product a Packed holds.
type packedSide uint8

const (
	packedNone packedSide = iota
	packedA
	packedB
)

// Packed is an operand of the product packed once for many products. Its
// zero value is empty; PackA or PackB fills it, reusing its buffer when
// it is large enough, so that packing the same operand again allocates
// nothing. The operand must not change while the packed form is in use:
// pack it again after changing it.
type Packed[T Float] struct {
	src        Matrix[T]  // the operand as given, for the paths without panels
	side       packedSide // which operand it is
	rows, cols int        // its size: m x k for A, k x n for B
	width      int        // the panel width it was packed for: mr (A) or nr (B)
	data       []T
}

// PackA packs a, the m x k left operand of products, for the
// implementation Multiply runs.
func (p *Packed[T]) PackA(m, k int, a Matrix[T]) { p.packA(active, m, k, a) }

// PackB packs b, the k x n right operand of products, for the
// implementation Multiply runs.
func (p *Packed[T]) PackB(k, n int, b Matrix[T]) { p.packB(active, k, n, b) }

// Matrix returns the operand as a Matrix that carries its packed form:
// pass it as A (after PackA) or B (after PackB) to a product of the sizes
// it was packed for.
func (p *Packed[T]) Matrix() Matrix[T] {
	m := p.src
	m.packed = p
	return m
}

// packA is PackA for the implementation im.
func (p *Packed[T]) packA(im *Impl, m, k int, a Matrix[T]) {
	mr := kernelFor[T](im).Mr
	padded := roundUp(m, mr)
	p.reset(packedA, m, k, mr, a, padded*k)
	for p0 := 0; p0 < k; p0 += kcSlice {
		packPanelsA(p.data[p0*padded:], a, 0, p0, m, min(kcSlice, k-p0), mr)
	}
}

// packB is PackB for the implementation im.
func (p *Packed[T]) packB(im *Impl, k, n int, b Matrix[T]) {
	nr := kernelFor[T](im).Nr
	padded := roundUp(n, nr)
	p.reset(packedB, k, n, nr, b, padded*k)
	for p0 := 0; p0 < k; p0 += kcSlice {
		packPanelsB(im, p.data[p0*padded:], b, p0, 0, min(kcSlice, k-p0), n, nr)
	}
}

// reset describes the operand about to be packed and sizes the buffer
// for size values, keeping the old one when it is large enough.
func (p *Packed[T]) reset(side packedSide, rows, cols, width int, src Matrix[T], size int) {
	src.packed = nil // the source view, not a packed form of its own
	p.src, p.side, p.rows, p.cols, p.width = src, side, rows, cols, width
	if cap(p.data) < size {
		p.data = make([]T, size)
	}
	p.data = p.data[:size]
}

// panelsA returns the packed form of a as the left operand of an m x k
// product whose kernel has mr rows, or nil when a carries none that fits.
func panelsA[T Float](a Matrix[T], m, k, mr int) *Packed[T] {
	if p := a.packed; p != nil && p.side == packedA && p.rows == m && p.cols == k && p.width == mr {
		return p
	}
	return nil
}

// panelsB returns the packed form of b as the right operand of a k x n
// product whose kernel has nr columns, or nil when b carries none that
// fits.
func panelsB[T Float](b Matrix[T], k, n, nr int) *Packed[T] {
	if p := b.packed; p != nil && p.side == packedB && p.rows == k && p.cols == n && p.width == nr {
		return p
	}
	return nil
}

// block returns the packed panels of the K slice at p0 (kc deep) from the
// row (A) or column (B) at first, a multiple of the panel width, over
// count rows or columns: what packPanelsA or PackPanelsB would write for
// that block.
func (p *Packed[T]) block(first, p0, kc, count int) []T {
	padded := roundUp(p.rows, p.width)
	if p.side == packedB {
		padded = roundUp(p.cols, p.width)
	}
	start := p0*padded + first*kc
	return p.data[start : start+roundUp(count, p.width)*kc]
}
