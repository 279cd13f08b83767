package conv

import (
	"github.com/deep500/deep500-go/backend/native/internal/gemm"
)

// The 2-D forms of im2col and col2im, which nearly every image network
// runs: the window of each kernel position is two nested ranges, the
// valid output columns are computed once per kernel column, and rows of
// the output that fall in the padding are filled (or skipped) whole,
// without the N-D walker's odometer and per-run callback.

// window2D is the geometry of kernel position (kh, kw) of a 2-D
// convolution: the input and output sizes, the strides, the input offsets
// of the window (ih = oh*sh + offH, iw = ow*sw + offW), and the output
// columns [lo, hi) whose input column is not padding.
func window2D(g *Geometry, kh, kw int) (H, W, OH, OW, sh, sw, offH, offW, lo, hi int) {
	H, W, OH, OW = g.In[0], g.In[1], g.Out[0], g.Out[1]
	sh, sw = g.Strides[0], g.Strides[1]
	offH = kh*g.Dilations[0] - g.PadBegin[0]
	offW = kw*g.Dilations[1] - g.PadBegin[1]
	lo, hi = validRange(offW, sw, W, OW)
	return
}

// im2colRow2D fills the im2col row of kernel position (kh, kw) of one
// input plane src [H, W] into dst [OH, OW].
func im2colRow2D[T any](g *Geometry, dst, src []T, kh, kw int) {
	H, W, OH, OW, sh, sw, offH, offW, lo, hi := window2D(g, kh, kw)
	var zero T
	for oh := range OH {
		seg := dst[oh*OW : (oh+1)*OW]
		ih := oh*sh + offH
		if ih < 0 || ih >= H || lo >= hi {
			clear(seg)
			continue
		}
		for i := range lo {
			seg[i] = zero
		}
		row := src[ih*W : (ih+1)*W]
		if sw == 1 {
			copy(seg[lo:hi], row[lo+offW:hi+offW])
		} else {
			for o := lo; o < hi; o++ {
				seg[o] = row[o*sw+offW]
			}
		}
		for i := hi; i < OW; i++ {
			seg[i] = zero
		}
	}
}

// col2imRow2D adds the im2col row of kernel position (kh, kw), src
// [OH, OW], back into its input plane dst [H, W].
func col2imRow2D[T Number](g *Geometry, dst, src []T, kh, kw int) {
	H, W, OH, OW, sh, sw, offH, offW, lo, hi := window2D(g, kh, kw)
	if lo >= hi {
		return
	}
	for oh := range OH {
		ih := oh*sh + offH
		if ih < 0 || ih >= H {
			continue
		}
		seg := src[oh*OW : (oh+1)*OW]
		row := dst[ih*W : (ih+1)*W]
		if sw == 1 {
			row := row[lo+offW : hi+offW]
			for i, v := range seg[lo:hi] {
				row[i] += v
			}
			continue
		}
		for o := lo; o < hi; o++ {
			row[o*sw+offW] += seg[o]
		}
	}
}

// PackIm2colPanels2D writes the kc x nc block at (p0, j0) of the im2col
// matrix of x (channels planes [H, W], as Im2col lays it out) into GEMM
// panels of nr columns (gemm.PackPanelsB's layout), so a convolution never
// stores the whole matrix. It writes the block's rows into a pooled
// buffer first, whole output rows at a time, and packs that: the block
// stays in cache, and both copies run over long rows. (Packing each
// panel's short runs straight from the input was 1.6 to 1.8 times slower.)
func PackIm2colPanels2D[T gemm.Float](dst, x []T, g *Geometry, p0, j0, kc, nc, nr int) {
	ks, inSz := g.KernelSize(), g.InSize()
	buf := gemm.PackBuffer[T](kc * nc)
	defer gemm.ReleasePackBuffer(buf)
	block := *buf
	for p := range kc {
		c, kidx := (p0+p)/ks, (p0+p)%ks
		im2colRange2D(g, block[p*nc:(p+1)*nc], x[c*inSz:(c+1)*inSz], kidx/g.Kernel[1], kidx%g.Kernel[1], j0)
	}
	gemm.PackPanelsB(dst, gemm.NewMatrix(block, nc, false), 0, 0, kc, nc, nr)
}

// im2colRange2D is im2colRow2D for the output positions j0 ...
// j0+len(dst)-1 alone.
func im2colRange2D[T any](g *Geometry, dst, src []T, kh, kw, j0 int) {
	H, W, _, OW, sh, sw, offH, offW, lo, hi := window2D(g, kh, kw)
	var zero T
	oh, ow := j0/OW, j0%OW
	for f := 0; f < len(dst); oh, ow = oh+1, 0 {
		n := min(len(dst)-f, OW-ow)
		seg := dst[f : f+n]
		f += n
		ih := oh*sh + offH
		a, b := max(ow, lo), min(ow+n, hi) // columns off the padding
		if ih < 0 || ih >= H || a >= b {
			clear(seg)
			continue
		}
		for i := range a - ow {
			seg[i] = zero
		}
		row := src[ih*W : (ih+1)*W]
		if sw == 1 {
			copy(seg[a-ow:b-ow], row[a+offW:b+offW])
		} else {
			for o := a; o < b; o++ {
				seg[o-ow] = row[o*sw+offW]
			}
		}
		for i := b - ow; i < n; i++ {
			seg[i] = zero
		}
	}
}
