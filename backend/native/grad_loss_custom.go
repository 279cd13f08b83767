package native

import (
	"fmt"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rules of the custom losses of ops (loss_custom.go). With c the
// gradient reaching an element's loss (the output's gradient for none, the
// scalar's for sum, the scalar's over the number of elements for mean)
// and d = x - y:
//
//	MeanSquaredError: dx = 2 c d, dy = -2 c d
//	L1Loss:           dx = c sign(d), dy = -c sign(d) (0 where d = 0, as PyTorch)
//	BinaryCrossEntropyWithLogits, with s = softplus(-x), q = 1 + (p - 1) y:
//	  dx = c w [(1 - y) - q σ(-x)]
//	  dy = c w [(p - 1) s - x]
//	  dw = c [(1 - y) x + q s]          summed back to the weight's shape
//	  dp = c w y s                      summed back to pos_weight's shape

var (
	_ ops.MeanSquaredErrorVisitor             = (*gradBuilder)(nil)
	_ ops.L1LossVisitor                       = (*gradBuilder)(nil)
	_ ops.BinaryCrossEntropyWithLogitsVisitor = (*gradBuilder)(nil)
)

type customLossGrad struct {
	kind          customLossKind
	name          string
	reduction     string
	x, y, w, p, o int

	wb, pb         lossBcast
	ew, ep         outputBuffer // weight and pos_weight broadcast to the input's shape
	gx, gy, gw, gp gradScratch
	fw, fp         outputBuffer // full-shape gradients of weight and pos_weight
}

func (gb *gradBuilder) customLossGradRule(kind customLossKind, name, reduction, in, target, weight, posWeight, output string) error {
	k := &customLossGrad{kind: kind, name: name, reduction: reduction,
		x: gb.slot(in), y: gb.slot(target), w: gb.slot(weight), p: gb.slot(posWeight), o: gb.slot(output)}
	return gb.set(k.run)
}

// VisitMeanSquaredError: gradients of the input and the target.
func (gb *gradBuilder) VisitMeanSquaredError(op *ops.MeanSquaredError) error {
	return gb.customLossGradRule(customLossMSE, "MeanSquaredError", op.Reduction, op.In.Input, op.In.Target, "", "", op.Out.Output)
}

// VisitL1Loss: gradients of the input and the target.
func (gb *gradBuilder) VisitL1Loss(op *ops.L1Loss) error {
	return gb.customLossGradRule(customLossL1, "L1Loss", op.Reduction, op.In.Input, op.In.Target, "", "", op.Out.Output)
}

// VisitBinaryCrossEntropyWithLogits: gradients of every input.
func (gb *gradBuilder) VisitBinaryCrossEntropyWithLogits(op *ops.BinaryCrossEntropyWithLogits) error {
	return gb.customLossGradRule(customLossBCE, "BinaryCrossEntropyWithLogits", op.Reduction,
		op.In.Input, op.In.Target, op.In.Weight, op.In.PosWeight, op.Out.Output)
}

func (k *customLossGrad) run(slots []onnx.Value, g *gradState) error {
	gout := g.of(k.o)
	if gout == nil {
		return nil
	}
	if !g.wants(k.x) && !g.wants(k.y) && !g.wants(k.w) && !g.wants(k.p) {
		return nil
	}
	x, err := floatTensor(slots[k.x], "input")
	if err != nil {
		return err
	}
	y, err := floatTensor(slots[k.y], "target")
	if err != nil {
		return err
	}
	var w, p *onnx.Tensor
	if k.w >= 0 {
		if w, err = floatTensor(slots[k.w], "weight"); err != nil {
			return err
		}
	}
	if k.p >= 0 {
		if p, err = floatTensor(slots[k.p], "pos_weight"); err != nil {
			return err
		}
	}
	if err := customLossCheck(k.name, x, y, w, p, &k.wb, &k.pb); err != nil {
		return err
	}
	if gout.Type != x.Type {
		return errGradType(k.name, gout.Type, x.Type)
	}
	switch gd := gout.Data.(type) {
	case []float32:
		return customLossGradTyped(k, g, x, y, w, p, gd)
	case []float64:
		return customLossGradTyped(k, g, x, y, w, p, gd)
	}
	return errGradType(k.name, gout.Type, x.Type)
}

func errGradType(name string, g, x onnx.DataType) error {
	return fmt.Errorf("%s: a gradient of tensor(%v) for an input of tensor(%v)", name, g, x)
}

func customLossGradTyped[T floatElem](k *customLossGrad, g *gradState, x, y, w, p *onnx.Tensor, gout []T) error {
	xd, yd := x.Data.([]T), y.Data.([]T)
	wd := customLossExpand(&k.wb, &k.ew, x.Type, x.Shape, optionalData[T](w))
	pd := customLossExpand(&k.pb, &k.ep, x.Type, x.Shape, optionalData[T](p))
	wantX, wantY := g.wants(k.x), g.wants(k.y)
	wantW, wantP := w != nil && g.wants(k.w), p != nil && g.wants(k.p)
	var gx, gy, fw, fp []T
	if wantX {
		gx = k.gx.buf.tensor(x.Type, x.Shape).Data.([]T)
	}
	if wantY {
		gy = k.gy.buf.tensor(x.Type, x.Shape).Data.([]T)
	}
	if wantW {
		fw = k.fw.tensor(x.Type, x.Shape).Data.([]T)
	}
	if wantP {
		fp = k.fp.tensor(x.Type, x.Shape).Data.([]T)
	}
	none := k.reduction == "none"
	var scalar float64
	if !none {
		scalar = float64(gout[0])
		if k.reduction == "mean" {
			scalar /= float64(len(xd))
		}
	}
	for i := range xd {
		c := scalar
		if none {
			c = float64(gout[i])
		}
		xi, yi := float64(xd[i]), float64(yd[i])
		var dx, dy float64
		switch k.kind {
		case customLossMSE:
			dx = 2 * c * (xi - yi)
			dy = -dx
		case customLossL1:
			switch d := xi - yi; {
			case d > 0:
				dx = c
			case d < 0:
				dx = -c
			}
			dy = -dx
		case customLossBCE:
			wi, pi := 1.0, 1.0
			if wd != nil {
				wi = float64(wd[i])
			}
			if pd != nil {
				pi = float64(pd[i])
			}
			s := lossSoftplusNeg(xi)
			q := 1 + (pi-1)*yi
			dx = c * wi * ((1 - yi) - q*lossSigmoidNeg(xi))
			dy = c * wi * ((pi-1)*s - xi)
			if fw != nil {
				fw[i] = T(c * ((1-yi)*xi + q*s))
			}
			if fp != nil {
				fp[i] = T(c * wi * yi * s)
			}
		}
		if gx != nil {
			gx[i] = T(dx)
		}
		if gy != nil {
			gy[i] = T(dy)
		}
	}
	if wantX {
		if err := g.add(k.x, k.gx.buf.t); err != nil {
			return err
		}
	}
	if wantY {
		if err := g.add(k.y, k.gy.buf.t); err != nil {
			return err
		}
	}
	if wantW {
		gwT := k.gw.zeros(w.Type, w.Shape)
		lossScatterAdd(&k.wb, gwT.Data.([]T), fw)
		if err := g.add(k.w, gwT); err != nil {
			return err
		}
	}
	if wantP {
		gpT := k.gp.zeros(p.Type, p.Shape)
		lossScatterAdd(&k.pb, gpT.Data.([]T), fp)
		if err := g.add(k.p, gpT); err != nil {
			return err
		}
	}
	return nil
}
