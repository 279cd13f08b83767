package metrics

import (
	"math"
	"slices"

	"github.com/deep500/deep500-go/onnx"
)

// Rules of difftest's generator for the operators that move, select or
// reduce elements: shapes that fit the shape inputs (Reshape, Expand,
// Slice, Pad, Tile, ...), indices in range (Gather, Scatter, OneHot, ...),
// axes of the input's rank, and the reductions.

func init() {
	addRules(map[string]opRule{
		"Reshape":           {gen: genReshape},
		"Expand":            {gen: genExpand},
		"Squeeze":           {gen: genSqueeze},
		"Unsqueeze":         {gen: genUnsqueeze},
		"Transpose":         {gen: genTranspose},
		"Concat":            {gen: genConcat},
		"Split":             {gen: genSplit},
		"Slice":             {gen: genSlice},
		"Gather":            {gen: genGather},
		"GatherElements":    {gen: genGatherElements},
		"GatherND":          {gen: genGatherND},
		"ScatterElements":   {gen: genScatterElements},
		"Scatter":           {gen: genScatterElements},
		"ScatterND":         {gen: genScatterND},
		"Tile":              {gen: genTile},
		"Pad":               {gen: genPad},
		"Shape":             {gen: genShape},
		"DepthToSpace":      {gen: genDepthToSpace},
		"SpaceToDepth":      {gen: genSpaceToDepth},
		"Compress":          {gen: genCompress},
		"OneHot":            {gen: genOneHot},
		"EyeLike":           {gen: genEyeLike},
		"ConstantOfShape":   {gen: genConstantOfShape},
		"Range":             {gen: genRange},
		"Trilu":             {gen: genTrilu},
		"ReverseSequence":   {gen: genReverseSequence},
		"CenterCropPad":     {gen: genCenterCropPad},
		"Col2Im":            {gen: genCol2Im},
		"Unique":            {gen: genUnique},
		"Det":               {gen: genDet},
		"NonZero":           {gen: genNonZero},
		"TopK":              {gen: genTopK},
		"CumSum":            {gen: genCumulative},
		"CumProd":           {gen: genCumulative},
		"ArgMax":            {gen: genArgReduce},
		"ArgMin":            {gen: genArgReduce},
		"ReduceSum":         {gen: genReduce},
		"ReduceMean":        {gen: genReduce},
		"ReduceMax":         {gen: genReduce},
		"ReduceMin":         {gen: genReduce},
		"ReduceProd":        {gen: genReduce},
		"ReduceL1":          {gen: genReduce},
		"ReduceL2":          {gen: genReduce},
		"ReduceLogSum":      {gen: genReduce},
		"ReduceLogSumExp":   {gen: genReduce},
		"ReduceSumSquare":   {gen: genReduce},
		"TensorScatter":     {gen: genTensorScatter},
		"Resize":            {gen: genResize},
		"Upsample":          {gen: genResize},
		"GridSample":        {gen: genGridSample},
		"AffineGrid":        {gen: genAffineGrid},
		"NonMaxSuppression": {gen: genNMS},
		"Constant":          {gen: genConstant},
	})
}

// negAxes reports whether the operator version takes negative axes
// (ONNX opset 11 added them to most operators).
func (g *gen) negAxes() bool { return g.since >= 11 }

// genReshape: a new shape with the same element count, with a -1 and 0s
// (copy the input's dimension) at times.
// https://onnx.ai/onnx/operators/onnx__Reshape.html
func genReshape(g *gen) error {
	dt := g.T("T")
	in := g.dims(g.between(0, 4), 1, 4)
	g.in(0, g.rand(dt, in...))
	// Factor the element count into up to 4 dimensions.
	n := onnx.NumElements(in)
	var out []int
	for rest := n; ; {
		if rest == 1 || len(out) == 3 || g.chance(0.3) {
			if rest > 1 || g.coin() {
				out = append(out, rest)
			}
			break
		}
		var divs []int
		for d := 2; d <= rest; d++ {
			if rest%d == 0 {
				divs = append(divs, d)
			}
		}
		d := pick(g, divs...)
		out = append(out, d)
		rest /= d
	}
	g.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	shape := toInt64s(out)
	if len(shape) > 0 && g.coin() {
		shape[g.intn(len(shape))] = -1
	}
	for i := range shape {
		if i < len(in) && shape[i] == int64(in[i]) && g.chance(0.3) {
			shape[i] = 0 // copies the input's dimension (allowzero=0)
		}
	}
	if g.since < 5 {
		g.attrInts("shape", shape...)
		return nil
	}
	g.indexIn(1, i64s(shape...))
	if g.since >= 14 && g.chance(0.2) && !slices.Contains(shape, 0) {
		g.attrInt("allowzero", 1)
	}
	return nil
}

// genExpand: the shape broadcasts with the input's both ways.
// https://onnx.ai/onnx/operators/onnx__Expand.html
func genExpand(g *gen) error {
	dt := g.T("T")
	shapes := g.broadcastShapes(2, g.between(0, 4))
	g.in(0, g.rand(dt, shapes[0]...))
	g.indexIn(1, i64s(toInt64s(shapes[1])...))
	return nil
}

