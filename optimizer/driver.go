package optimizer

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// Driver is the Optimizer that runs an UpdateRuleOptimizer (or a
// ThreeStepOptimizer) over a network through the Network API. A step is:
// NewInput (three-step optimizers); InferenceAndBackprop on the batch for
// the loss; then, for each (param, grad) of Gradients(loss), in order:
// Fetch grad and param, PrepareParam (three-step), UpdateRule, Feed param.
// With ClipNorm > 0 every gradient is fetched first and all are scaled by
// min(1, ClipNorm/(‖g‖₂ + 1e-6)), ‖g‖₂ the norm of all gradients together
// (torch.nn.utils.clip_grad_norm_).
//
// When the network implements network.IntoFetcher, the Driver fetches
// into one buffer per parameter and gradient that it keeps across steps,
// so a step allocates nothing for them: Deep500's reference optimizers
// were slow because every step copied weights out into new memory.
type Driver struct {
	Net      network.Network
	Loss     string
	Rule     UpdateRuleOptimizer
	ClipNorm float64

	pgs []network.ParamGrad
	// grads and params are the buffers of the last step, per parameter,
	// refilled in place when the network allows it.
	grads, params []*onnx.Tensor
	out           map[string]onnx.Value // the last step's outputs, refilled in place
}

// NewDriver returns the Optimizer that applies rule to net's parameters
// for the loss named loss; clipNorm > 0 enables clipping by global norm.
func NewDriver(net network.Network, loss string, rule UpdateRuleOptimizer, clipNorm float64) *Driver {
	return &Driver{Net: net, Loss: loss, Rule: rule, ClipNorm: clipNorm}
}

// Step implements Optimizer.
func (d *Driver) Step(batch map[string]onnx.Value) (float64, error) {
	three, isThree := d.Rule.(ThreeStepOptimizer)
	if isThree {
		three.NewInput()
	}
	out, err := network.BackpropInto(d.Net, batch, d.Loss, d.out)
	d.out = out
	if err != nil {
		return 0, err
	}
	loss, err := network.LossValue(out, d.Loss)
	if err != nil {
		return 0, err
	}
	if d.pgs == nil {
		d.pgs = d.Net.Gradients(d.Loss)
		d.grads = make([]*onnx.Tensor, len(d.pgs))
		d.params = make([]*onnx.Tensor, len(d.pgs))
	}
	scale := 1.0
	if d.ClipNorm > 0 {
		sum := 0.0
		for i, pg := range d.pgs {
			g, err := network.FetchTensorInto(d.Net, pg.Grad, d.grads[i])
			if err != nil {
				return loss, err
			}
			d.grads[i] = g
			switch v := g.Data.(type) {
			case []float32:
				for _, x := range v {
					sum += float64(x) * float64(x)
				}
			case []float64:
				for _, x := range v {
					sum += x * x
				}
			default:
				return loss, fmt.Errorf("gradient %q is %v, not float or double", pg.Grad, g.Type)
			}
		}
		if norm := math.Sqrt(sum); norm+1e-6 > d.ClipNorm {
			scale = d.ClipNorm / (norm + 1e-6)
		}
	}
	for i, pg := range d.pgs {
		g := d.grads[i]
		if d.ClipNorm > 0 {
			if scale != 1 {
				scaleTensor(g, scale)
			}
		} else if g, err = network.FetchTensorInto(d.Net, pg.Grad, g); err != nil {
			return loss, err
		}
		p, err := network.FetchTensorInto(d.Net, pg.Param, d.params[i])
		if err != nil {
			return loss, err
		}
		d.grads[i], d.params[i] = g, p
		if isThree {
			if err := three.PrepareParam(pg.Param); err != nil {
				return loss, err
			}
		}
		if err := d.Rule.UpdateRule(g, p, pg.Param); err != nil {
			return loss, err
		}
		if err := d.Net.Feed(pg.Param, p); err != nil {
			return loss, err
		}
	}
	return loss, nil
}

func scaleTensor(t *onnx.Tensor, s float64) {
	switch v := t.Data.(type) {
	case []float32:
		for i := range v {
			v[i] = float32(float64(v[i]) * s)
		}
	case []float64:
		for i := range v {
			v[i] *= s
		}
	}
}

// State implements Stateful with the rule's state: the driver's own
// buffers are refilled every step, so the rule's is all a step depends on.
// A rule that is not Stateful gives an error wrapping
// network.ErrUnsupported.
func (d *Driver) State() (map[string]*onnx.Tensor, error) { return StateOf(d.Rule) }

// SetState implements Stateful with the rule's SetState.
func (d *Driver) SetState(s map[string]*onnx.Tensor) error { return SetStateOf(d.Rule, s) }
