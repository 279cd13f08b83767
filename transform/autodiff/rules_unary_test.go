package autodiff_test

import (
	"fmt"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// elemUnaryCase is one element-wise function under test: the opsets to
// build it at, its attributes, the range its input is drawn from (normal
// draws when lo == hi) and its kinks, which the input keeps away from.
type elemUnaryCase struct {
	op     string
	opsets []int64
	attrs  []*onnx.Attribute
	lo, hi float64
	kinks  []float64
}

var elemUnaryCases = []elemUnaryCase{
	{op: "Relu", opsets: []int64{7, 13, 14}, kinks: []float64{0}},
	{op: "LeakyRelu", opsets: []int64{7, 16}, kinks: []float64{0}},
	{op: "LeakyRelu", opsets: []int64{16}, attrs: []*onnx.Attribute{floatAttr("alpha", 0.3)}, kinks: []float64{0}},
	{op: "Elu", opsets: []int64{7, 22}, kinks: []float64{0}},
	{op: "Elu", opsets: []int64{7}, attrs: []*onnx.Attribute{floatAttr("alpha", 0.4)}, kinks: []float64{0}},
	{op: "Selu", opsets: []int64{7, 22}, kinks: []float64{0}},
	{op: "Selu", opsets: []int64{7}, attrs: []*onnx.Attribute{floatAttr("alpha", 1.2), floatAttr("gamma", 0.8)}, kinks: []float64{0}},
	{op: "Celu", opsets: []int64{12}, kinks: []float64{0}},
	{op: "Celu", opsets: []int64{12}, attrs: []*onnx.Attribute{floatAttr("alpha", 0.5)}, kinks: []float64{0}},
	{op: "Sigmoid", opsets: []int64{7, 13}},
	{op: "HardSigmoid", opsets: []int64{7, 22}, lo: -6, hi: 6, kinks: []float64{-2.5, 2.5}},
	{op: "HardSigmoid", opsets: []int64{7}, attrs: []*onnx.Attribute{floatAttr("alpha", 0.5), floatAttr("beta", 0.25)}, lo: -3, hi: 3, kinks: []float64{-0.5, 1.5}},
	{op: "HardSwish", opsets: []int64{14, 22}, lo: -5, hi: 5, kinks: []float64{-3, 3}},
	{op: "Gelu", opsets: []int64{20}},
	{op: "Gelu", opsets: []int64{20}, attrs: []*onnx.Attribute{strAttr("approximate", "tanh")}},
	{op: "Mish", opsets: []int64{18, 22}},
	{op: "Tanh", opsets: []int64{7, 13}},
	{op: "Softplus", opsets: []int64{7, 22}},
	{op: "Softsign", opsets: []int64{7, 22}},
	{op: "ThresholdedRelu", opsets: []int64{10, 22}, kinks: []float64{1}},
	{op: "ThresholdedRelu", opsets: []int64{10}, attrs: []*onnx.Attribute{floatAttr("alpha", 0.3)}, kinks: []float64{0.3}},
	{op: "Shrink", opsets: []int64{9}, kinks: []float64{-0.5, 0.5}},
	{op: "Shrink", opsets: []int64{9}, attrs: []*onnx.Attribute{floatAttr("lambd", 0.8), floatAttr("bias", 0.3)}, kinks: []float64{-0.8, 0.8}},
	{op: "Exp", opsets: []int64{7, 13}},
	{op: "Log", opsets: []int64{7, 13}, lo: 0.5, hi: 3},
	{op: "Sqrt", opsets: []int64{7, 13}, lo: 0.5, hi: 3},
	{op: "Reciprocal", opsets: []int64{7, 13}, lo: 0.5, hi: 3},
	{op: "Neg", opsets: []int64{7, 13}},
	{op: "Abs", opsets: []int64{7, 13}, kinks: []float64{0}},
	{op: "Erf", opsets: []int64{9, 13}},
	{op: "Sin", opsets: []int64{7, 22}},
	{op: "Cos", opsets: []int64{7, 22}},
	{op: "Tan", opsets: []int64{7, 22}, lo: -1.2, hi: 1.2},
	{op: "Asin", opsets: []int64{7, 22}, lo: -0.9, hi: 0.9},
	{op: "Acos", opsets: []int64{7, 22}, lo: -0.9, hi: 0.9},
	{op: "Atan", opsets: []int64{7, 22}},
	{op: "Sinh", opsets: []int64{9, 22}},
	{op: "Cosh", opsets: []int64{9, 22}},
	{op: "Asinh", opsets: []int64{9, 22}},
	{op: "Acosh", opsets: []int64{9, 22}, lo: 1.2, hi: 3},
	{op: "Atanh", opsets: []int64{9, 22}, lo: -0.9, hi: 0.9},
}

func (c elemUnaryCase) input(m *model, shape ...int) *onnx.Tensor {
	t := m.randn(shape...)
	if c.lo != c.hi {
		t = elemUniform(m, c.lo, c.hi, shape...)
	}
	return elemAway(t, 0.05, c.kinks...)
}

func TestUnaryGradients(t *testing.T) {
	for _, c := range elemUnaryCases {
		for _, opset := range c.opsets {
			t.Run(fmt.Sprintf("%s-%d/%d-attrs", c.op, opset, len(c.attrs)), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", c.input(m, 3, 4))
				m.node(c.op, []string{"x"}, []string{"y"}, c.attrs...)
				checkGradients(t, m, "y")
			})
		}
	}
}

