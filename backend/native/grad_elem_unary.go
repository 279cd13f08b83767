package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rules of the elementwise functions of one tensor (elem_unary.go,
// Clip of elem_logic.go): one driver, gelemUnary, computes dx = dy * f'(x, y)
// from the forward input x and output y for every such operator. The
// derivative is chosen once per run by a switch over gelemFn, each case a
// plain loop over a chunk, so there is no call per element.
//
// At the points where a function is not differentiable the rule takes the
// derivative of the branch the forward kernel evaluates there: Abs has 0
// at 0, LeakyRelu/Elu/PRelu have 1 at 0 (their forward tests x < 0), Selu
// and Celu take the exponential branch at 0, ThresholdedRelu, Shrink and
// HardSigmoid have 0 on their thresholds, HardSwish 0 at -3 and 1 at 3,
// and Clip passes
// the gradient to x where min <= x <= max (a value equal to a bound is
// passed through). Floor, Ceil, Round and Sign have zero gradient.

// gelemFn names the derivative the unary driver computes.
type gelemFn uint8

const (
	gelemAbs gelemFn = iota
	gelemNeg
	gelemExp
	gelemLog
	gelemSqrt
	gelemReciprocal
	gelemSin
	gelemCos
	gelemTan
	gelemAsin
	gelemAcos
	gelemAtan
	gelemSinh
	gelemCosh
	gelemAsinh
	gelemAcosh
	gelemAtanh
	gelemErf
	gelemLeakyRelu       // a = alpha
	gelemElu             // a = alpha
	gelemSelu            // a = alpha, b = gamma
	gelemCelu            // a = alpha
	gelemThresholdedRelu // a = alpha
	gelemHardSigmoid     // a = alpha, b = beta
	gelemHardSwish
	gelemSoftplus
	gelemSoftsign
	gelemGeluErf
	gelemGeluTanh
	gelemMish
	gelemShrink // a = lambd
	gelemSwish  // a = alpha
	gelemClip   // a = min, b = max (±Inf when absent)
)

// gelemUnary is the backward kernel of every unary elementwise function.
type gelemUnary struct {
	fn      gelemFn
	a, b    float64
	x, y    int
	threads int
	// bounds, when set, gives a and b for this run (Clip's min and max).
	bounds  func(slots []onnx.Value, typ onnx.DataType) (lo, hi float64, err error)
	scratch gradScratch
}

// unaryGrad compiles the unary driver for fn with parameters a and b.
func (gb *gradBuilder) unaryGrad(fn gelemFn, a, b float64, in, out string) error {
	k := &gelemUnary{fn: fn, a: a, b: b, x: gb.slot(in), y: gb.slot(out), threads: gb.e.threads}
	return gb.set(k.run)
}

// gelemFloat returns v as a float32 or float64 tensor. ok is false, with
// no error, for integer and boolean tensors: they carry no gradient, so
// a rule leaves them out. Reduced-precision floats are unsupported.
func gelemFloat(v onnx.Value, what string) (t *onnx.Tensor, ok bool, err error) {
	t, isT := v.(*onnx.Tensor)
	if !isT || t == nil {
		return nil, false, fmt.Errorf("%s is %s, not a tensor", what, onnx.DescribeValue(v))
	}
	switch t.Type {
	case onnx.Float, onnx.Double:
		return t, true, nil
	}
	if t.Type.IsFloat() {
		return nil, false, network.Unsupportedf("gradients through tensor(%v) (%s)", t.Type, what)
	}
	return nil, false, nil
}

// gelemOut returns the gradient destination of slot for a tensor of the
// given type and shape: the gradient buffer itself when this is the first
// contribution (direct), otherwise scratch, to be added with g.add.
func gelemOut(g *gradState, slot int, s *gradScratch, typ onnx.DataType, shape []int) (t *onnx.Tensor, direct bool) {
	if t, ok := g.buffer(slot, typ, shape); ok {
		return t, true
	}
	return s.buf.tensor(typ, shape), false
}

func (k *gelemUnary) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil || !g.wants(k.x) {
		return nil
	}
	x, ok, err := gelemFloat(slots[k.x], "input")
	if err != nil || !ok {
		return err
	}
	y, _, err := gelemFloat(slots[k.y], "output")
	if err != nil {
		return err
	}
	if y == nil || y.Type != x.Type || gy.Type != x.Type || y.Len() != x.Len() || gy.Len() != x.Len() {
		return fmt.Errorf("input tensor(%v)%v, output %s and its gradient tensor(%v)%v do not match",
			x.Type, x.Shape, onnx.DescribeValue(slots[k.y]), gy.Type, gy.Shape)
	}
	a, b := k.a, k.b
	if k.bounds != nil {
		if a, b, err = k.bounds(slots, x.Type); err != nil {
			return err
		}
	}
	dx, direct := gelemOut(g, k.x, &k.scratch, x.Type, x.Shape)
	switch d := dx.Data.(type) {
	case []float32:
		gelemUnaryApply(k.fn, a, b, k.threads, d, gy.Data.([]float32), x.Data.([]float32), y.Data.([]float32))
	case []float64:
		gelemUnaryApply(k.fn, a, b, k.threads, d, gy.Data.([]float64), x.Data.([]float64), y.Data.([]float64))
	}
	if direct {
		return nil
	}
	return g.add(k.x, dx)
}

