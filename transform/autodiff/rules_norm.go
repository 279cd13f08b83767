package autodiff

import (
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

func init() {
	register(batchNormGrad, "BatchNormalization")
	register(instanceNormGrad, "InstanceNormalization")
	register(layerNormGrad, "LayerNormalization")
	register(groupNormGrad, "GroupNormalization")
	register(lrnGrad, "LRN")
	register(mvnGrad, "MeanVarianceNormalization")
	register(lpNormGrad, "LpNormalization")
}

// The normalizations share one backward formula. A row (the elements
// one mean and variance are taken over: axes) of m elements is
// normalized as x̂ = (x − μ)·inv, inv = 1/√(var + ε) (the population
// variance, as the native backend computes it), then scaled. With g the
// gradient reaching x̂ (dY·γ),
//
//	dx = inv·(g − mean(g) − x̂·mean(g·x̂)) = a·g + c0 + c1·(x − μ)
//
// with a = inv, c0 = −inv·mean(g), c1 = −inv³·mean(g·(x − μ)): two
// products and two sums over the tensor, the rest on one value per row.
// Gradients reaching the statistics themselves (a running mean, a Mean
// output) add to c0 and c1.

// nnNormStats returns x − μ and 1/√(var + eps), the statistics over axes
// kept as size-1 axes.
func (b *builder) nnNormStats(x string, axes []int64, eps float32) (xc, inv string) {
	mu := b.reduceMean(x, axes, true)
	xc = b.sub(x, mu)
	v := b.reduceMean(b.mul(xc, xc), axes, true)
	inv = b.op("Reciprocal", []string{b.op("Sqrt", []string{b.add(v, b.scalarLike(float64(eps), x))})})
	return xc, inv
}

// nnNormBackward returns dx (when wantDx) for g, the gradient reaching
// x̂·rowScale (rowScale, constant along each row, may be ""; it then
// multiplies a, c0 and c1), and mean(g·(x − μ)) per row. extra0 and
// extra1, when not "", add to c0 and c1.
func (b *builder) nnNormBackward(g, xc, inv, rowScale string, axes []int64, extra0, extra1 string, wantDx bool) (dx, mgx string) {
	mgx = b.reduceMean(b.mul(g, xc), axes, true)
	if !wantDx {
		return "", mgx
	}
	a := inv
	if rowScale != "" {
		a = b.mul(inv, rowScale)
	}
	c0 := b.neg(b.mul(a, b.reduceMean(g, axes, true)))
	c1 := b.neg(b.mul(b.mul(a, b.mul(inv, inv)), mgx))
	if extra0 != "" {
		c0 = b.add(c0, extra0)
	}
	if extra1 != "" {
		c1 = b.add(c1, extra1)
	}
	return b.add(b.add(b.mul(g, a), b.mul(xc, c1)), c0), mgx
}

// nnCount is the number of elements of x over axes, as a scalar of x's
// type: a constant, or read at run time when one of those dims changes.
func (b *builder) nnCount(x string, axes []int64) string {
	s := b.shapeOf(x)
	c := int64(1)
	for _, a := range axes {
		if s[a] < 0 {
			dims := b.op("Gather", []string{b.shape(x), b.ints(axes...)})
			return b.cast(b.op("ReduceProd", []string{dims}, attrInt("keepdims", 0)), b.typeOf(x))
		}
		c *= s[a]
	}
	return b.scalarLike(float64(c), x)
}

// nnSum adds the non-empty values of parts ("" when there is none).
func (b *builder) nnSum(parts ...string) string {
	s := ""
	for _, p := range parts {
		switch {
		case p == "":
		case s == "":
			s = p
		default:
			s = b.add(s, p)
		}
	}
	return s
}

// nnBroadcasts fails before opset 7: the rules' element-wise products
// broadcast their operands the NumPy way, which earlier versions of Mul,
// Add and Sub only do with a broadcast attribute (and along one axis).
func (b *builder) nnBroadcasts(op string) bool {
	if b.opset < 7 {
		b.fail("%s: the gradient needs multidirectional broadcasting (opset 7; the model imports %d)", op, b.opset)
		return false
	}
	return true
}

// nnAxisRange is [from, to).
func nnAxisRange(from, to int) []int64 {
	var axes []int64
	for i := from; i < to; i++ {
		axes = append(axes, int64(i))
	}
	return axes
}

// nnAt is dy[i], "" past its end.
func nnAt(dy []string, i int) string {
	if i < len(dy) {
		return dy[i]
	}
	return ""
}

// nnSameType fails unless every named value has x's element type.
func (b *builder) nnSameType(op, x string, vals ...string) bool {
	dt := b.typeOf(x)
	for _, v := range vals {
		if v != "" && b.typeOf(v) != dt {
			b.fail("%s: %q is a tensor(%v) and X a tensor(%v): the gradient needs one type", op, v, b.typeOf(v), dt)
			return false
		}
	}
	return b.err == nil
}

// batchNormGrad (https://onnx.ai/onnx/operators/onnx__BatchNormalization.html).
// Per feature (a channel, or with spatial = 0 before version 9 an element
// of [C, D...]) y = γ·(x − μ)·inv + β.
//
// Inference (training_mode 0; before version 14, no statistics output
// asked for, or is_test before 7): μ and var are inputs, so dX = dY·γ·inv,
// dγ = Σ dY·(x − μ)·inv, dβ = Σ dY, dμ = −γ·inv·Σ dY,
// dvar = −½·γ·inv³·Σ dY·(x − μ); the statistics outputs pass the inputs
// through, and their gradients back.
//
// Training: μ and var are the batch's (recomputed here from X), so dX is
// the row formula over the batch and spatial axes; running_mean =
// momentum·input_mean + (1 − momentum)·μ sends momentum·g to input_mean and
// the rest to X through μ (likewise the variance, whose gradient reaches
// x as 2(x − μ)/m); saved_mean and saved_var (before 14) are μ and var.
// This is what the native backend computes.
func batchNormGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.BatchNormalization)
	if !b.nnBroadcasts("BatchNormalization") {
		return nil
	}
	v := op.SinceVersion()
	x, scale, bias := op.In.X, op.In.Scale, op.In.B
	mean, vr := op.In.Mean, op.In.Var
	var training bool
	if v >= 14 {
		mean, vr = op.In.InputMean, op.In.InputVar
		if op.TrainingMode != 0 && op.TrainingMode != 1 {
			b.fail("BatchNormalization: training_mode %d", op.TrainingMode)
			return nil
		}
		training = op.TrainingMode == 1
	} else {
		stats := op.Out.Mean != "" || op.Out.Var != "" || op.Out.SavedMean != "" || op.Out.SavedVar != ""
		training = stats && (v >= 7 || op.IsTest == 0)
	}
	if !b.nnSameType("BatchNormalization", x, scale, bias, mean, vr) {
		return nil
	}
	xs := b.shapeOf(x)
	if b.err != nil {
		return nil
	}
	if len(xs) < 2 {
		b.fail("BatchNormalization: X of shape %v", xs)
		return nil
	}
	rank := len(xs)
	// Features are channels: reduce over the batch and spatial axes, and
	// broadcast the parameters as [C, 1, ...].
	axes := append([]int64{0}, nnAxisRange(2, rank)...)
	bshape := make([]int64, rank-1)
	for i := range bshape {
		bshape[i] = 1
	}
	bshape[0] = xs[1]
	if v < 9 && op.Spatial == 0 && rank > 2 {
		inner := numElements(xs[2:])
		if inner < 0 || xs[1] < 0 {
			b.fail("BatchNormalization: spatial = 0 with dims that change between runs")
			return nil
		}
		if inner > 1 && numElements(b.shapeOf(scale)) == xs[1]*inner {
			axes, bshape = []int64{0}, xs[1:]
		}
	}
	param := func(p string) string { return b.reshape(p, bshape...) }
	gy := dy[0]
	gRM, gRV := nnAt(dy, 1), nnAt(dy, 2)
	gSM, gSV := nnAt(dy, 3), nnAt(dy, 4) // before version 14
	out := make([]string, len(n.Inputs))
	eps := b.scalarLike(float64(op.Epsilon), x)
	if !training {
		invP := b.op("Reciprocal", []string{b.op("Sqrt", []string{b.add(vr, eps)})})
		var dMean, dVar string
		if gy != "" {
			invB := param(invP)
			if need[0] {
				out[0] = b.like(b.mul(gy, b.mul(param(scale), invB)), x)
			}
			sdy := b.reduceSum(gy, axes, false)
			if need[2] {
				out[2] = b.reshapeLike(sdy, bias)
			}
			if need[3] {
				dMean = b.neg(b.mul(b.reshapeLike(sdy, scale), b.mul(scale, invP)))
			}
			if need[1] || need[4] {
				xc := b.sub(x, param(mean))
				sdyx := b.reshapeLike(b.reduceSum(b.mul(gy, xc), axes, false), scale)
				if need[1] {
					out[1] = b.mul(sdyx, invP)
				}
				if need[4] {
					inv3 := b.mul(invP, b.mul(invP, invP))
					dVar = b.mul(b.mul(sdyx, b.mul(scale, inv3)), b.scalarLike(-0.5, x))
				}
			}
		}
		// The statistics outputs are the inputs passed through.
		if need[3] {
			out[3] = b.nnSum(dMean, gRM, gSM)
		}
		if need[4] {
			out[4] = b.nnSum(dVar, gRV, gSV)
		}
		return out
	}
	mom := float64(op.Momentum)
	// Gradients reaching the batch statistics, and the inputs' share of
	// the running ones.
	var gM, gV string
	if gRM != "" {
		gM = b.mul(gRM, b.scalarLike(1-mom, x))
		if need[3] {
			out[3] = b.mul(gRM, b.scalarLike(mom, x))
		}
	}
	if gRV != "" {
		gV = b.mul(gRV, b.scalarLike(1-mom, x))
		if need[4] {
			out[4] = b.mul(gRV, b.scalarLike(mom, x))
		}
	}
	gM, gV = b.nnSum(gM, gSM), b.nnSum(gV, gSV)
	if !need[0] && !need[1] && !need[2] {
		return out
	}
	if gy == "" {
		gy = b.zerosLike(x)
	}
	xc, inv := b.nnNormStats(x, axes, op.Epsilon)
	var extra0, extra1 string
	if (gM != "" || gV != "") && need[0] {
		m := b.nnCount(x, axes)
		if gM != "" {
			extra0 = b.div(param(gM), m)
		}
		if gV != "" {
			extra1 = b.div(b.mul(param(gV), b.scalarLike(2, x)), m)
		}
	}
	dx, mgx := b.nnNormBackward(gy, xc, inv, param(scale), axes, extra0, extra1, need[0])
	if need[0] {
		out[0] = b.like(dx, x)
	}
	if need[1] {
		// Σ dY·x̂ = m·mean(dY·(x − μ))·inv.
		out[1] = b.reshapeLike(b.mul(b.mul(mgx, inv), b.nnCount(x, axes)), scale)
	}
	if need[2] {
		out[2] = b.reshapeLike(b.reduceSum(gy, axes, false), bias)
	}
	return out
}