// withOnes draws a shape of rank r with some dimensions of size 1 and
// returns those dimensions.
func (g *gen) withOnes(r int) (shape []int, ones []int) {
	shape = g.dims(r, 2, 4)
	for i := range shape {
		if g.chance(0.4) {
			shape[i] = 1
			ones = append(ones, i)
		}
	}
	return shape, ones
}

// genSqueeze: https://onnx.ai/onnx/operators/onnx__Squeeze.html
func genSqueeze(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 4)
	shape, ones := g.withOnes(r)
	g.in(0, g.rand(dt, shape...))
	if len(ones) == 0 || g.chance(0.25) {
		return nil // every dimension of size 1
	}
	g.r.Shuffle(len(ones), func(i, j int) { ones[i], ones[j] = ones[j], ones[i] })
	axes := toInt64s(ones[:g.between(1, len(ones))])
	for i := range axes {
		if g.negAxes() && g.coin() {
			axes[i] -= int64(r)
		}
	}
	g.listBefore13("axes", axes)
	return nil
}

// listBefore13 sets v as the attribute name before version 13 and as
// input 1 from it on, where Squeeze, Unsqueeze and Split moved it.
func (g *gen) listBefore13(name string, v []int64) {
	if g.since < 13 {
		g.attrInts(name, v...)
	} else {
		g.indexIn(1, i64s(v...))
	}
}

// genUnsqueeze: https://onnx.ai/onnx/operators/onnx__Unsqueeze.html
func genUnsqueeze(g *gen) error {
	dt := g.T("T")
	r := g.between(0, 3)
	g.in(0, g.rand(dt, g.dims(r, 1, 4)...))
	k := g.between(1, 2)
	axes := g.distinctAxes(r+k, k, g.negAxes())
	g.listBefore13("axes", axes)
	return nil
}

// genTranspose: https://onnx.ai/onnx/operators/onnx__Transpose.html
func genTranspose(g *gen) error {
	dt := g.T("T")
	r := g.between(0, 5)
	g.in(0, g.rand(dt, g.dims(r, 1, 4)...))
	if g.coin() {
		g.attrInts("perm", toInt64s(g.r.Perm(r))...)
	}
	return nil
}

// genConcat: https://onnx.ai/onnx/operators/onnx__Concat.html
func genConcat(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 4)
	base := g.dims(r, 1, 4)
	axis, a := g.axisAndPos(r, g.negAxes())
	for i := range g.between(1, 3) {
		s := append([]int{}, base...)
		s[a] = g.between(0, 3)
		if i == 0 && s[a] == 0 {
			s[a] = 1
		}
		g.in(i, g.rand(dt, s...))
	}
	g.attrInt("axis", int64(axis))
	return nil
}

// genSplit: by sizes (attribute or input), into equal parts, or (from
// version 18) by num_outputs with a smaller last part.
// https://onnx.ai/onnx/operators/onnx__Split.html
func genSplit(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 3)
	shape := g.dims(r, 1, 5)
	axis, a := g.axisAndPos(r, g.negAxes())
	// axis is written, where the schema has it, whenever it is not the
	// default 0, and by a coin otherwise.
	if g.hasAttr("axis") && (g.coin() || axis != 0) {
		g.attrInt("axis", int64(axis))
	}
	dim := shape[a]
	switch {
	case g.since >= 18 && g.coin():
		n := g.between(1, dim)
		g.in(0, g.rand(dt, shape...))
		g.attrInt("num_outputs", int64(n))
		// parts of ceil(dim/n) and a smaller last one; fewer outputs
		// when the parts run out first.
		part := (dim + n - 1) / n
		g.outputs((dim + part - 1) / part)
		return nil
	case g.coin():
		// sizes, some of them 0
		var sizes []int64
		for rest := dim; rest > 0; {
			s := g.between(1, rest)
			sizes = append(sizes, int64(s))
			rest -= s
		}
		if g.since >= 13 && g.chance(0.2) {
			sizes = append(sizes, 0)
		}
		g.in(0, g.rand(dt, shape...))
		g.listBefore13("split", sizes)
		g.outputs(len(sizes))
		return nil
	}
	// equal parts: the number of outputs divides the dimension
	var divs []int
	for d := 1; d <= dim; d++ {
		if dim%d == 0 {
			divs = append(divs, d)
		}
	}
	n := pick(g, divs...)
	g.in(0, g.rand(dt, shape...))
	if g.since >= 18 {
		g.attrInt("num_outputs", int64(n))
	}
	g.outputs(n)
	return nil
}

