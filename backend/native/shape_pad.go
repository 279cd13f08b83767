package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Pad and CenterCropPad.

// shapePadMode is Pad's mode attribute.
type shapePadMode int

const (
	shapePadConstant shapePadMode = iota
	shapePadReflect
	shapePadEdge
	shapePadWrap
)

func shapeParsePadMode(s string, since int) (shapePadMode, error) {
	switch s {
	case "constant", "":
		return shapePadConstant, nil
	case "reflect":
		return shapePadReflect, nil
	case "edge":
		return shapePadEdge, nil
	case "wrap":
		if since >= 19 {
			return shapePadWrap, nil
		}
		return 0, fmt.Errorf("mode \"wrap\" needs Pad version 19, the node resolves to version %d", since)
	}
	return 0, network.Unsupportedf("Pad mode %q", s)
}

// shapePadAmounts expands pads (begin values then end values, for the listed
// axes or for every axis when axes is nil) to per-axis begin and end
// amounts, and returns the output shape.
func shapePadAmounts(shape []int, pads, axes []int64) (begin, end, out []int, err error) {
	rank := len(shape)
	var norm []int
	if axes == nil {
		norm = make([]int, rank)
		for i := range norm {
			norm[i] = i
		}
	} else if norm, err = normalizeAxes(axes, rank); err != nil {
		return nil, nil, nil, err
	}
	if len(pads) != 2*len(norm) {
		return nil, nil, nil, fmt.Errorf("pads %v has %d entries, want %d (two per axis of %v)", pads, len(pads), 2*len(norm), shape)
	}
	begin, end = make([]int, rank), make([]int, rank)
	outDims := make([]int64, rank)
	for i, d := range shape {
		outDims[i] = int64(d)
	}
	for i, a := range norm {
		pb, pe := pads[i], pads[i+len(norm)]
		if pb > shapeMaxElements || pe > shapeMaxElements || pb < -shapeMaxElements || pe < -shapeMaxElements {
			return nil, nil, nil, fmt.Errorf("pads %v are out of range", pads)
		}
		begin[a], end[a] = int(pb), int(pe)
		outDims[a] += pb + pe
		if outDims[a] < 0 {
			return nil, nil, nil, fmt.Errorf("pads %v crop axis %d of %v below size 0", pads, a, shape)
		}
	}
	out, err = shapeFromInts(outDims)
	return begin, end, out, err
}

// shapePadCropSourceIndex maps output position o of an axis (input size n,
// begin and end amounts pb and pe) to an input position, or -1 for the
// constant. A negative amount removes elements first and the other side is
// then padded from what remains, so wrap and reflect fold over the cropped
// axis (as ONNX's reference, PyTorch and ONNX Runtime do), not the whole
// input.
func shapePadCropSourceIndex(mode shapePadMode, o, pb, pe, n int) int {
	lo := max(0, -pb) // elements removed at the start
	kept := n - lo - max(0, -pe)
	if kept <= 0 || mode == shapePadConstant {
		return shapePadSourceIndex(mode, o, pb, n)
	}
	return lo + shapePadSourceIndex(mode, o, max(pb, 0), kept)
}

// shapePadSourceIndex maps output position o of an axis (input size n, begin
// padding pb) to an input position, or -1 for the constant. For pb < 0 it
// reads the uncropped input beyond the kept part; shapePadCropSourceIndex
// is Pad's mapping when an amount is negative.
func shapePadSourceIndex(mode shapePadMode, o, pb, n int) int {
	i := o - pb
	if i >= 0 && i < n {
		return i
	}
	switch mode {
	case shapePadEdge:
		return min(max(i, 0), n-1)
	case shapePadWrap:
		return ((i % n) + n) % n
	case shapePadReflect:
		if n == 1 {
			return 0
		}
		period := 2 * (n - 1)
		i = ((i % period) + period) % period
		if i >= n {
			i = period - i
		}
		return i
	}
	return -1
}

// shapePadInto writes x padded into out. value is a one-element backing slice of
// x's Go type (constant mode only). The end amounts follow from the shapes.
func shapePadInto(out, x *onnx.Tensor, begin []int, mode shapePadMode, value any) error {
	if onnx.NumElements(out.Shape) == 0 {
		return nil
	}
	rank := len(x.Shape)
	if mode == shapePadConstant {
		if err := shapeFillValue(out, value); err != nil {
			return err
		}
		// Copy the part of x that lands inside out.
		window := make([]int, rank)
		inStrides, outStrides := rowMajorStrides(x.Shape), rowMajorStrides(out.Shape)
		src, dst := stridedView{0, inStrides}, stridedView{0, outStrides}
		for a := range rank {
			lo := max(0, -begin[a])                   // first input index kept
			dlo := max(0, begin[a])                   // where it lands
			n := min(x.Shape[a]-lo, out.Shape[a]-dlo) // how many fit
			window[a] = max(n, 0)
			src.offset += lo * inStrides[a]
			dst.offset += dlo * outStrides[a]
		}
		if onnx.NumElements(window) == 0 {
			return nil
		}
		return stridedCopy(out.Data, dst, x.Data, src, window)
	}
	// Other modes: every output element reads an input element; rows of
	// the last axis are resolved once per axis.
	for a := range rank {
		kept := x.Shape[a] - max(0, -begin[a]) - max(0, begin[a]+x.Shape[a]-out.Shape[a])
		if kept <= 0 && out.Shape[a] > 0 {
			return fmt.Errorf("cannot pad axis %d of %v in this mode: no element is left after cropping", a, x.Shape)
		}
	}
	maps := make([][]int, rank)
	inStrides := rowMajorStrides(x.Shape)
	for a := range rank {
		maps[a] = make([]int, out.Shape[a])
		end := out.Shape[a] - x.Shape[a] - begin[a]
		for o := range maps[a] {
			maps[a][o] = shapePadCropSourceIndex(mode, o, begin[a], end, x.Shape[a]) * inStrides[a]
		}
	}
	offs := make([]int, onnx.NumElements(out.Shape))
	counter := make([]int, rank)
	for k := range offs {
		off := 0
		for a := range rank {
			off += maps[a][counter[a]]
		}
		offs[k] = off
		for a := rank - 1; a >= 0; a-- {
			counter[a]++
			if counter[a] < out.Shape[a] {
				break
			}
			counter[a] = 0
		}
	}
	return shapeGatherInto(out, x, offs, 1)
}