// instanceNormGrad: the row formula over each (image, channel) plane,
// with γ per channel; dγ = Σ dY·x̂, dβ = Σ dY over the batch and planes
// (https://onnx.ai/onnx/operators/onnx__InstanceNormalization.html).
func instanceNormGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.InstanceNormalization)
	if !b.nnBroadcasts("InstanceNormalization") {
		return nil
	}
	x, scale, bias, gy := op.In.Input, op.In.Scale, op.In.B, dy[0]
	if !b.nnSameType("InstanceNormalization", x, scale, bias) {
		return nil
	}
	xs := b.shapeOf(x)
	if b.err != nil {
		return nil
	}
	if len(xs) < 3 {
		b.fail("InstanceNormalization: X of shape %v", xs)
		return nil
	}
	rank := len(xs)
	axes := nnAxisRange(2, rank)
	bshape := make([]int64, rank-1)
	for i := range bshape {
		bshape[i] = 1
	}
	bshape[0] = xs[1]
	out := make([]string, len(n.Inputs))
	if need[0] || need[1] {
		xc, inv := b.nnNormStats(x, axes, op.Epsilon)
		dx, mgx := b.nnNormBackward(gy, xc, inv, b.reshape(scale, bshape...), axes, "", "", need[0])
		if need[0] {
			out[0] = b.like(dx, x)
		}
		if need[1] {
			perPlane := b.mul(b.mul(mgx, inv), b.nnCount(x, axes))
			out[1] = b.reshapeLike(b.reduceSum(perPlane, append([]int64{0}, axes...), false), scale)
		}
	}
	if need[2] {
		out[2] = b.reshapeLike(b.reduceSum(gy, append([]int64{0}, axes...), false), bias)
	}
	return out
}

