package optimizer

import (
	"math"

	"github.com/deep500/deep500-go/onnx"
)

// Adagrad is torch.optim.Adagrad. For each element, with step t = 1, 2, ...
// of that parameter:
//
//	clr ← lr / (1 + (t − 1)·lr_decay)
//	g ← g + weight_decay·p
//	s ← s + g²                    (s starts at initial_accumulator_value)
//	p ← p − clr · g / (√s + eps)
//
// Hyperparams read: LR, LRDecay, InitialAcc, Eps, WeightDecay. Defaults:
// lr 1e-2, lr_decay 0, initial_accumulator_value 0, eps 1e-10,
// weight_decay 0. s is float64.
type Adagrad struct {
	hp   Hyperparams
	sum  buffers
	step map[string]int
}

// NewAdagrad returns Adagrad with hp used as given.
func NewAdagrad(hp Hyperparams) *Adagrad {
	return &Adagrad{hp: hp, sum: buffers{}, step: map[string]int{}}
}

// UpdateRule implements UpdateRuleOptimizer.
func (o *Adagrad) UpdateRule(grad, param *onnx.Tensor, name string) error {
	n, err := checkPair(grad, param, name)
	if err != nil {
		return err
	}
	s, _, err := o.sum.get(name, n, o.hp.InitialAcc)
	if err != nil {
		return err
	}
	o.step[name]++
	clr := o.hp.LR / (1 + float64(o.step[name]-1)*o.hp.LRDecay)
	// Each element type of the parameter with either of the gradient
	// (the backends give a parameter's gradient in its own type).
	switch p := param.Data.(type) {
	case []float32:
		switch g := grad.Data.(type) {
		case []float32:
			adagradUpdate(g, p, s, clr, o.hp.WeightDecay, o.hp.Eps)
		case []float64:
			adagradUpdate(g, p, s, clr, o.hp.WeightDecay, o.hp.Eps)
		}
	case []float64:
		switch g := grad.Data.(type) {
		case []float32:
			adagradUpdate(g, p, s, clr, o.hp.WeightDecay, o.hp.Eps)
		case []float64:
			adagradUpdate(g, p, s, clr, o.hp.WeightDecay, o.hp.Eps)
		}
	}
	return nil
}

// adagradUpdate is Adagrad's rule over one tensor with the step's
// learning rate clr.
func adagradUpdate[G, P floats](g []G, p []P, s []float64, clr, wd, eps float64) {
	g, s = g[:len(p)], s[:len(p)]
	for i, x := range p {
		pi := float64(x)
		gi := float64(g[i]) + wd*pi
		s[i] += gi * gi
		p[i] = P(pi - clr*gi/(math.Sqrt(s[i])+eps))
	}
}
