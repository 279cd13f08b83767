package autodiff

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Rules of the operators that select, place or accumulate elements:
// concatenation and splitting, slicing and padding, gathers and scatters,
// selections (Where, Compress, TopK) and running sums. A gather's gradient
// is a scatter-add of dY at the positions read (an element read twice gets
// both contributions); a scatter's is the converse. Index inputs get no
// gradient.

func init() {
	register(concatGrad, "Concat")
	register(splitGrad, "Split")
	register(sliceGrad, "Slice")
	register(padGrad, "Pad")
	register(gatherGrad, "Gather")
	register(gatherElementsGrad, "GatherElements")
	register(gatherNDGrad, "GatherND")
	register(whereGrad, "Where")
	register(compressGrad, "Compress")
	register(topKGrad, "TopK")
	register(scatterGrad, "Scatter", "ScatterElements", "ScatterND")
	register(cumSumGrad, "CumSum")
	register(reverseSequenceGrad, "ReverseSequence")
}

// selAxis normalises an axis of a rank-r tensor.
func (b *builder) selAxis(axis int64, r int, what string) int {
	if axis < 0 {
		axis += int64(r)
	}
	if axis < 0 || axis >= int64(r) {
		b.fail("%s: axis out of range for rank %d", what, r)
		return 0
	}
	return int(axis)
}

// concatGrad: Y = concat(X₀, X₁, ...) along an axis, so dXᵢ is dY's
// window at Xᵢ's place: one Split of dY by the inputs' sizes (a Slice per
// input when one size is free at run time).
func concatGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.Concat)
	axis := int64(1) // Concat-1's default
	if op.Axis != nil {
		axis = *op.Axis
	}
	g := dy[0]
	r := len(b.shapeOf(g))
	a := b.selAxis(axis, r, "Concat")
	if b.err != nil {
		return nil
	}
	if len(n.Inputs) == 1 {
		return []string{g}
	}
	sizes := make([]int64, len(n.Inputs))
	free := -1
	for i, in := range n.Inputs {
		sizes[i] = b.shapeOf(in)[a]
		if sizes[i] < 0 {
			if free >= 0 {
				b.fail("Concat: the sizes of inputs %d and %d along the axis are free", free, i)
				return nil
			}
			free = i
		}
	}
	if free < 0 {
		return b.selSplit(g, a, sizes)
	}
	// One size is free: the windows before it are counted from the
	// start, those after it from the end.
	out := make([]string, len(n.Inputs))
	var before, after int64
	for i := free + 1; i < len(sizes); i++ {
		after += sizes[i]
	}
	ax := []int64{int64(a)}
	end := func(fromEnd int64) int64 {
		if fromEnd == 0 {
			return math.MaxInt64
		}
		return -fromEnd
	}
	for i := range sizes {
		switch {
		case i < free:
			if need[i] {
				out[i] = b.slice(g, []int64{before}, []int64{before + sizes[i]}, ax, nil)
			}
			before += sizes[i]
		case i == free:
			if need[i] {
				out[i] = b.slice(g, []int64{before}, []int64{end(after)}, ax, nil)
			}
		default:
			if need[i] {
				out[i] = b.slice(g, []int64{-after}, []int64{end(after - sizes[i])}, ax, nil)
			}
			after -= sizes[i]
		}
	}
	return out
}

// selSplit splits x along axis a into parts of the given sizes.
func (b *builder) selSplit(x string, a int, sizes []int64) []string {
	if b.opset < 13 {
		return b.emit("Split", []string{x}, len(sizes), attrInt("axis", int64(a)), attrInts("split", sizes...))
	}
	return b.emit("Split", []string{x, b.ints(sizes...)}, len(sizes), attrInt("axis", int64(a)))
}

// splitGrad: the parts Yᵢ of X put back side by side: dX = concat(dYᵢ),
// with zeros for a part no gradient reached. How the sizes were given
// (split attribute, split input, num_outputs) does not matter.
func splitGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.Split)
	axis := int64(0)
	if op.Axis != nil {
		axis = *op.Axis
	}
	x := n.Inputs[0]
	a := b.selAxis(axis, len(b.shapeOf(x)), "Split")
	parts := make([]string, len(n.Outputs))
	for i, o := range n.Outputs {
		switch {
		case i < len(dy) && dy[i] != "":
			parts[i] = dy[i]
		case o == "":
			b.fail("Split: output %d is omitted but its part of the input needs a gradient", i)
			return nil
		default:
			parts[i] = b.zerosLike(o)
		}
	}
	if len(parts) == 1 {
		return []string{parts[0]}
	}
	return []string{b.op("Concat", parts, attrInt("axis", int64(a)))}
}

// sliceAxis is the part of one axis a Slice reads: count elements from
// first, step apart.
type sliceAxis struct {
	first, count, step int64
}

// sliceRange clamps a Slice's start and end to a dim of size d as ONNX
// does (negative values count from the end).
func sliceRange(start, end, step, d int64) sliceAxis {
	if start < 0 {
		start += d
	}
	if end < 0 {
		end += d
	}
	var cnt int64
	if step > 0 {
		start = min(max(start, 0), d)
		end = min(max(end, 0), d)
		if end > start {
			cnt = (end-start-1)/step + 1
		}
	} else {
		start = min(max(start, 0), d-1)
		end = min(max(end, -1), d-1)
		if start > end {
			cnt = (start-end-1)/(-step) + 1
		}
	}
	return sliceAxis{start, cnt, step}
}

