package metrics

import (
	"math"
	"strconv"

	"github.com/deep500/deep500-go/onnx"
)

// Rules of difftest's generator for element-wise operators: the domains
// of their inputs, and the operators whose attributes or extra inputs the
// element-wise default cannot make (casts, shifts, clipping, dropout and
// the random generators).

func init() {
	for op, d := range map[string]valueDomain{
		// https://onnx.ai/onnx/operators/onnx__Log.html and the others
		// defined on part of the line.
		"Log":   rangeDomain(0.05, 5),
		"Sqrt":  rangeDomain(0, 5),
		"Acos":  rangeDomain(-0.99, 0.99),
		"Asin":  rangeDomain(-0.99, 0.99),
		"Atanh": rangeDomain(-0.95, 0.95),
		"Acosh": rangeDomain(1, 5),
		"Tan":   rangeDomain(-1.4, 1.4),
		"Reciprocal": func(g *gen, _ int, dt onnx.DataType, shape []int) *onnx.Tensor {
			return g.randNonZero(dt, -3, 3, shape...)
		},
		// Ties (x.5) and whole numbers are where rounding differs.
		"Round": gridDomain(-4, 4, 0.25),
		"Floor": gridDomain(-4, 4, 0.25),
		"Ceil":  gridDomain(-4, 4, 0.25),
		"Sign":  gridDomain(-2, 2, 0.5),
		"Relu":  gridDomain(-2, 2, 0.25),
		"IsNaN": specialsDomain,
		"IsInf": specialsDomain,
		// A divisor away from zero; integer division by zero is undefined.
		"Div": func(g *gen, i int, dt onnx.DataType, shape []int) *onnx.Tensor {
			if i == 1 {
				return g.randNonZero(dt, -5, 5, shape...)
			}
			return g.rand(dt, shape...)
		},
		// A positive base for floats (a negative one to a fractional
		// power is NaN, fine, but uninformative); small exponents for
		// integers so the powers stay in range.
		"Pow": func(g *gen, i int, dt onnx.DataType, shape []int) *onnx.Tensor {
			switch {
			case i == 0 && dt.IsFloat():
				return g.randIn(dt, 0.1, 3, shape...)
			case i == 0:
				return g.randIn(dt, -4, 4, shape...)
			case dt.IsFloat() && g.T("T").IsFloat():
				return g.randIn(dt, -2, 3, shape...)
			case dt.IsFloat():
				// An integer base to a fractional or negative power
				// rounds to an integer; to a NaN, undefined: whole
				// exponents keep the powers integers.
				return g.grid(dt, 0, 3, 1, shape...)
			}
			return g.randIn(dt, 0, 3, shape...)
		},
		"Bernoulli": rangeDomain(0, 1),
	} {
		valueDomains[op] = d
	}
	addRules(map[string]opRule{
		"Cast":        {gen: genCast, types: castTypes},
		"CastLike":    {gen: genCastLike, types: castTypes},
		"BitCast":     {gen: genBitCast, types: bitCastTypes},
		"BitShift":    {gen: genBitShift},
		"Mod":         {gen: genMod},
		"Clip":        {gen: genClip},
		"PRelu":       {gen: genPRelu},
		"Dropout":     {gen: genDropout},
		"Bernoulli":   {gen: genBernoulli},
		"Multinomial": {gen: genMultinomial},
		"RandomNormal": {gen: func(g *gen) error {
			return genRandomShape(g, "mean", "scale")
		}},
		"RandomUniform": {gen: func(g *gen) error {
			return genRandomShape(g, "low", "high")
		}},
		"RandomNormalLike": {gen: func(g *gen) error {
			return genRandomLike(g, "mean", "scale")
		}},
		"RandomUniformLike": {gen: func(g *gen) error {
			return genRandomLike(g, "low", "high")
		}},
	})
}

func gridDomain(lo, hi, step float64) valueDomain {
	return func(g *gen, _ int, dt onnx.DataType, shape []int) *onnx.Tensor {
		if !dt.IsFloat() {
			return g.rand(dt, shape...)
		}
		return g.grid(dt, lo, hi, step, shape...)
	}
}

