package native

import (
	"fmt"

	"github.com/deep500/deep500-go/backend/native/internal/conv"
	"github.com/deep500/deep500-go/network"
)

// This file holds what convolutions and pooling share: the geometry of a
// sliding window over the spatial dimensions of an [N, C, D1, ..., Dk]
// tensor (output sizes and padding under every auto_pad mode) from the
// ONNX attributes. The im2col / col2im rearrangements that turn a
// convolution into a GEMM are in internal/conv.

// convMaxElements bounds any buffer a window operator allocates from
// attribute values (pads, strides, output_shape), so that a hostile model
// gets an error instead of an out-of-memory crash.
const convMaxElements = 1 << 31

// convGeom is the window geometry of one node applied to one input shape
// (conv.Geometry, which the kernels take).
type convGeom = conv.Geometry

func prod(v []int) int {
	p := 1
	for _, x := range v {
		p *= x
	}
	return p
}

// convWindowAttrs are the attributes every window operator reads.
type convWindowAttrs struct {
	op        string  // for messages
	autoPad   string  // NOTSET, SAME_UPPER, SAME_LOWER, VALID
	strides   []int64 // nil: all 1
	dilations []int64 // nil: all 1
	pads      []int64 // nil: all 0; [begin..., end...]
	ceil      bool    // pooling's ceil_mode
}

// positiveOr returns v as ints, or n copies of def when v is empty, after
// checking its length and that every entry is at least 1.
func positiveOr(name string, v []int64, n, def int) ([]int, error) {
	out := make([]int, n)
	if len(v) == 0 {
		for i := range out {
			out[i] = def
		}
		return out, nil
	}
	if len(v) != n {
		return nil, fmt.Errorf("%s %v has %d entries, want %d (one per spatial dimension)", name, v, len(v), n)
	}
	for i, x := range v {
		if x < 1 || x > convMaxElements {
			return nil, fmt.Errorf("%s %v: entry %d must be positive", name, v, i)
		}
		out[i] = int(x)
	}
	return out, nil
}

// geometry computes the output size and padding of a window of the given
// kernel (sizes per spatial dimension) over input spatial sizes in.
func (a *convWindowAttrs) geometry(in, kernel []int) (*convGeom, error) {
	n := len(in)
	g := &convGeom{In: in, Kernel: kernel, Out: make([]int, n), PadBegin: make([]int, n), PadEnd: make([]int, n)}
	var err error
	if g.Strides, err = positiveOr("strides", a.strides, n, 1); err != nil {
		return nil, err
	}
	if g.Dilations, err = positiveOr("dilations", a.dilations, n, 1); err != nil {
		return nil, err
	}
	for i, k := range kernel {
		if k < 1 {
			return nil, fmt.Errorf("kernel size %v must be positive", kernel)
		}
		if (k-1)*g.Dilations[i] >= convMaxElements {
			return nil, fmt.Errorf("dilated kernel %v x %v is too large", kernel, g.Dilations)
		}
	}
	autoPad := a.autoPad
	if autoPad == "" {
		autoPad = "NOTSET"
	}
	switch autoPad {
	case "NOTSET":
		if len(a.pads) != 0 && len(a.pads) != 2*n {
			return nil, fmt.Errorf("pads %v has %d entries, want %d", a.pads, len(a.pads), 2*n)
		}
		for i := range n {
			if len(a.pads) != 0 {
				b, e := a.pads[i], a.pads[i+n]
				if b < 0 || e < 0 || b > convMaxElements || e > convMaxElements {
					return nil, fmt.Errorf("pads %v must be non-negative", a.pads)
				}
				g.PadBegin[i], g.PadEnd[i] = int(b), int(e)
			}
			ek := (kernel[i]-1)*g.Dilations[i] + 1
			span := in[i] + g.PadBegin[i] + g.PadEnd[i] - ek
			if span < 0 {
				return nil, fmt.Errorf("%s window %d (dilated) does not fit input size %d with pads %d+%d in spatial dimension %d",
					a.op, ek, in[i], g.PadBegin[i], g.PadEnd[i], i)
			}
			s := g.Strides[i]
			out := span/s + 1
			if a.ceil {
				out = (span+s-1)/s + 1
				// The last window must start inside the input or the
				// leading padding, never wholly in the trailing padding.
				if (out-1)*s >= in[i]+g.PadBegin[i] {
					out--
				}
			}
			g.Out[i] = out
		}
	case "SAME_UPPER", "SAME_LOWER":
		for i := range n {
			s := g.Strides[i]
			out := (in[i] + s - 1) / s
			ek := (kernel[i]-1)*g.Dilations[i] + 1
			total := max(0, (out-1)*s+ek-in[i])
			small, big := total/2, total-total/2
			if autoPad == "SAME_UPPER" {
				g.PadBegin[i], g.PadEnd[i] = small, big
			} else {
				g.PadBegin[i], g.PadEnd[i] = big, small
			}
			g.Out[i] = out
		}
	case "VALID":
		for i := range n {
			ek := (kernel[i]-1)*g.Dilations[i] + 1
			if in[i] < ek {
				return nil, fmt.Errorf("%s window %d (dilated) does not fit input size %d in spatial dimension %d", a.op, ek, in[i], i)
			}
			s := g.Strides[i]
			g.Out[i] = (in[i]-ek)/s + 1
		}
	default:
		return nil, network.Unsupportedf("%s auto_pad %q", a.op, a.autoPad)
	}
	return g, nil
}

// checkConvOutput rejects an output of lead*prod(g.Out) elements (lead
// being N*C or N*M) that no sane model asks for.
func checkConvOutput(g *convGeom, lead int) error {
	n := lead
	for _, d := range g.Out {
		if d != 0 && n > convMaxElements/d {
			return fmt.Errorf("output of %d x %v elements is too large", lead, g.Out)
		}
		n *= d
	}
	return nil
}
