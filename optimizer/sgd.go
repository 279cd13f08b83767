package optimizer

import "github.com/deep500/deep500-go/onnx"

// SGD is stochastic gradient descent with optional momentum, dampening,
// Nesterov momentum and L2 weight decay, as torch.optim.SGD. For each
// element, with step t = 1, 2, ... of that parameter:
//
//	g ← g + weight_decay·p
//	if momentum ≠ 0:
//	    b ← g                               (t = 1)
//	    b ← momentum·b + (1 − dampening)·g  (t > 1)
//	    g ← g + momentum·b  if nesterov, else g ← b
//	p ← p − lr·g
//
// Hyperparams read: LR, Momentum, Dampening, Nesterov, WeightDecay.
// Defaults: sgd lr 1e-3, momentum 0; momentum and nesterov momentum 0.9;
// dampening 0, weight_decay 0. The momentum buffer is kept in float64.
type SGD struct {
	hp  Hyperparams
	buf buffers
}

// NewSGD returns SGD with hp used as given.
func NewSGD(hp Hyperparams) *SGD { return &SGD{hp: hp, buf: buffers{}} }

// UpdateRule implements UpdateRuleOptimizer.
func (o *SGD) UpdateRule(grad, param *onnx.Tensor, name string) error {
	n, err := checkPair(grad, param, name)
	if err != nil {
		return err
	}
	var b []float64
	fresh := false
	if o.hp.Momentum != 0 {
		if b, fresh, err = o.buf.get(name, n, 0); err != nil {
			return err
		}
	}
	// Each element type of the parameter with either of the gradient
	// (the backends give a parameter's gradient in its own type).
	switch p := param.Data.(type) {
	case []float32:
		switch g := grad.Data.(type) {
		case []float32:
			sgdUpdate(&o.hp, g, p, b, fresh)
		case []float64:
			sgdUpdate(&o.hp, g, p, b, fresh)
		}
	case []float64:
		switch g := grad.Data.(type) {
		case []float32:
			sgdUpdate(&o.hp, g, p, b, fresh)
		case []float64:
			sgdUpdate(&o.hp, g, p, b, fresh)
		}
	}
	return nil
}

// sgdUpdate is SGD's rule over one tensor; b is the momentum buffer (nil
// without momentum), fresh on the parameter's first step.
func sgdUpdate[G, P floats](hp *Hyperparams, g []G, p []P, b []float64, fresh bool) {
	lr, wd, mom, damp := hp.LR, hp.WeightDecay, hp.Momentum, hp.Dampening
	g = g[:len(p)]
	if mom == 0 {
		for i, v := range p {
			pi := float64(v)
			p[i] = P(pi - lr*(float64(g[i])+wd*pi))
		}
		return
	}
	b = b[:len(p)]
	for i, v := range p {
		pi := float64(v)
		gi := float64(g[i]) + wd*pi
		if fresh {
			b[i] = gi
		} else {
			b[i] = mom*b[i] + (1-damp)*gi
		}
		if hp.Nesterov {
			gi += mom * b[i]
		} else {
			gi = b[i]
		}
		p[i] = P(pi - lr*gi)
	}
}
