package conv

import "github.com/deep500/deep500-go/backend/native/internal/vec"

// The direct 3×3 convolution computes a 2-D convolution of a 3×3 kernel,
// stride 1, dilation 1, one group and padding of at most 1 on each side
// without an im2col matrix. The input of one image is copied once into a
// padded layout (each channel a plane of Rows × Pitch elements with zero
// borders, the planes one after another), after which every output
// position (oy, ox) reads the nine positions (oy+ky)·Pitch + ox+kx of
// each plane: no edge conditions. Better still, the outputs are computed
// on the flat index p = oy·Pitch + ox for every p below OH·Pitch, so that
// a run of outputs is one contiguous run of each tap's inputs whatever the
// width: the two columns past each row's OW are junk (they read across
// the row's end) and are dropped when the block is copied out (Unpitch).
// A 8×8 map wastes 2 of every 10 lanes this way, not the 8 of 16 a
// vector per row would.
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
// junk, and the taps' offsets of up to 2).
const direct3x3Slack = 32

// Direct3x3Layout is the padded layout of one image's input for the
// direct 3×3 kernels, and the flat run of outputs they compute.
type Direct3x3Layout struct {
	C, H, W         int // input channels, rows and columns
	PadTop, PadLeft int // zeros before the input's rows and columns (0 or 1)
	OH, OW          int // output rows and columns
	Pitch, Rows     int // padded row length (OW+2) and row count (OH+2)
	Plane           int // Rows·Pitch: from one channel's plane to the next
	Run             int // flat outputs per channel: OH·Pitch rounded up to 16
	weightsPerBlock int // C·9·Direct3x3Block
	inputElements   int // C·Plane + slack
}

// NewDirect3x3Layout returns the layout of g over channels input
// channels, and whether the direct kernels cover g: 2-D, a 3×3 kernel,
// stride and dilation 1, padding of 0 or 1 on each side.
func NewDirect3x3Layout(g *Geometry, channels int) (Direct3x3Layout, bool) {
	if len(g.In) != 2 || channels < 1 {
		return Direct3x3Layout{}, false
	}
	for i := range 2 {
		if g.Kernel[i] != 3 || g.Strides[i] != 1 || g.Dilations[i] != 1 ||
			g.PadBegin[i] < 0 || g.PadBegin[i] > 1 || g.PadEnd[i] < 0 || g.PadEnd[i] > 1 {
			return Direct3x3Layout{}, false
		}
		if g.Out[i] != g.In[i]+g.PadBegin[i]+g.PadEnd[i]-2 || g.Out[i] < 1 {
			return Direct3x3Layout{}, false
		}
	}
	l := Direct3x3Layout{C: channels, H: g.In[0], W: g.In[1], PadTop: g.PadBegin[0], PadLeft: g.PadBegin[1],
		OH: g.Out[0], OW: g.Out[1]}
	l.Pitch, l.Rows = l.OW+2, l.OH+2
	l.Plane = l.Rows * l.Pitch
	l.Run = roundUp(l.OH*l.Pitch, 16)
	l.weightsPerBlock = channels * 9 * Direct3x3Block
	l.inputElements = channels*l.Plane + direct3x3Slack
	return l, true
}

// InputSize is the number of elements of one image's padded input.
func (l *Direct3x3Layout) InputSize() int { return l.inputElements }

// OutputSize is the number of elements of a kernel call's output block:
// Direct3x3Block rows of Run.
func (l *Direct3x3Layout) OutputSize() int { return Direct3x3Block * l.Run }

// WeightsSize is the number of elements of one block's packed weights.
func (l *Direct3x3Layout) WeightsSize() int { return l.weightsPerBlock }

// Pad copies x (C planes of H×W) into the interior of the padded input
// dst (InputSize elements). It writes nothing else: the borders and the
// slack must be zero already, and stay so across calls on one layout.
func (l *Direct3x3Layout) Pad(dst, x []float32) {
	_ = dst[l.inputElements-1]
	_ = x[l.C*l.H*l.W-1]
	for c := range l.C {
		plane := dst[c*l.Plane+l.PadTop*l.Pitch+l.PadLeft:]
		in := x[c*l.H*l.W:]
		for r := range l.H {
			copy(plane[r*l.Pitch:r*l.Pitch+l.W], in[r*l.W:(r+1)*l.W])
		}
	}
}

// PackWeights writes the weights of output channels [co0,
// co0+Direct3x3Block) of w (m × C × 3 × 3) into dst (WeightsSize
// elements) as [ci][tap][co - co0], zeros for channels past m.
func (l *Direct3x3Layout) PackWeights(dst, w []float32, m, co0 int) {
	dst = dst[:l.weightsPerBlock]
	for j := range Direct3x3Block {
		co := co0 + j
		if co >= m {
			for i := j; i < len(dst); i += Direct3x3Block {
				dst[i] = 0
			}
			continue
		}
		src := w[co*l.C*9 : (co+1)*l.C*9]
		for i, v := range src {
			dst[i*Direct3x3Block+j] = v
		}
	}
}

// Unpitch copies the first rows rows of the kernel's output block out
// (flat, with Pitch) into y, rows planes of OH×OW, dropping the junk
// columns.
func (l *Direct3x3Layout) Unpitch(y, out []float32, rows int) {
	outSz := l.OH * l.OW
	_ = y[rows*outSz-1]
	for j := range rows {
		src := out[j*l.Run:]
		dst := y[j*outSz:]
		for r := range l.OH {
			copy(dst[r*l.OW:(r+1)*l.OW], src[r*l.Pitch:r*l.Pitch+l.OW])
		}
	}
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
			off := (t/3)*l.Pitch + t%3
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
