package models

import (
	"fmt"
	"math"
)

// Init is how a Builder draws the weights and biases of Conv and Dense
// layers. Every policy depends only on the builder's seed and the order
// the layers are added.
type Init int

const (
	// InitHe is He et al.'s initialisation for networks of rectifiers
	// ("Delving Deep into Rectifiers", 2015): weights normal with mean 0
	// and standard deviation √(2/fan_in), biases 0. It keeps the variance
	// of the activations the same from layer to layer under Relu, so deep
	// and shallow presets alike start training at full speed. PyTorch's
	// kaiming_normal_(mode="fan_in", nonlinearity="relu") followed by
	// zeros_ on the bias draws from the same distribution. The default.
	InitHe Init = iota
	// InitPyTorch is PyTorch's default for nn.Conv2d and nn.Linear
	// (reset_parameters): weights from kaiming_uniform_ with a = √5,
	// which is uniform in [-1/√fan_in, 1/√fan_in], and biases uniform in
	// the same interval. Its variance is a sixth of InitHe's.
	InitPyTorch
)

var initNames = []string{InitHe: "he", InitPyTorch: "pytorch"}

// String is the policy's name as ParseInit reads it.
func (i Init) String() string {
	if i >= 0 && int(i) < len(initNames) {
		return initNames[i]
	}
	return fmt.Sprintf("Init(%d)", int(i))
}

// ParseInit reads an initialisation policy by name: "he" or "pytorch".
func ParseInit(name string) (Init, error) {
	for i, n := range initNames {
		if n == name {
			return Init(i), nil
		}
	}
	return 0, fmt.Errorf("unknown initialisation %q (known: he, pytorch)", name)
}

// weights draws the n weights of a layer whose every output sees fanIn
// inputs (input channels / groups × kernel area for Conv, input features
// for Dense), as the builder's policy says.
func (b *Builder) weights(n, fanIn int) []float32 {
	out := make([]float32, n)
	switch b.Init {
	case InitPyTorch:
		b.uniform(out, 1/math.Sqrt(float64(fanIn)))
	default:
		std := math.Sqrt(2 / float64(fanIn))
		for i := range out {
			out[i] = float32(b.rng.NormFloat64() * std)
		}
	}
	return out
}

// biases draws the n biases of a layer with the given fan-in, as the
// builder's policy says.
func (b *Builder) biases(n, fanIn int) []float32 {
	out := make([]float32, n)
	if b.Init == InitPyTorch {
		b.uniform(out, 1/math.Sqrt(float64(fanIn)))
	}
	return out
}

// uniform fills out with draws uniform in [-bound, bound].
func (b *Builder) uniform(out []float32, bound float64) {
	for i := range out {
		out[i] = float32((2*b.rng.Float64() - 1) * bound)
	}
}
