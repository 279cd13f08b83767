package autodiff

import (
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Rules of the broadcasting element-wise operators beyond the arithmetic
// ones: PRelu, the variadic Max, Min, Sum and Mean, and Mod. Each forms an
// operand's gradient at the output's shape and sums it back to the
// operand's shape.

func init() {
	register(preluGrad, "PRelu")
	register(variadicGrad, "Max", "Min", "Sum", "Mean")
	register(modGrad, "Mod")
}

// preluGrad: y = x where x ≥ 0, slope·x where x < 0; dx = g·slope where
// x < 0 and g elsewhere; dslope = g·x where x < 0 (0 elsewhere), summed to
// the slope's shape. The slope broadcasts to x like NumPy, or (the old
// per-channel form the native backend also reads) is a vector of x's
// channel count, aligned at axis 1.
func preluGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	x, s, g := n.Inputs[0], n.Inputs[1], dy[0]
	dt := b.typeOf(x)
	xs, ss := b.shapeOf(x), b.shapeOf(s)
	if b.err != nil {
		return nil
	}
	aligned, channel := ss, false
	if !preluBroadcasts(ss, xs) {
		if len(ss) != 1 || len(xs) < 2 || ss[0] != xs[1] {
			b.fail("PRelu slope of shape %v does not broadcast to the input's shape %v", ss, xs)
			return nil
		}
		channel = true
		aligned = make([]int64, len(xs))
		for i := range aligned {
			aligned[i] = 1
		}
		aligned[1] = ss[0]
	}
	neg := b.elemS("Less", x, 0, dt)
	out := make([]string, 2)
	if need[0] {
		var scaled string
		switch {
		case channel && b.opset < 7:
			scaled = b.op("Mul", []string{g, s}, attrInt("broadcast", 1), attrInt("axis", 1))
		case channel:
			scaled = b.mul(g, b.reshape(s, aligned...))
		default:
			scaled = b.elemBin("Mul", g, s)
		}
		out[0] = b.elemWhere(neg, scaled, g, dt)
	}
	if need[1] {
		out[1] = b.elemSumTo(b.elemMask(neg, b.mul(g, x), dt), xs, aligned, s)
	}
	return out
}

// preluBroadcasts reports whether a value of shape s broadcasts to x like
// NumPy without changing x's shape.
func preluBroadcasts(s, x []int64) bool {
	if len(s) > len(x) {
		return false
	}
	for i := range s {
		d, e := s[len(s)-1-i], x[len(x)-1-i]
		if d != 1 && d != e {
			return false
		}
	}
	return true
}

// variadicGrad: y = Sum(x₁, …, xₖ): dxᵢ = g; Mean: dxᵢ = g/k; Max and Min:
// dxᵢ = g·[xᵢ = y]/c with c the number of inputs equal to y there (a tie
// shares the gradient evenly, as the native backend does). Each is summed
// to xᵢ's shape (the inputs broadcast from version 8).
func variadicGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	y, g := n.Outputs[0], dy[0]
	dt := b.typeOf(y)
	out := make([]string, len(n.Inputs))
	k := len(n.Inputs)
	src := g
	var masks []string
	switch n.OpType {
	case "Mean":
		src = b.like(b.elemScale(g, 1/float64(k), dt), y)
	case "Max", "Min":
		if k == 1 {
			break
		}
		var count []string
		for _, x := range n.Inputs {
			m := b.elemEqual(y, x)
			masks = append(masks, m)
			count = append(count, b.cast(m, dt))
		}
		src = b.div(g, b.op("Sum", count))
	}
	for i, x := range n.Inputs {
		if !need[i] {
			continue
		}
		v := src
		if masks != nil {
			v = b.like(b.elemMask(masks[i], src, dt), y)
		}
		out[i] = b.unbroadcast(v, x)
	}
	return out
}

// modGrad: C = A - q·B with q = trunc(A/B) (fmod=1) or floor(A/B) (fmod=0,
// the floor mod floats have from version 28); away from the jumps
// dA = g and dB = -g·q, summed to each operand's shape. From version 13
// the schema marks B non-differentiable (no gradient). Integer Mod has
// none.
func modGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.Mod)
	a, c, y, g := n.Inputs[0], n.Inputs[1], n.Outputs[0], dy[0]
	dt := b.typeOf(a)
	out := make([]string, 2)
	if need[0] {
		out[0] = b.unbroadcast(g, a)
	}
	if need[1] && elemDifferentiable(n, 1) {
		r := b.div(a, c)
		var q string
		if op.Fmod == 1 {
			// trunc(r) = r - fmod(r, 1), exact.
			q = b.sub(r, b.op("Mod", []string{r, b.scalar(1, dt)}, attrInt("fmod", 1)))
		} else {
			q = b.op("Floor", []string{r})
		}
		out[1] = b.neg(b.unbroadcast(b.like(b.mul(g, q), y), c))
	}
	return out
}
