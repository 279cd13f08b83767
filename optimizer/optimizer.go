package optimizer

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/onnx"
)

// Optimizer trains a network with full control over a step.
type Optimizer interface {
	// Step runs one optimization step on a batch (graph inputs by name)
	// and returns the loss before the update.
	Step(batch map[string]onnx.Value) (loss float64, err error)
}

// UpdateRuleOptimizer updates one parameter in place from its gradient.
// name identifies the parameter; per-parameter state is kept under it.
type UpdateRuleOptimizer interface {
	UpdateRule(grad, param *onnx.Tensor, name string) error
}

// ThreeStepOptimizer is an UpdateRuleOptimizer that is also told when a
// step begins (NewInput) and before each parameter's update
// (PrepareParam).
type ThreeStepOptimizer interface {
	UpdateRuleOptimizer
	NewInput()
	PrepareParam(name string) error
}

// Hyperparams configure the reference optimizers. New uses them as given:
// start from Defaults(name) and change what differs. Each optimizer reads
// only the fields its doc comment names.
type Hyperparams struct {
	LR          float64 `json:"lr"`                        // learning rate
	Momentum    float64 `json:"momentum"`                  // sgd/momentum/nesterov/rmsprop momentum factor
	Dampening   float64 `json:"dampening"`                 // sgd dampening
	Nesterov    bool    `json:"nesterov"`                  // sgd Nesterov momentum
	Beta1       float64 `json:"beta1"`                     // adam/adamw first-moment decay
	Beta2       float64 `json:"beta2"`                     // adam/adamw second-moment decay
	Eps         float64 `json:"eps"`                       // term added to denominators
	Alpha       float64 `json:"alpha"`                     // rmsprop smoothing constant
	Centered    bool    `json:"centered"`                  // rmsprop centered variant
	WeightDecay float64 `json:"weight_decay"`              // L2 penalty added to the gradient (adamw: decoupled decay)
	LRDecay     float64 `json:"lr_decay"`                  // adagrad learning-rate decay
	InitialAcc  float64 `json:"initial_accumulator_value"` // adagrad initial accumulator value
	D           float64 `json:"d"`                         // accelegrad diameter bound
	G           float64 `json:"g"`                         // accelegrad gradient-norm bound in the step size
	// ClipNorm, when positive, makes the driver rescale all gradients of a
	// step together so that their global L2 norm is at most ClipNorm.
	ClipNorm float64 `json:"clip_norm"`
}

// Names lists the reference optimizers New knows, as `d500 train
// --optimizer` spells them.
func Names() []string {
	return []string{"sgd", "momentum", "nesterov", "adam", "adamw", "adagrad", "rmsprop", "accelegrad"}
}

