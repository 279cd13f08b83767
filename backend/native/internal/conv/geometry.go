package conv

import (
	"github.com/deep500/deep500-go/backend/native/internal/par"
)

// Geometry is the window of a convolution (or of a pooling) applied to
// one input shape. All slices have one entry per spatial dimension: the
// input, kernel and output sizes, the strides and dilations, and the
// padding before and after. The caller computes Out from the rest (and
// checks the attributes); the kernels trust it.
type Geometry struct {
	In, Kernel, Out    []int
	Strides, Dilations []int
	PadBegin, PadEnd   []int
}

// InSize and OutSize are the number of spatial positions of the input and
// output; KernelSize the number of window positions.
func (g *Geometry) InSize() int     { return prod(g.In) }
func (g *Geometry) OutSize() int    { return prod(g.Out) }
func (g *Geometry) KernelSize() int { return prod(g.Kernel) }

// Direct reports whether im2col would copy the input unchanged (a 1x1
// kernel, unit strides, no padding), so the input itself is the column
// matrix.
func (g *Geometry) Direct() bool {
	for i := range g.In {
		if g.Kernel[i] != 1 || g.Strides[i] != 1 || g.PadBegin[i] != 0 || g.PadEnd[i] != 0 {
			return false
		}
	}
	return true
}

func prod(v []int) int {
	p := 1
	for _, x := range v {
		p *= x
	}
	return p
}

// Number is the set of element types Col2im adds.
type Number interface {
	float32 | float64 | int8 | int16 | int32 | int64 |
		uint8 | uint16 | uint32 | uint64
}

// Im2col writes the columns of x (channels x prod(g.In), row-major)
// into col, a (channels*prod(g.Kernel)) x prod(g.Out) row-major matrix:
// row (c, k1..kn) holds, for every output position, the input element that
// kernel position sees there, or zero in the padding. Rows are filled in
// parallel when the matrix is large.
func Im2col[T any](col, x []T, channels int, g *Geometry, threads int) {
	rows, grain := im2colRows(channels, g, par.Grain)
	if par.Chunks(rows, threads, grain) == 1 {
		im2colRange(col, x, channels, g, 0, rows)
		return
	}
	par.For(rows, threads, grain, func(lo, hi int) { im2colRange(col, x, channels, g, lo, hi) })
}

// im2colRows gives the rows of channels' im2col matrix and the fewest a
// goroutine takes, for a grain of elements.
func im2colRows(channels int, g *Geometry, grain int) (rows, minRows int) {
	return channels * g.KernelSize(), max(1, grain/max(g.OutSize(), 1))
}

// im2colRange writes rows [lo, hi) of the im2col matrix.
func im2colRange[T any](col, x []T, channels int, g *Geometry, lo, hi int) {
	ks, os := g.KernelSize(), g.OutSize()
	if len(g.In) == 2 {
		if col32, ok := any(col).([]float32); ok && (g.Strides[1] == 1 || g.Strides[1] == 2) {
			im2colRows2DFloat32(DepthwiseActive(), col32, any(x).([]float32), g, lo, hi)
			return
		}
		for r := lo; r < hi; r++ {
			c, kidx := r/ks, r%ks
			im2colRow2D(g, col[r*os:(r+1)*os], x[c*g.InSize():(c+1)*g.InSize()], kidx/g.Kernel[1], kidx%g.Kernel[1])
		}
		return
	}
	w := NewWalker(g)
	for r := lo; r < hi; r++ {
		c, kidx := r/ks, r%ks
		Im2colRow(w, col[r*os:(r+1)*os], x[c*g.InSize():(c+1)*g.InSize()], kidx)
	}
}

// Im2colTask is Im2col for callers that keep it across calls: its
// parallel path hands the task itself to the workers, so a warm call
// allocates nothing (Im2col's closure is allocated per parallel call).
// One task serves one call at a time.
type Im2colTask[T any] struct {
	col, x   []T
	channels int
	g        *Geometry
	rows     int
	chunks   int
}

// Run is Im2col(col, x, channels, g, threads).
func (t *Im2colTask[T]) Run(col, x []T, channels int, g *Geometry, threads int) {
	rows, grain := im2colRows(channels, g, par.TaskGrain)
	chunks := par.Chunks(rows, threads, grain)
	if chunks == 1 {
		im2colRange(col, x, channels, g, 0, rows)
		return
	}
	*t = Im2colTask[T]{col: col, x: x, channels: channels, g: g, rows: rows, chunks: chunks}
	par.Spread(chunks, t)
	*t = Im2colTask[T]{}
}

// Work writes chunk w of the rows.
func (t *Im2colTask[T]) Work(w int) {
	im2colRange(t.col, t.x, t.channels, t.g, w*t.rows/t.chunks, (w+1)*t.rows/t.chunks)
}

// Col2im is the adjoint of Im2col: it adds every element of col
// into the input position it was taken from (padding positions are
// dropped). x must be zeroed (or hold a bias) beforehand. Channels are
// spread over goroutines, since rows of one channel write the same plane.
func Col2im[T Number](x, col []T, channels int, g *Geometry, threads int) {
	ks, os := g.KernelSize(), g.OutSize()
	minChunk := max(1, par.Grain/max(os*ks, 1))
	if par.Chunks(channels, threads, minChunk) == 1 {
		// On the caller's goroutine: no closure, so a warm call on one
		// thread (a training step's, per image) allocates nothing.
		col2imChannels(x, col, g, 0, channels)
		return
	}
	par.For(channels, threads, minChunk, func(lo, hi int) { col2imChannels(x, col, g, lo, hi) })
}

