package conv

// Depthwise convolutions (one input channel per group) of 3×3 and 5×5
// kernels, stride 1 or 2, dilation 1, on float32 planes: the layers that
// dominate MobileNet-style networks, which DirectThin runs as one axpy per
// kernel position and output row. Here each output vector is computed at
// once with every tap held in a register, so each output element is read
// and written once instead of k·k times.
//
// Padding and stride are taken out of the inner loop by copying the input
// plane, once, into a scratch layout where every tap of every output
// column is a contiguous load at a constant offset:
//
//   - padded row j (j in [0, (oh-1)·s + k)) holds input row j - padTop,
//     or zeros; within it, column q holds input column q - padLeft, or
//     zero;
//   - with stride 2 each padded row is stored as two phase rows, its even
//     columns then its odd columns, so that output column o of tap kx
//     reads phase kx%2 at column o + kx/2;
//   - every (phase) row is pitch elements long, enough for the output
//     width rounded up to a whole vector plus the kernel's reach, so the
//     kernels load whole vectors past the last output column without
//     leaving the scratch (the extra outputs are never stored), and for
//     the whole vectors DeinterleaveRows stores past the input's end.
//
// The padding positions are the same for every plane of a layout: the
// scratch is cleared once (Prepare) and each Load writes only the
// input's positions.
//
// Row m of the layout for output row oh and tap (ky, kx) is
// oh·s·s + ky·s + kx%s, column o + kx/s.

// DepthwiseLayout is the scratch layout of one geometry (see above).
type DepthwiseLayout struct {
	K, S            int // kernel size and stride, both axes
	H, W, OH, OW    int // input and output plane
	PadTop, PadLeft int // padding before the rows and columns
	Rows            int // padded rows (each S phase rows in the scratch)
	Pitch           int // elements per (phase) row
}

// depthwiseVector is the widest vector of any implementation (AVX-512's
// 16 float32 lanes): rows are long enough for its loads.
const depthwiseVector = 16

// NewDepthwiseLayout returns the layout of g when the depthwise kernels
// cover it (2-D, square 3×3 or 5×5 kernel, equal strides of 1 or 2,
// dilation 1); ok is false otherwise.
func NewDepthwiseLayout(g *Geometry) (l DepthwiseLayout, ok bool) {
	if len(g.In) != 2 || g.Kernel[0] != g.Kernel[1] || g.Strides[0] != g.Strides[1] ||
		g.Dilations[0] != 1 || g.Dilations[1] != 1 {
		return l, false
	}
	k, s := g.Kernel[0], g.Strides[0]
	if (k != 3 && k != 5) || (s != 1 && s != 2) || g.Out[0] < 1 || g.Out[1] < 1 {
		return l, false
	}
	l = DepthwiseLayout{K: k, S: s, H: g.In[0], W: g.In[1], OH: g.Out[0], OW: g.Out[1],
		PadTop: g.PadBegin[0], PadLeft: g.PadBegin[1]}
	l.Rows = (l.OH-1)*s + k
	// Loads reach column roundUp(OW)-1 + (k-1)/s; the copied input ends
	// before (PadLeft+W)/s + 1.
	reach := roundUp(l.OW, depthwiseVector) + (k-1)/s
	l.Pitch = roundUp(max(reach, (l.PadLeft+l.W)/s+2+depthwiseVector), depthwiseVector)
	return l, true
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// ScratchSize is the number of elements of the padded layout.
func (l *DepthwiseLayout) ScratchSize() int { return l.Rows * l.S * l.Pitch }

// Prepare clears the scratch src (at least ScratchSize elements) for
// the layout: its padding, which Load leaves as it is.
func (l *DepthwiseLayout) Prepare(src []float32) { clear(src[:l.ScratchSize()]) }

// Load copies the input plane x (H×W) into src, a scratch of this layout
// that Prepare has cleared (and that only Loads of this layout have
// written since), with im's row copies: one call per plane.
func (l *DepthwiseLayout) Load(im *DepthwiseImpl, src, x []float32) {
	src = src[:l.ScratchSize()]
	first, end := max(0, -l.PadTop), min(l.H, l.Rows-l.PadTop)
	if first >= end {
		return
	}
	rowLen := l.S * l.Pitch
	at := (first + l.PadTop) * rowLen
	x = x[first*l.W:]
	if l.S == 1 {
		im.CopyRows(src[at+l.PadLeft:], rowLen, x, l.W, end-first, l.W)
		return
	}
	// Input column i sits at padded column i+PadLeft, phase
	// (i+PadLeft)%2: the even input columns go to phase PadLeft%2 from
	// column PadLeft/2, the odd ones to the other phase from column
	// (PadLeft+1)/2.
	pe := l.PadLeft % 2
	even := src[at+pe*l.Pitch+l.PadLeft/2:]
	odd := src[at+(1-pe)*l.Pitch+(l.PadLeft+1)/2:]
	im.DeinterleaveRows(even, odd, rowLen, x, l.W, end-first, l.W)
}

// DepthwiseKernel returns im's kernel for l, falling back to the
// portable one when im has none.
func (l *DepthwiseLayout) DepthwiseKernel(im *DepthwiseImpl) DepthwisePlaneFunc {
	if f := im.Plane(l.K, l.S); f != nil {
		return f
	}
	return depthwisePlanePortable
}

// depthwisePlanePortable is the kernel in plain Go: the reference the
// others are tested against, and the one every size runs without
// assembly.
func depthwisePlanePortable(l *DepthwiseLayout, y, src, w []float32, bias, lo, hi float32) {
	k, s := l.K, l.S
	for oh := range l.OH {
		row := y[oh*l.OW : (oh+1)*l.OW]
		for o := range row {
			row[o] = bias
		}
		for ky := range k {
			for kx := range k {
				a := w[ky*k+kx]
				start := (oh*s*s+ky*s+kx%s)*l.Pitch + kx/s
				in := src[start : start+len(row)]
				for o, v := range in {
					row[o] += a * v
				}
			}
		}
		for o, v := range row {
			// Comparisons with NaN are false: NaN passes.
			if v < lo {
				v = lo
			}
			if v > hi {
				v = hi
			}
			row[o] = v
		}
	}
}

func copyRowsPortable(dst []float32, dstStride int, src []float32, srcStride, rows, n int) {
	for r := range rows {
		copy(dst[r*dstStride:r*dstStride+n], src[r*srcStride:r*srcStride+n])
	}
}

func deinterleaveRowsPortable(even, odd []float32, dstStride int, src []float32, srcStride, rows, n int) {
	for r := range rows {
		in := src[r*srcStride : r*srcStride+n]
		e, o := even[r*dstStride:], odd[r*dstStride:]
		for i := range (n + 1) / 2 {
			e[i] = in[2*i]
		}
		for i := range n / 2 {
			o[i] = in[2*i+1]
		}
	}
}
