package autodiff

import (
	"slices"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

func init() {
	register(convGrad, "Conv")
	register(convTransposeGrad, "ConvTranspose")
}

// nnWindow is the geometry of a sliding window over the spatial axes of
// an [N, C, D1, ...] tensor, per spatial axis: the window of output
// position o covers the input positions o·stride − padBegin + k·dilation,
// k < kernel. padBegin and padEnd may be negative for ConvTranspose (an
// output_shape larger than the full output). The native backend computes
// the same numbers (backend/native conv_geometry.go), which the rules
// must match so that the gradient has the forward's geometry.
type nnWindow struct {
	in, out, kernel    []int64
	strides, dilations []int64
	padBegin, padEnd   []int64
}

// ek is the dilated kernel extent of spatial axis i.
func (w *nnWindow) ek(i int) int64 { return (w.kernel[i]-1)*w.dilations[i] + 1 }

// nnOnes returns v, or n ones when v is empty; false when v has another
// length or a non-positive entry.
func nnOnes(v []int64, n int) ([]int64, bool) {
	if len(v) == 0 {
		out := make([]int64, n)
		for i := range out {
			out[i] = 1
		}
		return out, true
	}
	if len(v) != n {
		return nil, false
	}
	for _, x := range v {
		if x < 1 {
			return nil, false
		}
	}
	return slices.Clone(v), true
}

// nnWindowGeometry computes the output sizes and pads of Conv or a pooling
// (ceil: ceil_mode) with the given attributes over spatial sizes in.
func (b *builder) nnWindowGeometry(op, autoPad string, pads, strides, dilations, in, kernel []int64, ceil bool) *nnWindow {
	n := len(in)
	w := &nnWindow{in: in, kernel: kernel, out: make([]int64, n), padBegin: make([]int64, n), padEnd: make([]int64, n)}
	var ok bool
	if w.strides, ok = nnOnes(strides, n); !ok {
		b.fail("%s: strides %v for %d spatial axes", op, strides, n)
		return nil
	}
	if w.dilations, ok = nnOnes(dilations, n); !ok {
		b.fail("%s: dilations %v for %d spatial axes", op, dilations, n)
		return nil
	}
	for i, k := range kernel {
		if k < 1 {
			b.fail("%s: kernel %v", op, kernel)
			return nil
		}
		if in[i] < 0 {
			b.fail("%s: the spatial size of the input changes between runs; its gradient needs it fixed", op)
			return nil
		}
	}
	switch autoPad {
	case "", "NOTSET":
		if len(pads) != 0 && len(pads) != 2*n {
			b.fail("%s: pads %v for %d spatial axes", op, pads, n)
			return nil
		}
		for i := range n {
			if len(pads) != 0 {
				w.padBegin[i], w.padEnd[i] = pads[i], pads[i+n]
				if pads[i] < 0 || pads[i+n] < 0 {
					b.fail("%s: negative pads %v", op, pads)
					return nil
				}
			}
			span := in[i] + w.padBegin[i] + w.padEnd[i] - w.ek(i)
			if span < 0 {
				b.fail("%s: the window does not fit the input", op)
				return nil
			}
			s := w.strides[i]
			w.out[i] = span/s + 1
			if ceil {
				w.out[i] = (span+s-1)/s + 1
				// The last window starts inside the input or the leading
				// padding (as the native backend and ONNX Runtime count).
				if (w.out[i]-1)*s >= in[i]+w.padBegin[i] {
					w.out[i]--
				}
			}
		}
	case "SAME_UPPER", "SAME_LOWER":
		for i := range n {
			s := w.strides[i]
			w.out[i] = (in[i] + s - 1) / s
			total := max(0, (w.out[i]-1)*s+w.ek(i)-in[i])
			small, big := total/2, total-total/2
			if autoPad == "SAME_UPPER" {
				w.padBegin[i], w.padEnd[i] = small, big
			} else {
				w.padBegin[i], w.padEnd[i] = big, small
			}
		}
	case "VALID":
		for i := range n {
			if in[i] < w.ek(i) {
				b.fail("%s: the window does not fit the input", op)
				return nil
			}
			w.out[i] = (in[i]-w.ek(i))/w.strides[i] + 1
		}
	default:
		b.fail("%s: auto_pad %q", op, autoPad)
		return nil
	}
	return w
}

// nnConvTransposeWindow is the geometry of ConvTranspose over input
// spatial sizes in: out is the output's size, and the window of input
// position i covers output positions i·stride − padBegin + k·dilation (as
// backend/native conv_transpose.go computes it; pads may be negative).
func (b *builder) nnConvTransposeWindow(op *ops.ConvTranspose, in, kernel []int64) *nnWindow {
	n := len(in)
	w := &nnWindow{in: in, kernel: kernel, out: make([]int64, n), padBegin: make([]int64, n), padEnd: make([]int64, n)}
	var ok bool
	if w.strides, ok = nnOnes(op.Strides, n); !ok {
		b.fail("ConvTranspose: strides %v for %d spatial axes", op.Strides, n)
		return nil
	}
	if w.dilations, ok = nnOnes(op.Dilations, n); !ok {
		b.fail("ConvTranspose: dilations %v for %d spatial axes", op.Dilations, n)
		return nil
	}
	outPad := make([]int64, n)
	if len(op.OutputPadding) != 0 {
		if len(op.OutputPadding) != n {
			b.fail("ConvTranspose: output_padding %v for %d spatial axes", op.OutputPadding, n)
			return nil
		}
		copy(outPad, op.OutputPadding)
	}
	full := make([]int64, n)
	for i := range n {
		if in[i] < 0 {
			b.fail("ConvTranspose: the spatial size of the input changes between runs; its gradient needs it fixed")
			return nil
		}
		full[i] = w.strides[i]*(in[i]-1) + outPad[i] + w.ek(i)
	}
	var target []int64
	switch {
	case len(op.OutputShape) != 0:
		target = op.OutputShape
		if len(target) == n+2 {
			target = target[2:]
		}
		if len(target) != n {
			b.fail("ConvTranspose: output_shape %v for %d spatial axes", op.OutputShape, n)
			return nil
		}
	case op.AutoPad == "SAME_UPPER" || op.AutoPad == "SAME_LOWER":
		target = make([]int64, n)
		for i := range n {
			target[i] = in[i] * w.strides[i]
		}
	}
	if target != nil {
		for i := range n {
			total := full[i] - target[i]
			// Floor division: a larger output adds positions at the end.
			small := total / 2
			if total < 0 && total%2 != 0 {
				small--
			}
			big := total - small
			if op.AutoPad == "SAME_UPPER" {
				w.padBegin[i], w.padEnd[i] = small, big
			} else {
				w.padBegin[i], w.padEnd[i] = big, small
			}
			w.out[i] = target[i]
		}
		return w
	}
	if op.AutoPad != "VALID" && len(op.Pads) != 0 {
		if len(op.Pads) != 2*n {
			b.fail("ConvTranspose: pads %v for %d spatial axes", op.Pads, n)
			return nil
		}
		for i := range n {
			w.padBegin[i], w.padEnd[i] = op.Pads[i], op.Pads[i+n]
		}
	}
	for i := range n {
		w.out[i] = full[i] - w.padBegin[i] - w.padEnd[i]
	}
	return w
}

// nnStaticSpatial returns the spatial dims of v ([N, C, D1, ...]), failing
// when v has fewer than 3 axes or a spatial dim that changes.
func (b *builder) nnStaticSpatial(op, v string) []int64 {
	s := b.shapeOf(v)
	if b.err != nil {
		return nil
	}
	if len(s) < 3 {
		b.fail("%s: input of shape %v has no spatial axis", op, s)
		return nil
	}
	for _, d := range s[2:] {
		if d < 0 {
			b.fail("%s: the spatial size of %q changes between runs; its gradient needs it fixed", op, v)
			return nil
		}
	}
	return s[2:]
}

// nnSpatialAxes is [2, ..., 2+n).
func nnSpatialAxes(n int) []int64 {
	axes := make([]int64, n)
	for i := range axes {
		axes[i] = int64(i + 2)
	}
	return axes
}

// nnSwap01 is the permutation exchanging the first two of rank axes.
func nnSwap01(rank int) []int64 {
	perm := make([]int64, rank)
	for i := range perm {
		perm[i] = int64(i)
	}
	perm[0], perm[1] = 1, 0
	return perm
}

// nnConvAttrs are the attributes of an emitted Conv or ConvTranspose.
func nnConvAttrs(group int64, strides, dilations, padBegin, padEnd []int64) []*onnx.Attribute {
	pads := append(slices.Clone(padBegin), padEnd...)
	attrs := []*onnx.Attribute{attrInts("strides", strides...), attrInts("dilations", dilations...), attrInts("pads", pads...)}
	if group != 1 {
		attrs = append(attrs, attrInt("group", group))
	}
	return attrs
}

// nnCrop slices off the first crop[i] positions of spatial axis i
// (axis 2+i) of v where crop[i] > 0, and the last cropEnd[i] where
// cropEnd[i] > 0.
func (b *builder) nnCrop(v string, spatial, cropBegin, cropEnd []int64) string {
	var starts, ends, axes []int64
	for i := range spatial {
		cb, ce := max(cropBegin[i], 0), max(cropEnd[i], 0)
		if cb == 0 && ce == 0 {
			continue
		}
		starts = append(starts, cb)
		ends = append(ends, spatial[i]-ce)
		axes = append(axes, int64(i+2))
	}
	if len(axes) == 0 {
		return v
	}
	return b.slice(v, starts, ends, axes, nil)
}

// nnUnwindow is the adjoint of gathering windows of w's geometry: given
// t of shape [N, M, out...] (one value per window and output channel),
// each input position gets Σ over the windows covering it of
// t·weight (pads excluded): ConvTranspose(t, weight) with w's strides,
// dilations and leading pads, its trailing pads (or output_padding)
// chosen to give back exactly w.in positions. weight is [M, C/group,
// kernel...].
func (b *builder) nnUnwindow(t, weight string, group int64, w *nnWindow) string {
	n := len(w.in)
	padEnd := make([]int64, n)
	outPad := make([]int64, n)
	for i := range n {
		full := w.strides[i]*(w.out[i]-1) + w.ek(i)
		crop := full - w.padBegin[i] - w.in[i]
		if crop >= 0 {
			padEnd[i] = crop
		} else {
			// Trailing input positions no window reaches (fewer than a
			// stride: the output size rounds down).
			outPad[i] = -crop
			if outPad[i] >= w.strides[i] {
				b.fail("internal: output_padding %d for stride %d", outPad[i], w.strides[i])
				return ""
			}
		}
	}
	attrs := nnConvAttrs(group, w.strides, w.dilations, w.padBegin, padEnd)
	zero := true
	for _, p := range outPad {
		zero = zero && p == 0
	}
	if !zero {
		attrs = append(attrs, attrInts("output_padding", outPad...))
	}
	return b.op("ConvTranspose", []string{t, weight}, attrs...)
}

// nnConvWeightGrad is the gradient of a convolution's weight: with
// small[n, s, o] = Σ_{k, c} W[s, c, k] · big[n, g·C/g + c, o·stride +
// k·dilation − padBegin] (per group g), it returns
//
//	dW[s, c, k] = Σ_n Σ_o dsmall[n, s, o] · big[n, g·C/g + c, o·stride + k·dilation − padBegin]
//
// as one Conv whose batch is big's channels per group and whose kernel is
// dsmall (both with batch and channels swapped; the groups of big moved
// into its channels), strides and dilations exchanged, then cut to the
// kernel. For Conv, big is X and small is Y; for ConvTranspose, big is Y
// and small is X. like is the weight.
func (b *builder) nnConvWeightGrad(big, small string, group int64, strides, dilations, padBegin, kernel []int64, like string) string {
	bs, ss := b.shapeOf(big), b.shapeOf(small)
	if b.err != nil {
		return ""
	}
	n, rank := len(kernel), len(bs)
	bsp := slices.Clone(bs[2:])
	cb := bs[1]
	if cb < 0 || cb%group != 0 {
		b.fail("weight gradient: %d channels for %d groups", cb, group)
		return ""
	}
	// Leading padding that is negative crops big.
	crop := make([]int64, n)
	pb := make([]int64, n)
	for i := range n {
		if padBegin[i] < 0 {
			crop[i] = -padBegin[i]
			bsp[i] += padBegin[i]
		} else {
			pb[i] = padBegin[i]
		}
	}
	big = b.nnCrop(big, bs[2:], crop, make([]int64, n))
	// Trailing padding: as much as the last kernel position reads.
	pe := make([]int64, n)
	kOut := make([]int64, n)
	for i := range n {
		need := (kernel[i]-1)*dilations[i] + (ss[2+i]-1)*strides[i] + 1 - bsp[i] - pb[i]
		pe[i] = max(0, need)
		kOut[i] = (bsp[i]+pb[i]+pe[i]-(ss[2+i]-1)*strides[i]-1)/dilations[i] + 1
	}
	var bigR string
	if group == 1 {
		bigR = b.transpose(big, nnSwap01(rank)...)
	} else {
		// [N, C, D...] → [N, g, C/g, D...] → [C/g, g, N, D...] → [C/g, g·N, D...]
		sh := append([]int64{0, group, cb / group}, bsp...)
		r := b.reshape(big, sh...)
		perm := make([]int64, rank+1)
		perm[0], perm[1], perm[2] = 2, 1, 0
		for i := 3; i <= rank; i++ {
			perm[i] = int64(i)
		}
		r = b.transpose(r, perm...)
		bigR = b.reshape(r, append([]int64{cb / group, -1}, bsp...)...)
	}
	smallR := b.transpose(small, nnSwap01(rank)...)
	// Strides and dilations swap roles: the kernel (dsmall) steps by the
	// forward's stride, the output (dW) by its dilation.
	dw := b.op("Conv", []string{bigR, smallR}, nnConvAttrs(group, dilations, strides, pb, pe)...)
	cut := false
	for i := range n {
		cut = cut || kOut[i] != kernel[i]
	}
	if cut {
		dw = b.slice(dw, make([]int64, n), kernel, nnSpatialAxes(n), nil)
	}
	return b.like(b.transpose(dw, nnSwap01(rank)...), like)
}

// nnConvShapes reads the static shapes of a convolution's input and
// weight.
func (b *builder) nnConvShapes(op, x, w string, kernelShape []int64) (xsp, wshape []int64) {
	xsp = b.nnStaticSpatial(op, x)
	wshape = b.shapeOf(w)
	if b.err != nil {
		return nil, nil
	}
	if len(wshape) != len(xsp)+2 {
		b.fail("%s: weight of shape %v for an input of %d spatial axes", op, wshape, len(xsp))
		return nil, nil
	}
	for _, d := range wshape {
		if d < 0 {
			b.fail("%s: the weight's shape changes between runs", op)
			return nil, nil
		}
	}
	if len(kernelShape) != 0 && !slices.Equal(kernelShape, wshape[2:]) {
		b.fail("%s: kernel_shape %v does not match the weight %v", op, kernelShape, wshape)
		return nil, nil
	}
	return xsp, wshape
}

// convGrad: Y = Conv(X, W) + B (https://onnx.ai/onnx/operators/onnx__Conv.html).
// dX is the adjoint convolution, ConvTranspose(dY, W) with the same
// strides, dilations, pads and group, its trailing pads/output_padding
// chosen so that it has X's size exactly (input positions no window
// reads get zeros); dW[m, c, k] = Σ_n Σ_o dY[n, m, o] X[n, c, o·s + k·d − p]
// (nnConvWeightGrad); dB = Σ dY over the batch and spatial axes.
func convGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.Conv)
	x, w, g := op.In.X, op.In.W, dy[0]
	xsp, wshape := b.nnConvShapes("Conv", x, w, op.KernelShape)
	if b.err != nil {
		return nil
	}
	if op.Group < 1 {
		b.fail("Conv: group %d", op.Group)
		return nil
	}
	kernel := wshape[2:]
	geo := b.nnWindowGeometry("Conv", op.AutoPad, op.Pads, op.Strides, op.Dilations, xsp, kernel, false)
	if b.err != nil {
		return nil
	}
	out := make([]string, len(n.Inputs))
	if need[0] {
		out[0] = b.like(b.nnUnwindow(g, w, op.Group, geo), x)
	}
	if len(n.Inputs) > 1 && need[1] {
		out[1] = b.nnConvWeightGrad(x, g, op.Group, geo.strides, geo.dilations, geo.padBegin, kernel, w)
	}
	if len(n.Inputs) > 2 && need[2] && op.In.B != "" {
		out[2] = b.reduceSum(g, append([]int64{0}, nnSpatialAxes(len(xsp))...), false)
	}
	return out
}