// genSlice: starts and ends in range, beyond it (clamped), negative,
// with steps of either sign. https://onnx.ai/onnx/operators/onnx__Slice.html
func genSlice(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 4)
	shape := g.dims(r, 1, 5)
	g.in(0, g.rand(dt, shape...))
	k := g.between(1, r)
	axes := g.distinctAxes(r, k, g.negAxes())
	starts, ends, steps := make([]int64, k), make([]int64, k), make([]int64, k)
	for i, ax := range axes {
		if ax < 0 {
			ax += int64(r)
		}
		d := int64(shape[ax])
		steps[i] = 1
		if g.since >= 10 && g.coin() {
			steps[i] = pick(g, int64(-1), 2, -2, 3)
		}
		starts[i] = int64(g.between(int(-d), int(d)))
		ends[i] = int64(g.between(int(-d), int(d)))
		switch g.intn(6) {
		case 0:
			ends[i] = math.MaxInt64
			if steps[i] < 0 {
				ends[i] = math.MinInt64
			}
		case 1:
			starts[i] = d + 3 // beyond the end: clamped
		}
	}
	withAxes := g.coin() || g.since < 10
	if g.since < 10 {
		g.attrInts("starts", starts...)
		g.attrInts("ends", ends...)
		if withAxes {
			g.attrInts("axes", axes...)
		}
		return nil
	}
	it := g.T("Tind")
	if it == onnx.Int32 {
		for i := range ends {
			ends[i] = max(min(ends[i], math.MaxInt32), math.MinInt32)
		}
	}
	g.indexIn(1, ints(it, starts))
	g.indexIn(2, ints(it, ends))
	// Without axes the values apply to axes 0..k-1: still valid, as
	// starts and ends are clamped to each dimension.
	useSteps := slices.ContainsFunc(steps, func(s int64) bool { return s != 1 }) || g.chance(0.2)
	if withAxes {
		g.indexIn(3, ints(it, axes))
	}
	if useSteps {
		if !withAxes {
			g.setInput(3, nil)
		}
		g.indexIn(4, ints(it, steps))
	}
	return nil
}

// indexValues draws n indices into a dimension of size d, negative ones
// at times where neg.
func (g *gen) indexValues(n, d int, neg bool) []int64 {
	out := make([]int64, n)
	for i := range out {
		v := g.intn(d)
		if neg && g.chance(0.3) {
			v -= d
		}
		out[i] = int64(v)
	}
	return out
}

// genGather: https://onnx.ai/onnx/operators/onnx__Gather.html
func genGather(g *gen) error {
	dt, it := g.T("T"), g.T("Tind")
	r := g.between(1, 3)
	shape := g.dims(r, 1, 4)
	axis, a := g.axisAndPos(r, g.negAxes())
	g.in(0, g.rand(dt, shape...))
	ishape := g.dims(g.between(0, 2), 1, 3)
	g.in(1, ints(it, g.indexValues(onnx.NumElements(ishape), shape[a], g.negAxes()), ishape...))
	if axis != 0 || g.coin() {
		g.attrInt("axis", int64(axis))
	}
	return nil
}

// genGatherElements: https://onnx.ai/onnx/operators/onnx__GatherElements.html
func genGatherElements(g *gen) error {
	dt, it := g.T("T"), g.T("Tind")
	r := g.between(1, 3)
	shape := g.dims(r, 1, 4)
	axis, a := g.axisAndPos(r, true)
	ishape := make([]int, r)
	for i := range ishape {
		ishape[i] = g.between(1, shape[i])
	}
	ishape[a] = g.between(1, 4)
	g.in(0, g.rand(dt, shape...))
	g.in(1, ints(it, g.indexValues(onnx.NumElements(ishape), shape[a], true), ishape...))
	g.attrInt("axis", int64(axis))
	return nil
}

// genGatherND: https://onnx.ai/onnx/operators/onnx__GatherND.html
func genGatherND(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 4)
	shape := g.dims(r, 1, 4)
	b := 0
	if g.since >= 12 && r > 1 && g.coin() {
		b = g.between(1, r-1)
		g.attrInt("batch_dims", int64(b))
	}
	m := g.between(1, r-b)
	ishape := append(append(append([]int{}, shape[:b]...), g.dims(g.between(0, 1), 1, 3)...), m)
	n := onnx.NumElements(ishape) / m
	idx := make([]int64, 0, n*m)
	for range n {
		for j := range m {
			idx = append(idx, g.indexValues(1, shape[b+j], true)...)
		}
	}
	g.in(0, g.rand(dt, shape...))
	g.in(1, ints(onnx.Int64, idx, ishape...))
	return nil
}

// genScatterElements: indices unique along the axis, so the result does
// not depend on the order of the writes (except with a reduction).
// https://onnx.ai/onnx/operators/onnx__ScatterElements.html
func genScatterElements(g *gen) error {
	dt, it := g.T("T"), g.T("Tind")
	r := g.between(1, 3)
	shape := g.dims(r, 1, 4)
	axis, a := g.axisAndPos(r, g.negAxes())
	reduction := "none"
	if g.hasAttr("reduction") && g.coin() {
		reduction = pick(g, "add", "mul")
		if g.since >= 18 {
			reduction = pick(g, "add", "mul", "max", "min")
		}
		g.attrString("reduction", reduction)
	}
	ishape := make([]int, r)
	for i := range ishape {
		ishape[i] = g.between(1, shape[i])
	}
	ishape[a] = g.between(1, shape[a])
	idx := make([]int64, onnx.NumElements(ishape))
	// each line along the axis gets distinct targets
	strides := rowStrides(ishape)
	for i := range idx {
		pos := unravel(i, ishape)
		if pos[a] != 0 {
			continue
		}
		perm := g.r.Perm(shape[a])
		for j := range ishape[a] {
			v := int64(perm[j])
			if g.negAxes() && g.chance(0.3) {
				v -= int64(shape[a])
			}
			idx[i+j*strides[a]] = v
		}
	}
	g.in(0, g.rand(dt, shape...))
	g.in(1, ints(it, idx, ishape...))
	g.in(2, g.rand(dt, ishape...))
	if axis != 0 || g.coin() {
		g.attrInt("axis", int64(axis))
	}
	return nil
}