// sliceGrad: Y = X[start:end:step] on some axes, so dX is dY placed at
// the positions read, zeros elsewhere. Without steps that is one Pad of
// dY by the clamped amounts before and after the window; an axis with
// |step| > 1 first interleaves step-1 zeros after each element (Unsqueeze,
// Pad, Reshape); a negative step first reverses dY along the axis, which
// makes the positions ascend from the last one read.
func sliceGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	if !need[0] {
		return nil
	}
	op := n.Op.(*ops.Slice)
	x, g := n.Inputs[0], dy[0]
	xs := b.shapeOf(x)
	if b.err != nil {
		return nil
	}
	r := len(xs)
	var starts, ends, axes, steps []int64
	if op.SinceVersion() < 10 {
		starts, ends, axes = op.Starts, op.Ends, op.Axes
	} else {
		var ok bool
		if starts, ok = b.intsOf(op.In.Starts); !ok {
			return nil
		}
		if ends, ok = b.intsOf(op.In.Ends); !ok {
			return nil
		}
		if op.In.Axes != "" {
			if axes, ok = b.intsOf(op.In.Axes); !ok {
				return nil
			}
		}
		if op.In.Steps != "" {
			if steps, ok = b.intsOf(op.In.Steps); !ok {
				return nil
			}
		}
	}
	if axes == nil {
		for i := range starts {
			axes = append(axes, int64(i))
		}
	}
	if len(ends) != len(starts) || len(axes) != len(starts) || steps != nil && len(steps) != len(starts) {
		b.fail("Slice: starts %v, ends %v, axes %v and steps %v differ in length", starts, ends, axes, steps)
		return nil
	}
	plan := make([]sliceAxis, r)
	for i := range plan {
		plan[i] = sliceAxis{0, xs[i], 1}
	}
	for i, ax := range axes {
		a := b.selAxis(ax, r, "Slice")
		step := int64(1)
		if steps != nil {
			step = steps[i]
		}
		if step == 0 {
			b.fail("Slice: a step of 0")
			return nil
		}
		d := xs[a]
		if d < 0 {
			// A free dim: only a slice of the whole axis is handled.
			if step == 1 && (starts[i] == 0 || starts[i] <= -math.MaxInt32) && ends[i] >= math.MaxInt32 {
				continue
			}
			b.fail("Slice: axis %d of %v is free and sliced", a, xs)
			return nil
		}
		plan[a] = sliceRange(starts[i], ends[i], step, d)
	}
	if b.err != nil {
		return nil
	}
	for _, p := range plan {
		if p.count == 0 {
			return []string{b.zerosLike(x)}
		}
	}
	// Reverse the negatively stepped axes.
	var rev []int64
	for a, p := range plan {
		if p.step < 0 {
			rev = append(rev, int64(a))
		}
	}
	cur := g
	curShape := slices.Clone(b.shapeOf(g))
	if len(rev) > 0 {
		st, en, sp := make([]int64, len(rev)), make([]int64, len(rev)), make([]int64, len(rev))
		for i := range rev {
			st[i], en[i], sp[i] = -1, math.MinInt64, -1
		}
		cur = b.slice(cur, st, en, rev, sp)
	}
	pads := make([]int64, 2*r)
	for a, p := range plan {
		lo, s := p.first, p.step
		if s < 0 {
			lo, s = p.first+(p.count-1)*s, -s
		}
		length := p.count
		if s > 1 {
			cur = b.selInterleave(cur, curShape, a, s)
			length = (p.count-1)*s + 1
			curShape[a] = length
		}
		if xs[a] >= 0 {
			pads[a], pads[r+a] = lo, xs[a]-lo-length
		}
	}
	return []string{b.pad(cur, pads)}
}

// selInterleave puts s-1 zeros after each element of x along axis a and
// drops the trailing ones: [.., c, ..] becomes [.., (c-1)·s+1, ..].
func (b *builder) selInterleave(x string, shape []int64, a int, s int64) string {
	r := len(shape)
	u := b.unsqueeze(x, int64(a+1))
	pads := make([]int64, 2*(r+1))
	pads[r+1+a+1] = s - 1
	p := b.pad(u, pads)
	// Merge axes a and a+1: dims before a are copied (0), one free dim
	// after it may be inferred (-1).
	target := make([]int64, 0, r)
	free := 0
	for i, d := range shape {
		switch {
		case i < a:
			target = append(target, 0)
		case i == a:
			target = append(target, d*s)
		case d < 0:
			free++
			target = append(target, -1)
		default:
			target = append(target, d)
		}
	}
	if free > 1 || shape[a] < 0 {
		b.fail("Slice: too many free dims in %v to interleave the gradient", shape)
		return ""
	}
	m := b.reshape(p, target...)
	// Drop the s-1 zeros after the last element.
	st, en := []int64{0}, []int64{(shape[a]-1)*s + 1}
	return b.slice(m, st, en, []int64{int64(a)}, nil)
}

