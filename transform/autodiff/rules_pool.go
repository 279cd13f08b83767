package autodiff

import (
	"slices"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

func init() {
	register(maxPoolGrad, "MaxPool")
	register(averagePoolGrad, "AveragePool")
	register(lpPoolGrad, "LpPool")
	register(globalAveragePoolGrad, "GlobalAveragePool")
	register(globalMaxPoolGrad, "GlobalMaxPool")
	register(globalLpPoolGrad, "GlobalLpPool")
}

// nnAddOutput gives the forward node n an output at position pos (one of
// its optional outputs the model did not ask for) and returns its name:
// the node is retyped, so the typed operator sees it. inf describes it.
func (b *builder) nnAddOutput(n *onnx.Node, pos int, what string, inf Info) string {
	if b.err != nil {
		return ""
	}
	name := b.fresh("grad/" + n.OpType + "_" + what)
	outs := slices.Clone(n.Outputs)
	for len(outs) <= pos {
		outs = append(outs, "")
	}
	outs[pos] = name
	old := n.Outputs
	n.Outputs = outs
	if err := onnx.TypeNode(n); err != nil {
		n.Outputs = old
		b.fail("add the output %s to %v: %w", what, n, err)
		return ""
	}
	b.info[name] = inf
	return name
}

// nnReshapeDims reshapes v to dims, at most one of which may be -1 (a
// dim that changes between runs).
func (b *builder) nnReshapeDims(v string, dims []int64) string {
	free := 0
	for _, d := range dims {
		if d < 0 {
			free++
		}
	}
	if free > 1 {
		b.fail("reshape to %v: more than one dim changes between runs", dims)
		return ""
	}
	return b.reshape(v, dims...)
}

// nnPoolWindow checks a pooling's kernel_shape against X and returns its
// window geometry.
func (b *builder) nnPoolWindow(op, x string, kernel []int64, autoPad string, pads, strides, dilations []int64, ceil int64) *nnWindow {
	xsp := b.nnStaticSpatial(op, x)
	if b.err != nil {
		return nil
	}
	if len(kernel) != len(xsp) {
		b.fail("%s: kernel_shape %v for %d spatial axes", op, kernel, len(xsp))
		return nil
	}
	return b.nnWindowGeometry(op, autoPad, pads, strides, dilations, xsp, kernel, ceil != 0)
}

// nnOnesKernel is a constant [1, 1, kernel...] of ones of type dt.
func (b *builder) nnOnesKernel(kernel []int64, dt onnx.DataType) string {
	cnt := numElements(kernel)
	vals := make([]float64, cnt)
	for i := range vals {
		vals[i] = 1
	}
	t := floatTensor(dt, vals)
	if t == nil {
		b.fail("no constant of type %v can be made", dt)
		return ""
	}
	t.Shape = []int{1, 1}
	for _, k := range kernel {
		t.Shape = append(t.Shape, int(k))
	}
	return b.op("Constant", nil, attrTensor("value", t))
}

// nnPoolUnwindow sends t, one value per window of x ([N, C, out...]), to
// every input position its window covers, summing where windows overlap:
// one ConvTranspose of ones over the planes (N·C of them, as a batch).
func (b *builder) nnPoolUnwindow(t string, w *nnWindow, x string) string {
	planes := b.reshape(t, append([]int64{-1, 1}, w.out...)...)
	r := b.nnUnwindow(planes, b.nnOnesKernel(w.kernel, b.typeOf(x)), 1, w)
	return b.like(b.reshapeLike(r, x), x)
}

// maxPoolGrad: each output's gradient goes to the input position of its
// window's maximum, which the Indices output names (the first maximum on
// ties, as the native backend and ONNX Runtime choose): dX is dY
// scattered, with addition, into zeros at the flattened Indices
// (https://onnx.ai/onnx/operators/onnx__MaxPool.html). The rule gives the
// node an Indices output when it has none. Overlapping windows can send
// two gradients to one position: that needs ScatterElements' reduction
// (opset 16); without overlap a plain scatter does.
func maxPoolGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.MaxPool)
	if v := op.SinceVersion(); v < 8 {
		b.fail("MaxPool-%d has no Indices output, which its gradient reads: it needs opset 8 or later (the model imports %d)", v, b.opset)
		return nil
	}
	x, y, g := op.In.X, op.Out.Y, dy[0]
	if g == "" {
		return nil
	}
	w := b.nnPoolWindow("MaxPool", x, op.KernelShape, op.AutoPad, op.Pads, op.Strides, op.Dilations, op.CeilMode)
	if b.err != nil {
		return nil
	}
	overlap := false
	for i := range w.in {
		if w.padBegin[i] >= w.ek(i) || w.padEnd[i] >= w.ek(i) {
			// Such a window has no maximum (Indices -1).
			b.fail("MaxPool: pads %v as large as the window %v", op.Pads, w.kernel)
			return nil
		}
		overlap = overlap || w.strides[i] < w.ek(i)
	}
	if op.StorageOrder != 0 && op.StorageOrder != 1 {
		b.fail("MaxPool: storage_order %d", op.StorageOrder)
		return nil
	}
	idx := op.Out.Indices
	if idx == "" {
		idx = b.nnAddOutput(n, 1, "indices", Info{Type: onnx.Int64, Shape: slices.Clone(b.shapeOf(y))})
	}
	flat := b.reshape(b.zerosLike(x), -1)
	fi, fg := b.reshape(idx, -1), b.reshape(g, -1)
	var s string
	switch {
	case b.opset >= 16:
		s = b.op("ScatterElements", []string{flat, fi, fg}, attrInt("axis", 0), attrString("reduction", "add"))
	case overlap:
		b.fail("MaxPool: the gradient of overlapping windows needs ScatterElements with reduction (opset 16; the model imports %d)", b.opset)
		return nil
	case b.opset >= 11:
		s = b.op("ScatterElements", []string{flat, fi, fg}, attrInt("axis", 0))
	case b.opset >= 9:
		s = b.op("Scatter", []string{flat, fi, fg}, attrInt("axis", 0))
	default:
		b.fail("MaxPool: the gradient needs Scatter (opset 9; the model imports %d)", b.opset)
		return nil
	}
	if op.StorageOrder == 0 {
		return []string{b.like(b.reshapeLike(s, x), x)}
	}
	// Column-major indices count the first spatial axis fastest: they are
	// row-major positions in X with its spatial axes reversed.
	xs := b.shapeOf(x)
	rank := len(xs)
	dims := []int64{xs[0], xs[1]}
	perm := []int64{0, 1}
	for i := 2; i < rank; i++ {
		dims = append(dims, xs[rank+1-i])
		perm = append(perm, int64(rank+1-i))
	}
	return []string{b.like(b.transpose(b.nnReshapeDims(s, dims), perm...), x)}
}

