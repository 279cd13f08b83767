package autodiff

import (
	"math"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Rules of the element-wise functions of one tensor, y = f(x): each gives
// dx = g·f'(x) from the output's gradient g, written with the forward
// input x or output y, whichever is cheaper. Where f has a kink the rule
// takes the native backend's choice (backend/native/grad_elem_unary.go):
// the derivative of the branch the forward evaluates there.

func init() {
	for op, f := range map[string]unaryFn{
		"Relu": reluGrad, "LeakyRelu": leakyReluGrad, "Elu": eluGrad, "Selu": seluGrad, "Celu": celuGrad,
		"Sigmoid": sigmoidGrad, "HardSigmoid": hardSigmoidGrad, "HardSwish": hardSwishGrad, "Gelu": geluGrad,
		"Mish": mishGrad, "Tanh": tanhGrad, "Softplus": softplusGrad, "Softsign": softsignGrad,
		"ThresholdedRelu": thresholdedReluGrad, "Shrink": shrinkGrad,
		"Exp": expGrad, "Log": logGrad, "Sqrt": sqrtGrad, "Reciprocal": reciprocalGrad, "Neg": negGrad,
		"Abs": absGrad, "Erf": erfGrad, "Sin": sinGrad, "Cos": cosGrad, "Tan": tanGrad,
		"Asin": asinGrad, "Acos": acosGrad, "Atan": atanGrad, "Sinh": sinhGrad, "Cosh": coshGrad,
		"Asinh": asinhGrad, "Acosh": acoshGrad, "Atanh": atanhGrad,
	} {
		register(unaryRule(f), op)
	}
	register(clipGrad, "Clip")
	register(piecewiseConstantGrad, "Floor", "Ceil", "Round", "Sign")
}

// unaryFn returns dx for y = f(x) with output gradient g; dt is x's type.
type unaryFn func(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string

// unaryRule adapts a unaryFn to a rule.
func unaryRule(f unaryFn) rule {
	return func(b *builder, n *onnx.Node, dy []string, need []bool) []string {
		if !need[0] || dy[0] == "" {
			return nil
		}
		x := n.Inputs[0]
		return []string{f(b, n, x, n.Outputs[0], dy[0], b.typeOf(x))}
	}
}

// piecewiseConstantGrad is the rule of a piecewise-constant function
// (Floor, Ceil, Round, Sign; Hardmax): dx = 0, so nothing flows.
func piecewiseConstantGrad(*builder, *onnx.Node, []string, []bool) []string { return nil }

// reluGrad: dx = g·[x > 0].
func reluGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.elemMask(b.elemS("Greater", x, 0, dt), g, dt)
}

// leakyReluGrad: dx = g·α where x < 0, g elsewhere.
func leakyReluGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	op := n.Op.(*ops.LeakyRelu)
	return b.elemWhere(b.elemS("Less", x, 0, dt), b.elemScale(g, float64(op.Alpha), dt), g, dt)
}

// eluGrad: dx = g·α·eˣ = g·(y + α) where x < 0, g elsewhere.
func eluGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	op := n.Op.(*ops.Elu)
	neg := b.mul(g, b.elemS("Add", y, float64(op.Alpha), dt))
	return b.elemWhere(b.elemS("Less", x, 0, dt), neg, g, dt)
}

// seluGrad: dx = g·γ where x > 0, g·γ·α·eˣ = g·(y + γα) elsewhere.
func seluGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	op := n.Op.(*ops.Selu)
	gamma, alpha := float64(op.Gamma), float64(op.Alpha)
	neg := b.mul(g, b.elemS("Add", y, gamma*alpha, dt))
	return b.elemWhere(b.elemS("Greater", x, 0, dt), b.elemScale(g, gamma, dt), neg, dt)
}

// celuGrad: dx = g where x > 0, g·e^(x/α) = g·(y/α + 1) elsewhere.
func celuGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	op := n.Op.(*ops.Celu)
	if op.Alpha == 0 {
		b.fail("Celu alpha must not be 0")
		return ""
	}
	neg := b.mul(g, b.elemS("Add", b.elemScale(y, 1/float64(op.Alpha), dt), 1, dt))
	return b.elemWhere(b.elemS("Greater", x, 0, dt), g, neg, dt)
}

