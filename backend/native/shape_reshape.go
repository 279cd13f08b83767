package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Operators that change only a tensor's shape (Flatten, Squeeze,
// Unsqueeze) or describe it (Shape, Size). The reshaping ones share the
// input's backing slice, as Reshape does: no kernel writes into its inputs.

// flattenShape returns the 2-D shape Flatten gives at axis (in [-rank,
// rank]), in dst's storage.
func flattenShape(dst, shape []int, axis int64) ([]int, error) {
	r := int64(len(shape))
	a := axis
	if a < 0 {
		a += r
	}
	if a < 0 || a > r {
		return nil, fmt.Errorf("axis %d is out of range [-%d, %d] for shape %v", axis, r, r, shape)
	}
	return append(dst[:0], shapeProd(shape[:a]), shapeProd(shape[a:])), nil
}

// VisitFlatten compiles Flatten. Version 1 allows axis in [0, rank];
// negative axes are accepted from version 11 (and rejected before).
func (b *builder) VisitFlatten(op *ops.Flatten) error {
	x, err := b.input(op.In.Input)
	if err != nil {
		return err
	}
	axis := op.Axis
	if axis < 0 && op.SinceVersion() < 11 {
		return fmt.Errorf("axis %d: negative axes need Flatten version 11", axis)
	}
	out := b.output(op.Out.Output)
	return b.emit(viewKernel(x, out, func(dst []int, t *onnx.Tensor, _ []onnx.Value) ([]int, error) {
		return flattenShape(dst, t.Shape, axis)
	}))
}

// squeezeShape removes the listed axes (each of size 1), or every size-1
// dimension when all is set, writing the shape into dst's storage.
func squeezeShape(dst, shape []int, axes []int64, all bool) ([]int, error) {
	if !all {
		if err := checkAxesOnce(axes, len(shape)); err != nil {
			return nil, err
		}
		for _, a := range axes {
			n, _ := normalizeAxis(a, len(shape))
			if shape[n] != 1 {
				return nil, fmt.Errorf("cannot squeeze axis %d of shape %v: its size is %d, not 1", n, shape, shape[n])
			}
		}
	}
	out := dst[:0]
	for i, d := range shape {
		if all && d == 1 || !all && axisListed(axes, i, len(shape)) {
			continue
		}
		out = append(out, d)
	}
	return out, nil
}

// unsqueezeShape inserts size-1 dimensions at axes, which index the
// output, writing the shape into dst's storage.
func unsqueezeShape(dst, shape []int, axes []int64) ([]int, error) {
	rank := len(shape) + len(axes)
	if err := checkAxesOnce(axes, rank); err != nil {
		return nil, err
	}
	out := dst[:0]
	j := 0
	for i := range rank {
		if axisListed(axes, i, rank) {
			out = append(out, 1)
			continue
		}
		out = append(out, shape[j])
		j++
	}
	return out, nil
}

// checkAxesOnce is normalizeAxes's check without its result: every axis in
// [-rank, rank) and none repeated. It allocates nothing, for the view
// kernels that run it on every call.
func checkAxesOnce(axes []int64, rank int) error {
	for i, a := range axes {
		n, err := normalizeAxis(a, rank)
		if err != nil {
			return err
		}
		for _, b := range axes[:i] {
			if m, _ := normalizeAxis(b, rank); m == n {
				return fmt.Errorf("axis %d is repeated in %v", a, axes)
			}
		}
	}
	return nil
}

// axisListed reports whether axis i (of rank) is among axes, which
// checkAxesOnce has validated.
func axisListed(axes []int64, i, rank int) bool {
	for _, a := range axes {
		if n, _ := normalizeAxis(a, rank); n == i {
			return true
		}
	}
	return false
}

// shapeAxesInput reads an optional 1-D int64 axes input; ok is false when
// the input is omitted.
func shapeAxesInput(r valueRef, slots []onnx.Value) (axes []int64, ok bool, err error) {
	t, err := r.optionalTensor(slots)
	if err != nil || t == nil {
		return nil, false, err
	}
	if t.Type != onnx.Int64 || len(t.Shape) > 1 {
		return nil, false, fmt.Errorf("axes input %q must be a 1-D int64 tensor, got tensor(%v)%v", r.name, t.Type, t.Shape)
	}
	return t.Int64s(), true, nil
}