// padGrad: Y = pad(X). In constant mode dX is dY's window at X's place
// (cropped by the positive pads, zero-padded where the forward cropped),
// and the constant value gets the sum of dY over the padding (Pad-11
// only: later schemas make it non-differentiable). In edge,
// reflect and wrap modes the padding copied elements of X: their
// gradients are folded back onto them, one axis at a time.
func padGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.Pad)
	x, g := n.Inputs[0], dy[0]
	xs := b.shapeOf(x)
	if b.err != nil {
		return nil
	}
	r := len(xs)
	since := op.SinceVersion()
	var pads, axes []int64
	switch {
	case since < 2:
		pads = op.Paddings
	case since < 11:
		pads = op.Pads
	default:
		var ok bool
		if pads, ok = b.intsOf(op.In.Pads); !ok {
			return nil
		}
		if op.In.Axes != "" {
			if axes, ok = b.intsOf(op.In.Axes); !ok {
				return nil
			}
		}
	}
	if axes == nil {
		for i := range r {
			axes = append(axes, int64(i))
		}
	}
	if len(pads) != 2*len(axes) {
		b.fail("Pad: %d pads for %d axes", len(pads), len(axes))
		return nil
	}
	begin, end := make([]int64, r), make([]int64, r)
	for i, ax := range axes {
		a := b.selAxis(ax, r, "Pad")
		begin[a], end[a] = pads[i], pads[len(axes)+i]
	}
	out := make([]string, len(n.Inputs))
	switch op.Mode {
	case "constant", "":
		// The window of dY that X (cropped) was copied to.
		st, en, ax := []int64{}, []int64{}, []int64{}
		back := make([]int64, 2*r)
		for a := range r {
			if begin[a] <= 0 && end[a] <= 0 {
				back[a], back[r+a] = -begin[a], -end[a]
				continue
			}
			e := int64(math.MaxInt64)
			if end[a] > 0 {
				e = -end[a]
			}
			st, en, ax = append(st, max(begin[a], 0)), append(en, e), append(ax, int64(a))
			back[a], back[r+a] = max(-begin[a], 0), max(-end[a], 0)
		}
		win := g
		if len(ax) > 0 {
			win = b.slice(g, st, en, ax, nil)
		}
		if need[0] {
			out[0] = b.pad(win, back)
		}
		if len(n.Inputs) > 2 && n.Inputs[2] != "" && need[2] && selDifferentiable(op, 2) {
			all := make([]int64, r)
			for i := range all {
				all[i] = int64(i)
			}
			gv := b.sub(b.reduceSum(g, all, false), b.reduceSum(win, all, false))
			b.info[gv] = Info{Type: b.typeOf(g), Shape: []int64{}}
			out[2] = b.reshapeLike(gv, n.Inputs[2])
		}
		return out
	case "edge", "reflect", "wrap":
	default:
		b.fail("Pad: mode %q", op.Mode)
		return nil
	}
	if !need[0] {
		return nil
	}
	cur := g
	curShape := slices.Clone(b.shapeOf(g))
	back := make([]int64, 2*r)
	for a := range r {
		p, q := begin[a], end[a]
		if p == 0 && q == 0 {
			continue
		}
		if xs[a] < 0 {
			b.fail("Pad: axis %d of %v is free and padded", a, xs)
			return nil
		}
		// A negative side crops X first; the rest pads what remains.
		back[a], back[r+a] = max(-p, 0), max(-q, 0)
		d := xs[a] - back[a] - back[r+a]
		p, q = max(p, 0), max(q, 0)
		cur = b.padFoldAxis(cur, curShape, a, d, p, q, op.Mode)
		curShape[a] = d
	}
	out[0] = b.pad(cur, back)
	return out
}

// selDifferentiable reports whether the schema of op lets a gradient flow
// to input i (Pad-13 and later mark constant_value non-differentiable; the
// native backend's backprop, which the project matches, honours it).
func selDifferentiable(op ops.Op, i int) bool {
	s := ops.Schema(op.Domain(), op.OpType(), op.SinceVersion())
	if s == nil {
		return true
	}
	p := s.InputParam(i)
	return p == nil || p.Differentiation != ops.NonDifferentiable
}

// padFoldAxis folds the gradient g (of length p+d+q along axis a) of a
// pad by p before and q after in mode onto the d elements it copied.
func (b *builder) padFoldAxis(g string, shape []int64, a int, d, p, q int64, mode string) string {
	ax := []int64{int64(a)}
	center := b.slice(g, []int64{p}, []int64{p + d}, ax, nil)
	r := len(shape)
	padAxis := func(v string, lo, hi int64) string {
		pads := make([]int64, 2*r)
		pads[a], pads[r+a] = lo, hi
		return b.pad(v, pads)
	}
	rangeIdx := func(from, to int64) string { // from, from±1, ..., to
		var idx []int64
		if from <= to {
			for i := from; i <= to; i++ {
				idx = append(idx, i)
			}
		} else {
			for i := from; i >= to; i-- {
				idx = append(idx, i)
			}
		}
		return b.ints(idx...)
	}
	gather := func(from, to int64) string {
		return b.op("Gather", []string{g, rangeIdx(from, to)}, attrInt("axis", int64(a)))
	}
	sum := center
	add := func(v string) { sum = b.add(sum, v) }
	switch mode {
	case "edge":
		// Every padded position copied the first (last) element.
		if d == 0 {
			b.fail("Pad: edge padding of an empty axis")
			return ""
		}
		if p > 0 {
			s := b.reduceSum(b.slice(g, []int64{0}, []int64{p}, ax, nil), ax, true)
			add(padAxis(s, 0, d-1))
		}
		if q > 0 {
			s := b.reduceSum(b.slice(g, []int64{p + d}, []int64{p + d + q}, ax, nil), ax, true)
			add(padAxis(s, d-1, 0))
		}
	case "reflect":
		// Position o < p copied element p-o; position p+d+j copied d-2-j.
		if p > d-1 || q > d-1 {
			b.fail("Pad: reflect padding of %d and %d is more than the axis of %d allows", p, q, d)
			return ""
		}
		if p > 0 {
			add(padAxis(gather(p-1, 0), 1, d-1-p))
		}
		if q > 0 {
			add(padAxis(gather(p+d+q-1, p+d), d-1-q, 1))
		}
	case "wrap":
		// Position o < p copied element d-p+o; position p+d+j copied j.
		if p > d || q > d {
			b.fail("Pad: wrap padding of %d and %d is more than the axis of %d", p, q, d)
			return ""
		}
		if p > 0 {
			add(padAxis(b.slice(g, []int64{0}, []int64{p}, ax, nil), d-p, 0))
		}
		if q > 0 {
			add(padAxis(b.slice(g, []int64{p + d}, []int64{p + d + q}, ax, nil), 0, d-q))
		}
	}
	return sum
}