// sigmoidGrad: dx = g·y·(1 - y) = g·(y - y²).
func sigmoidGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.mul(g, b.sub(y, b.mul(y, y)))
}

// hardSigmoidGrad: y = max(0, min(1, αx + β)); dx = g·α where 0 < αx + β
// < 1, that is 0 < y < 1, and 0 elsewhere (the thresholds included).
func hardSigmoidGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	op := n.Op.(*ops.HardSigmoid)
	inside := b.op("And", []string{b.elemS("Greater", y, 0, dt), b.elemS("Less", y, 1, dt)})
	return b.elemMask(inside, b.elemScale(g, float64(op.Alpha), dt), dt)
}

// hardSwishGrad: y = x·max(0, min(1, x/6 + 1/2)); dx = 0 for x ≤ -3, g
// for x ≥ 3, g·(x/3 + 1/2) between.
func hardSwishGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	mid := b.mul(g, b.elemS("Add", b.elemScale(x, 1.0/3, dt), 0.5, dt))
	upper := b.elemWhere(b.elemS("Less", x, 3, dt), mid, g, dt)
	return b.elemMask(b.elemS("Greater", x, -3, dt), upper, dt)
}

// geluGrad: y = x·Φ(x). Exact (approximate "none"): dx = g·(Φ(x) + x·φ(x))
// with Φ(x) = (1 + erf(x/√2))/2 and φ(x) = e^(-x²/2)/√(2π). With
// approximate "tanh", y = x/2·(1 + t), t = tanh(c(x + kx³)), c = √(2/π),
// k = 0.044715: dx = g·((1 + t)/2 + x/2·(1 - t²)·c·(1 + 3kx²)).
func geluGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	op := n.Op.(*ops.Gelu)
	x2 := b.mul(x, x)
	var d string
	switch op.Approximate {
	case "none":
		cdf := b.elemS("Add", b.elemScale(b.op("Erf", []string{b.elemScale(x, 1/math.Sqrt2, dt)}), 0.5, dt), 0.5, dt)
		pdf := b.op("Exp", []string{b.elemScale(x2, -0.5, dt)})
		d = b.add(cdf, b.mul(b.elemScale(x, 1/math.Sqrt(2*math.Pi), dt), pdf))
	case "tanh":
		const k = 0.044715
		c := math.Sqrt(2 / math.Pi)
		inner := b.mul(b.elemScale(x, c, dt), b.elemS("Add", b.elemScale(x2, k, dt), 1, dt)) // c(x + kx³)
		t := b.op("Tanh", []string{inner})
		half := b.elemS("Add", b.elemScale(t, 0.5, dt), 0.5, dt) // (1 + t)/2
		slope := b.elemS("Add", b.elemScale(x2, 3*k, dt), 1, dt) // 1 + 3kx²
		d = b.add(half, b.mul(b.mul(b.elemScale(x, c/2, dt), b.elemOneMinusSquare(t, dt)), slope))
	default:
		b.fail("Gelu approximate must be none or tanh, got %q", op.Approximate)
		return ""
	}
	return b.mul(g, d)
}

// mishGrad: y = x·t, t = tanh(softplus(x)); dx = g·(t + x·σ(x)·(1 - t²)).
func mishGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	t := b.op("Tanh", []string{b.op("Softplus", []string{x})})
	d := b.add(t, b.mul(b.mul(x, b.op("Sigmoid", []string{x})), b.elemOneMinusSquare(t, dt)))
	return b.mul(g, d)
}

// tanhGrad: dx = g·(1 - y²) = g - g·y².
func tanhGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.sub(g, b.mul(g, b.mul(y, y)))
}

// softplusGrad: y = ln(1 + eˣ); dx = g·σ(x).
func softplusGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.mul(g, b.op("Sigmoid", []string{x}))
}

