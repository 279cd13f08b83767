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

// im2colRows2DFloat32 writes rows [lo, hi) of the im2col matrix col of
// float32 planes x for a 2-D geometry of column stride 1 or 2, each row
// with one call of im's row copy (DepthwiseImpl.CopyRows): the output
// positions whose input is not padding form a rectangle of the row's
// [OH, OW] plane, and their inputs one of the input plane, rows sh·W
// apart. With column stride 2 the inputs of a row are every other
// element of the input's rows: each channel's plane is split once into
// its even and odd columns (DeinterleaveRows), from which the kernel
// positions of either parity copy contiguous runs. The padding around
// the rectangle is cleared. (im2colRow2D copied the rectangle a row at a
// time, gathering the stride-2 elements one by one.)
func im2colRows2DFloat32(im *DepthwiseImpl, col, x []float32, g *Geometry, lo, hi int) {
	ks, os, inSz := g.KernelSize(), g.OutSize(), g.InSize()
	H, W, OH, OW := g.In[0], g.In[1], g.Out[0], g.Out[1]
	sh, sw := g.Strides[0], g.Strides[1]
	// With stride 2, halves holds the even columns of channel c's rows
	// then the odd ones, pitch elements apart: room for the whole
	// vectors DeinterleaveRows stores.
	var halves []float32
	pitch, c := 0, -1
	if sw == 2 {
		pitch = roundUp(W, 2*depthwiseVector) / 2
		buf := gemm.PackBuffer[float32](2 * H * pitch)
		defer gemm.ReleasePackBuffer(buf)
		halves = *buf
	}
	for r := lo; r < hi; r++ {
		kidx := r % ks
		kh, kw := kidx/g.Kernel[1], kidx%g.Kernel[1]
		dst := col[r*os : (r+1)*os]
		offH := kh*g.Dilations[0] - g.PadBegin[0]
		offW := kw*g.Dilations[1] - g.PadBegin[1]
		ohLo, ohHi := validRange(offH, sh, H, OH)
		owLo, owHi := validRange(offW, sw, W, OW)
		if ohLo >= ohHi || owLo >= owHi {
			clear(dst)
			continue
		}
		clear(dst[:ohLo*OW])
		clear(dst[ohHi*OW:])
		if owLo > 0 || owHi < OW {
			// A column or two of padding per row: stores, not calls.
			for oh := ohLo; oh < ohHi; oh++ {
				row := dst[oh*OW : (oh+1)*OW]
				for i := range owLo {
					row[i] = 0
				}
				for i := owHi; i < len(row); i++ {
					row[i] = 0
				}
			}
		}
		plane := x[(r/ks)*inSz : (r/ks+1)*inSz]
		ih0 := ohLo*sh + offH
		out := dst[ohLo*OW+owLo:]
		rows, n := ohHi-ohLo, owHi-owLo
		if sw == 1 {
			im.CopyRows(out, OW, plane[ih0*W+owLo+offW:], sh*W, rows, n)
			continue
		}
		if r/ks != c {
			c = r / ks
			im.DeinterleaveRows(halves[:H*pitch], halves[H*pitch:], pitch, plane, W, H, W)
		}
		// Input column 2·ow + offW is element ow + offW/2 (rounded down)
		// of the half of offW's parity.
		q := offW >> 1
		half := halves[(offW&1)*H*pitch:]
		im.CopyRows(out, OW, half[ih0*pitch+owLo+q:], sh*pitch, rows, n)
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

// Im2colBlock2D writes the kc x nc block at (p0, j0) of the im2col matrix
// of x (channels planes [H, W], as Im2col lays it out) into dst,
// row-major with leading dimension nc (a gemm.BlockWriter), whole output
// rows at a time, so that a convolution never stores the whole matrix:
// the GEMM reads each block while it is in cache. (Packing each panel's
// short runs straight from the input was 1.6 to 1.8 times slower than
// writing the block and packing it.)
func Im2colBlock2D[T any](dst, x []T, g *Geometry, p0, j0, kc, nc int) {
	ks, inSz := g.KernelSize(), g.InSize()
	for p := range kc {
		c, kidx := (p0+p)/ks, (p0+p)%ks
		im2colRange2D(g, dst[p*nc:(p+1)*nc], x[c*inSz:(c+1)*inSz], kidx/g.Kernel[1], kidx%g.Kernel[1], j0)
	}
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
