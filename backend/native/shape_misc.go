package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// OneHot, DepthToSpace, SpaceToDepth, Compress, NonZero and
// ReverseSequence.

// oneHotOffsets encodes idx one-hot as offsets into values: the output is a gather
// of values ([off, on]) with offset 1 where the position along axis equals
// the (wrapped) index. Indices outside [-depth, depth) give all off.
func oneHotOffsets(idx []float64, outer, inner, depth int) []int {
	offs := make([]int, outer*depth*inner)
	for o := range outer {
		for i := range inner {
			v := idx[o*inner+i]
			if math.IsNaN(v) {
				continue
			}
			k := int64(v) // truncated, like a cast to an integer
			if k < 0 {
				k += int64(depth)
			}
			if k < 0 || k >= int64(depth) {
				continue
			}
			offs[(o*depth+int(k))*inner+i] = 1
		}
	}
	return offs
}

// VisitOneHot compiles OneHot: indices of any numeric type, a scalar depth,
// and values [off, on] of the output type; axis (in [-r-1, r]) is where the
// new dimension goes.
func (b *builder) VisitOneHot(op *ops.OneHot) error {
	var refs [3]valueRef
	for i, n := range []string{op.In.Indices, op.In.Depth, op.In.Values} {
		r, err := b.input(n)
		if err != nil {
			return err
		}
		refs[i] = r
	}
	axis := op.Axis
	out := b.output(op.Out.Output)
	var buf outputBuffer
	return b.emit(func(slots []onnx.Value) error {
		var ts [3]*onnx.Tensor
		for i, r := range refs {
			t, err := r.tensor(slots)
			if err != nil {
				return err
			}
			ts[i] = t
		}
		it, dt, vt := ts[0], ts[1], ts[2]
		dv, err := float64sOf(dt)
		if err != nil {
			return err
		}
		if len(dv) != 1 {
			return fmt.Errorf("depth must hold one value, has shape %v", dt.Shape)
		}
		if math.IsNaN(dv[0]) || dv[0] < 1 || dv[0] > shapeMaxElements {
			return fmt.Errorf("depth %v is out of range", dv[0])
		}
		depth := int(dv[0])
		if vt.Len() != 2 {
			return fmt.Errorf("values must hold [off, on], has shape %v", vt.Shape)
		}
		r := len(it.Shape)
		a := int(axis)
		if a < 0 {
			a += r + 1
		}
		if a < 0 || a > r {
			return fmt.Errorf("axis %d is out of range [-%d, %d]", axis, r+1, r)
		}
		shape := make([]int, 0, r+1)
		shape = append(append(append(shape, it.Shape[:a]...), depth), it.Shape[a:]...)
		if _, err := shapeFromInts(shapeAsInt64(shape)); err != nil {
			return err
		}
		idx, err := float64sOf(it)
		if err != nil {
			return err
		}
		offs := oneHotOffsets(idx, shapeProd(it.Shape[:a]), shapeProd(it.Shape[a:]), depth)
		res := buf.tensor(vt.Type, shape)
		if err := shapeGatherInto(res, vt, offs, 1); err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	})
}

// spaceDepthPlan gives the 6-D view of the input and the permutation that
// DepthToSpace (toSpace) or SpaceToDepth performs in mode DCR or CRD, and
// the 4-D output shape.
func spaceDepthPlan(shape []int, bs int, crd, toSpace bool) (in6 []int, perm []int, out []int, err error) {
	if len(shape) != 4 {
		return nil, nil, nil, fmt.Errorf("input must be 4-D [N, C, H, W], got shape %v", shape)
	}
	if bs < 1 {
		return nil, nil, nil, fmt.Errorf("blocksize %d must be positive", bs)
	}
	n, c, h, w := shape[0], shape[1], shape[2], shape[3]
	if toSpace {
		if c%(bs*bs) != 0 {
			return nil, nil, nil, fmt.Errorf("channels %d are not divisible by blocksize² %d", c, bs*bs)
		}
		cc := c / (bs * bs)
		out = []int{n, cc, h * bs, w * bs}
		if crd {
			return []int{n, cc, bs, bs, h, w}, []int{0, 1, 4, 2, 5, 3}, out, nil
		}
		return []int{n, bs, bs, cc, h, w}, []int{0, 3, 4, 1, 5, 2}, out, nil
	}
	if h%bs != 0 || w%bs != 0 {
		return nil, nil, nil, fmt.Errorf("height %d and width %d must be divisible by blocksize %d", h, w, bs)
	}
	out = []int{n, c * bs * bs, h / bs, w / bs}
	in6 = []int{n, c, h / bs, bs, w / bs, bs}
	if crd {
		return in6, []int{0, 1, 3, 5, 2, 4}, out, nil
	}
	return in6, []int{0, 3, 5, 1, 2, 4}, out, nil
}

