package customop

import (
	"fmt"
	"math"
	"sync"

	"github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// The operator's identity: a model imports Domain at Version (or later)
// to use it.
const (
	Domain  = "example.customop"
	OpType  = "ChannelSwish"
	Version = 1
)

var (
	registerOnce sync.Once
	registerErr  error
)

// Register registers ChannelSwish's kernel with the native backend. Call
// it before loading a model that uses the operator; calling it again does
// nothing (and returns the first call's error).
func Register() error {
	registerOnce.Do(func() { registerErr = native.RegisterKernel(Domain, OpType, Version, ChannelSwish{}) })
	return registerErr
}

// ChannelSwish is the kernel of the operator. It keeps no state, so one
// value serves every node and network concurrently.
type ChannelSwish struct{}

var (
	_ native.Kernel   = ChannelSwish{}
	_ native.Gradient = ChannelSwish{}
	_ native.Checker  = ChannelSwish{}
)

// Check checks a node when a network is built: inputs X and Beta, one
// output, an integer axis.
func (ChannelSwish) Check(op *ops.Custom) error {
	if len(op.In) != 2 || op.In[0] == "" || op.In[1] == "" {
		return fmt.Errorf("ChannelSwish takes inputs X and Beta, got %q", op.In)
	}
	if len(op.Out) != 1 {
		return fmt.Errorf("ChannelSwish has one output, got %q", op.Out)
	}
	_, err := op.AttrInt("axis", 1)
	return err
}

// layout is where the channels of X are: X is [outer, channels, inner]
// in row-major order.
type layout struct{ outer, channels, inner int }

// operands checks X and Beta and finds the channel axis.
func operands(op *ops.Custom, in []onnx.Value) (x, beta *onnx.Tensor, l layout, err error) {
	if len(in) != 2 {
		return nil, nil, l, fmt.Errorf("want inputs X and Beta, got %d inputs", len(in))
	}
	x, _ = in[0].(*onnx.Tensor)
	beta, _ = in[1].(*onnx.Tensor)
	if x == nil || beta == nil {
		return nil, nil, l, fmt.Errorf("X is %s and Beta %s; both must be tensors", onnx.DescribeValue(in[0]), onnx.DescribeValue(in[1]))
	}
	if x.Type != onnx.Float && x.Type != onnx.Double {
		// Unsupported, not wrong: the checks skip it.
		return nil, nil, l, network.Unsupportedf("ChannelSwish of tensor(%v)", x.Type)
	}
	if beta.Type != x.Type {
		return nil, nil, l, fmt.Errorf("Beta is tensor(%v), X tensor(%v); they must agree", beta.Type, x.Type)
	}
	axis, err := op.AttrInt("axis", 1)
	if err != nil {
		return nil, nil, l, err
	}
	r := int64(len(x.Shape))
	if axis < -r || axis >= r {
		return nil, nil, l, fmt.Errorf("axis %d is out of range for X of rank %d", axis, r)
	}
	if axis < 0 {
		axis += r
	}
	l = layout{outer: 1, channels: x.Shape[axis], inner: 1}
	for _, d := range x.Shape[:axis] {
		l.outer *= d
	}
	for _, d := range x.Shape[axis+1:] {
		l.inner *= d
	}
	if len(beta.Shape) != 1 || beta.Shape[0] != l.channels {
		return nil, nil, l, fmt.Errorf("Beta has shape %v; X %v has %d channels on axis %d, so Beta must be [%d]",
			beta.Shape, x.Shape, l.channels, axis, l.channels)
	}
	return x, beta, l, nil
}

// Forward computes Y = X · σ(β_c · X).
func (ChannelSwish) Forward(op *ops.Custom, in []onnx.Value) ([]onnx.Value, error) {
	x, beta, l, err := operands(op, in)
	if err != nil {
		return nil, err
	}
	y := onnx.NewTensor(x.Type, x.Shape...) // a new tensor per call: the result is stored as it is
	switch xd := x.Data.(type) {
	case []float32:
		forward(l, xd, beta.Data.([]float32), y.Data.([]float32))
	case []float64:
		forward(l, xd, beta.Data.([]float64), y.Data.([]float64))
	}
	return []onnx.Value{y}, nil
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

func forward[T float32 | float64](l layout, x, beta, y []T) {
	i := 0
	for range l.outer {
		for c := range l.channels {
			b := float64(beta[c])
			for range l.inner {
				v := float64(x[i])
				y[i] = T(v * sigmoid(b*v))
				i++
			}
		}
	}
}

// Gradient: with s = σ(βx), dY/dX = s + βx·s(1 − s) and dY/dβ =
// x²·s(1 − s), the latter summed over each channel's elements.
func (ChannelSwish) Gradient(op *ops.Custom, in, _ []onnx.Value, gout []*onnx.Tensor) ([]*onnx.Tensor, error) {
	x, beta, l, err := operands(op, in)
	if err != nil {
		return nil, err
	}
	g := gout[0]
	if g == nil || g.Type != x.Type {
		return nil, fmt.Errorf("the gradient of Y is %s, X is tensor(%v)", onnx.DescribeValue(g), x.Type)
	}
	dx := onnx.NewTensor(x.Type, x.Shape...)
	dbeta := onnx.NewTensor(beta.Type, beta.Shape...)
	switch xd := x.Data.(type) {
	case []float32:
		backward(l, xd, beta.Data.([]float32), g.Data.([]float32), dx.Data.([]float32), dbeta.Data.([]float32))
	case []float64:
		backward(l, xd, beta.Data.([]float64), g.Data.([]float64), dx.Data.([]float64), dbeta.Data.([]float64))
	}
	return []*onnx.Tensor{dx, dbeta}, nil
}

func backward[T float32 | float64](l layout, x, beta, g, dx, dbeta []T) {
	sums := make([]float64, l.channels)
	i := 0
	for range l.outer {
		for c := range l.channels {
			b := float64(beta[c])
			for range l.inner {
				v, gi := float64(x[i]), float64(g[i])
				s := sigmoid(b * v)
				ds := s * (1 - s)
				dx[i] = T(gi * (s + b*v*ds))
				sums[c] += gi * v * v * ds
				i++
			}
		}
	}
	for c, v := range sums {
		dbeta[c] = T(v)
	}
}