// selConstInts returns the values of v when it is fixed in the model (an
// initializer that is not an input, or a Constant's output): indices the
// probe saw in a graph input may change from run to run.
func (b *builder) selConstInts(v string) ([]int64, bool) {
	for _, in := range b.g.Inputs {
		if in.Name == v {
			return nil, false
		}
	}
	fixed := false
	for _, in := range b.g.Initializers {
		if in.Name == v {
			fixed = true
		}
	}
	for _, nd := range b.g.Nodes {
		if nd.OpType == "Constant" && nd.Domain == "" && len(nd.Outputs) > 0 && nd.Outputs[0] == v {
			fixed = true
		}
	}
	inf, ok := b.info[v]
	if !fixed || !ok || inf.Ints == nil && numElements(inf.Shape) != 0 {
		return nil, false
	}
	return inf.Ints, true
}

// selInt64 is a rank-0 int64 constant.
func (b *builder) selInt64(v int64) string {
	return b.op("Constant", nil, attrTensor("value", onnx.Scalar(v)))
}

// selIndices returns idx as int64 with its negative entries wrapped by
// dim (a value broadcasting against idx: rank 0, or [k] for index tuples)
// and whether the entries (tuples of the last axis of size tuple, 1 for
// plain indices) are known to be distinct.
func (b *builder) selIndices(idx string, dims []int64, dim func() string, tuple int) (string, bool) {
	if vals, ok := b.selConstInts(idx); ok && !slices.Contains(dims, -1) {
		shape := b.shapeOf(idx)
		w := make([]int64, len(vals))
		seen := map[string]bool{}
		unique := true
		for i, v := range vals {
			if v < 0 {
				v += dims[i%len(dims)]
			}
			w[i] = v
			if (i+1)%tuple == 0 {
				key := fmt.Sprint(w[i+1-tuple : i+1])
				unique = unique && !seen[key]
				seen[key] = true
			}
		}
		sh := make([]int, len(shape))
		for i, d := range shape {
			sh[i] = int(d)
		}
		c := b.op("Constant", nil, attrTensor("value", onnx.FromSlice(w, sh...)))
		b.info[c] = Info{Type: onnx.Int64, Shape: shape}
		return c, unique
	}
	v := idx
	if b.typeOf(idx) != onnx.Int64 {
		v = b.cast(idx, onnx.Int64)
	}
	if b.opset < 9 {
		b.fail("wrapping negative indices needs ai.onnx opset 9 (the model imports %d)", b.opset)
		return "", false
	}
	neg := b.op("Less", []string{v, b.selInt64(0)})
	w := b.op("Where", []string{neg, b.add(v, dim()), v})
	b.info[w] = Info{Type: onnx.Int64, Shape: b.shapeOf(idx)}
	return w, false
}

// selDimOf returns a function giving dim a of x as a rank-0 int64.
func (b *builder) selDimOf(x string, a int) func() string {
	return func() string {
		if d := b.shapeOf(x)[a]; d >= 0 {
			return b.selInt64(d)
		}
		return b.op("Gather", []string{b.shape(x), b.selInt64(int64(a))}, attrInt("axis", 0))
	}
}

// selZeros is a tensor of zeros of type dt and the shape value s.
func (b *builder) selZeros(s string, dt onnx.DataType) string {
	t := floatTensor(dt, []float64{0})
	if t == nil {
		b.fail("no zeros of type %v can be made", dt)
		return ""
	}
	t.Shape = []int{1}
	return b.op("ConstantOfShape", []string{s}, attrTensor("value", t))
}

// selScatterAxis is the gradient of a gather along axis a of a tensor of
// shape xs: g (of shape xs[:a] + idx's shape + xs[a+1:]) added at the
// positions idx (wrapped, int64, of rank q) names. It has shape xs.
// From opset 16 (from 11 for distinct indices) it is one ScatterND into
// zeros with the axis moved first; before, it is OneHot(idx)ᵀ · g, one
// MatMul, which adds repeated indices up too. zeros gives the zeros of
// shape xs permuted by perm; depth the size xs[a] as a 1-D value.
func (b *builder) selScatterAxis(g string, xs []int64, a int, idx string, q int, unique bool,
	zeros func(perm []int64) string, depth func() string) string {
	r := len(xs)
	dt := b.typeOf(g)
	if b.opset >= 16 || unique && b.opset >= 11 {
		// updates: g with the index axes first.
		perm := make([]int64, 0, r-1+q)
		for i := range q {
			perm = append(perm, int64(a+i))
		}
		for i := range a {
			perm = append(perm, int64(i))
		}
		for i := a + q; i < r-1+q; i++ {
			perm = append(perm, int64(i))
		}
		upd := b.transpose(g, perm...)
		permX := []int64{int64(a)}
		for i := range r {
			if i != a {
				permX = append(permX, int64(i))
			}
		}
		var attrs []*onnx.Attribute
		if !unique {
			attrs = append(attrs, attrString("reduction", "add"))
		}
		s := b.op("ScatterND", []string{zeros(permX), b.unsqueeze(idx, int64(q)), upd}, attrs...)
		back := make([]int64, r)
		for i := range r {
			switch {
			case i < a:
				back[i] = int64(i + 1)
			case i > a:
				back[i] = int64(i)
			}
		}
		return b.transpose(s, back...)
	}
	if b.opset < 9 {
		b.fail("the gradient of a gather needs ai.onnx opset 9 (OneHot; the model imports %d)", b.opset)
		return ""
	}
	qh := q
	if q == 0 {
		// ONNX Runtime's OneHot wants indices of rank 1 or more.
		idx, qh = b.unsqueeze(idx, 0), 1
	}
	oh := b.selOneHot(idx, depth(), dt, -1)
	ohT := b.transpose(b.op("Flatten", []string{oh}, attrInt("axis", int64(qh))), 1, 0)
	gs := b.shapeOf(g)
	prod := func(dims []int64) int64 {
		p := int64(1)
		for _, d := range dims {
			if d < 0 {
				return -1
			}
			p *= d
		}
		return p
	}
	outer, nIdx, inner := prod(gs[:a]), prod(gs[a:a+q]), prod(gs[a+q:])
	free := 0
	for _, d := range []int64{outer, nIdx, inner} {
		if d < 0 {
			free++
		}
	}
	if free > 1 {
		b.fail("the gradient of a gather of shape %v has too many free dims for this opset", gs)
		return ""
	}
	var m string
	if outer == 1 {
		m = b.op("MatMul", []string{ohT, b.reshape(g, nIdx, inner)})
	} else {
		m = b.op("MatMul", []string{ohT, b.reshape(g, outer, nIdx, inner)})
	}
	return m
}

