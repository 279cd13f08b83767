package conv

import (
	"github.com/deep500/deep500-go/backend/native/internal/gemm"
	"github.com/deep500/deep500-go/backend/native/internal/vec"
)

// The direct 3×3 convolution computes a 2-D convolution of a 3×3 kernel,
// stride 1, dilation 1, one group and padding of at most 1 on each side
// without an im2col matrix. The input of one image is copied once into a
// padded layout (each channel a plane of Rows × Pitch elements with zero
// borders, the planes one after another), after which every output
// position (oy, ox) reads the nine positions (oy+ky)·Pitch + ox+kx of
// each plane: no edge conditions. Better still, the outputs are computed
// on the flat index p = oy·Pitch + ox for every p below OH·Pitch, so that
// a run of outputs is one contiguous run of each tap's inputs whatever the
// width: the columns past each row's OW are junk (they read across the
// row's end) and are dropped when the block is copied out (Unpitch).
// The zeros between two rows serve as the right border of one and the
// left border of the next, so that with a border of 1 on both sides the
// pitch is W+1 and one column per row is junk: a 16×16 map wastes 1 of
// every 17 lanes this way, not the 8 of 16 a vector per row would.
//
// Stride 2 keeps this property by splitting each channel's padded input
// by the parity of its rows and columns into four quarter planes,
// quarter (a, b) holding the padded rows 2i+a and columns 2j+b at (i,
// j), each of Rows × Pitch with Pitch = OW+1: output (oy, ox)'s tap (ky,
// kx) is then quarter (ky%2, kx%2) at row oy+ky/2, column ox+kx/2, and
// the flat index over the quarters' pitch again gives every tap as a
// constant offset, with one junk column per row.
//
// On small maps the junk column is a large share of the run: an 8×8
// output has a flat run of 72 (pitch 9), five vectors of which only four
// hold outputs. The flat layout removes it. Its pitch is the output's
// width, and each channel's input is stored three times, once per column
// tap kx, shifted so that variant kx holds at (row, ox) the input column
// ox+kx−PadLeft, or zero where that is outside the input: every tap then
// reads one variant at a whole number of rows from the output's flat
// index, and a row's end no longer needs a zero column after it. Stride 2
// does the same with the quarters: per column tap the two row parities
// (six planes per channel instead of four). It costs three (or one and a
// half) times the padding copies, so NewDirect3x3Layout takes it only
// where it saves a tenth of the vectors or more (8×8 and smaller maps;
// not 16×16, 17 vectors against 16, nor 7×7, 4 against 4).
//
// A kernel call computes Direct3x3Block output channels over the whole
// flat run, into a scratch block of Direct3x3Block rows of Run elements,
// from weights repacked so that the Direct3x3Block weights of one input
// channel and tap are adjacent ([ci][tap][co], PackWeights):
// the vector kernels broadcast each weight once per tap and multiply it
// into a few vectors of outputs held in registers.

// Direct3x3Block is the number of output channels one kernel call
// computes; the last block of a layer whose channels are not a multiple
// is padded with zero weights.
const Direct3x3Block = 8

// direct3x3Slack is the number of zero elements after the last plane of
// the padded input: the last vector of the flat run reads up to 17
// elements past the last plane's rows (its lanes past OH·Pitch, the
// junk, and the taps' offsets of up to 2 columns).
const direct3x3Slack = 32

