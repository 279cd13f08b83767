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
// with one call of im's row copy (im2colSource.rows). (im2colRow2D copied
// a row of the output at a time, gathering the stride-2 elements one by
// one.)
func im2colRows2DFloat32(im *DepthwiseImpl, col, x []float32, g *Geometry, lo, hi int) {
	ks, os, inSz := g.KernelSize(), g.OutSize(), g.InSize()
	var src im2colSource
	src.init(im, g, 0, g.In[0])
	defer src.release()
	for r := lo; r < hi; r++ {
		c, kidx := r/ks, r%ks
		src.load(x[c*inSz:(c+1)*inSz], c)
		src.rows(col[r*os:(r+1)*os], kidx/g.Kernel[1], kidx%g.Kernel[1], 0, g.Out[0])
	}
}

// im2colSource is a float32 input plane as the row copies of a 2-D
// im2col read it, for a geometry of column stride 1 or 2: the outputs of
// a kernel position whose input is not padding form a rectangle of its
// [OH, OW] plane, whose inputs form one of the input plane, rows sh·W
// apart, copied with one call of DepthwiseImpl.CopyRows. With column
// stride 2 they are every other element of the input's rows: the plane's
// rows [ihBase, ihEnd) are split once into their even and odd columns
// (DeinterleaveRows), from which the kernel positions of either parity
// copy contiguous runs.
type im2colSource struct {
	im            *DepthwiseImpl
	g             *Geometry
	plane         []float32  // the input plane (column stride 1)
	c             int        // the channel loaded, -1 for none
	ihBase, ihEnd int        // the rows split into halves (stride 2)
	pitch         int        // elements between rows of a half
	buf           *[]float32 // pooled: even columns of the rows, then odd ones
}

// init sets the source up for g, with the input rows [ihBase, ihEnd) to
// split with column stride 2.
func (s *im2colSource) init(im *DepthwiseImpl, g *Geometry, ihBase, ihEnd int) {
	*s = im2colSource{im: im, g: g, c: -1, ihBase: ihBase, ihEnd: ihEnd}
	if g.Strides[1] == 2 && ihEnd > ihBase {
		// Room for the whole vectors DeinterleaveRows stores.
		s.pitch = roundUp(g.In[1], 2*depthwiseVector) / 2
		s.buf = gemm.PackBuffer[float32](2 * (ihEnd - ihBase) * s.pitch)
	}
}

// release gives the halves' buffer back.
func (s *im2colSource) release() {
	if s.buf != nil {
		gemm.ReleasePackBuffer(s.buf)
	}
}

// load makes plane, channel c's, the source (splitting it unless it
// already is).
func (s *im2colSource) load(plane []float32, c int) {
	if c == s.c {
		return
	}
	s.plane, s.c = plane, c
	if s.buf != nil {
		W, n := s.g.In[1], s.ihEnd-s.ihBase
		halves := *s.buf
		s.im.DeinterleaveRows(halves[:n*s.pitch], halves[n*s.pitch:], s.pitch, plane[s.ihBase*W:], W, n, W)
	}
}

