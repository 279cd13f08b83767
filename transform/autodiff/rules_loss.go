package autodiff

import (
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

func init() {
	register(crossEntropyGrad, "SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss")
}

// crossEntropyGrad differentiates SoftmaxCrossEntropyLoss (12, 13) and
// NegativeLogLikelihoodLoss (12, 13, 22), as the native backend does
// (backend/native/grad_loss.go). With logp the log-probabilities
// [N, C, d…] (the log-softmax of the scores along axis 1 for SCE, the
// input for NLL), t the labels, w the class weights (1 without), the loss
// of label ij is -w[t] logp[i,t,j], 0 where t = ignore_index. Let h be
// the one-hot [k = t] of the labels that count, and c the gradient
// reaching one label's loss: the output's own (none), the scalar's (sum),
// or the scalar's over W = Σ w[t] h, the weight of the labels that count
// (mean; 0 when W = 0). Then
//
//	G = dL/dlogp = glp - c·w[k]·h      (glp: the gradient of SCE's log_prob)
//	dx = G - softmax·Σ_k G             (SCE; NLL: dx = G)
//	dw[k] = Σ c·(-logp - L)·h          (L the loss for mean, 0 otherwise)
//
// The labels get no gradient; the weights only in version 12 (later ones
// mark them non-differentiable).
func crossEntropyGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	var x, labels, w, reduction string
	var ignore *int64
	softmax := false
	switch op := n.Op.(type) {
	case *ops.SoftmaxCrossEntropyLoss:
		x, labels, w, reduction, ignore, softmax = op.In.Scores, op.In.Labels, op.In.Weights, op.Reduction, op.IgnoreIndex, true
	case *ops.NegativeLogLikelihoodLoss:
		x, labels, w, reduction, ignore = op.In.Input, op.In.Target, op.In.Weight, op.Reduction, op.IgnoreIndex
	}
	gy, glp := dy[0], ""
	if softmax && len(dy) > 1 {
		glp = dy[1]
	}
	wantX := need[0]
	wantW := w != "" && len(need) > 2 && need[2] && elemDifferentiable(n, 2) && gy != ""
	if !wantX && !wantW {
		return nil
	}
	switch reduction {
	case "none", "sum", "mean":
	default:
		b.fail("%s reduction must be none, sum or mean, got %q", n.OpType, reduction)
		return nil
	}
	dt, xs := b.typeOf(x), b.shapeOf(x)
	rank := len(xs)
	if b.err != nil {
		return nil
	}
	if rank < 2 {
		b.fail("%s: the scores must have shape [N, C, ...], got %v", n.OpType, xs)
		return nil
	}
	classes := xs[1]
	lab := labels
	if b.typeOf(labels) != onnx.Int64 {
		lab = b.cast(labels, onnx.Int64)
	}
	labU := b.unsqueeze(lab, 1)
	hit := b.op("Equal", []string{labU, b.elemArange(classes, rank, 1, x, 1)})
	if ignore != nil && *ignore >= 0 && (classes < 0 || *ignore < classes) {
		// The ignored label is a class: drop its hits.
		counts := b.op("Not", []string{b.op("Equal", []string{labU, b.elemConst(onnx.Scalar(*ignore))})})
		hit = b.op("And", []string{hit, counts})
	}
	// w[k]·h, the weight of each label that counts at its class.
	var wh string
	if w != "" {
		shape := make([]int64, rank)
		for i := range shape {
			shape[i] = 1
		}
		shape[1] = classes
		wh = b.op("Where", []string{hit, b.reshape(w, shape...), b.scalar(0, dt)})
	} else {
		wh = b.cast(hit, dt)
	}
	all := make([]int64, rank)
	for i := range all {
		all[i] = int64(i)
	}
	var c string
	if gy != "" {
		switch reduction {
		case "none":
			c = b.unsqueeze(gy, 1)
		case "sum":
			c = gy
		case "mean":
			total := b.reduceSum(wh, all, false)
			c = b.op("Where", []string{b.op("Equal", []string{total, b.scalar(0, dt)}), b.scalar(0, dt), b.div(gy, total)})
		}
	}
	var logp string
	logProb := func() string {
		if logp == "" {
			logp = b.crossEntropyLogProb(n, x, softmax)
		}
		return logp
	}
	out := make([]string, len(n.Inputs))
	if wantX {
		g := glp
		if c != "" {
			if g == "" {
				g = b.neg(b.mul(wh, c))
			} else {
				g = b.sub(g, b.mul(wh, c))
			}
		}
		switch {
		case g == "":
			// Nothing reaches the scores.
		case softmax:
			p := b.op("Exp", []string{logProb()})
			out[0] = b.sub(g, b.mul(p, b.reduceSum(g, []int64{1}, true)))
		default:
			out[0] = g
		}
	}
	if wantW {
		v := b.neg(logProb())
		if reduction == "mean" {
			v = b.sub(v, n.Outputs[0])
		}
		per := b.elemMask(hit, b.mul(v, c), dt)
		var others []int64
		for _, a := range all {
			if a != 1 {
				others = append(others, a)
			}
		}
		out[2] = b.reduceSum(per, others, false)
	}
	return out
}

// crossEntropyLogProb is the log-probabilities the loss reads: the input of
// NLL; for SCE its log_prob output when the node has one, else the
// log-softmax of the scores along axis 1 (before opset 13 LogSoftmax
// flattens the axes from axis on, so axis 1 is moved last first).
func (b *builder) crossEntropyLogProb(n *onnx.Node, x string, softmax bool) string {
	if !softmax {
		return x
	}
	if len(n.Outputs) > 1 && n.Outputs[1] != "" {
		return n.Outputs[1]
	}
	rank := int64(len(b.shapeOf(x)))
	if b.opset >= 13 || rank == 2 {
		return b.op("LogSoftmax", []string{x}, attrInt("axis", 1))
	}
	perm, back := []int64{0}, []int64{0, rank - 1}
	for i := int64(2); i < rank; i++ {
		perm = append(perm, i)
		back = append(back, i-1)
	}
	perm = append(perm, 1)
	t := b.op("LogSoftmax", []string{b.transpose(x, perm...)}, attrInt("axis", rank-1))
	return b.transpose(t, back...)
}