// Direct3x3Layout is the padded layout of one image's input for the
// direct 3×3 kernels, and the flat run of outputs they compute.
type Direct3x3Layout struct {
	C, H, W         int // input channels, rows and columns
	Stride          int // 1 or 2
	PadTop, PadLeft int // zeros before the input's rows and columns (0 or 1)
	OH, OW          int // output rows and columns
	// Pitch is the row length of the padded input (stride 1: W plus the
	// wider of the left and right borders, which share their zeros) or
	// of its quarters (stride 2: OW+1), and of the flat run of outputs;
	// Rows the row count of the padded input (OH+2) or of a quarter
	// (OH+1).
	Pitch, Rows int
	Quarter     int // stride 2: Rows·Pitch, from one quarter to the next
	Plane       int // from one channel's padded input to the next
	Run         int // flat outputs per channel: OH·Pitch rounded up to 16
	// Flat is set for the flat layout (Pitch = OW, a variant per column
	// tap); Variant is then the distance from one column tap's variant to
	// the next: Rows·Pitch (stride 1) or two quarters (stride 2).
	Flat    bool
	Variant int

	weightsPerBlock int // C·9·Direct3x3Block
	inputElements   int // C·Plane + slack
}

// NewDirect3x3Layout returns the layout of g over channels input
// channels, and whether the direct kernels cover g: 2-D, a 3×3 kernel,
// stride 1 or 2 (the same both ways), dilation 1, padding of 0 or 1 on
// each side. The layout is the flat one where that saves a tenth of the
// run's vectors, the pitched one otherwise.
func NewDirect3x3Layout(g *Geometry, channels int) (Direct3x3Layout, bool) {
	l, ok := pitchedDirect3x3Layout(g, channels)
	if !ok {
		return l, false
	}
	if f := l.flat(); 10*l.Run >= 11*f.Run {
		return f, true
	}
	return l, true
}

// pitchedDirect3x3Layout is NewDirect3x3Layout's pitched layout.
func pitchedDirect3x3Layout(g *Geometry, channels int) (Direct3x3Layout, bool) {
	if len(g.In) != 2 || channels < 1 || g.Strides[0] != g.Strides[1] || g.Strides[0] < 1 || g.Strides[0] > 2 {
		return Direct3x3Layout{}, false
	}
	s := g.Strides[0]
	for i := range 2 {
		if g.Kernel[i] != 3 || g.Dilations[i] != 1 ||
			g.PadBegin[i] < 0 || g.PadBegin[i] > 1 || g.PadEnd[i] < 0 || g.PadEnd[i] > 1 {
			return Direct3x3Layout{}, false
		}
		if span := g.In[i] + g.PadBegin[i] + g.PadEnd[i] - 3; span < 0 || g.Out[i] != span/s+1 {
			return Direct3x3Layout{}, false
		}
	}
	l := Direct3x3Layout{C: channels, H: g.In[0], W: g.In[1], Stride: s, PadTop: g.PadBegin[0], PadLeft: g.PadBegin[1],
		OH: g.Out[0], OW: g.Out[1]}
	if s == 1 {
		// Output column ox reads the input's columns ox-PadLeft to
		// ox+2-PadLeft: the PadLeft zeros before a row and the PadEnd
		// after it are the same Pitch-W zeros between two rows. (With no
		// right border, W = OW+2-PadLeft ≥ OW+1: the pitch still holds a
		// row of outputs.)
		l.Pitch, l.Rows = l.W+max(l.PadLeft, g.PadEnd[1]), l.OH+2
		l.Plane = l.Rows * l.Pitch
	} else {
		// Quarter row i of parity a is padded row 2i+a: the padded input
		// has at most 2·OH+2 rows (and 2·OW+2 columns), so OH+1 rows
		// and OW+1 columns hold it.
		l.Pitch, l.Rows = l.OW+1, l.OH+1
		l.Quarter = l.Rows * l.Pitch
		l.Plane = 4 * l.Quarter
	}
	l.Run = roundUp(l.OH*l.Pitch, 16)
	l.weightsPerBlock = channels * 9 * Direct3x3Block
	l.inputElements = channels*l.Plane + direct3x3Slack
	return l, true
}

