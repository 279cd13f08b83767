package native

// The 2-D forms of im2col and col2im, which nearly every image network
// runs: the window of each kernel position is two nested ranges, the
// valid output columns are computed once per kernel column, and rows of
// the output that fall in the padding are filled (or skipped) whole,
// without the N-D walker's odometer and per-run callback.

// window2D is the geometry of kernel position (kh, kw) of a 2-D
// convolution: the input and output sizes, the strides, the input offsets
// of the window (ih = oh*sh + offH, iw = ow*sw + offW), and the output
// columns [lo, hi) whose input column is not padding.
func window2D(g *convGeom, kh, kw int) (H, W, OH, OW, sh, sw, offH, offW, lo, hi int) {
	H, W, OH, OW = g.in[0], g.in[1], g.out[0], g.out[1]
	sh, sw = g.strides[0], g.strides[1]
	offH = kh*g.dilations[0] - g.padBegin[0]
	offW = kw*g.dilations[1] - g.padBegin[1]
	lo, hi = convValidRange(offW, sw, W, OW)
	return
}

// convIm2colRow2D fills the im2col row of kernel position (kh, kw) of one
// input plane src [H, W] into dst [OH, OW].
func convIm2colRow2D[T any](g *convGeom, dst, src []T, kh, kw int) {
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

// convCol2imRow2D adds the im2col row of kernel position (kh, kw), src
// [OH, OW], back into its input plane dst [H, W].
func convCol2imRow2D[T numeric](g *convGeom, dst, src []T, kh, kw int) {
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
