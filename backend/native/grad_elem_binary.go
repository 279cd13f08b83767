package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rules of the broadcasting elementwise operators of more than
// one input: Pow, Max/Min/Sum/Mean, Where, PRelu, SwiGLU and Mod. Each
// computes an operand's partial in the output's shape, walking the operands
// with their broadcast strides, and reduces it to the operand's shape with
// sumToShape.

// gelemPlan walks an output shape row by row together with two operands
// broadcast to it (newStridedWalk's merged dimensions). A kernel keeps its
// plans: one is rebuilt only when the shapes change, and it is iterated
// without closures, so a walk allocates nothing once the shapes repeat.
//
//	for ok := p.start(out, aShape, bShape); ok; ok = p.next() {
//		// row p.row: out[p.o : p.o+p.n], a[p.ia + i*p.sa], b[p.ib + i*p.sb]
//	}
type gelemPlan struct {
	out, a, b []int // the shapes planned for
	planned   bool
	w         stridedWalk
	n, sa, sb int // row length and the operands' steps within a row
	rows      int
	counter   []int
	row, o    int // the current row and the output offset of its start
	ia, ib    int // the operands' offsets at the start of the row
}

// start plans (or reuses the plan of) a walk over out and moves to its
// first row; false when out has no elements.
func (p *gelemPlan) start(out, a, b []int) bool {
	if !p.planned || !sameShape(p.out, out) || !sameShape(p.a, a) || !sameShape(p.b, b) {
		p.out, p.a, p.b = append(p.out[:0], out...), append(p.a[:0], a...), append(p.b[:0], b...)
		p.w = newStridedWalk(out, broadcastStrides(a, out), broadcastStrides(b, out))
		p.n, p.sa, p.sb, p.rows = p.w.rowLen(), p.w.rowStride(0), p.w.rowStride(1), p.w.rows()
		p.counter = make([]int, p.w.rank-1)
		p.planned = true
	}
	clear(p.counter)
	p.row, p.o, p.ia, p.ib = 0, 0, 0, 0
	return p.rows > 0 && p.n > 0
}

// next moves to the next row; false after the last.
func (p *gelemPlan) next() bool {
	p.row++
	if p.row >= p.rows {
		return false
	}
	p.o = p.row * p.n
	w := &p.w
	for d := w.rank - 2; d >= 0; d-- {
		p.counter[d]++
		sa, sb := w.stride(0, d), w.stride(1, d)
		p.ia += sa
		p.ib += sb
		size := w.dim(d)
		if p.counter[d] < size {
			break
		}
		p.ia -= sa * size
		p.ib -= sb * size
		p.counter[d] = 0
	}
	return true
}

// ---- Pow ----

// powGrad: Z = X^Y; dX = dZ * Y * X^(Y-1) (0 where Y == 0) and
// dY = dZ * Z * ln(X) (0 where X == 0, NaN where X < 0, as the real
// logarithm is). Y may have another type than X; an integer Y gets no
// gradient. Before version 7 Y is broadcast with the legacy axis rule.
type powGrad struct {
	x, y, z   int
	legacy    bool
	axis      *int64
	broadcast int64
	exp       []float64 // Y as float64
	dyFull    []float64 // dY in the output's shape
	dyAcc     []float64 // dY reduced to Y's shape
	plan      gelemPlan
	tmp       gradScratch
	sx, sy    gradScratch
}

func (gb *gradBuilder) VisitPow(op *ops.Pow) error {
	k := &powGrad{x: gb.slot(op.In.X), y: gb.slot(op.In.Y), z: gb.slot(op.Out.Z),
		legacy: op.SinceVersion() < 7, axis: op.Axis, broadcast: op.Broadcast}
	return gb.set(k.run)
}