// TestUnaryGradientsDouble runs each function on float64, its input a
// parameter feeding two uses (the gradients add up).
func TestUnaryGradientsDouble(t *testing.T) {
	for _, c := range elemUnaryCases {
		opset := c.opsets[len(c.opsets)-1]
		t.Run(fmt.Sprintf("%s-%d", c.op, opset), func(t *testing.T) {
			m := newModel(t, opset)
			m.param("x", elemDouble(c.input(m, 2, 3)))
			m.node(c.op, []string{"x"}, []string{"fx"}, c.attrs...)
			m.node("Mul", []string{"fx", "x"}, []string{"p"})
			elemToFloat(m, "p", "y")
			checkGradients(t, m, "y")
		})
	}
}

// TestUnaryGradientsOldOpsets builds the functions that exist before opset
// 9 next to a MatMul of version 1, which keeps the training graph at the
// model's opset (MatMul changes at 9): the rules must then do without
// Where and Sign. (Below opset 8 the driver has no Expand to seed the
// loss's gradient with, so no model trains there.)
func TestUnaryGradientsOldOpsets(t *testing.T) {
	for _, c := range elemUnaryCases {
		for _, opset := range []int64{8} {
			if c.opsets[0] > opset {
				continue
			}
			t.Run(fmt.Sprintf("%s-%d/%d-attrs", c.op, opset, len(c.attrs)), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", c.input(m, 3, 4))
				m.param("w", m.randn(4, 2))
				m.node(c.op, []string{"x"}, []string{"fx"}, c.attrs...)
				m.node("MatMul", []string{"fx", "w"}, []string{"y"})
				res := checkGradients(t, m, "y")
				if res.Opset != opset {
					t.Fatalf("the training graph has opset %d, want %d", res.Opset, opset)
				}
			})
		}
	}
}

// TestUnaryGradientsFreeBatch leaves the batch dimension free.
func TestUnaryGradientsFreeBatch(t *testing.T) {
	for _, op := range []string{"Relu", "HardSwish", "Gelu", "Acosh"} {
		for _, c := range elemUnaryCases {
			if c.op != op {
				continue
			}
			checkBatches(t, c.opsets[len(c.opsets)-1], func(m *model, batch int) {
				m.input("x", c.input(m, batch, 3))
				m.node(c.op, []string{"x"}, []string{"y"}, c.attrs...)
			}, "y")
			break
		}
	}
}

