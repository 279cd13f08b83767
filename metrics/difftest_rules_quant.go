package metrics

import (
	"slices"

	"github.com/deep500/deep500-go/onnx"
)

// Rules of difftest's generator for QuantizeLinear and DequantizeLinear:
// per-tensor, per-axis (from version 13) and blocked (from 21) scales,
// zero points or output_dtype, and values that hit the rounding ties and
// saturate the target type.

func init() {
	addRules(map[string]opRule{
		"QuantizeLinear":   {gen: genQuantize, types: quantizeTypes},
		"DequantizeLinear": {gen: genDequantize, types: dequantizeTypes},
	})
}

// quantizeTypes keeps a scale of the input's float type (an int32 input
// takes a float scale) and leaves out the float8e8m0 and int32 scales.
func quantizeTypes(t map[string]string) bool {
	s, ok := t["T2"]
	if !ok || t["T3"] == "" {
		return true // the scale is T1 itself, or float before version 19
	}
	if s == "tensor(float8e8m0)" || s == "tensor(int32)" {
		return false
	}
	return s == t["T1"] || (t["T1"] == "tensor(int32)" && s == "tensor(float)")
}

func dequantizeTypes(t map[string]string) bool { return t["T2"] != "tensor(float8e8m0)" }

// quantLimits is the range of values of a quantized type.
func quantLimits(dt onnx.DataType) (lo, hi float64) {
	switch dt {
	case onnx.Int8:
		return -128, 127
	case onnx.Uint8:
		return 0, 255
	case onnx.Int16:
		return -32768, 32767
	case onnx.Uint16:
		return 0, 65535
	case onnx.Int32:
		return -1 << 20, 1 << 20
	}
	return valueRange(dt)
}

// scaleLayout draws how a scale applies to x of shape: per tensor (nil
// axis), per axis, or in blocks along the axis; it returns the scale's
// shape and sets the attributes.
func (g *gen) scaleLayout(shape []int) []int {
	r := len(shape)
	switch {
	case g.since >= 21 && r > 0 && slices.Max(shape) > 1 && g.chance(0.3):
		axis, a := g.axisAndPos(r, true)
		for shape[a] < 2 {
			axis, a = g.axisAndPos(r, true)
		}
		block := g.between(1, shape[a]-1)
		s := append([]int{}, shape...)
		s[a] = (shape[a] + block - 1) / block
		g.attrInt("axis", int64(axis))
		g.attrInt("block_size", int64(block))
		return s
	case g.since >= 13 && r > 0 && g.coin():
		axis, a := g.axisAndPos(r, true)
		if axis != 1 || g.coin() {
			g.attrInt("axis", int64(axis))
		} else if r < 2 {
			g.attrInt("axis", int64(axis))
		}
		return []int{shape[a]}
	}
	if g.coin() && g.since >= 13 {
		return []int{1}
	}
	return []int{}
}

// genQuantize: https://onnx.ai/onnx/operators/onnx__QuantizeLinear.html
func genQuantize(g *gen) error {
	x, st, q := g.inT(0), g.inT(1), g.inT(2)
	shape := g.dims(g.between(0, 3), 1, 4)
	lo, hi := quantLimits(q)
	scaleShape := g.scaleLayout(shape)
	// Scales that are powers of two and inputs on a grid of quarter
	// scales give exact ties (x/scale = k + 0.5), rounded to even.
	scale := g.grid(st, 0.25, 2, 0.25, scaleShape...)
	span := (hi - lo) / 2
	if isFloat8(q) {
		span = 8
	}
	xs := g.grid(x, -span*0.6, span*0.6, 0.25, shape...)
	if x == onnx.Int32 {
		xs = g.randIn(x, -span, span, shape...)
	}
	if g.chance(0.3) && !isFloat8(q) {
		xs = g.grid(x, -span*3, span*3, 0.5, shape...) // beyond the range: saturation
	}
	g.in(0, xs)
	g.in(1, scale)
	switch {
	case q == onnx.Uint8 && g.coin():
		// no zero point: uint8
	case g.since >= 21 && g.coin():
		g.attrInt("output_dtype", int64(q))
	default:
		zp := g.randIn(q, lo/4, hi/4, scaleShape...)
		if isFloat8(q) {
			zp = tensorOf(q, nil, scaleShape...)
		}
		g.in(2, zp)
	}
	if g.hasAttr("saturate") && isFloat8(q) && g.coin() {
		g.attrInt("saturate", int64(g.intn(2)))
	}
	return nil
}

// genDequantize: https://onnx.ai/onnx/operators/onnx__DequantizeLinear.html
func genDequantize(g *gen) error {
	q, st, out := g.inT(0), g.inT(1), g.outT(0)
	shape := g.dims(g.between(0, 3), 1, 4)
	lo, hi := quantLimits(q)
	scaleShape := g.scaleLayout(shape)
	g.in(0, g.randIn(q, lo, hi, shape...))
	g.in(1, g.grid(st, 0.25, 2, 0.25, scaleShape...))
	if q != onnx.Int32 && g.coin() {
		zp := g.randIn(q, lo/4, hi/4, scaleShape...)
		if isFloat8(q) {
			zp = tensorOf(q, nil, scaleShape...)
		}
		g.in(2, zp)
	}
	if g.hasAttr("output_dtype") && (out != st || g.coin()) {
		g.attrInt("output_dtype", int64(out))
	}
	return nil
}
