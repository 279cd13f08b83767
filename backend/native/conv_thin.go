package native

import (
	"github.com/deep500/deep500-go/backend/native/internal/vec"
)

// convDirectThin computes a convolution group with at most two output
// channels (depthwise convolutions: one) straight from the input, without
// an im2col buffer: for every output channel r, input channel c and
// kernel position, each run of the last output axis adds w[r, c, k] times
// the matching run of the input (contiguous when the last stride is 1,
// so a vector axpy). It is convThinProduct over im2col rows computed on
// the fly, adding the same terms in the same order, except that padding
// positions (zeros in the im2col rows) are skipped rather than added. y
// holds the bias already, or is cleared when overwrite is set.
func convDirectThin[T floatElem](y, w, x []T, cg, mg int, g *convGeom, overwrite bool) {
	if overwrite {
		clear(y[:mg*g.outSize()])
	}
	axpy := axpyFor[T]()
	if len(g.in) == 2 {
		convDirectThin2D(y, w, x, cg, mg, g, axpy)
		return
	}
	convDirectThinND(y, w, x, cg, mg, g, axpy)
}

// convDirectThinND is convDirectThin for any number of spatial axes, the
// runs listed by the N-D window walker.
func convDirectThinND[T floatElem](y, w, x []T, cg, mg int, g *convGeom, axpy func(a T, x, y []T)) {
	ks, inSz, outSz := g.kernelSize(), g.inSize(), g.outSize()
	kc := cg * ks
	last := len(g.in) - 1
	s := g.strides[last]
	walker := newConvWindowWalker(g)
	for r := range mg {
		row := y[r*outSz : (r+1)*outSz]
		for c := range cg {
			plane := x[c*inSz : (c+1)*inSz]
			for kidx := range ks {
				a := w[r*kc+c*ks+kidx]
				walker.forSegments(kidx, func(outBase, inBase int) {
					lo, hi := walker.lastLo, walker.lastHi
					if inBase < 0 || lo >= hi {
						return
					}
					start := inBase + lo*s + walker.off[last]
					dst := row[outBase+lo : outBase+hi]
					if s == 1 {
						axpy(a, plane[start:start+hi-lo], dst)
						return
					}
					for o := range dst {
						dst[o] += a * plane[start+o*s]
					}
				})
			}
		}
	}
}

// convDirectThin2D is convDirectThin's 2-D form (depthwise convolutions of
// image networks): each kernel position's window is two nested ranges
// (window2D), so the runs come from a loop over output rows instead of
// the N-D walker's callback. Same terms, same order. Its loops are written
// out rather than shared with convDirectThinND through callbacks: the
// extra call per run cost MobileNetV2 about 4%.
func convDirectThin2D[T floatElem](y, w, x []T, cg, mg int, g *convGeom, axpy func(a T, x, y []T)) {
	ks, inSz, outSz := g.kernelSize(), g.inSize(), g.outSize()
	kc := cg * ks
	for r := range mg {
		row := y[r*outSz : (r+1)*outSz]
		for c := range cg {
			plane := x[c*inSz : (c+1)*inSz]
			for kidx := range ks {
				a := w[r*kc+c*ks+kidx]
				H, W, OH, OW, sh, sw, offH, offW, lo, hi := window2D(g, kidx/g.kernel[1], kidx%g.kernel[1])
				if lo >= hi {
					continue
				}
				for oh := range OH {
					ih := oh*sh + offH
					if ih < 0 || ih >= H {
						continue
					}
					start := ih*W + lo*sw + offW
					dst := row[oh*OW+lo : oh*OW+hi]
					if sw == 1 {
						axpy(a, plane[start:start+hi-lo], dst)
						continue
					}
					for o := range dst {
						dst[o] += a * plane[start+o*sw]
					}
				}
			}
		}
	}
}

// axpyFor returns the function that adds a·x to y (len(x) elements): the
// vector kernel for float32 where there is one, else a loop.
func axpyFor[T floatElem]() func(a T, x, y []T) {
	if f, ok := any(vec.Axpy).(func(a T, x, y []T)); ok {
		return f
	}
	return func(a T, x, y []T) {
		y = y[:len(x)]
		for i, v := range x {
			y[i] += a * v
		}
	}
}
