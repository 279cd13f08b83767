package autodiff_test

import (
	"fmt"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// positive is a tensor of values in [0.5, 1.5): variances.
func (m *model) positive(shape ...int) *onnx.Tensor {
	t := onnx.NewTensor(onnx.Float, shape...)
	for i := range t.Float32s() {
		t.Float32s()[i] = float32(0.5 + m.rng.Float64())
	}
	return t
}

// bnParams adds scale, B, mean and var initializers of shape p.
func bnParams(m *model, p ...int) []string {
	m.param("scale", m.randn(p...))
	m.param("bias", m.randn(p...))
	m.param("mean", m.randn(p...))
	m.param("var", m.positive(p...))
	return []string{"x", "scale", "bias", "mean", "var"}
}

func TestBatchNormalizationGradients(t *testing.T) {
	type bnCase struct {
		name  string
		opset int64
		x, p  []int
		outs  []string
		attrs []*onnx.Attribute
	}
	cases := []bnCase{
		{name: "inference", opset: 9, x: []int{2, 3, 4, 5}, p: []int{3}},
		{name: "inference", opset: 14, x: []int{2, 3, 4, 5}, p: []int{3}},
		{name: "inference", opset: 15, x: []int{2, 3, 4, 5}, p: []int{3}, attrs: []*onnx.Attribute{floatAttr("epsilon", 0.1)}},
		{name: "inference rank 2", opset: 17, x: []int{4, 3}, p: []int{3}},
		{name: "inference 1d", opset: 17, x: []int{2, 3, 7}, p: []int{3}},
		{name: "inference outputs", opset: 14, x: []int{2, 3, 4, 5}, p: []int{3}, outs: []string{"rm", "rv"}},
		{name: "training", opset: 14, x: []int{3, 3, 4, 5}, p: []int{3}, outs: []string{"rm", "rv"}, attrs: []*onnx.Attribute{intAttr("training_mode", 1)}},
		{name: "training", opset: 15, x: []int{3, 3, 4, 5}, p: []int{3}, attrs: []*onnx.Attribute{intAttr("training_mode", 1), floatAttr("momentum", 0.7)}},
		{name: "training rank 2", opset: 15, x: []int{5, 3}, p: []int{3}, outs: []string{"rm"}, attrs: []*onnx.Attribute{intAttr("training_mode", 1)}},
		{name: "training 3d", opset: 15, x: []int{2, 2, 3, 2, 4}, p: []int{2}, outs: []string{"rm", "rv"}, attrs: []*onnx.Attribute{intAttr("training_mode", 1)}},
		// Before 14, asking for the statistics outputs means training.
		{name: "training", opset: 9, x: []int{3, 3, 4, 5}, p: []int{3}, outs: []string{"rm", "rv", "sm", "sv"}},
		{name: "training", opset: 7, x: []int{3, 3, 4, 5}, p: []int{3}, outs: []string{"rm", "rv"}},
		{name: "inference", opset: 7, x: []int{3, 3, 4, 5}, p: []int{3}},
		// spatial = 0: statistics per element of [C, D...].
		{name: "per element training", opset: 8, x: []int{4, 3, 2, 2}, p: []int{3, 2, 2}, outs: []string{"rm", "rv"}, attrs: []*onnx.Attribute{intAttr("spatial", 0)}},
		{name: "per element inference", opset: 7, x: []int{4, 3, 2, 2}, p: []int{3, 2, 2}, attrs: []*onnx.Attribute{intAttr("spatial", 0)}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/opset%d", c.name, c.opset), func(t *testing.T) {
			m := newModel(t, c.opset)
			m.input("x", m.randn(c.x...))
			ins := bnParams(m, c.p...)
			m.node("BatchNormalization", ins, append([]string{"y"}, c.outs...), c.attrs...)
			checkGradients(t, m, "y")
		})
	}
}

// TestBatchNormalizationStatisticsGradients: a loss that reads the running
// and saved statistics, whose gradients reach X (through the batch's),
// the running inputs (through momentum) or, in inference, the inputs.
func TestBatchNormalizationStatisticsGradients(t *testing.T) {
	for _, c := range []struct {
		opset int64
		outs  []string
		attrs []*onnx.Attribute
	}{
		{15, []string{"rm", "rv"}, []*onnx.Attribute{intAttr("training_mode", 1), floatAttr("momentum", 0.6)}},
		{15, []string{"rm", "rv"}, nil},
		{9, []string{"rm", "rv", "sm", "sv"}, []*onnx.Attribute{floatAttr("momentum", 0.8)}},
	} {
		t.Run(fmt.Sprint(c.opset, c.attrs != nil), func(t *testing.T) {
			m := newModel(t, c.opset)
			m.input("x", m.randn(5, 3))
			m.node("BatchNormalization", bnParams(m, 3), append([]string{"y"}, c.outs...), c.attrs...)
			prev := "y"
			for i, o := range c.outs {
				next := fmt.Sprintf("z%d", i)
				m.node("Add", []string{prev, o}, []string{next})
				prev = next
			}
			checkGradients(t, m, prev)
		})
	}
}

