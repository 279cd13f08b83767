package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rules of the reductions, CumSum and Einsum.
//
// A reduction's output, seen with keepdims, broadcasts back over the
// input, so every rule walks the input together with the output (and its
// gradient) read with broadcast strides, and sets each input element's
// gradient from its own value and its output's:
//
//	Sum          dy                 L1         dy·sign(x)
//	Mean         dy / count         L2         dy·x / y (0 where y = 0)
//	SumSquare    2x·dy              LogSum     dy / exp(y)
//	LogSumExp    dy·exp(x - y)      Prod       dy·Π(others)
//	Max, Min     dy to the first element equal to y, 0 elsewhere
//
// Prod counts the zeros of each group and multiplies its non-zero
// elements first, so that inputs with zeros get the exact product of the
// others.

type gradReduceKernel struct {
	op        reduceOp
	keepdims  bool
	noopEmpty bool
	axesAttr  []int64
	x, axes   int
	y         int
	scratch   gradScratch
	keep      []int     // the output shape with keepdims
	claimed   []bool    // Max/Min: the group's extreme has been found
	zeros     []int     // Prod: zeros per group
	nonZero   []float64 // Prod: product of the non-zero elements per group
}

func (gb *gradBuilder) reduceGradBuild(op reduceOp, since, axesInputFrom int, data, axesName, reduced string, axesAttr []int64, keepdims, noop int64) error {
	k := &gradReduceKernel{op: op, keepdims: keepdims == 1, x: gb.slot(data), y: gb.slot(reduced), axes: -1}
	if since >= axesInputFrom {
		k.noopEmpty = noop == 1
		k.axes = gb.slot(axesName)
	} else {
		k.axesAttr = slices.Clone(axesAttr)
	}
	return gb.set(k.run)
}

func (k *gradReduceKernel) run(slots []onnx.Value, g *gradState) error {
	gy, xt, ok, err := gradShapeIO(slots, g, k.x, k.y)
	if !ok {
		return err
	}
	axes := k.axesAttr
	if k.axes >= 0 {
		at, ok := slots[k.axes].(*onnx.Tensor)
		if !ok || at == nil || at.Type != onnx.Int64 {
			return fmt.Errorf("axes input must be an int64 tensor, is %s", onnx.DescribeValue(slots[k.axes]))
		}
		axes = at.Int64s()
	}
	rk := reduceKernel{op: k.op, keepdims: k.keepdims, noopEmpty: k.noopEmpty}
	norm, identity, err := rk.resolveAxes(axes, len(xt.Shape))
	if err != nil {
		return err
	}
	if identity {
		return g.add(k.x, gy)
	}
	k.keep = append(k.keep[:0], xt.Shape...)
	count := 1
	for _, a := range norm {
		count *= xt.Shape[a]
		k.keep[a] = 1
	}
	outLen := onnx.NumElements(k.keep)
	if gy.Len() != outLen {
		return fmt.Errorf("gradient of shape %v for %v reduced over %v", gy.Shape, xt.Shape, norm)
	}
	yt, err := floatTensor(slots[k.y], "output")
	if err != nil {
		return err
	}
	gx := k.scratch.buf.tensor(xt.Type, xt.Shape)
	if xt.Len() == 0 {
		return g.add(k.x, gx)
	}
	switch k.op {
	case redMax, redMin:
		k.claimed = withLen(k.claimed, outLen)
		clear(k.claimed)
	case redProd:
		k.zeros = withLen(k.zeros, outLen)
		k.nonZero = withLen(k.nonZero, outLen)
	}
	w := newStridedWalk(xt.Shape, rowMajorStrides(xt.Shape), broadcastStrides(k.keep, xt.Shape))
	switch d := gx.Data.(type) {
	case []float32:
		gradReduceWalk(k, w, count, d, xt.Data.([]float32), gy.Data.([]float32), yt.Data.([]float32))
	case []float64:
		gradReduceWalk(k, w, count, d, xt.Data.([]float64), gy.Data.([]float64), yt.Data.([]float64))
	}
	return g.add(k.x, gx)
}

