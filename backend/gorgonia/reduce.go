package gorgonia

import (
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// reduction describes a Reduce* operator as Gorgonia ops: pre applied
// elementwise, then Sum, Mean or Max along the axes, then post.
type reduction struct {
	pre  func(*G.Node) (*G.Node, error)
	red  func(*G.Node, ...int) (*G.Node, error)
	post func(*G.Node) (*G.Node, error)
}

// reduce maps one Reduce* node. Axes come from the attribute before
// version inputFrom and from a constant input after it.
func (b *builder) reduce(version, inputFrom int, attr []int64, axesIn string, keep, noop int64,
	data, out string, r reduction) error {
	axes, err := b.axesInput(version, inputFrom, attr, axesIn)
	if err != nil {
		return err
	}
	xv, xn, err := b.getFloat(data)
	if err != nil {
		return err
	}
	rank := len(xv.shape)
	if len(axes) == 0 && noop != 0 {
		return b.set(out, xn, xv.shape, xv.typ)
	}
	ax, err := axesOf(axes, rank)
	if err != nil {
		return err
	}
	if len(ax) == 0 {
		for i := range rank {
			ax = append(ax, i)
		}
	}
	slices.Sort(ax)
	var kept, dropped []int
	for i, d := range xv.shape {
		if slices.Contains(ax, i) {
			kept = append(kept, 1)
		} else {
			kept = append(kept, d)
			dropped = append(dropped, d)
		}
	}
	x := xn
	if r.pre != nil {
		if x, err = r.pre(x); err != nil {
			return err
		}
	}
	var y *G.Node
	if len(dropped) == 0 {
		// Every axis: reduce a [1, n] matrix along 1, so the result is a
		// one-element vector rather than a Gorgonia scalar.
		m, err := reshape(x, tensor.Shape{1, onnx.NumElements(xv.shape)})
		if err != nil {
			return err
		}
		if y, err = r.red(m, 1); err != nil {
			return err
		}
	} else {
		if y, err = reduceAxes(x, xv.shape, ax, r.red); err != nil {
			return err
		}
	}
	if r.post != nil {
		if y, err = r.post(y); err != nil {
			return err
		}
	}
	shape := dropped
	if keep != 0 {
		shape = kept
	}
	if !slices.Equal(y.Shape(), gshape(shape)) {
		if y, err = reshape(y, gshape(shape)); err != nil {
			return err
		}
	}
	return b.set(out, y, shape, xv.typ)
}

var (
	redSum  = reduction{red: G.Sum}
	redMean = reduction{red: G.Mean}
	redMax  = reduction{red: G.Max}
	redMin  = reduction{pre: G.Neg, red: G.Max, post: G.Neg}
	redL1   = reduction{pre: G.Abs, red: G.Sum}
	redL2   = reduction{pre: G.Square, red: G.Sum, post: G.Sqrt}
	redSSq  = reduction{pre: G.Square, red: G.Sum}
	redLS   = reduction{red: G.Sum, post: G.Log}
	redLSE  = reduction{pre: G.Exp, red: G.Sum, post: G.Log}
)

func (b *builder) VisitReduceSum(op *ops.ReduceSum) error {
	return b.reduce(op.SinceVersion(), 13, op.Axes, op.In.Axes, op.Keepdims, op.NoopWithEmptyAxes, op.In.Data, op.Out.Reduced, redSum)
}
func (b *builder) VisitReduceMean(op *ops.ReduceMean) error {
	return b.reduce(op.SinceVersion(), 18, op.Axes, op.In.Axes, op.Keepdims, op.NoopWithEmptyAxes, op.In.Data, op.Out.Reduced, redMean)
}
func (b *builder) VisitReduceMax(op *ops.ReduceMax) error {
	return b.reduce(op.SinceVersion(), 18, op.Axes, op.In.Axes, op.Keepdims, op.NoopWithEmptyAxes, op.In.Data, op.Out.Reduced, redMax)
}
func (b *builder) VisitReduceMin(op *ops.ReduceMin) error {
	return b.reduce(op.SinceVersion(), 18, op.Axes, op.In.Axes, op.Keepdims, op.NoopWithEmptyAxes, op.In.Data, op.Out.Reduced, redMin)
}
func (b *builder) VisitReduceL1(op *ops.ReduceL1) error {
	return b.reduce(op.SinceVersion(), 18, op.Axes, op.In.Axes, op.Keepdims, op.NoopWithEmptyAxes, op.In.Data, op.Out.Reduced, redL1)
}
func (b *builder) VisitReduceL2(op *ops.ReduceL2) error {
	return b.reduce(op.SinceVersion(), 18, op.Axes, op.In.Axes, op.Keepdims, op.NoopWithEmptyAxes, op.In.Data, op.Out.Reduced, redL2)
}
func (b *builder) VisitReduceSumSquare(op *ops.ReduceSumSquare) error {
	return b.reduce(op.SinceVersion(), 18, op.Axes, op.In.Axes, op.Keepdims, op.NoopWithEmptyAxes, op.In.Data, op.Out.Reduced, redSSq)
}
func (b *builder) VisitReduceLogSum(op *ops.ReduceLogSum) error {
	return b.reduce(op.SinceVersion(), 18, op.Axes, op.In.Axes, op.Keepdims, op.NoopWithEmptyAxes, op.In.Data, op.Out.Reduced, redLS)
}
func (b *builder) VisitReduceLogSumExp(op *ops.ReduceLogSumExp) error {
	return b.reduce(op.SinceVersion(), 18, op.Axes, op.In.Axes, op.Keepdims, op.NoopWithEmptyAxes, op.In.Data, op.Out.Reduced, redLSE)
}

// reduceAxes reduces x of shape along the sorted axes with reduceAxis, one
// axis at a time, the last first so the others keep their index.
func reduceAxes(x *G.Node, shape []int, axes []int, red func(*G.Node, ...int) (*G.Node, error)) (*G.Node, error) {
	y, cur := x, slices.Clone(shape)
	var err error
	for i := len(axes) - 1; i >= 0; i-- {
		if y, cur, err = reduceAxis(y, cur, axes[i], red); err != nil {
			return nil, err
		}
	}
	return y, nil
}

// reduceAxis reduces x of shape along one axis, as a [outer, d, inner]
// tensor along its middle axis: Gorgonia's reductions give wrong results
// along some axes of tensors of rank 4 and more, but not in this form.
func reduceAxis(x *G.Node, shape []int, axis int, red func(*G.Node, ...int) (*G.Node, error)) (*G.Node, []int, error) {
	outer, d, inner := onnx.NumElements(shape[:axis]), shape[axis], onnx.NumElements(shape[axis+1:])
	m, err := reshape(x, tensor.Shape{outer, d, inner})
	if err != nil {
		return nil, nil, err
	}
	y, err := red(m, 1)
	if err != nil {
		return nil, nil, err
	}
	rest := append(slices.Clone(shape[:axis]), shape[axis+1:]...)
	if len(rest) == 0 {
		rest = []int{1}
	}
	if y, err = reshape(y, rest); err != nil {
		return nil, nil, err
	}
	return y, rest, nil
}
