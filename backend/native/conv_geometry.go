package native

import (
	"fmt"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
)

// This file holds what convolutions and pooling share: the geometry of a
// sliding window over the spatial dimensions of an [N, C, D1, ..., Dk]
// tensor (output sizes and padding under every auto_pad mode), and the
// im2col / col2im rearrangements that turn a convolution into a GEMM.

// convMaxElements bounds any buffer a window operator allocates from
// attribute values (pads, strides, output_shape), so that a hostile model
// gets an error instead of an out-of-memory crash.
const convMaxElements = 1 << 31

// convGeom is the window geometry of one node applied to one input shape.
// All slices have one entry per spatial dimension.
type convGeom struct {
	in, kernel, out    []int
	strides, dilations []int
	padBegin, padEnd   []int
}

// inSize and outSize are the number of spatial positions of the input and
// output; kernelSize the number of window positions.
func (g *convGeom) inSize() int     { return prod(g.in) }
func (g *convGeom) outSize() int    { return prod(g.out) }
func (g *convGeom) kernelSize() int { return prod(g.kernel) }

func prod(v []int) int {
	p := 1
	for _, x := range v {
		p *= x
	}
	return p
}

// convWindowAttrs are the attributes every window operator reads.
type convWindowAttrs struct {
	op        string  // for messages
	autoPad   string  // NOTSET, SAME_UPPER, SAME_LOWER, VALID
	strides   []int64 // nil: all 1
	dilations []int64 // nil: all 1
	pads      []int64 // nil: all 0; [begin..., end...]
	ceil      bool    // pooling's ceil_mode
}

// positiveOr returns v as ints, or n copies of def when v is empty, after
// checking its length and that every entry is at least 1.
func positiveOr(name string, v []int64, n, def int) ([]int, error) {
	out := make([]int, n)
	if len(v) == 0 {
		for i := range out {
			out[i] = def
		}
		return out, nil
	}
	if len(v) != n {
		return nil, fmt.Errorf("%s %v has %d entries, want %d (one per spatial dimension)", name, v, len(v), n)
	}
	for i, x := range v {
		if x < 1 || x > convMaxElements {
			return nil, fmt.Errorf("%s %v: entry %d must be positive", name, v, i)
		}
		out[i] = int(x)
	}
	return out, nil
}

// geometry computes the output size and padding of a window of the given
// kernel (sizes per spatial dimension) over input spatial sizes in.
func (a *convWindowAttrs) geometry(in, kernel []int) (*convGeom, error) {
	n := len(in)
	g := &convGeom{in: in, kernel: kernel, out: make([]int, n), padBegin: make([]int, n), padEnd: make([]int, n)}
	var err error
	if g.strides, err = positiveOr("strides", a.strides, n, 1); err != nil {
		return nil, err
	}
	if g.dilations, err = positiveOr("dilations", a.dilations, n, 1); err != nil {
		return nil, err
	}
	for i, k := range kernel {
		if k < 1 {
			return nil, fmt.Errorf("kernel size %v must be positive", kernel)
		}
		if (k-1)*g.dilations[i] >= convMaxElements {
			return nil, fmt.Errorf("dilated kernel %v x %v is too large", kernel, g.dilations)
		}
	}
	autoPad := a.autoPad
	if autoPad == "" {
		autoPad = "NOTSET"
	}
	switch autoPad {
	case "NOTSET":
		if len(a.pads) != 0 && len(a.pads) != 2*n {
			return nil, fmt.Errorf("pads %v has %d entries, want %d", a.pads, len(a.pads), 2*n)
		}
		for i := range n {
			if len(a.pads) != 0 {
				b, e := a.pads[i], a.pads[i+n]
				if b < 0 || e < 0 || b > convMaxElements || e > convMaxElements {
					return nil, fmt.Errorf("pads %v must be non-negative", a.pads)
				}
				g.padBegin[i], g.padEnd[i] = int(b), int(e)
			}
			ek := (kernel[i]-1)*g.dilations[i] + 1
			span := in[i] + g.padBegin[i] + g.padEnd[i] - ek
			if span < 0 {
				return nil, fmt.Errorf("%s window %d (dilated) does not fit input size %d with pads %d+%d in spatial dimension %d",
					a.op, ek, in[i], g.padBegin[i], g.padEnd[i], i)
			}
			s := g.strides[i]
			out := span/s + 1
			if a.ceil {
				out = (span+s-1)/s + 1
				// The last window must start inside the input or the
				// leading padding, never wholly in the trailing padding.
				if (out-1)*s >= in[i]+g.padBegin[i] {
					out--
				}
			}
			g.out[i] = out
		}
	case "SAME_UPPER", "SAME_LOWER":
		for i := range n {
			s := g.strides[i]
			out := (in[i] + s - 1) / s
			ek := (kernel[i]-1)*g.dilations[i] + 1
			total := max(0, (out-1)*s+ek-in[i])
			small, big := total/2, total-total/2
			if autoPad == "SAME_UPPER" {
				g.padBegin[i], g.padEnd[i] = small, big
			} else {
				g.padBegin[i], g.padEnd[i] = big, small
			}
			g.out[i] = out
		}
	case "VALID":
		for i := range n {
			ek := (kernel[i]-1)*g.dilations[i] + 1
			if in[i] < ek {
				return nil, fmt.Errorf("%s window %d (dilated) does not fit input size %d in spatial dimension %d", a.op, ek, in[i], i)
			}
			s := g.strides[i]
			g.out[i] = (in[i]-ek)/s + 1
		}
	default:
		return nil, network.Unsupportedf("%s auto_pad %q", a.op, a.autoPad)
	}
	return g, nil
}