// layerNormGrad: the row formula over the axes from axis on, with
// g = dY·γ (γ varies along the row); dγ and dβ sum dY·x̂ and dY over the
// leading axes and the axes γ and β are broadcast along. Gradients
// reaching the Mean and InvStdDev outputs add dMean/m and
// −dInv·inv³·(x − μ)/m (https://onnx.ai/onnx/operators/onnx__LayerNormalization.html).
func layerNormGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.LayerNormalization)
	x, scale, bias := op.In.X, op.In.Scale, op.In.B
	if !b.nnSameType("LayerNormalization", x, scale, bias) {
		return nil
	}
	switch onnx.DataType(op.StashType) {
	case onnx.Float, onnx.Double, onnx.Float16, onnx.BFloat16:
	default:
		b.fail("LayerNormalization: stash_type %d", op.StashType)
		return nil
	}
	rank := len(b.shapeOf(x))
	if b.err != nil {
		return nil
	}
	axis := op.Axis
	if axis < 0 {
		axis += int64(rank)
	}
	if axis < 0 || axis >= int64(rank) {
		b.fail("LayerNormalization: axis %d for rank %d", op.Axis, rank)
		return nil
	}
	axes := nnAxisRange(int(axis), rank)
	gy, gMean, gInv := dy[0], nnAt(dy, 1), nnAt(dy, 2)
	out := make([]string, len(n.Inputs))
	for len(need) < 3 {
		need = append(need, false) // no B
	}
	if gy == "" && (need[1] || need[2]) {
		// Only the statistics outputs carry gradient: γ and β get none.
		need = []bool{need[0], false, false}
	}
	if !need[0] && !need[1] && !need[2] {
		return out
	}
	xc, inv := b.nnNormStats(x, axes, op.Epsilon)
	if need[0] {
		// The statistics are of the stash type: back to X's.
		toX := func(v string) string {
			if v != "" && b.typeOf(v) != b.typeOf(x) {
				return b.cast(v, b.typeOf(x))
			}
			return v
		}
		var extra0, extra1 string
		if gMean != "" || gInv != "" {
			m := b.nnCount(x, axes)
			if gMean != "" {
				extra0 = b.div(toX(gMean), m)
			}
			if gInv != "" {
				inv3 := b.mul(inv, b.mul(inv, inv))
				extra1 = b.neg(b.div(b.mul(toX(gInv), inv3), m))
			}
		}
		g := gy
		if g == "" {
			g = b.zerosLike(x)
		} else {
			g = b.mul(gy, scale)
		}
		dx, _ := b.nnNormBackward(g, xc, inv, "", axes, extra0, extra1, true)
		out[0] = b.like(dx, x)
	}
	if need[1] {
		out[1] = b.unbroadcast(b.like(b.mul(gy, b.mul(xc, inv)), x), scale)
	}
	if len(n.Inputs) > 2 && need[2] && bias != "" {
		out[2] = b.unbroadcast(gy, bias)
	}
	return out
}

