package gorgonia

import (
	"fmt"
	"math"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// scalarConst is a Gorgonia scalar constant of the element type of an ONNX
// float type.
func scalarConst(t onnx.DataType, x float64) *G.Node {
	if t == onnx.Double {
		return G.NewConstant(x)
	}
	return G.NewConstant(float32(x))
}

// unaryFloat maps a float-only elementwise operator: y = f(x).
func (b *builder) unaryFloat(x, y string, f func(x *G.Node, t onnx.DataType) (*G.Node, error)) error {
	v, xn, err := b.getFloat(x)
	if err != nil {
		return err
	}
	out, err := f(xn, v.typ)
	if err != nil {
		return err
	}
	return b.set(y, out, v.shape, v.typ)
}

// unaryAny is unaryFloat for operators Gorgonia also computes on int32
// and int64.
func (b *builder) unaryAny(x, y string, f func(x *G.Node) (*G.Node, error)) error {
	v, xn, err := b.getNode(x)
	if err != nil {
		return err
	}
	if v.typ == onnx.Bool {
		return network.Unsupportedf("input %q of type bool", x)
	}
	out, err := f(xn)
	if err != nil {
		return err
	}
	return b.set(y, out, v.shape, v.typ)
}

func wrap1(f func(*G.Node) (*G.Node, error)) func(*G.Node, onnx.DataType) (*G.Node, error) {
	return func(x *G.Node, _ onnx.DataType) (*G.Node, error) { return f(x) }
}

// scale returns x·k (k a Go constant).
func scale(x *G.Node, t onnx.DataType, k float64) (*G.Node, error) {
	return G.HadamardProd(x, scalarConst(t, k))
}

// shift returns x + k.
func shift(x *G.Node, t onnx.DataType, k float64) (*G.Node, error) {
	return G.Add(x, scalarConst(t, k))
}

// negRelu is min(x, 0) = x − relu(x). (Not −relu(−x): with Gorgonia's
// relu'(0) = 1 a sum relu(x) + f(−relu(−x)) would count the slope at 0
// twice.)
func negRelu(x *G.Node) (*G.Node, error) {
	r, err := G.Rectify(x)
	if err != nil {
		return nil, err
	}
	return G.Sub(x, r)
}

// clamp is min(max(x, lo), hi) for lo ≤ hi, composed as
// lo + relu(x − lo) − relu(x − hi), whose gradient is 1 inside the range
// and 0 outside, as Clip's.
func clamp(x *G.Node, t onnx.DataType, lo, hi float64) (*G.Node, error) {
	a, err := shift(x, t, -lo)
	if err != nil {
		return nil, err
	}
	if a, err = G.Rectify(a); err != nil {
		return nil, err
	}
	if math.IsInf(hi, 1) {
		return shift(a, t, lo)
	}
	c, err := shift(x, t, -hi)
	if err != nil {
		return nil, err
	}
	if c, err = G.Rectify(c); err != nil {
		return nil, err
	}
	d, err := G.Sub(a, c)
	if err != nil {
		return nil, err
	}
	return shift(d, t, lo)
}

func (b *builder) VisitAbs(op *ops.Abs) error { return b.unaryAny(op.In.X, op.Out.Y, G.Abs) }
func (b *builder) VisitNeg(op *ops.Neg) error { return b.unaryAny(op.In.X, op.Out.Y, G.Neg) }
func (b *builder) VisitExp(op *ops.Exp) error {
	return b.unaryFloat(op.In.Input, op.Out.Output, wrap1(G.Exp))
}
func (b *builder) VisitLog(op *ops.Log) error {
	return b.unaryFloat(op.In.Input, op.Out.Output, wrap1(G.Log))
}
func (b *builder) VisitSqrt(op *ops.Sqrt) error {
	return b.unaryFloat(op.In.X, op.Out.Y, wrap1(G.Sqrt))
}
func (b *builder) VisitTanh(op *ops.Tanh) error {
	return b.unaryFloat(op.In.Input, op.Out.Output, wrap1(G.Tanh))
}
func (b *builder) VisitSigmoid(op *ops.Sigmoid) error {
	return b.unaryFloat(op.In.X, op.Out.Y, wrap1(G.Sigmoid))
}
func (b *builder) VisitRelu(op *ops.Relu) error {
	return b.unaryFloat(op.In.X, op.Out.Y, wrap1(G.Rectify))
}
func (b *builder) VisitReciprocal(op *ops.Reciprocal) error {
	return b.unaryFloat(op.In.X, op.Out.Y, wrap1(G.Inverse))
}
func (b *builder) VisitSin(op *ops.Sin) error {
	return b.unaryFloat(op.In.Input, op.Out.Output, wrap1(G.Sin))
}
func (b *builder) VisitCos(op *ops.Cos) error {
	return b.unaryFloat(op.In.Input, op.Out.Output, wrap1(G.Cos))
}
func (b *builder) VisitCeil(op *ops.Ceil) error {
	return b.unaryFloat(op.In.X, op.Out.Y, wrap1(G.Ceil))
}
func (b *builder) VisitFloor(op *ops.Floor) error {
	return b.unaryFloat(op.In.X, op.Out.Y, wrap1(G.Floor))
}
func (b *builder) VisitSign(op *ops.Sign) error {
	return b.unaryFloat(op.In.Input, op.Out.Output, wrap1(G.Sign))
}

// VisitTan composes sin/cos.
func (b *builder) VisitTan(op *ops.Tan) error {
	return b.unaryFloat(op.In.Input, op.Out.Output, func(x *G.Node, _ onnx.DataType) (*G.Node, error) {
		s, err := G.Sin(x)
		if err != nil {
			return nil, err
		}
		c, err := G.Cos(x)
		if err != nil {
			return nil, err
		}
		return G.HadamardDiv(s, c)
	})
}

// expPair returns e^x and e^−x.
func expPair(x *G.Node) (*G.Node, *G.Node, error) {
	ep, err := G.Exp(x)
	if err != nil {
		return nil, nil, err
	}
	nx, err := G.Neg(x)
	if err != nil {
		return nil, nil, err
	}
	en, err := G.Exp(nx)
	return ep, en, err
}

// VisitSinh composes (e^x − e^−x)/2.
func (b *builder) VisitSinh(op *ops.Sinh) error {
	return b.unaryFloat(op.In.Input, op.Out.Output, func(x *G.Node, t onnx.DataType) (*G.Node, error) {
		ep, en, err := expPair(x)
		if err != nil {
			return nil, err
		}
		d, err := G.Sub(ep, en)
		if err != nil {
			return nil, err
		}
		return scale(d, t, 0.5)
	})
}

// VisitCosh composes (e^x + e^−x)/2.
func (b *builder) VisitCosh(op *ops.Cosh) error {
	return b.unaryFloat(op.In.Input, op.Out.Output, func(x *G.Node, t onnx.DataType) (*G.Node, error) {
		ep, en, err := expPair(x)
		if err != nil {
			return nil, err
		}
		d, err := G.Add(ep, en)
		if err != nil {
			return nil, err
		}
		return scale(d, t, 0.5)
	})
}

// VisitSoftplus maps onto Gorgonia's Softplus, log1p(e^x) with cut-offs
// (x for x > 16, 0 below −708 in double) far inside ONNX's tolerance.
func (b *builder) VisitSoftplus(op *ops.Softplus) error {
	return b.unaryFloat(op.In.X, op.Out.Y, wrap1(G.Softplus))
}

// VisitSoftsign composes x / (1 + |x|).
func (b *builder) VisitSoftsign(op *ops.Softsign) error {
	return b.unaryFloat(op.In.Input, op.Out.Output, func(x *G.Node, t onnx.DataType) (*G.Node, error) {
		a, err := G.Abs(x)
		if err != nil {
			return nil, err
		}
		if a, err = shift(a, t, 1); err != nil {
			return nil, err
		}
		return G.HadamardDiv(x, a)
	})
}

// VisitLeakyRelu composes relu(x) + α·min(x, 0): Gorgonia's own
// LeakyRelu has no symbolic derivative.
func (b *builder) VisitLeakyRelu(op *ops.LeakyRelu) error {
	alpha := float64(op.Alpha)
	return b.unaryFloat(op.In.X, op.Out.Y, func(x *G.Node, t onnx.DataType) (*G.Node, error) {
		r, err := G.Rectify(x)
		if err != nil {
			return nil, err
		}
		m, err := negRelu(x)
		if err != nil {
			return nil, err
		}
		if m, err = scale(m, t, alpha); err != nil {
			return nil, err
		}
		return G.Add(r, m)
	})
}

// elu is relu(x) + α·(e^min(x,0) − 1).
func elu(x *G.Node, t onnx.DataType, alpha float64) (*G.Node, error) {
	r, err := G.Rectify(x)
	if err != nil {
		return nil, err
	}
	m, err := negRelu(x)
	if err != nil {
		return nil, err
	}
	if m, err = G.Expm1(m); err != nil {
		return nil, err
	}
	if m, err = scale(m, t, alpha); err != nil {
		return nil, err
	}
	return G.Add(r, m)
}

func (b *builder) VisitElu(op *ops.Elu) error {
	return b.unaryFloat(op.In.X, op.Out.Y, func(x *G.Node, t onnx.DataType) (*G.Node, error) {
		return elu(x, t, float64(op.Alpha))
	})
}

// VisitSelu is γ·(relu(x) + α·(e^min(x,0) − 1)).
func (b *builder) VisitSelu(op *ops.Selu) error {
	return b.unaryFloat(op.In.X, op.Out.Y, func(x *G.Node, t onnx.DataType) (*G.Node, error) {
		e, err := elu(x, t, float64(op.Alpha))
		if err != nil {
			return nil, err
		}
		return scale(e, t, float64(op.Gamma))
	})
}

// VisitHardSigmoid is clamp(α·x + β, 0, 1).
func (b *builder) VisitHardSigmoid(op *ops.HardSigmoid) error {
	return b.unaryFloat(op.In.X, op.Out.Y, func(x *G.Node, t onnx.DataType) (*G.Node, error) {
		a, err := scale(x, t, float64(op.Alpha))
		if err != nil {
			return nil, err
		}
		if a, err = shift(a, t, float64(op.Beta)); err != nil {
			return nil, err
		}
		return clamp(a, t, 0, 1)
	})
}

// VisitClip clamps to constant bounds (attributes before version 11,
// constant inputs after).
func (b *builder) VisitClip(op *ops.Clip) error {
	lo, hi := math.Inf(-1), math.Inf(1)
	if op.SinceVersion() < 11 {
		if op.Min != nil {
			lo = float64(*op.Min)
		}
		if op.Max != nil {
			hi = float64(*op.Max)
		}
	} else {
		for i, name := range []string{op.In.Min, op.In.Max} {
			c, err := b.optionalConstant(name)
			if err != nil {
				return err
			}
			if c == nil {
				continue
			}
			f, err := floatOf(c)
			if err != nil {
				return fmt.Errorf("clip bound %q: %w", name, err)
			}
			if i == 0 {
				lo = f
			} else {
				hi = f
			}
		}
	}
	if lo > hi {
		return network.Unsupportedf("Clip with min %v > max %v", lo, hi)
	}
	return b.unaryFloat(op.In.Input, op.Out.Output, func(x *G.Node, t onnx.DataType) (*G.Node, error) {
		switch {
		case math.IsInf(lo, -1) && math.IsInf(hi, 1):
			return x, nil
		case math.IsInf(lo, -1):
			// min(x, hi) = hi − relu(hi − x)
			n, err := G.Neg(x)
			if err != nil {
				return nil, err
			}
			if n, err = shift(n, t, hi); err != nil {
				return nil, err
			}
			if n, err = G.Rectify(n); err != nil {
				return nil, err
			}
			if n, err = G.Neg(n); err != nil {
				return nil, err
			}
			return shift(n, t, hi)
		}
		return clamp(x, t, lo, hi)
	})
}

// VisitIdentity passes the value through.
func (b *builder) VisitIdentity(op *ops.Identity) error {
	v, err := b.get(op.In.Input)
	if err != nil {
		return err
	}
	if op.Out.Output != "" {
		b.p.vals[op.Out.Output] = v
	}
	return nil
}

// VisitDropout is the inference pass (the identity); training mode and
// the mask output are not expressible.
func (b *builder) VisitDropout(op *ops.Dropout) error {
	if op.SinceVersion() < 7 && op.IsTest == 0 {
		return network.Unsupportedf("Dropout (version %d) in training mode (is_test 0)", op.SinceVersion())
	}
	if op.Out.Mask != "" {
		return network.Unsupportedf("Dropout's mask output")
	}
	if op.In.TrainingMode != "" {
		c, err := b.constant(op.In.TrainingMode)
		if err != nil {
			return err
		}
		if d, ok := c.Data.([]bool); !ok || len(d) != 1 || d[0] {
			return network.Unsupportedf("Dropout in training mode")
		}
	}
	v, err := b.get(op.In.Data)
	if err != nil {
		return err
	}
	if op.Out.Output != "" {
		b.p.vals[op.Out.Output] = v
	}
	return nil
}

// broadcastShape is ONNX's multidirectional (numpy) broadcast of two
// shapes.
func broadcastShape(a, c []int) ([]int, error) {
	r := max(len(a), len(c))
	out := make([]int, r)
	for i := range r {
		da, dc := 1, 1
		if j := i - (r - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (r - len(c)); j >= 0 {
			dc = c[j]
		}
		switch {
		case da == dc, dc == 1:
			out[i] = da
		case da == 1:
			out[i] = dc
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", a, c)
		}
	}
	return out, nil
}

// lift reshapes a node to rank r by prepending axes of size 1.
func lift(n *G.Node, shape []int, r int) (*G.Node, tensor.Shape, error) {
	s := gshape(shape)
	if len(s) == r {
		return n, s, nil
	}
	ls := make(tensor.Shape, r)
	for i := range ls {
		ls[i] = 1
	}
	copy(ls[r-len(s):], s)
	m, err := reshape(n, ls)
	return m, ls, err
}

// broadcast prepares x and y for one of Gorgonia's Broadcast* ops: both
// at the same rank, and the axes each one is repeated along. Adjacent axes
// that broadcast alike are merged first (see below), so the op's result
// may have the merged shape: callers reshape it with finish.
func (b *builder) broadcast(x, y *val) (xn, yn *G.Node, lp, rp []byte, out []int, err error) {
	return b.broadcastHow(x, y, true)
}

// broadcastHow is broadcast, with merge false for operators whose result
// must not be reshaped (bool comparisons): the operands are only lifted
// to one rank.
func (b *builder) broadcastHow(x, y *val, merge bool) (xn, yn *G.Node, lp, rp []byte, out []int, err error) {
	if out, err = broadcastShape(x.shape, y.shape); err != nil {
		return
	}
	if x.typ != y.typ {
		err = fmt.Errorf("operands of types %v and %v", x.typ, y.typ)
		return
	}
	if xn, err = b.nodeOf(x); err != nil {
		return
	}
	if yn, err = b.nodeOf(y); err != nil {
		return
	}
	r := max(len(gshape(x.shape)), len(gshape(y.shape)))
	xs, ys := padShape(gshape(x.shape), r), padShape(gshape(y.shape), r)
	needs := false
	for i := range r {
		needs = needs || xs[i] != ys[i]
	}
	if needs && x.typ != onnx.Float && x.typ != onnx.Double {
		err = network.Unsupportedf("broadcasting %v operands (Gorgonia broadcasts float and double only)", x.typ)
		return
	}
	if !needs || !merge {
		if xn, _, err = lift(xn, x.shape, r); err != nil {
			return
		}
		if yn, _, err = lift(yn, y.shape, r); err != nil {
			return
		}
		for i := range r {
			switch {
			case xs[i] == ys[i]:
			case xs[i] == 1:
				lp = append(lp, byte(i))
			default:
				rp = append(rp, byte(i))
			}
		}
		return
	}
	// Drop the axes where both are 1 and merge runs of axes of one kind
	// (0 equal, 1 x repeated, 2 y repeated): Gorgonia's broadcasting, and
	// the sums of its gradients, go wrong along some axes of tensors with
	// more axes or with axes of size 1.
	var mx, my []int
	last := -1
	for i := range r {
		kind := 0
		switch {
		case xs[i] == 1 && ys[i] == 1:
			continue
		case xs[i] == ys[i]:
		case xs[i] == 1:
			kind = 1
		case ys[i] == 1:
			kind = 2
		}
		if kind == last {
			mx[len(mx)-1] *= xs[i]
			my[len(my)-1] *= ys[i]
			continue
		}
		last = kind
		mx, my = append(mx, xs[i]), append(my, ys[i])
		switch kind {
		case 1:
			lp = append(lp, byte(len(mx)-1))
		case 2:
			rp = append(rp, byte(len(mx)-1))
		}
	}
	if len(mx) == 1 {
		// Gorgonia broadcasts matrices, not vectors.
		mx, my = []int{1, mx[0]}, []int{1, my[0]}
		for i := range lp {
			lp[i]++
		}
		for i := range rp {
			rp[i]++
		}
	}
	if !slices.Equal(xn.Shape(), mx) {
		if xn, err = reshape(xn, mx); err != nil {
			return
		}
	}
	if !slices.Equal(yn.Shape(), my) {
		yn, err = reshape(yn, my)
	}
	return
}

// bop applies a broadcasting binary op to two values.
func (b *builder) bop(f bcastOp, x, y *val) (*val, error) {
	xn, yn, lp, rp, out, err := b.broadcast(x, y)
	if err != nil {
		return nil, err
	}
	res, err := f(xn, yn, lp, rp)
	if err != nil {
		return nil, err
	}
	if res, err = finish(res, out); err != nil {
		return nil, err
	}
	return &val{n: res, shape: out, typ: x.typ}, nil
}

// padShape prepends axes of size 1 up to rank r.
func padShape(s tensor.Shape, r int) []int {
	out := make([]int, r)
	for i := range out {
		out[i] = 1
	}
	copy(out[r-len(s):], s)
	return out
}

// finish reshapes a broadcast op's result to the ONNX shape.
func finish(n *G.Node, shape []int) (*G.Node, error) {
	if slices.Equal(n.Shape(), gshape(shape)) {
		return n, nil
	}
	return reshape(n, gshape(shape))
}

type bcastOp func(a, b *G.Node, lp, rp []byte) (*G.Node, error)

// binary maps a broadcasting binary operator. floatOnly restricts it to
// float and double; otherwise int32 and int64 are accepted too.
func (b *builder) binary(x, y, z string, legacyBroadcast int64, floatOnly bool, f bcastOp) error {
	if legacyBroadcast != 0 {
		return network.Unsupportedf("legacy broadcast attribute (before version 7)")
	}
	xv, err := b.get(x)
	if err != nil {
		return err
	}
	yv, err := b.get(y)
	if err != nil {
		return err
	}
	for _, v := range []*val{xv, yv} {
		if floatOnly && v.typ != onnx.Float && v.typ != onnx.Double ||
			v.typ != onnx.Float && v.typ != onnx.Double && v.typ != onnx.Int32 && v.typ != onnx.Int64 {
			return network.Unsupportedf("operands of type %v", v.typ)
		}
	}
	r, err := b.bop(f, xv, yv)
	if err != nil {
		return err
	}
	return b.set(z, r.n, r.shape, r.typ)
}

func (b *builder) VisitAdd(op *ops.Add) error {
	return b.binary(op.In.A, op.In.B, op.Out.C, op.Broadcast, false, G.BroadcastAdd)
}
func (b *builder) VisitSub(op *ops.Sub) error {
	return b.binary(op.In.A, op.In.B, op.Out.C, op.Broadcast, false, G.BroadcastSub)
}
func (b *builder) VisitMul(op *ops.Mul) error {
	return b.binary(op.In.A, op.In.B, op.Out.C, op.Broadcast, false, G.BroadcastHadamardProd)
}

// VisitDiv is float-only: Gorgonia's integer division does not follow
// ONNX's rounding for negative operands.
func (b *builder) VisitDiv(op *ops.Div) error {
	return b.binary(op.In.A, op.In.B, op.Out.C, op.Broadcast, true, G.BroadcastHadamardDiv)
}

// VisitPow needs base and exponent of the same float type.
func (b *builder) VisitPow(op *ops.Pow) error {
	return b.binary(op.In.X, op.In.Y, op.Out.Z, op.Broadcast, true, G.BroadcastPow)
}

// compare maps a comparison to Gorgonia's, which yields bool.
func (b *builder) compare(x, y, z string, legacyBroadcast int64,
	f func(a, b *G.Node, retSame bool, lp, rp []byte) (*G.Node, error)) error {
	if legacyBroadcast != 0 {
		return network.Unsupportedf("legacy broadcast attribute (before version 7)")
	}
	xv, err := b.get(x)
	if err != nil {
		return err
	}
	yv, err := b.get(y)
	if err != nil {
		return err
	}
	if xv.typ != onnx.Float && xv.typ != onnx.Double && xv.typ != onnx.Int32 && xv.typ != onnx.Int64 {
		return network.Unsupportedf("comparison of %v", xv.typ)
	}
	xn, yn, lp, rp, out, err := b.broadcastHow(xv, yv, false)
	if err != nil {
		return err
	}
	res, err := f(xn, yn, false, lp, rp)
	if err != nil {
		return err
	}
	if !slices.Equal(res.Shape(), gshape(out)) {
		// Gorgonia's Reshape of a bool tensor corrupts its input.
		return network.Unsupportedf("comparison broadcasting shapes %v and %v (a bool reshape)", xv.shape, yv.shape)
	}
	return b.set(z, res, out, onnx.Bool)
}

func (b *builder) VisitEqual(op *ops.Equal) error {
	return b.compare(op.In.A, op.In.B, op.Out.C, op.Broadcast, G.BroadcastEq)
}
func (b *builder) VisitLess(op *ops.Less) error {
	return b.compare(op.In.A, op.In.B, op.Out.C, op.Broadcast, G.BroadcastLt)
}
func (b *builder) VisitGreater(op *ops.Greater) error {
	return b.compare(op.In.A, op.In.B, op.Out.C, op.Broadcast, G.BroadcastGt)
}
func (b *builder) VisitLessOrEqual(op *ops.LessOrEqual) error {
	return b.compare(op.In.A, op.In.B, op.Out.C, 0, G.BroadcastLte)
}
func (b *builder) VisitGreaterOrEqual(op *ops.GreaterOrEqual) error {
	return b.compare(op.In.A, op.In.B, op.Out.C, 0, G.BroadcastGte)
}

// VisitPRelu is relu(x) + slope·min(x, 0), slope broadcast to x.
func (b *builder) VisitPRelu(op *ops.PRelu) error {
	xv, xn, err := b.getFloat(op.In.X)
	if err != nil {
		return err
	}
	sv, err := b.get(op.In.Slope)
	if err != nil {
		return err
	}
	if op.SinceVersion() < 7 && len(sv.shape) == 1 && len(xv.shape) > 2 && sv.shape[0] == xv.shape[1] && sv.shape[0] != 1 {
		// Before version 7 a slope of shape [C] applies per channel.
		sn, err := b.nodeOf(sv)
		if err != nil {
			return err
		}
		cs := make([]int, len(xv.shape))
		for i := range cs {
			cs[i] = 1
		}
		cs[1] = sv.shape[0]
		if sn, err = reshape(sn, cs); err != nil {
			return err
		}
		sv = &val{n: sn, shape: cs, typ: sv.typ}
	}
	r, err := G.Rectify(xn)
	if err != nil {
		return err
	}
	m, err := negRelu(xn)
	if err != nil {
		return err
	}
	mv := &val{n: m, shape: xv.shape, typ: xv.typ}
	mn, sn, lp, rp, out, err := b.broadcast(mv, sv)
	if err != nil {
		return err
	}
	if len(out) != len(xv.shape) || onnx.NumElements(out) != onnx.NumElements(xv.shape) {
		return fmt.Errorf("slope of shape %v does not broadcast to X's %v", sv.shape, xv.shape)
	}
	prod, err := G.BroadcastHadamardProd(mn, sn, lp, rp)
	if err != nil {
		return err
	}
	if prod, err = finish(prod, xv.shape); err != nil {
		return err
	}
	res, err := G.Add(r, prod)
	if err != nil {
		return err
	}
	return b.set(op.Out.Y, res, xv.shape, xv.typ)
}

// variadic folds a broadcasting binary op over the inputs.
func (b *builder) variadic(names []string, out string, f bcastOp) (*val, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("no inputs")
	}
	acc, err := b.get(names[0])
	if err != nil {
		return nil, err
	}
	if acc.typ != onnx.Float && acc.typ != onnx.Double {
		return nil, network.Unsupportedf("inputs of type %v", acc.typ)
	}
	for _, name := range names[1:] {
		v, err := b.get(name)
		if err != nil {
			return nil, err
		}
		if acc, err = b.bop(f, acc, v); err != nil {
			return nil, err
		}
	}
	if _, err := b.nodeOf(acc); err != nil {
		return nil, err
	}
	return acc, nil
}

func (b *builder) VisitSum(op *ops.Sum) error {
	acc, err := b.variadic(op.In.Data0, op.Out.Sum, G.BroadcastAdd)
	if err != nil {
		return err
	}
	return b.set(op.Out.Sum, acc.n, acc.shape, acc.typ)
}

func (b *builder) VisitMean(op *ops.Mean) error {
	acc, err := b.variadic(op.In.Data0, op.Out.Mean, G.BroadcastAdd)
	if err != nil {
		return err
	}
	res, err := scale(acc.n, acc.typ, 1/float64(len(op.In.Data0)))
	if err != nil {
		return err
	}
	return b.set(op.Out.Mean, res, acc.shape, acc.typ)
}

// extremum folds MaxBetween or MinBetween, which need equal shapes.
func (b *builder) extremum(names []string, out string, f func(a, b *G.Node) (*G.Node, error)) error {
	acc, err := b.variadic(names[:1], out, nil)
	if err != nil {
		return err
	}
	for _, name := range names[1:] {
		v, vn, err := b.getFloat(name)
		if err != nil {
			return err
		}
		if fmt.Sprint(v.shape) != fmt.Sprint(acc.shape) || v.typ != acc.typ {
			return network.Unsupportedf("Max/Min of different shapes (%v, %v): Gorgonia's MaxBetween does not broadcast", acc.shape, v.shape)
		}
		res, err := f(acc.n, vn)
		if err != nil {
			return err
		}
		acc = &val{n: res, shape: acc.shape, typ: acc.typ}
	}
	return b.set(out, acc.n, acc.shape, acc.typ)
}

func (b *builder) VisitMax(op *ops.Max) error {
	return b.extremum(op.In.Data0, op.Out.Max, G.MaxBetween)
}
func (b *builder) VisitMin(op *ops.Min) error {
	return b.extremum(op.In.Data0, op.Out.Min, G.MinBetween)
}

// VisitConstant records the value; it becomes a node only when an
// operator needs it as one.
func (b *builder) VisitConstant(op *ops.Constant) error {
	if b.probing {
		return errProbe
	}
	var t *onnx.Tensor
	switch {
	case op.Value != nil:
		t = op.Value
	case op.ValueFloat != nil:
		t = onnx.Scalar(*op.ValueFloat)
	case op.ValueFloats != nil:
		t = onnx.FromSlice(append([]float32(nil), op.ValueFloats...), len(op.ValueFloats))
	case op.ValueInt != nil:
		t = onnx.Scalar(*op.ValueInt)
	case op.ValueInts != nil:
		t = onnx.FromSlice(append([]int64(nil), op.ValueInts...), len(op.ValueInts))
	default:
		return network.Unsupportedf("Constant of this kind (sparse or string)")
	}
	b.setConst(op.Out.Output, t)
	return nil
}
