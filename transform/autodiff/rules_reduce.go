package autodiff

import (
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Rules of the reductions. y = reduce(x) over some axes; g, the output's
// gradient, and y seen with the reduced axes kept (size 1) broadcast back
// over x:
//
//	Sum        g                    Mean       g / count
//	SumSquare  2x·g                 L1         sign(x)·g
//	L2         x·g / y (0 where y = 0)
//	LogSum     g / eʸ               LogSumExp  g·e^(x - y)
//	Prod       g·Π(the others)      Max, Min   g at the first extreme
//
// as the native backend computes them (backend/native/grad_reduce.go).
// Axes are an attribute (before 13 for ReduceSum, 18 for the others) or
// an input, which must be a value the probe saw. noop_with_empty_axes
// with no axes reduces over the empty set: Sum, Mean, Max, Min and Prod
// are then the identity, and the others their element-wise step (x², |x|,
// ln x), whose derivative the same formulas give.

func init() {
	register(reduceSumGrad, "ReduceSum")
	register(reduceMeanGrad, "ReduceMean")
	register(reduceExtremeGrad, "ReduceMax", "ReduceMin")
	register(reduceProdGrad, "ReduceProd")
	register(reduceSumSquareGrad, "ReduceSumSquare")
	register(reduceL1Grad, "ReduceL1")
	register(reduceL2Grad, "ReduceL2")
	register(reduceLogSumGrad, "ReduceLogSum")
	register(reduceLogSumExpGrad, "ReduceLogSumExp")
}

// reduceAxes returns the axes a Reduce* node reduces (normalised,
// ascending), whether it keeps them, and whether it reduces nothing (an
// empty axes list with noop_with_empty_axes). Axes given as an input must
// be a value the probe saw.
func (b *builder) reduceAxes(n *onnx.Node, attrAxes []int64, keep, noop int64) (axes []int64, keepdims, identity bool) {
	x := n.Inputs[0]
	rank := int64(len(b.shapeOf(x)))
	list := attrAxes
	if len(n.Inputs) > 1 && n.Inputs[1] != "" {
		v, ok := b.intsOf(n.Inputs[1])
		if !ok {
			return nil, false, false
		}
		list = v
	}
	if len(list) == 0 {
		if noop != 0 {
			return nil, keep != 0, true
		}
		for i := range rank {
			axes = append(axes, i)
		}
		return axes, keep != 0, false
	}
	seen := map[int64]bool{}
	for _, a := range list {
		if a < -rank || a >= rank {
			b.fail("%s axis %d is out of range for rank %d", n.OpType, a, rank)
			return nil, false, false
		}
		if a < 0 {
			a += rank
		}
		seen[a] = true
	}
	for i := range rank {
		if seen[i] {
			axes = append(axes, i)
		}
	}
	return axes, keep != 0, false
}

// reduceOf reads the axes of any Reduce* node: the reduced axes (none for
// a no-op over the empty set) and whether they are kept.
func (b *builder) reduceOf(n *onnx.Node) (axes []int64, keep, identity bool) {
	var attr []int64
	var k, noop int64
	switch op := n.Op.(type) {
	case *ops.ReduceSum:
		attr, k, noop = op.Axes, op.Keepdims, op.NoopWithEmptyAxes
	case *ops.ReduceMean:
		attr, k, noop = op.Axes, op.Keepdims, op.NoopWithEmptyAxes
	case *ops.ReduceMax:
		attr, k, noop = op.Axes, op.Keepdims, op.NoopWithEmptyAxes
	case *ops.ReduceMin:
		attr, k, noop = op.Axes, op.Keepdims, op.NoopWithEmptyAxes
	case *ops.ReduceProd:
		attr, k, noop = op.Axes, op.Keepdims, op.NoopWithEmptyAxes
	case *ops.ReduceSumSquare:
		attr, k, noop = op.Axes, op.Keepdims, op.NoopWithEmptyAxes
	case *ops.ReduceL1:
		attr, k, noop = op.Axes, op.Keepdims, op.NoopWithEmptyAxes
	case *ops.ReduceL2:
		attr, k, noop = op.Axes, op.Keepdims, op.NoopWithEmptyAxes
	case *ops.ReduceLogSum:
		attr, k, noop = op.Axes, op.Keepdims, op.NoopWithEmptyAxes
	case *ops.ReduceLogSumExp:
		attr, k, noop = op.Axes, op.Keepdims, op.NoopWithEmptyAxes
	default:
		b.fail("internal: %s is not a reduction", n.OpType)
		return nil, false, false
	}
	return b.reduceAxes(n, attr, k, noop)
}

// expandReduced gives g, the gradient of x reduced over axes, x's shape:
// the reduced axes put back (when not kept) and broadcast.
func (b *builder) expandReduced(g, x string, axes []int64, keep bool) string {
	k := b.reduceKeep(g, x, axes, keep)
	return b.like(b.elemExpand(k, x, b.keptShape(x, axes)), x)
}

// keptShape is x's shape with axes reduced to size 1.
func (b *builder) keptShape(x string, axes []int64) []int64 {
	s := append([]int64{}, b.shapeOf(x)...)
	for _, a := range axes {
		s[a] = 1
	}
	return s
}

// reduceKeep gives v, a value of x reduced over axes (its output or that
// output's gradient), the reduced axes as size-1 dims, so that it
// broadcasts against x; its info records that shape.
func (b *builder) reduceKeep(v, x string, axes []int64, keep bool) string {
	if keep || len(axes) == 0 {
		return v // already so
	}
	u := b.unsqueeze(v, axes...)
	if u != "" {
		b.info[u] = Info{Type: b.typeOf(x), Shape: b.keptShape(x, axes)}
	}
	return u
}

// reducedCount is the number of elements each output of x reduced over
// axes sums, as a scalar of x's type.
func (b *builder) reducedCount(x string, axes []int64) string {
	s := b.shapeOf(x)
	count := int64(1)
	for _, a := range axes {
		if s[a] < 0 {
			// A free dim: count at run time.
			sz := b.op("ReduceProd", []string{b.gatherInts(b.shape(x), axes)}, attrInt("keepdims", 0))
			return b.cast(sz, b.typeOf(x))
		}
		count *= s[a]
	}
	return b.scalarLike(float64(count), x)
}

// gatherInts picks elements of a 1-D int64 value.
func (b *builder) gatherInts(v string, idx []int64) string {
	return b.op("Gather", []string{v, b.ints(idx...)})
}

// reduceSumGrad: dx = g broadcast over the reduced axes.
func reduceSumGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	axes, keep, identity := b.reduceOf(n)
	if identity {
		return []string{dy[0]}
	}
	return []string{b.expandReduced(dy[0], n.Inputs[0], axes, keep)}
}

