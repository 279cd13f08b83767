package transform

import (
	"math"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// foldBatchNorm folds an inference BatchNormalization into the Conv,
// ConvTranspose or Gemm that produces its input, or into a MatMul by a
// constant matrix followed by the Add of a constant bias when the MatMul's
// input is known to be a matrix. Per output channel c the
// normalisation is y = x·f[c] + t[c] with f = scale/sqrt(var+eps) and
// t = beta − mean·f, so the producer's weights for channel c are
// multiplied by f[c] and its bias becomes bias·f[c] + t[c] (a producer
// without a bias gains one). The new weights and bias are new
// initializers; the old ones stay for other readers or go with
// eliminateDead. The producer then writes the BatchNormalization's
// output, and the BatchNormalization is removed.
//
// Only when certain: the BatchNormalization has one output and runs in
// inference mode (training_mode 0, spatial 1, version 7 or later); every
// parameter and the producer's weights and bias are constants of one
// floating-point type and of the expected shapes; the producer's output
// feeds nothing but the BatchNormalization (no graph output, no subgraph).
// For Gemm the output is [N, M] and BatchNormalization's channels are its
// M columns.
func foldBatchNorm(g *onnx.Graph, _ *Options) (int, error) {
	x := indexGraph(g)
	drop := map[*onnx.Node]bool{}
	for _, bn := range g.Nodes {
		norm, in, out, ok := inferenceBatchNorm(x, bn)
		if !ok {
			continue
		}
		p := x.producer[in]
		if p == nil || drop[p] || !x.onlyFeeds(in, bn) || len(p.Outputs) != 1 {
			continue
		}
		var folded bool
		var err error
		switch op := p.Op.(type) {
		case *ops.Conv:
			folded = foldIntoConv(x, p, op.In.W, op.In.B, 1, false, norm)
		case *ops.ConvTranspose:
			folded = foldIntoConv(x, p, op.In.W, op.In.B, op.Group, true, norm)
		case *ops.Gemm:
			folded = foldIntoGemm(x, p, op, norm)
		case *ops.Add:
			folded, err = foldIntoMatMulAdd(x, p, op, norm)
		}
		if err != nil {
			return 0, err
		}
		if !folded {
			continue
		}
		x.forgetNode(bn)
		p.Outputs[0] = out
		x.producer[out] = p
		delete(x.producer, in)
		if err := retype(p); err != nil {
			return 0, err
		}
		drop[bn] = true
	}
	removeNodes(g, drop)
	return len(drop), nil
}

// channelAffine is an inference BatchNormalization as y = x·factor + shift
// per channel, in float64, with the element type of its parameters.
type channelAffine struct {
	elem          onnx.DataType
	factor, shift []float64
}

// inferenceBatchNorm recognises an inference-mode BatchNormalization with
// constant parameters and returns it as a channelAffine with its data
// input and its output.
func inferenceBatchNorm(x *graphIndex, n *onnx.Node) (channelAffine, string, string, bool) {
	bn, ok := n.Op.(*ops.BatchNormalization)
	if !ok || bn.SinceVersion() < 7 || (bn.SinceVersion() < 9 && bn.Spatial != 1) || bn.TrainingMode != 0 || len(n.Outputs) == 0 {
		return channelAffine{}, "", "", false
	}
	for _, o := range n.Outputs[1:] {
		if o != "" {
			return channelAffine{}, "", "", false
		}
	}
	mean, variance := bn.In.InputMean, bn.In.InputVar
	if bn.SinceVersion() < 14 {
		mean, variance = bn.In.Mean, bn.In.Var
	}
	params := make([][]float64, 4)
	var elem onnx.DataType
	for i, name := range []string{bn.In.Scale, bn.In.B, mean, variance} {
		t, ok := x.constant(name)
		if !ok || t.Rank() != 1 || (i > 0 && t.Type != elem) {
			return channelAffine{}, "", "", false
		}
		elem = t.Type
		if params[i], ok = floatValues(t); !ok || (i > 0 && len(params[i]) != len(params[0])) {
			return channelAffine{}, "", "", false
		}
	}
	scale, beta, mu, v := params[0], params[1], params[2], params[3]
	if len(scale) == 0 {
		return channelAffine{}, "", "", false
	}
	a := channelAffine{elem: elem, factor: make([]float64, len(scale)), shift: make([]float64, len(scale))}
	for c := range scale {
		a.factor[c] = scale[c] / math.Sqrt(v[c]+float64(bn.Epsilon))
		a.shift[c] = beta[c] - mu[c]*a.factor[c]
	}
	return a, bn.In.X, bn.Out.Y, bn.In.X != "" && bn.Out.Y != ""
}

// foldIntoConv scales the weights of Conv (transposed false, weights
// [M, C/group, k...]) or ConvTranspose (transposed true, weights
// [C, M/group, k...]) per output channel and sets its bias.
func foldIntoConv(x *graphIndex, p *onnx.Node, wName, bName string, group int64, transposed bool, a channelAffine) bool {
	wt, ok := x.constant(wName)
	if !ok || wt.Type != a.elem || wt.Rank() < 3 || group < 1 || len(p.Inputs) < 2 {
		return false
	}
	channels := len(a.factor)
	var channelOf func(i int) int // element of W to output channel
	if !transposed {
		if wt.Shape[0] != channels {
			return false
		}
		perChannel := wt.Len() / channels
		channelOf = func(i int) int { return i / perChannel }
	} else {
		inputs, perGroupOut := wt.Shape[0], wt.Shape[1]
		if int64(inputs)%group != 0 || int64(perGroupOut)*group != int64(channels) {
			return false
		}
		inputsPerGroup := inputs / int(group)
		perBlock := onnx.NumElements(wt.Shape[2:]) // one kernel: k1·k2·...
		channelOf = func(i int) int {
			block := i / perBlock
			c, j := block/perGroupOut, block%perGroupOut
			return (c/inputsPerGroup)*perGroupOut + j
		}
	}
	scaled, ok := scaleByChannel(wt, a.factor, channelOf)
	if !ok {
		return false
	}
	bias, ok := foldedBias(x, bName, 1, a)
	if !ok {
		return false
	}
	wNew := x.fresh(wName + ".bnfolded")
	x.addInitializer(wNew, scaled)
	bNew := x.fresh(p.Outputs[0] + ".bias.bnfolded")
	x.addInitializer(bNew, floatTensor(a.elem, bias, []int{channels}))
	x.forgetNode(p)
	p.Inputs = []string{p.Inputs[0], wNew, bNew}
	x.addNode(p)
	return true
}

// foldIntoGemm folds into Gemm Y = alpha·A·B + beta·C (B transposed when
// transB is set): B's column m (its row with transB) is scaled by
// factor[m], and C becomes beta·C·factor + shift with beta set to 1.
func foldIntoGemm(x *graphIndex, p *onnx.Node, gemm *ops.Gemm, a channelAffine) bool {
	bt, ok := x.constant(gemm.In.B)
	if !ok || gemm.SinceVersion() < 7 || bt.Type != a.elem || bt.Rank() != 2 || len(p.Inputs) < 2 {
		return false
	}
	channels := len(a.factor)
	rows, cols := bt.Shape[0], bt.Shape[1]
	var channelOf func(i int) int
	switch {
	case gemm.TransB == 0 && cols == channels:
		channelOf = func(i int) int { return i % cols }
	case gemm.TransB != 0 && rows == channels:
		channelOf = func(i int) int { return i / cols }
	default:
		return false
	}
	scaled, ok := scaleByChannel(bt, a.factor, channelOf)
	if !ok {
		return false
	}
	bias, ok := foldedBias(x, gemm.In.C, float64(gemm.Beta), a)
	if !ok {
		return false
	}
	bNew := x.fresh(gemm.In.B + ".bnfolded")
	x.addInitializer(bNew, scaled)
	cNew := x.fresh(p.Outputs[0] + ".bias.bnfolded")
	x.addInitializer(cNew, floatTensor(a.elem, bias, []int{channels}))
	attrs := make([]*onnx.Attribute, 0, len(p.Attributes)+1)
	for _, at := range p.Attributes {
		if at.Name != "beta" {
			attrs = append(attrs, at)
		}
	}
	p.Attributes = append(attrs, &onnx.Attribute{Name: "beta", Type: onnx.AttrFloat, Float: 1})
	x.forgetNode(p)
	p.Inputs = []string{p.Inputs[0], bNew, cNew}
	x.addNode(p)
	return true
}

// foldIntoMatMulAdd folds into Add(MatMul(X, W), c) with W a constant
// [K, M] matrix and c a constant bias, when X is known to have rank 2 (so
// the output is [N, M] and BatchNormalization's channels are its columns):
// W's column m is scaled by factor[m] and c becomes c·factor + shift.
func foldIntoMatMulAdd(x *graphIndex, add *onnx.Node, op *ops.Add, a channelAffine) (bool, error) {
	mmOut, cName := op.In.A, op.In.B
	if _, ok := x.constant(mmOut); ok {
		mmOut, cName = cName, mmOut
	}
	q := x.producer[mmOut]
	if q == nil || !x.onlyFeeds(mmOut, add) || mmOut == cName {
		return false, nil
	}
	mm, ok := q.Op.(*ops.MatMul)
	if !ok || !isMatrix(x, mm.In.A) {
		return false, nil
	}
	wt, ok := x.constant(mm.In.B)
	if !ok || wt.Type != a.elem || wt.Rank() != 2 || wt.Shape[1] != len(a.factor) {
		return false, nil
	}
	if c, ok := x.constant(cName); !ok || c.Rank() > 2 {
		return false, nil // a bias of higher rank would broadcast the output to it
	}
	cols := wt.Shape[1]
	scaled, ok := scaleByChannel(wt, a.factor, func(i int) int { return i % cols })
	if !ok {
		return false, nil
	}
	bias, ok := foldedBias(x, cName, 1, a)
	if !ok {
		return false, nil
	}
	wNew := x.fresh(mm.In.B + ".bnfolded")
	x.addInitializer(wNew, scaled)
	cNew := x.fresh(add.Outputs[0] + ".bias.bnfolded")
	x.addInitializer(cNew, floatTensor(a.elem, bias, []int{cols}))
	x.forgetNode(q)
	q.Inputs = []string{mm.In.A, wNew}
	x.addNode(q)
	if err := retype(q); err != nil {
		return false, err
	}
	x.forgetNode(add)
	add.Inputs = []string{mmOut, cNew}
	x.addNode(add)
	return true, nil
}

// isMatrix reports whether value name certainly has rank 2: a graph input
// declared so, or the output of Flatten, Gemm, or a Reshape to a constant
// shape of two dimensions.
func isMatrix(x *graphIndex, name string) bool {
	if x.inputs[name] {
		ti := x.g.TypeOf(name)
		return ti != nil && ti.Kind == onnx.TensorKind && ti.HasShape && len(ti.Shape) == 2
	}
	switch op := x.producerOp(name).(type) {
	case *ops.Flatten, *ops.Gemm:
		return true
	case *ops.Reshape:
		shape, ok := x.constant(op.In.Shape)
		return ok && op.SinceVersion() >= 5 && shape.Len() == 2
	}
	return false
}

// foldedBias returns the producer's new per-channel bias, coef·bias·factor
// + shift, from its bias input name ("" for none). The bias must be a
// constant holding one value per channel or one value for all (a scalar,
// [1], [1, M] or [M]).
func foldedBias(x *graphIndex, name string, coef float64, a channelAffine) ([]float64, bool) {
	channels := len(a.factor)
	bias := make([]float64, channels)
	if name != "" {
		t, ok := x.constant(name)
		if !ok || t.Type != a.elem {
			return nil, false
		}
		v, ok := floatValues(t)
		if !ok {
			return nil, false
		}
		for _, d := range t.Shape[:max(t.Rank()-1, 0)] {
			if d != 1 {
				return nil, false
			}
		}
		switch len(v) {
		case channels:
			copy(bias, v)
		case 1:
			for c := range bias {
				bias[c] = v[0]
			}
		default:
			return nil, false
		}
	}
	for c := range bias {
		bias[c] = coef*bias[c]*a.factor[c] + a.shift[c]
	}
	return bias, true
}

// scaleByChannel returns a new tensor like t (float32 or float64) whose
// element i is t's multiplied by factor[channelOf(i)], rounded once to
// t's type. It works in t's own type so that folding a large weight
// allocates nothing but the result.
func scaleByChannel(t *onnx.Tensor, factor []float64, channelOf func(i int) int) (*onnx.Tensor, bool) {
	switch d := t.Data.(type) {
	case []float32:
		out := make([]float32, len(d))
		for i, v := range d {
			out[i] = float32(float64(v) * factor[channelOf(i)])
		}
		return onnx.FromSlice(out, t.Shape...), true
	case []float64:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = v * factor[channelOf(i)]
		}
		return onnx.FromSlice(out, t.Shape...), true
	}
	return nil, false
}

// floatValues returns a float32 or float64 tensor's values as float64.
func floatValues(t *onnx.Tensor) ([]float64, bool) {
	switch d := t.Data.(type) {
	case []float32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out, true
	case []float64:
		return append([]float64(nil), d...), true
	}
	return nil, false
}

// floatTensor makes a tensor of elem (float32 or float64) from values.
func floatTensor(elem onnx.DataType, values []float64, shape []int) *onnx.Tensor {
	if elem == onnx.Double {
		return onnx.FromSlice(values, shape...)
	}
	out := make([]float32, len(values))
	for i, v := range values {
		out[i] = float32(v)
	}
	return onnx.FromSlice(out, shape...)
}
