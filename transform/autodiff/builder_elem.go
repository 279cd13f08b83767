package autodiff

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Node-emitting helpers of the element-wise, reduction, softmax and loss
// rules (rules_unary.go, rules_binary.go, rules_variadic.go,
// rules_softmax.go, rules_reduce.go, rules_loss.go). They hide the forms
// old opsets force: before opset 7 a binary operator broadcasts only with
// broadcast=1 (its second operand to the first), Where exists from 9, and
// Equal compares floats from 11.

// elemBin emits op(a, c) where c is a scalar or broadcasts to a, which has
// the result's shape.
func (b *builder) elemBin(op, a, c string) string {
	if b.opset < 7 {
		return b.op(op, []string{a, c}, attrInt("broadcast", 1))
	}
	return b.op(op, []string{a, c})
}

// elemS emits op(x, v) for a scalar constant v of type dt.
func (b *builder) elemS(op, x string, v float64, dt onnx.DataType) string {
	return b.elemBin(op, x, b.scalar(v, dt))
}

// elemScale is x·v (x itself for v = 1).
func (b *builder) elemScale(x string, v float64, dt onnx.DataType) string {
	if v == 1 {
		return x
	}
	return b.elemS("Mul", x, v, dt)
}

// elemMask is g where cond holds and 0 elsewhere (even where g is not
// finite, from opset 9).
func (b *builder) elemMask(cond, g string, dt onnx.DataType) string {
	if b.opset >= 9 {
		return b.op("Where", []string{cond, g, b.scalar(0, dt)})
	}
	return b.elemBin("Mul", g, b.cast(cond, dt))
}

// elemWhere is a where cond holds and c elsewhere; cond has the result's
// shape, a and c broadcast to it. Before opset 9 it is a·[cond] +
// c·[not cond], the same for finite a and c.
func (b *builder) elemWhere(cond, a, c string, dt onnx.DataType) string {
	if b.opset >= 9 {
		return b.op("Where", []string{cond, a, c})
	}
	m := b.cast(cond, dt)
	nm := b.cast(b.op("Not", []string{cond}), dt)
	return b.add(b.elemBin("Mul", m, a), b.elemBin("Mul", nm, c))
}

// elemEqual compares floating-point a and c (c broadcasting to a). Before
// opset 11 Equal takes integers only: not (a < c or a > c), which differs
// only for NaN.
func (b *builder) elemEqual(a, c string) string {
	if b.opset >= 11 {
		return b.elemBin("Equal", a, c)
	}
	return b.op("Not", []string{b.op("Or", []string{b.elemBin("Less", a, c), b.elemBin("Greater", a, c)})})
}

// elemRequire fails unless the opset is at least v: what the rule for op
// emits needs it (numpy broadcasting from 7, Expand from 8, Where from 9).
func (b *builder) elemRequire(v int64, op, why string) bool {
	if b.opset < v {
		b.fail("the gradient of %s needs ai.onnx opset %d or later (%s); the model imports %d", op, v, why, b.opset)
		return false
	}
	return true
}

// elemConst is a constant tensor, made once per value.
func (b *builder) elemConst(t *onnx.Tensor) string {
	key := fmt.Sprintf("elem/%v/%v/%v", t.Type, t.Shape, t.Data)
	if name, ok := b.consts[key]; ok {
		return name
	}
	name := b.op("Constant", nil, attrTensor("value", t))
	if name != "" {
		b.consts[key] = name
		shape := make([]int64, len(t.Shape))
		for i, d := range t.Shape {
			shape[i] = int64(d)
		}
		b.info[name] = Info{Type: t.Type, Shape: shape}
	}
	return name
}