// Defaults returns the default hyperparameters of the named optimizer:
// those of torch.optim (lr 1e-3 for SGD and Adam/AdamW, 1e-2 for Adagrad
// and RMSprop; AdamW weight_decay 1e-2), plus momentum 0.9 for the names
// momentum and nesterov (torch's SGD default 0 would make them plain SGD),
// and D 1, G 0 for accelegrad.
func Defaults(name string) (Hyperparams, error) {
	switch name {
	case "sgd":
		return Hyperparams{LR: 1e-3}, nil
	case "momentum":
		return Hyperparams{LR: 1e-3, Momentum: 0.9}, nil
	case "nesterov":
		return Hyperparams{LR: 1e-3, Momentum: 0.9, Nesterov: true}, nil
	case "adam":
		return Hyperparams{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, nil
	case "adamw":
		return Hyperparams{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-2}, nil
	case "adagrad":
		return Hyperparams{LR: 1e-2, Eps: 1e-10}, nil
	case "rmsprop":
		return Hyperparams{LR: 1e-2, Alpha: 0.99, Eps: 1e-8}, nil
	case "accelegrad":
		return Hyperparams{D: 1}, nil
	}
	return Hyperparams{}, fmt.Errorf("unknown optimizer %q (known: %v)", name, Names())
}

// New returns the reference optimizer of that name with hp used as given.
func New(name string, hp Hyperparams) (UpdateRuleOptimizer, error) {
	bad := func(field string, v float64) error {
		return fmt.Errorf("optimizer %s: invalid %s %g", name, field, v)
	}
	if !(hp.LR >= 0) || math.IsInf(hp.LR, 0) {
		return nil, bad("lr", hp.LR)
	}
	if !(hp.WeightDecay >= 0) {
		return nil, bad("weight decay", hp.WeightDecay)
	}
	if !(hp.Eps >= 0) {
		return nil, bad("eps", hp.Eps)
	}
	if !(hp.ClipNorm >= 0) {
		return nil, bad("clip norm", hp.ClipNorm)
	}
	switch name {
	case "sgd", "momentum", "nesterov":
		if name == "nesterov" && !hp.Nesterov {
			hp.Nesterov = true
		}
		if !(hp.Momentum >= 0) {
			return nil, bad("momentum", hp.Momentum)
		}
		if hp.Nesterov && (hp.Momentum <= 0 || hp.Dampening != 0) {
			return nil, fmt.Errorf("optimizer %s: Nesterov momentum needs momentum > 0 and dampening 0", name)
		}
		return NewSGD(hp), nil
	case "adam", "adamw":
		if !(hp.Beta1 >= 0 && hp.Beta1 < 1) {
			return nil, bad("beta1", hp.Beta1)
		}
		if !(hp.Beta2 >= 0 && hp.Beta2 < 1) {
			return nil, bad("beta2", hp.Beta2)
		}
		if name == "adamw" {
			return NewAdamW(hp), nil
		}
		return NewAdam(hp), nil
	case "adagrad":
		if !(hp.LRDecay >= 0) {
			return nil, bad("lr decay", hp.LRDecay)
		}
		if !(hp.InitialAcc >= 0) {
			return nil, bad("initial accumulator value", hp.InitialAcc)
		}
		return NewAdagrad(hp), nil
	case "rmsprop":
		if !(hp.Alpha >= 0) {
			return nil, bad("alpha", hp.Alpha)
		}
		if !(hp.Momentum >= 0) {
			return nil, bad("momentum", hp.Momentum)
		}
		return NewRMSprop(hp), nil
	case "accelegrad":
		if !(hp.D > 0) {
			return nil, bad("D", hp.D)
		}
		if !(hp.G >= 0) {
			return nil, bad("G", hp.G)
		}
		return NewAcceleGrad(hp), nil
	}
	return nil, fmt.Errorf("unknown optimizer %q (known: %v)", name, Names())
}

// floats are the element types the update loops are written for, the
// gradient's and the parameter's each. The loops compute in float64
// whatever the element types, as the rules are defined.
type floats interface{ float32 | float64 }

// checkPair checks that grad and param are float tensors of one length,
// and returns the length.
func checkPair(grad, param *onnx.Tensor, name string) (int, error) {
	size := func(t *onnx.Tensor, what string) (int, error) {
		if t == nil {
			return 0, fmt.Errorf("%s of %q is missing", what, name)
		}
		switch d := t.Data.(type) {
		case []float32:
			return len(d), nil
		case []float64:
			return len(d), nil
		}
		return 0, fmt.Errorf("%s of %q is %v: the reference optimizers update float and double tensors", what, name, t.Type)
	}
	ng, err := size(grad, "gradient")
	if err != nil {
		return 0, err
	}
	np, err := size(param, "parameter")
	if err != nil {
		return 0, err
	}
	if ng != np {
		return 0, fmt.Errorf("gradient of %q has %d elements, the parameter %d", name, ng, np)
	}
	return np, nil
}

// buffers holds one float64 state slice per parameter name.
type buffers map[string][]float64

// get returns name's buffer of n elements, made and filled with init on
// first use (fresh reports that).
func (b buffers) get(name string, n int, init float64) (buf []float64, fresh bool, err error) {
	buf, ok := b[name]
	if ok {
		if len(buf) != n {
			return nil, false, fmt.Errorf("parameter %q changed size from %d to %d elements", name, len(buf), n)
		}
		return buf, false, nil
	}
	buf = make([]float64, n)
	if init != 0 {
		for i := range buf {
			buf[i] = init
		}
	}
	b[name] = buf
	return buf, true, nil
}