// convTransposeGrad: Y = ConvTranspose(X, W) + B
// (https://onnx.ai/onnx/operators/onnx__ConvTranspose.html), the adjoint
// of a Conv, so dX = Conv(dY, W) with the same strides, dilations and
// group, dY padded (or cut, where the pads are negative) to the full
// output the transposed convolution computed before cropping;
// dW[c, m, k] = Σ_n Σ_i X[n, c, i] dY[n, m, i·s + k·d − p]
// (nnConvWeightGrad with the roles of X and Y exchanged); dB = Σ dY over
// the batch and spatial axes.
func convTransposeGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.ConvTranspose)
	x, w, g := op.In.X, op.In.W, dy[0]
	xsp, wshape := b.nnConvShapes("ConvTranspose", x, w, op.KernelShape)
	if b.err != nil {
		return nil
	}
	if op.Group < 1 {
		b.fail("ConvTranspose: group %d", op.Group)
		return nil
	}
	switch op.AutoPad {
	case "", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID":
	default:
		b.fail("ConvTranspose: auto_pad %q", op.AutoPad)
		return nil
	}
	kernel := wshape[2:]
	geo := b.nnConvTransposeWindow(op, xsp, kernel)
	ysp := b.nnStaticSpatial("ConvTranspose", op.Out.Y)
	if b.err != nil {
		return nil
	}
	if !slices.Equal(ysp, geo.out) {
		b.fail("internal: ConvTranspose output %v, computed %v", ysp, geo.out)
		return nil
	}
	ns := len(xsp)
	out := make([]string, len(n.Inputs))
	if need[0] {
		// The full output: s·(D−1) + ek positions, of which Y shows
		// [padBegin, padBegin + O); pad (or cut) dY to it.
		cropB, cropE := make([]int64, ns), make([]int64, ns)
		pb, pe := make([]int64, ns), make([]int64, ns)
		for i := range ns {
			full := geo.strides[i]*(xsp[i]-1) + geo.ek(i)
			end := full - geo.out[i] - geo.padBegin[i]
			if geo.padBegin[i] < 0 {
				cropB[i] = -geo.padBegin[i]
			} else {
				pb[i] = geo.padBegin[i]
			}
			if end < 0 {
				cropE[i] = -end
			} else {
				pe[i] = end
			}
		}
		gc := b.nnCrop(g, geo.out, cropB, cropE)
		dx := b.op("Conv", []string{gc, w}, nnConvAttrs(op.Group, geo.strides, geo.dilations, pb, pe)...)
		out[0] = b.like(dx, x)
	}
	if len(n.Inputs) > 1 && need[1] {
		out[1] = b.nnConvWeightGrad(g, x, op.Group, geo.strides, geo.dilations, geo.padBegin, kernel, w)
	}
	if len(n.Inputs) > 2 && need[2] && op.In.B != "" {
		out[2] = b.reduceSum(g, append([]int64{0}, nnSpatialAxes(ns)...), false)
	}
	return out
}