// shapePadValueOf converts the float value attribute of Pad versions 1 and 2 to
// a one-element slice of dt's Go type.
func shapePadValueOf(dt onnx.DataType, v float32) (any, error) {
	if v == 0 {
		return shapeZeroOf(dt), nil
	}
	t, err := tensorFromFloat64s(dt, []int{}, []float64{float64(v)})
	if err != nil {
		return nil, err
	}
	return t.Data, nil
}

// VisitPad compiles Pad: pads (paddings in version 1) and value are
// attributes before version 11; from 11 pads and an optional
// constant_value are inputs, from 18 an optional axes input selects the
// padded axes, from 19 mode may be wrap.
func (b *builder) VisitPad(op *ops.Pad) error {
	since := op.SinceVersion()
	x, err := b.input(op.In.Data)
	if err != nil {
		return err
	}
	mode, err := shapeParsePadMode(op.Mode, since)
	if err != nil {
		return err
	}
	out := b.output(op.Out.Output)
	var buf outputBuffer
	run := func(slots []onnx.Value, t *onnx.Tensor, pads, axes []int64, value any) error {
		begin, _, shape, err := shapePadAmounts(t.Shape, pads, axes)
		if err != nil {
			return err
		}
		res := buf.tensor(t.Type, shape)
		if err := shapePadInto(res, t, begin, mode, value); err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	}
	if since < 11 {
		pads := slices.Clone(op.Pads)
		if since < 2 {
			pads = slices.Clone(op.Paddings)
		}
		if pads == nil && !b.probing {
			return fmt.Errorf("attribute pads is required before version 11")
		}
		v := op.Value
		return b.emit(func(slots []onnx.Value) error {
			t, err := x.tensor(slots)
			if err != nil {
				return err
			}
			value, err := shapePadValueOf(t.Type, v)
			if err != nil {
				return err
			}
			return run(slots, t, pads, nil, value)
		})
	}
	padsIn, err := b.input(op.In.Pads)
	if err != nil {
		return err
	}
	valueIn, err := b.optionalInput(op.In.ConstantValue)
	if err != nil {
		return err
	}
	axesIn, err := b.optionalInput(op.In.Axes)
	if err != nil {
		return err
	}
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		pt, err := padsIn.tensor(slots)
		if err != nil {
			return err
		}
		if pt.Type != onnx.Int64 {
			return fmt.Errorf("pads input %q must be an int64 tensor, got tensor(%v)", padsIn.name, pt.Type)
		}
		value := shapeZeroOf(t.Type)
		if vt, err := valueIn.optionalTensor(slots); err != nil {
			return err
		} else if vt != nil && vt.Len() > 0 {
			if vt.Type != t.Type {
				return fmt.Errorf("constant_value has type %v, data has %v", vt.Type, t.Type)
			}
			value = vt.Data
		}
		var axes []int64
		if at, err := axesIn.optionalTensor(slots); err != nil {
			return err
		} else if at != nil {
			if axes, err = shapeIndexInts(at, "axes input"); err != nil {
				return err
			}
		}
		return run(slots, t, pt.Int64s(), axes, value)
	})
}

// VisitCenterCropPad compiles CenterCropPad: each listed axis (all by
// default) is cropped or zero-padded around its centre to the requested
// size; when the difference is odd, the extra element is cropped from or
// padded at the end.
func (b *builder) VisitCenterCropPad(op *ops.CenterCropPad) error {
	x, err := b.input(op.In.InputData)
	if err != nil {
		return err
	}
	shapeIn, err := b.input(op.In.Shape)
	if err != nil {
		return err
	}
	axes := slices.Clone(op.Axes)
	out := b.output(op.Out.OutputData)
	var buf outputBuffer
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		st, err := shapeIn.tensor(slots)
		if err != nil {
			return err
		}
		req, err := shapeIndexInts(st, "shape input")
		if err != nil {
			return err
		}
		rank := len(t.Shape)
		var norm []int
		if axes == nil {
			norm = make([]int, rank)
			for i := range norm {
				norm[i] = i
			}
		} else if norm, err = normalizeAxes(axes, rank); err != nil {
			return err
		}
		if len(req) != len(norm) {
			return fmt.Errorf("shape %v has %d entries for %d axes", req, len(req), len(norm))
		}
		pads := make([]int64, 2*rank)
		for i, a := range norm {
			diff := req[i] - int64(t.Shape[a])
			if req[i] < 0 {
				return fmt.Errorf("shape %v has negative size %d", req, req[i])
			}
			if diff >= 0 { // pad: the smaller half first
				pads[a], pads[a+rank] = diff/2, diff-diff/2
			} else { // crop: the smaller half from the start
				c := -diff
				pads[a], pads[a+rank] = -(c / 2), -(c - c/2)
			}
		}
		begin, _, shape, err := shapePadAmounts(t.Shape, pads, nil)
		if err != nil {
			return err
		}
		res := buf.tensor(t.Type, shape)
		if err := shapePadInto(res, t, begin, shapePadConstant, shapeZeroOf(t.Type)); err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	})
}