func rowStrides(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// genScatterND: distinct index tuples.
// https://onnx.ai/onnx/operators/onnx__ScatterND.html
func genScatterND(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 3)
	shape := g.dims(r, 1, 4)
	k := g.between(1, r)
	cells := onnx.NumElements(shape[:k])
	n := g.between(1, cells)
	perm := g.r.Perm(cells)[:n]
	idx := make([]int64, 0, n*k)
	for _, p := range perm {
		for _, v := range unravel(p, shape[:k]) {
			if g.chance(0.2) {
				v -= shape[len(idx)%k]
			}
			idx = append(idx, int64(v))
		}
	}
	if g.hasAttr("reduction") && g.coin() {
		red := pick(g, "add", "mul")
		if g.since >= 18 {
			red = pick(g, "add", "mul", "max", "min")
		}
		g.attrString("reduction", red)
	}
	g.in(0, g.rand(dt, shape...))
	g.in(1, ints(onnx.Int64, idx, n, k))
	g.in(2, g.rand(dt, append([]int{n}, shape[k:]...)...))
	return nil
}

// genTile: https://onnx.ai/onnx/operators/onnx__Tile.html
func genTile(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 3)
	g.in(0, g.rand(dt, g.dims(r, 1, 3)...))
	reps := make([]int64, r)
	for i := range reps {
		reps[i] = int64(g.between(0, 3))
		if reps[i] == 0 && g.coin() {
			reps[i] = 1
		}
	}
	g.indexIn(1, i64s(reps...))
	return nil
}

// genPad: each mode, negative pads (cropping) where the mode allows,
// the axes input from version 18.
// https://onnx.ai/onnx/operators/onnx__Pad.html
func genPad(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 4)
	shape := g.dims(r, 1, 4)
	modes := []string{"constant", "reflect", "edge"}
	if g.since >= 19 {
		modes = append(modes, "wrap")
	}
	mode := pick(g, modes...)
	axes := make([]int64, r)
	for i := range axes {
		axes[i] = int64(i)
	}
	useAxes := g.since >= 18 && g.coin()
	if useAxes {
		axes = g.distinctAxes(r, g.between(1, r), true)
	}
	pads := make([]int64, 2*len(axes))
	for i, ax := range axes {
		if ax < 0 {
			ax += int64(r)
		}
		d := shape[ax]
		for _, j := range []int{i, len(axes) + i} {
			hi := 2
			if mode == "reflect" {
				hi = min(2, d-1)
			}
			lo := 0
			if mode != "reflect" && g.chance(0.2) {
				lo = -(d - 1) / 2
			}
			pads[j] = int64(g.between(lo, hi))
		}
	}
	g.in(0, g.rand(dt, shape...))
	if g.since < 11 {
		g.attrInts("pads", pads...)
		if mode != "constant" || g.coin() {
			g.attrString("mode", mode)
		}
		if mode == "constant" && g.coin() {
			g.attrFloat("value", 1.5)
		}
		return nil
	}
	if mode != "constant" || g.coin() {
		g.attrString("mode", mode)
	}
	g.indexIn(1, i64s(pads...))
	if mode == "constant" && g.coin() {
		g.in(2, scalarOf(dt, 2))
		if dt == onnx.String {
			g.in(2, &onnx.Tensor{Type: onnx.String, Shape: []int{}, Data: []string{"pad"}})
		}
	}
	if useAxes {
		g.indexIn(3, ints(g.T("Tind"), axes))
	}
	return nil
}

// genShape: start and end from version 15, negative and out of range at
// times. https://onnx.ai/onnx/operators/onnx__Shape.html
func genShape(g *gen) error {
	r := g.between(0, 4)
	g.in(0, g.rand(g.T("T"), g.dims(r, 1, 4)...))
	if g.since >= 15 {
		g.maybeInt("start", int64(g.between(-r-1, r+1)))
		g.maybeInt("end", int64(g.between(-r-1, r+1)))
	}
	return nil
}

// genDepthToSpace: https://onnx.ai/onnx/operators/onnx__DepthToSpace.html
func genDepthToSpace(g *gen) error {
	b := g.between(1, 3)
	g.in(0, g.rand(g.T("T"), g.between(1, 2), b*b*g.between(1, 2), g.between(1, 3), g.between(1, 3)))
	g.attrInt("blocksize", int64(b))
	if g.since >= 11 && g.coin() {
		g.attrString("mode", pick(g, "DCR", "CRD"))
	}
	return nil
}

// genSpaceToDepth: https://onnx.ai/onnx/operators/onnx__SpaceToDepth.html
func genSpaceToDepth(g *gen) error {
	b := g.between(1, 3)
	g.in(0, g.rand(g.T("T"), g.between(1, 2), g.between(1, 3), b*g.between(1, 3), b*g.between(1, 2)))
	g.attrInt("blocksize", int64(b))
	return nil
}

