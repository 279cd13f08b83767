package gorgonia

import (
	"fmt"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// reshapeTo sets out to x reshaped to shape (same number of elements).
func (b *builder) reshapeTo(x string, out string, shape func(in []int) ([]int, error)) error {
	xv, xn, err := b.getNode(x)
	if err != nil {
		return err
	}
	s, err := shape(xv.shape)
	if err != nil {
		return err
	}
	if onnx.NumElements(s) != onnx.NumElements(xv.shape) {
		return fmt.Errorf("cannot reshape %v to %v", xv.shape, s)
	}
	y := xn
	if !slices.Equal(gshape(s), xn.Shape()) {
		if y, err = reshape(xn, gshape(s)); err != nil {
			return err
		}
	}
	return b.set(out, y, s, xv.typ)
}

// VisitReshape needs the target shape as a constant (attribute before
// version 5).
func (b *builder) VisitReshape(op *ops.Reshape) error {
	var spec []int64
	if op.SinceVersion() < 5 {
		spec = op.Shape
	} else {
		c, err := b.constant(op.In.Shape)
		if err != nil {
			return err
		}
		if spec, err = int64sOf(c); err != nil {
			return fmt.Errorf("shape %q: %w", op.In.Shape, err)
		}
	}
	return b.reshapeTo(op.In.Data, op.Out.Reshaped, func(in []int) ([]int, error) {
		out := make([]int, len(spec))
		infer := -1
		known := 1
		for i, d := range spec {
			switch {
			case d == 0 && op.Allowzero == 0:
				if i >= len(in) {
					return nil, fmt.Errorf("shape %v copies dimension %d of %v", spec, i, in)
				}
				out[i] = in[i]
			case d == -1:
				if infer >= 0 {
					return nil, fmt.Errorf("shape %v has two -1", spec)
				}
				infer = i
				continue
			case d < 0:
				return nil, fmt.Errorf("shape %v has a negative dimension", spec)
			default:
				out[i] = int(d)
			}
			known *= out[i]
		}
		if infer >= 0 {
			if known == 0 {
				return nil, network.Unsupportedf("empty tensors")
			}
			out[infer] = onnx.NumElements(in) / known
		}
		return out, nil
	})
}

// VisitFlatten reshapes to 2-D at axis.
func (b *builder) VisitFlatten(op *ops.Flatten) error {
	return b.reshapeTo(op.In.Input, op.Out.Output, func(in []int) ([]int, error) {
		a := int(op.Axis)
		if a < 0 {
			a += len(in)
		}
		if a < 0 || a > len(in) {
			return nil, fmt.Errorf("axis %d out of range for shape %v", op.Axis, in)
		}
		return []int{onnx.NumElements(in[:a]), onnx.NumElements(in[a:])}, nil
	})
}

// axesOf normalizes axes (negative from the end) against rank r.
func axesOf(axes []int64, r int) ([]int, error) {
	out := make([]int, len(axes))
	for i, a := range axes {
		x := int(a)
		if x < 0 {
			x += r
		}
		if x < 0 || x >= r {
			return nil, fmt.Errorf("axis %d out of range for rank %d", a, r)
		}
		if slices.Contains(out[:i], x) {
			return nil, fmt.Errorf("axis %d repeated in %v", a, axes)
		}
		out[i] = x
	}
	return out, nil
}

// axesInput reads axes from an attribute (old versions) or a constant
// input (new ones); nil when neither is given.
func (b *builder) axesInput(version, inputFrom int, attr []int64, input string) ([]int64, error) {
	if version < inputFrom {
		return attr, nil
	}
	return b.optionalInt64s(input)
}

func (b *builder) VisitSqueeze(op *ops.Squeeze) error {
	axes, err := b.axesInput(op.SinceVersion(), 13, op.Axes, op.In.Axes)
	if err != nil {
		return err
	}
	return b.reshapeTo(op.In.Data, op.Out.Squeezed, func(in []int) ([]int, error) {
		ax, err := axesOf(axes, len(in))
		if err != nil {
			return nil, err
		}
		var out []int
		for i, d := range in {
			drop := slices.Contains(ax, i) || len(ax) == 0 && d == 1
			if drop && d != 1 {
				return nil, fmt.Errorf("cannot squeeze axis %d of %v", i, in)
			}
			if !drop {
				out = append(out, d)
			}
		}
		return out, nil
	})
}

func (b *builder) VisitUnsqueeze(op *ops.Unsqueeze) error {
	axes, err := b.axesInput(op.SinceVersion(), 13, op.Axes, op.In.Axes)
	if err != nil {
		return err
	}
	return b.reshapeTo(op.In.Data, op.Out.Expanded, func(in []int) ([]int, error) {
		r := len(in) + len(axes)
		ax, err := axesOf(axes, r)
		if err != nil {
			return nil, err
		}
		out := make([]int, 0, r)
		k := 0
		for i := range r {
			if slices.Contains(ax, i) {
				out = append(out, 1)
			} else {
				out = append(out, in[k])
				k++
			}
		}
		return out, nil
	})
}

// VisitTranspose maps onto Gorgonia's Transpose.
func (b *builder) VisitTranspose(op *ops.Transpose) error {
	xv, xn, err := b.getNode(op.In.Data)
	if err != nil {
		return err
	}
	r := len(xv.shape)
	perm := make([]int, r)
	if len(op.Perm) == 0 {
		for i := range perm {
			perm[i] = r - 1 - i
		}
	} else {
		if len(op.Perm) != r {
			return fmt.Errorf("perm %v for rank %d", op.Perm, r)
		}
		p, err := axesOf(op.Perm, r)
		if err != nil {
			return err
		}
		copy(perm, p)
	}
	shape := make([]int, r)
	for i, p := range perm {
		shape[i] = xv.shape[p]
	}
	identity := true
	for i, p := range perm {
		identity = identity && i == p
	}
	if r < 2 || identity {
		return b.set(op.Out.Transposed, xn, shape, xv.typ)
	}
	y, err := G.Transpose(xn, perm...)
	if err != nil {
		return err
	}
	return b.set(op.Out.Transposed, y, shape, xv.typ)
}

// VisitConcat maps onto Gorgonia's Concat.
func (b *builder) VisitConcat(op *ops.Concat) error {
	var nodes []*G.Node
	var first *val
	axis := 1 // before version 4 the default
	if op.Axis != nil {
		axis = int(*op.Axis)
	}
	shape := []int(nil)
	for _, name := range op.In.Inputs {
		v, n, err := b.getNode(name)
		if err != nil {
			return err
		}
		if first == nil {
			first = v
			if len(v.shape) == 0 {
				return fmt.Errorf("Concat of rank-0 tensors")
			}
			if axis < 0 {
				axis += len(v.shape)
			}
			if axis < 0 || axis >= len(v.shape) {
				return fmt.Errorf("axis %v out of range for shape %v", op.Axis, v.shape)
			}
			shape = slices.Clone(v.shape)
			shape[axis] = 0
		}
		if v.typ != first.typ || len(v.shape) != len(first.shape) {
			return fmt.Errorf("Concat of %v%v and %v%v", first.typ, first.shape, v.typ, v.shape)
		}
		for i := range v.shape {
			if i != axis && v.shape[i] != first.shape[i] {
				return fmt.Errorf("Concat of shapes %v and %v along axis %d", first.shape, v.shape, axis)
			}
		}
		shape[axis] += v.shape[axis]
		nodes = append(nodes, n)
	}
	if first == nil {
		return fmt.Errorf("Concat of nothing")
	}
	if len(nodes) == 1 {
		return b.set(op.Out.ConcatResult, nodes[0], shape, first.typ)
	}
	y, err := G.Concat(axis, nodes...)
	if err != nil {
		return err
	}
	return b.set(op.Out.ConcatResult, y, shape, first.typ)
}

// VisitSlice maps constant starts, ends, axes and positive steps onto
// Gorgonia's Slice.
func (b *builder) VisitSlice(op *ops.Slice) error {
	var starts, ends, axes, steps []int64
	if op.SinceVersion() < 10 {
		starts, ends, axes = op.Starts, op.Ends, op.Axes
	} else {
		read := b.optionalInt64s
		var err error
		if starts, err = read(op.In.Starts); err != nil {
			return err
		}
		if ends, err = read(op.In.Ends); err != nil {
			return err
		}
		if axes, err = read(op.In.Axes); err != nil {
			return err
		}
		if steps, err = read(op.In.Steps); err != nil {
			return err
		}
	}
	xv, xn, err := b.getNode(op.In.Data)
	if err != nil {
		return err
	}
	r := len(xv.shape)
	if len(starts) != len(ends) || len(axes) != 0 && len(axes) != len(starts) || len(steps) != 0 && len(steps) != len(starts) {
		return fmt.Errorf("Slice: starts %v, ends %v, axes %v and steps %v differ in length", starts, ends, axes, steps)
	}
	if len(axes) == 0 {
		for i := range starts {
			axes = append(axes, int64(i))
		}
	}
	ax, err := axesOf(axes, r)
	if err != nil {
		return err
	}
	sl := make([]tensor.Slice, r)
	shape := slices.Clone(xv.shape)
	for k, a := range ax {
		step := int64(1)
		if len(steps) > 0 {
			step = steps[k]
		}
		if step <= 0 {
			return network.Unsupportedf("Slice with step %d (Gorgonia slices forward only)", step)
		}
		dim := int64(xv.shape[a])
		clampIdx := func(x int64) int64 {
			if x < 0 {
				x += dim
			}
			return max(0, min(x, dim))
		}
		s, e := clampIdx(starts[k]), clampIdx(ends[k])
		if e <= s {
			return network.Unsupportedf("Slice with an empty result")
		}
		shape[a] = int((e - s + step - 1) / step)
		if s == 0 && e == dim && step == 1 {
			continue
		}
		sl[a] = G.S(int(s), int(e), int(step))
	}
	if !slices.ContainsFunc(sl, func(s tensor.Slice) bool { return s != nil }) {
		return b.set(op.Out.Output, xn, shape, xv.typ)
	}
	y, err := sliceTo(xn, xv.shape, sl, shape)
	if err != nil {
		return err
	}
	return b.set(op.Out.Output, y, shape, xv.typ)
}

// VisitShape is a constant: the graph's shapes are static.
func (b *builder) VisitShape(op *ops.Shape) error {
	if b.probing {
		return errProbe
	}
	v, err := b.get(op.In.Data)
	if err != nil {
		return err
	}
	r := int64(len(v.shape))
	start, end := op.Start, r
	if op.End != nil {
		end = *op.End
	}
	norm := func(x int64) int64 {
		if x < 0 {
			x += r
		}
		return max(0, min(x, r))
	}
	start, end = norm(start), norm(end)
	dims := []int64{}
	for i := start; i < end; i++ {
		dims = append(dims, int64(v.shape[i]))
	}
	b.setConst(op.Out.Shape, onnx.FromSlice(dims, len(dims)))
	return nil
}

// VisitSize is a constant.
func (b *builder) VisitSize(op *ops.Size) error {
	if b.probing {
		return errProbe
	}
	v, err := b.get(op.In.Data)
	if err != nil {
		return err
	}
	b.setConst(op.Out.Size, onnx.Scalar(int64(onnx.NumElements(v.shape))))
	return nil
}

// VisitConstantOfShape is a constant when its shape is.
func (b *builder) VisitConstantOfShape(op *ops.ConstantOfShape) error {
	c, err := b.constant(op.In.Input)
	if err != nil {
		return err
	}
	dims, err := int64sOf(c)
	if err != nil {
		return err
	}
	shape := ints(dims)
	typ := onnx.Float
	if op.Value != nil {
		typ = op.Value.Type
	}
	t := onnx.NewTensor(typ, shape...)
	if op.Value != nil {
		n := onnx.NumElements(shape)
		src := op.Value.Data
		for i := range n {
			if err := copyElem(t.Data, i, src); err != nil {
				return err
			}
		}
	}
	b.setConst(op.Out.Output, t)
	return nil
}

// copyElem sets element i of dst to the first element of src.
func copyElem(dst any, i int, src any) error {
	switch d := dst.(type) {
	case []float32:
		d[i] = src.([]float32)[0]
	case []float64:
		d[i] = src.([]float64)[0]
	case []int32:
		d[i] = src.([]int32)[0]
	case []int64:
		d[i] = src.([]int64)[0]
	case []bool:
		d[i] = src.([]bool)[0]
	default:
		return network.Unsupportedf("ConstantOfShape of type %T", dst)
	}
	return nil
}

// VisitExpand broadcasts x to the shape by adding zeros of that shape
// (float and double only, as Gorgonia's broadcasting).
func (b *builder) VisitExpand(op *ops.Expand) error {
	c, err := b.constant(op.In.Shape)
	if err != nil {
		return err
	}
	dims, err := int64sOf(c)
	if err != nil {
		return err
	}
	xv, err := b.get(op.In.Input)
	if err != nil {
		return err
	}
	if xv.typ != onnx.Float && xv.typ != onnx.Double {
		return network.Unsupportedf("Expand of %v", xv.typ)
	}
	zshape := ints(dims)
	for _, d := range zshape {
		if d <= 0 {
			return network.Unsupportedf("Expand to shape %v", zshape)
		}
	}
	zeros := onnx.NewTensor(xv.typ, zshape...)
	r, err := b.bop(G.BroadcastAdd, xv, &val{c: zeros, shape: zshape, typ: xv.typ})
	if err != nil {
		return err
	}
	return b.set(op.Out.Output, r.n, r.shape, r.typ)
}
