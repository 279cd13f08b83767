package autodiff_test

import (
	"fmt"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// nnCase builds one model of the neural-network rules' tests at a batch
// size: inputs, parameters and the node(s) computing "y".
type nnCase func(m *model, batch int)

type nnConvCase struct {
	name   string
	x, w   []int
	attrs  []*onnx.Attribute
	noBias bool
}

var nnConvCases = []nnConvCase{
	{name: "2d plain", x: []int{2, 3, 5, 5}, w: []int{4, 3, 3, 3}},
	{name: "2d pads", x: []int{2, 3, 5, 6}, w: []int{4, 3, 3, 2}, attrs: []*onnx.Attribute{ints("pads", 1, 0, 2, 1)}},
	{name: "2d strides uneven", x: []int{2, 3, 8, 7}, w: []int{2, 3, 3, 3}, attrs: []*onnx.Attribute{ints("strides", 2, 3), ints("pads", 1, 1, 0, 1)}},
	{name: "2d dilations", x: []int{1, 2, 9, 8}, w: []int{3, 2, 3, 2}, attrs: []*onnx.Attribute{ints("dilations", 2, 3), ints("pads", 2, 1, 1, 2)}},
	{name: "2d strides dilations", x: []int{2, 2, 10, 9}, w: []int{3, 2, 3, 3}, attrs: []*onnx.Attribute{ints("strides", 2, 3), ints("dilations", 2, 2)}},
	{name: "same upper", x: []int{2, 3, 7, 6}, w: []int{2, 3, 3, 4}, attrs: []*onnx.Attribute{strAttr("auto_pad", "SAME_UPPER"), ints("strides", 2, 2)}},
	{name: "same lower", x: []int{2, 3, 7, 6}, w: []int{2, 3, 4, 3}, attrs: []*onnx.Attribute{strAttr("auto_pad", "SAME_LOWER"), ints("strides", 2, 1)}},
	{name: "valid", x: []int{2, 3, 7, 6}, w: []int{2, 3, 3, 3}, attrs: []*onnx.Attribute{strAttr("auto_pad", "VALID"), ints("strides", 2, 2)}},
	{name: "group", x: []int{2, 4, 6, 5}, w: []int{6, 2, 3, 3}, attrs: []*onnx.Attribute{intAttr("group", 2), ints("pads", 1, 1, 1, 1), ints("strides", 2, 1)}},
	{name: "depthwise", x: []int{2, 3, 6, 6}, w: []int{6, 1, 3, 3}, attrs: []*onnx.Attribute{intAttr("group", 3), ints("pads", 1, 1, 1, 1), ints("dilations", 2, 1)}},
	{name: "1d", x: []int{2, 3, 11}, w: []int{4, 3, 3}, attrs: []*onnx.Attribute{ints("strides", 2), ints("pads", 1, 2)}},
	{name: "3d", x: []int{1, 2, 5, 4, 6}, w: []int{3, 2, 2, 3, 2}, attrs: []*onnx.Attribute{ints("strides", 2, 1, 2), ints("pads", 1, 0, 1, 0, 1, 1)}},
	{name: "3d group", x: []int{2, 4, 4, 3, 5}, w: []int{2, 2, 2, 2, 3}, attrs: []*onnx.Attribute{intAttr("group", 2), ints("dilations", 1, 1, 2)}},
	{name: "no bias", x: []int{2, 3, 5, 5}, w: []int{4, 3, 2, 2}, attrs: []*onnx.Attribute{ints("strides", 2, 2)}, noBias: true},
	{name: "kernel_shape", x: []int{2, 3, 5, 5}, w: []int{4, 3, 2, 3}, attrs: []*onnx.Attribute{ints("kernel_shape", 2, 3)}},
}

func TestConvGradients(t *testing.T) {
	for _, opset := range []int64{9, 11, 13, 17, 22} {
		for _, c := range nnConvCases {
			if opset != 17 && c.name != "2d strides uneven" && c.name != "group" {
				continue
			}
			t.Run(fmt.Sprintf("%s/opset%d", c.name, opset), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", m.randn(c.x...))
				m.param("w", m.randn(c.w...))
				ins := []string{"x", "w"}
				if !c.noBias {
					m.param("b", m.randn(c.w[0]))
					ins = append(ins, "b")
				}
				m.node("Conv", ins, []string{"y"}, c.attrs...)
				checkGradients(t, m, "y")
			})
		}
	}
}

// TestConvGradientsFreeBatch: a batch that changes between runs.
func TestConvGradientsFreeBatch(t *testing.T) {
	for _, c := range []nnConvCase{nnConvCases[2], nnConvCases[8], nnConvCases[10]} {
		t.Run(c.name, func(t *testing.T) {
			checkBatches(t, 17, func(m *model, batch int) {
				x := append([]int{batch}, c.x[1:]...)
				m.input("x", m.randn(x...))
				m.param("w", m.randn(c.w...))
				m.param("b", m.randn(c.w[0]))
				m.node("Conv", []string{"x", "w", "b"}, []string{"y"}, c.attrs...)
			}, "y")
		})
	}
}