// TestPiecewiseConstantGradients: Floor, Ceil, Round, Sign and Hardmax
// pass nothing; y = f(x)·x has dy/dx = f(x).
func TestPiecewiseConstantGradients(t *testing.T) {
	for _, c := range []struct {
		op    string
		opset int64
	}{{"Floor", 8}, {"Floor", 13}, {"Ceil", 8}, {"Ceil", 13}, {"Round", 11}, {"Round", 22}, {"Sign", 9}, {"Sign", 13},
		{"Hardmax", 9}, {"Hardmax", 13}} {
		t.Run(fmt.Sprintf("%s-%d", c.op, c.opset), func(t *testing.T) {
			m := newModel(t, c.opset)
			m.input("x", elemAway(m.randn(3, 4), 0.05, -1, 0, 1, -0.5, 0.5, 1.5, -1.5))
			m.node(c.op, []string{"x"}, []string{"fx"})
			m.node("Mul", []string{"fx", "x"}, []string{"y"})
			checkGradients(t, m, "y")
		})
	}
}

func TestClipGradients(t *testing.T) {
	lo, hi := float32(-0.5), float32(0.7)
	// x holds both bounds exactly (the gradient passes there) and values
	// on either side of them.
	x := func(m *model) *onnx.Tensor {
		t := elemAway(m.randn(3, 4), 0.05, float64(lo), float64(hi))
		t.Float32s()[0], t.Float32s()[5] = lo, hi
		return t
	}
	for _, c := range []struct {
		name   string
		opset  int64
		attrs  []*onnx.Attribute
		bounds []string // "lo", "hi" or "" per bound input, from 11
	}{
		{name: "attrs", opset: 8, attrs: []*onnx.Attribute{floatAttr("min", lo), floatAttr("max", hi)}},
		{name: "attrs", opset: 10, attrs: []*onnx.Attribute{floatAttr("min", lo), floatAttr("max", hi)}},
		{name: "min attr", opset: 10, attrs: []*onnx.Attribute{floatAttr("min", lo)}},
		{name: "max attr", opset: 10, attrs: []*onnx.Attribute{floatAttr("max", hi)}},
		{name: "default attrs", opset: 10},
		{name: "crossed attrs", opset: 10, attrs: []*onnx.Attribute{floatAttr("min", hi), floatAttr("max", lo)}},
		{name: "inputs", opset: 11, bounds: []string{"lo", "hi"}},
		{name: "min input", opset: 11, bounds: []string{"lo"}},
		{name: "max input", opset: 11, bounds: []string{"", "hi"}},
		{name: "inputs", opset: 12, bounds: []string{"lo", "hi"}},
		{name: "inputs", opset: 13, bounds: []string{"lo", "hi"}},
		{name: "max input", opset: 17, bounds: []string{"", "hi"}},
		{name: "no inputs", opset: 13},
	} {
		t.Run(fmt.Sprintf("%s-%d", c.name, c.opset), func(t *testing.T) {
			m := newModel(t, c.opset)
			m.input("x", x(m))
			ins := []string{"x"}
			for _, bnd := range c.bounds {
				ins = append(ins, bnd)
				switch bnd {
				case "lo":
					m.param("lo", onnx.Scalar(lo))
				case "hi":
					m.param("hi", onnx.Scalar(hi))
				}
			}
			m.node("Clip", ins, []string{"y"}, c.attrs...)
			checkGradients(t, m, "y")
		})
	}
	t.Run("double", func(t *testing.T) {
		m := newModel(t, 13)
		m.input("x", elemDouble(x(m)))
		m.param("lo", onnx.Scalar(float64(lo)))
		m.node("Clip", []string{"x", "lo"}, []string{"c"})
		elemToFloat(m, "c", "y")
		checkGradients(t, m, "y")
	})
	t.Run("double attrs", func(t *testing.T) {
		m := newModel(t, 9)
		m.input("x", elemDouble(x(m)))
		m.node("Clip", []string{"x"}, []string{"c"}, floatAttr("min", lo), floatAttr("max", hi))
		elemToFloat(m, "c", "y")
		checkGradients(t, m, "y")
	})
	t.Run("free batch", func(t *testing.T) {
		checkBatches(t, 12, func(m *model, batch int) {
			m.input("x", elemAway(m.randn(batch, 4), 0.05, float64(lo), float64(hi)))
			if batch == 2 {
				m.param("lo", onnx.Scalar(lo))
				m.param("hi", onnx.Scalar(hi))
			}
			m.node("Clip", []string{"x", "lo", "hi"}, []string{"y"})
		}, "y")
	})
}