// nnPoolReciprocals is 1/divisor of every window of an average pooling
// (0 for a window without elements): a scalar when all are equal, else a
// constant of the output's spatial shape. The divisor counts the window's
// positions inside X, or with countPad inside the padded extent (as the
// native backend does; the extent the ceil mode adds is never counted).
func (b *builder) nnPoolReciprocals(w *nnWindow, countPad bool, dt onnx.DataType) string {
	n := len(w.in)
	per := make([][]int64, n)
	for i := range n {
		per[i] = make([]int64, w.out[i])
		lo, hi := int64(0), w.in[i]
		if countPad {
			lo, hi = -w.padBegin[i], w.in[i]+w.padEnd[i]
		}
		for o := range w.out[i] {
			for k := range w.kernel[i] {
				p := o*w.strides[i] - w.padBegin[i] + k*w.dilations[i]
				if p >= lo && p < hi {
					per[i][o]++
				}
			}
		}
	}
	total := numElements(w.out)
	vals := make([]float64, total)
	pos := make([]int64, n)
	uniform := true
	for j := range vals {
		c := int64(1)
		for i := range n {
			c *= per[i][pos[i]]
		}
		if c > 0 {
			vals[j] = 1 / float64(c)
		}
		uniform = uniform && vals[j] == vals[0]
		for i := n - 1; i >= 0; i-- {
			pos[i]++
			if pos[i] < w.out[i] {
				break
			}
			pos[i] = 0
		}
	}
	if uniform && total > 0 {
		return b.scalar(vals[0], dt)
	}
	t := floatTensor(dt, vals)
	if t == nil {
		b.fail("no constant of type %v can be made", dt)
		return ""
	}
	t.Shape = make([]int, n)
	for i, d := range w.out {
		t.Shape[i] = int(d)
	}
	return b.op("Constant", nil, attrTensor("value", t))
}

// averagePoolGrad: each output's gradient, divided by its window's
// divisor, is spread over the window's input positions
// (https://onnx.ai/onnx/operators/onnx__AveragePool.html):
// dX = ConvTranspose(dY / divisor, ones) over the planes.
func averagePoolGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.AveragePool)
	if !b.nnBroadcasts("AveragePool") {
		return nil
	}
	x, g := op.In.X, dy[0]
	w := b.nnPoolWindow("AveragePool", x, op.KernelShape, op.AutoPad, op.Pads, op.Strides, op.Dilations, op.CeilMode)
	if b.err != nil {
		return nil
	}
	t := b.mul(g, b.nnPoolReciprocals(w, op.CountIncludePad != 0, b.typeOf(x)))
	return []string{b.nnPoolUnwindow(t, w, x)}
}

// nnLpFactor is d|x|^p/dx / p = sign(x)·|x|^(p−1), the per-element factor
// of an Lp pooling's gradient.
func (b *builder) nnLpFactor(x string, p int64) string {
	switch p {
	case 1:
		return b.op("Sign", []string{x})
	case 2:
		return x
	}
	pw := b.op("Pow", []string{b.op("Abs", []string{x}), b.scalarLike(float64(p-1), x)})
	return b.mul(b.op("Sign", []string{x}), pw)
}