// reduceMeanGrad: dx = g/count broadcast (divided before broadcasting, on
// the smaller tensor).
func reduceMeanGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	axes, keep, identity := b.reduceOf(n)
	if identity {
		return []string{dy[0]}
	}
	x, g := n.Inputs[0], dy[0]
	scaled := b.like(b.elemBin("Div", g, b.reducedCount(x, axes)), g)
	return []string{b.expandReduced(scaled, x, axes, keep)}
}

// reduceExtremeGrad: ReduceMax and ReduceMin pass g to one element of
// each reduced group, the first (in row-major order over the reduced
// axes) equal to the extreme, as the native backend does: the position
// ArgMax/ArgMin finds. Several axes are first moved to the end and
// flattened into one.
func reduceExtremeGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	axes, keep, identity := b.reduceOf(n)
	if identity {
		return []string{dy[0]}
	}
	if !b.elemRequire(7, n.OpType, "broadcasting against the reduced shape") {
		return nil
	}
	x, g := n.Inputs[0], dy[0]
	dt, xs := b.typeOf(x), b.shapeOf(x)
	rank := len(xs)
	arg := "ArgMax"
	if n.OpType == "ReduceMin" {
		arg = "ArgMin"
	}
	if len(axes) == 1 {
		a := axes[0]
		idx := b.op(arg, []string{x}, attrInt("axis", a), attrInt("keepdims", 1))
		first := b.op("Equal", []string{b.elemArange(xs[a], rank, int(a), x, int(a)), idx})
		return []string{b.elemMask(first, b.reduceKeep(g, x, axes, keep), dt)}
	}
	reduced := map[int64]bool{}
	for _, a := range axes {
		reduced[a] = true
	}
	var perm, kept []int64
	for i := range int64(rank) {
		if !reduced[i] {
			perm = append(perm, i)
			kept = append(kept, i)
		}
	}
	perm = append(perm, axes...)
	nk := len(kept)
	// x as [kept dims..., R], R the reduced elements of a group.
	flat := make([]int64, nk+1)
	size, dynamic := int64(1), 0
	for _, a := range axes {
		if xs[a] < 0 {
			dynamic++
		}
		size *= xs[a]
	}
	if dynamic > 0 {
		size = -1
	}
	flat[nk] = -1
	xT := b.transpose(x, perm...)
	xF := b.reshape(xT, flat...)
	idx := b.op(arg, []string{xF}, attrInt("axis", int64(nk)), attrInt("keepdims", 1))
	first := b.op("Equal", []string{b.elemArange(size, nk+1, nk, xF, nk), idx})
	// g as [kept dims..., 1].
	gF := g
	if keep {
		gF = b.squeeze(gF, axes...)
	}
	gF = b.unsqueeze(gF, int64(nk))
	dF := b.elemMask(first, gF, dt)
	// Back to xᵀ's shape (kept dims copied, reduced dims static unless
	// more than one is free), then to x's.
	shapeT := make([]int64, rank)
	for i, p := range perm {
		shapeT[i] = xs[p]
		if i < nk {
			shapeT[i] = 0
		}
	}
	var dT string
	if dynamic > 1 {
		dT = b.op("Reshape", []string{dF, b.shape(xT)})
	} else {
		dT = b.reshape(dF, shapeT...)
	}
	inv := make([]int64, rank)
	for i, p := range perm {
		inv[p] = int64(i)
	}
	return []string{b.transpose(dT, inv...)}
}