// checkOutput rejects an output of lead*prod(out) elements (lead being
// N*C or N*M) that no sane model asks for.
func (g *convGeom) checkOutput(lead int) error {
	n := lead
	for _, d := range g.out {
		if d != 0 && n > convMaxElements/d {
			return fmt.Errorf("output of %d x %v elements is too large", lead, g.out)
		}
		n *= d
	}
	return nil
}

// convIm2col writes the columns of x (channels x prod(g.in), row-major)
// into col, a (channels*prod(g.kernel)) x prod(g.out) row-major matrix:
// row (c, k1..kn) holds, for every output position, the input element that
// kernel position sees there, or zero in the padding. Rows are filled in
// parallel when the matrix is large.
func convIm2col[T any](col, x []T, channels int, g *convGeom, threads int) {
	ks, os := g.kernelSize(), g.outSize()
	rows := channels * ks
	par.For(rows, threads, max(1, par.Grain/max(os, 1)), func(lo, hi int) {
		if len(g.in) == 2 {
			for r := lo; r < hi; r++ {
				c, kidx := r/ks, r%ks
				convIm2colRow2D(g, col[r*os:(r+1)*os], x[c*g.inSize():(c+1)*g.inSize()], kidx/g.kernel[1], kidx%g.kernel[1])
			}
			return
		}
		w := newConvWindowWalker(g)
		for r := lo; r < hi; r++ {
			c, kidx := r/ks, r%ks
			convIm2colRowT(w, col[r*os:(r+1)*os], x[c*g.inSize():(c+1)*g.inSize()], kidx)
		}
	})
}

// convCol2im is the adjoint of convIm2col: it adds every element of col
// into the input position it was taken from (padding positions are
// dropped). x must be zeroed (or hold a bias) beforehand. Channels are
// spread over goroutines, since rows of one channel write the same plane.
func convCol2im[T numeric](x, col []T, channels int, g *convGeom, threads int) {
	ks, os := g.kernelSize(), g.outSize()
	par.For(channels, threads, max(1, par.Grain/max(os*ks, 1)), func(lo, hi int) {
		w := newConvWindowWalker(g)
		for c := lo; c < hi; c++ {
			plane := x[c*g.inSize() : (c+1)*g.inSize()]
			for kidx := range ks {
				r := c*ks + kidx
				if len(g.in) == 2 {
					convCol2imRow2D(g, plane, col[r*os:(r+1)*os], kidx/g.kernel[1], kidx%g.kernel[1])
					continue
				}
				convCol2imRowT(w, plane, col[r*os:(r+1)*os], kidx)
			}
		}
	})
}

// convWindowWalker walks the output positions of one kernel position: the
// outer spatial dimensions by odometer, the last one as a contiguous run
// whose valid (non-padding) range is computed once.
type convWindowWalker struct {
	g        *convGeom
	kpos     []int // kernel position per dimension
	off      []int // input offset of that kernel position: k*d - padBegin
	opos     []int // output position of the outer dimensions
	inStride []int
	// lastLo and lastHi bound the output positions of the last dimension
	// whose input is not padding, for the kernel position of the current
	// forSegments: the same for every run.
	lastLo, lastHi int
}

func newConvWindowWalker(g *convGeom) *convWindowWalker {
	n := len(g.in)
	return &convWindowWalker{g: g, kpos: make([]int, n), off: make([]int, n), opos: make([]int, n), inStride: rowMajorStrides(g.in)}
}

// setKernel decodes a flat kernel index into per-dimension offsets.
func (w *convWindowWalker) setKernel(kidx int) {
	g := w.g
	for d := len(g.kernel) - 1; d >= 0; d-- {
		w.kpos[d] = kidx % g.kernel[d]
		kidx /= g.kernel[d]
		w.off[d] = w.kpos[d]*g.dilations[d] - g.padBegin[d]
	}
}

// convValidRange returns the range [lo, hi) of last-dimension output positions
// whose input index o*s+off lies inside [0, in).
func convValidRange(off, s, in, out int) (lo, hi int) {
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
func (w *convWindowWalker) forSegments(kidx int, fn func(outBase, inBase int)) {
	g := w.g
	w.setKernel(kidx)
	n := len(g.in)
	last := n - 1
	w.lastLo, w.lastHi = convValidRange(w.off[last], g.strides[last], g.in[last], g.out[last])
	outer := prod(g.out[:last])
	clear(w.opos)
	for seg := range outer {
		inBase := 0
		for d := range last {
			i := w.opos[d]*g.strides[d] + w.off[d]
			if i < 0 || i >= g.in[d] {
				inBase = -1
				break
			}
			inBase += i * w.inStride[d]
		}
		fn(seg*g.out[last], inBase)
		for d := last - 1; d >= 0; d-- {
			w.opos[d]++
			if w.opos[d] < g.out[d] {
				break
			}
			w.opos[d] = 0
		}
	}
}

// convIm2colRowT fills one im2col row.
func convIm2colRowT[T any](w *convWindowWalker, dst, src []T, kidx int) {
	g := w.g
	last := len(g.in) - 1
	ol, s := g.out[last], g.strides[last]
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

// convCol2imRowT adds one im2col row back into its input plane.
func convCol2imRowT[T numeric](w *convWindowWalker, dst, src []T, kidx int) {
	g := w.g
	last := len(g.in) - 1
	ol, s := g.out[last], g.strides[last]
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
