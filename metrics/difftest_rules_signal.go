package metrics

import (
	"github.com/deep500/deep500-go/onnx"
)

// Rules of difftest's generator for the signal operators: DFT, STFT, the
// windows and MelWeightMatrix.

func init() {
	addRules(map[string]opRule{
		"DFT":            {gen: genDFT},
		"STFT":           {gen: genSTFT},
		"HannWindow":     {gen: genWindow},
		"HammingWindow":  {gen: genWindow},
		"BlackmanWindow": {gen: genWindow},
		"MelWeightMatrix": {gen: func(g *gen) error {
			t1, t2 := g.T("T1"), g.T("T2")
			g.in(0, scalarOf(t1, float64(g.between(1, 6))))
			g.in(1, scalarOf(t1, float64(pick(g, 8, 16, 32))))
			rate := float64(pick(g, 8000, 16000))
			g.in(2, scalarOf(t1, rate))
			lower := float64(pick(g, 0, 100, 300))
			g.in(3, scalarOf(t2, lower))
			g.in(4, scalarOf(t2, float64(pick(g, 2000, 3000, 4000))))
			g.attrInt("output_datatype", int64(g.T("T3")))
			return nil
		}},
	})
}

// genDFT: real or complex input, a length that pads or truncates,
// inverse and one-sided transforms, the axis as attribute (17) or input
// (20). https://onnx.ai/onnx/operators/onnx__DFT.html
func genDFT(g *gen) error {
	dt := g.T("T1")
	n := g.between(1, 8)
	shape := []int{g.between(1, 2), n}
	if g.coin() {
		shape = append(shape, g.between(1, 3))
	}
	complexIn := g.coin()
	last := 1
	if complexIn {
		last = 2
	}
	shape = append(shape, last)
	r := len(shape)
	g.in(0, g.rand(dt, shape...))
	axis := 1
	if r == 4 && g.coin() {
		axis = 2
	}
	inverse := g.coin()
	// One-sided: a real signal forward, or a half spectrum back.
	onesided := complexIn == inverse && g.chance(0.4)
	if inverse {
		g.attrInt("inverse", 1)
	}
	if onesided {
		g.attrInt("onesided", 1)
	}
	length := shape[axis]
	if g.coin() {
		length = g.between(1, 10)
		g.indexIn(1, ints(g.T("T2"), []int64{int64(length)}, []int{}...))
	}
	if g.since >= 20 {
		if axis != r-2 || g.coin() {
			if len(g.ins) < 2 {
				g.setInput(1, nil)
			}
			ax := int64(axis)
			if g.coin() {
				ax -= int64(r)
			}
			g.indexIn(2, ints(onnx.Int64, []int64{ax}, []int{}...))
		}
	} else if axis != 1 || g.coin() {
		g.attrInt("axis", int64(axis))
	}
	return nil
}

// genSTFT: https://onnx.ai/onnx/operators/onnx__STFT.html
func genSTFT(g *gen) error {
	dt, it := g.T("T1"), g.T("T2")
	frame := g.between(2, 6)
	length := frame + g.between(0, 10)
	last := pick(g, 1, 2)
	g.in(0, g.rand(dt, g.between(1, 2), length, last))
	g.in(1, scalarOf(it, float64(g.between(1, frame))))
	withWindow := g.coin()
	if withWindow {
		g.in(2, g.randIn(dt, 0, 1, frame))
	}
	if !withWindow || g.coin() {
		if !withWindow {
			g.setInput(2, nil)
		}
		g.in(3, scalarOf(it, float64(frame)))
	}
	if last == 2 {
		g.attrInt("onesided", 0)
	} else {
		g.maybeInt("onesided", int64(g.intn(2)))
	}
	return nil
}

// genWindow: https://onnx.ai/onnx/operators/onnx__HannWindow.html
func genWindow(g *gen) error {
	g.in(0, scalarOf(g.T("T1"), float64(g.between(1, 12))))
	out := g.T("T2")
	if out != onnx.Float || g.coin() {
		g.attrInt("output_datatype", int64(out))
	}
	g.maybeInt("periodic", int64(g.intn(2)))
	return nil
}