func gelemUnaryApply[T floatElem](fn gelemFn, a, b float64, threads int, dx, dy, x, y []T) {
	if len(dx) < 2*elemGrain {
		gelemUnaryRange(fn, a, b, dx, dy, x, y) // par.For would not split it
		return
	}
	par.For(len(dx), threads, elemGrain, func(lo, hi int) {
		gelemUnaryRange(fn, a, b, dx[lo:hi], dy[lo:hi], x[lo:hi], y[lo:hi])
	})
}

// gelemUnaryRange writes dx = dy * f'(x) for one chunk, in float64.
func gelemUnaryRange[T floatElem](fn gelemFn, a, b float64, dx, dy, x, y []T) {
	dy, x, y = dy[:len(dx)], x[:len(dx)], y[:len(dx)]
	switch fn {
	case gelemAbs:
		for i, v := range x {
			switch {
			case v > 0:
				dx[i] = dy[i]
			case v < 0:
				dx[i] = -dy[i]
			default:
				dx[i] = 0
			}
		}
	case gelemNeg:
		for i, g := range dy {
			dx[i] = -g
		}
	case gelemExp:
		for i, v := range y {
			dx[i] = T(float64(dy[i]) * float64(v))
		}
	case gelemLog:
		for i, v := range x {
			dx[i] = T(float64(dy[i]) / float64(v))
		}
	case gelemSqrt:
		for i, v := range y {
			dx[i] = T(0.5 * float64(dy[i]) / float64(v))
		}
	case gelemReciprocal:
		for i, v := range y {
			r := float64(v)
			dx[i] = T(-float64(dy[i]) * r * r)
		}
	case gelemSin:
		for i, v := range x {
			dx[i] = T(float64(dy[i]) * math.Cos(float64(v)))
		}
	case gelemCos:
		for i, v := range x {
			dx[i] = T(-float64(dy[i]) * math.Sin(float64(v)))
		}
	case gelemTan:
		for i, v := range y {
			t := float64(v)
			dx[i] = T(float64(dy[i]) * (1 + t*t))
		}
	case gelemAsin:
		for i, v := range x {
			u := float64(v)
			dx[i] = T(float64(dy[i]) / math.Sqrt(1-u*u))
		}
	case gelemAcos:
		for i, v := range x {
			u := float64(v)
			dx[i] = T(-float64(dy[i]) / math.Sqrt(1-u*u))
		}
	case gelemAtan:
		for i, v := range x {
			u := float64(v)
			dx[i] = T(float64(dy[i]) / (1 + u*u))
		}
	case gelemSinh:
		for i, v := range x {
			dx[i] = T(float64(dy[i]) * math.Cosh(float64(v)))
		}
	case gelemCosh:
		for i, v := range x {
			dx[i] = T(float64(dy[i]) * math.Sinh(float64(v)))
		}
	case gelemAsinh:
		for i, v := range x {
			u := float64(v)
			dx[i] = T(float64(dy[i]) / math.Sqrt(u*u+1))
		}
	case gelemAcosh:
		for i, v := range x {
			u := float64(v)
			dx[i] = T(float64(dy[i]) / math.Sqrt(u*u-1))
		}
	case gelemAtanh:
		for i, v := range x {
			u := float64(v)
			dx[i] = T(float64(dy[i]) / (1 - u*u))
		}
	case gelemErf:
		c := 2 / math.Sqrt(math.Pi)
		for i, v := range x {
			u := float64(v)
			dx[i] = T(float64(dy[i]) * c * math.Exp(-u*u))
		}
	case gelemLeakyRelu:
		for i, v := range x {
			if v < 0 {
				dx[i] = T(float64(dy[i]) * a)
			} else {
				dx[i] = dy[i]
			}
		}
	case gelemElu:
		for i, v := range x {
			if v < 0 {
				dx[i] = T(float64(dy[i]) * a * math.Exp(float64(v)))
			} else {
				dx[i] = dy[i]
			}
		}
	case gelemSelu:
		for i, v := range x {
			if v <= 0 {
				dx[i] = T(float64(dy[i]) * b * a * math.Exp(float64(v)))
			} else {
				dx[i] = T(float64(dy[i]) * b)
			}
		}
	case gelemCelu:
		for i, v := range x {
			if v > 0 {
				dx[i] = dy[i]
			} else {
				dx[i] = T(float64(dy[i]) * math.Exp(float64(v)/a))
			}
		}
	case gelemThresholdedRelu:
		for i, v := range x {
			if float64(v) > a {
				dx[i] = dy[i]
			} else {
				dx[i] = 0
			}
		}
	case gelemHardSigmoid:
		for i, v := range x {
			if u := a*float64(v) + b; u > 0 && u < 1 {
				dx[i] = T(float64(dy[i]) * a)
			} else {
				dx[i] = 0
			}
		}
	case gelemHardSwish:
		for i, v := range x {
			u := float64(v)
			switch s := u/6 + 0.5; {
			case s <= 0:
				dx[i] = 0
			case s >= 1:
				dx[i] = dy[i]
			default:
				dx[i] = T(float64(dy[i]) * (u/3 + 0.5))
			}
		}
	case gelemSoftplus:
		for i, v := range x {
			dx[i] = T(float64(dy[i]) * sigmoid(float64(v)))
		}
	case gelemSoftsign:
		for i, v := range x {
			d := 1 + math.Abs(float64(v))
			dx[i] = T(float64(dy[i]) / (d * d))
		}
	case gelemGeluErf:
		c := 1 / math.Sqrt(2*math.Pi)
		for i, v := range x {
			u := float64(v)
			dx[i] = T(float64(dy[i]) * (0.5*(1+math.Erf(u/math.Sqrt2)) + u*c*math.Exp(-u*u/2)))
		}
	case gelemGeluTanh:
		c := math.Sqrt(2 / math.Pi)
		for i, v := range x {
			u := float64(v)
			t := math.Tanh(c * (u + 0.044715*u*u*u))
			d := 0.5*(1+t) + 0.5*u*(1-t*t)*c*(1+3*0.044715*u*u)
			dx[i] = T(float64(dy[i]) * d)
		}
	case gelemMish:
		for i, v := range x {
			u := float64(v)
			t := math.Tanh(softplus(u))
			dx[i] = T(float64(dy[i]) * (t + u*(1-t*t)*sigmoid(u)))
		}
	case gelemShrink:
		for i, v := range x {
			if u := float64(v); u < -a || u > a {
				dx[i] = dy[i]
			} else {
				dx[i] = 0
			}
		}
	case gelemSwish:
		for i, v := range x {
			u := float64(v)
			s := sigmoid(a * u)
			dx[i] = T(float64(dy[i]) * (s + a*u*s*(1-s)))
		}
	case gelemClip:
		for i, v := range x {
			if u := float64(v); u >= a && u <= b {
				dx[i] = dy[i]
			} else {
				dx[i] = 0
			}
		}
	}
}

