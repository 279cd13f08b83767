package metrics

import (
	"strings"

	"github.com/deep500/deep500-go/onnx"
)

// Rules of difftest's generator for the neural-network operators:
// convolutions and pooling (their geometry), normalizations, matrix
// products, recurrent layers, attention and the losses.

func init() {
	addRules(map[string]opRule{
		"Conv":                      {gen: genConv},
		"ConvTranspose":             {gen: genConvTranspose},
		"ConvInteger":               {gen: genConvInteger},
		"QLinearConv":               {gen: genQLinearConv},
		"DeformConv":                {gen: genDeformConv},
		"AveragePool":               {gen: genPool},
		"MaxPool":                   {gen: genPool},
		"LpPool":                    {gen: genPool},
		"GlobalAveragePool":         {gen: genGlobalPool},
		"GlobalMaxPool":             {gen: genGlobalPool},
		"GlobalLpPool":              {gen: genGlobalPool},
		"MaxUnpool":                 {gen: genMaxUnpool},
		"MaxRoiPool":                {gen: genMaxRoiPool},
		"RoiAlign":                  {gen: genRoiAlign},
		"BatchNormalization":        {gen: genBatchNorm},
		"InstanceNormalization":     {gen: genInstanceNorm},
		"LayerNormalization":        {gen: genLayerNorm},
		"RMSNormalization":          {gen: genLayerNorm},
		"GroupNormalization":        {gen: genGroupNorm},
		"LRN":                       {gen: genLRN},
		"MeanVarianceNormalization": {gen: genMVN},
		"LpNormalization":           {gen: genLpNorm},
		"Softmax":                   {gen: genSoftmax},
		"LogSoftmax":                {gen: genSoftmax},
		"Hardmax":                   {gen: genSoftmax},
		"Flatten":                   {gen: genFlatten},
		"Gemm":                      {gen: genGemm},
		"MatMul":                    {gen: genMatMul},
		"MatMulInteger":             {gen: genMatMulInteger},
		"QLinearMatMul":             {gen: genQLinearMatMul},
		"Einsum":                    {gen: genEinsum},
		"RNN":                       {gen: genRNN},
		"GRU":                       {gen: genRNN},
		"LSTM":                      {gen: genRNN},
		"Attention":                 {gen: genAttention, types: func(t map[string]string) bool { return t["T1"] == t["T2"] }},
		"RotaryEmbedding":           {gen: genRotary},
		"SoftmaxCrossEntropyLoss":   {gen: genLoss},
		"NegativeLogLikelihoodLoss": {gen: genLoss},
	})
}

// window is the geometry of a convolution or pooling: input spatial
// sizes, kernel, strides, dilations and pads, chosen so that every output
// size is at least 1.
type window struct {
	in, kernel, strides, dilations, pads []int
	autoPad                              string
	setStrides, setDilations, setPads    bool
}

// newWindow draws the geometry of n spatial dimensions with pads below
// the kernel's extent; dil allows dilations.
func (g *gen) newWindow(n int, dil, autoPad bool) window {
	w := window{in: make([]int, n), kernel: make([]int, n), strides: make([]int, n), dilations: make([]int, n), pads: make([]int, 2*n)}
	w.setStrides, w.setDilations, w.setPads = g.coin(), dil && g.chance(0.3), g.coin()
	w.autoPad = "NOTSET"
	if autoPad && g.chance(0.25) {
		w.autoPad = pick(g, "SAME_UPPER", "SAME_LOWER", "VALID")
		w.setPads = false
	}
	for i := range n {
		w.kernel[i] = g.between(1, 3)
		w.strides[i], w.dilations[i] = 1, 1
		if w.setStrides {
			w.strides[i] = g.between(1, 2)
		}
		if w.setDilations {
			w.dilations[i] = g.between(1, 2)
		}
		extent := (w.kernel[i]-1)*w.dilations[i] + 1
		if w.setPads {
			w.pads[i] = g.between(0, extent-1)
			w.pads[n+i] = g.between(0, extent-1)
		}
		w.in[i] = g.between(max(extent-w.pads[i]-w.pads[n+i], 1), extent+4)
		if w.autoPad == "VALID" {
			w.in[i] = max(w.in[i], extent)
		}
	}
	return w
}

// attrs sets the window's attributes (kernel_shape when withKernel).
func (w window) attrs(g *gen, withKernel bool) {
	if withKernel {
		g.attrInts("kernel_shape", toInt64s(w.kernel)...)
	}
	if w.setStrides {
		g.attrInts("strides", toInt64s(w.strides)...)
	}
	if w.setDilations {
		g.attrInts("dilations", toInt64s(w.dilations)...)
	}
	if w.setPads {
		g.attrInts("pads", toInt64s(w.pads)...)
	}
	if w.autoPad != "NOTSET" {
		g.attrString("auto_pad", w.autoPad)
	}
}