func (k *powGrad) run(slots []onnx.Value, g *gradState) error {
	gz := g.of(k.z)
	if gz == nil {
		return nil
	}
	x, ok, err := gelemFloat(slots[k.x], "input X")
	if err != nil || !ok {
		return err
	}
	y, ok := slots[k.y].(*onnx.Tensor)
	if !ok || y == nil {
		return fmt.Errorf("input Y is %s, not a tensor", onnx.DescribeValue(slots[k.y]))
	}
	z, _, err := gelemFloat(slots[k.z], "output Z")
	if err != nil {
		return err
	}
	if z == nil || gz.Type != x.Type || z.Len() != gz.Len() {
		return fmt.Errorf("output Z and its gradient do not match input X of type %v", x.Type)
	}
	yShape := y.Shape
	if k.legacy {
		yShape = legacyOperandShape(y.Shape, len(x.Shape), k.axis, k.broadcast)
	}
	if cap(k.exp) < y.Len() {
		k.exp = make([]float64, y.Len())
	}
	e := k.exp[:y.Len()]
	switch yd := y.Data.(type) {
	case []float64:
		copy(e, yd)
	case []float32:
		for i, v := range yd {
			e[i] = float64(v)
		}
	default:
		if !castNumeric(1, e, y.Data) {
			return network.Unsupportedf("Pow gradients with an exponent of type %v", y.Type)
		}
	}
	switch d := gz.Data.(type) {
	case []float32:
		return powGradTyped(k, g, gz.Shape, d, x, x.Data.([]float32), y, yShape, e, z.Data.([]float32))
	case []float64:
		return powGradTyped(k, g, gz.Shape, d, x, x.Data.([]float64), y, yShape, e, z.Data.([]float64))
	}
	return fmt.Errorf("gradient of type %v", gz.Type)
}

func powGradTyped[T floatElem](k *powGrad, g *gradState, out []int, gz []T, x *onnx.Tensor, xd []T, y *onnx.Tensor, yShape []int, e []float64, z []T) error {
	if g.wants(k.x) {
		part := k.tmp.buf.tensor(x.Type, out).Data.([]T)
		p := &k.plan
		for ok := p.start(out, x.Shape, yShape); ok; ok = p.next() {
			o, ix, ie := p.o, p.ia, p.ib
			for i := range p.n {
				ev := e[ie+i*p.sb]
				if ev == 0 {
					part[o+i] = 0
					continue
				}
				part[o+i] = T(float64(gz[o+i]) * ev * math.Pow(float64(xd[ix+i*p.sa]), ev-1))
			}
		}
		dx := k.sx.zeros(x.Type, x.Shape)
		sumToShape(dx.Data.([]T), x.Shape, part, out)
		if err := g.add(k.x, dx); err != nil {
			return err
		}
	}
	if !g.wants(k.y) || (y.Type != onnx.Float && y.Type != onnx.Double) {
		return nil // an integer exponent carries no gradient
	}
	size := onnx.NumElements(out)
	if cap(k.dyFull) < size {
		k.dyFull = make([]float64, size)
	}
	if cap(k.dyAcc) < y.Len() {
		k.dyAcc = make([]float64, y.Len())
	}
	full, acc := k.dyFull[:size], k.dyAcc[:y.Len()]
	clear(acc)
	p := &k.plan
	for ok := p.start(out, x.Shape, yShape); ok; ok = p.next() {
		o, ix := p.o, p.ia
		for i := range p.n {
			xv := float64(xd[ix+i*p.sa])
			if xv == 0 {
				full[o+i] = 0
				continue
			}
			full[o+i] = float64(gz[o+i]) * float64(z[o+i]) * math.Log(xv)
		}
	}
	sumToShape(acc, yShape, full, out)
	dy := k.sy.buf.tensor(y.Type, y.Shape)
	switch d := dy.Data.(type) {
	case []float32:
		for i, v := range acc {
			d[i] = float32(v)
		}
	case []float64:
		copy(d, acc)
	}
	return g.add(k.y, dy)
}

// ---- Max, Min, Sum, Mean ----

// variadicGrad is the rule of the variadic broadcasting operators. Sum
// passes the output's gradient to every input (reduced to its shape), Mean
// the same divided by the input count. Max and Min pass it to the inputs
// equal to the output at each position; on a tie the gradient is split
// evenly among the tied inputs (a NaN output passes nothing).
type variadicGrad struct {
	op      elemOp
	ins     []int
	y       int
	count   gradScratch // Max/Min: tied inputs per output element
	tmp     gradScratch
	scratch []gradScratch
	plans   []gelemPlan
}