func TestBatchNormalizationGradientsFreeBatch(t *testing.T) {
	for _, train := range []int64{0, 1} {
		t.Run(fmt.Sprint(train), func(t *testing.T) {
			checkBatches(t, 15, func(m *model, batch int) {
				m.input("x", m.randn(batch, 3, 4, 5))
				m.node("BatchNormalization", bnParams(m, 3), []string{"y"}, intAttr("training_mode", train))
			}, "y")
		})
	}
}

func TestInstanceNormalizationGradients(t *testing.T) {
	for _, opset := range []int64{9, 17, 22} {
		for _, shape := range [][]int{{2, 3, 4, 5}, {2, 3, 6}, {1, 2, 3, 2, 3}} {
			t.Run(fmt.Sprintf("%v/opset%d", shape, opset), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", m.randn(shape...))
				m.param("scale", m.randn(shape[1]))
				m.param("bias", m.randn(shape[1]))
				m.node("InstanceNormalization", []string{"x", "scale", "bias"}, []string{"y"}, floatAttr("epsilon", 1e-3))
				checkGradients(t, m, "y")
			})
		}
	}
	t.Run("free batch", func(t *testing.T) {
		checkBatches(t, 17, func(m *model, batch int) {
			m.input("x", m.randn(batch, 3, 4, 5))
			m.param("scale", m.randn(3))
			m.param("bias", m.randn(3))
			m.node("InstanceNormalization", []string{"x", "scale", "bias"}, []string{"y"})
		}, "y")
	})
}

func TestLayerNormalizationGradients(t *testing.T) {
	for _, c := range []struct {
		name   string
		axis   int64
		scale  []int
		noBias bool
	}{
		{"last", -1, []int{5}, false},
		{"axis 1", 1, []int{3, 4, 5}, false},
		{"axis 2", 2, []int{4, 5}, true},
		{"broadcast scale", 2, []int{5}, false},
		{"broadcast scale 1", -3, []int{1, 4, 1}, false},
		{"axis 0", 0, []int{2, 3, 4, 5}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, 17)
			m.input("x", m.randn(2, 3, 4, 5))
			m.param("scale", m.randn(c.scale...))
			ins := []string{"x", "scale"}
			if !c.noBias {
				m.param("bias", m.randn(c.scale...))
				ins = append(ins, "bias")
			}
			m.node("LayerNormalization", ins, []string{"y"}, intAttr("axis", c.axis), floatAttr("epsilon", 1e-3))
			checkGradients(t, m, "y")
		})
	}
	// The optional outputs Mean and InvStdDev in the loss.
	for _, axis := range []int64{-1, 1} {
		t.Run(fmt.Sprintf("statistics/axis%d", axis), func(t *testing.T) {
			m := newModel(t, 17)
			m.input("x", m.randn(2, 3, 4))
			m.param("scale", m.randn(4))
			m.param("bias", m.randn(4))
			m.node("LayerNormalization", []string{"x", "scale", "bias"}, []string{"y", "mean", "inv"}, intAttr("axis", axis))
			m.node("Mul", []string{"y", "inv"}, []string{"z1"})
			m.node("Add", []string{"z1", "mean"}, []string{"z"})
			checkGradients(t, m, "z")
		})
	}
	t.Run("opset22", func(t *testing.T) {
		m := newModel(t, 22)
		m.input("x", m.randn(2, 3, 4))
		m.param("scale", m.randn(4))
		m.node("LayerNormalization", []string{"x", "scale"}, []string{"y"})
		checkGradients(t, m, "y")
	})
	t.Run("free batch", func(t *testing.T) {
		checkBatches(t, 17, func(m *model, batch int) {
			m.input("x", m.randn(batch, 3, 4))
			m.param("scale", m.randn(4))
			m.param("bias", m.randn(4))
			m.node("LayerNormalization", []string{"x", "scale", "bias"}, []string{"y"})
		}, "y")
	})
}

func TestGroupNormalizationGradients(t *testing.T) {
	for _, opset := range []int64{18, 21} {
		for _, c := range []struct {
			x      []int
			groups int64
		}{{[]int{2, 6, 3, 4}, 3}, {[]int{2, 6, 5}, 1}, {[]int{2, 4, 3, 2}, 4}, {[]int{3, 4}, 2}} {
			t.Run(fmt.Sprintf("%v/%d/opset%d", c.x, c.groups, opset), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", m.randn(c.x...))
				p := c.x[1]
				if opset < 21 {
					p = int(c.groups)
				}
				m.param("scale", m.randn(p))
				m.param("bias", m.randn(p))
				m.node("GroupNormalization", []string{"x", "scale", "bias"}, []string{"y"}, intAttr("num_groups", c.groups), floatAttr("epsilon", 1e-3))
				checkGradients(t, m, "y")
			})
		}
	}
	t.Run("free batch", func(t *testing.T) {
		checkBatches(t, 21, func(m *model, batch int) {
			m.input("x", m.randn(batch, 6, 3, 4))
			m.param("scale", m.randn(6))
			m.param("bias", m.randn(6))
			m.node("GroupNormalization", []string{"x", "scale", "bias"}, []string{"y"}, intAttr("num_groups", 2))
		}, "y")
	})
}