// flat returns the flat layout of the same convolution as l (see above).
func (l Direct3x3Layout) flat() Direct3x3Layout {
	l.Flat, l.Pitch = true, l.OW
	if l.Stride == 1 {
		l.Rows = l.OH + 2
		l.Variant = l.Rows * l.Pitch
		l.Quarter, l.Plane = 0, 3*l.Variant
	} else {
		l.Rows = l.OH + 1
		l.Quarter = l.Rows * l.Pitch
		l.Variant, l.Plane = 2*l.Quarter, 6*l.Quarter
	}
	l.Run = roundUp(l.OH*l.Pitch, 16)
	l.inputElements = l.C*l.Plane + direct3x3Slack
	return l
}

// tapOffset is the offset of tap t's input (row-major in the 3×3
// window) from the output's flat index in a channel's padded input.
func (l *Direct3x3Layout) tapOffset(t int) int {
	ky, kx := t/3, t%3
	if l.Flat {
		if l.Stride == 1 {
			return kx*l.Variant + ky*l.Pitch
		}
		return kx*l.Variant + (ky%2)*l.Quarter + (ky/2)*l.Pitch
	}
	if l.Stride == 1 {
		return ky*l.Pitch + kx
	}
	return (2*(ky%2)+kx%2)*l.Quarter + (ky/2)*l.Pitch + kx/2
}

// InputSize is the number of elements of one image's padded input.
func (l *Direct3x3Layout) InputSize() int { return l.inputElements }

// OutputSize is the number of elements of a kernel call's output block:
// Direct3x3Block rows of Run.
func (l *Direct3x3Layout) OutputSize() int { return Direct3x3Block * l.Run }

// WeightsSize is the number of elements of one block's packed weights.
func (l *Direct3x3Layout) WeightsSize() int { return l.weightsPerBlock }

// Pad copies x (C planes of H×W) into the padded input dst (InputSize
// elements). It writes only the input's positions: the borders, the
// quarters' unused row and column and the slack must be zero already,
// and stay so across calls on one layout.
func (l *Direct3x3Layout) Pad(dst, x []float32) { l.PadChannels(dst, x, 0, l.C) }

// PadChannels is Pad for channels [c0, c1) only, so that the planes of
// one image can be padded on several goroutines.
func (l *Direct3x3Layout) PadChannels(dst, x []float32, c0, c1 int) {
	_ = dst[l.inputElements-1]
	_ = x[l.C*l.H*l.W-1]
	if l.Flat && l.Stride == 1 {
		for c := c0; c < c1; c++ {
			in := x[c*l.H*l.W : (c+1)*l.H*l.W]
			for kx := range 3 {
				// Variant kx's column ox is input column ox+kx−PadLeft.
				shift := kx - l.PadLeft
				ox0, ox1 := max(0, -shift), min(l.OW, l.W-shift)
				if ox1 <= ox0 {
					continue
				}
				variant := dst[c*l.Plane+kx*l.Variant:]
				copyRows(variant[l.PadTop*l.Pitch+ox0:], l.Pitch, in[ox0+shift:], l.W, l.H, ox1-ox0)
			}
		}
		return
	}
	if l.Stride == 1 {
		for c := c0; c < c1; c++ {
			plane := dst[c*l.Plane : (c+1)*l.Plane]
			in := x[c*l.H*l.W : (c+1)*l.H*l.W]
			copyRows(plane[l.PadTop*l.Pitch+l.PadLeft:], l.Pitch, in, l.W, l.H, l.W)
		}
		return
	}
	// One split buffer for all the planes: the pool behind it is shared
	// by the threads, and taking it per plane had them hand its lock to
	// each other many times per layer.
	half := roundUp(l.W, 2*depthwiseVector) / 2
	buf := gemm.PackBuffer[float32](2 * l.H * half)
	defer gemm.ReleasePackBuffer(buf)
	for c := c0; c < c1; c++ {
		plane, in, split := dst[c*l.Plane:(c+1)*l.Plane], x[c*l.H*l.W:(c+1)*l.H*l.W], (*buf)[:2*l.H*half]
		if l.Flat {
			l.padFlatQuarters(plane, in, split, half)
		} else {
			l.padQuarters(plane, in, split, half)
		}
	}
}

