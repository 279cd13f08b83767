package native

import (
	"fmt"

	"github.com/deep500/deep500-go/backend/native/internal/gemm"
	"github.com/deep500/deep500-go/backend/native/internal/vec"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rules of the operators of issue 2's first set: arithmetic with
// broadcasting, MatMul, Gemm, the basic activations and pass-through ops.

// VisitIdentity: the gradient passes through.
func (gb *gradBuilder) VisitIdentity(op *ops.Identity) error {
	x, y := gb.slot(op.In.Input), gb.slot(op.Out.Output)
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		return g.add(x, g.of(y))
	})
}

// reshapeGrad passes the output's gradient to the input in the input's
// shape: the rule of every operator that only changes the shape.
func (gb *gradBuilder) reshapeGrad(in, out string) error {
	x, y := gb.slot(in), gb.slot(out)
	var scratch gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy := g.of(y)
		if gy == nil || !g.wants(x) {
			return nil
		}
		xt, err := floatTensor(slots[x], "input")
		if err != nil {
			return err
		}
		if xt.Len() != gy.Len() {
			return fmt.Errorf("gradient of %d elements for an input of shape %v", gy.Len(), xt.Shape)
		}
		t := g.dest(x, &scratch, gy.Type, xt.Shape)
		onnx.CopySlice(t.Data, gy.Data)
		return g.add(x, t)
	})
}

func (gb *gradBuilder) VisitReshape(op *ops.Reshape) error {
	return gb.reshapeGrad(op.In.Data, op.Out.Reshaped)
}

// arithGrad is the backward rule of Add, Sub, Mul and Div with numpy (or,
// before opset 7, legacy) broadcasting.
type arithGrad struct {
	op        arithOp
	a, b, y   int
	axis      *int64
	broadcast int64
	sa, sb    gradScratch
	tmp       gradScratch
}

func (gb *gradBuilder) arith(op arithOp, aName, bName, cName string, broadcast int64, axis *int64) error {
	k := &arithGrad{op: op, a: gb.slot(aName), b: gb.slot(bName), y: gb.slot(cName), axis: axis, broadcast: broadcast}
	return gb.set(k.run)
}

func (gb *gradBuilder) VisitAdd(op *ops.Add) error {
	return gb.arith(opAdd, op.In.A, op.In.B, op.Out.C, op.Broadcast, op.Axis)
}
func (gb *gradBuilder) VisitSub(op *ops.Sub) error {
	return gb.arith(opSub, op.In.A, op.In.B, op.Out.C, op.Broadcast, op.Axis)
}
func (gb *gradBuilder) VisitMul(op *ops.Mul) error {
	return gb.arith(opMul, op.In.A, op.In.B, op.Out.C, op.Broadcast, op.Axis)
}
func (gb *gradBuilder) VisitDiv(op *ops.Div) error {
	return gb.arith(opDiv, op.In.A, op.In.B, op.Out.C, op.Broadcast, op.Axis)
}

func (k *arithGrad) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil {
		return nil
	}
	a, err := floatTensor(slots[k.a], "input A")
	if err != nil {
		return err
	}
	b, err := floatTensor(slots[k.b], "input B")
	if err != nil {
		return err
	}
	bShape := legacyOperandShape(b.Shape, len(a.Shape), k.axis, k.broadcast)
	switch gyd := gy.Data.(type) {
	case []float32:
		return arithGradTyped(k, g, gy, gyd, a, a.Data.([]float32), b, bShape, b.Data.([]float32))
	case []float64:
		return arithGradTyped(k, g, gy, gyd, a, a.Data.([]float64), b, bShape, b.Data.([]float64))
	}
	return fmt.Errorf("gradient of type %v", gy.Type)
}