func toInt64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// convShapes draws a convolution's batch, channels, group and output
// channels: group divides both channel counts, depthwise at times.
func (g *gen) convShapes() (n, c, m, group int) {
	n = g.between(1, 2)
	group = 1
	switch g.intn(4) {
	case 0:
		group = g.between(2, 3)
		c, m = group*g.between(1, 2), group*g.between(1, 2)
	case 1:
		c = g.between(1, 4)
		group, m = c, c // depthwise
	default:
		c, m = g.between(1, 4), g.between(1, 4)
	}
	return n, c, m, group
}

// convBiasAndAttrs sets, for Conv and ConvTranspose, a bias of m
// channels at times, the window's attributes and the group.
func (g *gen) convBiasAndAttrs(w window, dt onnx.DataType, m, group int) {
	if g.coin() {
		g.in(2, g.rand(dt, m))
	}
	w.attrs(g, g.coin())
	if group > 1 || g.chance(0.2) {
		g.attrInt("group", int64(group))
	}
}

// genConv: https://onnx.ai/onnx/operators/onnx__Conv.html
func genConv(g *gen) error {
	dt := g.T("T")
	w := g.newWindow(pick(g, 1, 2, 2, 2, 3), true, true)
	n, c, m, group := g.convShapes()
	g.in(0, g.rand(dt, append([]int{n, c}, w.in...)...))
	g.in(1, g.randIn(dt, -1, 1, append([]int{m, c / group}, w.kernel...)...))
	g.convBiasAndAttrs(w, dt, m, group)
	return nil
}

// genConvTranspose: https://onnx.ai/onnx/operators/onnx__ConvTranspose.html
func genConvTranspose(g *gen) error {
	dt := g.T("T")
	w := g.newWindow(pick(g, 1, 2, 2, 3), true, true)
	if w.autoPad == "VALID" {
		w.autoPad = "NOTSET"
	}
	n, c, m, group := g.convShapes()
	for i := range w.in {
		w.in[i] = g.between(1, 4)
	}
	g.in(0, g.rand(dt, append([]int{n, c}, w.in...)...))
	g.in(1, g.randIn(dt, -1, 1, append([]int{c, m / group}, w.kernel...)...))
	g.convBiasAndAttrs(w, dt, m, group)
	if w.setStrides && w.autoPad == "NOTSET" && g.coin() {
		op := make([]int64, len(w.in))
		for i := range op {
			op[i] = int64(g.between(0, w.strides[i]-1)) // below the stride, as ONNX Runtime requires
		}
		g.attrInts("output_padding", op...)
	}
	return nil
}

// quantRange is the range of a quantized integer type's values.
func quantRange(dt onnx.DataType) (lo, hi float64) {
	if dt == onnx.Int8 {
		return -128, 127
	}
	return 0, 255
}

// genConvInteger: https://onnx.ai/onnx/operators/onnx__ConvInteger.html
func genConvInteger(g *gen) error {
	t1, t2 := g.T("T1"), g.T("T2")
	w := g.newWindow(pick(g, 1, 2, 2), true, true)
	n, c, m, group := g.convShapes()
	xlo, xhi := quantRange(t1)
	wlo, whi := quantRange(t2)
	g.in(0, g.randIn(t1, xlo, xhi, append([]int{n, c}, w.in...)...))
	g.in(1, g.randIn(t2, wlo, whi, append([]int{m, c / group}, w.kernel...)...))
	if g.coin() {
		g.in(2, g.randIn(t1, xlo, xhi))
	}
	if g.coin() {
		g.in(3, g.randIn(t2, wlo, whi))
	}
	w.attrs(g, g.coin())
	if group > 1 {
		g.attrInt("group", int64(group))
	}
	return nil
}

// genQLinearConv: https://onnx.ai/onnx/operators/onnx__QLinearConv.html
func genQLinearConv(g *gen) error {
	t1, t2, t3 := g.T("T1"), g.T("T2"), g.T("T3")
	w := g.newWindow(2, true, true)
	n, c, m, group := g.convShapes()
	xlo, xhi := quantRange(t1)
	wlo, whi := quantRange(t2)
	ylo, yhi := quantRange(t3)
	g.in(0, g.randIn(t1, xlo, xhi, append([]int{n, c}, w.in...)...))
	g.constIn(1, scalarOf(onnx.Float, roundTo(g.uniform(0.01, 0.05), 0.001)))
	g.constIn(2, scalarOf(t1, float64(g.between(int(xlo)/2, int(xhi)/2))))
	g.constIn(3, g.randIn(t2, wlo, whi, append([]int{m, c / group}, w.kernel...)...))
	if g.coin() {
		g.constIn(4, g.randIn(onnx.Float, 0.005, 0.02, m))
	} else {
		g.constIn(4, scalarOf(onnx.Float, roundTo(g.uniform(0.005, 0.02), 0.001)))
	}
	g.constIn(5, scalarOf(t2, 0))
	g.constIn(6, scalarOf(onnx.Float, roundTo(g.uniform(0.05, 0.2), 0.01)))
	g.constIn(7, scalarOf(t3, float64(g.between(int(ylo)/2, int(yhi)/2))))
	if g.coin() {
		g.constIn(8, g.randIn(onnx.Int32, -200, 200, m))
	}
	w.attrs(g, g.coin())
	if group > 1 {
		g.attrInt("group", int64(group))
	}
	return nil
}