// genCompress: a condition no longer than the axis (or the flattened
// input). https://onnx.ai/onnx/operators/onnx__Compress.html
func genCompress(g *gen) error {
	r := g.between(1, 3)
	shape := g.dims(r, 1, 4)
	g.in(0, g.rand(g.T("T"), shape...))
	n := onnx.NumElements(shape)
	if g.coin() {
		axis, a := g.axisAndPos(r, g.negAxes())
		n = shape[a]
		g.attrInt("axis", int64(axis))
	}
	g.in(1, g.randIn(onnx.Bool, 0, 1, g.between(1, n)))
	return nil
}

// genOneHot: indices of a numeric type, some negative and some out of
// range (all off). https://onnx.ai/onnx/operators/onnx__OneHot.html
func genOneHot(g *gen) error {
	t1, t2, t3 := g.T("T1"), g.T("T2"), g.T("T3")
	depth := g.between(1, 5)
	ishape := g.dims(g.between(1, 2), 1, 3)
	lo := -depth
	if isUnsigned(t1) || g.since < 11 {
		lo = 0
	}
	g.in(0, g.randIn(t1, float64(lo), float64(depth), ishape...))
	g.in(1, pick(g, scalarOf(t2, float64(depth)), tensorOf(t2, []float64{float64(depth)}, 1)))
	values := g.rand(t3, 2)
	if t3 == onnx.String {
		values = &onnx.Tensor{Type: onnx.String, Shape: []int{2}, Data: []string{"off", "on"}}
	}
	g.in(2, values)
	r := len(ishape)
	g.maybeInt("axis", int64(g.between(-r-1, r)))
	return nil
}

// genEyeLike: https://onnx.ai/onnx/operators/onnx__EyeLike.html
func genEyeLike(g *gen) error {
	rows, cols := g.between(1, 5), g.between(1, 5)
	g.in(0, g.rand(g.T("T1"), rows, cols))
	if g.typeStr["T1"] != g.typeStr["T2"] || g.coin() {
		g.attrInt("dtype", int64(g.T("T2")))
	}
	g.maybeInt("k", int64(g.between(-rows, cols)))
	return nil
}

// genConstantOfShape: https://onnx.ai/onnx/operators/onnx__ConstantOfShape.html
func genConstantOfShape(g *gen) error {
	shape := toInt64s(g.dims(g.between(0, 3), 0, 4))
	g.indexIn(0, i64s(shape...))
	t2 := g.T("T2")
	if t2 == onnx.Float && g.coin() {
		return nil // the default: float 0
	}
	v := g.rand(t2, 1)
	if t2 == onnx.String {
		v = &onnx.Tensor{Type: onnx.String, Shape: []int{1}, Data: []string{"s"}}
	}
	return g.attrTensor("value", v)
}

// genRange: https://onnx.ai/onnx/operators/onnx__Range.html
func genRange(g *gen) error {
	dt := g.T("T")
	start := float64(g.between(-5, 5))
	delta := float64(pick(g, 1, 2, 3, -1, -2))
	if dt.IsFloat() {
		start = roundTo(g.uniform(-5, 5), 0.25)
		delta = pick(g, 0.5, 1.25, -0.75, 0.3)
	}
	limit := start + delta*float64(g.between(-1, 8)) + pick(g, 0, 0.5)
	if !dt.IsFloat() {
		limit = math.Trunc(limit)
	}
	g.in(0, scalarOf(dt, start))
	g.in(1, scalarOf(dt, limit))
	g.in(2, scalarOf(dt, delta))
	return nil
}

// genTrilu: https://onnx.ai/onnx/operators/onnx__Trilu.html
func genTrilu(g *gen) error {
	shape := append(g.dims(g.between(0, 2), 1, 3), g.between(1, 5), g.between(1, 5))
	g.in(0, g.rand(g.T("T"), shape...))
	if g.coin() {
		g.indexIn(1, ints(onnx.Int64, []int64{int64(g.between(-5, 5))}, []int{}...))
	}
	g.maybeInt("upper", int64(g.intn(2)))
	return nil
}

// genReverseSequence: https://onnx.ai/onnx/operators/onnx__ReverseSequence.html
func genReverseSequence(g *gen) error {
	time, batch := g.between(1, 5), g.between(1, 4)
	shape := append([]int{time, batch}, g.dims(g.between(0, 2), 1, 3)...)
	if g.coin() {
		shape[0], shape[1] = batch, time
		g.attrInt("batch_axis", 0)
		g.attrInt("time_axis", 1)
	}
	g.in(0, g.rand(g.T("T"), shape...))
	lens := make([]int64, batch)
	for i := range lens {
		lens[i] = int64(g.between(1, time))
	}
	g.in(1, i64s(lens...))
	return nil
}

// genCenterCropPad: https://onnx.ai/onnx/operators/onnx__CenterCropPad.html
func genCenterCropPad(g *gen) error {
	r := g.between(1, 3)
	g.in(0, g.rand(g.T("T"), g.dims(r, 1, 5)...))
	n := r
	if g.coin() {
		axes := g.distinctAxes(r, g.between(1, r), true)
		g.attrInts("axes", axes...)
		n = len(axes)
	}
	g.indexIn(1, ints(g.T("Tind"), toInt64s(g.dims(n, 1, 6))))
	return nil
}