// VisitSqueeze compiles Squeeze: axes are an attribute before version 13
// (negative from 11) and an optional input from 13. Without axes every
// size-1 dimension goes.
func (b *builder) VisitSqueeze(op *ops.Squeeze) error {
	x, err := b.input(op.In.Data)
	if err != nil {
		return err
	}
	out := b.output(op.Out.Squeezed)
	if op.SinceVersion() < 13 {
		axes := slices.Clone(op.Axes)
		return b.emit(viewKernel(x, out, func(dst []int, t *onnx.Tensor, _ []onnx.Value) ([]int, error) {
			return squeezeShape(dst, t.Shape, axes, axes == nil)
		}))
	}
	axesIn, err := b.optionalInput(op.In.Axes)
	if err != nil {
		return err
	}
	return b.emit(viewKernel(x, out, func(dst []int, t *onnx.Tensor, slots []onnx.Value) ([]int, error) {
		axes, ok, err := shapeAxesInput(axesIn, slots)
		if err != nil {
			return nil, err
		}
		return squeezeShape(dst, t.Shape, axes, !ok)
	}))
}

// VisitUnsqueeze compiles Unsqueeze: axes are a required attribute before
// version 13 and a required input from 13; they index the output.
func (b *builder) VisitUnsqueeze(op *ops.Unsqueeze) error {
	x, err := b.input(op.In.Data)
	if err != nil {
		return err
	}
	out := b.output(op.Out.Expanded)
	if op.SinceVersion() < 13 {
		if op.Axes == nil && !b.probing {
			return fmt.Errorf("attribute axes is required before version 13")
		}
		axes := slices.Clone(op.Axes)
		return b.emit(viewKernel(x, out, func(dst []int, t *onnx.Tensor, _ []onnx.Value) ([]int, error) {
			return unsqueezeShape(dst, t.Shape, axes)
		}))
	}
	axesIn, err := b.input(op.In.Axes)
	if err != nil {
		return err
	}
	return b.emit(viewKernel(x, out, func(dst []int, t *onnx.Tensor, slots []onnx.Value) ([]int, error) {
		axes, _, err := shapeAxesInput(axesIn, slots)
		if err != nil {
			return nil, err
		}
		return unsqueezeShape(dst, t.Shape, axes)
	}))
}

// shapeRange clamps Shape's start and end (negative count from the end)
// to [0, rank].
func shapeRange(rank int, start int64, end *int64) (int, int) {
	clamp := func(v int64) int {
		if v < 0 {
			v += int64(rank)
		}
		return int(min(max(v, 0), int64(rank)))
	}
	s, e := clamp(start), rank
	if end != nil {
		e = clamp(*end)
	}
	if e < s {
		e = s
	}
	return s, e
}

// VisitShape compiles Shape; start and end (from version 15) select a
// clamped range of the dimensions.
func (b *builder) VisitShape(op *ops.Shape) error {
	x, err := b.input(op.In.Data)
	if err != nil {
		return err
	}
	out := b.output(op.Out.Shape)
	start, end := op.Start, op.End
	if op.SinceVersion() < 15 {
		start, end = 0, nil
	}
	return b.emit(func(slots []onnx.Value) error {
		v := slots[x.slot]
		t, ok := v.(*onnx.Tensor)
		if !ok || t == nil {
			return fmt.Errorf("input %q is %s, not a tensor", x.name, onnx.DescribeValue(v))
		}
		s, e := shapeRange(len(t.Shape), start, end)
		dims := make([]int64, e-s)
		for i := range dims {
			dims[i] = int64(t.Shape[s+i])
		}
		out.set(slots, onnx.FromSlice(dims, len(dims)))
		return nil
	})
}

// VisitSize compiles Size: the element count as an int64 scalar.
func (b *builder) VisitSize(op *ops.Size) error {
	x, err := b.input(op.In.Data)
	if err != nil {
		return err
	}
	out := b.output(op.Out.Size)
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		out.set(slots, onnx.Scalar(int64(onnx.NumElements(t.Shape))))
		return nil
	})
}