func (gb *gradBuilder) VisitAbs(op *ops.Abs) error {
	return gb.unaryGrad(gelemAbs, 0, 0, op.In.X, op.Out.Y)
}
func (gb *gradBuilder) VisitNeg(op *ops.Neg) error {
	return gb.unaryGrad(gelemNeg, 0, 0, op.In.X, op.Out.Y)
}
func (gb *gradBuilder) VisitExp(op *ops.Exp) error {
	return gb.unaryGrad(gelemExp, 0, 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitLog(op *ops.Log) error {
	return gb.unaryGrad(gelemLog, 0, 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitSqrt(op *ops.Sqrt) error {
	return gb.unaryGrad(gelemSqrt, 0, 0, op.In.X, op.Out.Y)
}
func (gb *gradBuilder) VisitReciprocal(op *ops.Reciprocal) error {
	return gb.unaryGrad(gelemReciprocal, 0, 0, op.In.X, op.Out.Y)
}
func (gb *gradBuilder) VisitSin(op *ops.Sin) error {
	return gb.unaryGrad(gelemSin, 0, 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitCos(op *ops.Cos) error {
	return gb.unaryGrad(gelemCos, 0, 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitTan(op *ops.Tan) error {
	return gb.unaryGrad(gelemTan, 0, 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitAsin(op *ops.Asin) error {
	return gb.unaryGrad(gelemAsin, 0, 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitAcos(op *ops.Acos) error {
	return gb.unaryGrad(gelemAcos, 0, 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitAtan(op *ops.Atan) error {
	return gb.unaryGrad(gelemAtan, 0, 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitSinh(op *ops.Sinh) error {
	return gb.unaryGrad(gelemSinh, 0, 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitCosh(op *ops.Cosh) error {
	return gb.unaryGrad(gelemCosh, 0, 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitAsinh(op *ops.Asinh) error {
	return gb.unaryGrad(gelemAsinh, 0, 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitAcosh(op *ops.Acosh) error {
	return gb.unaryGrad(gelemAcosh, 0, 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitAtanh(op *ops.Atanh) error {
	return gb.unaryGrad(gelemAtanh, 0, 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitErf(op *ops.Erf) error {
	return gb.unaryGrad(gelemErf, 0, 0, op.In.Input, op.Out.Output)
}

// zeroGrad is the rule of a piecewise-constant function: it contributes
// nothing, so its input's gradient is zero unless another path adds to it.
func (gb *gradBuilder) zeroGrad() error {
	return gb.set(func([]onnx.Value, *gradState) error { return nil })
}

func (gb *gradBuilder) VisitFloor(*ops.Floor) error     { return gb.zeroGrad() }
func (gb *gradBuilder) VisitCeil(*ops.Ceil) error       { return gb.zeroGrad() }
func (gb *gradBuilder) VisitRound(*ops.Round) error     { return gb.zeroGrad() }
func (gb *gradBuilder) VisitSign(*ops.Sign) error       { return gb.zeroGrad() }
func (gb *gradBuilder) VisitHardmax(*ops.Hardmax) error { return gb.zeroGrad() }

// ---- activations with parameters ----

func (gb *gradBuilder) VisitLeakyRelu(op *ops.LeakyRelu) error {
	return gb.unaryGrad(gelemLeakyRelu, float64(op.Alpha), 0, op.In.X, op.Out.Y)
}
func (gb *gradBuilder) VisitElu(op *ops.Elu) error {
	return gb.unaryGrad(gelemElu, float64(op.Alpha), 0, op.In.X, op.Out.Y)
}
func (gb *gradBuilder) VisitSelu(op *ops.Selu) error {
	return gb.unaryGrad(gelemSelu, float64(op.Alpha), float64(op.Gamma), op.In.X, op.Out.Y)
}
func (gb *gradBuilder) VisitCelu(op *ops.Celu) error {
	if op.Alpha == 0 {
		return fmt.Errorf("Celu alpha must not be 0")
	}
	return gb.unaryGrad(gelemCelu, float64(op.Alpha), 0, op.In.X, op.Out.Y)
}
func (gb *gradBuilder) VisitThresholdedRelu(op *ops.ThresholdedRelu) error {
	return gb.unaryGrad(gelemThresholdedRelu, float64(op.Alpha), 0, op.In.X, op.Out.Y)
}
func (gb *gradBuilder) VisitHardSigmoid(op *ops.HardSigmoid) error {
	return gb.unaryGrad(gelemHardSigmoid, float64(op.Alpha), float64(op.Beta), op.In.X, op.Out.Y)
}
func (gb *gradBuilder) VisitHardSwish(op *ops.HardSwish) error {
	return gb.unaryGrad(gelemHardSwish, 0, 0, op.In.X, op.Out.Y)
}
func (gb *gradBuilder) VisitSoftplus(op *ops.Softplus) error {
	return gb.unaryGrad(gelemSoftplus, 0, 0, op.In.X, op.Out.Y)
}
func (gb *gradBuilder) VisitSoftsign(op *ops.Softsign) error {
	return gb.unaryGrad(gelemSoftsign, 0, 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitGelu(op *ops.Gelu) error {
	switch op.Approximate {
	case "none":
		return gb.unaryGrad(gelemGeluErf, 0, 0, op.In.X, op.Out.Y)
	case "tanh":
		return gb.unaryGrad(gelemGeluTanh, 0, 0, op.In.X, op.Out.Y)
	}
	return fmt.Errorf("Gelu approximate must be none or tanh, got %q", op.Approximate)
}
func (gb *gradBuilder) VisitMish(op *ops.Mish) error {
	return gb.unaryGrad(gelemMish, 0, 0, op.In.X, op.Out.Y)
}

// VisitShrink: the gradient is 1 outside [-lambd, lambd] and 0 inside; the
// bias only shifts the output.
func (gb *gradBuilder) VisitShrink(op *ops.Shrink) error {
	return gb.unaryGrad(gelemShrink, float64(op.Lambd), 0, op.In.Input, op.Out.Output)
}
func (gb *gradBuilder) VisitSwish(op *ops.Swish) error {
	return gb.unaryGrad(gelemSwish, float64(op.Alpha), 0, op.In.X, op.Out.Y)
}

// VisitClip: the gradient passes to the input where min <= x <= max. The
// bounds are attributes before version 11 and inputs from 11. From version
// 13 ONNX marks the min and max inputs non-differentiable, so the engine
// never asks for their gradients; versions 11 and 12 leave it unsaid, and
// a bound that needs one gets the sum of the output gradient over the
// elements clamped to it (where the forward kernel output that bound).
func (gb *gradBuilder) VisitClip(op *ops.Clip) error {
	k := &gelemUnary{fn: gelemClip, a: math.Inf(-1), b: math.Inf(1), x: gb.slot(op.In.Input), y: gb.slot(op.Out.Output), threads: gb.e.threads}
	if op.SinceVersion() < 11 {
		if op.Min != nil {
			k.a = float64(*op.Min)
		}
		if op.Max != nil {
			k.b = float64(*op.Max)
		}
		return gb.set(k.run)
	}
	lo, hi := gb.slot(op.In.Min), gb.slot(op.In.Max)
	k.bounds = func(slots []onnx.Value, typ onnx.DataType) (float64, float64, error) {
		l, err := gelemClipBound(slots, lo, typ, math.Inf(-1))
		if err != nil {
			return 0, 0, err
		}
		h, err := gelemClipBound(slots, hi, typ, math.Inf(1))
		return l, h, err
	}
	var sl, sh gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		if err := k.run(slots, g); err != nil {
			return err
		}
		gy := g.of(k.y)
		if gy == nil || !(g.wants(lo) || g.wants(hi)) {
			return nil
		}
		x, ok, err := gelemFloat(slots[k.x], "input")
		if err != nil || !ok {
			return err
		}
		l, h, err := k.bounds(slots, x.Type)
		if err != nil {
			return err
		}
		var toLo, toHi float64
		switch d := x.Data.(type) {
		case []float32:
			toLo, toHi = gelemClipBoundSums(d, gy.Data.([]float32), l, h)
		case []float64:
			toLo, toHi = gelemClipBoundSums(d, gy.Data.([]float64), l, h)
		}
		if err := gelemAddScalar(g, slots, lo, &sl, toLo); err != nil {
			return err
		}
		return gelemAddScalar(g, slots, hi, &sh, toHi)
	})
}

// gelemClipBoundSums sums dy over the elements the forward Clip set to
// its lower bound (x < lo, unless max(x, lo) then exceeds hi) and to its
// upper bound (max(x, lo) > hi).
func gelemClipBoundSums[T floatElem](x, dy []T, lo, hi float64) (toLo, toHi float64) {
	for i, v := range x {
		u := float64(v)
		switch {
		case max(u, lo) > hi:
			toHi += float64(dy[i])
		case u < lo:
			toLo += float64(dy[i])
		}
	}
	return toLo, toHi
}

// gelemAddScalar adds v to the gradient of the one-element tensor in slot
// (nothing when the slot is absent, empty or needs no gradient).
func gelemAddScalar(g *gradState, slots []onnx.Value, slot int, s *gradScratch, v float64) error {
	if !g.wants(slot) {
		return nil
	}
	t, ok := slots[slot].(*onnx.Tensor)
	if !ok || t == nil || t.Len() != 1 {
		return nil
	}
	d := s.buf.tensor(t.Type, t.Shape)
	switch dd := d.Data.(type) {
	case []float32:
		dd[0] = float32(v)
	case []float64:
		dd[0] = v
	default:
		return nil
	}
	return g.add(slot, d)
}

// gelemClipBound reads an optional scalar bound of Clip (absent or empty:
// def).
func gelemClipBound(slots []onnx.Value, slot int, typ onnx.DataType, def float64) (float64, error) {
	if slot < 0 {
		return def, nil
	}
	t, ok := slots[slot].(*onnx.Tensor)
	if !ok || t == nil || t.Len() == 0 {
		return def, nil
	}
	if t.Type != typ || t.Len() != 1 {
		return 0, fmt.Errorf("Clip bound tensor(%v)%v for an input of type %v", t.Type, t.Shape, typ)
	}
	switch d := t.Data.(type) {
	case []float32:
		return float64(d[0]), nil
	case []float64:
		return d[0], nil
	}
	return 0, fmt.Errorf("Clip bound of type %v", t.Type)
}

// ---- Cast ----

// castGrad converts the output's gradient back to the input's type when
// both are float32 or float64. An integer or boolean input carries no
// gradient; a reduced-precision float one is unsupported.
type castGrad struct {
	x, y    int
	scratch gradScratch
}

func (gb *gradBuilder) castGradRule(in, out string) error {
	k := &castGrad{x: gb.slot(in), y: gb.slot(out)}
	return gb.set(k.run)
}

func (gb *gradBuilder) VisitCast(op *ops.Cast) error {
	return gb.castGradRule(op.In.Input, op.Out.Output)
}

// VisitCastLike: target_type is non-differentiable.
func (gb *gradBuilder) VisitCastLike(op *ops.CastLike) error {
	return gb.castGradRule(op.In.Input, op.Out.Output)
}

func (k *castGrad) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil || !g.wants(k.x) {
		return nil
	}
	x, ok, err := gelemFloat(slots[k.x], "input")
	if err != nil || !ok {
		return err
	}
	if gy.Type != onnx.Float && gy.Type != onnx.Double {
		return network.Unsupportedf("Cast gradients from tensor(%v)", gy.Type)
	}
	if gy.Len() != x.Len() {
		return fmt.Errorf("gradient of %d elements for an input of shape %v", gy.Len(), x.Shape)
	}
	dx, direct := gelemOut(g, k.x, &k.scratch, x.Type, x.Shape)
	switch d := dx.Data.(type) {
	case []float32:
		switch s := gy.Data.(type) {
		case []float32:
			copy(d, s)
		case []float64:
			for i, v := range s {
				d[i] = float32(v)
			}
		}
	case []float64:
		switch s := gy.Data.(type) {
		case []float32:
			for i, v := range s {
				d[i] = float64(v)
			}
		case []float64:
			copy(d, s)
		}
	}
	if direct {
		return nil
	}
	return g.add(k.x, dx)
}
