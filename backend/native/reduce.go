package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// The ten Reduce* operators share one engine. A reducePlan describes, for
// one input shape and set of axes, how to walk the input: dimensions of
// size 1 are dropped and neighbouring dimensions that are both reduced or
// both kept are merged, so the input becomes alternating groups. The
// innermost group is walked as a contiguous row; the others with
// odometers. When the innermost group is kept, each output row of inner
// elements accumulates whole input rows (vector folds); when it is reduced,
// each output element folds contiguous input rows (scalar folds).
//
// Accumulation is in float64 for floating-point inputs (float16 and
// bfloat16 widened to float32 first) and for the operators that end in a
// transcendental function, and in int64/uint64 for the other integer
// reductions, so integer sums and products are exact (wrapping as the
// output type does).

// reduceOp is one of the Reduce* operators.
type reduceOp int

const (
	redSum reduceOp = iota
	redMean
	redMax
	redMin
	redProd
	redL1
	redL2
	redLogSum
	redLogSumExp
	redSumSquare
)

func (op reduceOp) String() string {
	return [...]string{"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
		"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}[op]
}

// reduceFold is the per-element step of a reduction.
type reduceFold int

const (
	foldAdd reduceFold = iota
	foldAddAbs
	foldAddSquare
	foldMul
	foldMax
	foldMin
	foldAddExp // sum of exp(x - shift), the second pass of LogSumExp
)

func (op reduceOp) fold() reduceFold {
	switch op {
	case redL1:
		return foldAddAbs
	case redL2, redSumSquare:
		return foldAddSquare
	case redProd:
		return foldMul
	case redMax, redLogSumExp: // LogSumExp's first pass finds the maximum
		return foldMax
	case redMin:
		return foldMin
	}
	return foldAdd
}

// elementwiseIdentity reports whether op over an empty set of axes gives
// its input back; the others (L1, L2, LogSum, LogSumExp, SumSquare) still
// apply their element-wise steps: ReduceLogSum gives log(x), ReduceL2 |x|.
// https://onnx.ai/onnx/operators/onnx__ReduceLogSum.html (noop_with_empty_axes)
func (op reduceOp) elementwiseIdentity() bool {
	switch op {
	case redSum, redMean, redMax, redMin, redProd:
		return true
	}
	return false
}

// floatAccumulated reports whether op accumulates in float64 even for
// integer inputs (its result goes through sqrt, log or exp).
func (op reduceOp) floatAccumulated() bool {
	return op == redL2 || op == redLogSum || op == redLogSumExp
}

// reducePlan is the walk for one input shape and axis set.
type reducePlan struct {
	outShape []int
	outLen   int
	count    int // input elements per output element
	// innerKept tells whether the innermost group (of inner contiguous
	// elements) is kept (vector folds) or reduced (scalar folds).
	innerKept bool
	inner     int
	// keptDims/keptStrides: the kept groups other than the innermost, as
	// an odometer over output rows (innerKept) or output elements.
	keptDims, keptStrides []int
	// redDims/redStrides: the reduced groups other than the innermost.
	redDims, redStrides []int
}

// newReducePlan plans reducing shape over the (normalized, distinct) axes.
func newReducePlan(shape []int, axes []int, keepdims bool) *reducePlan {
	reduced := make([]bool, len(shape))
	for _, a := range axes {
		reduced[a] = true
	}
	p := &reducePlan{outLen: 1, count: 1, outShape: []int{}}
	for i, d := range shape {
		if reduced[i] {
			p.count *= d
			if keepdims {
				p.outShape = append(p.outShape, 1)
			}
		} else {
			p.outLen *= d
			p.outShape = append(p.outShape, d)
		}
	}
	if p.outLen == 0 || p.count == 0 {
		return p // nothing to walk
	}
	type group struct {
		size, stride int
		reduced      bool
	}
	var groups []group
	strides := rowMajorStrides(shape)
	for i, d := range shape {
		if d == 1 {
			continue
		}
		if n := len(groups); n > 0 && groups[n-1].reduced == reduced[i] {
			groups[n-1].size *= d
			groups[n-1].stride = strides[i]
			continue
		}
		groups = append(groups, group{d, strides[i], reduced[i]})
	}
	if len(groups) == 0 {
		p.innerKept, p.inner = true, 1
		return p
	}
	last := groups[len(groups)-1]
	p.innerKept, p.inner = !last.reduced, last.size
	for _, g := range groups[:len(groups)-1] {
		if g.reduced {
			p.redDims, p.redStrides = append(p.redDims, g.size), append(p.redStrides, g.stride)
		} else {
			p.keptDims, p.keptStrides = append(p.keptDims, g.size), append(p.keptStrides, g.stride)
		}
	}
	return p
}

// reduceOffsetOf maps a flat index over dims to an offset with the strides.
func reduceOffsetOf(idx int, dims, strides []int) int {
	off := 0
	for d := len(dims) - 1; d >= 0; d-- {
		off += (idx % dims[d]) * strides[d]
		idx /= dims[d]
	}
	return off
}

// reduceForEachOffset calls fn with the offset of every position of an odometer
// over dims with the given strides, in row-major order (once, with 0, for
// no dims).
func reduceForEachOffset(dims, strides []int, fn func(off int)) {
	if len(dims) == 0 {
		fn(0)
		return
	}
	if len(dims) == 1 {
		for i := range dims[0] {
			fn(i * strides[0])
		}
		return
	}
	counter := make([]int, len(dims))
	off := 0
	for {
		fn(off)
		d := len(dims) - 1
		for ; d >= 0; d-- {
			counter[d]++
			off += strides[d]
			if counter[d] < dims[d] {
				break
			}
			off -= strides[d] * dims[d]
			counter[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// reduceAcc is the set of accumulator types.
type reduceAcc interface{ float64 | int64 | uint64 }

// reduceWalk folds src into acc (one accumulator per output element, set
// to init first) following the plan. shift, for foldAddExp, holds one value
// per output element.
func reduceWalk[T numeric, A reduceAcc](p *reducePlan, fold reduceFold, src []T, acc []A, init A, shift []float64, threads int) {
	for i := range acc {
		acc[i] = init
	}
	if p.outLen == 0 || p.count == 0 {
		return
	}
	inner := p.inner
	if p.innerKept {
		rows := p.outLen / inner
		chunks := 1
		if rows < 2*threads && inner >= 8192 {
			chunks = min(inner/4096, max(threads, 1))
		}
		perTask := max(1, inner/chunks*p.count)
		minTasks := max(1, par.Grain/perTask)
		if par.Chunks(rows*chunks, threads, minTasks) == 1 {
			reduceKeptRange(p, fold, src, acc, shift, chunks, 0, rows*chunks) // no closure for For to allocate
			return
		}
		par.For(rows*chunks, threads, minTasks, func(lo, hi int) {
			reduceKeptRange(p, fold, src, acc, shift, chunks, lo, hi)
		})
		return
	}
	minOuts := max(1, par.Grain/p.count)
	if par.Chunks(p.outLen, threads, minOuts) == 1 {
		reduceOutRange(p, fold, src, acc, shift, 0, p.outLen)
		return
	}
	par.For(p.outLen, threads, minOuts, func(lo, hi int) {
		reduceOutRange(p, fold, src, acc, shift, lo, hi)
	})
}

// reduceKeptRange is reduceWalk's tasks [lo, hi) when the innermost
// dimension is kept: task t folds a chunk (of chunks per row) of row
// t/chunks with vector loops.
func reduceKeptRange[T numeric, A reduceAcc](p *reducePlan, fold reduceFold, src []T, acc []A, shift []float64, chunks, lo, hi int) {
	inner := p.inner
	for t := lo; t < hi; t++ {
		row, c := t/chunks, t%chunks
		a, b := c*inner/chunks, (c+1)*inner/chunks
		base := reduceOffsetOf(row, p.keptDims, p.keptStrides) + a
		dst := acc[row*inner+a : row*inner+b]
		var sh []float64
		if shift != nil {
			sh = shift[row*inner+a : row*inner+b]
		}
		reduceForEachOffset(p.redDims, p.redStrides, func(off int) {
			foldVector(fold, dst, src[base+off:base+off+len(dst)], sh)
		})
	}
}

// reduceOutRange is reduceWalk's output elements [lo, hi) when the
// innermost dimension is reduced.
func reduceOutRange[T numeric, A reduceAcc](p *reducePlan, fold reduceFold, src []T, acc []A, shift []float64, lo, hi int) {
	inner := p.inner
	for o := lo; o < hi; o++ {
		base := reduceOffsetOf(o, p.keptDims, p.keptStrides)
		a := acc[o]
		var sh float64
		if shift != nil {
			sh = shift[o]
		}
		reduceForEachOffset(p.redDims, p.redStrides, func(off int) {
			a = foldScalar(fold, a, src[base+off:base+off+inner], sh)
		})
		acc[o] = a
	}
}

// foldScalar folds a contiguous row into one accumulator.
func foldScalar[T numeric, A reduceAcc](fold reduceFold, acc A, row []T, shift float64) A {
	switch fold {
	case foldAdd:
		for _, v := range row {
			acc += A(v)
		}
	case foldAddAbs:
		for _, v := range row {
			a := A(v)
			if a < 0 {
				a = -a
			}
			acc += a
		}
	case foldAddSquare:
		for _, v := range row {
			a := A(v)
			acc += a * a
		}
	case foldMul:
		for _, v := range row {
			acc *= A(v)
		}
	case foldMax:
		for _, v := range row {
			if a := A(v); a > acc || a != a {
				acc = a
			}
		}
	case foldMin:
		for _, v := range row {
			if a := A(v); a < acc || a != a {
				acc = a
			}
		}
	case foldAddExp:
		s := float64(acc)
		for _, v := range row {
			s += math.Exp(float64(v) - shift)
		}
		acc = A(s)
	}
	return acc
}

// foldVector folds a contiguous row elementwise into as many accumulators.
func foldVector[T numeric, A reduceAcc](fold reduceFold, acc []A, row []T, shift []float64) {
	row = row[:len(acc)]
	switch fold {
	case foldAdd:
		for i, v := range row {
			acc[i] += A(v)
		}
	case foldAddAbs:
		for i, v := range row {
			a := A(v)
			if a < 0 {
				a = -a
			}
			acc[i] += a
		}
	case foldAddSquare:
		for i, v := range row {
			a := A(v)
			acc[i] += a * a
		}
	case foldMul:
		for i, v := range row {
			acc[i] *= A(v)
		}
	case foldMax:
		for i, v := range row {
			if a := A(v); a > acc[i] || a != a {
				acc[i] = a
			}
		}
	case foldMin:
		for i, v := range row {
			if a := A(v); a < acc[i] || a != a {
				acc[i] = a
			}
		}
	case foldAddExp:
		shift = shift[:len(acc)]
		for i, v := range row {
			acc[i] += A(math.Exp(float64(v) - shift[i]))
		}
	}
}

// reduceKernel computes one Reduce* node.
type reduceKernel struct {
	op        reduceOp
	keepdims  bool
	noopEmpty bool // noop_with_empty_axes (axes as input only)
	axesAttr  []int64
	threads   int

	out             outputBuffer
	plan            *reducePlan
	planShape       []int
	planAxes        []int
	accF            []float64
	accI            []int64
	accU            []uint64
	shift           []float64
	wideIn, wideOut float32Scratch
	boolIn, boolOut []uint8
	axesBuf         []int // compute's normalized and sorted axes, kept for their storage
}

// resolveAxes turns the axes (attribute or input; nil means none given)
// into normalized axes; identity means noop_with_empty_axes applies and
// the operator gives its input back. noop_with_empty_axes on an operator
// with element-wise steps gives an empty, non-nil norm: no axis reduced.
func (k *reduceKernel) resolveAxes(axes []int64, rank int) (norm []int, identity bool, err error) {
	if len(axes) == 0 {
		if k.noopEmpty {
			if k.op.elementwiseIdentity() {
				return nil, true, nil
			}
			return []int{}, false, nil
		}
		norm = make([]int, rank)
		for i := range norm {
			norm[i] = i
		}
		return norm, false, nil
	}
	norm, err = normalizeAxes(axes, rank)
	return norm, false, err
}

// compute reduces x over axes (nil: the attribute or the default).
func (k *reduceKernel) compute(x *onnx.Tensor, axes []int64) (*onnx.Tensor, error) {
	if axes == nil {
		axes = k.axesAttr
	}
	// The axes, normalized and sorted into the kernel's buffer, as
	// resolveAxes gives them but without allocating.
	noAxes := len(axes) == 0 && k.noopEmpty
	if noAxes && k.op.elementwiseIdentity() {
		return x, nil // kernels never write into their inputs; callers get copies
	}
	rank := len(x.Shape)
	sorted := k.axesBuf[:0]
	switch {
	case noAxes:
		// Reduced over no axis: one input element per output element.
	case len(axes) == 0:
		for i := range rank {
			sorted = append(sorted, i)
		}
	default:
		if err := checkAxesOnce(axes, rank); err != nil {
			return nil, err
		}
		for _, a := range axes {
			n, _ := normalizeAxis(a, rank)
			sorted = append(sorted, n)
		}
	}
	k.axesBuf = sorted
	slices.Sort(sorted)
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	if k.plan == nil || !slices.Equal(k.planShape, x.Shape) || !slices.Equal(k.planAxes, sorted) {
		k.planShape, k.planAxes = append(k.planShape[:0], x.Shape...), append(k.planAxes[:0], sorted...)
		k.plan = newReducePlan(k.planShape, k.planAxes, k.keepdims)
	}
	p := k.plan
	out := k.out.tensor(x.Type, p.outShape)
	switch src := x.Data.(type) {
	case []float32:
		reduceTyped(k, src, out.Data.([]float32))
	case []float64:
		reduceTyped(k, src, out.Data.([]float64))
	case []int8:
		reduceTyped(k, src, out.Data.([]int8))
	case []int16:
		reduceTyped(k, src, out.Data.([]int16))
	case []int32:
		reduceTyped(k, src, out.Data.([]int32))
	case []int64:
		reduceTyped(k, src, out.Data.([]int64))
	case []uint8:
		reduceTyped(k, src, out.Data.([]uint8))
	case []uint16:
		reduceTyped(k, src, out.Data.([]uint16))
	case []uint32:
		reduceTyped(k, src, out.Data.([]uint32))
	case []uint64:
		reduceTyped(k, src, out.Data.([]uint64))
	case []onnx.F16, []onnx.BF16:
		in, _ := widenToFloat32(k.wideIn.get(x.Len()), src)
		res := k.wideOut.get(p.outLen)
		reduceTyped(k, in, res)
		if err := narrowFromFloat32(out.Data, res); err != nil {
			return nil, err
		}
	case []bool:
		if k.op != redMax && k.op != redMin {
			return nil, network.Unsupportedf("%v of bool tensors", k.op)
		}
		if cap(k.boolIn) < len(src) {
			k.boolIn = make([]uint8, len(src))
		}
		if cap(k.boolOut) < p.outLen {
			k.boolOut = make([]uint8, p.outLen)
		}
		in, res := k.boolIn[:len(src)], k.boolOut[:p.outLen]
		for i, v := range src {
			in[i] = 0
			if v {
				in[i] = 1
			}
		}
		reduceTyped(k, in, res)
		dst := out.Data.([]bool)
		for i, v := range res {
			dst[i] = v != 0
		}
	default:
		return nil, network.Unsupportedf("%v of %v tensors", k.op, x.Type)
	}
	return out, nil
}

// reduceIntegers runs the plan for integers in a 64-bit accumulator of
// their signedness (A is int64 for signed T, uint64 for unsigned), then
// writes the results into dst; Mean divides by the count, truncating.
func reduceIntegers[T numeric, A int64 | uint64](k *reduceKernel, src, dst []T, acc []A) {
	p, fold := k.plan, k.op.fold()
	init := A(0)
	switch fold {
	case foldMul:
		init = 1
	case foldMax:
		init = A(reduceLowest[T]())
	case foldMin:
		init = A(reduceHighest[T]())
	}
	reduceWalk(p, fold, src, acc, init, nil, k.threads)
	for i, a := range acc {
		if k.op == redMean {
			if p.count == 0 {
				a = 0
			} else {
				a /= A(p.count)
			}
		}
		dst[i] = T(a)
	}
}

// reduceTyped runs the plan for one element type, choosing the
// accumulator, then writes the finished values into dst.
func reduceTyped[T numeric](k *reduceKernel, src, dst []T) {
	p := k.plan
	n := p.outLen
	fold := k.op.fold()
	if isIntegerSlice(src) && !k.op.floatAccumulated() {
		var zero T
		if zero-1 < 0 { // signed
			k.accI = withLen(k.accI, n)
			reduceIntegers(k, src, dst, k.accI)
			return
		}
		k.accU = withLen(k.accU, n)
		reduceIntegers(k, src, dst, k.accU)
		return
	}
	k.accF = withLen(k.accF, n)
	acc := k.accF
	init := 0.0
	switch fold {
	case foldMul:
		init = 1
	case foldMax:
		init = math.Inf(-1)
		if isIntegerSlice(src) {
			init = float64(reduceLowest[T]())
		}
	case foldMin:
		init = math.Inf(1)
		if isIntegerSlice(src) {
			init = float64(reduceHighest[T]())
		}
	}
	reduceWalk(p, fold, src, acc, init, nil, k.threads)
	if k.op == redLogSumExp {
		if isIntegerSlice(src) {
			for i := range acc {
				if p.count == 0 {
					acc[i] = math.Inf(-1)
				}
			}
		}
		k.shift = withLen(k.shift, n)
		shift := k.shift
		for i, m := range acc {
			if math.IsInf(m, 0) {
				m = 0 // all -inf (or empty), or some +inf: the sum decides
			}
			shift[i] = m
		}
		reduceWalk(p, foldAddExp, src, acc, 0, shift, k.threads)
		for i, s := range acc {
			acc[i] = math.Log(s) + shift[i]
		}
	}
	for i, a := range acc {
		switch k.op {
		case redMean:
			a /= float64(p.count)
		case redL2:
			a = math.Sqrt(a)
		case redLogSum:
			a = math.Log(a)
		}
		dst[i] = T(a)
	}
}

// reduceLowest and reduceHighest are the extreme values of an integer type
// (±Inf for floats).
func reduceLowest[T numeric]() T {
	var z T
	var v any
	switch any(z).(type) {
	case float32, float64:
		inf := math.Inf(-1)
		return T(inf)
	case int8:
		v = int64(math.MinInt8)
	case int16:
		v = int64(math.MinInt16)
	case int32:
		v = int64(math.MinInt32)
	case int64:
		v = int64(math.MinInt64)
	default:
		return 0 // unsigned
	}
	return T(v.(int64))
}

func reduceHighest[T numeric]() T {
	var z T
	switch any(z).(type) {
	case float32, float64:
		inf := math.Inf(1)
		return T(inf)
	}
	z--
	if z > 0 {
		return z // unsigned: all ones
	}
	return -(reduceLowest[T]() + 1)
}

// reduceBuild compiles any Reduce* node. axesAttrVersion is the first
// version where axes is an input rather than an attribute.
func (b *builder) reduceBuild(op reduceOp, since, axesInputFrom int, data, axesName, reducedName string, axesAttr []int64, keepdims, noop int64) error {
	x, err := b.input(data)
	if err != nil {
		return err
	}
	if keepdims != 0 && keepdims != 1 {
		return fmt.Errorf("keepdims must be 0 or 1, got %d", keepdims)
	}
	k := &reduceKernel{op: op, keepdims: keepdims == 1, threads: b.e.threads}
	axesIn := valueRef{slot: -1}
	if since >= axesInputFrom {
		if noop != 0 && noop != 1 {
			return fmt.Errorf("noop_with_empty_axes must be 0 or 1, got %d", noop)
		}
		k.noopEmpty = noop == 1
		if axesIn, err = b.optionalInput(axesName); err != nil {
			return err
		}
	} else {
		k.axesAttr = slices.Clone(axesAttr)
	}
	out := b.output(reducedName)
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		var axes []int64
		if axesIn.present() {
			at, err := axesIn.tensor(slots)
			if err != nil {
				return err
			}
			if at.Type != onnx.Int64 {
				return fmt.Errorf("axes input %q must be int64, got %v", axesIn.name, at.Type)
			}
			if len(at.Shape) > 1 {
				return fmt.Errorf("axes input %q must be 1-D, got shape %v", axesIn.name, at.Shape)
			}
			axes = at.Data.([]int64)
			if axes == nil {
				axes = []int64{}
			}
		}
		res, err := k.compute(t, axes)
		if err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	})
}

// VisitReduceSum compiles ReduceSum (axes an input from version 13).
func (b *builder) VisitReduceSum(op *ops.ReduceSum) error {
	return b.reduceBuild(redSum, op.SinceVersion(), 13, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

// VisitReduceMean compiles ReduceMean (axes an input from version 18).
func (b *builder) VisitReduceMean(op *ops.ReduceMean) error {
	return b.reduceBuild(redMean, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

// VisitReduceMax compiles ReduceMax (axes an input from version 18; bool
// from version 20).
func (b *builder) VisitReduceMax(op *ops.ReduceMax) error {
	return b.reduceBuild(redMax, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

// VisitReduceMin compiles ReduceMin (axes an input from version 18; bool
// from version 20).
func (b *builder) VisitReduceMin(op *ops.ReduceMin) error {
	return b.reduceBuild(redMin, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

// VisitReduceProd compiles ReduceProd.
func (b *builder) VisitReduceProd(op *ops.ReduceProd) error {
	return b.reduceBuild(redProd, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

// VisitReduceL1 compiles ReduceL1.
func (b *builder) VisitReduceL1(op *ops.ReduceL1) error {
	return b.reduceBuild(redL1, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

// VisitReduceL2 compiles ReduceL2.
func (b *builder) VisitReduceL2(op *ops.ReduceL2) error {
	return b.reduceBuild(redL2, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

// VisitReduceLogSum compiles ReduceLogSum.
func (b *builder) VisitReduceLogSum(op *ops.ReduceLogSum) error {
	return b.reduceBuild(redLogSum, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

// VisitReduceLogSumExp compiles ReduceLogSumExp.
func (b *builder) VisitReduceLogSumExp(op *ops.ReduceLogSumExp) error {
	return b.reduceBuild(redLogSumExp, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}

// VisitReduceSumSquare compiles ReduceSumSquare.
func (b *builder) VisitReduceSumSquare(op *ops.ReduceSumSquare) error {
	return b.reduceBuild(redSumSquare, op.SinceVersion(), 18, op.In.Data, op.In.Axes, op.Out.Reduced, op.Axes, op.Keepdims, op.NoopWithEmptyAxes)
}
