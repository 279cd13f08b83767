package gorgonia

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
)

// NativeOptimizer implements optimizer.BackendOptimizers with Gorgonia's
// solvers. The hyperparameters map onto the solvers' options; where the
// solver's rule differs from torch.optim's (which the reference optimizers
// follow) the difference is stated, and what a solver cannot express is
// refused with an error wrapping network.ErrUnsupported:
//
//   - sgd: VanillaSolver, w −= lr·(g + wd·w) — torch's SGD without
//     momentum. With momentum > 0, as momentum.
//   - momentum: Momentum, v = μ·v − lr·(g + wd·w); w += v — torch's SGD
//     with momentum and dampening 0 (v is −lr times torch's buffer, the
//     same trajectory while lr is constant). Nesterov and dampening are
//     refused.
//   - adam: AdamSolver, w −= lr·m̂/(√v̂ + ε), with wd·w added to g (L2) —
//     torch's Adam.
//   - rmsprop: RMSPropSolver, c = α·c + (1 − α)·g²; w −= lr·g/√(c + ε) +
//     wd·w. Unlike torch: ε inside the square root, and weight decay
//     applied to w directly (not through g, not scaled by lr). Momentum and
//     centered are refused.
//   - adagrad: AdaGradSolver, c += g²; w −= lr·g/√(c + ε) + wd·w. Unlike
//     torch: ε inside the square root, weight decay as for rmsprop.
//     lr_decay and initial_accumulator_value are refused.
//
// Gorgonia's solvers fix the learning rate when they are made, so a
// schedule that changes it makes Step fail rather than train with the old
// rate. ClipNorm rescales the gradients by their global norm before the
// solver's step, as the reference driver does.
func (n *gnet) NativeOptimizer(name string, hp optimizer.Hyperparams, loss string) (optimizer.TunableOptimizer, error) {
	var opts []G.SolverOpt
	opts = append(opts, G.WithLearnRate(hp.LR))
	if hp.WeightDecay != 0 {
		opts = append(opts, G.WithL2Reg(hp.WeightDecay))
	}
	var s G.Solver
	switch name {
	case "sgd", "momentum":
		if hp.Nesterov || hp.Dampening != 0 {
			return nil, network.Unsupportedf("gorgonia: %s with Nesterov momentum or dampening: Gorgonia's Momentum solver has neither", name)
		}
		if hp.Momentum != 0 {
			s = G.NewMomentum(append(opts, G.WithMomentum(hp.Momentum))...)
		} else {
			s = G.NewVanillaSolver(opts...)
		}
	case "adam":
		s = G.NewAdamSolver(append(opts, G.WithBeta1(hp.Beta1), G.WithBeta2(hp.Beta2), G.WithEps(hp.Eps))...)
	case "rmsprop":
		if hp.Momentum != 0 || hp.Centered {
			return nil, network.Unsupportedf("gorgonia: rmsprop with momentum or centered: Gorgonia's RMSProp solver has neither")
		}
		s = G.NewRMSPropSolver(append(opts, G.WithRho(hp.Alpha), G.WithEps(hp.Eps))...)
	case "adagrad":
		if hp.LRDecay != 0 || hp.InitialAcc != 0 {
			return nil, network.Unsupportedf("gorgonia: adagrad with lr_decay or an initial accumulator: Gorgonia's AdaGrad solver has neither")
		}
		s = G.NewAdaGradSolver(append(opts, G.WithEps(hp.Eps))...)
	default:
		return nil, network.Unsupportedf("gorgonia: no native optimizer %q (Gorgonia's solvers: sgd, momentum, adam, rmsprop, adagrad)", name)
	}
	return &solverOptimizer{net: n, loss: loss, name: name, hp: hp, lr: hp.LR, solver: s}, nil
}

// solverOptimizer steps the network with one of Gorgonia's solvers.
type solverOptimizer struct {
	net    *gnet
	loss   string
	name   string
	hp     optimizer.Hyperparams
	lr     float64 // the rate the solver was made with
	solver G.Solver
}

// Hyperparameters implements optimizer.Tunable.
func (o *solverOptimizer) Hyperparameters() *optimizer.Hyperparams { return &o.hp }

