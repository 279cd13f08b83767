package conv

import (
	"github.com/deep500/deep500-go/backend/native/internal/gemm"
	"github.com/deep500/deep500-go/backend/native/internal/vec"
)

// DirectThin computes a convolution group with at most two output
// channels (depthwise convolutions: one) straight from the input, without
// an im2col buffer: for every output channel r, input channel c and
// kernel position, each run of the last output axis adds w[r, c, k] times
// the matching run of the input (contiguous when the last stride is 1,
// so a vector axpy). It is ThinProduct over im2col rows computed on
// the fly, adding the same terms in the same order, except that padding
// positions (zeros in the im2col rows) are skipped rather than added. y
// holds the bias already, or is cleared when overwrite is set.
func DirectThin[T gemm.Float](y, w, x []T, cg, mg int, g *Geometry, overwrite bool) {
	if overwrite {
		clear(y[:mg*g.OutSize()])
	}
	axpy := axpyFor[T]()
	if len(g.In) == 2 {
		directThin2D(y, w, x, cg, mg, g, axpy)
		return
	}
	directThinND(y, w, x, cg, mg, g, axpy)
}

// directThinND is DirectThin for any number of spatial axes, the
// runs listed by the N-D window walker.
func directThinND[T gemm.Float](y, w, x []T, cg, mg int, g *Geometry, axpy func(a T, x, y []T)) {
	ks, inSz, outSz := g.KernelSize(), g.InSize(), g.OutSize()
	kc := cg * ks
	last := len(g.In) - 1
	s := g.Strides[last]
	walker := NewWalker(g)
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

// directThin2D is DirectThin's 2-D form (depthwise convolutions of
// image networks): each kernel position's window is two nested ranges
// (window2D), so the runs come from a loop over output rows instead of
// the N-D walker's callback. Same terms, same order. Its loops are written
// out rather than shared with directThinND through callbacks: the
// extra call per run cost MobileNetV2 about 4%.
func directThin2D[T gemm.Float](y, w, x []T, cg, mg int, g *Geometry, axpy func(a T, x, y []T)) {
	ks, inSz, outSz := g.KernelSize(), g.InSize(), g.OutSize()
	kc := cg * ks
	for r := range mg {
		row := y[r*outSz : (r+1)*outSz]
		for c := range cg {
			plane := x[c*inSz : (c+1)*inSz]
			for kidx := range ks {
				a := w[r*kc+c*ks+kidx]
				H, W, OH, OW, sh, sw, offH, offW, lo, hi := window2D(g, kidx/g.Kernel[1], kidx%g.Kernel[1])
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
// vector kernel of package vec for float32, else a loop.
func axpyFor[T gemm.Float]() func(a T, x, y []T) {
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

// ThinProduct computes y (+)= w·cols for a w of only a few rows (mg, each
// of kc columns) and an im2col matrix cols of kc rows of outSz: each row
// of y is a sum of rows of cols, scaled. With overwrite, y is cleared
// first; otherwise it holds the bias.
func ThinProduct[T gemm.Float](y, w, cols []T, mg, kc, outSz int, overwrite bool) {
	for r := range mg {
		row := y[r*outSz : (r+1)*outSz]
		if overwrite {
			clear(row)
		}
		for p := range kc {
			a := w[r*kc+p]
			src := cols[p*outSz : (p+1)*outSz]
			for j, v := range src {
				row[j] += a * v
			}
		}
	}
}