// outSize is a window's output size along dimension i (floor mode).
func (w window) outSize(i int) int {
	n := len(w.in)
	extent := (w.kernel[i]-1)*w.dilations[i] + 1
	switch w.autoPad {
	case "SAME_UPPER", "SAME_LOWER":
		return (w.in[i] + w.strides[i] - 1) / w.strides[i]
	case "VALID":
		return (w.in[i]-extent)/w.strides[i] + 1
	}
	return (w.in[i]+w.pads[i]+w.pads[n+i]-extent)/w.strides[i] + 1
}

// genDeformConv: https://onnx.ai/onnx/operators/onnx__DeformConv.html
func genDeformConv(g *gen) error {
	dt := g.T("T")
	w := g.newWindow(2, true, false)
	n, c, m, group := g.convShapes()
	og := 1
	if c%2 == 0 && g.coin() {
		og = 2
	}
	oh, ow := w.outSize(0), w.outSize(1)
	kk := w.kernel[0] * w.kernel[1]
	g.in(0, g.rand(dt, n, c, w.in[0], w.in[1]))
	g.in(1, g.randIn(dt, -1, 1, m, c/group, w.kernel[0], w.kernel[1]))
	g.in(2, g.randIn(dt, -1.5, 1.5, n, og*2*kk, oh, ow))
	if g.coin() {
		g.in(3, g.rand(dt, m))
	}
	if g.coin() {
		g.in(4, g.randIn(dt, 0, 1, n, og*kk, oh, ow))
	}
	w.attrs(g, g.coin())
	if group > 1 {
		g.attrInt("group", int64(group))
	}
	if og > 1 {
		g.attrInt("offset_group", int64(og))
	}
	return nil
}

// genPool: AveragePool, MaxPool, LpPool.
// https://onnx.ai/onnx/operators/onnx__MaxPool.html
func genPool(g *gen) error {
	dt := g.T("T")
	op := g.s.OpType
	dil := (op == "MaxPool" && g.since >= 10) || (op == "AveragePool" && g.since >= 19) || (op == "LpPool" && g.since >= 18)
	w := g.newWindow(pick(g, 1, 2, 2, 3), dil, true)
	// ONNX Runtime takes pads below the kernel's size (not its dilated
	// extent) only.
	for i := range w.in {
		n := len(w.in)
		w.pads[i], w.pads[n+i] = min(w.pads[i], w.kernel[i]-1), min(w.pads[n+i], w.kernel[i]-1)
	}
	shape := append([]int{g.between(1, 2), g.between(1, 3)}, w.in...)
	if dt.IsFloat() {
		g.in(0, g.rand(dt, shape...))
	} else {
		g.in(0, g.rand(dt, shape...))
	}
	w.attrs(g, true)
	ceil := (op != "LpPool" && g.since >= 10) || (op == "LpPool" && g.since >= 18)
	if ceil && g.chance(0.3) {
		g.attrInt("ceil_mode", 1)
	}
	switch op {
	case "AveragePool":
		g.maybeInt("count_include_pad", int64(g.intn(2)))
	case "MaxPool":
		if g.since >= 8 {
			g.outputs(g.between(1, 2))
			if g.nOut == 2 && len(w.in) == 2 && g.coin() {
				g.attrInt("storage_order", int64(g.intn(2)))
			}
		}
	case "LpPool":
		g.maybeInt("p", int64(g.between(1, 3)))
	}
	return nil
}

// genGlobalPool: https://onnx.ai/onnx/operators/onnx__GlobalAveragePool.html
func genGlobalPool(g *gen) error {
	dt := g.T("T")
	shape := append([]int{g.between(1, 2), g.between(1, 3)}, g.dims(g.between(1, 3), 1, 5)...)
	g.in(0, g.rand(dt, shape...))
	g.maybeInt("p", int64(g.between(1, 3)))
	return nil
}