func arithGradTyped[T floatElem](k *arithGrad, g *gradState, gy *onnx.Tensor, gyd []T, a *onnx.Tensor, ad []T, b *onnx.Tensor, bShape []int, bd []T) error {
	out := gy.Shape
	// term(x) is the elementwise factor the output gradient is multiplied
	// by for an operand, walked in the output's shape.
	partial := func(which int) []T {
		t := k.tmp.buf.tensor(gy.Type, out)
		d := t.Data.([]T)
		if sa, sb, ok := arithGradFlatStrides(len(ad), len(bd), len(d)); ok {
			// No broadcasting beyond a scalar operand: one flat loop, and
			// no walk to plan (which would allocate every step).
			arithGradPartialFlat(k.op, which, d, gyd, ad, sa, bd, sb)
			return d
		}
		w := newStridedWalk(out, rowMajorStrides(out), broadcastStrides(a.Shape, out), broadcastStrides(bShape, out))
		n := w.rowLen()
		so, sa, sb := w.rowStride(0), w.rowStride(1), w.rowStride(2)
		w.forEachRow(func(_ int, off walkOffsets) {
			for i := range n {
				o, av, bv := off[0]+i*so, ad[off[1]+i*sa], bd[off[2]+i*sb]
				switch {
				case k.op == opMul && which == 0:
					d[o] = gyd[o] * bv
				case k.op == opMul:
					d[o] = gyd[o] * av
				case k.op == opDiv && which == 0:
					d[o] = gyd[o] / bv
				default: // Div, operand B: -gy * a / b^2
					d[o] = -gyd[o] * av / (bv * bv)
				}
			}
		})
		return d
	}
	if g.wants(k.a) && (k.op == opAdd || k.op == opSub) && sameShape(a.Shape, out) {
		// Not broadcast: the operand's gradient is dY itself.
		if err := g.add(k.a, gy); err != nil {
			return err
		}
	} else if g.wants(k.a) {
		src := gyd
		if k.op == opMul || k.op == opDiv {
			src = partial(0)
		}
		ga := k.sa.zeros(gy.Type, a.Shape)
		sumToShape(ga.Data.([]T), a.Shape, src, out)
		if err := g.add(k.a, ga); err != nil {
			return err
		}
	}
	if g.wants(k.b) && k.op == opAdd && sameShape(bShape, out) && sameShape(b.Shape, out) {
		if err := g.add(k.b, gy); err != nil {
			return err
		}
	} else if g.wants(k.b) {
		src := gyd
		if k.op == opMul || k.op == opDiv {
			src = partial(1)
		}
		gbT := k.sb.zeros(gy.Type, bShape)
		gbd := gbT.Data.([]T)
		sumToShape(gbd, bShape, src, out)
		if k.op == opSub {
			for i := range gbd {
				gbd[i] = -gbd[i]
			}
		}
		gbT.Shape = append(gbT.Shape[:0], b.Shape...)
		if err := g.add(k.b, gbT); err != nil {
			return err
		}
	}
	return nil
}

// arithGradFlatStrides gives the flat strides (1, or 0 for a one-element
// operand) of operands of na and nb elements against an output of n, or
// ok false when one of them is broadcast along some dimensions only. As
// in the forward kernel, an operand with as many elements as the output is
// not broadcast.
func arithGradFlatStrides(na, nb, n int) (sa, sb int, ok bool) {
	stride := func(m int) (int, bool) {
		switch m {
		case n:
			return 1, true
		case 1:
			return 0, true
		}
		return 0, false
	}
	sa, okA := stride(na)
	sb, okB := stride(nb)
	return sa, sb, okA && okB
}

// arithGradPartialFlat is arithGradTyped's partial for flat operands.
func arithGradPartialFlat[T floatElem](op arithOp, which int, d, gy, a []T, sa int, b []T, sb int) {
	for o := range d {
		av, bv := a[o*sa], b[o*sb]
		switch {
		case op == opMul && which == 0:
			d[o] = gy[o] * bv
		case op == opMul:
			d[o] = gy[o] * av
		case op == opDiv && which == 0:
			d[o] = gy[o] / bv
		default: // Div, operand B: -gy * a / b^2
			d[o] = -gy[o] * av / (bv * bv)
		}
	}
}

// activationGrad is the backward rule of Relu, Sigmoid and Tanh, written
// with the forward output where that is cheaper.
func (gb *gradBuilder) activationGrad(fn activation, in, out string) error {
	x, y := gb.slot(in), gb.slot(out)
	var scratch gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy := g.of(y)
		if gy == nil || !g.wants(x) {
			return nil
		}
		xt, err := floatTensor(slots[x], "input")
		if err != nil {
			return err
		}
		yt, err := floatTensor(slots[y], "output")
		if err != nil {
			return err
		}
		t := g.dest(x, &scratch, gy.Type, xt.Shape)
		switch d := t.Data.(type) {
		case []float32:
			activationBackward(fn, d, gy.Data.([]float32), xt.Data.([]float32), yt.Data.([]float32))
		case []float64:
			activationBackward(fn, d, gy.Data.([]float64), xt.Data.([]float64), yt.Data.([]float64))
		}
		return g.add(x, t)
	})
}

