package optimizer

import (
	"math"

	"github.com/deep500/deep500-go/onnx"
)

// Adam is torch.optim.Adam (amsgrad off). For each element, with step
// t = 1, 2, ... of that parameter:
//
//	g ← g + weight_decay·p
//	m ← β1·m + (1 − β1)·g
//	v ← β2·v + (1 − β2)·g²
//	p ← p − (lr / (1 − β1ᵗ)) · m / (√v / √(1 − β2ᵗ) + eps)
//
// Hyperparams read: LR, Beta1, Beta2, Eps, WeightDecay. Defaults: lr 1e-3,
// betas (0.9, 0.999), eps 1e-8, weight_decay 0. m and v are float64.
type Adam struct {
	hp        Hyperparams
	decoupled bool
	m, v      buffers
	step      map[string]int
}

// NewAdam returns Adam with hp used as given.
func NewAdam(hp Hyperparams) *Adam {
	return &Adam{hp: hp, m: buffers{}, v: buffers{}, step: map[string]int{}}
}

// AdamW is torch.optim.AdamW (amsgrad off): Adam whose weight decay is
// decoupled from the gradient. For each element, at step t:
//
//	p ← p·(1 − lr·weight_decay)
//	m ← β1·m + (1 − β1)·g
//	v ← β2·v + (1 − β2)·g²
//	p ← p − (lr / (1 − β1ᵗ)) · m / (√v / √(1 − β2ᵗ) + eps)
//
// Hyperparams read: LR, Beta1, Beta2, Eps, WeightDecay. Defaults: lr 1e-3,
// betas (0.9, 0.999), eps 1e-8, weight_decay 1e-2.
type AdamW struct{ Adam }

// NewAdamW returns AdamW with hp used as given.
func NewAdamW(hp Hyperparams) *AdamW {
	return &AdamW{Adam{hp: hp, decoupled: true, m: buffers{}, v: buffers{}, step: map[string]int{}}}
}

// UpdateRule implements UpdateRuleOptimizer.
func (o *Adam) UpdateRule(grad, param *onnx.Tensor, name string) error {
	n, err := checkPair(grad, param, name)
	if err != nil {
		return err
	}
	m, _, err := o.m.get(name, n, 0)
	if err != nil {
		return err
	}
	v, _, err := o.v.get(name, n, 0)
	if err != nil {
		return err
	}
	o.step[name]++
	t := float64(o.step[name])
	// Each element type of the parameter with either of the gradient
	// (the backends give a parameter's gradient in its own type).
	switch p := param.Data.(type) {
	case []float32:
		switch g := grad.Data.(type) {
		case []float32:
			adamUpdate(o, g, p, m, v, t)
		case []float64:
			adamUpdate(o, g, p, m, v, t)
		}
	case []float64:
		switch g := grad.Data.(type) {
		case []float32:
			adamUpdate(o, g, p, m, v, t)
		case []float64:
			adamUpdate(o, g, p, m, v, t)
		}
	}
	return nil
}

// adamUpdate is Adam's (AdamW's) rule over one tensor at step t.
func adamUpdate[G, P floats](o *Adam, g []G, p []P, m, v []float64, t float64) {
	lr, wd, b1, b2, eps := o.hp.LR, o.hp.WeightDecay, o.hp.Beta1, o.hp.Beta2, o.hp.Eps
	stepSize := lr / (1 - math.Pow(b1, t))
	sqrtBC2 := math.Sqrt(1 - math.Pow(b2, t))
	shrink := 1.0
	if o.decoupled {
		shrink = 1 - lr*wd
	}
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	for i, x := range p {
		pi, gi := float64(x), float64(g[i])
		if o.decoupled {
			pi *= shrink
		} else {
			gi += wd * pi
		}
		m[i] = b1*m[i] + (1-b1)*gi
		v[i] = b2*v[i] + (1-b2)*gi*gi
		p[i] = P(pi - stepSize*m[i]/(math.Sqrt(v[i])/sqrtBC2+eps))
	}
}