// reduceProdGrad: dx = g·Π(the other elements of the group), exact when
// the group holds zeros: with z the number of zeros of the group and P
// the product of its non-zero elements, that is P/x where z = 0, P at the
// one zero where z = 1, and 0 elsewhere. As P/x' with x' = x + [x = 0]
// (x itself, or 1 at a zero), kept where [x = 0] equals z.
func reduceProdGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	axes, keep, identity := b.reduceOf(n)
	if identity {
		return []string{dy[0]}
	}
	if !b.elemRequire(7, n.OpType, "broadcasting against the reduced shape") {
		return nil
	}
	x, g := n.Inputs[0], dy[0]
	dt := b.typeOf(x)
	isZero := b.cast(b.elemEqual(x, b.scalar(0, dt)), dt)
	nonZero := b.add(x, isZero)
	p := b.elemReduce("ReduceProd", nonZero, axes, true)
	z := b.reduceSum(isZero, axes, true)
	scaled := b.mul(b.reduceKeep(g, x, axes, keep), p)
	return []string{b.elemMask(b.elemEqual(isZero, z), b.div(scaled, nonZero), dt)}
}

// reduceSumSquareGrad: dx = 2x·g.
func reduceSumSquareGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	axes, keep, _ := b.reduceOf(n)
	if !b.elemRequire(7, n.OpType, "broadcasting against the reduced shape") {
		return nil
	}
	x := n.Inputs[0]
	gK := b.reduceKeep(dy[0], x, axes, keep)
	return []string{b.mul(x, b.elemScale(gK, 2, b.typeOf(x)))}
}

// reduceL1Grad: dx = sign(x)·g (0 at 0).
func reduceL1Grad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	axes, keep, _ := b.reduceOf(n)
	if !b.elemRequire(7, n.OpType, "broadcasting against the reduced shape") {
		return nil
	}
	x := n.Inputs[0]
	dt := b.typeOf(x)
	gK := b.reduceKeep(dy[0], x, axes, keep)
	var sign string
	if b.opset >= 9 {
		sign = b.op("Sign", []string{x})
	} else {
		sign = b.sub(b.cast(b.elemS("Greater", x, 0, dt), dt), b.cast(b.elemS("Less", x, 0, dt), dt))
	}
	return []string{b.mul(sign, gK)}
}

// reduceL2Grad: dx = x·g/y, 0 where y = 0 (then every x of the group is
// 0, and y + [y ≤ 0] = 1 makes the quotient 0).
func reduceL2Grad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	axes, keep, _ := b.reduceOf(n)
	if !b.elemRequire(7, n.OpType, "broadcasting against the reduced shape") {
		return nil
	}
	x := n.Inputs[0]
	dt := b.typeOf(x)
	gK := b.reduceKeep(dy[0], x, axes, keep)
	yK := b.reduceKeep(n.Outputs[0], x, axes, keep)
	safe := b.add(yK, b.cast(b.op("Not", []string{b.elemS("Greater", yK, 0, dt)}), dt))
	return []string{b.mul(x, b.div(gK, safe))}
}

// reduceLogSumGrad: y = ln Σx; dx = g/Σx = g/eʸ.
func reduceLogSumGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	axes, keep, _ := b.reduceOf(n)
	x := n.Inputs[0]
	gK := b.reduceKeep(dy[0], x, axes, keep)
	yK := b.reduceKeep(n.Outputs[0], x, axes, keep)
	d := b.div(gK, b.op("Exp", []string{yK}))
	return []string{b.elemExpand(d, x, b.keptShape(x, axes))}
}

// reduceLogSumExpGrad: y = ln Σeˣ; dx = g·e^(x - y).
func reduceLogSumExpGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	axes, keep, _ := b.reduceOf(n)
	if !b.elemRequire(7, n.OpType, "broadcasting against the reduced shape") {
		return nil
	}
	x := n.Inputs[0]
	gK := b.reduceKeep(dy[0], x, axes, keep)
	yK := b.reduceKeep(n.Outputs[0], x, axes, keep)
	return []string{b.mul(gK, b.op("Exp", []string{b.sub(x, yK)}))}
}