// elemArange is the int64 sequence 0..n-1 laid along axis of a tensor of
// the given rank (every other dim 1), to compare with indices. n < 0 (a
// dim free at run time) takes the length from dim dim of src's shape.
func (b *builder) elemArange(n int64, rank, axis int, src string, dim int) string {
	shape := make([]int, rank)
	for i := range shape {
		shape[i] = 1
	}
	if n >= 0 {
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = int64(i)
		}
		shape[axis] = int(n)
		return b.elemConst(onnx.FromSlice(vals, shape...))
	}
	if !b.elemRequire(11, "an operator that indexes a dim free at run time", "Range") {
		return ""
	}
	limit := b.op("Gather", []string{b.shape(src), b.elemConst(onnx.Scalar(int64(dim)))})
	r := b.op("Range", []string{b.elemConst(onnx.Scalar(int64(0))), limit, b.elemConst(onnx.Scalar(int64(1)))})
	target := make([]int64, rank)
	for i := range target {
		target[i] = 1
	}
	target[axis] = -1
	return b.reshape(r, target...)
}

// elemReduce emits a reduction op (not ReduceSum, whose axes become an
// input at 13) over axes: an attribute before opset 18, an input after.
func (b *builder) elemReduce(op, x string, axes []int64, keep bool) string {
	k := int64(0)
	if keep {
		k = 1
	}
	if b.opset < 18 {
		return b.op(op, []string{x}, attrInts("axes", axes...), attrInt("keepdims", k))
	}
	return b.op(op, []string{x, b.ints(axes...)}, attrInt("keepdims", k))
}

// elemExpand broadcasts v to x's shape: Expand from opset 8, Tile for a
// static shape before.
func (b *builder) elemExpand(v, x string, vShape []int64) string {
	if b.opset >= 8 {
		return b.op("Expand", []string{v, b.shapeValue(x)})
	}
	xs := b.shapeOf(x)
	if b.opset < 6 || !b.static(x) || len(vShape) != len(xs) {
		b.fail("broadcasting a gradient to %v needs ai.onnx opset 8 or later (Expand); the model imports %d", xs, b.opset)
		return ""
	}
	reps := make([]int64, len(xs))
	for i, d := range xs {
		reps[i] = 1
		if vShape[i] == 1 {
			reps[i] = d
		}
	}
	return b.op("Tile", []string{v, b.ints(reps...)})
}

// elemSumTo sums g (of shape gShape) over the dims along which a value of
// shape aligned (gShape's rank or less, aligned to its trailing dims) was
// broadcast, and gives the result target's shape. aligned differs from
// target's own shape for the legacy broadcasts that align an operand at
// an axis.
func (b *builder) elemSumTo(g string, gShape, aligned []int64, target string) string {
	if g == "" || b.err != nil {
		return ""
	}
	lead := len(gShape) - len(aligned)
	if lead < 0 {
		b.fail("internal: gradient of rank %d for %q of rank %d", len(gShape), target, len(aligned))
		return ""
	}
	var axes []int64
	for i := range lead {
		axes = append(axes, int64(i))
	}
	for i, d := range aligned {
		if d == 1 && gShape[lead+i] != 1 {
			axes = append(axes, int64(lead+i))
		}
	}
	r := b.reduceSum(g, axes, true)
	kept := append([]int64{}, gShape...)
	for _, a := range axes {
		kept[a] = 1
	}
	b.info[r] = Info{Type: b.typeOf(target), Shape: kept}
	return b.reshapeLike(r, target)
}

// elemDifferentiable reports whether the schema of n's version lets a
// gradient reach input i (unknown counts as yes), as the native backend
// decides which inputs to differentiate.
func elemDifferentiable(n *onnx.Node, i int) bool {
	op, ok := n.Op.(ops.Op)
	if !ok {
		return true
	}
	s := ops.Schema(op.Domain(), op.OpType(), op.SinceVersion())
	if s == nil {
		return true
	}
	p := s.InputParam(i)
	return p == nil || p.Differentiation != ops.NonDifferentiable
}

// elemNext is the float of type dt next to v towards dir (±Inf): a bound
// that makes a strict comparison inclusive.
func elemNext(v float64, dt onnx.DataType, dir float64) float64 {
	if dt == onnx.Float {
		return float64(math.Nextafter32(float32(v), float32(dir)))
	}
	return math.Nextafter(v, dir)
}