// gatherGrad: Y = X.take(idx, axis), so dX = dY scattered-added back
// along the axis at idx (negative indices wrapped first).
func gatherGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	if !need[0] {
		return nil
	}
	op := n.Op.(*ops.Gather)
	x, idx := n.Inputs[0], n.Inputs[1]
	xs := b.shapeOf(x)
	if b.err != nil {
		return nil
	}
	a := b.selAxis(op.Axis, len(xs), "Gather")
	w, unique := b.selIndices(idx, []int64{xs[a]}, b.selDimOf(x, a), 1)
	s := b.selScatterAxis(dy[0], xs, a, w, len(b.shapeOf(idx)), unique, b.selZerosPermuted(x), b.selDepth(x, a))
	return []string{b.reshapeLike(s, x)}
}

// selZerosPermuted gives zeros of x's type and shape permuted by perm.
func (b *builder) selZerosPermuted(x string) func(perm []int64) string {
	return func(perm []int64) string {
		xs := b.shapeOf(x)
		dims := make([]int64, len(perm))
		free := false
		for i, p := range perm {
			dims[i] = xs[p]
			free = free || dims[i] < 0
		}
		s := b.ints(dims...)
		if free {
			s = b.op("Gather", []string{b.shape(x), b.ints(perm...)}, attrInt("axis", 0))
		}
		return b.selZeros(s, b.typeOf(x))
	}
}

// selDepth gives dim a of x as a 1-D one-element value.
func (b *builder) selDepth(x string, a int) func() string {
	return func() string {
		if d := b.shapeOf(x)[a]; d >= 0 {
			return b.ints(d)
		}
		return b.op("Gather", []string{b.shape(x), b.ints(int64(a))}, attrInt("axis", 0))
	}
}

// gatherElementsGrad: Y[t] = X[t with tₐ = idx[t]], so dX is dY added at
// those positions: ScatterElements with reduction add into zeros (opset
// 16; plain ScatterElements for known distinct indices from 11). Opsets
// 11 to 15 otherwise sum dY · OneHot(idx) over the index axis, which adds
// repeated indices up, and pad it to X's shape.
func gatherElementsGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	if !need[0] {
		return nil
	}
	op := n.Op.(*ops.GatherElements)
	x, idx, g := n.Inputs[0], n.Inputs[1], dy[0]
	xs, ts := b.shapeOf(x), b.shapeOf(idx)
	if b.err != nil {
		return nil
	}
	a := b.selAxis(op.Axis, len(xs), "GatherElements")
	w, unique := b.selIndices(idx, []int64{xs[a]}, b.selDimOf(x, a), 1)
	if b.opset >= 16 || unique {
		var attrs []*onnx.Attribute
		attrs = append(attrs, attrInt("axis", int64(a)))
		if !unique {
			attrs = append(attrs, attrString("reduction", "add"))
		}
		return []string{b.op("ScatterElements", []string{b.zerosLike(x), w, g}, attrs...)}
	}
	oh := b.selOneHot(w, b.selDepth(x, a)(), b.typeOf(g), a+1)
	p := b.mul(b.unsqueeze(g, int64(a+1)), oh)
	s := b.reduceSum(p, []int64{int64(a)}, false)
	pads := make([]int64, 2*len(xs))
	for i := range xs {
		if i != a && xs[i] != ts[i] {
			if xs[i] < 0 || ts[i] < 0 {
				b.fail("GatherElements: indices of shape %v for data of %v with free dims", ts, xs)
				return nil
			}
			pads[len(xs)+i] = xs[i] - ts[i]
		}
	}
	return []string{b.pad(s, pads)}
}

// selOneHot is OneHot(idx, depth) of type dt with the new axis at axis.
func (b *builder) selOneHot(idx, depth string, dt onnx.DataType, axis int) string {
	if b.opset < 9 {
		b.fail("OneHot needs ai.onnx opset 9 (the model imports %d)", b.opset)
		return ""
	}
	if !dt.IsFloat() {
		b.fail("no one-hot of type %v can be made", dt)
		return ""
	}
	// ONNX Runtime's OneHot makes float (not double) values: cast after.
	values := floatTensor(onnx.Float, []float64{0, 1})
	oh := b.op("OneHot", []string{idx, depth, b.op("Constant", nil, attrTensor("value", values))}, attrInt("axis", int64(axis)))
	if dt != onnx.Float {
		oh = b.cast(oh, dt)
	}
	return oh
}

