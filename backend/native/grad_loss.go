package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rules of SoftmaxCrossEntropyLoss (12, 13) and
// NegativeLogLikelihoodLoss (12, 13, 22), matching lossKernel (loss.go).
//
// With logp the log-probabilities ([N, C, D] after flattening the trailing
// dimensions; the scores' log-softmax along axis 1 for SCE, the input for
// NLL), t the labels, w the class weights (1 without), the per-label loss
// is per[i,j] = -w[t] logp[i,t,j], 0 where t is ignore_index. Its
// gradient reaching per[i,j] is c[i,j]: the output's gradient itself
// (none), the scalar's (sum), or the scalar's divided by W, the sum of the
// weights of the labels that count (mean). Then
//
//	dL/dlogp[i,k,j] = -c[i,j] w[t] [k = t]  (+ the gradient of log_prob)
//	dL/dx[i,k,j]    = G[i,k,j] - softmax[i,k,j] Σ_k' G[i,k',j]  (SCE; NLL: G)
//	dL/dw[c]        = Σ_{t=c} c[i,j] (-logp[i,c,j])  (none, sum)
//	                = g/W Σ_{t=c} (-logp[i,c,j] - L)  (mean, L the loss)
//
// Labels get no gradient; the weights only where the schema leaves them
// differentiable (version 12 says nothing; 13 and later mark them
// non-differentiable, and the engine then asks for none).

type lossGrad struct {
	softmax   bool
	reduction string
	ignore    *int64
	name      string

	x, labels, w, y, lp int

	logp   []float64 // log-probabilities, recomputed in float64 as the forward does
	gl     []float64 // dL/dlogp, then dL/dx
	wbuf   []float64 // the weights, widened
	coefs  []float64 // the output's gradient, widened (reduction none)
	gwAcc  []float64 // dL/dw
	gx, gw gradScratch
}

func (gb *gradBuilder) lossGradRule(softmax bool, name, reduction string, ignore *int64, in, target, weight, out, logProb string) error {
	switch reduction {
	case "none", "sum", "mean":
	default:
		return fmt.Errorf("%s: reduction must be none, sum or mean, got %q", name, reduction)
	}
	k := &lossGrad{softmax: softmax, reduction: reduction, ignore: ignore, name: name,
		x: gb.slot(in), labels: gb.slot(target), w: gb.slot(weight), y: gb.slot(out), lp: gb.slot(logProb)}
	return gb.set(k.run)
}

// VisitSoftmaxCrossEntropyLoss: the gradient of the loss and of log_prob.
func (gb *gradBuilder) VisitSoftmaxCrossEntropyLoss(op *ops.SoftmaxCrossEntropyLoss) error {
	return gb.lossGradRule(true, "SoftmaxCrossEntropyLoss", op.Reduction, op.IgnoreIndex,
		op.In.Scores, op.In.Labels, op.In.Weights, op.Out.Output, op.Out.LogProb)
}

// VisitNegativeLogLikelihoodLoss: the gradient of the loss.
func (gb *gradBuilder) VisitNegativeLogLikelihoodLoss(op *ops.NegativeLogLikelihoodLoss) error {
	return gb.lossGradRule(false, "NegativeLogLikelihoodLoss", op.Reduction, op.IgnoreIndex,
		op.In.Input, op.In.Target, op.In.Weight, op.Out.Loss, "")
}

func (k *lossGrad) run(slots []onnx.Value, g *gradState) error {
	gy, glp := g.of(k.y), g.of(k.lp)
	if gy == nil && glp == nil {
		return nil
	}
	wantX, wantW := g.wants(k.x), k.w >= 0 && g.wants(k.w)
	if !wantX && !wantW {
		return nil
	}
	scores, err := floatTensor(slots[k.x], "scores")
	if err != nil {
		return err
	}
	labels, ok := slots[k.labels].(*onnx.Tensor)
	if !ok || labels == nil {
		return fmt.Errorf("labels are %s, not a tensor", onnx.DescribeValue(slots[k.labels]))
	}
	if len(scores.Shape) < 2 {
		return fmt.Errorf("%s: scores must have shape [N, C, ...], got %v", k.name, scores.Shape)
	}
	n, c := scores.Shape[0], scores.Shape[1]
	d := onnx.NumElements(scores.Shape[2:])
	if len(labels.Shape) != len(scores.Shape)-1 || labels.Shape[0] != n || !slices.Equal(labels.Shape[1:], scores.Shape[2:]) {
		return fmt.Errorf("%s: labels have shape %v, want %v without dimension 1", k.name, labels.Shape, scores.Shape)
	}
	var weights *onnx.Tensor
	if k.w >= 0 {
		if weights, err = floatTensor(slots[k.w], "weights"); err != nil {
			return err
		}
		if weights.Type != scores.Type || len(weights.Shape) != 1 || weights.Shape[0] != c {
			return fmt.Errorf("%s: weights must be a %v vector of %d classes, got tensor(%v)%v", k.name, scores.Type, c, weights.Type, weights.Shape)
		}
	}
	for _, t := range []*onnx.Tensor{gy, glp} {
		if t != nil && t.Type != scores.Type {
			return network.Unsupportedf("%s: a gradient of tensor(%v) for scores of tensor(%v)", k.name, t.Type, scores.Type)
		}
	}
	// Widen.
	k.logp = withLen(k.logp, scores.Len())
	switch s := scores.Data.(type) {
	case []float32:
		for i, v := range s {
			k.logp[i] = float64(v)
		}
	case []float64:
		copy(k.logp, s)
	}
	if k.softmax {
		logSoftmaxAxis1(k.logp, n, c, d)
	}
	var w []float64
	if weights != nil {
		k.wbuf = withLen(k.wbuf, c)
		w = k.wbuf
		float64sInto(w, weights.Data)
	}
	switch l := labels.Data.(type) {
	case []int64:
		return lossGradTyped(k, g, scores, weights, w, l, gy, glp, n, c, d, wantX, wantW)
	case []int32:
		return lossGradTyped(k, g, scores, weights, w, l, gy, glp, n, c, d, wantX, wantW)
	}
	return fmt.Errorf("%s: labels must be int32 or int64, got %v", k.name, labels.Type)
}