// groupNormGrad: the row formula over each (image, group) of channels
// (https://onnx.ai/onnx/operators/onnx__GroupNormalization.html). Version
// 18 scales and shifts per group (γ constant along a row), 21 per channel
// (g = dY·γ before grouping), as the native backend does.
func groupNormGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.GroupNormalization)
	x, scale, bias, gy := op.In.X, op.In.Scale, op.In.Bias, dy[0]
	if !b.nnSameType("GroupNormalization", x, scale, bias) {
		return nil
	}
	xs := b.shapeOf(x)
	if b.err != nil {
		return nil
	}
	G := op.NumGroups
	if len(xs) < 2 || G < 1 || xs[1] < 0 || xs[1]%G != 0 {
		b.fail("GroupNormalization: %d groups for X of shape %v", G, xs)
		return nil
	}
	rank := len(xs)
	perGroup := op.SinceVersion() < 21
	// Rows: X as [N, G, C/G·D...].
	rowLen := xs[1] / G
	for _, d := range xs[2:] {
		if d < 0 || rowLen < 0 {
			rowLen = -1
		} else {
			rowLen *= d
		}
	}
	grouped := func(v string) string {
		r := b.reshape(v, 0, G, -1)
		b.info[r] = Info{Type: b.typeOf(x), Shape: []int64{xs[0], G, rowLen}}
		return r
	}
	row := []int64{2}
	out := make([]string, len(n.Inputs))
	spatial := append([]int64{0}, nnAxisRange(2, rank)...)
	xr := grouped(x)
	if need[0] || need[1] {
		xc, inv := b.nnNormStats(xr, row, op.Epsilon)
		if perGroup {
			dx, mgx := b.nnNormBackward(grouped(gy), xc, inv, b.reshape(scale, G, 1), row, "", "", need[0])
			if need[0] {
				out[0] = b.like(b.reshapeLike(dx, x), x)
			}
			if need[1] {
				perRow := b.mul(b.mul(mgx, inv), b.nnCount(xr, row))
				out[1] = b.reshapeLike(b.reduceSum(perRow, []int64{0, 2}, false), scale)
			}
		} else {
			bshape := make([]int64, rank-1)
			for i := range bshape {
				bshape[i] = 1
			}
			bshape[0] = xs[1]
			if need[0] {
				g := grouped(b.mul(gy, b.reshape(scale, bshape...)))
				dx, _ := b.nnNormBackward(g, xc, inv, "", row, "", "", true)
				out[0] = b.like(b.reshapeLike(dx, x), x)
			}
			if need[1] {
				xhat := b.reshapeLike(b.mul(xc, inv), x)
				out[1] = b.reshapeLike(b.reduceSum(b.mul(gy, xhat), spatial, false), scale)
			}
		}
	}
	if need[2] {
		if perGroup {
			out[2] = b.reshapeLike(b.reduceSum(grouped(gy), []int64{0, 2}, false), bias)
		} else {
			out[2] = b.reshapeLike(b.reduceSum(gy, spatial, false), bias)
		}
	}
	return out
}