// genMaxUnpool: indices as MaxPool gives them (flat over the whole
// output), one per non-overlapping window.
// https://onnx.ai/onnx/operators/onnx__MaxUnpool.html
func genMaxUnpool(g *gen) error {
	dt := g.T("T1")
	ns := pick(g, 1, 2, 2)
	n, c := g.between(1, 2), g.between(1, 3)
	kernel := g.dims(ns, 1, 3)
	pooled := g.dims(ns, 1, 3)
	out := make([]int, ns)
	for i := range out {
		out[i] = pooled[i] * kernel[i] // strides = kernel: windows do not overlap
	}
	x := g.rand(dt, append([]int{n, c}, pooled...)...)
	idx := make([]int64, x.Len())
	outPlane := onnx.NumElements(out)
	k := 0
	for b := range n * c {
		for p := range onnx.NumElements(pooled) {
			// coordinates of window p, then a random cell inside it
			pos := unravel(p, pooled)
			flat := 0
			for d := range ns {
				flat = flat*out[d] + pos[d]*kernel[d] + g.intn(kernel[d])
			}
			idx[k] = int64(b*outPlane + flat)
			k++
		}
	}
	g.in(0, x)
	g.in(1, ints(onnx.Int64, idx, x.Shape...))
	g.attrInts("kernel_shape", toInt64s(kernel)...)
	g.attrInts("strides", toInt64s(kernel)...)
	if g.coin() {
		g.indexIn(2, i64s(toInt64s(append([]int{n, c}, out...))...))
	}
	return nil
}

// roiFeatures draws, for the region-of-interest operators, an [N, C, H,
// W] feature map as input 0 and the number of regions.
func (g *gen) roiFeatures(dt onnx.DataType) (n, h, w, rois int) {
	n, c, h, w := g.between(1, 2), g.between(1, 3), g.between(3, 7), g.between(3, 7)
	g.in(0, g.rand(dt, n, c, h, w))
	return n, h, w, g.between(1, 3)
}

// genMaxRoiPool: https://onnx.ai/onnx/operators/onnx__MaxRoiPool.html
func genMaxRoiPool(g *gen) error {
	dt := g.T("T")
	n, h, w, rois := g.roiFeatures(dt)
	vals := make([]float64, 0, rois*5)
	for range rois {
		x1, y1 := g.between(0, w-2), g.between(0, h-2)
		vals = append(vals, float64(g.intn(n)), float64(x1), float64(y1), float64(g.between(x1+1, w-1)), float64(g.between(y1+1, h-1)))
	}
	g.in(1, tensorOf(dt, vals, rois, 5))
	g.attrInts("pooled_shape", int64(g.between(1, 3)), int64(g.between(1, 3)))
	return nil
}

// genRoiAlign: https://onnx.ai/onnx/operators/onnx__RoiAlign.html
func genRoiAlign(g *gen) error {
	dt := g.T("T1")
	n, h, w, rois := g.roiFeatures(dt)
	vals := make([]float64, 0, rois*4)
	batch := make([]int64, rois)
	for i := range rois {
		x1, y1 := roundTo(g.uniform(0, float64(w)-1.5), 0.25), roundTo(g.uniform(0, float64(h)-1.5), 0.25)
		vals = append(vals, x1, y1, roundTo(g.uniform(x1+0.5, float64(w)), 0.25), roundTo(g.uniform(y1+0.5, float64(h)), 0.25))
		batch[i] = int64(g.intn(n))
	}
	g.in(1, tensorOf(dt, vals, rois, 4))
	g.in(2, ints(onnx.Int64, batch))
	g.maybeInt("output_height", int64(g.between(1, 3)))
	g.maybeInt("output_width", int64(g.between(1, 3)))
	g.maybeInt("sampling_ratio", int64(g.between(0, 2)))
	if g.coin() {
		g.attrString("mode", pick(g, "avg", "max"))
	}
	if g.hasAttr("coordinate_transformation_mode") && g.coin() {
		g.attrString("coordinate_transformation_mode", pick(g, "half_pixel", "output_half_pixel"))
	}
	if g.coin() {
		g.attrFloat("spatial_scale", pick(g, 0.5, 1.0))
	}
	return nil
}

// genBatchNorm: inference mode, and training mode (with the running
// statistics as outputs) where the version has it.
// https://onnx.ai/onnx/operators/onnx__BatchNormalization.html
func genBatchNorm(g *gen) error {
	t, t1, t2 := g.T("T"), g.T("T"), g.T("T")
	if g.since >= 15 {
		t1, t2 = g.T("T1"), g.T("T2")
	}
	c := g.between(1, 4)
	shape := append([]int{g.between(1, 3), c}, g.dims(g.between(0, 2), 1, 4)...)
	g.in(0, g.rand(t, shape...))
	g.in(1, g.randIn(t1, 0.5, 1.5, c))
	g.in(2, g.randIn(t1, -1, 1, c))
	g.in(3, g.randIn(t2, -1, 1, c))
	g.in(4, g.randIn(t2, 0.5, 2, c))
	g.outputs(1)
	g.maybeFloat("epsilon", pick(g, 1e-5, 1e-3, 0.1))
	if g.since >= 14 && g.chance(0.3) {
		g.attrInt("training_mode", 1)
		g.attrFloat("momentum", pick(g, 0.9, 0.5))
		g.outputs(3)
	}
	return nil
}