// gatherNDGrad: Y[m] = X[idx[m]] (slices of X named by index tuples, the
// first batch_dims axes shared), so dX is dY added at those slices. The
// batch coordinates are prepended to the tuples, which then name slices
// of X directly: ScatterND with reduction add into zeros (opset 16;
// plain ScatterND for known distinct tuples from 11). Before, the tuples
// are flattened to row numbers of X seen as [∏ dims indexed, rest] and
// the gradient is that of a Gather of those rows.
func gatherNDGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	if !need[0] {
		return nil
	}
	op := n.Op.(*ops.GatherND)
	x, idx, g := n.Inputs[0], n.Inputs[1], dy[0]
	xs, is := b.shapeOf(x), b.shapeOf(idx)
	if b.err != nil {
		return nil
	}
	bd := int(op.BatchDims)
	q := len(is)
	k := int(is[q-1])
	if is[q-1] < 0 || bd+k > len(xs) {
		b.fail("GatherND: indices of shape %v for data of %v", is, xs)
		return nil
	}
	dims := xs[bd : bd+k]
	dimv := func() string {
		if !slices.Contains(dims, -1) {
			return b.ints(dims...)
		}
		return b.slice(b.shape(x), []int64{int64(bd)}, []int64{int64(bd + k)}, []int64{0}, nil)
	}
	w, unique := b.selIndices(idx, dims, dimv, k)
	unique = unique && bd == 0
	full := w
	if bd > 0 {
		full = b.selBatchCoords(w, is, xs[:bd])
	}
	if b.opset >= 16 || unique && b.opset >= 11 {
		var attrs []*onnx.Attribute
		if !unique {
			attrs = append(attrs, attrString("reduction", "add"))
		}
		return []string{b.op("ScatterND", []string{b.zerosLike(x), full, g}, attrs...)}
	}
	// Row numbers of X seen as [P, rest...].
	lead := xs[:bd+k]
	if slices.Contains(lead, -1) {
		b.fail("GatherND: the indexed dims of %v must be fixed at this opset", xs)
		return nil
	}
	strides := make([]int64, len(lead))
	p := int64(1)
	for i := len(lead) - 1; i >= 0; i-- {
		strides[i] = p
		p *= lead[i]
	}
	rows := b.reduceSum(b.op("Mul", []string{full, b.ints(strides...)}), []int64{int64(q - 1)}, false)
	virt := append([]int64{p}, xs[bd+k:]...)
	s := b.selScatterAxis(g, virt, 0, rows, q-1, false, nil, func() string { return b.ints(p) })
	return []string{b.reshapeLike(s, x)}
}

// selBatchCoords prepends to the index tuples w (shape is, the first
// len(batch) axes the batch) their own batch coordinates.
func (b *builder) selBatchCoords(w string, is, batch []int64) string {
	q := len(is)
	if slices.Contains(batch, -1) {
		b.fail("GatherND: the batch dims %v must be fixed", batch)
		return ""
	}
	parts := make([]string, 0, len(batch)+1)
	// The target shape of each coordinate: is with the tuple axis 1.
	target := slices.Clone(is)
	target[q-1] = 1
	tv := b.ints(target...)
	if slices.Contains(target, -1) {
		tv = b.op("Concat", []string{b.slice(b.shape(w), []int64{0}, []int64{int64(q - 1)}, []int64{0}, nil), b.ints(1)}, attrInt("axis", 0))
	}
	for j, d := range batch {
		iota := make([]int64, d)
		for i := range iota {
			iota[i] = int64(i)
		}
		sh := make([]int, q)
		for i := range sh {
			sh[i] = 1
		}
		sh[j] = int(d)
		c := b.op("Constant", nil, attrTensor("value", onnx.FromSlice(iota, sh...)))
		parts = append(parts, b.op("Expand", []string{c, tv}))
	}
	parts = append(parts, w)
	return b.op("Concat", parts, attrInt("axis", int64(q-1)))
}

// whereGrad: Y = cond ? A : B (broadcast), so dA = cond ? dY : 0 and
// dB = cond ? 0 : dY, each summed back to its operand's shape.
func whereGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	cond, g := n.Inputs[0], dy[0]
	zero := b.scalarLike(0, g)
	out := make([]string, 3)
	if need[1] {
		out[1] = b.unbroadcast(b.like(b.op("Where", []string{cond, g, zero}), g), n.Inputs[1])
	}
	if need[2] {
		out[2] = b.unbroadcast(b.like(b.op("Where", []string{cond, zero, g}), g), n.Inputs[2])
	}
	return out
}

