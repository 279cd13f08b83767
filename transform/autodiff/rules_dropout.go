package autodiff

import (
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

func init() {
	register(dropoutGrad, "Dropout")
}

// nnConstTensor returns the value of v when the graph fixes it: an
// initializer that is not also a graph input (a feed would override
// it), or a Constant node's value; nil otherwise.
func (b *builder) nnConstTensor(v string) *onnx.Tensor {
	for _, in := range b.g.Inputs {
		if in.Name == v {
			return nil
		}
	}
	if t := b.g.Initializer(v); t != nil {
		return t
	}
	for _, n := range b.g.Nodes {
		if n.OpType != "Constant" || n.Domain != "" || len(n.Outputs) == 0 || n.Outputs[0] != v {
			continue
		}
		if a := n.Attr("value"); a != nil && a.Tensor != nil {
			return a.Tensor
		}
		if a := n.Attr("value_float"); a != nil {
			return onnx.Scalar(a.Float)
		}
		return nil
	}
	return nil
}

// nnConstScalar reads a one-element floating-point or boolean constant
// as a float64 (a boolean as 0 or 1).
func (b *builder) nnConstScalar(v string) (float64, bool) {
	t := b.nnConstTensor(v)
	if t == nil || t.Len() != 1 {
		return 0, false
	}
	switch d := t.Data.(type) {
	case []bool:
		if d[0] {
			return 1, true
		}
		return 0, true
	case []float32:
		return float64(d[0]), true
	case []float64:
		return d[0], true
	case []onnx.F16:
		return float64(d[0].Float32()), true
	case []onnx.BF16:
		return float64(d[0].Float32()), true
	}
	return 0, false
}

// dropoutScale is the factor a kept element is multiplied by, 1/(1 −
// ratio); 0 for a ratio of 1, where every element is dropped (the native
// backend's convention).
func dropoutScale(ratio float64) float64 {
	if ratio >= 1 {
		return 0
	}
	return 1 / (1 - ratio)
}

// dropoutGrad (https://onnx.ai/onnx/operators/onnx__Dropout.html): in
// inference the output is the input, so dX = dY. In training
// y = x·mask/(1 − ratio), so dX = dY·mask/(1 − ratio), with the mask the
// forward drew: the rule reads the node's mask output, adding it when the
// model did not ask for it. Inference and training are told apart as the
// native backend does: versions 1 and 6 train unless is_test, 7 and 10
// always infer, from 12 the training_mode input decides (absent: infer);
// when it is a value the graph does not fix, the scale is chosen at run
// time. The ratio and training_mode inputs get no gradient.
func dropoutGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.Dropout)
	x, g := op.In.Data, dy[0]
	if g == "" || !need[0] {
		return nil
	}
	v := op.SinceVersion()
	switch {
	case v >= 12:
		if op.In.TrainingMode == "" {
			return []string{g}
		}
		train, trainKnown := b.nnConstScalar(op.In.TrainingMode)
		if trainKnown && train == 0 {
			return []string{g}
		}
		ratio, ratioKnown := 0.5, true
		if op.In.Ratio != "" {
			ratio, ratioKnown = b.nnConstScalar(op.In.Ratio)
		}
		if trainKnown && ratioKnown && ratio == 0 {
			// Nothing is dropped, and the scale is 1.
			return []string{g}
		}
		mask := op.Out.Mask
		if mask == "" {
			mask = b.nnAddOutput(n, 1, "mask", Info{Type: onnx.Bool, Shape: b.shapeOf(x)})
		}
		var scale string
		if trainKnown && ratioKnown {
			scale = b.scalarLike(dropoutScale(ratio), x)
		} else {
			r := op.In.Ratio
			if r == "" {
				r = b.scalarLike(0.5, x)
			} else if b.typeOf(r) != b.typeOf(x) {
				r = b.cast(r, b.typeOf(x))
			}
			// 1/(1 − ratio) is infinite for a ratio of 1, but then the
			// mask drops every element and Where never picks it.
			scale = b.op("Reciprocal", []string{b.sub(b.scalarLike(1, x), r)})
			if !trainKnown {
				scale = b.op("Where", []string{op.In.TrainingMode, scale, b.scalarLike(1, x)})
			}
		}
		dx := b.op("Where", []string{mask, b.mul(g, scale), b.scalarLike(0, x)})
		return []string{b.like(dx, x)}
	case v >= 7:
		return []string{g}
	}
	if op.IsTest != 0 {
		return []string{g}
	}
	// Versions 1 and 6 in training: the mask has X's type (0 or 1).
	mask := op.Out.Mask
	if mask == "" {
		mask = b.nnAddOutput(n, 1, "mask", Info{Type: b.typeOf(x), Shape: b.shapeOf(x)})
	}
	// These opsets broadcast a scalar operand only when asked to.
	dx := b.op("Mul", []string{b.mul(g, mask), b.scalarLike(dropoutScale(float64(op.Ratio)), x)}, attrInt("broadcast", 1))
	return []string{b.like(dx, x)}
}