var nnConvTransposeCases = []nnConvCase{
	{name: "2d plain", x: []int{2, 3, 4, 4}, w: []int{3, 2, 3, 3}},
	{name: "2d strides pads", x: []int{2, 3, 4, 5}, w: []int{3, 2, 3, 3}, attrs: []*onnx.Attribute{ints("strides", 2, 3), ints("pads", 1, 0, 2, 1)}},
	{name: "output_padding", x: []int{2, 3, 4, 4}, w: []int{3, 2, 3, 2}, attrs: []*onnx.Attribute{ints("strides", 2, 3), ints("pads", 1, 1, 1, 1), ints("output_padding", 1, 2)}},
	{name: "dilations", x: []int{1, 2, 4, 3}, w: []int{2, 3, 3, 2}, attrs: []*onnx.Attribute{ints("dilations", 2, 3), ints("strides", 2, 1)}},
	{name: "group", x: []int{2, 4, 3, 4}, w: []int{4, 3, 3, 3}, attrs: []*onnx.Attribute{intAttr("group", 2), ints("strides", 2, 2), ints("pads", 1, 1, 0, 0)}},
	{name: "depthwise", x: []int{2, 3, 4, 4}, w: []int{3, 1, 3, 3}, attrs: []*onnx.Attribute{intAttr("group", 3), ints("strides", 2, 2)}},
	{name: "output_shape", x: []int{2, 3, 4, 4}, w: []int{3, 2, 3, 3}, attrs: []*onnx.Attribute{ints("strides", 2, 2), ints("output_shape", 9, 8)}},
	{name: "output_shape larger", x: []int{2, 3, 3, 3}, w: []int{3, 2, 2, 2}, attrs: []*onnx.Attribute{ints("strides", 2, 2), ints("output_shape", 9, 8)}},
	{name: "same upper", x: []int{2, 3, 4, 3}, w: []int{3, 2, 3, 4}, attrs: []*onnx.Attribute{strAttr("auto_pad", "SAME_UPPER"), ints("strides", 2, 2)}},
	{name: "same lower", x: []int{2, 3, 4, 3}, w: []int{3, 2, 3, 4}, attrs: []*onnx.Attribute{strAttr("auto_pad", "SAME_LOWER"), ints("strides", 2, 3)}},
	{name: "valid", x: []int{2, 3, 4, 3}, w: []int{3, 2, 3, 3}, attrs: []*onnx.Attribute{strAttr("auto_pad", "VALID"), ints("strides", 2, 2), ints("pads", 1, 1, 1, 1)}},
	{name: "1d", x: []int{2, 3, 5}, w: []int{3, 4, 3}, attrs: []*onnx.Attribute{ints("strides", 3), ints("pads", 1, 0)}},
	{name: "3d", x: []int{1, 2, 3, 2, 3}, w: []int{2, 2, 2, 3, 2}, attrs: []*onnx.Attribute{ints("strides", 2, 1, 2), ints("pads", 0, 1, 1, 1, 0, 0), ints("output_padding", 1, 0, 1)}},
	{name: "no bias", x: []int{2, 3, 4, 4}, w: []int{3, 2, 2, 2}, attrs: []*onnx.Attribute{ints("strides", 2, 2)}, noBias: true},
}

func TestConvTransposeGradients(t *testing.T) {
	for _, opset := range []int64{9, 11, 17, 22} {
		for _, c := range nnConvTransposeCases {
			if opset != 17 && c.name != "output_padding" && c.name != "group" {
				continue
			}
			t.Run(fmt.Sprintf("%s/opset%d", c.name, opset), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", m.randn(c.x...))
				m.param("w", m.randn(c.w...))
				ins := []string{"x", "w"}
				if !c.noBias {
					m.param("b", m.randn(c.w[1]*groupOf(c.attrs)))
					ins = append(ins, "b")
				}
				m.node("ConvTranspose", ins, []string{"y"}, c.attrs...)
				checkGradients(t, m, "y")
			})
		}
	}
}

func groupOf(attrs []*onnx.Attribute) int {
	for _, a := range attrs {
		if a.Name == "group" {
			return int(a.Int)
		}
	}
	return 1
}

func TestConvTransposeGradientsFreeBatch(t *testing.T) {
	c := nnConvTransposeCases[4]
	checkBatches(t, 17, func(m *model, batch int) {
		m.input("x", m.randn(append([]int{batch}, c.x[1:]...)...))
		m.param("w", m.randn(c.w...))
		m.node("ConvTranspose", []string{"x", "w"}, []string{"y"}, c.attrs...)
	}, "y")
}