func (gb *gradBuilder) variadicGradRule(op elemOp, names []string, out string) error {
	k := &variadicGrad{op: op, y: gb.slot(out), scratch: make([]gradScratch, len(names)), plans: make([]gelemPlan, len(names))}
	for _, n := range names {
		k.ins = append(k.ins, gb.slot(n))
	}
	return gb.set(k.run)
}

func (gb *gradBuilder) VisitMax(op *ops.Max) error {
	return gb.variadicGradRule(elemMax, op.In.Data0, op.Out.Max)
}
func (gb *gradBuilder) VisitMin(op *ops.Min) error {
	return gb.variadicGradRule(elemMin, op.In.Data0, op.Out.Min)
}
func (gb *gradBuilder) VisitSum(op *ops.Sum) error {
	return gb.variadicGradRule(elemSum, op.In.Data0, op.Out.Sum)
}
func (gb *gradBuilder) VisitMean(op *ops.Mean) error {
	return gb.variadicGradRule(elemMean, op.In.Data0, op.Out.Mean)
}

func (k *variadicGrad) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil {
		return nil
	}
	switch d := gy.Data.(type) {
	case []float32:
		return variadicGradTyped(k, slots, g, gy, d)
	case []float64:
		return variadicGradTyped(k, slots, g, gy, d)
	}
	return fmt.Errorf("gradient of type %v", gy.Type)
}

func variadicGradTyped[T floatElem](k *variadicGrad, slots []onnx.Value, g *gradState, gy *onnx.Tensor, gyd []T) error {
	out := gy.Shape
	var yd, cnt []T
	if k.op == elemMax || k.op == elemMin {
		y, _, err := gelemFloat(slots[k.y], "output")
		if err != nil {
			return err
		}
		if y == nil || y.Type != gy.Type || y.Len() != gy.Len() {
			return fmt.Errorf("output %s does not match its gradient", onnx.DescribeValue(slots[k.y]))
		}
		yd = y.Data.([]T)
		cnt = k.count.zeros(gy.Type, out).Data.([]T)
		for i, s := range k.ins {
			x, err := variadicOperand(slots, s, i, gy.Type)
			if err != nil {
				return err
			}
			xd := x.Data.([]T)
			p := &k.plans[i]
			for ok := p.start(out, x.Shape, x.Shape); ok; ok = p.next() {
				o, ix := p.o, p.ia
				for j := range p.n {
					if xd[ix+j*p.sa] == yd[o+j] {
						cnt[o+j]++
					}
				}
			}
		}
	}
	scale := T(1)
	if k.op == elemMean {
		scale = 1 / T(len(k.ins))
	}
	for i, s := range k.ins {
		if !g.wants(s) {
			continue
		}
		x, err := variadicOperand(slots, s, i, gy.Type)
		if err != nil {
			return err
		}
		src := gyd
		if cnt != nil {
			xd := x.Data.([]T)
			part := k.tmp.buf.tensor(gy.Type, out).Data.([]T)
			p := &k.plans[i]
			for ok := p.start(out, x.Shape, x.Shape); ok; ok = p.next() {
				o, ix := p.o, p.ia
				for j := range p.n {
					if xd[ix+j*p.sa] == yd[o+j] {
						part[o+j] = gyd[o+j] / cnt[o+j]
					} else {
						part[o+j] = 0
					}
				}
			}
			src = part
		}
		dx := k.scratch[i].zeros(gy.Type, x.Shape)
		dd := dx.Data.([]T)
		sumToShape(dd, x.Shape, src, out)
		if scale != 1 {
			for j := range dd {
				dd[j] *= scale
			}
		}
		if err := g.add(s, dx); err != nil {
			return err
		}
	}
	return nil
}

// variadicOperand is input i of a variadic node, of the gradient's type.
func variadicOperand(slots []onnx.Value, s, i int, typ onnx.DataType) (*onnx.Tensor, error) {
	x, ok := slots[s].(*onnx.Tensor)
	if !ok || x == nil || x.Type != typ {
		return nil, fmt.Errorf("input %d is %s, not a tensor(%v)", i, onnx.DescribeValue(slots[s]), typ)
	}
	return x, nil
}

// ---- Where ----