func activationBackward[T floatElem](fn activation, dx, dy, x, y []T) {
	switch fn {
	case actRelu:
		if d, ok := any(dx).([]float32); ok {
			vec.ReluGrad(d, any(dy).([]float32), any(x).([]float32))
			return
		}
		for i, v := range x {
			if v > 0 {
				dx[i] = dy[i]
			} else {
				dx[i] = 0
			}
		}
	case actSigmoid:
		for i, s := range y {
			dx[i] = dy[i] * s * (1 - s)
		}
	case actTanh:
		for i, t := range y {
			dx[i] = dy[i] * (1 - t*t)
		}
	}
}

func (gb *gradBuilder) VisitRelu(op *ops.Relu) error {
	return gb.activationGrad(actRelu, op.In.X, op.Out.Y)
}
func (gb *gradBuilder) VisitSigmoid(op *ops.Sigmoid) error {
	return gb.activationGrad(actSigmoid, op.In.X, op.Out.Y)
}
func (gb *gradBuilder) VisitTanh(op *ops.Tanh) error {
	return gb.activationGrad(actTanh, op.In.Input, op.Out.Output)
}

// matmulGrad: for every batch product C_i = A_i B_i, dA_i += dC_i B_iᵀ and
// dB_i += A_iᵀ dC_i; broadcast batches add into the same operand block,
// and 1-D operands are the matrices of planMatMul's promotion.
type matmulGrad struct {
	a, b, y int
	threads int
	sa, sb  gradScratch
	// plan is planMatMul's answer for the operand shapes planA, planB,
	// kept so that a step with the same shapes plans (and allocates)
	// nothing.
	plan         matmulPlan
	planA, planB []int
	planned      bool
}

func (gb *gradBuilder) VisitMatMul(op *ops.MatMul) error {
	k := &matmulGrad{a: gb.slot(op.In.A), b: gb.slot(op.In.B), y: gb.slot(op.Out.Y), threads: gb.e.threads}
	return gb.set(k.run)
}

func (k *matmulGrad) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil {
		return nil
	}
	a, err := floatTensor(slots[k.a], "input A")
	if err != nil {
		return err
	}
	b, err := floatTensor(slots[k.b], "input B")
	if err != nil {
		return err
	}
	if !k.planned || !sameShape(k.planA, a.Shape) || !sameShape(k.planB, b.Shape) {
		p, err := planMatMul(a.Shape, b.Shape)
		if err != nil {
			return err
		}
		k.plan, k.planned = p, true
		k.planA, k.planB = append(k.planA[:0], a.Shape...), append(k.planB[:0], b.Shape...)
	}
	p := k.plan
	switch gyd := gy.Data.(type) {
	case []float32:
		return matmulGradTyped(k, g, p, gyd, a, a.Data.([]float32), b, b.Data.([]float32))
	case []float64:
		return matmulGradTyped(k, g, p, gyd, a, a.Data.([]float64), b, b.Data.([]float64))
	}
	return fmt.Errorf("gradient of type %v", gy.Type)
}

func matmulGradTyped[T floatElem](k *matmulGrad, g *gradState, p matmulPlan, gy []T, a *onnx.Tensor, ad []T, b *onnx.Tensor, bd []T) error {
	m, n, kk := p.m, p.n, p.k
	if g.wants(k.a) {
		ga := k.sa.zeros(a.Type, a.Shape)
		gad := ga.Data.([]T)
		for i := range p.aOffsets {
			// dA (m x k) += dY (m x n) · Bᵀ (n x k)
			gemm.Multiply(m, kk, n, 1, gemm.NewMatrix(gy[i*m*n:], n, false), gemm.NewMatrix(bd[p.bOffsets[i]:], n, true), 1, gad[p.aOffsets[i]:], kk, k.threads)
		}
		if err := g.add(k.a, ga); err != nil {
			return err
		}
	}
	if g.wants(k.b) {
		gbT := k.sb.zeros(b.Type, b.Shape)
		gbd := gbT.Data.([]T)
		for i := range p.bOffsets {
			// dB (k x n) += Aᵀ (k x m) · dY (m x n)
			gemm.Multiply(kk, n, m, 1, gemm.NewMatrix(ad[p.aOffsets[i]:], kk, true), gemm.NewMatrix(gy[i*m*n:], n, false), 1, gbd[p.bOffsets[i]:], n, k.threads)
		}
		if err := g.add(k.b, gbT); err != nil {
			return err
		}
	}
	return nil
}