func TestLRNGradients(t *testing.T) {
	for _, c := range []struct {
		x     []int
		size  int64
		attrs []*onnx.Attribute
	}{
		{[]int{2, 5, 3, 3}, 3, nil},
		{[]int{2, 6, 4}, 4, []*onnx.Attribute{floatAttr("alpha", 0.5), floatAttr("beta", 0.6), floatAttr("bias", 2)}},
		{[]int{3, 7}, 5, []*onnx.Attribute{floatAttr("alpha", 1), floatAttr("beta", 1.5)}},
		{[]int{2, 3, 2, 2}, 1, []*onnx.Attribute{floatAttr("alpha", 0.3)}},
		{[]int{1, 2, 2, 3, 2}, 8, []*onnx.Attribute{floatAttr("alpha", 0.3)}},
	} {
		for _, opset := range []int64{9, 13, 17} {
			t.Run(fmt.Sprintf("%v/size%d/opset%d", c.x, c.size, opset), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", m.randn(c.x...))
				m.node("LRN", []string{"x"}, []string{"y"}, append([]*onnx.Attribute{intAttr("size", c.size)}, c.attrs...)...)
				checkGradients(t, m, "y")
			})
		}
	}
	t.Run("free batch", func(t *testing.T) {
		checkBatches(t, 13, func(m *model, batch int) {
			m.input("x", m.randn(batch, 5, 3, 3))
			m.node("LRN", []string{"x"}, []string{"y"}, intAttr("size", 3), floatAttr("alpha", 0.5))
		}, "y")
	})
}

func TestMeanVarianceNormalizationGradients(t *testing.T) {
	for _, c := range []struct {
		x    []int
		axes []int64
	}{
		{[]int{2, 3, 4, 5}, nil},
		{[]int{2, 3, 4, 5}, []int64{2, 3}},
		{[]int{2, 3, 4}, []int64{1}},
		{[]int{2, 3, 4}, []int64{-1, 0}},
	} {
		for _, opset := range []int64{9, 13, 17} {
			t.Run(fmt.Sprintf("%v/%v/opset%d", c.x, c.axes, opset), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", m.randn(c.x...))
				var attrs []*onnx.Attribute
				if c.axes != nil {
					attrs = append(attrs, ints("axes", c.axes...))
				}
				m.node("MeanVarianceNormalization", []string{"x"}, []string{"y"}, attrs...)
				checkGradients(t, m, "y")
			})
		}
	}
	// A constant group: σ = 0 there, and the last term vanishes.
	t.Run("constant group", func(t *testing.T) {
		m := newModel(t, 13)
		x := m.randn(2, 2, 3)
		for i := range 3 {
			x.Float32s()[i] = 0.25
		}
		m.input("x", x)
		m.node("MeanVarianceNormalization", []string{"x"}, []string{"y"}, ints("axes", 2))
		checkGradients(t, m, "y")
	})
	t.Run("free batch", func(t *testing.T) {
		checkBatches(t, 13, func(m *model, batch int) {
			m.input("x", m.randn(batch, 3, 4, 5))
			m.node("MeanVarianceNormalization", []string{"x"}, []string{"y"})
		}, "y")
	})
}

func TestLpNormalizationGradients(t *testing.T) {
	for _, p := range []int64{1, 2} {
		for _, axis := range []int64{-1, 0, 1} {
			for _, opset := range []int64{9, 17, 22} {
				t.Run(fmt.Sprintf("p%d/axis%d/opset%d", p, axis, opset), func(t *testing.T) {
					m := newModel(t, opset)
					m.input("x", m.randn(3, 4, 5))
					m.node("LpNormalization", []string{"x"}, []string{"y"}, intAttr("p", p), intAttr("axis", axis))
					checkGradients(t, m, "y")
				})
			}
		}
		// A line of zeros gets a zero gradient.
		t.Run(fmt.Sprintf("p%d/zero line", p), func(t *testing.T) {
			m := newModel(t, 17)
			x := m.randn(3, 4)
			for i := range 4 {
				x.Float32s()[4+i] = 0
			}
			m.input("x", x)
			m.node("LpNormalization", []string{"x"}, []string{"y"}, intAttr("p", p))
			checkGradients(t, m, "y")
		})
	}
	t.Run("free batch", func(t *testing.T) {
		checkBatches(t, 17, func(m *model, batch int) {
			m.input("x", m.randn(batch, 6))
			m.node("LpNormalization", []string{"x"}, []string{"y"}, intAttr("axis", 1))
		}, "y")
	})
}