// whereGrad: the output's gradient goes to X where the condition holds
// and to Y elsewhere, each reduced to its operand's shape. The condition
// is not differentiable.
type whereGrad struct {
	c, x, y, out int
	plan         gelemPlan
	tmp          gradScratch
	sx, sy       gradScratch
}

func (gb *gradBuilder) VisitWhere(op *ops.Where) error {
	k := &whereGrad{c: gb.slot(op.In.Condition), x: gb.slot(op.In.X), y: gb.slot(op.In.Y), out: gb.slot(op.Out.Output)}
	return gb.set(k.run)
}

func (k *whereGrad) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.out)
	if gy == nil {
		return nil
	}
	c, ok := slots[k.c].(*onnx.Tensor)
	if !ok || c == nil {
		return fmt.Errorf("condition is %s, not a tensor", onnx.DescribeValue(slots[k.c]))
	}
	cd, ok := c.Data.([]bool)
	if !ok {
		return fmt.Errorf("condition is tensor(%v), not bool", c.Type)
	}
	switch d := gy.Data.(type) {
	case []float32:
		return whereGradTyped(k, slots, g, gy, d, c.Shape, cd)
	case []float64:
		return whereGradTyped(k, slots, g, gy, d, c.Shape, cd)
	}
	return fmt.Errorf("gradient of type %v", gy.Type)
}

func whereGradTyped[T floatElem](k *whereGrad, slots []onnx.Value, g *gradState, gy *onnx.Tensor, gyd []T, cShape []int, cd []bool) error {
	out := gy.Shape
	for side := range 2 {
		slot, when, scratch := k.x, true, &k.sx
		if side == 1 {
			slot, when, scratch = k.y, false, &k.sy
		}
		if !g.wants(slot) {
			continue
		}
		v, ok := slots[slot].(*onnx.Tensor)
		if !ok || v == nil || v.Type != gy.Type {
			return fmt.Errorf("operand is %s, not a tensor(%v)", onnx.DescribeValue(slots[slot]), gy.Type)
		}
		part := k.tmp.buf.tensor(gy.Type, out).Data.([]T)
		p := &k.plan
		for ok := p.start(out, cShape, cShape); ok; ok = p.next() {
			o, ic := p.o, p.ia
			for i := range p.n {
				if cd[ic+i*p.sa] == when {
					part[o+i] = gyd[o+i]
				} else {
					part[o+i] = 0
				}
			}
		}
		d := scratch.zeros(gy.Type, v.Shape)
		sumToShape(d.Data.([]T), v.Shape, part, out)
		if err := g.add(slot, d); err != nil {
			return err
		}
	}
	return nil
}

// ---- PRelu ----

// preluGrad: dX = dY where x >= 0 and dY * slope where x < 0; dSlope =
// dY * x where x < 0, reduced to the slope's shape (numpy broadcasting, or
// the old per-channel form: a 1-D slope of the channel count aligned at
// axis 1, as the forward kernel reads it).
type preluGrad struct {
	x, s, y int
	// the slope's read shape for the last input shapes (preluSlopeShape)
	lastX, lastS, slopeShape []int
	plan                     gelemPlan
	tmp                      gradScratch
	sx, ss                   gradScratch
}

func (gb *gradBuilder) VisitPRelu(op *ops.PRelu) error {
	k := &preluGrad{x: gb.slot(op.In.X), s: gb.slot(op.In.Slope), y: gb.slot(op.Out.Y)}
	return gb.set(k.run)
}

func (k *preluGrad) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil {
		return nil
	}
	x, ok, err := gelemFloat(slots[k.x], "input X")
	if err != nil || !ok {
		return err
	}
	s, ok, err := gelemFloat(slots[k.s], "slope")
	if err != nil || !ok {
		return err
	}
	if s.Type != x.Type || gy.Type != x.Type || !sameShape(gy.Shape, x.Shape) {
		return fmt.Errorf("PRelu gradient tensor(%v)%v for X tensor(%v)%v and slope tensor(%v)", gy.Type, gy.Shape, x.Type, x.Shape, s.Type)
	}
	if k.slopeShape == nil || !sameShape(k.lastX, x.Shape) || !sameShape(k.lastS, s.Shape) {
		ss, err := preluSlopeShape(x.Shape, s.Shape)
		if err != nil {
			return err
		}
		k.lastX, k.lastS, k.slopeShape = append(k.lastX[:0], x.Shape...), append(k.lastS[:0], s.Shape...), ss
	}
	ss := k.slopeShape
	switch d := gy.Data.(type) {
	case []float32:
		return preluGradTyped(k, g, d, x, x.Data.([]float32), s, ss, s.Data.([]float32))
	case []float64:
		return preluGradTyped(k, g, d, x, x.Data.([]float64), s, ss, s.Data.([]float64))
	}
	return fmt.Errorf("gradient of type %v", gy.Type)
}

