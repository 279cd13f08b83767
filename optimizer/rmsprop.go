package optimizer

import (
	"math"

	"github.com/deep500/deep500-go/onnx"
)

// RMSprop is torch.optim.RMSprop. For each element:
//
//	g ← g + weight_decay·p
//	s ← α·s + (1 − α)·g²
//	if centered: a ← α·a + (1 − α)·g;  d ← √(s − a²) + eps
//	else:        d ← √s + eps
//	if momentum > 0: b ← momentum·b + g/d;  p ← p − lr·b
//	else:            p ← p − lr·g/d
//
// (s, a, b start at 0.) Hyperparams read: LR, Alpha, Eps, Centered,
// Momentum, WeightDecay. Defaults: lr 1e-2, alpha 0.99, eps 1e-8, centered
// off, momentum 0, weight_decay 0. The state is float64.
type RMSprop struct {
	hp         Hyperparams
	sq, avg, b buffers
}

// NewRMSprop returns RMSprop with hp used as given.
func NewRMSprop(hp Hyperparams) *RMSprop {
	return &RMSprop{hp: hp, sq: buffers{}, avg: buffers{}, b: buffers{}}
}

// UpdateRule implements UpdateRuleOptimizer.
func (o *RMSprop) UpdateRule(grad, param *onnx.Tensor, name string) error {
	n, err := checkPair(grad, param, name)
	if err != nil {
		return err
	}
	s, _, err := o.sq.get(name, n, 0)
	if err != nil {
		return err
	}
	var a, b []float64
	if o.hp.Centered {
		if a, _, err = o.avg.get(name, n, 0); err != nil {
			return err
		}
	}
	if o.hp.Momentum > 0 {
		if b, _, err = o.b.get(name, n, 0); err != nil {
			return err
		}
	}
	// Each element type of the parameter with either of the gradient
	// (the backends give a parameter's gradient in its own type).
	switch p := param.Data.(type) {
	case []float32:
		switch g := grad.Data.(type) {
		case []float32:
			rmspropUpdate(&o.hp, g, p, s, a, b)
		case []float64:
			rmspropUpdate(&o.hp, g, p, s, a, b)
		}
	case []float64:
		switch g := grad.Data.(type) {
		case []float32:
			rmspropUpdate(&o.hp, g, p, s, a, b)
		case []float64:
			rmspropUpdate(&o.hp, g, p, s, a, b)
		}
	}
	return nil
}

// rmspropUpdate is RMSprop's rule over one tensor: s the running square,
// a the running average (nil unless centered), b the momentum buffer
// (nil without momentum).
func rmspropUpdate[G, P floats](hp *Hyperparams, g []G, p []P, s, a, b []float64) {
	lr, wd, al, eps, mom := hp.LR, hp.WeightDecay, hp.Alpha, hp.Eps, hp.Momentum
	g, s = g[:len(p)], s[:len(p)]
	for i, x := range p {
		pi := float64(x)
		gi := float64(g[i]) + wd*pi
		s[i] = al*s[i] + (1-al)*gi*gi
		var d float64
		if a != nil {
			a[i] = al*a[i] + (1-al)*gi
			d = math.Sqrt(s[i]-a[i]*a[i]) + eps
		} else {
			d = math.Sqrt(s[i]) + eps
		}
		if b != nil {
			b[i] = mom*b[i] + gi/d
			p[i] = P(pi - lr*b[i])
		} else {
			p[i] = P(pi - lr*gi/d)
		}
	}
}
