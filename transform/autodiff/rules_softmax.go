package autodiff

import (
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

func init() {
	register(softmaxGrad, "Softmax", "LogSoftmax")
	register(piecewiseConstantGrad, "Hardmax")
}

// softmaxGrad differentiates Softmax and LogSoftmax from their output y,
// with the sums S taken over the axes one softmax normalises: before
// version 13 the input is coerced to a matrix at axis (the rows run over
// axes axis…rank-1), from 13 over axis alone:
//
//	Softmax:    dx = y·(g - S(g·y))
//	LogSoftmax: dx = g - eʸ·S(g)
func softmaxGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	if !need[0] || dy[0] == "" {
		return nil
	}
	var axis int64
	var since int
	switch op := n.Op.(type) {
	case *ops.Softmax:
		axis, since = op.Axis, op.SinceVersion()
	case *ops.LogSoftmax:
		axis, since = op.Axis, op.SinceVersion()
	}
	x, y, g := n.Inputs[0], n.Outputs[0], dy[0]
	rank := int64(len(b.shapeOf(x)))
	if b.err != nil {
		return nil
	}
	if axis < -rank || axis >= rank {
		b.fail("%s axis %d is out of range for rank %d", n.OpType, axis, rank)
		return nil
	}
	if axis < 0 {
		axis += rank
	}
	axes := []int64{axis}
	if since < 13 {
		axes = axes[:0]
		for a := axis; a < rank; a++ {
			axes = append(axes, a)
		}
	}
	if !b.elemRequire(7, n.OpType, "broadcasting the row sums") {
		return nil
	}
	if n.OpType == "LogSoftmax" {
		s := b.reduceSum(g, axes, true)
		return []string{b.sub(g, b.mul(b.op("Exp", []string{y}), s))}
	}
	s := b.reduceSum(b.mul(g, y), axes, true)
	return []string{b.mul(y, b.sub(g, s))}
}