// genInstanceNorm: https://onnx.ai/onnx/operators/onnx__InstanceNormalization.html
func genInstanceNorm(g *gen) error {
	dt := g.T("T")
	c := g.between(1, 4)
	g.in(0, g.rand(dt, append([]int{g.between(1, 2), c}, g.dims(g.between(1, 3), 1, 4)...)...))
	g.in(1, g.randIn(dt, 0.5, 1.5, c))
	g.in(2, g.randIn(dt, -1, 1, c))
	g.maybeFloat("epsilon", pick(g, 1e-5, 1e-2))
	return nil
}

// genLayerNorm: LayerNormalization and RMSNormalization, whose scale
// (and bias) cover the dimensions from axis on.
// https://onnx.ai/onnx/operators/onnx__LayerNormalization.html
func genLayerNorm(g *gen) error {
	xt, st := g.T("T"), g.T("T")
	if g.s.OpType == "RMSNormalization" {
		st = g.T("V")
	}
	r := g.between(1, 4)
	shape := g.dims(r, 1, 5)
	axis := g.axis(r, true)
	if !g.coin() {
		axis = -1
	} else {
		g.attrInt("axis", int64(axis))
	}
	norm := shape[axisPos(axis, r):]
	g.in(0, g.rand(xt, shape...))
	g.in(1, g.randIn(st, 0.5, 1.5, norm...))
	if g.s.OpType == "LayerNormalization" {
		if g.coin() {
			g.in(2, g.randIn(st, -1, 1, norm...))
		}
		g.outputs(pick(g, 1, 1, 3))
	}
	g.maybeFloat("epsilon", pick(g, 1e-5, 1e-2))
	// The statistics' type U is stash_type's, float by default.
	if u := g.T("U"); u != onnx.Undefined && (u != onnx.Float || g.coin()) {
		g.attrInt("stash_type", int64(u))
	}
	return nil
}

// genGroupNorm: version 18's scale and bias are per group, 21's per
// channel. https://onnx.ai/onnx/operators/onnx__GroupNormalization.html
func genGroupNorm(g *gen) error {
	dt := g.T("T")
	groups := g.between(1, 3)
	c := groups * g.between(1, 2)
	g.in(0, g.rand(dt, append([]int{g.between(1, 2), c}, g.dims(g.between(1, 2), 1, 4)...)...))
	per := c
	if g.since < 21 {
		per = groups
	}
	g.in(1, g.randIn(dt, 0.5, 1.5, per))
	g.in(2, g.randIn(dt, -1, 1, per))
	g.attrInt("num_groups", int64(groups))
	g.maybeFloat("epsilon", pick(g, 1e-5, 1e-2))
	return nil
}

// genLRN: https://onnx.ai/onnx/operators/onnx__LRN.html
func genLRN(g *gen) error {
	dt := g.T("T")
	g.in(0, g.rand(dt, g.between(1, 2), g.between(1, 6), g.between(1, 4), g.between(1, 4)))
	g.attrInt("size", int64(pick(g, 1, 3, 5))) // odd: ONNX Runtime takes no other
	g.maybeFloat("alpha", pick(g, 1e-4, 0.01, 0.5))
	g.maybeFloat("beta", pick(g, 0.75, 0.5, 1.0))
	g.maybeFloat("bias", pick(g, 1.0, 2.0))
	return nil
}

// genMVN: the default axes are [0, 2, 3], for 4-D inputs.
// https://onnx.ai/onnx/operators/onnx__MeanVarianceNormalization.html
func genMVN(g *gen) error {
	dt := g.T("T")
	if g.coin() {
		g.in(0, g.rand(dt, g.dims(4, 1, 4)...))
		return nil
	}
	r := g.between(1, 4)
	g.in(0, g.rand(dt, g.dims(r, 1, 4)...))
	g.attrInts("axes", g.distinctAxes(r, g.between(1, r), true)...)
	return nil
}

// genLpNorm: https://onnx.ai/onnx/operators/onnx__LpNormalization.html
func genLpNorm(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 4)
	g.in(0, g.rand(dt, g.dims(r, 1, 5)...))
	g.maybeInt("axis", int64(g.axis(r, true)))
	g.maybeInt("p", int64(g.between(1, 2)))
	return nil
}

// genSoftmax: Softmax, LogSoftmax and Hardmax; before version 13 the
// input is read as 2-D around axis (default 1).
func genSoftmax(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 4)
	if g.since < 13 {
		r = g.between(2, 4)
	}
	x := g.rand(dt, g.dims(r, 1, 5)...)
	if g.s.OpType == "Hardmax" {
		x = g.grid(dt, -2, 2, 0.5, x.Shape...) // ties: the first maximum wins
	}
	g.in(0, x)
	g.maybeInt("axis", int64(g.axis(r, true)))
	return nil
}