// genCol2Im: https://onnx.ai/onnx/operators/onnx__Col2Im.html
func genCol2Im(g *gen) error {
	w := g.newWindow(2, true, false)
	blocks := 1
	for i := range 2 {
		blocks *= w.outSize(i)
	}
	c := g.between(1, 2)
	g.in(0, g.rand(g.T("T"), g.between(1, 2), c*w.kernel[0]*w.kernel[1], blocks))
	g.indexIn(1, i64s(toInt64s(w.in)...))
	g.indexIn(2, i64s(toInt64s(w.kernel)...))
	w.attrs(g, false)
	return nil
}

// genUnique: repeated values (from a coarse grid), along an axis or
// flattened, sorted or in order of appearance.
// https://onnx.ai/onnx/operators/onnx__Unique.html
func genUnique(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 3)
	shape := g.dims(r, 1, 4)
	x := g.grid(dt, -2, 2, 1, shape...)
	if dt == onnx.String || dt == onnx.Bool {
		x = g.rand(dt, shape...)
	}
	g.in(0, x)
	if g.coin() {
		g.attrInt("axis", int64(g.axis(r, true)))
	}
	g.maybeInt("sorted", int64(g.intn(2)))
	g.outputs(g.between(1, 4))
	return nil
}

// genDet: https://onnx.ai/onnx/operators/onnx__Det.html
func genDet(g *gen) error {
	n := g.between(1, 4)
	g.in(0, g.rand(g.T("T"), append(g.dims(g.between(0, 2), 1, 3), n, n)...))
	return nil
}

// genNonZero: zeros among the values.
func genNonZero(g *gen) error {
	dt := g.T("T")
	shape := g.dims(g.between(0, 3), 1, 4)
	x := g.grid(dt, -1, 1, 1, shape...)
	if dt == onnx.Bool || dt == onnx.String {
		x = g.rand(dt, shape...)
	}
	g.in(0, x)
	return nil
}

// genTopK: sorted output only (the order of an unsorted one is not
// defined). https://onnx.ai/onnx/operators/onnx__TopK.html
func genTopK(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 3)
	shape := g.dims(r, 1, 5)
	axis, a := g.axisAndPos(r, g.negAxes())
	g.in(0, g.rand(dt, shape...))
	k := int64(g.between(0, shape[a]))
	if g.since < 10 {
		g.attrInt("k", max(k, 1))
	} else {
		g.indexIn(1, i64s(k))
	}
	if axis != -1 || g.coin() {
		g.attrInt("axis", int64(axis))
	}
	if g.since >= 11 {
		g.maybeInt("largest", int64(g.intn(2)))
	}
	return nil
}

// genCumulative: CumSum and CumProd, the axis a scalar input.
// https://onnx.ai/onnx/operators/onnx__CumSum.html
func genCumulative(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 3)
	x := g.rand(dt, g.dims(r, 1, 5)...)
	if g.s.OpType == "CumProd" {
		x = g.grid(dt, -2, 2, 0.5, x.Shape...)
		if !dt.IsFloat() {
			x = g.randIn(dt, 0, 3, x.Shape...)
		}
	}
	g.in(0, x)
	g.indexIn(1, ints(g.T("T2"), []int64{int64(g.axis(r, true))}, []int{}...))
	g.maybeInt("exclusive", int64(g.intn(2)))
	g.maybeInt("reverse", int64(g.intn(2)))
	return nil
}

// genArgReduce: ArgMax and ArgMin, with ties (grid values) and
// select_last_index. https://onnx.ai/onnx/operators/onnx__ArgMax.html
func genArgReduce(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 4)
	shape := g.dims(r, 1, 4)
	x := g.grid(dt, -2, 2, 0.5, shape...)
	if !dt.IsFloat() {
		x = g.randIn(dt, 0, 5, shape...)
	}
	g.in(0, x)
	g.maybeInt("axis", int64(g.axis(r, g.negAxes())))
	g.maybeInt("keepdims", int64(g.intn(2)))
	if g.since >= 12 {
		g.maybeInt("select_last_index", int64(g.intn(2)))
	}
	return nil
}

// axesAsInput reports whether a reduction takes its axes as an input
// (ReduceSum from version 13, the others from 18).
func (g *gen) axesAsInput() bool {
	if g.s.OpType == "ReduceSum" {
		return g.since >= 13
	}
	return g.since >= 18
}

// genReduce: the Reduce* operators: axes as attribute or input (none,
// some, or empty with noop_with_empty_axes), keepdims, values in each
// operator's domain. https://onnx.ai/onnx/operators/onnx__ReduceSum.html
func genReduce(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 4)
	shape := g.dims(r, 1, 4)
	var x *onnx.Tensor
	switch g.s.OpType {
	case "ReduceLogSum":
		x = g.randIn(dt, 0.1, 3, shape...)
	case "ReduceProd":
		x = g.grid(dt, -2, 2, 0.5, shape...)
		if !dt.IsFloat() {
			x = g.randIn(dt, -2, 3, shape...)
		}
	case "ReduceSumSquare", "ReduceL2":
		x = g.rand(dt, shape...)
		if !dt.IsFloat() {
			x = g.randIn(dt, -5, 5, shape...)
		}
	default:
		x = g.rand(dt, shape...)
	}
	g.in(0, x)
	g.maybeInt("keepdims", int64(g.intn(2)))
	var axes []int64
	with := g.coin()
	if with {
		axes = g.distinctAxes(r, g.between(1, r), g.negAxes())
	}
	if !g.axesAsInput() {
		if with {
			g.attrInts("axes", axes...)
		}
		return nil
	}
	switch {
	case with:
		g.indexIn(1, i64s(axes...))
	case g.coin():
		g.indexIn(1, i64s()) // empty: reduce all, or nothing with noop_with_empty_axes
		g.maybeInt("noop_with_empty_axes", int64(g.intn(2)))
	default:
		g.maybeInt("noop_with_empty_axes", int64(g.intn(2)))
	}
	return nil
}

