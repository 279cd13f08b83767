package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// lossKernel computes NegativeLogLikelihoodLoss and, with softmax set,
// SoftmaxCrossEntropyLoss (NLL of the log-softmax of the scores along the
// class axis 1). Inputs are [N, C, d1, ...] scores and [N, d1, ...] class
// labels; the optional weights hold one weight per class. A label equal to
// ignoreIndex contributes nothing and weighs nothing. The reduction is
// "none" (a loss per label), "sum", or "mean" (the sum divided by the sum
// of the weights of the labels that count). Values are computed in float64
// and rounded once to the scores' type.
type lossKernel struct {
	softmax     bool
	reduction   string
	ignoreIndex *int64
	name        string

	loss, logProb outputBuffer
	logp          []float64 // log-probabilities (softmax) or the input, widened
	perLabel      []float64
}

// compute returns the loss and, for softmax, the log-probabilities.
func (k *lossKernel) compute(scores, labels, weights *onnx.Tensor) (*onnx.Tensor, *onnx.Tensor, error) {
	if err := checkStorage(scores); err != nil {
		return nil, nil, err
	}
	if len(scores.Shape) < 2 {
		return nil, nil, fmt.Errorf("%s: scores must have shape [N, C, ...], got %v", k.name, scores.Shape)
	}
	n, c := scores.Shape[0], scores.Shape[1]
	d := onnx.NumElements(scores.Shape[2:])
	if len(labels.Shape) != len(scores.Shape)-1 || labels.Shape[0] != n || !slices.Equal(labels.Shape[1:], scores.Shape[2:]) {
		wantLabels := append([]int{n}, scores.Shape[2:]...)
		return nil, nil, fmt.Errorf("%s: labels have shape %v, want %v for scores %v", k.name, labels.Shape, wantLabels, scores.Shape)
	}
	idx, err := intsOf(labels)
	if err != nil || (labels.Type != onnx.Int32 && labels.Type != onnx.Int64) {
		return nil, nil, fmt.Errorf("%s: labels must be int32 or int64, got %v", k.name, labels.Type)
	}
	var w []float64
	if weights != nil {
		if weights.Type != scores.Type || len(weights.Shape) != 1 || weights.Shape[0] != c {
			return nil, nil, fmt.Errorf("%s: weights must be a %v vector of %d classes, got tensor(%v)%v", k.name, scores.Type, c, weights.Type, weights.Shape)
		}
		if w, err = float64sOf(weights); err != nil {
			return nil, nil, err
		}
	}
	// Widen the scores.
	k.logp = withLen(k.logp, scores.Len())
	logp := k.logp
	switch scores.Data.(type) {
	case []float32, []float64, []onnx.F16, []onnx.BF16:
		float64sInto(logp, scores.Data)
	default:
		return nil, nil, network.Unsupportedf("%s of %v tensors", k.name, scores.Type)
	}
	if k.softmax {
		logSoftmaxAxis1(logp, n, c, d)
	}
	// Per-label losses and the total weight.
	k.perLabel = withLen(k.perLabel, n*d)
	per := k.perLabel
	var total, weightSum float64
	for i := range n {
		for j := range d {
			t := idx[i*d+j]
			if k.ignoreIndex != nil && t == *k.ignoreIndex {
				per[i*d+j] = 0
				continue
			}
			if t < 0 || t >= int64(c) {
				return nil, nil, fmt.Errorf("%s: label %d at position %d is not a class in [0, %d)", k.name, t, i*d+j, c)
			}
			wt := 1.0
			if w != nil {
				wt = w[t]
			}
			l := -logp[(i*c+int(t))*d+j] * wt
			per[i*d+j] = l
			total += l
			weightSum += wt
		}
	}
	var loss *onnx.Tensor
	switch k.reduction {
	case "none":
		loss = k.loss.tensor(scores.Type, labels.Shape) // checked: [N, D...]
		storeFloat64s(loss, per)
	case "sum", "mean":
		if k.reduction == "mean" {
			total /= weightSum
		}
		loss = k.loss.tensor(scores.Type, nil)
		storeFloat64s(loss, []float64{total})
	}
	var lp *onnx.Tensor
	if k.softmax {
		lp = k.logProb.tensor(scores.Type, scores.Shape)
		storeFloat64s(lp, logp)
	}
	return loss, lp, nil
}

// logSoftmaxAxis1 replaces x, seen as [n, c, d], by its log-softmax along
// the middle dimension.
func logSoftmaxAxis1(x []float64, n, c, d int) {
	for i := range n {
		blk := x[i*c*d : (i+1)*c*d]
		for j := range d {
			m := math.Inf(-1)
			for k := range c {
				m = math.Max(m, blk[k*d+j])
			}
			if math.IsInf(m, 0) {
				m = 0
			}
			s := 0.0
			for k := range c {
				s += math.Exp(blk[k*d+j] - m)
			}
			ls := math.Log(s) + m
			for k := range c {
				blk[k*d+j] -= ls
			}
		}
	}
}

func (b *builder) lossBuild(softmax bool, name, reduction string, ignore *int64, in, target, weight, out, logProb string) error {
	x, err := b.input(in)
	if err != nil {
		return err
	}
	y, err := b.input(target)
	if err != nil {
		return err
	}
	wRef, err := b.optionalInput(weight)
	if err != nil {
		return err
	}
	switch reduction {
	case "none", "sum", "mean":
	default:
		return fmt.Errorf("%s: reduction must be none, sum or mean, got %q", name, reduction)
	}
	k := &lossKernel{softmax: softmax, reduction: reduction, ignoreIndex: ignore, name: name}
	lossOut, lpOut := b.output(out), b.output(logProb)
	return b.emit(func(slots []onnx.Value) error {
		scores, err := x.tensor(slots)
		if err != nil {
			return err
		}
		labels, err := y.tensor(slots)
		if err != nil {
			return err
		}
		weights, err := wRef.optionalTensor(slots)
		if err != nil {
			return err
		}
		loss, lp, err := k.compute(scores, labels, weights)
		if err != nil {
			return err
		}
		lossOut.set(slots, loss)
		if lp != nil {
			lpOut.set(slots, lp)
		}
		return nil
	})
}

// VisitSoftmaxCrossEntropyLoss compiles SoftmaxCrossEntropyLoss (forward).
func (b *builder) VisitSoftmaxCrossEntropyLoss(op *ops.SoftmaxCrossEntropyLoss) error {
	return b.lossBuild(true, "SoftmaxCrossEntropyLoss", op.Reduction, op.IgnoreIndex,
		op.In.Scores, op.In.Labels, op.In.Weights, op.Out.Output, op.Out.LogProb)
}

// VisitNegativeLogLikelihoodLoss compiles NegativeLogLikelihoodLoss.
func (b *builder) VisitNegativeLogLikelihoodLoss(op *ops.NegativeLogLikelihoodLoss) error {
	return b.lossBuild(false, "NegativeLogLikelihoodLoss", op.Reduction, op.IgnoreIndex,
		op.In.Input, op.In.Target, op.In.Weight, op.Out.Loss, "")
}
