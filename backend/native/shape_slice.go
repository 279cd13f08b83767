package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Slice and Split: windows of a tensor, copied with the strided-copy
// primitive of layout.go (or shapeMove's signed-stride copy for negative
// steps).

// sliceAxisRange applies ONNX's clamping to one axis of size dim: negative
// start and end count from the end; with a positive step start and end are
// clamped to [0, dim], with a negative step start to [0, dim-1] and end to
// [-1, dim-1]. It returns the first index and the element count.
func sliceAxisRange(start, end, step int64, dim int) (first, count int) {
	d := int64(dim)
	if start < 0 {
		start += d
	}
	if end < 0 {
		end += d
	}
	var n int64
	if step > 0 {
		start = min(max(start, 0), d)
		end = min(max(end, 0), d)
		if end > start {
			n = (end-start-1)/step + 1
		}
	} else {
		start = min(max(start, 0), d-1)
		end = min(max(end, -1), d-1)
		if start > end {
			n = (start-end-1)/(-step) + 1
		}
	}
	return int(start), int(n)
}

// slicePlan computes the output shape and the source window (offset and
// signed strides) of a slice of shape with the given per-axis parameters.
// axes may be nil (the first len(starts) axes); steps may be nil (all 1).
func slicePlan(shape []int, starts, ends, axes, steps []int64) (out []int, src stridedView, negative bool, err error) {
	rank := len(shape)
	if len(ends) != len(starts) {
		return nil, src, false, fmt.Errorf("starts %v and ends %v have different lengths", starts, ends)
	}
	if axes == nil {
		if len(starts) > rank {
			return nil, src, false, fmt.Errorf("%d starts for a tensor of rank %d", len(starts), rank)
		}
		axes = make([]int64, len(starts))
		for i := range axes {
			axes[i] = int64(i)
		}
	}
	if len(axes) != len(starts) {
		return nil, src, false, fmt.Errorf("axes %v and starts %v have different lengths", axes, starts)
	}
	if steps != nil && len(steps) != len(starts) {
		return nil, src, false, fmt.Errorf("steps %v and starts %v have different lengths", steps, starts)
	}
	norm, err := normalizeAxes(axes, rank)
	if err != nil {
		return nil, src, false, err
	}
	inStrides := rowMajorStrides(shape)
	out = slices.Clone(shape)
	src.strides = slices.Clone(inStrides)
	for i, a := range norm {
		step := int64(1)
		if steps != nil {
			step = steps[i]
		}
		if step == 0 {
			return nil, src, false, fmt.Errorf("step of axis %d is 0", axes[i])
		}
		first, n := sliceAxisRange(starts[i], ends[i], step, shape[a])
		out[a] = n
		if n > 0 {
			src.offset += first * inStrides[a]
		}
		src.strides[a] = int(step) * inStrides[a]
		if step < 0 {
			negative = true
		}
	}
	return out, src, negative, nil
}

// sliceInto copies the window of x into out (of shape outShape).
func sliceInto(out, x *onnx.Tensor, src stridedView, negative bool) error {
	if onnx.NumElements(out.Shape) == 0 {
		return nil
	}
	dst := stridedView{0, rowMajorStrides(out.Shape)}
	if negative {
		return shapeMove(&shapeMoveSpec{kind: shapeStrided, shape: out.Shape, dst: dst, src: src}, out.Data, x.Data)
	}
	return stridedCopy(out.Data, dst, x.Data, src, out.Shape)
}

// VisitSlice compiles Slice: starts, ends and axes are attributes in
// version 1; from version 10 they are inputs, with optional axes and steps
// (negative steps walk backwards).
func (b *builder) VisitSlice(op *ops.Slice) error {
	x, err := b.input(op.In.Data)
	if err != nil {
		return err
	}
	out := b.output(op.Out.Output)
	var buf outputBuffer
	run := func(slots []onnx.Value, t *onnx.Tensor, starts, ends, axes, steps []int64) error {
		shape, src, neg, err := slicePlan(t.Shape, starts, ends, axes, steps)
		if err != nil {
			return err
		}
		res := buf.tensor(t.Type, shape)
		if err := sliceInto(res, t, src, neg); err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	}
	if op.SinceVersion() < 10 {
		starts, ends, axes := slices.Clone(op.Starts), slices.Clone(op.Ends), slices.Clone(op.Axes)
		if (starts == nil || ends == nil) && !b.probing {
			return fmt.Errorf("attributes starts and ends are required in version 1")
		}
		return b.emit(func(slots []onnx.Value) error {
			t, err := x.tensor(slots)
			if err != nil {
				return err
			}
			return run(slots, t, starts, ends, axes, nil)
		})
	}
	startsIn, err := b.input(op.In.Starts)
	if err != nil {
		return err
	}
	endsIn, err := b.input(op.In.Ends)
	if err != nil {
		return err
	}
	axesIn, err := b.optionalInput(op.In.Axes)
	if err != nil {
		return err
	}
	stepsIn, err := b.optionalInput(op.In.Steps)
	if err != nil {
		return err
	}
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		var vals [4][]int64
		for i, r := range []valueRef{startsIn, endsIn, axesIn, stepsIn} {
			v, err := r.optionalTensor(slots)
			if err != nil {
				return err
			}
			if v == nil {
				continue
			}
			if vals[i], err = shapeIndexInts(v, fmt.Sprintf("input %q", r.name)); err != nil {
				return err
			}
		}
		return run(slots, t, vals[0], vals[1], vals[2], vals[3])
	})
}