// Step implements optimizer.Optimizer: the forward and backward pass, then
// the solver's update of the parameters the network holds (in place).
func (o *solverOptimizer) Step(batch map[string]onnx.Value) (float64, error) {
	if o.hp.LR != o.lr {
		return 0, network.Unsupportedf("gorgonia: the %s solver's learning rate is fixed at %g; a schedule changing it (to %g) needs --impl reference", o.name, o.lr, o.hp.LR)
	}
	out, err := o.net.InferenceAndBackprop(batch, o.loss)
	if err != nil {
		return 0, err
	}
	loss, err := network.LossValue(out, o.loss)
	if err != nil {
		return 0, fmt.Errorf("gorgonia: %w", err)
	}
	return loss, o.update()
}

// update runs the solver on the parameters and the last gradients, both
// wrapped without copies.
func (o *solverOptimizer) update() (err error) {
	n := o.net
	n.mu.Lock()
	defer n.mu.Unlock()
	defer recovered("gorgonia: "+o.name+" solver", &err)
	var model []G.ValueGrad
	var grads []*onnx.Tensor
	for _, pg := range n.Gradients(o.loss) {
		g, ok := n.grads[pg.Grad]
		if !ok {
			return fmt.Errorf("gorgonia: no gradient %q after backprop", pg.Grad)
		}
		w, err := denseOf(n.inits[pg.Param])
		if err != nil {
			return err
		}
		gd, err := denseOf(g)
		if err != nil {
			return err
		}
		model = append(model, &paramVG{name: pg.Param, w: w, g: gd})
		grads = append(grads, g)
	}
	if o.hp.ClipNorm > 0 {
		clipGlobalNorm(grads, o.hp.ClipNorm)
	}
	if err := o.solver.Step(model); err != nil {
		return fmt.Errorf("gorgonia: %s solver: %w", o.name, err)
	}
	return nil
}

// clipGlobalNorm scales the gradients so that their global L2 norm is at
// most limit (the reference driver's rule).
func clipGlobalNorm(grads []*onnx.Tensor, limit float64) {
	sum := 0.0
	for _, g := range grads {
		switch d := g.Data.(type) {
		case []float32:
			for _, x := range d {
				sum += float64(x) * float64(x)
			}
		case []float64:
			for _, x := range d {
				sum += x * x
			}
		}
	}
	norm := math.Sqrt(sum)
	if norm+1e-6 <= limit {
		return
	}
	k := limit / (norm + 1e-6)
	for _, g := range grads {
		switch d := g.Data.(type) {
		case []float32:
			for i := range d {
				d[i] *= float32(k)
			}
		case []float64:
			for i := range d {
				d[i] *= k
			}
		}
	}
}

// paramVG is a parameter and its gradient as a Gorgonia solver sees them.
type paramVG struct {
	name string
	w, g *tensor.Dense
}

func (p *paramVG) Value() G.Value         { return p.w }
func (p *paramVG) Grad() (G.Value, error) { return p.g, nil }
func (p *paramVG) Name() string           { return p.name }
func (p *paramVG) String() string         { return p.name }

var _ optimizer.Stateful = (*solverOptimizer)(nil)

// State implements optimizer.Stateful where it can. VanillaSolver (sgd
// without momentum) keeps no state, so its state is empty. The other
// solvers keep theirs (moment caches, Adam's iteration count) in
// unexported fields that Gorgonia offers no way to read or set, so a run
// with them cannot be resumed exactly: their State and SetState fail with
// an error wrapping network.ErrUnsupported, before any training when a
// caller asks first.
func (o *solverOptimizer) State() (map[string]*onnx.Tensor, error) {
	if err := o.stateless(); err != nil {
		return nil, err
	}
	return map[string]*onnx.Tensor{}, nil
}

// SetState implements optimizer.Stateful: only the empty state of a
// stateless solver is accepted.
func (o *solverOptimizer) SetState(s map[string]*onnx.Tensor) error {
	if err := o.stateless(); err != nil {
		return err
	}
	for name := range s {
		return fmt.Errorf("gorgonia %s state: tensor %q is not a state tensor (Gorgonia's VanillaSolver keeps none)", o.name, name)
	}
	return nil
}

// stateless reports, as an unsupported error, a solver whose state cannot
// be saved.
func (o *solverOptimizer) stateless() error {
	if _, ok := o.solver.(*G.VanillaSolver); ok {
		return nil
	}
	return network.Unsupportedf("gorgonia: the %s solver (%T) keeps its state in fields Gorgonia does not expose, so it cannot be saved for an exact resume; use --impl reference", o.name, o.solver)
}