// padFlatQuarters is padQuarters for the flat layout: variant kx's
// quarter of row parity a holds at (i, ox) padded row 2i+a, column
// 2·ox+kx, i.e. input column 2·ox+kx−PadLeft: an even column, read from
// the split's even half at ox+shift/2, or an odd one, from its odd half.
func (l *Direct3x3Layout) padFlatQuarters(plane, in, split []float32, half int) {
	evens, odds := l.splitColumns(in, split, half)
	for kx := range 3 {
		shift := kx - l.PadLeft // −1 to 2
		cols, n := evens, (l.W+1)/2
		if shift%2 != 0 {
			cols, n = odds, l.W/2
		}
		h := shift >> 1 // floor(shift/2): split column ox+h
		l.padParities(plane[kx*l.Variant:], l.Quarter, cols, half, h, max(0, -h), min(l.OW, n-h))
	}
}

// padQuarters writes one channel's input plane in (H×W) into its four
// stride-2 quarters in plane. The rows are first split into their even
// and odd columns with the depthwise implementation's DeinterleaveRows,
// into split (2·H rows of half elements, half being W rounded up to two
// vectors and halved: wide enough for the whole vectors it stores); then
// each quarter is one CopyRows of every other split row. Input column ix
// is padded column ix+PadLeft: the even columns go to the quarter of
// column parity PadLeft at column i = ix/2, the odd ones to the other at
// column i+PadLeft; input row r to the quarter of row parity
// (r+PadTop)%2, row (r+PadTop)/2. (Element by element, this took 10% of
// resnet8's inference.)
func (l *Direct3x3Layout) padQuarters(plane, in, split []float32, half int) {
	evens, odds := l.splitColumns(in, split, half)
	nEven, nOdd := (l.W+1)/2, l.W/2
	// Quarter (a, PadLeft) from column 0, quarter (a, 1-PadLeft) from
	// column PadLeft.
	l.padParities(plane[l.PadLeft*l.Quarter:], 2*l.Quarter, evens, half, 0, 0, nEven)
	l.padParities(plane[(1-l.PadLeft)*l.Quarter:], 2*l.Quarter, odds, half, -l.PadLeft, l.PadLeft, l.PadLeft+nOdd)
}

// splitColumns splits the rows of in (H×W) into their even and odd
// columns with the depthwise implementation's DeinterleaveRows, into
// split (2·H rows of half elements), and returns the two halves.
func (l *Direct3x3Layout) splitColumns(in, split []float32, half int) (evens, odds []float32) {
	evens, odds = split[:l.H*half], split[l.H*half:]
	DepthwiseActive().DeinterleaveRows(evens, odds, half, in, l.W, l.H, l.W)
	return evens, odds
}

// padParities copies columns [ox0, ox1) of one column parity's quarters
// from cols (the even or odd columns of the input's rows, half apart; the
// quarter's column ox is cols' column ox+h): input row r goes to the
// quarter of row parity a = (r+PadTop)%2, at dst[a·parity:], row
// (r+PadTop)/2.
func (l *Direct3x3Layout) padParities(dst []float32, parity int, cols []float32, half, h, ox0, ox1 int) {
	if ox1 <= ox0 {
		return
	}
	for a := range 2 {
		r0 := a ^ l.PadTop // the first input row of padded parity a
		if r0 >= l.H {
			continue
		}
		rows := (l.H - r0 + 1) / 2
		q := dst[a*parity+((r0+l.PadTop)/2)*l.Pitch:]
		DepthwiseActive().CopyRows(q[ox0:], l.Pitch, cols[r0*half+ox0+h:], 2*half, rows, ox1-ox0)
	}
}