// gradReduceWalk fills gx; x and gx are walked with operand 0's offsets,
// y and gy with operand 1's.
func gradReduceWalk[T floatElem](k *gradReduceKernel, w stridedWalk, count int, gx, x, gy, y []T) {
	n, xs, ys := w.rowLen(), w.rowStride(0), w.rowStride(1)
	op := k.op
	if op == redProd {
		clear(k.zeros)
		for i := range k.nonZero {
			k.nonZero[i] = 1
		}
		w.forEachRow(func(_ int, off walkOffsets) {
			for i := range n {
				v, o := x[off[0]+i*xs], off[1]+i*ys
				if v == 0 {
					k.zeros[o]++
				} else {
					k.nonZero[o] *= float64(v)
				}
			}
		})
	}
	inv := 1 / T(count)
	w.forEachRow(func(_ int, off walkOffsets) {
		xo, yo := off[0], off[1]
		switch op {
		case redSum:
			for i := range n {
				gx[xo+i*xs] = gy[yo+i*ys]
			}
		case redMean:
			for i := range n {
				gx[xo+i*xs] = gy[yo+i*ys] * inv
			}
		case redSumSquare:
			for i := range n {
				gx[xo+i*xs] = 2 * x[xo+i*xs] * gy[yo+i*ys]
			}
		case redL1:
			for i := range n {
				v, d := x[xo+i*xs], gy[yo+i*ys]
				switch {
				case v > 0:
					gx[xo+i*xs] = d
				case v < 0:
					gx[xo+i*xs] = -d
				default:
					gx[xo+i*xs] = 0
				}
			}
		case redL2:
			for i := range n {
				if r := y[yo+i*ys]; r != 0 {
					gx[xo+i*xs] = x[xo+i*xs] / r * gy[yo+i*ys]
				} else {
					gx[xo+i*xs] = 0
				}
			}
		case redLogSum:
			for i := range n {
				gx[xo+i*xs] = gy[yo+i*ys] / T(math.Exp(float64(y[yo+i*ys])))
			}
		case redLogSumExp:
			for i := range n {
				gx[xo+i*xs] = gy[yo+i*ys] * T(math.Exp(float64(x[xo+i*xs]-y[yo+i*ys])))
			}
		case redMax, redMin:
			for i := range n {
				v, o := x[xo+i*xs], yo+i*ys
				e := y[o]
				if !k.claimed[o] && (v == e || v != v && e != e) {
					k.claimed[o] = true
					gx[xo+i*xs] = gy[o]
				} else {
					gx[xo+i*xs] = 0
				}
			}
		case redProd:
			for i := range n {
				v, o := x[xo+i*xs], yo+i*ys
				var p float64
				switch z := k.zeros[o]; {
				case z == 0:
					p = k.nonZero[o] / float64(v)
				case z == 1 && v == 0:
					p = k.nonZero[o]
				}
				gx[xo+i*xs] = gy[o] * T(p)
			}
		}
	})
}