// genFlatten: https://onnx.ai/onnx/operators/onnx__Flatten.html
func genFlatten(g *gen) error {
	dt := g.T("T")
	r := g.between(0, 4)
	if g.since < 11 {
		r = max(r, 1)
	}
	g.in(0, g.rand(dt, g.dims(r, 1, 4)...))
	axis := g.between(0, r)
	if g.since >= 11 && g.coin() {
		axis -= r
	}
	if r == 0 {
		g.attrInt("axis", 0) // the default 1 is beyond a scalar's rank
	} else {
		g.maybeInt("axis", int64(axis))
	}
	return nil
}

// genGemm: C broadcasts to [M, N] in one direction.
// https://onnx.ai/onnx/operators/onnx__Gemm.html
func genGemm(g *gen) error {
	dt := g.T("T")
	m, k, n := g.between(1, 5), g.between(1, 5), g.between(1, 5)
	ta, tb := g.intn(2), g.intn(2)
	a, b := []int{m, k}, []int{k, n}
	if ta == 1 {
		a = []int{k, m}
	}
	if tb == 1 {
		b = []int{n, k}
	}
	g.in(0, g.rand(dt, a...))
	g.in(1, g.rand(dt, b...))
	if g.since < 11 || g.coin() {
		c := pick(g, []int{}, []int{n}, []int{1, n}, []int{m, 1}, []int{m, n})
		if g.since < 7 {
			c = []int{m, n}
		}
		g.in(2, g.rand(dt, c...))
	}
	if ta == 1 || g.coin() {
		g.attrInt("transA", int64(ta))
	}
	if tb == 1 || g.coin() {
		g.attrInt("transB", int64(tb))
	}
	if dt.IsFloat() {
		g.maybeFloat("alpha", pick(g, 0.5, 1.0, 2.0))
		g.maybeFloat("beta", pick(g, 0.5, 1.0, 2.0))
	}
	return nil
}

// matmulShapes draws numpy matmul operands: 1-D on either side at times,
// batch dimensions that broadcast.
func (g *gen) matmulShapes() (a, b []int) {
	m, k, n := g.between(1, 5), g.between(1, 5), g.between(1, 5)
	batch := g.broadcastShapes(2, g.between(0, 2))
	a = append(batch[0], m, k)
	b = append(batch[1], k, n)
	switch g.intn(6) {
	case 0:
		a = []int{k}
	case 1:
		b = []int{k}
	}
	return a, b
}

// genMatMul: https://onnx.ai/onnx/operators/onnx__MatMul.html
func genMatMul(g *gen) error {
	dt := g.T("T")
	a, b := g.matmulShapes()
	g.in(0, g.rand(dt, a...))
	g.in(1, g.rand(dt, b...))
	return nil
}

// genMatMulInteger: zero points per tensor, or per row of A and column
// of B. https://onnx.ai/onnx/operators/onnx__MatMulInteger.html
func genMatMulInteger(g *gen) error {
	t1, t2 := g.T("T1"), g.T("T2")
	m, k, n := g.between(1, 5), g.between(1, 5), g.between(1, 5)
	alo, ahi := quantRange(t1)
	blo, bhi := quantRange(t2)
	g.in(0, g.randIn(t1, alo, ahi, m, k))
	g.in(1, g.randIn(t2, blo, bhi, k, n))
	if g.coin() {
		g.in(2, g.randIn(t1, alo, ahi))
	}
	if g.coin() {
		shape := pick(g, []int{}, []int{n})
		g.in(3, g.randIn(t2, blo, bhi, shape...))
	}
	return nil
}

// genQLinearMatMul: https://onnx.ai/onnx/operators/onnx__QLinearMatMul.html
func genQLinearMatMul(g *gen) error {
	t1, t2, t3 := g.T("T1"), g.T("T2"), g.T("T3")
	ts := onnx.Float
	if g.since >= 21 {
		ts = g.T("TS")
	}
	for _, t := range []onnx.DataType{t1, t2, t3} {
		if t != onnx.Int8 && t != onnx.Uint8 {
			return cannot("quantized type %v: the generator draws 8-bit integers only", t)
		}
	}
	a, b := g.matmulShapes()
	if len(a) < 2 || len(b) < 2 {
		a, b = []int{g.between(1, 4), 3}, []int{3, g.between(1, 4)}
	}
	alo, ahi := quantRange(t1)
	blo, bhi := quantRange(t2)
	ylo, yhi := quantRange(t3)
	g.in(0, g.randIn(t1, alo, ahi, a...))
	g.constIn(1, scalarOf(ts, roundTo(g.uniform(0.01, 0.05), 0.001)))
	g.constIn(2, scalarOf(t1, float64(g.between(int(alo)/2, int(ahi)/2))))
	g.in(3, g.randIn(t2, blo, bhi, b...))
	g.constIn(4, scalarOf(ts, roundTo(g.uniform(0.01, 0.05), 0.001)))
	g.constIn(5, scalarOf(t2, float64(g.between(int(blo)/2, int(bhi)/2))))
	g.constIn(6, scalarOf(ts, roundTo(g.uniform(0.05, 0.3), 0.01)))
	g.constIn(7, scalarOf(t3, float64(g.between(int(ylo)/2, int(yhi)/2))))
	return nil
}