// gemmGrad: Y = alpha op(A) op(B) + beta C.
type gemmGrad struct {
	a, b, c, y     int
	alpha, beta    float64
	transA, transB bool
	threads        int
	sa, sb, sc     gradScratch
}

func (gb *gradBuilder) VisitGemm(op *ops.Gemm) error {
	k := &gemmGrad{a: gb.slot(op.In.A), b: gb.slot(op.In.B), c: gb.slot(op.In.C), y: gb.slot(op.Out.Y),
		alpha: float64(op.Alpha), beta: float64(op.Beta), transA: op.TransA != 0, transB: op.TransB != 0, threads: gb.e.threads}
	return gb.set(k.run)
}

func (k *gemmGrad) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil {
		return nil
	}
	a, err := floatTensor(slots[k.a], "input A")
	if err != nil {
		return err
	}
	b, err := floatTensor(slots[k.b], "input B")
	if err != nil {
		return err
	}
	if len(a.Shape) != 2 || len(b.Shape) != 2 || len(gy.Shape) != 2 {
		return fmt.Errorf("Gemm gradient needs 2-D A, B and Y, got %v, %v, %v", a.Shape, b.Shape, gy.Shape)
	}
	switch gyd := gy.Data.(type) {
	case []float32:
		return gemmGradTyped(k, g, slots, gy, gyd, a, a.Data.([]float32), b, b.Data.([]float32))
	case []float64:
		return gemmGradTyped(k, g, slots, gy, gyd, a, a.Data.([]float64), b, b.Data.([]float64))
	}
	return fmt.Errorf("gradient of type %v", gy.Type)
}

func gemmGradTyped[T floatElem](k *gemmGrad, g *gradState, slots []onnx.Value, gy *onnx.Tensor, gyd []T, a *onnx.Tensor, ad []T, b *onnx.Tensor, bd []T) error {
	m, n := gy.Shape[0], gy.Shape[1]
	kk := a.Shape[1]
	if k.transA {
		kk = a.Shape[0]
	}
	alpha := T(k.alpha)
	if g.wants(k.a) {
		ga := g.dest(k.a, &k.sa, a.Type, a.Shape) // beta 0: written whole
		gad := ga.Data.([]T)
		if !k.transA {
			// dA (m x k) = alpha dY · op(B)ᵀ
			gemm.Multiply(m, kk, n, alpha, gemm.NewMatrix(gyd, n, false), gemm.NewMatrix(bd, b.Shape[1], !k.transB), 0, gad, kk, k.threads)
		} else {
			// A is k x m: dA = alpha op(B) · dYᵀ
			gemm.Multiply(kk, m, n, alpha, gemm.NewMatrix(bd, b.Shape[1], k.transB), gemm.NewMatrix(gyd, n, true), 0, gad, m, k.threads)
		}
		if err := g.add(k.a, ga); err != nil {
			return err
		}
	}
	if g.wants(k.b) {
		gbT := g.dest(k.b, &k.sb, b.Type, b.Shape)
		gbd := gbT.Data.([]T)
		if !k.transB {
			// dB (k x n) = alpha op(A)ᵀ · dY
			gemm.Multiply(kk, n, m, alpha, gemm.NewMatrix(ad, a.Shape[1], !k.transA), gemm.NewMatrix(gyd, n, false), 0, gbd, n, k.threads)
		} else {
			// B is n x k: dB = alpha dYᵀ · op(A)
			gemm.Multiply(n, kk, m, alpha, gemm.NewMatrix(gyd, n, true), gemm.NewMatrix(ad, a.Shape[1], k.transA), 0, gbd, kk, k.threads)
		}
		if err := g.add(k.b, gbT); err != nil {
			return err
		}
	}
	if k.c >= 0 && g.wants(k.c) {
		c, err := floatTensor(slots[k.c], "input C")
		if err != nil {
			return err
		}
		gc := k.sc.zeros(c.Type, c.Shape)
		gcd := gc.Data.([]T)
		sumToShape(gcd, c.Shape, gyd, gy.Shape)
		for i := range gcd {
			gcd[i] *= T(k.beta)
		}
		if err := g.add(k.c, gc); err != nil {
			return err
		}
	}
	return nil
}