// splitSizes resolves the part lengths of Split along a dimension of size
// dim: explicit lengths (which must sum to dim), num_outputs parts of
// ceil(dim/n) with a smaller last part (version 18), or n equal parts.
func splitSizes(dim int, split []int64, haveSplit bool, numOutputs int, uneven bool) ([]int, error) {
	return splitSizesInto(nil, dim, split, haveSplit, numOutputs, uneven)
}

// splitSizesInto is splitSizes writing into dst's storage.
func splitSizesInto(dst []int, dim int, split []int64, haveSplit bool, numOutputs int, uneven bool) ([]int, error) {
	if haveSplit {
		if len(split) != numOutputs {
			return nil, fmt.Errorf("split %v has %d entries for %d outputs", split, len(split), numOutputs)
		}
		sizes := slices.Grow(dst[:0], len(split))[:len(split)]
		sum := int64(0)
		for i, s := range split {
			if s < 0 {
				return nil, fmt.Errorf("split %v has negative length %d", split, s)
			}
			sum += s
			sizes[i] = int(s)
		}
		if sum != int64(dim) {
			return nil, fmt.Errorf("split %v sums to %d, but the axis has size %d", split, sum, dim)
		}
		return sizes, nil
	}
	if numOutputs <= 0 {
		return nil, fmt.Errorf("Split has no outputs")
	}
	sizes := slices.Grow(dst[:0], numOutputs)[:numOutputs]
	if dim%numOutputs == 0 {
		for i := range sizes {
			sizes[i] = dim / numOutputs
		}
		return sizes, nil
	}
	if !uneven {
		return nil, fmt.Errorf("axis of size %d does not split into %d equal parts", dim, numOutputs)
	}
	chunk := (dim + numOutputs - 1) / numOutputs
	last := dim - chunk*(numOutputs-1)
	if last < 0 {
		return nil, fmt.Errorf("axis of size %d cannot be split into %d parts of %d", dim, numOutputs, chunk)
	}
	for i := range sizes {
		sizes[i] = chunk
	}
	sizes[numOutputs-1] = last
	return sizes, nil
}

// VisitSplit compiles Split. Lengths come from the split attribute
// (versions 1, 2, 11) or the optional split input (versions 1, 13, 18);
// without them the axis is split equally, and from version 18 num_outputs
// allows a smaller last part. Version 1 has no axis default: 0.
func (b *builder) VisitSplit(op *ops.Split) error {
	x, err := b.input(op.In.Input)
	if err != nil {
		return err
	}
	since := op.SinceVersion()
	splitIn, err := b.optionalInput(op.In.Split)
	if err != nil {
		return err
	}
	outs := make([]valueRef, len(op.Out.Outputs))
	for i, n := range op.Out.Outputs {
		outs[i] = b.output(n)
	}
	axis := deref(op.Axis)
	attrSplit := slices.Clone(op.Split)
	numOutputs := len(outs)
	if op.NumOutputs != nil {
		if splitIn.present() {
			return fmt.Errorf("Split sets both the split input and num_outputs")
		}
		if int(*op.NumOutputs) != numOutputs && !b.probing {
			return fmt.Errorf("num_outputs is %d, but the node has %d outputs", *op.NumOutputs, numOutputs)
		}
	}
	uneven := since >= 18
	bufs := make([]outputBuffer, len(outs))
	var sizes, shape []int // kept for their storage
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		a, err := normalizeAxis(axis, len(t.Shape))
		if err != nil {
			return err
		}
		split, haveSplit := attrSplit, attrSplit != nil
		if s, err := splitIn.optionalTensor(slots); err != nil {
			return err
		} else if s != nil {
			if split, err = shapeIndexInts(s, "split input"); err != nil {
				return err
			}
			haveSplit = true
		}
		sizes, err = splitSizesInto(sizes, t.Shape[a], split, haveSplit, numOutputs, uneven)
		if err != nil {
			return err
		}
		var inBuf, outBuf [walkInline]int
		inStrides := rowMajorStridesInto(intsOfLen(inBuf[:], len(t.Shape)), t.Shape)
		pos := 0
		for i, o := range outs {
			shape = append(shape[:0], t.Shape...)
			shape[a] = sizes[i]
			res := bufs[i].tensor(t.Type, shape)
			outStrides := rowMajorStridesInto(intsOfLen(outBuf[:], len(shape)), shape)
			err := stridedCopy(res.Data, stridedView{0, outStrides}, t.Data, stridedView{pos * inStrides[a], inStrides}, shape)
			if err != nil {
				return err
			}
			pos += sizes[i]
			o.set(slots, res)
		}
		return nil
	})
}