// einsumEquations are the contractions difftest draws from: matrix and
// batch products, transposes, traces, diagonals, outer products,
// reductions and an ellipsis.
var einsumEquations = []string{
	"ij,jk->ik", "bij,bjk->bik", "ij->ji", "ii->i", "ii", "i,i->", "i,j->ij",
	"ij->", "ij->i", "ij,ij->ij", "bhid,bhjd->bhij", "...ij,...jk->...ik", "ijk->kji", "ij,j->i",
}

// genEinsum: https://onnx.ai/onnx/operators/onnx__Einsum.html
func genEinsum(g *gen) error {
	dt := g.T("T")
	eq := pick(g, einsumEquations...)
	sizes := map[byte]int{}
	lhs, _, _ := strings.Cut(eq, "->")
	operands := strings.Split(lhs, ",")
	for i, op := range operands {
		var shape []int
		if len(op) >= 3 && op[:3] == "..." {
			shape = append(shape, g.dims(g.between(0, 2), 2, 2)...)
			op = op[3:]
		}
		for j := 0; j < len(op); j++ {
			if _, ok := sizes[op[j]]; !ok {
				sizes[op[j]] = g.between(1, 4)
			}
			shape = append(shape, sizes[op[j]])
		}
		g.in(i, g.rand(dt, shape...))
	}
	g.attrString("equation", eq)
	return nil
}

// genRNN: RNN, GRU and LSTM with their gates' weights, optional biases,
// initial states, sequence lengths and peepholes.
// https://onnx.ai/onnx/operators/onnx__LSTM.html
func genRNN(g *gen) error {
	dt := g.T("T")
	gates := map[string]int{"RNN": 1, "GRU": 3, "LSTM": 4}[g.s.OpType]
	seq, batch, input, hidden := g.between(1, 4), g.between(1, 3), g.between(1, 4), g.between(1, 4)
	dir := pick(g, "forward", "reverse", "bidirectional")
	dirs := 1
	if dir == "bidirectional" {
		dirs = 2
	}
	g.in(0, g.rand(dt, seq, batch, input))
	g.in(1, g.randIn(dt, -0.7, 0.7, dirs, gates*hidden, input))
	g.in(2, g.randIn(dt, -0.7, 0.7, dirs, gates*hidden, hidden))
	if g.coin() {
		g.in(3, g.randIn(dt, -0.5, 0.5, dirs, 2*gates*hidden))
	}
	if g.coin() {
		lens := make([]int64, batch)
		for i := range lens {
			lens[i] = int64(g.between(1, seq))
		}
		g.in(4, ints(onnx.Int32, lens))
	}
	if g.coin() {
		g.in(5, g.randIn(dt, -1, 1, dirs, batch, hidden))
	}
	if g.s.OpType == "LSTM" {
		if g.coin() {
			g.in(6, g.randIn(dt, -1, 1, dirs, batch, hidden))
		}
		if g.coin() {
			g.in(7, g.randIn(dt, -0.5, 0.5, dirs, 3*hidden))
		}
	}
	g.attrInt("hidden_size", int64(hidden))
	if dir != "forward" || g.coin() {
		g.attrString("direction", dir)
	}
	if g.chance(0.25) {
		g.attrFloat("clip", pick(g, 0.5, 1.0, 3.0))
	}
	if g.s.OpType == "GRU" {
		g.maybeInt("linear_before_reset", int64(g.intn(2)))
	}
	if g.s.OpType == "LSTM" && g.chance(0.25) {
		g.attrInt("input_forget", 1)
	}
	if g.chance(0.25) {
		acts := map[string][]string{"RNN": {"Tanh"}, "GRU": {"Sigmoid", "Tanh"}, "LSTM": {"Sigmoid", "Tanh", "Tanh"}}[g.s.OpType]
		// Affine and ScaledTanh are left out: their parameters default to
		// those of ONNX operators that no longer exist.
		choices := []string{"Relu", "Tanh", "Sigmoid", "HardSigmoid", "LeakyRelu", "ThresholdedRelu", "Elu", "Softsign", "Softplus"}
		var all []string
		for range dirs {
			for range acts {
				all = append(all, pick(g, choices...))
			}
		}
		g.attrStrings("activations", all...)
	}
	// Y and the last state(s); each may be left out.
	g.outputs(len(g.s.Outputs))
	return nil
}