// spaceDepthCRD reads DepthToSpace's mode: true for CRD (column, row,
// depth), false for DCR (the default; SpaceToDepth has no mode).
func spaceDepthCRD(mode string) (bool, error) {
	switch mode {
	case "DCR", "":
		return false, nil
	case "CRD":
		return true, nil
	}
	return false, network.Unsupportedf("mode %q", mode)
}

// spaceDepth compiles DepthToSpace and SpaceToDepth as a 6-D transpose.
func (b *builder) spaceDepth(in, outName string, blocksize int64, mode string, toSpace bool) error {
	x, err := b.input(in)
	if err != nil {
		return err
	}
	crd, err := spaceDepthCRD(mode)
	if err != nil {
		return err
	}
	if blocksize < 1 && !b.probing {
		return fmt.Errorf("blocksize %d must be positive", blocksize)
	}
	bs := int(min(blocksize, math.MaxInt32))
	out := b.output(outName)
	var buf outputBuffer
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		in6, perm, shape, err := spaceDepthPlan(t.Shape, bs, crd, toSpace)
		if err != nil {
			return err
		}
		res := buf.tensor(t.Type, shape)
		p, shape6, _ := transposeShape(in6, []int64{int64(perm[0]), int64(perm[1]), int64(perm[2]), int64(perm[3]), int64(perm[4]), int64(perm[5])})
		err = transposeInto(&onnx.Tensor{Type: t.Type, Shape: shape6, Data: res.Data}, &onnx.Tensor{Type: t.Type, Shape: in6, Data: t.Data}, p)
		if err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	})
}

// VisitDepthToSpace compiles DepthToSpace: mode DCR (the only one in
// version 1) or CRD from version 11.
func (b *builder) VisitDepthToSpace(op *ops.DepthToSpace) error {
	return b.spaceDepth(op.In.Input, op.Out.Output, op.Blocksize, op.Mode, true)
}

// VisitSpaceToDepth compiles SpaceToDepth: DCR, and CRD from version 28.
func (b *builder) VisitSpaceToDepth(op *ops.SpaceToDepth) error {
	return b.spaceDepth(op.In.Input, op.Out.Output, op.Blocksize, op.Mode, false)
}

// VisitCompress compiles Compress: the slices along axis (or the elements
// of the flattened input without axis) whose condition entry is true; a
// condition shorter than the axis drops the rest.
func (b *builder) VisitCompress(op *ops.Compress) error {
	x, err := b.input(op.In.Input)
	if err != nil {
		return err
	}
	c, err := b.input(op.In.Condition)
	if err != nil {
		return err
	}
	axis := op.Axis
	out := b.output(op.Out.Output)
	var buf outputBuffer
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		ct, err := c.tensor(slots)
		if err != nil {
			return err
		}
		if ct.Type != onnx.Bool || len(ct.Shape) != 1 {
			return fmt.Errorf("condition must be a 1-D bool tensor, got tensor(%v)%v", ct.Type, ct.Shape)
		}
		shape := []int{t.Len()}
		a := 0
		if axis != nil {
			if a, err = normalizeAxis(*axis, len(t.Shape)); err != nil {
				return err
			}
			shape = t.Shape
		}
		dim := shape[a]
		var sel []int
		for i, v := range ct.Bools() {
			if !v {
				continue
			}
			if i >= dim {
				return fmt.Errorf("condition entry %d is true, but the axis has size %d", i, dim)
			}
			sel = append(sel, i)
		}
		outer, inner := shapeProd(shape[:a]), shapeProd(shape[a+1:])
		offs := make([]int, 0, outer*len(sel))
		for o := range outer {
			for _, s := range sel {
				offs = append(offs, (o*dim+s)*inner)
			}
		}
		outShape := append([]int{}, shape...)
		outShape[a] = len(sel)
		res := buf.tensor(t.Type, outShape)
		if err := shapeGatherInto(res, t, offs, inner); err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	})
}