// softsignGrad: y = x/(1 + |x|); dx = g/(1 + |x|)².
func softsignGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	d := b.elemS("Add", b.op("Abs", []string{x}), 1, dt)
	return b.div(g, b.mul(d, d))
}

// thresholdedReluGrad: dx = g·[x > α].
func thresholdedReluGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	op := n.Op.(*ops.ThresholdedRelu)
	return b.elemMask(b.elemS("Greater", x, float64(op.Alpha), dt), g, dt)
}

// shrinkGrad: dx = g·[x < -λ or x > λ]; the bias only shifts y.
func shrinkGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	op := n.Op.(*ops.Shrink)
	l := float64(op.Lambd)
	out := b.op("Or", []string{b.elemS("Less", x, -l, dt), b.elemS("Greater", x, l, dt)})
	return b.elemMask(out, g, dt)
}

// expGrad: dx = g·y.
func expGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.mul(g, y)
}

// logGrad: dx = g/x.
func logGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.div(g, x)
}

// sqrtGrad: dx = g/(2y).
func sqrtGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.div(b.elemScale(g, 0.5, dt), y)
}

// reciprocalGrad: y = 1/x; dx = -g·y².
func reciprocalGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.neg(b.mul(g, b.mul(y, y)))
}

// negGrad: dx = -g.
func negGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.neg(g)
}

// absGrad: dx = g·sign(x) (0 at 0).
func absGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	if b.opset >= 9 {
		return b.mul(g, b.op("Sign", []string{x}))
	}
	pos := b.cast(b.elemS("Greater", x, 0, dt), dt)
	neg := b.cast(b.elemS("Less", x, 0, dt), dt)
	return b.mul(g, b.sub(pos, neg))
}

// erfGrad: dx = g·2/√π·e^(-x²).
func erfGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	e := b.op("Exp", []string{b.neg(b.mul(x, x))})
	return b.mul(g, b.elemScale(e, 2/math.Sqrt(math.Pi), dt))
}

// sinGrad: dx = g·cos x.
func sinGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.mul(g, b.op("Cos", []string{x}))
}

// cosGrad: dx = -g·sin x.
func cosGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.neg(b.mul(g, b.op("Sin", []string{x})))
}

// tanGrad: dx = g·(1 + y²).
func tanGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.mul(g, b.elemS("Add", b.mul(y, y), 1, dt))
}

// elemOneMinusSquare is 1 - x².
func (b *builder) elemOneMinusSquare(x string, dt onnx.DataType) string {
	return b.op("Sub", []string{b.scalar(1, dt), b.mul(x, x)})
}

// asinGrad: dx = g/√(1 - x²).
func asinGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.div(g, b.op("Sqrt", []string{b.elemOneMinusSquare(x, dt)}))
}

// acosGrad: dx = -g/√(1 - x²).
func acosGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.neg(asinGrad(b, n, x, y, g, dt))
}

// atanGrad: dx = g/(1 + x²).
func atanGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.div(g, b.elemS("Add", b.mul(x, x), 1, dt))
}

// sinhGrad: dx = g·cosh x.
func sinhGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.mul(g, b.op("Cosh", []string{x}))
}

// coshGrad: dx = g·sinh x.
func coshGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.mul(g, b.op("Sinh", []string{x}))
}

// asinhGrad: dx = g/√(x² + 1).
func asinhGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.div(g, b.op("Sqrt", []string{b.elemS("Add", b.mul(x, x), 1, dt)}))
}

// acoshGrad: dx = g/√(x² - 1).
func acoshGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.div(g, b.op("Sqrt", []string{b.elemS("Sub", b.mul(x, x), 1, dt)}))
}

// atanhGrad: dx = g/(1 - x²).
func atanhGrad(b *builder, n *onnx.Node, x, y, g string, dt onnx.DataType) string {
	return b.div(g, b.elemOneMinusSquare(x, dt))
}

