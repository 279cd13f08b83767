package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Forward kernels of the custom loss operators of ops (domain ai.deep500):
// MeanSquaredError, L1Loss and BinaryCrossEntropyWithLogits. The builder
// implements their visitor interfaces; grad_loss_custom.go has their
// backward rules.

var (
	_ ops.MeanSquaredErrorVisitor             = (*builder)(nil)
	_ ops.L1LossVisitor                       = (*builder)(nil)
	_ ops.BinaryCrossEntropyWithLogitsVisitor = (*builder)(nil)
)

// customLossKind selects the elementwise loss.
type customLossKind uint8

const (
	customLossMSE customLossKind = iota
	customLossL1
	customLossBCE
)

// lossBcast maps the elements of a shape, in row-major order, to those of
// an operand that broadcasts to it (numpy-style, unidirectionally), with
// no allocation once planned for a shape.
type lossBcast struct {
	shape   []int
	strides []int
	counter []int
	same    bool // the operand has the shape itself
}

// plan prepares the walk of out for an operand of shape src, or fails
// when src does not broadcast to out.
func (b *lossBcast) plan(src, out []int) error {
	b.same = sameShape(src, out)
	if b.same {
		return nil
	}
	if len(src) > len(out) {
		return fmt.Errorf("shape %v does not broadcast to %v", src, out)
	}
	off := len(out) - len(src)
	for i, d := range src {
		if d != 1 && d != out[off+i] {
			return fmt.Errorf("shape %v does not broadcast to %v", src, out)
		}
	}
	b.shape = append(b.shape[:0], out...)
	b.strides = withLen(b.strides, len(out))
	b.counter = withLen(b.counter, len(out))
	step := 1
	for i := len(out) - 1; i >= 0; i-- {
		b.strides[i] = 0
		if j := i - off; j >= 0 && src[j] != 1 {
			b.strides[i] = step
			step *= src[j]
		}
	}
	return nil
}

// lossGather sets dst[i] to the operand element that element i of the
// planned shape reads.
func lossGather[T any](b *lossBcast, dst, src []T) {
	if b.same {
		copy(dst, src)
		return
	}
	clear(b.counter)
	off := 0
	last := len(b.shape) - 1
	for i := range dst {
		dst[i] = src[off]
		for d := last; d >= 0; d-- {
			b.counter[d]++
			off += b.strides[d]
			if b.counter[d] < b.shape[d] {
				break
			}
			off -= b.strides[d] * b.shape[d]
			b.counter[d] = 0
		}
	}
}

// lossScatterAdd adds every src[i] into the operand element that element
// i of the planned shape reads: the gradient of a broadcast operand.
func lossScatterAdd[T floatElem](b *lossBcast, dst, src []T) {
	if b.same {
		addInto(dst, src)
		return
	}
	clear(b.counter)
	off := 0
	last := len(b.shape) - 1
	for i := range src {
		dst[off] += src[i]
		for d := last; d >= 0; d-- {
			b.counter[d]++
			off += b.strides[d]
			if b.counter[d] < b.shape[d] {
				break
			}
			off -= b.strides[d] * b.shape[d]
			b.counter[d] = 0
		}
	}
}

// lossSoftplusNeg is softplus(-x) = log(1 + e^-x), without overflow.
func lossSoftplusNeg(x float64) float64 {
	return math.Max(-x, 0) + math.Log1p(math.Exp(-math.Abs(x)))
}

// lossSigmoidNeg is σ(-x) = 1 / (1 + e^x), without overflow.
func lossSigmoidNeg(x float64) float64 {
	if x >= 0 {
		e := math.Exp(-x)
		return e / (1 + e)
	}
	return 1 / (1 + math.Exp(x))
}

// customLossCheck checks the inputs of a custom loss and plans the
// broadcasts of weight and pos_weight.
func customLossCheck(name string, x, y, w, p *onnx.Tensor, wb, pb *lossBcast) error {
	if err := checkStorage(x); err != nil {
		return err
	}
	for _, o := range []struct {
		t    *onnx.Tensor
		what string
	}{{y, "target"}, {w, "weight"}, {p, "pos_weight"}} {
		if o.t != nil && o.t.Type != x.Type {
			return fmt.Errorf("%s: %s is tensor(%v), input is tensor(%v)", name, o.what, o.t.Type, x.Type)
		}
	}
	if !sameShape(x.Shape, y.Shape) {
		return fmt.Errorf("%s: target has shape %v, input %v; they must be equal", name, y.Shape, x.Shape)
	}
	if w != nil {
		if err := wb.plan(w.Shape, x.Shape); err != nil {
			return fmt.Errorf("%s: weight: %w", name, err)
		}
	}
	if p != nil {
		if err := pb.plan(p.Shape, x.Shape); err != nil {
			return fmt.Errorf("%s: pos_weight: %w", name, err)
		}
	}
	return nil
}

// customLossKernel is the forward kernel of a custom loss.
type customLossKernel struct {
	kind      customLossKind
	name      string
	reduction string

	out    outputBuffer
	wb, pb lossBcast
	ew, ep outputBuffer // weight and pos_weight broadcast to the input's shape
	// float16/bfloat16 are computed in float32.
	fx, fy, fw, fp, fo float32Scratch
}