// nonZeroPositions returns the flat positions of the non-zero elements.
func nonZeroPositions(t *onnx.Tensor) ([]int, error) {
	switch d := t.Data.(type) {
	case []float32:
		return nonZeroOf(d, func(v float32) bool { return v != 0 }), nil
	case []float64:
		return nonZeroOf(d, func(v float64) bool { return v != 0 }), nil
	case []int8:
		return nonZeroOf(d, func(v int8) bool { return v != 0 }), nil
	case []int16:
		return nonZeroOf(d, func(v int16) bool { return v != 0 }), nil
	case []int32:
		return nonZeroOf(d, func(v int32) bool { return v != 0 }), nil
	case []int64:
		return nonZeroOf(d, func(v int64) bool { return v != 0 }), nil
	case []uint8:
		return nonZeroOf(d, func(v uint8) bool { return v != 0 }), nil
	case []uint16:
		return nonZeroOf(d, func(v uint16) bool { return v != 0 }), nil
	case []uint32:
		return nonZeroOf(d, func(v uint32) bool { return v != 0 }), nil
	case []uint64:
		return nonZeroOf(d, func(v uint64) bool { return v != 0 }), nil
	case []bool:
		return nonZeroOf(d, func(v bool) bool { return v }), nil
	case []string:
		return nonZeroOf(d, func(v string) bool { return v != "" }), nil
	case []complex64:
		return nonZeroOf(d, func(v complex64) bool { return v != 0 }), nil
	case []complex128:
		return nonZeroOf(d, func(v complex128) bool { return v != 0 }), nil
	case []onnx.F16:
		return nonZeroOf(d, func(v onnx.F16) bool { return v&0x7fff != 0 }), nil
	case []onnx.BF16:
		return nonZeroOf(d, func(v onnx.BF16) bool { return v&0x7fff != 0 }), nil
	}
	return nil, network.Unsupportedf("NonZero of tensor(%v)", t.Type)
}

func nonZeroOf[T any](d []T, nz func(T) bool) []int {
	var pos []int
	for i, v := range d {
		if nz(v) {
			pos = append(pos, i)
		}
	}
	return pos
}

// VisitNonZero compiles NonZero: the coordinates of the non-zero elements
// in row-major order, as an int64 tensor [rank, count] (a scalar counts as
// rank 1, as numpy does).
func (b *builder) VisitNonZero(op *ops.NonZero) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	out := b.output(op.Out.Y)
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		pos, err := nonZeroPositions(t)
		if err != nil {
			return err
		}
		shape := t.Shape
		if len(shape) == 0 {
			shape = []int{1}
		}
		rank, n := len(shape), len(pos)
		coords := make([]int64, rank*n)
		for k, p := range pos {
			for a := rank - 1; a >= 0; a-- {
				coords[a*n+k] = int64(p % shape[a])
				p /= shape[a]
			}
		}
		out.set(slots, onnx.FromSlice(coords, rank, n))
		return nil
	})
}

// VisitReverseSequence compiles ReverseSequence: for each batch entry b,
// the first sequence_lens[b] steps along time_axis are reversed.
func (b *builder) VisitReverseSequence(op *ops.ReverseSequence) error {
	x, err := b.input(op.In.Input)
	if err != nil {
		return err
	}
	lensIn, err := b.input(op.In.SequenceLens)
	if err != nil {
		return err
	}
	batchAxis, timeAxis := op.BatchAxis, op.TimeAxis
	if !b.probing && (batchAxis != 0 && batchAxis != 1 || timeAxis != 0 && timeAxis != 1 || batchAxis == timeAxis) {
		return fmt.Errorf("batch_axis %d and time_axis %d must be 0 and 1 in some order", batchAxis, timeAxis)
	}
	out := b.output(op.Out.Y)
	var buf outputBuffer
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		lt, err := lensIn.tensor(slots)
		if err != nil {
			return err
		}
		if len(t.Shape) < 2 {
			return fmt.Errorf("input must have rank at least 2, got shape %v", t.Shape)
		}
		lens, err := shapeIndexInts(lt, "sequence_lens")
		if err != nil {
			return err
		}
		batch, steps := t.Shape[batchAxis], t.Shape[timeAxis]
		if len(lens) != batch {
			return fmt.Errorf("sequence_lens has %d entries for a batch of %d", len(lens), batch)
		}
		strides := rowMajorStrides(t.Shape)
		bs, ts := strides[batchAxis], strides[timeAxis]
		inner := shapeProd(t.Shape[2:])
		offs := make([]int, batch*steps)
		// Output blocks are in row-major order of the first two axes.
		for i0 := range t.Shape[0] {
			for i1 := range t.Shape[1] {
				bi, ti := i0, i1
				if batchAxis == 1 {
					bi, ti = i1, i0
				}
				l := lens[bi]
				if l < 0 || l > int64(steps) {
					return fmt.Errorf("sequence_lens[%d] = %d is out of range [0, %d]", bi, l, steps)
				}
				src := ti
				if int64(ti) < l {
					src = int(l) - 1 - ti
				}
				offs[i0*t.Shape[1]+i1] = bi*bs + src*ts
			}
		}
		res := buf.tensor(t.Type, t.Shape)
		if err := shapeGatherInto(res, t, offs, inner); err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	})
}