// PackWeights writes the weights of output channels [co0,
// co0+Direct3x3Block) of w (m × C × 3 × 3) into dst (WeightsSize
// elements) as [ci][tap][co - co0], zeros for channels past m.
func (l *Direct3x3Layout) PackWeights(dst, w []float32, m, co0 int) {
	n := l.C * 9
	dst = dst[:l.weightsPerBlock]
	if co0+Direct3x3Block > m {
		// A last, partial block: channel by channel, zeros past m.
		clear(dst)
		for j := range min(Direct3x3Block, m-co0) {
			for i, v := range w[(co0+j)*n : (co0+j+1)*n] {
				dst[i*Direct3x3Block+j] = v
			}
		}
		return
	}
	// A whole block: each group of 8 written at once from the 8 rows,
	// resliced to n so that the loop needs no bounds checks.
	src := w[co0*n : (co0+Direct3x3Block)*n]
	w0, w1, w2, w3 := src[0*n:1*n], src[1*n:2*n], src[2*n:3*n], src[3*n:4*n]
	w4, w5, w6, w7 := src[4*n:5*n], src[5*n:6*n], src[6*n:7*n], src[7*n:8*n]
	for i := range n {
		d := dst[i*Direct3x3Block : i*Direct3x3Block+Direct3x3Block : i*Direct3x3Block+Direct3x3Block]
		d[0], d[1], d[2], d[3] = w0[i], w1[i], w2[i], w3[i]
		d[4], d[5], d[6], d[7] = w4[i], w5[i], w6[i], w7[i]
	}
}

// Unpitch copies the first rows rows of the kernel's output block out
// (flat, with Pitch) into y, rows planes of OH×OW, dropping the junk
// columns.
func (l *Direct3x3Layout) Unpitch(y, out []float32, rows int) {
	outSz := l.OH * l.OW
	_ = y[rows*outSz-1]
	for j := range rows {
		copyRows(y[j*outSz:], l.OW, out[j*l.Run:], l.Pitch, l.OH, l.OW)
	}
}

// copyRows copies rows rows of n elements, strides apart, with the
// depthwise kernels' row copy: one call for a plane's short rows instead
// of one copy each.
func copyRows(dst []float32, dstStride int, src []float32, srcStride, rows, n int) {
	DepthwiseActive().CopyRows(dst, dstStride, src, srcStride, rows, n)
}

// Direct3x3Impl is one implementation of the direct 3×3 kernel.
type Direct3x3Impl struct {
	Name string
	// Block computes out (OutputSize elements: Direct3x3Block rows of
	// Run) from the padded input src (InputSize) and one block's packed
	// weights w (WeightsSize): out[j·Run + p] = Σ_ci Σ_tap w · src.
	Block func(l *Direct3x3Layout, out, src, w []float32)
}

// direct3x3Portable is the Go implementation: per input channel and tap,
// one axpy of the tap's run of inputs into each output row.
var direct3x3Portable = Direct3x3Impl{Name: "portable", Block: direct3x3BlockPortable}

func direct3x3BlockPortable(l *Direct3x3Layout, out, src, w []float32) {
	run := l.Run
	out = out[:Direct3x3Block*run]
	clear(out)
	for ci := range l.C {
		in := src[ci*l.Plane:]
		for t := range 9 {
			off := l.tapOffset(t)
			x := in[off : off+run]
			wt := w[(ci*9+t)*Direct3x3Block : (ci*9+t+1)*Direct3x3Block]
			for j, wj := range wt {
				vec.Axpy(wj, x, out[j*run:(j+1)*run])
			}
		}
	}
}

// direct3x3Impls is the dispatch table: the implementations this machine
// runs, best first, the portable one last.
var direct3x3Impls = append(direct3x3ArchImpls(), direct3x3Portable)

// Direct3x3Implementations returns every direct 3×3 implementation this
// machine runs, the one in use first and the portable one last.
func Direct3x3Implementations() []Direct3x3Impl {
	return append([]Direct3x3Impl(nil), direct3x3Impls...)
}

// Direct3x3Active returns the direct 3×3 implementation in use.
func Direct3x3Active() *Direct3x3Impl { return &direct3x3Impls[0] }