// TestConvGradientsChain: a Conv whose input is itself computed, then a
// ConvTranspose back (an autoencoder's shape), so that both X and W
// gradients flow through two layers.
func TestConvGradientsChain(t *testing.T) {
	m := newModel(t, 13)
	m.input("x", m.randn(2, 3, 8, 8))
	m.param("w1", m.randn(4, 3, 3, 3))
	m.param("b1", m.randn(4))
	m.param("w2", m.randn(4, 3, 3, 3))
	m.node("Conv", []string{"x", "w1", "b1"}, []string{"h"}, ints("strides", 2, 2), ints("pads", 1, 1, 1, 1))
	m.node("ConvTranspose", []string{"h", "w2"}, []string{"y"}, ints("strides", 2, 2), ints("pads", 1, 1, 1, 1), ints("output_padding", 1, 1))
	checkGradients(t, m, "y")
}

// randn64 is a float64 tensor of normal draws.
func (m *model) randn64(shape ...int) *onnx.Tensor {
	t := onnx.NewTensor(onnx.Double, shape...)
	for i := range t.Float64s() {
		t.Float64s()[i] = m.rng.NormFloat64()
	}
	return t
}

// TestNNGradientsFloat64: the constants the rules make (kernels of ones,
// divisors, epsilons) take the input's type.
func TestNNGradientsFloat64(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(m *model)
	}{
		{"Conv", func(m *model) {
			m.input("x", m.randn64(2, 4, 6, 5))
			m.param("w", m.randn64(6, 2, 3, 3))
			m.param("b", m.randn64(6))
			m.node("Conv", []string{"x", "w", "b"}, []string{"y"}, intAttr("group", 2), ints("strides", 2, 1), ints("pads", 1, 1, 1, 1))
		}},
		{"ConvTranspose", func(m *model) {
			m.input("x", m.randn64(2, 3, 3, 4))
			m.param("w", m.randn64(3, 2, 3, 3))
			m.node("ConvTranspose", []string{"x", "w"}, []string{"y"}, ints("strides", 2, 2), ints("output_padding", 1, 0))
		}},
		{"AveragePool", func(m *model) {
			m.input("x", m.randn64(2, 2, 5, 6))
			m.node("AveragePool", []string{"x"}, []string{"y"}, ints("kernel_shape", 3, 3), ints("pads", 1, 1, 1, 1), ints("strides", 2, 2))
		}},
		{"MaxPool", func(m *model) {
			m.input("x", m.randn64(2, 2, 5, 6))
			m.node("MaxPool", []string{"x"}, []string{"y"}, ints("kernel_shape", 3, 3), ints("strides", 2, 2))
		}},
		{"LpPool", func(m *model) {
			m.input("x", m.randn64(2, 2, 5, 6))
			m.node("LpPool", []string{"x"}, []string{"y"}, ints("kernel_shape", 2, 2), intAttr("p", 3))
		}},
		{"GlobalMaxPool", func(m *model) {
			m.input("x", m.randn64(2, 2, 5, 6))
			m.node("GlobalMaxPool", []string{"x"}, []string{"y"})
		}},
		{"BatchNormalization training", func(m *model) {
			m.input("x", m.randn64(3, 2, 4))
			m.param("scale", m.randn64(2))
			m.param("bias", m.randn64(2))
			m.param("mean", m.randn64(2))
			v := m.randn64(2)
			for i := range v.Float64s() {
				v.Float64s()[i] = 1 + v.Float64s()[i]*v.Float64s()[i]
			}
			m.param("var", v)
			m.node("BatchNormalization", []string{"x", "scale", "bias", "mean", "var"}, []string{"y", "rm", "rv"}, intAttr("training_mode", 1))
		}},
		{"LayerNormalization", func(m *model) {
			m.input("x", m.randn64(3, 2, 4))
			m.param("scale", m.randn64(4))
			m.node("LayerNormalization", []string{"x", "scale"}, []string{"y"})
		}},
		{"LRN", func(m *model) {
			m.input("x", m.randn64(2, 5, 3))
			m.node("LRN", []string{"x"}, []string{"y"}, intAttr("size", 3))
		}},
		{"Dropout", func(m *model) {
			m.input("x", m.randn64(3, 4))
			m.constant("ratio", onnx.Scalar(float32(0.5)))
			m.constant("train", onnx.Scalar(true))
			m.node("Dropout", []string{"x", "ratio", "train"}, []string{"y"}, intAttr("seed", 5))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, 17)
			c.build(m)
			// The harness's loss takes a float output.
			m.node("Cast", []string{"y"}, []string{"yf"}, intAttr("to", int64(onnx.Float)))
			checkGradients(t, m, "yf")
		})
	}
}