// rows writes the output rows [oh0, oh1) of kernel position (kh, kw)'s
// im2col row into dst ((oh1-oh0)·OW elements), clearing the padding
// around the rectangle with plain stores. With column stride 2 the
// input rows the rectangle reads must lie in [ihBase, ihEnd).
func (s *im2colSource) rows(dst []float32, kh, kw, oh0, oh1 int) {
	g := s.g
	H, W, OH, OW := g.In[0], g.In[1], g.Out[0], g.Out[1]
	sh, sw := g.Strides[0], g.Strides[1]
	offH := kh*g.Dilations[0] - g.PadBegin[0]
	offW := kw*g.Dilations[1] - g.PadBegin[1]
	ohLo, ohHi := validRange(offH, sh, H, OH)
	owLo, owHi := validRange(offW, sw, W, OW)
	ohLo, ohHi = max(ohLo, oh0), min(ohHi, oh1)
	dst = dst[:(oh1-oh0)*OW]
	if ohLo >= ohHi || owLo >= owHi {
		clear(dst)
		return
	}
	clear(dst[:(ohLo-oh0)*OW])
	clear(dst[(ohHi-oh0)*OW:])
	if owLo > 0 || owHi < OW {
		// A column or two of padding per row: stores, not calls.
		for oh := ohLo; oh < ohHi; oh++ {
			row := dst[(oh-oh0)*OW : (oh-oh0+1)*OW]
			for i := range owLo {
				row[i] = 0
			}
			for i := owHi; i < len(row); i++ {
				row[i] = 0
			}
		}
	}
	out := dst[(ohLo-oh0)*OW+owLo:]
	ih0 := ohLo*sh + offH
	rows, n := ohHi-ohLo, owHi-owLo
	if sw == 1 {
		s.im.CopyRows(out, OW, s.plane[ih0*W+owLo+offW:], sh*W, rows, n)
		return
	}
	// Input column 2·ow + offW is element ow + offW/2 (rounded down) of
	// the half of offW's parity.
	q := offW >> 1
	half := (*s.buf)[(offW&1)*(s.ihEnd-s.ihBase)*s.pitch:]
	s.im.CopyRows(out, OW, half[(ih0-s.ihBase)*s.pitch+owLo+q:], sh*s.pitch, rows, n)
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
	if dst32, ok := any(dst).([]float32); ok && (g.Strides[1] == 1 || g.Strides[1] == 2) {
		im2colBlock2DFloat32(DepthwiseActive(), dst32, any(x).([]float32), g, p0, j0, kc, nc)
		return
	}
	for p := range kc {
		c, kidx := (p0+p)/ks, (p0+p)%ks
		im2colRange2D(g, dst[p*nc:(p+1)*nc], x[c*inSz:(c+1)*inSz], kidx/g.Kernel[1], kidx%g.Kernel[1], j0)
	}
}

// im2colBlock2DFloat32 is Im2colBlock2D for float32 and column stride 1
// or 2: the output rows the block covers whole go through
// im2colSource.rows, one row copy per row of the block (with stride 2,
// each channel's input rows they read split into even and odd columns
// once per block), and the partial rows at either end through
// im2colRange2D.
func im2colBlock2DFloat32(im *DepthwiseImpl, dst, x []float32, g *Geometry, p0, j0, kc, nc int) {
	ks, inSz, OW := g.KernelSize(), g.InSize(), g.Out[1]
	// head outputs before the first whole row, then whole rows [ohA, ohB),
	// then tail outputs.
	head := 0
	if ow := j0 % OW; ow != 0 {
		head = min(nc, OW-ow)
	}
	ohA := (j0 + head) / OW
	ohB := ohA + (nc-head)/OW
	tail := nc - head - (ohB-ohA)*OW
	// The input rows whole output rows read: from the first's top to the
	// last's bottom, inside the plane.
	ihBase := max(0, ohA*g.Strides[0]-g.PadBegin[0])
	ihEnd := min(g.In[0], (ohB-1)*g.Strides[0]-g.PadBegin[0]+(g.Kernel[0]-1)*g.Dilations[0]+1)
	var src im2colSource
	if ohB > ohA {
		src.init(im, g, ihBase, max(ihBase, ihEnd))
		defer src.release()
	}
	for p := range kc {
		c, kidx := (p0+p)/ks, (p0+p)%ks
		kh, kw := kidx/g.Kernel[1], kidx%g.Kernel[1]
		plane, row := x[c*inSz:(c+1)*inSz], dst[p*nc:(p+1)*nc]
		if head > 0 {
			im2colRange2D(g, row[:head], plane, kh, kw, j0)
		}
		if ohB > ohA {
			src.load(plane, c)
			src.rows(row[head:nc-tail], kh, kw, ohA, ohB)
		}
		if tail > 0 {
			im2colRange2D(g, row[nc-tail:], plane, kh, kw, j0+nc-tail)
		}
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