// genTensorScatter: updates written at per-batch positions of a cache,
// linearly (in range) or circularly.
// https://onnx.ai/onnx/operators/onnx__TensorScatter.html
func genTensorScatter(g *gen) error {
	dt := g.T("T")
	r := g.between(3, 4)
	shape := g.dims(r, 1, 3)
	axis := g.between(1, r-1)
	if axis == r-2 && g.coin() {
		axis = -2
	} else {
		g.attrInt("axis", int64(axis))
	}
	a := axisPos(axis, r)
	maxSeq := g.between(2, 6)
	shape[a] = maxSeq
	seq := g.between(1, maxSeq)
	ushape := append([]int{}, shape...)
	ushape[a] = seq
	mode := pick(g, "linear", "circular")
	if mode == "circular" || g.coin() {
		g.attrString("mode", mode)
	}
	g.in(0, g.rand(dt, shape...))
	g.in(1, g.rand(dt, ushape...))
	if g.coin() {
		idx := make([]int64, shape[0])
		for i := range idx {
			if mode == "linear" {
				idx[i] = int64(g.between(0, maxSeq-seq))
			} else {
				idx[i] = int64(g.between(0, maxSeq-1))
			}
		}
		g.in(2, i64s(idx...))
	}
	return nil
}

// genResize: Resize and Upsample: scales or sizes, every mode and
// coordinate transformation the version has, axes and aspect-ratio
// policies from version 18. https://onnx.ai/onnx/operators/onnx__Resize.html
func genResize(g *gen) error {
	dt := g.inT(0)
	r := pick(g, 4, 4, 3, 2)
	shape := append([]int{g.between(1, 2), g.between(1, 2)}, g.dims(r-2, 1, 4)...)
	if r == 2 {
		shape = g.dims(2, 1, 4)
	}
	g.in(0, g.rand(dt, shape...))
	scales := make([]float64, r)
	for i := range scales {
		scales[i] = 1
		if i >= r-2 {
			scales[i] = pick(g, 0.5, 0.75, 1.5, 2, 3)
			if g.s.OpType == "Upsample" {
				scales[i] = pick(g, 1, 1.5, 2, 3) // at least 1
			}
		}
	}
	modes := []string{"nearest", "linear"}
	if g.s.OpType == "Resize" && g.since >= 11 {
		modes = append(modes, "cubic")
	}
	mode := pick(g, modes...)
	if mode != "nearest" || g.coin() {
		g.attrString("mode", mode)
	}
	if g.s.OpType == "Upsample" || g.since < 11 {
		if g.since < 9 {
			g.attrFloats("scales", scales...)
		} else {
			g.indexIn(1, tensorOf(onnx.Float, scales, r))
		}
		return nil
	}
	ctms := []string{"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize"}
	if g.since < 13 {
		ctms = append(ctms, "tf_half_pixel_for_nn")
	}
	if g.since >= 19 {
		ctms = append(ctms, "half_pixel_symmetric")
	}
	ctm := "half_pixel"
	if g.coin() {
		ctm = pick(g, ctms...)
		g.attrString("coordinate_transformation_mode", ctm)
	}
	if mode == "nearest" && g.coin() {
		g.attrString("nearest_mode", pick(g, "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"))
	}
	if mode == "cubic" {
		g.maybeFloat("cubic_coeff_a", pick(g, -0.5, -0.75))
		g.maybeInt("exclude_outside", int64(g.intn(2)))
	}
	if g.since >= 18 && mode != "nearest" && g.chance(0.3) {
		g.attrInt("antialias", 1)
	}
	// roi is read by tf_crop_and_resize only; version 11 requires the
	// input anyway (empty, as exporters write it).
	roiType := g.T("T2")
	switch {
	case ctm == "tf_crop_and_resize":
		roi := make([]float64, 2*r)
		for i := range r {
			roi[i], roi[r+i] = 0, 1
			if i >= r-2 {
				roi[i], roi[r+i] = pick(g, 0, 0.25), pick(g, 0.75, 1, 1.25)
			}
		}
		g.indexIn(1, tensorOf(roiType, roi, 2*r))
		if g.coin() {
			g.attrFloat("extrapolation_value", 0.5)
		}
	case g.since == 11 || g.coin():
		g.indexIn(1, tensorOf(roiType, nil, 0))
	default:
		g.setInput(1, nil)
	}
	if g.coin() {
		sizes := make([]int64, r)
		for i := range sizes {
			sizes[i] = int64(shape[i])
			if i >= r-2 {
				sizes[i] = int64(g.between(1, 6))
			}
		}
		if g.since >= 18 && ctm != "tf_crop_and_resize" && g.chance(0.3) {
			g.attrString("keep_aspect_ratio_policy", pick(g, "stretch", "not_larger", "not_smaller"))
		}
		if g.since == 11 {
			g.indexIn(2, tensorOf(onnx.Float, nil, 0)) // required, and empty when sizes are given
		} else {
			g.setInput(2, nil)
		}
		g.indexIn(3, i64s(sizes...))
		return nil
	}
	g.indexIn(2, tensorOf(onnx.Float, scales, r))
	return nil
}