// specialsDomain mixes NaN and both infinities into ordinary values.
func specialsDomain(g *gen, _ int, dt onnx.DataType, shape []int) *onnx.Tensor {
	t := g.rand(dt, shape...)
	for i := range t.Len() {
		switch g.intn(5) {
		case 0:
			setFloat(t, i, math.NaN())
		case 1:
			setFloat(t, i, math.Inf(1))
		case 2:
			setFloat(t, i, math.Inf(-1))
		}
	}
	return t
}

func isUnsigned(dt onnx.DataType) bool {
	switch dt {
	case onnx.Uint8, onnx.Uint16, onnx.Uint32, onnx.Uint64, onnx.Uint4, onnx.Uint2:
		return true
	}
	return false
}

// bitWidth is the number of bits of an element (0 for strings).
func bitWidth(dt onnx.DataType) int {
	switch dt {
	case onnx.Bool, onnx.Uint8, onnx.Int8, onnx.Float8E4M3FN, onnx.Float8E4M3FNUZ, onnx.Float8E5M2, onnx.Float8E5M2FNUZ, onnx.Float8E8M0:
		return 8
	case onnx.Uint16, onnx.Int16, onnx.Float16, onnx.BFloat16:
		return 16
	case onnx.Uint32, onnx.Int32, onnx.Float:
		return 32
	case onnx.Uint64, onnx.Int64, onnx.Double, onnx.Complex64:
		return 64
	case onnx.Complex128:
		return 128
	case onnx.Uint4, onnx.Int4, onnx.Float4E2M1:
		return 4
	case onnx.Uint2, onnx.Int2:
		return 2
	}
	return 0
}

func isFloat8(dt onnx.DataType) bool {
	switch dt {
	case onnx.Float8E4M3FN, onnx.Float8E4M3FNUZ, onnx.Float8E5M2, onnx.Float8E5M2FNUZ, onnx.Float8E8M0, onnx.Float4E2M1:
		return true
	}
	return false
}

// castTypes keeps the casts both backends have a chance of: complex
// types have no casts in ONNX.
func castTypes(t map[string]string) bool {
	return t["T1"] != "tensor(complex64)" && t["T1"] != "tensor(complex128)"
}

// castSource draws the values to cast from src to dst: in the range
// where the cast is defined (no negative values to an unsigned type from
// a float, whose conversion C leaves undefined), numbers as strings, and
// out-of-range values for the saturating and wrapping conversions.
func (g *gen) castSource(src, dst onnx.DataType, shape ...int) *onnx.Tensor {
	lo, hi := valueRange(src)
	if src.IsFloat() {
		lo, hi = -4, 4
		if isUnsigned(dst) || dst == onnx.Float8E8M0 || dst == onnx.Bool {
			lo = 0
		}
		if isFloat8(dst) && g.coin() && src != onnx.Float4E2M1 && bitWidth(src) > 8 {
			lo, hi = -600, 600 // beyond float8e4m3's 448: saturation
		}
		if src == onnx.Float8E8M0 {
			lo, hi = 0.125, 8
		}
		return g.grid(src, lo, hi, (hi-lo)/64, shape...)
	}
	if src == onnx.String {
		num := g.grid(onnx.Float, -4, 4, 0.125, shape...)
		if isUnsigned(dst) || dst == onnx.Float8E8M0 {
			num = g.grid(onnx.Float, 0, 4, 0.125, shape...)
		}
		if dst.IsInteger() {
			num = g.rand(onnx.Int64, shape...)
			if isUnsigned(dst) {
				num = g.randIn(onnx.Int64, 0, 10, shape...)
			}
		}
		out := onnx.NewTensor(onnx.String, shape...)
		d := out.Data.([]string)
		for i, v := range floatsOf(num) {
			d[i] = formatNumber(v)
		}
		return out
	}
	return g.randIn(src, lo, hi, shape...)
}