// nnChannelWindowSum sums v ([N, C, ...]) over the channel windows
// [c − before, c + after] (clipped to the channels): a Conv of ones over
// the channels seen as a spatial axis.
func (b *builder) nnChannelWindowSum(v, x string, size, before, after int64) string {
	c := b.shapeOf(x)[1]
	if c < 0 {
		b.fail("LRN: the number of channels changes between runs")
		return ""
	}
	r := b.reshape(v, 0, 1, c, -1)
	s := b.op("Conv", []string{r, b.nnOnesKernel([]int64{size, 1}, b.typeOf(x))}, attrInts("pads", before, 0, after, 0))
	return b.reshapeLike(s, x)
}

// lrnGrad: with S_c = bias + α/size·Σ_{c' ∈ W(c)} x_{c'}² and
// y = x·S^(−β),
//
//	dx_j = dy_j·S_j^(−β) − 2β·α/size·x_j·Σ_{c: j ∈ W(c)} dy_c·x_c·S_c^(−β−1)
//
// where j ∈ W(c) ⇔ c ∈ [j − after, j + before] (W reversed), both window
// sums Convs of ones over the channels
// (https://onnx.ai/onnx/operators/onnx__LRN.html).
func lrnGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.LRN)
	if !b.nnBroadcasts("LRN") {
		return nil
	}
	x, gy := op.In.X, dy[0]
	if op.Size < 1 {
		b.fail("LRN: size %d", op.Size)
		return nil
	}
	if len(b.shapeOf(x)) < 2 {
		b.fail("LRN: X of shape %v", b.shapeOf(x))
		return nil
	}
	before := (op.Size - 1) / 2
	after := op.Size - 1 - before
	coef := float64(op.Alpha) / float64(op.Size)
	sq := b.nnChannelWindowSum(b.mul(x, x), x, op.Size, before, after)
	s := b.add(b.mul(sq, b.scalarLike(coef, x)), b.scalarLike(float64(op.Bias), x))
	sb := b.op("Pow", []string{s, b.scalarLike(-float64(op.Beta), x)})
	t := b.div(b.mul(b.mul(gy, x), sb), s)
	w := b.nnChannelWindowSum(t, x, op.Size, after, before)
	corr := b.mul(b.mul(x, w), b.scalarLike(-2*float64(op.Beta)*coef, x))
	return []string{b.like(b.add(b.mul(gy, sb), corr), x)}
}

