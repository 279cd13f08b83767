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

// packIm2colPanels2D writes the kc x nc block at (p0, j0) of the im2col
// matrix of x (channels planes [H, W], as convIm2col lays it out) straight
// into GEMM panels of nr columns (packPanelsB's layout), so a convolution
// never stores the whole matrix: each element is copied once, from the
// input into the panel the micro-kernel reads.
func packIm2colPanels2D[T floatElem](dst, x []T, g *convGeom, p0, j0, kc, nc, nr int) {
	H, W, OW := g.in[0], g.in[1], g.out[1]
	sh, sw := g.strides[0], g.strides[1]
	ks, inSz := g.kernelSize(), g.inSize()
	// Where each row p of the block reads: its input plane and kernel
	// position's window (kc is at most gemmKC).
	var taps [gemmKC]im2colTap
	for p := range kc {
		c, kidx := (p0+p)/ks, (p0+p)%ks
		_, _, _, _, _, _, offH, offW, lo, hi := window2D(g, kidx/g.kernel[1], kidx%g.kernel[1])
		taps[p] = im2colTap{plane: c * inSz, offH: offH, offW: offW, lo: lo, hi: hi}
	}
	var runBuf [32]im2colRun
	for jr := 0; jr < nc; jr += nr {
		cols := min(nr, nc-jr)
		// The panel's columns are output positions j0+jr...; split them
		// into runs along one output row, the same for every p.
		runs := runBuf[:0]
		oh, ow := (j0+jr)/OW, (j0+jr)%OW
		for f := 0; f < cols; oh, ow = oh+1, 0 {
			n := min(cols-f, OW-ow)
			runs = append(runs, im2colRun{at: f, oh: oh, ow: ow, n: n})
			f += n
		}
		panel := dst[jr*kc : (jr+nr)*kc]
		for p := range kc {
			t := &taps[p]
			out := panel[p*nr : (p+1)*nr]
			for _, r := range runs {
				seg := out[r.at : r.at+r.n]
				ih := r.oh*sh + t.offH
				a, b := max(r.ow, t.lo), min(r.ow+r.n, t.hi) // columns off the padding
				if ih < 0 || ih >= H || a >= b {
					clear(seg)
					continue
				}
				row := x[t.plane+ih*W : t.plane+(ih+1)*W]
				for i := range seg[:a-r.ow] {
					seg[i] = 0
				}
				if sw == 1 {
					src := row[a+t.offW : b+t.offW]
					dst := seg[a-r.ow : b-r.ow]
					for i, v := range src {
						dst[i] = v
					}
				} else {
					for o := a; o < b; o++ {
						seg[o-r.ow] = row[o*sw+t.offW]
					}
				}
				for i := b - r.ow; i < r.n; i++ {
					seg[i] = 0
				}
			}
			clear(out[cols:])
		}
	}
}

// im2colTap is where one row of the im2col matrix reads: the offset of its
// input plane, its window's offsets and its valid output columns [lo, hi)
// (see window2D).
type im2colTap struct{ plane, offH, offW, lo, hi int }

// im2colRun is a run of n panel columns from position at, which are the
// output positions (oh, ow...ow+n-1) of one output row.
type im2colRun struct{ at, oh, ow, n int }