// compressGrad: Y keeps the slices of X along an axis (of X flattened
// without one) where cond is true, so dX is dY put back at the positions
// NonZero(cond) lists, zeros elsewhere: the gradient of a gather of
// distinct indices.
func compressGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	if !need[0] {
		return nil
	}
	op := n.Op.(*ops.Compress)
	x, cond, g := n.Inputs[0], n.Inputs[1], dy[0]
	xs, gs := b.shapeOf(x), b.shapeOf(g)
	if b.err != nil {
		return nil
	}
	if b.opset < 9 {
		b.fail("Compress needs ai.onnx opset 9")
		return nil
	}
	nz := b.op("NonZero", []string{cond})
	idx := b.reshape(nz, -1)
	if op.Axis == nil {
		total := numElements(xs)
		if slices.Contains(xs, -1) {
			total = -1
		}
		b.info[idx] = Info{Type: onnx.Int64, Shape: slices.Clone(gs)}
		virt := []int64{total}
		zeros := func([]int64) string {
			if total >= 0 {
				return b.selZeros(b.ints(total), b.typeOf(x))
			}
			return b.reshape(b.zerosLike(x), -1)
		}
		depth := func() string {
			if total >= 0 {
				return b.ints(total)
			}
			return b.reshape(b.op("Size", []string{x}), 1)
		}
		s := b.selScatterAxis(g, virt, 0, idx, 1, true, zeros, depth)
		return []string{b.reshapeLike(s, x)}
	}
	a := b.selAxis(*op.Axis, len(xs), "Compress")
	b.info[idx] = Info{Type: onnx.Int64, Shape: []int64{gs[a]}}
	s := b.selScatterAxis(g, xs, a, idx, 1, true, b.selZerosPermuted(x), b.selDepth(x, a))
	return []string{b.reshapeLike(s, x)}
}

// topKGrad: the values are X's elements at the indices output along the
// axis, so dX is dValues scattered there (distinct positions per line)
// into zeros: ScatterElements (Scatter at opsets 9 and 10).
func topKGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	if !need[0] || dy[0] == "" {
		return nil
	}
	op := n.Op.(*ops.TopK)
	x := n.Inputs[0]
	if len(n.Outputs) < 2 || n.Outputs[1] == "" {
		b.fail("TopK: the gradient needs the indices output")
		return nil
	}
	a := b.selAxis(op.Axis, len(b.shapeOf(x)), "TopK")
	opType := "ScatterElements"
	switch {
	case b.opset < 9:
		b.fail("the gradient of TopK needs ai.onnx opset 9 (Scatter; the model imports %d)", b.opset)
		return nil
	case b.opset < 11:
		opType = "Scatter"
	}
	return []string{b.op(opType, []string{b.zerosLike(x), n.Outputs[1], dy[0]}, attrInt("axis", int64(a)))}
}

// scatterGrad: Y = X with updates written at idx (ScatterElements and the
// older Scatter along an axis, ScatterND by index tuples). Without
// reduction dX = dY with the written positions zeroed (the same scatter
// of zeros into dY) and dUpdates = dY gathered there, for the update that
// was written last to a position only (the one the output kept, as the
// engines run a scatter; ONNX leaves repeated indices undefined without a
// reduction): unless the indices are fixed and distinct, a mask of the
// last writers is computed. With reduction add, dX = dY and every update
// gets dY at its position. The mul, max and min reductions are not
// handled.
func scatterGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	data, idx, upd, g := n.Inputs[0], n.Inputs[1], n.Inputs[2], dy[0]
	var axis int64
	reduction := "none"
	nd := false
	switch op := n.Op.(type) {
	case *ops.Scatter:
		axis = op.Axis
	case *ops.ScatterElements:
		axis, reduction = op.Axis, op.Reduction
	case *ops.ScatterND:
		reduction, nd = op.Reduction, true
	}
	switch reduction {
	case "", "none", "add":
	default:
		b.fail("%s: no gradient for reduction %q", n.OpType, reduction)
		return nil
	}
	xs := b.shapeOf(data)
	if b.err != nil {
		return nil
	}
	a := 0
	if !nd {
		a = b.selAxis(axis, len(xs), n.OpType)
	}
	out := make([]string, 3)
	if need[0] {
		if reduction == "add" {
			out[0] = g
		} else {
			var attrs []*onnx.Attribute
			if !nd {
				attrs = append(attrs, attrInt("axis", int64(a)))
			}
			opType := n.OpType
			if opType == "Scatter" && b.opset >= 11 {
				opType = "ScatterElements"
			}
			out[0] = b.op(opType, []string{g, idx, b.zerosLike(upd)}, attrs...)
		}
	}
	if need[2] {
		switch {
		case nd:
			out[2] = b.op("GatherND", []string{g, idx})
		case b.opset >= 11:
			out[2] = b.op("GatherElements", []string{g, idx}, attrInt("axis", int64(a)))
		default:
			out[2] = b.selGatherElementsOneHot(g, data, idx, a)
		}
		if reduction != "add" {
			if last := b.selLastWriters(data, idx, upd, a, nd); last != "" {
				out[2] = b.op("Where", []string{last, out[2], b.scalarLike(0, g)})
			}
		}
	}
	return out
}

// selLastWriters is a bool mask shaped like the updates of a scatter
// without reduction: true where an update is the last one written to its
// position, the one the output kept ("" when the indices are fixed and
// name distinct positions). Each update's number is scattered the same
// way into -1s and read back: an update finds its own number only if no
// later one overwrote it.
func (b *builder) selLastWriters(data, idx, upd string, a int, nd bool) string {
	if b.selScatterDistinct(data, idx, a, nd) {
		return ""
	}
	is := b.shapeOf(idx)
	lead := is
	if nd {
		lead = is[:len(is)-1]
	}
	numbers := b.selIota(idx, lead, nd)
	if rest := len(b.shapeOf(upd)) - len(lead); nd && rest > 0 {
		axes := make([]int64, rest)
		for i := range axes {
			axes[i] = int64(len(lead) + i)
		}
		numbers = b.op("Expand", []string{b.unsqueeze(numbers, axes...), b.shapeValue(upd)})
	}
	if b.err != nil {
		return ""
	}
	minusOne := func(dt onnx.DataType) string {
		t := floatTensor(dt, []float64{-1})
		if dt == onnx.Int64 {
			t = onnx.FromSlice([]int64{-1})
		}
		t.Shape = []int{1}
		return b.op("ConstantOfShape", []string{b.shapeValue(data)}, attrTensor("value", t))
	}
	var back string
	switch {
	case nd:
		w := b.op("ScatterND", []string{minusOne(onnx.Int64), idx, numbers})
		back = b.op("GatherND", []string{w, idx})
	case b.opset >= 11:
		ax := attrInt("axis", int64(a))
		w := b.op("ScatterElements", []string{minusOne(onnx.Int64), idx, numbers}, ax)
		back = b.op("GatherElements", []string{w, idx}, ax)
	default:
		// Scatter-9 and no GatherElements: the numbers travel as floats
		// (exact below 2²⁴ updates) and are read back by the one-hot sum.
		dt := b.typeOf(data)
		w := b.op("Scatter", []string{minusOne(dt), idx, b.cast(numbers, dt)}, attrInt("axis", int64(a)))
		back = b.cast(b.selGatherElementsOneHot(w, data, idx, a), onnx.Int64)
	}
	return b.op("Equal", []string{back, numbers})
}