func formatNumber(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// genCast: https://onnx.ai/onnx/operators/onnx__Cast.html
func genCast(g *gen) error {
	src, dst := g.T("T1"), g.T("T2")
	g.in(0, g.castSource(src, dst, g.dims(g.between(0, 3), 1, 4)...))
	if g.since == 1 {
		g.attrString("to", dst.String())
	} else {
		g.attrInt("to", int64(dst))
	}
	castAttrs(g, dst)
	return nil
}

// castAttrs sets saturate and round_mode where the version has them and
// the target type uses them.
func castAttrs(g *gen, dst onnx.DataType) {
	if g.hasAttr("saturate") && isFloat8(dst) && g.coin() {
		g.attrInt("saturate", int64(g.intn(2)))
	}
	if g.hasAttr("round_mode") && dst == onnx.Float8E8M0 && g.coin() {
		g.attrString("round_mode", pick(g, "up", "down", "nearest"))
	}
}

// genCastLike: https://onnx.ai/onnx/operators/onnx__CastLike.html
func genCastLike(g *gen) error {
	src, dst := g.T("T1"), g.T("T2")
	g.in(0, g.castSource(src, dst, g.dims(g.between(0, 3), 1, 4)...))
	g.in(1, g.rand(dst, g.dims(g.between(0, 2), 1, 3)...))
	castAttrs(g, dst)
	return nil
}

// bitCastTypes keeps pairs of one bit width.
func bitCastTypes(t map[string]string) bool {
	a, errA := onnx.ParseTypeString(t["T1"])
	b, errB := onnx.ParseTypeString(t["T2"])
	return errA == nil && errB == nil && bitWidth(a.Elem) == bitWidth(b.Elem) && bitWidth(a.Elem) >= 8
}

// genBitCast: https://onnx.ai/onnx/operators/onnx__BitCast.html
func genBitCast(g *gen) error {
	src, dst := g.T("T1"), g.T("T2")
	x := g.rand(src, g.dims(g.between(0, 3), 1, 4)...)
	if dst.IsFloat() && src != dst {
		// Integers whose bits are ordinary floats of the target type
		// would be rare; any bits are fine except NaN payloads, which
		// need not survive the round trip through a float register.
		x = g.randIn(src, 0, 60, x.Shape...)
	}
	g.in(0, x)
	g.attrInt("to", int64(dst))
	return nil
}

// genBitShift: https://onnx.ai/onnx/operators/onnx__BitShift.html
func genBitShift(g *gen) error {
	dt := g.T("T")
	shapes := g.broadcastShapes(2, g.between(0, 3))
	g.in(0, g.randIn(dt, 0, 100, shapes[0]...))
	g.in(1, g.randIn(dt, 0, float64(bitWidth(dt)-1), shapes[1]...))
	g.attrString("direction", pick(g, "LEFT", "RIGHT"))
	return nil
}

// genMod: https://onnx.ai/onnx/operators/onnx__Mod.html (fmod=0 on
// floats only from the versions that define it).
func genMod(g *gen) error {
	dt := g.T("T")
	shapes := g.broadcastShapes(2, g.between(0, 3))
	fmod := int64(g.intn(2))
	if dt.IsFloat() && g.since < 28 {
		fmod = 1
	}
	if fmod == 1 || g.coin() {
		g.attrInt("fmod", fmod)
	}
	if dt.IsFloat() {
		g.in(0, g.grid(dt, -6, 6, 0.25, shapes[0]...))
		g.in(1, g.randNonZero(dt, -3, 3, shapes[1]...))
		return nil
	}
	g.in(0, g.randIn(dt, -20, 20, shapes[0]...))
	g.in(1, g.randNonZero(dt, -6, 6, shapes[1]...))
	if isUnsigned(dt) {
		g.in(0, g.randIn(dt, 0, 40, shapes[0]...))
		g.in(1, g.randIn(dt, 1, 7, shapes[1]...))
	}
	return nil
}

// genClip: https://onnx.ai/onnx/operators/onnx__Clip.html
func genClip(g *gen) error {
	dt := g.T("T")
	x := g.rand(dt, g.dims(g.between(0, 4), 1, 4)...)
	g.in(0, x)
	lo, hi := valueRange(dt)
	a := float64(g.between(int(lo), int(hi)/2))
	b := a + float64(g.between(0, int(hi)))
	if g.since < 11 {
		if g.coin() {
			g.attrFloat("min", a)
		}
		if g.coin() {
			g.attrFloat("max", b)
		}
		return nil
	}
	switch g.intn(4) {
	case 0: // neither
	case 1:
		g.in(1, scalarOf(dt, a))
	case 2:
		g.setInput(1, nil)
		g.in(2, scalarOf(dt, b))
	default:
		g.in(1, scalarOf(dt, a))
		g.in(2, scalarOf(dt, b))
	}
	return nil
}

// genPRelu: the slope broadcasts to X in one direction:
// https://onnx.ai/onnx/operators/onnx__PRelu.html
func genPRelu(g *gen) error {
	dt := g.T("T")
	x := g.dims(g.between(1, 4), 1, 4)
	var slope []int
	switch {
	case g.since < 7:
		slope = x
	case g.coin() && len(x) > 1:
		slope = append([]int{x[1]}, make([]int, len(x)-2)...) // per channel, as converters write it
		for i := 1; i < len(slope); i++ {
			slope[i] = 1
		}
	default:
		slope = append([]int{}, x[g.intn(len(x)):]...)
		for i := range slope {
			if g.coin() {
				slope[i] = 1
			}
		}
	}
	g.in(0, g.rand(dt, x...))
	g.in(1, g.randIn(dt, -1, 1, slope...))
	if !dt.IsFloat() {
		g.in(1, g.randIn(dt, 0, 3, slope...))
	}
	return nil
}

// genDropout: in inference mode the output is the input; with
// training_mode it is random. https://onnx.ai/onnx/operators/onnx__Dropout.html
func genDropout(g *gen) error {
	dt := g.T("T")
	g.in(0, g.rand(dt, g.dims(g.between(1, 4), 1, 4)...))
	g.outputs(g.between(1, 2))
	if g.since < 12 {
		g.maybeFloat("ratio", roundTo(g.uniform(0, 0.9), 0.1))
		return nil
	}
	ratio := roundTo(g.uniform(0, 0.9), 0.1)
	training := g.coin()
	switch {
	case training:
		g.in(1, scalarOf(g.T("T1"), ratio))
		g.in(2, &onnx.Tensor{Type: onnx.Bool, Shape: []int{}, Data: []bool{true}})
		if ratio > 0 {
			g.randomOutputs("Dropout with training_mode drops elements at random")
		}
		g.attrInt("seed", int64(g.between(0, 1000)))
	case g.coin():
		g.in(1, scalarOf(g.T("T1"), ratio))
	}
	return nil
}

// genBernoulli: https://onnx.ai/onnx/operators/onnx__Bernoulli.html
func genBernoulli(g *gen) error {
	g.in(0, g.randIn(g.T("T1"), 0, 1, g.dims(g.between(1, 3), 1, 4)...))
	g.attrInt("dtype", int64(g.T("T2")))
	if g.coin() {
		g.attrFloat("seed", float64(g.between(0, 100)))
	}
	g.randomOutputs("Bernoulli draws")
	return nil
}

// genMultinomial: https://onnx.ai/onnx/operators/onnx__Multinomial.html
func genMultinomial(g *gen) error {
	g.in(0, g.randIn(g.T("T1"), -2, 2, g.between(1, 3), g.between(2, 5)))
	g.attrInt("dtype", int64(g.T("T2")))
	g.attrInt("sample_size", int64(g.between(1, 4)))
	if g.coin() {
		g.attrFloat("seed", float64(g.between(0, 100)))
	}
	g.randomOutputs("Multinomial draws")
	return nil
}

// genRandomShape: RandomNormal and RandomUniform.
func genRandomShape(g *gen, a, b string) error {
	shape := g.dims(g.between(1, 3), 1, 4)
	g.attrInts("shape", toInt64s(shape)...)
	g.attrInt("dtype", int64(g.T("T")))
	g.distributionAttrs(a, b)
	return nil
}

// distributionAttrs sets the random operators' two distribution
// parameters (named a and b: mean and scale, or low and high), at times a
// seed, and marks the outputs as random draws.
func (g *gen) distributionAttrs(a, b string) {
	g.attrFloat(a, float64(g.between(-2, 0)))
	g.attrFloat(b, float64(g.between(1, 3)))
	if g.coin() {
		g.attrFloat("seed", float64(g.between(0, 100)))
	}
	g.randomOutputs(g.s.OpType + " draws")
}

// genRandomLike: RandomNormalLike and RandomUniformLike.
func genRandomLike(g *gen, a, b string) error {
	g.in(0, g.rand(g.T("T1"), g.dims(g.between(1, 3), 1, 4)...))
	g.attrInt("dtype", int64(g.T("T2")))
	g.distributionAttrs(a, b)
	return nil
}