// genGridSample: 2-D (4-D input) always, N-D from version 20; grid
// points a little beyond [-1, 1] to exercise the padding modes.
// https://onnx.ai/onnx/operators/onnx__GridSample.html
func genGridSample(g *gen) error {
	dt := g.T("T1")
	sp := 2
	if g.since >= 20 && g.chance(0.3) {
		sp = 3
	}
	n, c := g.between(1, 2), g.between(1, 2)
	in := g.dims(sp, 1, 4)
	out := g.dims(sp, 1, 3)
	g.in(0, g.rand(dt, append([]int{n, c}, in...)...))
	g.in(1, g.randIn(g.T("T2"), -1.2, 1.2, append(append([]int{n}, out...), sp)...))
	modes := []string{"bilinear", "nearest", "bicubic"}
	if g.since >= 20 {
		modes = []string{"linear", "nearest", "cubic"}
	}
	mode := pick(g, modes...)
	if sp == 3 && (mode == "cubic") {
		mode = "linear"
	}
	if g.coin() || mode != modes[0] {
		g.attrString("mode", mode)
	}
	g.maybeInt("align_corners", int64(g.intn(2)))
	if g.coin() {
		g.attrString("padding_mode", pick(g, "zeros", "border", "reflection"))
	}
	return nil
}

// genAffineGrid: https://onnx.ai/onnx/operators/onnx__AffineGrid.html
func genAffineGrid(g *gen) error {
	dt := g.T("T1")
	n := g.between(1, 2)
	if g.coin() {
		g.in(0, g.randIn(dt, -1, 1, n, 2, 3))
		g.indexIn(1, i64s(int64(n), int64(g.between(1, 3)), int64(g.between(1, 4)), int64(g.between(1, 4))))
	} else {
		g.in(0, g.randIn(dt, -1, 1, n, 3, 4))
		g.indexIn(1, i64s(int64(n), 1, int64(g.between(1, 3)), int64(g.between(1, 3)), int64(g.between(1, 3))))
	}
	g.maybeInt("align_corners", int64(g.intn(2)))
	return nil
}

// genNMS: boxes in corner or center form, distinct scores.
// https://onnx.ai/onnx/operators/onnx__NonMaxSuppression.html
func genNMS(g *gen) error {
	b, classes, boxes := g.between(1, 2), g.between(1, 3), g.between(1, 6)
	center := g.coin()
	vals := make([]float64, 0, b*boxes*4)
	for range b * boxes {
		x, y := g.uniform(0, 4), g.uniform(0, 4)
		w, h := g.uniform(0.5, 3), g.uniform(0.5, 3)
		if center {
			vals = append(vals, x, y, w, h)
		} else if g.coin() {
			vals = append(vals, y, x, y+h, x+w)
		} else {
			vals = append(vals, y+h, x+w, y, x) // corners in either order
		}
	}
	g.in(0, tensorOf(onnx.Float, vals, b, boxes, 4))
	g.in(1, g.randIn(onnx.Float, 0, 1, b, classes, boxes))
	if center {
		g.attrInt("center_point_box", 1)
	}
	if g.coin() {
		g.indexIn(2, i64s(int64(g.between(0, boxes))))
		if g.coin() {
			g.indexIn(3, tensorOf(onnx.Float, []float64{pick(g, 0.0, 0.3, 0.5)}, 1))
			if g.coin() {
				g.indexIn(4, tensorOf(onnx.Float, []float64{pick(g, 0.2, 0.5)}, 1))
			}
		}
	}
	return nil
}

// genConstant: the value as a tensor, or (from version 12) as one of the
// typed attributes. https://onnx.ai/onnx/operators/onnx__Constant.html
func genConstant(g *gen) error {
	dt := g.T("T")
	v := g.rand(dt, g.dims(g.between(0, 3), 1, 4)...)
	if g.since >= 12 {
		switch {
		case dt == onnx.Float && g.coin():
			if g.coin() {
				g.attrFloat("value_float", 1.5)
			} else {
				g.attrFloats("value_floats", 1, -2.5, 3.25)
			}
			return nil
		case dt == onnx.Int64 && g.coin():
			if g.coin() {
				g.attrInt("value_int", 7)
			} else {
				g.attrInts("value_ints", 1, -2, 3)
			}
			return nil
		case dt == onnx.String && g.coin():
			if g.coin() {
				g.attrString("value_string", "hello")
			} else {
				g.attrStrings("value_strings", "a", "bc")
			}
			return nil
		}
	}
	return g.attrTensor("value", v)
}