// clipGrad: y = min(max(x, lo), hi); dx = g·[lo ≤ x ≤ hi] (a value equal
// to a bound passes). The bounds are attributes before version 11 (±∞
// when absent) and optional inputs from 11. Versions 11 and 12 leave the
// bounds differentiable: dhi = Σ g over the elements set to hi (max(x, lo)
// > hi), dlo = Σ g over the others set to lo (x < lo); 13 marks them
// non-differentiable.
func clipGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.Clip)
	g, x := dy[0], op.In.Input
	if g == "" {
		return nil
	}
	dt := b.typeOf(x)
	out := make([]string, len(n.Inputs))
	if op.SinceVersion() < 11 {
		lo, hi := math.Inf(-1), math.Inf(1)
		if op.Min != nil {
			lo = float64(*op.Min)
		}
		if op.Max != nil {
			hi = float64(*op.Max)
		}
		if !need[0] || lo > hi {
			return nil
		}
		var conds []string
		// x ≥ lo and x ≤ hi; before opset 12 (no GreaterOrEqual) as strict
		// comparisons with the neighbouring floats.
		if lo > math.Inf(-1) {
			if b.opset >= 12 {
				conds = append(conds, b.elemS("GreaterOrEqual", x, lo, dt))
			} else if dt == onnx.Float || dt == onnx.Double {
				conds = append(conds, b.elemS("Greater", x, elemNext(lo, dt, math.Inf(-1)), dt))
			} else {
				b.fail("Clip gradients of tensor(%v) need ai.onnx opset 12 or later", dt)
			}
		}
		if hi < math.Inf(1) {
			if b.opset >= 12 {
				conds = append(conds, b.elemS("LessOrEqual", x, hi, dt))
			} else if dt == onnx.Float || dt == onnx.Double {
				conds = append(conds, b.elemS("Less", x, elemNext(hi, dt, math.Inf(1)), dt))
			} else {
				b.fail("Clip gradients of tensor(%v) need ai.onnx opset 12 or later", dt)
			}
		}
		out[0] = b.elemClipPass(g, conds, dt)
		return out
	}
	lo, hi := op.In.Min, op.In.Max
	if need[0] {
		var conds []string
		if lo != "" {
			if b.opset >= 12 {
				conds = append(conds, b.op("GreaterOrEqual", []string{x, lo}))
			} else {
				conds = append(conds, b.op("Not", []string{b.op("Less", []string{x, lo})}))
			}
		}
		if hi != "" {
			if b.opset >= 12 {
				conds = append(conds, b.op("LessOrEqual", []string{x, hi}))
			} else {
				conds = append(conds, b.op("Not", []string{b.op("Greater", []string{x, hi})}))
			}
		}
		out[0] = b.elemClipPass(g, conds, dt)
	}
	wantLo := lo != "" && need[1] && elemDifferentiable(n, 1)
	wantHi := hi != "" && len(need) > 2 && need[2] && elemDifferentiable(n, 2)
	if !wantLo && !wantHi {
		return out
	}
	all := make([]int64, len(b.shapeOf(x)))
	for i := range all {
		all[i] = int64(i)
	}
	total := func(cond, bound string) string {
		s := b.reduceSum(b.elemMask(cond, g, dt), all, false)
		b.info[s] = Info{Type: dt, Shape: []int64{}}
		return b.reshapeLike(s, bound)
	}
	var toHi string
	if hi != "" {
		clamped := x
		if lo != "" {
			clamped = b.op("Max", []string{x, lo})
		}
		toHi = b.op("Greater", []string{clamped, hi})
		if wantHi {
			out[2] = total(toHi, hi)
		}
	}
	if wantLo {
		toLo := b.op("Less", []string{x, lo})
		if toHi != "" {
			toLo = b.op("And", []string{toLo, b.op("Not", []string{toHi})})
		}
		out[1] = total(toLo, lo)
	}
	return out
}

// elemClipPass is g where every condition holds, 0 elsewhere.
func (b *builder) elemClipPass(g string, conds []string, dt onnx.DataType) string {
	if len(conds) == 0 {
		return g
	}
	c := conds[0]
	for _, d := range conds[1:] {
		c = b.op("And", []string{c, d})
	}
	return b.elemMask(c, g, dt)
}
