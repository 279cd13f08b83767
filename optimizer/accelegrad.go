package optimizer

import (
	"math"

	"github.com/deep500/deep500-go/onnx"
)

// AcceleGrad is Algorithm 1 of Levy, Yurtsever and Cevher, "Online
// Adaptive Methods, Universality and Acceleration" (NeurIPS 2018),
// unconstrained (no projection), applied to each parameter tensor
// separately. With iteration t = 0, 1, 2, ... of that parameter:
//
//	α_t = 1 for t ≤ 2, (t + 1)/4 for t ≥ 3;   τ_t = 1/α_t
//	x_{t+1} = τ_t·z_t + (1 − τ_t)·y_t     (the value the network holds)
//	g_t = ∇f(x_{t+1}) + weight_decay·x_{t+1}
//	η_t = 2D / √(G² + Σ_{s≤t} α_s²·‖g_s‖²)   (η_t = 0 while the sum is 0)
//	z_{t+1} = z_t − α_t·η_t·g_t
//	y_{t+1} = x_{t+1} − η_t·g_t
//	then the parameter becomes x_{t+2} = τ_{t+1}·z_{t+1} + (1 − τ_{t+1})·y_{t+1}
//
// starting from y_0 = z_0 = x_0, the parameter's value at the first update
// (so x_1 = x_0), ‖·‖ the L2 norm over the tensor. The parameter the
// network holds is always the query point x, where the next gradient is
// taken; the paper's output, the α-weighted average of the y_t, is not
// formed. Hyperparams read: D, G, WeightDecay (LR is not used: the step
// size is adaptive). Defaults: D 1, G 0, weight_decay 0. y, z and the sum
// are float64.
type AcceleGrad struct {
	hp   Hyperparams
	y, z buffers
	sum  map[string]float64
	step map[string]int
}

// NewAcceleGrad returns AcceleGrad with hp used as given.
func NewAcceleGrad(hp Hyperparams) *AcceleGrad {
	return &AcceleGrad{hp: hp, y: buffers{}, z: buffers{}, sum: map[string]float64{}, step: map[string]int{}}
}

func accelegradAlpha(t int) float64 {
	if t <= 2 {
		return 1
	}
	return float64(t+1) / 4
}

// UpdateRule implements UpdateRuleOptimizer.
func (o *AcceleGrad) UpdateRule(grad, param *onnx.Tensor, name string) error {
	n, err := checkPair(grad, param, name)
	if err != nil {
		return err
	}
	y, fresh, err := o.y.get(name, n, 0)
	if err != nil {
		return err
	}
	z, _, err := o.z.get(name, n, 0)
	if err != nil {
		return err
	}
	// Each element type of the parameter with either of the gradient
	// (the backends give a parameter's gradient in its own type).
	switch p := param.Data.(type) {
	case []float32:
		switch g := grad.Data.(type) {
		case []float32:
			accelegradUpdate(o, name, g, p, y, z, fresh)
		case []float64:
			accelegradUpdate(o, name, g, p, y, z, fresh)
		}
	case []float64:
		switch g := grad.Data.(type) {
		case []float32:
			accelegradUpdate(o, name, g, p, y, z, fresh)
		case []float64:
			accelegradUpdate(o, name, g, p, y, z, fresh)
		}
	}
	return nil
}

// accelegradUpdate is AcceleGrad's rule over one tensor.
func accelegradUpdate[G, P floats](o *AcceleGrad, name string, g []G, p []P, y, z []float64, fresh bool) {
	g, y, z = g[:len(p)], y[:len(p)], z[:len(p)]
	if fresh {
		for i, x := range p {
			y[i] = float64(x)
			z[i] = y[i]
		}
	}
	t := o.step[name]
	o.step[name] = t + 1
	alpha, wd := accelegradAlpha(t), o.hp.WeightDecay
	norm2 := 0.0
	for i, x := range p {
		gi := float64(g[i]) + wd*float64(x)
		norm2 += gi * gi
	}
	o.sum[name] += alpha * alpha * norm2
	eta := 0.0
	if d := o.hp.G*o.hp.G + o.sum[name]; d > 0 {
		eta = 2 * o.hp.D / math.Sqrt(d)
	}
	tauNext := 1 / accelegradAlpha(t+1)
	for i, v := range p {
		x := float64(v)
		gi := float64(g[i]) + wd*x
		z[i] -= alpha * eta * gi
		y[i] = x - eta*gi
		p[i] = P(tauNext*z[i] + (1-tauNext)*y[i])
	}
}