// mvnGrad: y = (x − μ)/s with s = σ + 1e-9 over the axes (the native
// backend's and ONNX Runtime's ε), so with d = x − μ,
//
//	dx = (g − mean(g))/s − d·mean(g·d)/(σ·s²)
//
// the last term taken as 0 where σ = 0
// (https://onnx.ai/onnx/operators/onnx__MeanVarianceNormalization.html).
func mvnGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.MeanVarianceNormalization)
	x, g := op.In.X, dy[0]
	rank := int64(len(b.shapeOf(x)))
	if b.err != nil {
		return nil
	}
	var axes []int64
	seen := map[int64]bool{}
	for _, a := range op.Axes {
		if a < 0 {
			a += rank
		}
		if a < 0 || a >= rank || seen[a] {
			b.fail("MeanVarianceNormalization: axes %v for rank %d", op.Axes, rank)
			return nil
		}
		seen[a] = true
		axes = append(axes, a)
	}
	d := b.sub(x, b.reduceMean(x, axes, true))
	sigma := b.op("Sqrt", []string{b.reduceMean(b.mul(d, d), axes, true)})
	s := b.add(sigma, b.scalarLike(1e-9, x))
	invS := b.op("Reciprocal", []string{s})
	mg := b.reduceMean(g, axes, true)
	c1 := b.div(b.reduceMean(b.mul(g, d), axes, true), b.mul(sigma, b.mul(s, s)))
	c1 = b.op("Where", []string{b.op("Greater", []string{sigma, b.scalarLike(0, x)}), c1, b.scalarLike(0, x)})
	dx := b.sub(b.mul(b.sub(g, mg), invS), b.mul(d, c1))
	return []string{b.like(dx, x)}
}

// lpNormGrad: along the axis, y = x/‖x‖_p (p = 1 or 2), so with
// s = Σ dY·y: dx = (dY − y·s)/‖x‖₂ for p = 2 and (dY − sign(x)·s)/‖x‖₁
// for p = 1; a line of zeros gets zero, as the native backend takes it
// (https://onnx.ai/onnx/operators/onnx__LpNormalization.html).
func lpNormGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.LpNormalization)
	x, g := op.In.Input, dy[0]
	if op.P != 1 && op.P != 2 {
		b.fail("LpNormalization: p = %d", op.P)
		return nil
	}
	if b.opset < 9 {
		b.fail("LpNormalization: the gradient needs Where (opset 9; the model imports %d)", b.opset)
		return nil
	}
	rank := int64(len(b.shapeOf(x)))
	if b.err != nil {
		return nil
	}
	axis := op.Axis
	if axis < 0 {
		axis += rank
	}
	if axis < 0 || axis >= rank {
		b.fail("LpNormalization: axis %d for rank %d", op.Axis, rank)
		return nil
	}
	ax := []int64{axis}
	var norm, dir string
	if op.P == 2 {
		norm = b.op("Sqrt", []string{b.reduceSum(b.mul(x, x), ax, true)})
	} else {
		norm = b.reduceSum(b.op("Abs", []string{x}), ax, true)
		dir = b.op("Sign", []string{x})
	}
	zero := b.scalarLike(0, x)
	inv := b.op("Where", []string{b.op("Greater", []string{norm, zero}), b.op("Reciprocal", []string{norm}), zero})
	s := b.mul(b.reduceSum(b.mul(g, x), ax, true), inv) // Σ dY·y
	var dx string
	if op.P == 2 {
		dx = b.sub(b.mul(g, inv), b.mul(x, b.mul(s, b.mul(inv, inv))))
	} else {
		dx = b.sub(b.mul(g, inv), b.mul(dir, b.mul(s, inv)))
	}
	return []string{b.like(dx, x)}
}
