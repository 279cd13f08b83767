package autodiff

import (
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

func init() {
	register(addGrad, "Add")
	register(subGrad, "Sub")
	register(mulGrad, "Mul")
	register(divGrad, "Div")
	register(powGrad, "Pow")
}

// Each binary rule forms the gradient at the output's shape, then sums
// it back to each operand's shape. From version 7 the operands broadcast
// like NumPy (both ways); before, only B broadcasts to A, and only with
// broadcast=1, its dims aligned at axis (by default A's trailing dims).

// binaryForm describes how a binary node broadcasts its second operand.
type binaryForm struct {
	legacy  bool    // before version 7: B broadcasts to A by the attributes
	aligned []int64 // B's shape as read against A (legacy), else B's own
	attrs   []*onnx.Attribute
}

// binaryFormOf reads the broadcast of n (inputs a, c; legacy attributes
// broadcast and axis when since < 7).
func (b *builder) binaryFormOf(n *onnx.Node, since int, broadcast int64, axis *int64) binaryForm {
	c := n.Inputs[1]
	f := binaryForm{aligned: b.shapeOf(c)}
	if since >= 7 || broadcast == 0 {
		return f
	}
	f.legacy = true
	f.attrs = []*onnx.Attribute{attrInt("broadcast", 1)}
	as, cs := b.shapeOf(n.Inputs[0]), b.shapeOf(c)
	start := len(as) - len(cs)
	if axis != nil {
		f.attrs = append(f.attrs, attrInt("axis", *axis))
		start = int(*axis)
		if start < 0 {
			start += len(as)
		}
	}
	if start < 0 || start+len(cs) > len(as) {
		b.fail("legacy broadcast of %v to %v at axis %d is out of range", cs, as, start)
		return f
	}
	f.aligned = make([]int64, len(as))
	for i := range f.aligned {
		f.aligned[i] = 1
	}
	copy(f.aligned[start:], cs)
	return f
}

// with emits op(full, small) where small is read as B is: with the legacy
// attributes before version 7.
func (f binaryForm) with(b *builder, op, full, small string) string {
	if f.legacy {
		return b.op(op, []string{full, small}, f.attrs...)
	}
	return b.op(op, []string{full, small})
}

// sumToB sums v, a gradient at the output's shape, to B's shape.
func (f binaryForm) sumToB(b *builder, v, y, c string) string {
	if !f.legacy {
		return b.unbroadcast(b.like(v, y), c)
	}
	return b.elemSumTo(v, b.shapeOf(y), f.aligned, c)
}

// sumToA sums v to A's shape (A is the output's shape in the legacy form).
func (f binaryForm) sumToA(b *builder, v, y, a string) string {
	if f.legacy {
		return v
	}
	return b.unbroadcast(b.like(v, y), a)
}

// arithForm is binaryFormOf for Add, Sub, Mul and Div.
func (b *builder) arithForm(n *onnx.Node) binaryForm {
	switch op := n.Op.(type) {
	case *ops.Add:
		return b.binaryFormOf(n, op.SinceVersion(), op.Broadcast, op.Axis)
	case *ops.Sub:
		return b.binaryFormOf(n, op.SinceVersion(), op.Broadcast, op.Axis)
	case *ops.Mul:
		return b.binaryFormOf(n, op.SinceVersion(), op.Broadcast, op.Axis)
	case *ops.Div:
		return b.binaryFormOf(n, op.SinceVersion(), op.Broadcast, op.Axis)
	}
	return binaryForm{aligned: b.shapeOf(n.Inputs[1])}
}

// addGrad: C = A + B; dA = g, dB = g, each summed to its operand's shape.
func addGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	f := b.arithForm(n)
	a, c, y, g := n.Inputs[0], n.Inputs[1], n.Outputs[0], dy[0]
	out := make([]string, 2)
	if need[0] {
		out[0] = f.sumToA(b, g, y, a)
	}
	if need[1] {
		out[1] = f.sumToB(b, g, y, c)
	}
	return out
}

// subGrad: C = A - B; dA = g, dB = -g summed (negated after the sum, on
// the smaller tensor).
func subGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	f := b.arithForm(n)
	a, c, y, g := n.Inputs[0], n.Inputs[1], n.Outputs[0], dy[0]
	out := make([]string, 2)
	if need[0] {
		out[0] = f.sumToA(b, g, y, a)
	}
	if need[1] {
		out[1] = b.neg(f.sumToB(b, g, y, c))
	}
	return out
}

// mulGrad: C = A·B; dA = g·B, dB = g·A, each summed to its operand's shape.
func mulGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	f := b.arithForm(n)
	a, c, y, g := n.Inputs[0], n.Inputs[1], n.Outputs[0], dy[0]
	out := make([]string, 2)
	if need[0] {
		out[0] = f.sumToA(b, f.with(b, "Mul", g, c), y, a)
	}
	if need[1] {
		// In the legacy form A has the output's shape: no broadcast.
		out[1] = f.sumToB(b, b.mul(g, a), y, c)
	}
	return out
}

// divGrad: C = A/B; dA = g/B, dB = -g·A/B² = -(g·C)/B, summed.
func divGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	f := b.arithForm(n)
	a, c, y, g := n.Inputs[0], n.Inputs[1], n.Outputs[0], dy[0]
	out := make([]string, 2)
	if need[0] {
		out[0] = f.sumToA(b, f.with(b, "Div", g, c), y, a)
	}
	if need[1] {
		out[1] = b.neg(f.sumToB(b, f.with(b, "Div", b.mul(g, y), c), y, c))
	}
	return out
}

// powGrad: Z = A^E; dA = g·E·A^(E-1), 0 where E = 0 (the exponent is
// taken as 0 there, so that 0^-1 gives no infinity), and dE = g·Z·ln A,
// 0 where A = 0 (ln taken as 0 there), each summed to its operand's shape.
// From version 12 E may have another type than A: the gradient is formed
// in A's and cast back; an integer E gets none. Version 1 broadcasts E by
// the legacy attributes.
func powGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.Pow)
	f := b.binaryFormOf(n, op.SinceVersion(), op.Broadcast, op.Axis)
	a, e, y, g := n.Inputs[0], n.Inputs[1], n.Outputs[0], dy[0]
	dt, et := b.typeOf(a), b.typeOf(e)
	out := make([]string, 2)
	if need[0] {
		ea := e
		if et != dt {
			ea = b.cast(e, dt)
		}
		// E - 1 + [E = 0]: E - 1, or 0 where E is 0 (then A^0 = 1 and the
		// factor E makes dA 0).
		zero := b.cast(b.elemEqual(ea, b.scalar(0, dt)), dt)
		em1 := b.add(b.elemS("Sub", ea, 1, dt), zero)
		d := b.mul(g, f.with(b, "Mul", f.with(b, "Pow", a, em1), ea))
		out[0] = f.sumToA(b, d, y, a)
	}
	if need[1] && et.IsFloat() {
		// ln(A + [A = 0]): ln A, or ln 1 = 0 where A is 0.
		safe := b.add(a, b.cast(b.elemEqual(a, b.scalar(0, dt)), dt))
		d := b.mul(g, b.mul(y, b.op("Log", []string{safe})))
		out[1] = f.sumToB(b, d, y, e)
		if et != dt {
			out[1] = b.cast(out[1], et)
		}
	}
	return out
}