// lossGradAt reads element i of a float32 or float64 gradient.
func lossGradAt(t *onnx.Tensor, i int) float64 {
	switch d := t.Data.(type) {
	case []float32:
		return float64(d[i])
	case []float64:
		return d[i]
	}
	return 0
}

func lossGradTyped[L int32 | int64](k *lossGrad, g *gradState, scores, weights *onnx.Tensor, w []float64, labels []L,
	gy, glp *onnx.Tensor, n, c, d int, wantX, wantW bool) error {
	logp := k.logp
	hasIgnore, ignore := k.ignore != nil, int64(0)
	if hasIgnore {
		ignore = *k.ignore
	}
	// The sums of the mean reduction.
	var weightSum, total float64
	for i := range n {
		for j := range d {
			t := labels[i*d+j]
			if hasIgnore && int64(t) == ignore {
				continue
			}
			if t < 0 || int64(t) >= int64(c) {
				return fmt.Errorf("%s: label %d at position %d is not a class in [0, %d)", k.name, t, i*d+j, c)
			}
			wt := 1.0
			if w != nil {
				wt = w[t]
			}
			weightSum += wt
			total += -logp[(i*c+int(t))*d+j] * wt
		}
	}
	// c[i,j], the gradient reaching per-label loss ij: perLabel[ij] for
	// none, scalar otherwise.
	var scalar float64
	var perLabel []float64
	none := k.reduction == "none"
	if gy != nil && none {
		k.coefs = withLen(k.coefs, gy.Len())
		perLabel = k.coefs
		float64sInto(perLabel, gy.Data)
	}
	if gy != nil && k.reduction != "none" {
		scalar = lossGradAt(gy, 0)
		if k.reduction == "mean" {
			if weightSum == 0 {
				scalar = 0 // no label counts: the loss is 0/0 and nothing depends on the scores
			} else {
				scalar /= weightSum
			}
		}
	}
	if wantX {
		k.gl = withLen(k.gl, scores.Len())
		gl := k.gl
		if glp != nil {
			float64sInto(gl, glp.Data)
		} else {
			clear(gl)
		}
		for i := range n {
			for j := range d {
				t := labels[i*d+j]
				if hasIgnore && int64(t) == ignore {
					continue
				}
				wt := 1.0
				if w != nil {
					wt = w[t]
				}
				cf := scalar
				if perLabel != nil {
					cf = perLabel[i*d+j]
				}
				gl[(i*c+int(t))*d+j] -= cf * wt
			}
		}
		if k.softmax {
			for i := range n {
				blk, lp := gl[i*c*d:(i+1)*c*d], logp[i*c*d:(i+1)*c*d]
				for j := range d {
					s := 0.0
					for kk := range c {
						s += blk[kk*d+j]
					}
					for kk := range c {
						blk[kk*d+j] -= math.Exp(lp[kk*d+j]) * s
					}
				}
			}
		}
		gx := k.gx.buf.tensor(scores.Type, scores.Shape)
		storeFloat64s(gx, gl)
		if err := g.add(k.x, gx); err != nil {
			return err
		}
	}
	if wantW && gy != nil {
		k.gwAcc = withLen(k.gwAcc, c)
		acc := k.gwAcc
		clear(acc)
		loss := 0.0
		if k.reduction == "mean" && weightSum != 0 {
			loss = total / weightSum
		}
		for i := range n {
			for j := range d {
				t := labels[i*d+j]
				if hasIgnore && int64(t) == ignore {
					continue
				}
				v := -logp[(i*c+int(t))*d+j]
				if k.reduction == "mean" {
					v -= loss
				}
				cf := scalar
				if perLabel != nil {
					cf = perLabel[i*d+j]
				}
				acc[t] += cf * v
			}
		}
		gwT := k.gw.buf.tensor(weights.Type, weights.Shape)
		storeFloat64s(gwT, acc)
		if err := g.add(k.w, gwT); err != nil {
			return err
		}
	}
	return nil
}