// selIota numbers the positions of shape lead (idx's shape, or all but its
// last axis when tuple) 0, 1, ... in row-major order, as int64.
func (b *builder) selIota(idx string, lead []int64, tuple bool) string {
	if !slices.Contains(lead, -1) {
		k := numElements(lead)
		vals := make([]int64, k)
		for i := range vals {
			vals[i] = int64(i)
		}
		sh := make([]int, len(lead))
		for i, d := range lead {
			sh[i] = int(d)
		}
		return b.op("Constant", nil, attrTensor("value", onnx.FromSlice(vals, sh...)))
	}
	if b.opset < 11 {
		b.fail("numbering indices of a free shape needs ai.onnx opset 11 (Range; the model imports %d)", b.opset)
		return ""
	}
	s := b.shape(idx)
	if tuple {
		s = b.slice(s, []int64{0}, []int64{-1}, []int64{0}, nil)
	}
	size := b.op("ReduceProd", []string{s}, attrInt("keepdims", 0))
	r := b.op("Range", []string{b.selInt64(0), size, b.selInt64(1)})
	return b.op("Reshape", []string{r, s})
}

// selScatterDistinct reports whether a scatter's indices are fixed in the
// model and name distinct positions of data.
func (b *builder) selScatterDistinct(data, idx string, a int, nd bool) bool {
	vals, ok := b.selConstInts(idx)
	xs, is := b.shapeOf(data), b.shapeOf(idx)
	if !ok || slices.Contains(xs, -1) || slices.Contains(is, -1) || len(is) == 0 {
		return false
	}
	seen := map[string]bool{}
	if nd {
		k := int(is[len(is)-1])
		if k == 0 || k > len(xs) {
			return false
		}
		for i := 0; i+k <= len(vals); i += k {
			t := slices.Clone(vals[i : i+k])
			for j := range t {
				if t[j] < 0 {
					t[j] += xs[j]
				}
			}
			key := fmt.Sprint(t)
			if seen[key] {
				return false
			}
			seen[key] = true
		}
		return true
	}
	// The position element t writes: t with its axis-a coordinate
	// replaced by the index.
	pos := make([]int64, len(is))
	for i, v := range vals {
		rem := int64(i)
		for d := len(is) - 1; d >= 0; d-- {
			pos[d] = rem % is[d]
			rem /= is[d]
		}
		if v < 0 {
			v += xs[a]
		}
		pos[a] = v
		key := fmt.Sprint(pos)
		if seen[key] {
			return false
		}
		seen[key] = true
	}
	return true
}

// selGatherElementsOneHot is GatherElements(g, idx, axis a) before opset
// 11: the sum over the axis of g · OneHot(idx), g first cropped to idx's
// shape on the other axes.
func (b *builder) selGatherElementsOneHot(g, data, idx string, a int) string {
	xs, ts := b.shapeOf(data), b.shapeOf(idx)
	var st, en, ax []int64
	for i := range xs {
		if i != a && xs[i] != ts[i] {
			if ts[i] < 0 {
				b.fail("Scatter: indices of shape %v for data of %v with free dims", ts, xs)
				return ""
			}
			st, en, ax = append(st, 0), append(en, ts[i]), append(ax, int64(i))
		}
	}
	if len(ax) > 0 {
		g = b.slice(g, st, en, ax, nil)
	}
	w, _ := b.selIndices(idx, []int64{xs[a]}, b.selDimOf(data, a), 1)
	oh := b.selOneHot(w, b.selDepth(data, a)(), b.typeOf(data), a+1)
	p := b.mul(b.unsqueeze(g, int64(a)), oh)
	return b.reduceSum(p, []int64{int64(a + 1)}, false)
}

// cumSumGrad: Y is the running sum of X along the axis, so dX is the
// running sum of dY in the other direction: CumSum with reverse flipped,
// exclusive kept. The axis gets no gradient.
func cumSumGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	if !need[0] {
		return nil
	}
	op := n.Op.(*ops.CumSum)
	return []string{b.op("CumSum", []string{dy[0], n.Inputs[1]},
		attrInt("exclusive", op.Exclusive), attrInt("reverse", 1-op.Reverse))}
}

// reverseSequenceGrad: reversing the first lens[i] steps of each sequence
// is its own inverse (and a permutation), so dX = ReverseSequence(dY).
func reverseSequenceGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	if !need[0] {
		return nil
	}
	op := n.Op.(*ops.ReverseSequence)
	return []string{b.op("ReverseSequence", []string{dy[0], n.Inputs[1]},
		attrInt("batch_axis", op.BatchAxis), attrInt("time_axis", op.TimeAxis))}
}