// genAttention: 4-D Q, K, V (grouped heads at times) or 3-D with the head
// counts as attributes; a boolean or additive mask, a past, causality,
// scale and softcap. https://onnx.ai/onnx/operators/onnx__Attention.html
func genAttention(g *gen) error {
	t1, t2 := g.T("T1"), g.T("T2")
	b, hkv, sq, skv, d, dv := g.between(1, 2), g.between(1, 2), g.between(1, 4), g.between(1, 4), g.between(1, 4), g.between(1, 4)
	hq := hkv * g.between(1, 2)
	past := 0
	if g.chance(0.3) {
		past = g.between(1, 3)
	}
	if g.coin() {
		g.in(0, g.rand(t1, b, hq, sq, d))
		g.in(1, g.rand(t1, b, hkv, skv, d))
		g.in(2, g.rand(t2, b, hkv, skv, dv))
	} else {
		g.in(0, g.rand(t1, b, sq, hq*d))
		g.in(1, g.rand(t1, b, skv, hkv*d))
		g.in(2, g.rand(t2, b, skv, hkv*dv))
		g.attrInt("q_num_heads", int64(hq))
		g.attrInt("kv_num_heads", int64(hkv))
	}
	total := skv + past
	if g.coin() {
		mt := g.T("U")
		shape := pick(g, []int{sq, total}, []int{b, 1, sq, total}, []int{1, hq, sq, total})
		if mt == onnx.Bool {
			m := g.randIn(onnx.Bool, 0, 1, shape...)
			// Keep one key per row visible, so no row is all masked.
			bools := m.Data.([]bool)
			for i := 0; i < len(bools); i += total {
				bools[i+g.intn(total)] = true
			}
			g.in(3, m)
		} else if mt.IsFloat() {
			g.in(3, g.randIn(mt, -2, 2, shape...))
		} else {
			return cannot("attention mask of type %v", mt)
		}
	}
	if past > 0 {
		g.in(4, g.rand(t1, b, hkv, past, d))
		g.in(5, g.rand(t2, b, hkv, past, dv))
		g.outputs(3)
	}
	if g.chance(0.3) {
		g.attrInt("is_causal", 1)
	}
	if g.chance(0.3) {
		g.attrFloat("scale", pick(g, 0.25, 0.5, 1.0))
	}
	if g.chance(0.2) {
		g.attrFloat("softcap", pick(g, 1.0, 5.0))
	}
	return nil
}

// genRotary: 4-D [batch, heads, seq, head] or 3-D with num_heads, full
// or partial rotation, caches indexed by position ids or given per token.
// https://onnx.ai/onnx/operators/onnx__RotaryEmbedding.html
func genRotary(g *gen) error {
	dt := g.T("T")
	b, s, h := g.between(1, 2), g.between(1, 4), g.between(1, 3)
	head := 2 * g.between(1, 3)
	rot := head
	if g.coin() && head > 2 {
		rot = 2 * g.between(1, head/2-1)
		g.attrInt("rotary_embedding_dim", int64(rot))
	}
	if g.coin() {
		g.in(0, g.rand(dt, b, h, s, head))
	} else {
		g.in(0, g.rand(dt, b, s, h*head))
		g.attrInt("num_heads", int64(h))
	}
	if g.coin() {
		maxPos := s + g.between(0, 4)
		g.in(1, g.randIn(dt, -1, 1, maxPos, rot/2))
		g.in(2, g.randIn(dt, -1, 1, maxPos, rot/2))
		g.in(3, g.randIn(onnx.Int64, 0, float64(maxPos-1), b, s))
	} else {
		g.in(1, g.randIn(dt, -1, 1, b, s, rot/2))
		g.in(2, g.randIn(dt, -1, 1, b, s, rot/2))
	}
	g.maybeInt("interleaved", int64(g.intn(2)))
	return nil
}

// genLoss: SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss, with
// class weights, an ignored index among the labels, and each reduction.
// https://onnx.ai/onnx/operators/onnx__SoftmaxCrossEntropyLoss.html
func genLoss(g *gen) error {
	dt, it := g.T("T"), g.T("Tind")
	n, c := g.between(1, 4), g.between(2, 5)
	extra := g.dims(g.between(0, 2), 1, 3)
	scores := g.rand(dt, append([]int{n, c}, extra...)...)
	if g.s.OpType == "NegativeLogLikelihoodLoss" {
		scores = g.randIn(dt, -3, 0, scores.Shape...) // log-probabilities
	}
	labels := g.randIn(it, 0, float64(c-1), append([]int{n}, extra...)...)
	g.in(0, scores)
	if g.coin() {
		ignore := int64(g.between(0, c-1))
		if g.coin() {
			ignore = -1
			setFloat(labels, 0, -1)
		}
		g.attrInt("ignore_index", ignore)
	}
	g.in(1, labels)
	if g.coin() {
		g.in(2, g.randIn(dt, 0.5, 2, c))
	}
	g.attrString("reduction", pick(g, "none", "sum", "mean"))
	if g.s.OpType == "SoftmaxCrossEntropyLoss" {
		g.outputs(g.between(1, 2))
	}
	return nil
}
