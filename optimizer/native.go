package optimizer

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// Native is the Optimizer of `--impl native`: the same update rules as the
// reference optimizers (the very same UpdateRule code), applied inside the
// backend through network.ParamUpdater to the tensors the network holds and
// to its gradient buffers, so a step makes no Fetch or Feed copies. With
// ClipNorm > 0 the gradients are scaled in place as Driver does.
type Native struct {
	Net      network.Network
	Loss     string
	Rule     UpdateRuleOptimizer
	ClipNorm float64

	up network.ParamUpdater
	// out holds the outputs of the last step, refilled in place by a
	// network that can (network.IntoTrainer).
	out map[string]onnx.Value
	// update is the function handed to UpdateParams, made once (a
	// closure made per step would be allocated per step); scale and three
	// are the step's clipping factor and three-step rule it reads.
	update func(p, g *onnx.Tensor, name string) error
	scale  float64
	three  ThreeStepOptimizer
}

// NewNative returns the native optimizer of that name (any of Names) with
// hp used as given, for the loss named loss of net. It fails with an error
// wrapping network.ErrUnsupported when net's backend cannot update its
// parameters itself (does not implement network.ParamUpdater).
func NewNative(name string, hp Hyperparams, net network.Network, loss string) (*Native, error) {
	up, ok := net.(network.ParamUpdater)
	if !ok {
		return nil, network.Unsupportedf("native optimizer %s: the backend (%T) cannot update its parameters in place; use the reference optimizer", name, net)
	}
	rule, err := New(name, hp)
	if err != nil {
		return nil, err
	}
	return &Native{Net: net, Loss: loss, Rule: rule, ClipNorm: hp.ClipNorm, up: up}, nil
}

// Step implements Optimizer.
func (o *Native) Step(batch map[string]onnx.Value) (float64, error) {
	three, isThree := o.Rule.(ThreeStepOptimizer)
	if isThree {
		three.NewInput()
	}
	out, err := network.BackpropInto(o.Net, batch, o.Loss, o.out)
	o.out = out
	if err != nil {
		return 0, err
	}
	loss, err := network.LossValue(out, o.Loss)
	if err != nil {
		return 0, err
	}
	scale := 1.0
	if o.ClipNorm > 0 {
		sum := 0.0
		err := o.up.UpdateParams(o.Loss, func(_, g *onnx.Tensor, name string) error {
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
				return fmt.Errorf("gradient of %q is %v, not float or double", name, g.Type)
			}
			return nil
		})
		if err != nil {
			return loss, err
		}
		if norm := math.Sqrt(sum); norm+1e-6 > o.ClipNorm {
			scale = o.ClipNorm / (norm + 1e-6)
		}
	}
	o.scale, o.three = scale, nil
	if isThree {
		o.three = three
	}
	if o.update == nil {
		o.update = o.updateParam
	}
	err = o.up.UpdateParams(o.Loss, o.update)
	return loss, err
}

// updateParam applies the rule to one parameter with the step's scale.
func (o *Native) updateParam(p, g *onnx.Tensor, name string) error {
	if o.scale != 1 {
		scaleTensor(g, o.scale)
	}
	if o.three != nil {
		if err := o.three.PrepareParam(name); err != nil {
			return err
		}
	}
	return o.Rule.UpdateRule(g, p, name)
}

// State implements Stateful with the rule's state, as Driver does.
func (o *Native) State() (map[string]*onnx.Tensor, error) { return StateOf(o.Rule) }

// SetState implements Stateful with the rule's SetState.
func (o *Native) SetState(s map[string]*onnx.Tensor) error { return SetStateOf(o.Rule, s) }