// col2imChannels is Col2im over channels [lo, hi).
func col2imChannels[T Number](x, col []T, g *Geometry, lo, hi int) {
	ks, os := g.KernelSize(), g.OutSize()
	var w *Walker
	if len(g.In) != 2 {
		w = NewWalker(g)
	}
	for c := lo; c < hi; c++ {
		plane := x[c*g.InSize() : (c+1)*g.InSize()]
		for kidx := range ks {
			r := c*ks + kidx
			if w == nil {
				col2imRow2D(g, plane, col[r*os:(r+1)*os], kidx/g.Kernel[1], kidx%g.Kernel[1])
				continue
			}
			col2imRowND(w, plane, col[r*os:(r+1)*os], kidx)
		}
	}
}

// Walker walks the output positions of one kernel position: the
// outer spatial dimensions by odometer, the last one as a contiguous run
// whose valid (non-padding) range is computed once.
type Walker struct {
	g        *Geometry
	kpos     []int // kernel position per dimension
	off      []int // input offset of that kernel position: k*d - padBegin
	opos     []int // output position of the outer dimensions
	inStride []int
	// lastLo and lastHi bound the output positions of the last dimension
	// whose input is not padding, for the kernel position of the current
	// forSegments: the same for every run.
	lastLo, lastHi int
}

// NewWalker returns a walker of g's windows. A walker is not safe for
// use by several goroutines at once; reusing one allocates nothing.
func NewWalker(g *Geometry) *Walker {
	n := len(g.In)
	inStride := make([]int, n)
	step := 1
	for d := n - 1; d >= 0; d-- {
		inStride[d] = step
		step *= g.In[d]
	}
	return &Walker{g: g, kpos: make([]int, n), off: make([]int, n), opos: make([]int, n), inStride: inStride}
}

// setKernel decodes a flat kernel index into per-dimension offsets.
func (w *Walker) setKernel(kidx int) {
	g := w.g
	for d := len(g.Kernel) - 1; d >= 0; d-- {
		w.kpos[d] = kidx % g.Kernel[d]
		kidx /= g.Kernel[d]
		w.off[d] = w.kpos[d]*g.Dilations[d] - g.PadBegin[d]
	}
}

// validRange returns the range [lo, hi) of last-dimension output positions
// whose input index o*s+off lies inside [0, in).
func validRange(off, s, in, out int) (lo, hi int) {
	// o*s + off >= 0  <=>  o >= ceil(-off/s)
	if off < 0 {
		lo = (-off + s - 1) / s
	}
	// o*s + off <= in-1  <=>  o <= floor((in-1-off)/s)
	if in-1-off < 0 {
		return 0, 0
	}
	hi = min(out, (in-1-off)/s+1)
	lo = min(lo, hi)
	return lo, hi
}

// forSegments calls fn for each run of the last output dimension with the
// input base index of the run (-1 when the outer dimensions fall in the
// padding) and the run's position in the output.
func (w *Walker) forSegments(kidx int, fn func(outBase, inBase int)) {
	g := w.g
	w.setKernel(kidx)
	n := len(g.In)
	last := n - 1
	w.lastLo, w.lastHi = validRange(w.off[last], g.Strides[last], g.In[last], g.Out[last])
	outer := prod(g.Out[:last])
	clear(w.opos)
	for seg := range outer {
		inBase := 0
		for d := range last {
			i := w.opos[d]*g.Strides[d] + w.off[d]
			if i < 0 || i >= g.In[d] {
				inBase = -1
				break
			}
			inBase += i * w.inStride[d]
		}
		fn(seg*g.Out[last], inBase)
		for d := last - 1; d >= 0; d-- {
			w.opos[d]++
			if w.opos[d] < g.Out[d] {
				break
			}
			w.opos[d] = 0
		}
	}
}

// Im2colRow fills one row of Im2col's matrix, that of kernel position
// kidx for one input plane src, into dst (the output positions), with w,
// a walker of the same geometry.
func Im2colRow[T any](w *Walker, dst, src []T, kidx int) {
	g := w.g
	last := len(g.In) - 1
	ol, s := g.Out[last], g.Strides[last]
	var zero T
	w.forSegments(kidx, func(outBase, inBase int) {
		seg := dst[outBase : outBase+ol]
		if inBase < 0 {
			for i := range seg {
				seg[i] = zero
			}
			return
		}
		off := w.off[last]
		lo, hi := w.lastLo, w.lastHi
		for i := range lo {
			seg[i] = zero
		}
		if s == 1 && lo < hi {
			copy(seg[lo:hi], src[inBase+lo+off:inBase+hi+off])
		} else {
			for o := lo; o < hi; o++ {
				seg[o] = src[inBase+o*s+off]
			}
		}
		for i := hi; i < ol; i++ {
			seg[i] = zero
		}
	})
}

// col2imRowND adds one im2col row, of kernel position kidx, back into its
// input plane with the N-D walker.
func col2imRowND[T Number](w *Walker, dst, src []T, kidx int) {
	g := w.g
	last := len(g.In) - 1
	ol, s := g.Out[last], g.Strides[last]
	w.forSegments(kidx, func(outBase, inBase int) {
		if inBase < 0 {
			return
		}
		seg := src[outBase : outBase+ol]
		off := w.off[last]
		lo, hi := w.lastLo, w.lastHi
		for o := lo; o < hi; o++ {
			dst[inBase+o*s+off] += seg[o]
		}
	})
}