func preluGradTyped[T floatElem](k *preluGrad, g *gradState, gyd []T, x *onnx.Tensor, xd []T, s *onnx.Tensor, sShape []int, sd []T) error {
	out := x.Shape
	if g.wants(k.x) {
		dx, direct := gelemOut(g, k.x, &k.sx, x.Type, out)
		d := dx.Data.([]T)
		p := &k.plan
		for ok := p.start(out, sShape, sShape); ok; ok = p.next() {
			o, is := p.o, p.ia
			for i := range p.n {
				if xd[o+i] < 0 {
					d[o+i] = gyd[o+i] * sd[is+i*p.sa]
				} else {
					d[o+i] = gyd[o+i]
				}
			}
		}
		if !direct {
			if err := g.add(k.x, dx); err != nil {
				return err
			}
		}
	}
	if g.wants(k.s) {
		part := k.tmp.buf.tensor(x.Type, out).Data.([]T)
		for i, v := range xd {
			if v < 0 {
				part[i] = gyd[i] * v
			} else {
				part[i] = 0
			}
		}
		ds := k.ss.zeros(s.Type, sShape)
		sumToShape(ds.Data.([]T), sShape, part, out)
		ds.Shape = append(ds.Shape[:0], s.Shape...) // same elements, the slope's own shape
		if err := g.add(k.s, ds); err != nil {
			return err
		}
	}
	return nil
}

// ---- SwiGLU ----

// swigluGrad: Y = A * sigmoid(alpha A) * B (A and B of one shape);
// dA = dY * B * (s + alpha A s (1 - s)) and dB = dY * A * s, s =
// sigmoid(alpha A).
type swigluGrad struct {
	a, b, y int
	alpha   float64
	threads int
	sa, sb  gradScratch
}

func (gb *gradBuilder) VisitSwiGLU(op *ops.SwiGLU) error {
	k := &swigluGrad{a: gb.slot(op.In.A), b: gb.slot(op.In.B), y: gb.slot(op.Out.Y), alpha: float64(op.Alpha), threads: gb.e.threads}
	return gb.set(k.run)
}

func (k *swigluGrad) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil {
		return nil
	}
	a, ok, err := gelemFloat(slots[k.a], "input A")
	if err != nil || !ok {
		return err
	}
	b, ok, err := gelemFloat(slots[k.b], "input B")
	if err != nil || !ok {
		return err
	}
	if a.Type != b.Type || gy.Type != a.Type || a.Len() != b.Len() || gy.Len() != a.Len() {
		return fmt.Errorf("SwiGLU gradient tensor(%v)%v for A tensor(%v)%v and B tensor(%v)%v", gy.Type, gy.Shape, a.Type, a.Shape, b.Type, b.Shape)
	}
	switch d := gy.Data.(type) {
	case []float32:
		return swigluGradTyped(k, g, d, a, a.Data.([]float32), b, b.Data.([]float32))
	case []float64:
		return swigluGradTyped(k, g, d, a, a.Data.([]float64), b, b.Data.([]float64))
	}
	return fmt.Errorf("gradient of type %v", gy.Type)
}