func (k *customLossKernel) compute(x, y, w, p *onnx.Tensor) (*onnx.Tensor, error) {
	if err := customLossCheck(k.name, x, y, w, p, &k.wb, &k.pb); err != nil {
		return nil, err
	}
	var outShape []int
	if k.reduction == "none" {
		outShape = x.Shape
	}
	out := k.out.tensor(x.Type, outShape)
	switch xd := x.Data.(type) {
	case []float32:
		customLossTyped(k, onnx.Float, xd, y.Data.([]float32), optionalData[float32](w), optionalData[float32](p), x.Shape, out.Data.([]float32))
	case []float64:
		customLossTyped(k, onnx.Double, xd, y.Data.([]float64), optionalData[float64](w), optionalData[float64](p), x.Shape, out.Data.([]float64))
	case []onnx.F16, []onnx.BF16:
		widen := func(s *float32Scratch, t *onnx.Tensor) []float32 {
			if t == nil {
				return nil
			}
			v, _ := widenToFloat32(s.get(t.Len()), t.Data)
			return v
		}
		fo := k.fo.get(out.Len())
		customLossTyped(k, onnx.Float, widen(&k.fx, x), widen(&k.fy, y), widen(&k.fw, w), widen(&k.fp, p), x.Shape, fo)
		if err := narrowFromFloat32(out.Data, fo); err != nil {
			return nil, err
		}
	default:
		return nil, network.Unsupportedf("%s of tensor(%v)", k.name, x.Type)
	}
	return out, nil
}

// customLossExpand returns an optional operand broadcast to the input's
// shape (itself when it has that shape), nil when absent.
func customLossExpand[T floatElem](b *lossBcast, buf *outputBuffer, typ onnx.DataType, shape []int, v []T) []T {
	if v == nil || b.same {
		return v
	}
	e := buf.tensor(typ, shape).Data.([]T)
	lossGather(b, e, v)
	return e
}

func customLossTyped[T floatElem](k *customLossKernel, typ onnx.DataType, x, y, w, p []T, shape []int, out []T) {
	w = customLossExpand(&k.wb, &k.ew, typ, shape, w)
	p = customLossExpand(&k.pb, &k.ep, typ, shape, p)
	none := k.reduction == "none"
	var total float64
	for i := range x {
		var l float64
		switch k.kind {
		case customLossMSE:
			d := float64(x[i]) - float64(y[i])
			l = d * d
		case customLossL1:
			l = math.Abs(float64(x[i]) - float64(y[i]))
		case customLossBCE:
			xi, yi := float64(x[i]), float64(y[i])
			coef := 1.0
			if p != nil {
				coef = 1 + (float64(p[i])-1)*yi
			}
			l = (1-yi)*xi + coef*lossSoftplusNeg(xi)
			if w != nil {
				l *= float64(w[i])
			}
		}
		if none {
			out[i] = T(l)
		} else {
			total += l
		}
	}
	if !none {
		if k.reduction == "mean" {
			total /= float64(len(x))
		}
		out[0] = T(total)
	}
}

func (b *builder) customLoss(kind customLossKind, name, reduction string, in, target, weight, posWeight, output string) error {
	switch reduction {
	case "none", "sum", "mean":
	default:
		return fmt.Errorf("%s: reduction must be none, sum or mean, got %q", name, reduction)
	}
	x, err := b.input(in)
	if err != nil {
		return err
	}
	y, err := b.input(target)
	if err != nil {
		return err
	}
	w, err := b.optionalInput(weight)
	if err != nil {
		return err
	}
	p, err := b.optionalInput(posWeight)
	if err != nil {
		return err
	}
	out := b.output(output)
	k := &customLossKernel{kind: kind, name: name, reduction: reduction}
	return b.emit(func(slots []onnx.Value) error {
		xt, err := x.tensor(slots)
		if err != nil {
			return err
		}
		yt, err := y.tensor(slots)
		if err != nil {
			return err
		}
		wt, err := w.optionalTensor(slots)
		if err != nil {
			return err
		}
		pt, err := p.optionalTensor(slots)
		if err != nil {
			return err
		}
		res, err := k.compute(xt, yt, wt, pt)
		if err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	})
}

// VisitMeanSquaredError compiles ai.deep500's MeanSquaredError.
func (b *builder) VisitMeanSquaredError(op *ops.MeanSquaredError) error {
	return b.customLoss(customLossMSE, "MeanSquaredError", op.Reduction, op.In.Input, op.In.Target, "", "", op.Out.Output)
}

// VisitL1Loss compiles ai.deep500's L1Loss.
func (b *builder) VisitL1Loss(op *ops.L1Loss) error {
	return b.customLoss(customLossL1, "L1Loss", op.Reduction, op.In.Input, op.In.Target, "", "", op.Out.Output)
}

// VisitBinaryCrossEntropyWithLogits compiles ai.deep500's
// BinaryCrossEntropyWithLogits.
func (b *builder) VisitBinaryCrossEntropyWithLogits(op *ops.BinaryCrossEntropyWithLogits) error {
	return b.customLoss(customLossBCE, "BinaryCrossEntropyWithLogits", op.Reduction,
		op.In.Input, op.In.Target, op.In.Weight, op.In.PosWeight, op.Out.Output)
}
