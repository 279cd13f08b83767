package gorgonia

import (
	"fmt"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// sumAll sums every element into a one-element vector (not a Gorgonia
// scalar, which most ops reject).
func sumAll(x *G.Node) (*G.Node, error) {
	m, err := reshape(x, []int{1, x.Shape().TotalSize()})
	if err != nil {
		return nil, err
	}
	return G.Sum(m, 1)
}

// reduceLoss applies a loss reduction (none, sum, mean) to elementwise
// losses of the given ONNX shape; mean divides by den when given, else
// by the number of elements.
func reduceLoss(elem *G.Node, shape []int, typ onnx.DataType, reduction string, den *G.Node) (*G.Node, []int, error) {
	switch reduction {
	case "none":
		y, err := reshape(elem, gshape(shape))
		return y, shape, err
	case "sum", "mean":
	default:
		return nil, nil, fmt.Errorf("unknown reduction %q", reduction)
	}
	s, err := sumAll(elem)
	if err != nil {
		return nil, nil, err
	}
	if reduction == "mean" {
		if den != nil {
			s, err = G.HadamardDiv(s, den)
		} else {
			s, err = scale(s, typ, 1/float64(onnx.NumElements(shape)))
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return s, []int{}, nil
}

// classRows lays out scores [N, C, d1, ...] as rows [N·d1·..., C], one
// row per element of the labels.
func classRows(x *G.Node, shape []int) (*G.Node, error) {
	if len(shape) == 2 {
		return x, nil
	}
	n, c, d := shape[0], shape[1], onnx.NumElements(shape[2:])
	x3, err := reshape(x, []int{n, c, d})
	if err != nil {
		return nil, err
	}
	t, err := G.Transpose(x3, 0, 2, 1)
	if err != nil {
		return nil, err
	}
	return reshape(t, []int{n * d, c})
}

// fromClassRows undoes classRows.
func fromClassRows(rows *G.Node, shape []int) (*G.Node, error) {
	if len(shape) == 2 {
		return rows, nil
	}
	n, c, d := shape[0], shape[1], onnx.NumElements(shape[2:])
	x3, err := reshape(rows, []int{n, d, c})
	if err != nil {
		return nil, err
	}
	t, err := G.Transpose(x3, 0, 2, 1)
	if err != nil {
		return nil, err
	}
	return reshape(t, shape)
}

// oneHot returns the node of the one-hot rows [N·d, C] of the class labels
// named labels (int32 or int64, shaped like scores without axis 1): a
// derived input computed in Go before every run when the labels are fed,
// a constant when they are. Rows of labels equal to ignore are zero.
func (b *builder) oneHot(labels string, scoreShape []int, typ onnx.DataType, ignore *int64) (*G.Node, error) {
	lv, err := b.get(labels)
	if err != nil {
		return nil, err
	}
	want := append([]int{scoreShape[0]}, scoreShape[2:]...)
	if !slices.Equal(lv.shape, want) {
		return nil, fmt.Errorf("labels %q of shape %v for scores of shape %v (want %v)", labels, lv.shape, scoreShape, want)
	}
	rows, c := onnx.NumElements(want), scoreShape[1]
	encode := func(t *onnx.Tensor) (*tensor.Dense, error) {
		ls, err := int64sOf(t)
		if err != nil {
			return nil, fmt.Errorf("labels %q: %w", labels, err)
		}
		if len(ls) != rows {
			return nil, fmt.Errorf("labels %q: %d values, want %d", labels, len(ls), rows)
		}
		hot := onnx.NewTensor(typ, rows, c)
		for i, l := range ls {
			if ignore != nil && l == *ignore {
				continue
			}
			if l < 0 || l >= int64(c) {
				return nil, fmt.Errorf("labels %q: class %d at index %d is outside [0, %d)", labels, l, i, c)
			}
			switch d := hot.Data.(type) {
			case []float32:
				d[i*c+int(l)] = 1
			case []float64:
				d[i*c+int(l)] = 1
			}
		}
		return denseOf(hot)
	}
	dt, err := dtypeOf(typ)
	if err != nil {
		return nil, err
	}
	if _, fed := b.feeds[labels]; fed {
		node := G.NewTensor(b.p.g, dt, 2, G.WithShape(rows, c), G.WithName("onehot:"+labels))
		b.p.derived = append(b.p.derived, derivedInput{node: node, compute: func(feeds map[string]*onnx.Tensor) (*tensor.Dense, error) {
			return encode(feeds[labels])
		}})
		return node, nil
	}
	if lv.c == nil {
		return nil, network.Unsupportedf("labels %q computed by the graph: the Gorgonia backend one-hot encodes labels that are fed or constant", labels)
	}
	d, err := encode(lv.c)
	if err != nil {
		return nil, err
	}
	return G.NewTensor(b.p.g, dt, 2, G.WithShape(rows, c), G.WithName("onehot-const:"+labels), G.WithValue(d)), nil
}

// nll builds the negative log-likelihood of log-probabilities laid out as
// rows [N·d, C], with the targets' one-hot rows and optional class
// weights, reduced as ONNX's NegativeLogLikelihoodLoss: mean divides by
// the total weight of the targets that are not ignored.
func (b *builder) nll(logp *G.Node, scoreShape []int, typ onnx.DataType, target, weight string, ignore *int64, reduction, out string) error {
	hot, err := b.oneHot(target, scoreShape, typ, ignore)
	if err != nil {
		return err
	}
	t := hot
	if weight != "" {
		wv, wn, err := b.getFloat(weight)
		if err != nil {
			return err
		}
		if len(wv.shape) != 1 || wv.shape[0] != scoreShape[1] || wv.typ != typ {
			return fmt.Errorf("weights %q are %v%v, want %v[%d]", weight, wv.typ, wv.shape, typ, scoreShape[1])
		}
		w2, err := reshape(wn, []int{1, scoreShape[1]})
		if err != nil {
			return err
		}
		rows := hot.Shape()[0]
		if rows == 1 {
			t, err = G.HadamardProd(hot, w2)
		} else {
			t, err = G.BroadcastHadamardProd(hot, w2, nil, []byte{0})
		}
		if err != nil {
			return err
		}
	}
	picked, err := G.HadamardProd(t, logp)
	if err != nil {
		return err
	}
	elem, _, err := reduceAxis(picked, picked.Shape(), 1, G.Sum)
	if err != nil {
		return err
	}
	if elem, err = G.Neg(elem); err != nil {
		return err
	}
	var den *G.Node
	if reduction == "mean" {
		if den, err = sumAll(t); err != nil {
			return err
		}
	}
	lshape := append([]int{scoreShape[0]}, scoreShape[2:]...)
	y, shape, err := reduceLoss(elem, lshape, typ, reduction, den)
	if err != nil {
		return err
	}
	return b.set(out, y, shape, typ)
}

// VisitSoftmaxCrossEntropyLoss is the log-softmax over the classes (axis
// 1) followed by the negative log-likelihood.
func (b *builder) VisitSoftmaxCrossEntropyLoss(op *ops.SoftmaxCrossEntropyLoss) error {
	xv, xn, err := b.getFloat(op.In.Scores)
	if err != nil {
		return err
	}
	if len(xv.shape) < 2 {
		return fmt.Errorf("scores of shape %v, want [N, C, ...]", xv.shape)
	}
	rows, err := classRows(xn, xv.shape)
	if err != nil {
		return err
	}
	logp, err := G.LogSoftMax(rows, 1)
	if err != nil {
		return err
	}
	if op.Out.LogProb != "" {
		lp, err := fromClassRows(logp, xv.shape)
		if err != nil {
			return err
		}
		if err := b.set(op.Out.LogProb, lp, xv.shape, xv.typ); err != nil {
			return err
		}
	}
	return b.nll(logp, xv.shape, xv.typ, op.In.Labels, op.In.Weights, op.IgnoreIndex, op.Reduction, op.Out.Output)
}

// VisitNegativeLogLikelihoodLoss reads log-probabilities [N, C, ...].
func (b *builder) VisitNegativeLogLikelihoodLoss(op *ops.NegativeLogLikelihoodLoss) error {
	xv, xn, err := b.getFloat(op.In.Input)
	if err != nil {
		return err
	}
	if len(xv.shape) < 2 {
		return fmt.Errorf("input of shape %v, want [N, C, ...]", xv.shape)
	}
	rows, err := classRows(xn, xv.shape)
	if err != nil {
		return err
	}
	return b.nll(rows, xv.shape, xv.typ, op.In.Target, op.In.Weight, op.IgnoreIndex, op.Reduction, op.Out.Loss)
}

// elementLoss maps the project's elementwise losses: f(input, target)
// per element, then the reduction.
func (b *builder) elementLoss(input, target, reduction, out string, f func(x, y *G.Node, t onnx.DataType) (*G.Node, error)) error {
	xv, xn, err := b.getFloat(input)
	if err != nil {
		return err
	}
	yv, yn, err := b.getFloat(target)
	if err != nil {
		return err
	}
	if !slices.Equal(xv.shape, yv.shape) || xv.typ != yv.typ {
		return fmt.Errorf("target %q is %v%v, input %q is %v%v", target, yv.typ, yv.shape, input, xv.typ, xv.shape)
	}
	elem, err := f(xn, yn, xv.typ)
	if err != nil {
		return err
	}
	y, shape, err := reduceLoss(elem, xv.shape, xv.typ, reduction, nil)
	if err != nil {
		return err
	}
	return b.set(out, y, shape, xv.typ)
}

// VisitMeanSquaredError is (x − y)².
func (b *builder) VisitMeanSquaredError(op *ops.MeanSquaredError) error {
	return b.elementLoss(op.In.Input, op.In.Target, op.Reduction, op.Out.Output, func(x, y *G.Node, _ onnx.DataType) (*G.Node, error) {
		d, err := G.Sub(x, y)
		if err != nil {
			return nil, err
		}
		return G.Square(d)
	})
}

// VisitL1Loss is |x − y|.
func (b *builder) VisitL1Loss(op *ops.L1Loss) error {
	return b.elementLoss(op.In.Input, op.In.Target, op.Reduction, op.Out.Output, func(x, y *G.Node, _ onnx.DataType) (*G.Node, error) {
		d, err := G.Sub(x, y)
		if err != nil {
			return nil, err
		}
		return G.Abs(d)
	})
}

// VisitBinaryCrossEntropyWithLogits is softplus(x) − x·y, without weight
// and pos_weight (not mapped).
func (b *builder) VisitBinaryCrossEntropyWithLogits(op *ops.BinaryCrossEntropyWithLogits) error {
	if op.In.Weight != "" || op.In.PosWeight != "" {
		return network.Unsupportedf("BinaryCrossEntropyWithLogits with weight or pos_weight")
	}
	return b.elementLoss(op.In.Input, op.In.Target, op.Reduction, op.Out.Output, func(x, y *G.Node, _ onnx.DataType) (*G.Node, error) {
		sp, err := G.Softplus(x)
		if err != nil {
			return nil, err
		}
		xy, err := G.HadamardProd(x, y)
		if err != nil {
			return nil, err
		}
		return G.Sub(sp, xy)
	})
}