func (gb *gradBuilder) VisitReduceSum(op *ops.ReduceSum) error {
	return gb.reduceGradBuild(redSum, op.SinceVersion(), 13, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

func (gb *gradBuilder) VisitReduceMean(op *ops.ReduceMean) error {
	return gb.reduceGradBuild(redMean, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

func (gb *gradBuilder) VisitReduceMax(op *ops.ReduceMax) error {
	return gb.reduceGradBuild(redMax, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

func (gb *gradBuilder) VisitReduceMin(op *ops.ReduceMin) error {
	return gb.reduceGradBuild(redMin, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

func (gb *gradBuilder) VisitReduceProd(op *ops.ReduceProd) error {
	return gb.reduceGradBuild(redProd, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

func (gb *gradBuilder) VisitReduceL1(op *ops.ReduceL1) error {
	return gb.reduceGradBuild(redL1, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

func (gb *gradBuilder) VisitReduceL2(op *ops.ReduceL2) error {
	return gb.reduceGradBuild(redL2, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

func (gb *gradBuilder) VisitReduceLogSum(op *ops.ReduceLogSum) error {
	return gb.reduceGradBuild(redLogSum, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

func (gb *gradBuilder) VisitReduceLogSumExp(op *ops.ReduceLogSumExp) error {
	return gb.reduceGradBuild(redLogSumExp, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

func (gb *gradBuilder) VisitReduceSumSquare(op *ops.ReduceSumSquare) error {
	return gb.reduceGradBuild(redSumSquare, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

// VisitCumSum: the gradient of a running sum is the running sum of the
// gradient in the other direction (exclusive stays exclusive).
func (gb *gradBuilder) VisitCumSum(op *ops.CumSum) error {
	x, ax, y := gb.slot(op.In.X), gb.slot(op.In.Axis), gb.slot(op.Out.Y)
	exclusive, reverse := op.Exclusive == 1, op.Reverse == 1
	var scratch gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		outer, n, inner, err := cumGradLines(slots[ax], xt.Shape)
		if err != nil {
			return err
		}
		gx := scratch.buf.tensor(xt.Type, xt.Shape)
		switch d := gx.Data.(type) {
		case []float32:
			cumScan(d, gy.Data.([]float32), outer, n, inner, exclusive, !reverse, false)
		case []float64:
			cumScan(d, gy.Data.([]float64), outer, n, inner, exclusive, !reverse, false)
		}
		return g.add(x, gx)
	})
}

// VisitCumProd: along each line (in scan order), with P_j the product of
// the elements before j, the inclusive scan's gradient is
// dx_j = P_j · S_j, S_j = g_j + x_{j+1} S_{j+1}, and the exclusive one's
// dx_j = P_j · T_j, T_j = g_{j+1} + x_{j+1} T_{j+1}: no division, so exact
// when the input holds zeros. The axis gets none.
func (gb *gradBuilder) VisitCumProd(op *ops.CumProd) error {
	x, ax, y := gb.slot(op.In.X), gb.slot(op.In.Axis), gb.slot(op.Out.Y)
	exclusive, reverse := op.Exclusive == 1, op.Reverse == 1
	var scratch gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		if !sameShape(xt.Shape, gy.Shape) {
			return fmt.Errorf("gradient of shape %v for an input of %v", gy.Shape, xt.Shape)
		}
		outer, n, inner, err := cumGradLines(slots[ax], xt.Shape)
		if err != nil {
			return err
		}
		gx := scratch.buf.tensor(xt.Type, xt.Shape)
		switch d := gx.Data.(type) {
		case []float32:
			gradCumProd(d, gy.Data.([]float32), xt.Data.([]float32), outer, n, inner, exclusive, reverse)
		case []float64:
			gradCumProd(d, gy.Data.([]float64), xt.Data.([]float64), outer, n, inner, exclusive, reverse)
		}
		return g.add(x, gx)
	})
}

// gradCumProd writes CumProd's input gradient into dx, x and gy seen as
// [outer, n, inner] lines.
func gradCumProd[T floatElem](dx, gy, x []T, outer, n, inner int, exclusive, reverse bool) {
	for o := range outer {
		for i := range inner {
			if n == 0 {
				continue
			}
			// The t-th element in scan order is at first + t*step.
			first, step := (o*n)*inner+i, inner
			if reverse {
				first, step = (o*n+n-1)*inner+i, -inner
			}
			// Backward: dx holds S_j (inclusive) or T_j (exclusive).
			last := first + (n-1)*step
			if exclusive {
				dx[last] = 0
			} else {
				dx[last] = gy[last]
			}
			for t := n - 2; t >= 0; t-- {
				j := first + t*step
				next := j + step
				if exclusive {
					dx[j] = gy[next] + x[next]*dx[next]
				} else {
					dx[j] = gy[j] + x[next]*dx[next]
				}
			}
			var p T = 1
			for t := range n {
				j := first + t*step
				dx[j] *= p
				p *= x[j]
			}
		}
	}
}

// cumGradLines reads the axis input of CumSum or CumProd (a one-element
// int32 or int64 tensor) and returns the lines the scan runs along: x's
// shape seen as [outer, n, inner] around that axis.
func cumGradLines(axis onnx.Value, shape []int) (outer, n, inner int, err error) {
	at, ok := axis.(*onnx.Tensor)
	if !ok || at == nil || at.Len() != 1 {
		return 0, 0, 0, fmt.Errorf("axis must be a scalar tensor, is %s", onnx.DescribeValue(axis))
	}
	var a64 int64
	switch d := at.Data.(type) {
	case []int64:
		a64 = d[0]
	case []int32:
		a64 = int64(d[0])
	default:
		return 0, 0, 0, fmt.Errorf("axis must be int32 or int64, got %v", at.Type)
	}
	if len(shape) == 0 {
		return 0, 0, 0, fmt.Errorf("input must have rank 1 or more")
	}
	a, err := normalizeAxis(a64, len(shape))
	if err != nil {
		return 0, 0, 0, err
	}
	return onnx.NumElements(shape[:a]), shape[a], onnx.NumElements(shape[a+1:]), nil
}

// VisitEinsum: the gradient of operand i is the einsum of the output's
// gradient with the other operands, producing operand i's distinct labels;
// it is then added into operand i through its strides, which sums the
// dimensions it was broadcast along and puts a repeated label's gradient
// on the diagonal.
func (gb *gradBuilder) VisitEinsum(op *ops.Einsum) error {
	eq, err := parseEinsum(op.Equation)
	if err != nil {
		return err
	}
	if len(eq.inputs) != len(op.In.Inputs) {
		return fmt.Errorf("einsum equation %q has %d input terms for %d inputs", op.Equation, len(eq.inputs), len(op.In.Inputs))
	}
	xs := make([]int, len(op.In.Inputs))
	for i, n := range op.In.Inputs {
		xs[i] = gb.slot(n)
	}
	y := gb.slot(op.Out.Output)
	threads := gb.e.threads
	scratch := make([]gradScratch, len(xs))
	ts := make([]*onnx.Tensor, len(xs))
	shapes := make([][]int, len(xs))
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy := g.of(y)
		if gy == nil {
			return nil
		}
		for i, x := range xs {
			t, err := floatTensor(slots[x], fmt.Sprintf("einsum input %d", i))
			if err != nil {
				return err
			}
			if t.Type != gy.Type {
				return fmt.Errorf("einsum input %d has type %v, the gradient %v", i, t.Type, gy.Type)
			}
			ts[i], shapes[i] = t, t.Shape
		}
		labels, out, sizes, err := eq.resolve(shapes)
		if err != nil {
			return err
		}
		for i, x := range xs {
			if !g.wants(x) {
				continue
			}
			gx := scratch[i].zeros(ts[i].Type, ts[i].Shape)
			switch d := gx.Data.(type) {
			case []float32:
				gradEinsumOperand(d, gy.Data.([]float32), ts, i, labels, out, sizes, threads)
			case []float64:
				gradEinsumOperand(d, gy.Data.([]float64), ts, i, labels, out, sizes, threads)
			}
			if err := g.add(x, gx); err != nil {
				return err
			}
		}
		return nil
	})
}

// gradEinsumOperand adds the gradient of operand i into gx.
func gradEinsumOperand[T floatElem](gx, gy []T, ts []*onnx.Tensor, i int, labels [][]int, out []int, sizes map[int]int, threads int) {
	outShape := make([]int, len(out))
	for d, l := range out {
		outShape[d] = sizes[l]
	}
	operands := []einsumOperand[T]{{data: gy, shape: outShape, labels: out}}
	for j, t := range ts {
		if j != i {
			operands = append(operands, einsumOperand[T]{data: t.Data.([]T), shape: t.Shape, labels: labels[j]})
		}
	}
	var target []int
	for _, l := range labels[i] {
		if !slices.Contains(target, l) {
			target = append(target, l)
		}
	}
	res := einsumRun(operands, target, sizes, threads)
	// Operand i's stride per target label: summed over repeats (the
	// diagonal), 0 where the operand was broadcast.
	shape := ts[i].Shape
	rm := rowMajorStrides(shape)
	strides := make([]int, len(target))
	for d, l := range labels[i] {
		if shape[d] == 1 && sizes[l] != 1 {
			continue
		}
		strides[slices.Index(target, l)] += rm[d]
	}
	gradStridedAdd(gx, stridedView{0, strides}, res.data, stridedView{0, rowMajorStrides(res.shape)}, res.shape)
}