func swigluGradTyped[T floatElem](k *swigluGrad, g *gradState, gy []T, a *onnx.Tensor, ad []T, b *onnx.Tensor, bd []T) error {
	alpha := k.alpha
	for _, which := range [2]int{0, 1} {
		slot, scratch, t := k.a, &k.sa, a
		if which == 1 {
			slot, scratch, t = k.b, &k.sb, b
		}
		if !g.wants(slot) {
			continue
		}
		dt, direct := gelemOut(g, slot, scratch, t.Type, t.Shape)
		d := dt.Data.([]T)
		if len(d) < 2*elemGrain { // par.For would not split it
			swigluGradRange(which, alpha, d, gy, ad, bd, 0, len(d))
		} else {
			par.For(len(d), k.threads, elemGrain, func(lo, hi int) { swigluGradRange(which, alpha, d, gy, ad, bd, lo, hi) })
		}
		if !direct {
			if err := g.add(slot, dt); err != nil {
				return err
			}
		}
	}
	return nil
}

// swigluGradRange writes elements [lo, hi) of dA (which 0) or dB (1).
func swigluGradRange[T floatElem](which int, alpha float64, d, gy, ad, bd []T, lo, hi int) {
	for i := lo; i < hi; i++ {
		u := float64(ad[i])
		s := sigmoid(alpha * u)
		if which == 0 {
			d[i] = T(float64(gy[i]) * float64(bd[i]) * (s + alpha*u*s*(1-s)))
		} else {
			d[i] = T(float64(gy[i]) * u * s)
		}
	}
}

// ---- Mod ----

// modGrad is the rule of Mod on floats: C = A - q B with q = trunc(A/B)
// (fmod=1) or floor(A/B) (fmod=0, floor mod since version 28), so dA = dC
// and dB = -dC q (away from the jumps), each reduced to its operand's
// shape. Integer Mod carries no gradient.
type modGrad struct {
	a, b, c int
	floor   bool // q = floor(A/B), as the forward's floorMod
	plan    gelemPlan
	tmp     gradScratch
	sa, sb  gradScratch
}

func (gb *gradBuilder) VisitMod(op *ops.Mod) error {
	// On floats fmod=0 exists only as version 28's floor mod (earlier
	// versions reject it in the forward), so Fmod alone picks q.
	k := &modGrad{a: gb.slot(op.In.A), b: gb.slot(op.In.B), c: gb.slot(op.Out.C), floor: op.Fmod == 0}
	return gb.set(k.run)
}

func (k *modGrad) run(slots []onnx.Value, g *gradState) error {
	gc := g.of(k.c)
	if gc == nil {
		return nil
	}
	a, ok, err := gelemFloat(slots[k.a], "input A")
	if err != nil || !ok {
		return err
	}
	b, ok, err := gelemFloat(slots[k.b], "input B")
	if err != nil || !ok {
		return err
	}
	if a.Type != b.Type || gc.Type != a.Type {
		return fmt.Errorf("Mod gradient tensor(%v) for A tensor(%v) and B tensor(%v)", gc.Type, a.Type, b.Type)
	}
	switch d := gc.Data.(type) {
	case []float32:
		return modGradTyped(k, g, gc.Shape, d, a, a.Data.([]float32), b, b.Data.([]float32))
	case []float64:
		return modGradTyped(k, g, gc.Shape, d, a, a.Data.([]float64), b, b.Data.([]float64))
	}
	return fmt.Errorf("gradient of type %v", gc.Type)
}

func modGradTyped[T floatElem](k *modGrad, g *gradState, out []int, gc []T, a *onnx.Tensor, ad []T, b *onnx.Tensor, bd []T) error {
	if g.wants(k.a) {
		da := k.sa.zeros(a.Type, a.Shape)
		sumToShape(da.Data.([]T), a.Shape, gc, out)
		if err := g.add(k.a, da); err != nil {
			return err
		}
	}
	if g.wants(k.b) {
		part := k.tmp.buf.tensor(b.Type, out).Data.([]T)
		p := &k.plan
		for ok := p.start(out, a.Shape, b.Shape); ok; ok = p.next() {
			o, ia, ib := p.o, p.ia, p.ib
			for i := range p.n {
				q := float64(ad[ia+i*p.sa]) / float64(bd[ib+i*p.sb])
				if k.floor {
					q = math.Floor(q)
				} else {
					q = math.Trunc(q)
				}
				part[o+i] = T(-float64(gc[o+i]) * q)
			}
		}
		db := k.sb.zeros(b.Type, b.Shape)
		sumToShape(db.Data.([]T), b.Shape, part, out)
		if err := g.add(k.b, db); err != nil {
			return err
		}
	}
	return nil
}