// nnLpWindowFactor is dY / Y^(p−1), 0 where Y is 0 (every element of the
// window is 0 there: a minimum of the norm, zero subgradient, as the
// native backend takes it); dY itself for p = 1.
func (b *builder) nnLpWindowFactor(g, y string, p int64) string {
	if p == 1 {
		return g
	}
	den := y
	if p != 2 {
		den = b.op("Pow", []string{y, b.scalarLike(float64(p-1), y)})
	}
	q := b.div(g, den)
	pos := b.op("Greater", []string{y, b.scalarLike(0, y)})
	return b.op("Where", []string{pos, q, b.scalarLike(0, y)})
}

// nnLpCheck fails for what the Lp pooling rules do not handle.
func (b *builder) nnLpCheck(op string, p int64) bool {
	if p < 1 {
		b.fail("%s with p = %d", op, p)
		return false
	}
	if b.opset < 9 {
		b.fail("%s: the gradient needs Sign and Where (opset 9; the model imports %d)", op, b.opset)
		return false
	}
	return true
}

// lpPoolGrad: Y = (Σ_window |x|^p)^(1/p), so
// dX = sign(x)|x|^(p−1) · Σ_{windows covering x} dY / Y^(p−1)
// (https://onnx.ai/onnx/operators/onnx__LpPool.html); the window sum is a
// ConvTranspose of ones as for AveragePool.
func lpPoolGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.LpPool)
	if !b.nnLpCheck("LpPool", op.P) {
		return nil
	}
	x, y, g := op.In.X, op.Out.Y, dy[0]
	w := b.nnPoolWindow("LpPool", x, op.KernelShape, op.AutoPad, op.Pads, op.Strides, op.Dilations, op.CeilMode)
	if b.err != nil {
		return nil
	}
	s := b.nnPoolUnwindow(b.nnLpWindowFactor(g, y, op.P), w, x)
	return []string{b.like(b.mul(b.nnLpFactor(x, op.P), s), x)}
}

// globalLpPoolGrad: lpPoolGrad with one window per plane, so the window
// sum is a broadcast.
func globalLpPoolGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.GlobalLpPool)
	if !b.nnLpCheck("GlobalLpPool", op.P) {
		return nil
	}
	x, y, g := op.In.X, op.Out.Y, dy[0]
	t := b.nnLpWindowFactor(g, y, op.P)
	// The product broadcasts t, one value per plane, over the plane.
	return []string{b.like(b.mul(b.nnLpFactor(x, op.P), t), x)}
}

// nnPlaneSize is the number of spatial positions of x ([N, C, D...]),
// which must not change between runs.
func (b *builder) nnPlaneSize(op, x string) (int64, bool) {
	sp := b.nnStaticSpatial(op, x)
	if b.err != nil {
		return 0, false
	}
	return numElements(sp), true
}

// globalAveragePoolGrad: dX = dY / (spatial size), broadcast over the
// plane (https://onnx.ai/onnx/operators/onnx__GlobalAveragePool.html).
func globalAveragePoolGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.GlobalAveragePool)
	x, g := op.In.X, dy[0]
	s, ok := b.nnPlaneSize("GlobalAveragePool", x)
	if !ok {
		return nil
	}
	if s == 0 {
		return []string{b.zerosLike(x)}
	}
	t := b.mul(g, b.scalarLike(1/float64(s), x))
	return []string{b.like(b.op("Expand", []string{t, b.shapeValue(x)}), x)}
}

// globalMaxPoolGrad: each plane's gradient goes to the first position of
// its maximum, the native backend's choice (ArgMax's too), not split
// among ties (https://onnx.ai/onnx/operators/onnx__GlobalMaxPool.html):
// a one-hot mask of the ArgMax over the flattened plane times dY.
func globalMaxPoolGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.GlobalMaxPool)
	if !b.nnBroadcasts("GlobalMaxPool") {
		return nil
	}
	x, g := op.In.X, dy[0]
	s, ok := b.nnPlaneSize("GlobalMaxPool", x)
	if !ok {
		return nil
	}
	if s == 0 {
		return []string{b.zerosLike(x)}
	}
	planes := b.reshape(x, 0, 0, -1)
	am := b.op("ArgMax", []string{planes}, attrInt("axis", 2), attrInt("keepdims", 1))
	pos := make([]int64, s)
	for i := range pos {
		pos[i] = int64(i)
	}
	mask := b.cast(b.op("Equal", []string{b.ints(pos...), am}), b.typeOf(x))
	dx := b.mul(mask, b.reshape(g, 0, 0, -1))
	return []string{b.like(b.reshapeLike(dx, x), x)}
}
