package autodiff_test

import (
	"fmt"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

type nnPoolCase struct {
	name  string
	x     []int
	attrs []*onnx.Attribute
}

var nnMaxPoolCases = []nnPoolCase{
	{name: "2x2 stride 2", x: []int{2, 3, 6, 6}, attrs: []*onnx.Attribute{ints("kernel_shape", 2, 2), ints("strides", 2, 2)}},
	{name: "3x3 stride 1 pads", x: []int{2, 2, 5, 6}, attrs: []*onnx.Attribute{ints("kernel_shape", 3, 3), ints("pads", 1, 1, 1, 1)}},
	{name: "uneven strides pads", x: []int{2, 2, 7, 8}, attrs: []*onnx.Attribute{ints("kernel_shape", 3, 2), ints("strides", 2, 3), ints("pads", 1, 0, 2, 1)}},
	{name: "ceil", x: []int{2, 2, 7, 6}, attrs: []*onnx.Attribute{ints("kernel_shape", 3, 3), ints("strides", 2, 2), intAttr("ceil_mode", 1)}},
	{name: "dilations", x: []int{1, 2, 8, 7}, attrs: []*onnx.Attribute{ints("kernel_shape", 2, 3), ints("dilations", 2, 2), ints("pads", 1, 1, 1, 1)}},
	{name: "same upper", x: []int{2, 2, 7, 5}, attrs: []*onnx.Attribute{ints("kernel_shape", 3, 2), ints("strides", 2, 2), strAttr("auto_pad", "SAME_UPPER")}},
	{name: "same lower", x: []int{2, 2, 7, 5}, attrs: []*onnx.Attribute{ints("kernel_shape", 3, 2), ints("strides", 2, 2), strAttr("auto_pad", "SAME_LOWER")}},
	{name: "valid", x: []int{2, 2, 7, 5}, attrs: []*onnx.Attribute{ints("kernel_shape", 3, 2), ints("strides", 1, 2), strAttr("auto_pad", "VALID")}},
	{name: "column-major", x: []int{2, 2, 5, 4}, attrs: []*onnx.Attribute{ints("kernel_shape", 2, 2), intAttr("storage_order", 1)}},
	{name: "column-major 3d", x: []int{1, 2, 4, 3, 5}, attrs: []*onnx.Attribute{ints("kernel_shape", 2, 2, 2), ints("strides", 1, 2, 2), intAttr("storage_order", 1)}},
	{name: "1d", x: []int{2, 3, 9}, attrs: []*onnx.Attribute{ints("kernel_shape", 3), ints("strides", 2), ints("pads", 1, 1)}},
	{name: "3d", x: []int{1, 2, 4, 5, 4}, attrs: []*onnx.Attribute{ints("kernel_shape", 2, 3, 2), ints("pads", 0, 1, 1, 1, 1, 0)}},
}

func TestMaxPoolGradients(t *testing.T) {
	for _, c := range nnMaxPoolCases {
		for _, withIndices := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/indices=%v", c.name, withIndices), func(t *testing.T) {
				m := newModel(t, 17)
				m.input("x", m.randn(c.x...))
				outs := []string{"y"}
				if withIndices {
					outs = append(outs, "idx")
				}
				m.node("MaxPool", []string{"x"}, outs, c.attrs...)
				checkGradients(t, m, "y")
			})
		}
	}
}

// TestMaxPoolGradientsTies: the first maximum of a window takes the
// gradient, overlapping windows add theirs.
func TestMaxPoolGradientsTies(t *testing.T) {
	m := newModel(t, 17)
	x := onnx.FromSlice([]float32{
		1, 1, 0, 2,
		1, 1, 2, 2,
		3, 0, 3, 3,
		0, 3, 3, 3,
	}, 1, 1, 4, 4)
	m.input("x", x)
	m.node("MaxPool", []string{"x"}, []string{"y"}, ints("kernel_shape", 2, 2), ints("strides", 1, 1))
	checkGradients(t, m, "y")
}

// TestMaxPoolGradientsOpsets: without overlapping windows a plain scatter
// serves before opset 16; overlap needs its reduction.
func TestMaxPoolGradientsOpsets(t *testing.T) {
	for _, opset := range []int64{9, 10, 11, 12, 13, 22} {
		t.Run(fmt.Sprint(opset), func(t *testing.T) {
			m := newModel(t, opset)
			m.input("x", m.randn(2, 2, 6, 5))
			m.node("MaxPool", []string{"x"}, []string{"y"}, ints("kernel_shape", 2, 2), ints("strides", 2, 2), ints("pads", 0, 0, 0, 1))
			checkGradients(t, m, "y")
		})
	}
	for _, opset := range []int64{11, 13} {
		t.Run(fmt.Sprintf("overlap/%d", opset), func(t *testing.T) {
			m := newModel(t, opset)
			m.input("x", m.randn(2, 2, 6, 5))
			m.node("MaxPool", []string{"x"}, []string{"y"}, ints("kernel_shape", 3, 3), ints("strides", 2, 2))
			expectFail(t, m, "y", "opset 16")
		})
	}
}

func TestMaxPoolGradientsFreeBatch(t *testing.T) {
	for _, c := range []nnPoolCase{nnMaxPoolCases[2], nnMaxPoolCases[8]} {
		t.Run(c.name, func(t *testing.T) {
			checkBatches(t, 17, func(m *model, batch int) {
				m.input("x", m.randn(append([]int{batch}, c.x[1:]...)...))
				m.node("MaxPool", []string{"x"}, []string{"y"}, c.attrs...)
			}, "y")
		})
	}
}

var nnAvgPoolCases = []nnPoolCase{
	{name: "2x2 stride 2", x: []int{2, 3, 6, 6}, attrs: []*onnx.Attribute{ints("kernel_shape", 2, 2), ints("strides", 2, 2)}},
	{name: "3x3 pads", x: []int{2, 2, 5, 6}, attrs: []*onnx.Attribute{ints("kernel_shape", 3, 3), ints("pads", 1, 1, 1, 1)}},
	{name: "3x3 pads count_include_pad", x: []int{2, 2, 5, 6}, attrs: []*onnx.Attribute{ints("kernel_shape", 3, 3), ints("pads", 1, 1, 1, 1), intAttr("count_include_pad", 1)}},
	{name: "uneven", x: []int{2, 2, 7, 8}, attrs: []*onnx.Attribute{ints("kernel_shape", 3, 2), ints("strides", 2, 3), ints("pads", 1, 0, 2, 1)}},
	{name: "ceil", x: []int{2, 2, 7, 6}, attrs: []*onnx.Attribute{ints("kernel_shape", 3, 3), ints("strides", 2, 2), intAttr("ceil_mode", 1)}},
	{name: "ceil count_include_pad", x: []int{2, 2, 7, 6}, attrs: []*onnx.Attribute{ints("kernel_shape", 3, 2), ints("strides", 2, 2), ints("pads", 1, 0, 1, 0), intAttr("ceil_mode", 1), intAttr("count_include_pad", 1)}},
	{name: "same upper", x: []int{2, 2, 7, 5}, attrs: []*onnx.Attribute{ints("kernel_shape", 3, 2), ints("strides", 2, 2), strAttr("auto_pad", "SAME_UPPER"), intAttr("count_include_pad", 1)}},
	{name: "same lower", x: []int{2, 2, 7, 5}, attrs: []*onnx.Attribute{ints("kernel_shape", 3, 2), ints("strides", 2, 2), strAttr("auto_pad", "SAME_LOWER")}},
	{name: "valid", x: []int{2, 2, 7, 5}, attrs: []*onnx.Attribute{ints("kernel_shape", 3, 2), strAttr("auto_pad", "VALID")}},
	{name: "1d", x: []int{2, 3, 9}, attrs: []*onnx.Attribute{ints("kernel_shape", 3), ints("strides", 2), ints("pads", 1, 1)}},
	{name: "3d", x: []int{1, 2, 4, 5, 4}, attrs: []*onnx.Attribute{ints("kernel_shape", 2, 3, 2), ints("strides", 2, 1, 1), ints("pads", 0, 1, 1, 1, 1, 0)}},
}

func TestAveragePoolGradients(t *testing.T) {
	for _, c := range nnAvgPoolCases {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, 17)
			m.input("x", m.randn(c.x...))
			m.node("AveragePool", []string{"x"}, []string{"y"}, c.attrs...)
			checkGradients(t, m, "y")
		})
	}
	// Version 19 adds dilations; 7 count_include_pad, 10 ceil_mode.
	t.Run("dilations/opset19", func(t *testing.T) {
		m := newModel(t, 19)
		m.input("x", m.randn(2, 2, 8, 7))
		m.node("AveragePool", []string{"x"}, []string{"y"}, ints("kernel_shape", 2, 3), ints("dilations", 2, 2), ints("pads", 1, 1, 1, 1))
		checkGradients(t, m, "y")
	})
	for _, opset := range []int64{7, 9, 11} {
		t.Run(fmt.Sprintf("opset%d", opset), func(t *testing.T) {
			m := newModel(t, opset)
			m.input("x", m.randn(2, 2, 5, 6))
			m.node("AveragePool", []string{"x"}, []string{"y"}, ints("kernel_shape", 3, 3), ints("strides", 2, 2), ints("pads", 1, 1, 1, 1), intAttr("count_include_pad", 1))
			checkGradients(t, m, "y")
		})
	}
}

func TestAveragePoolGradientsFreeBatch(t *testing.T) {
	c := nnAvgPoolCases[5]
	checkBatches(t, 17, func(m *model, batch int) {
		m.input("x", m.randn(append([]int{batch}, c.x[1:]...)...))
		m.node("AveragePool", []string{"x"}, []string{"y"}, c.attrs...)
	}, "y")
}

func TestLpPoolGradients(t *testing.T) {
	for _, p := range []int64{1, 2, 3} {
		for _, c := range []nnPoolCase{nnAvgPoolCases[1], nnAvgPoolCases[3], nnAvgPoolCases[9]} {
			t.Run(fmt.Sprintf("%s/p=%d", c.name, p), func(t *testing.T) {
				m := newModel(t, 17)
				m.input("x", m.randn(c.x...))
				m.node("LpPool", []string{"x"}, []string{"y"}, append(c.attrs[:len(c.attrs):len(c.attrs)], intAttr("p", p))...)
				checkGradients(t, m, "y")
			})
		}
	}
	t.Run("ceil dilations/opset18", func(t *testing.T) {
		m := newModel(t, 18)
		m.input("x", m.randn(2, 2, 8, 7))
		m.node("LpPool", []string{"x"}, []string{"y"}, ints("kernel_shape", 2, 2), ints("dilations", 2, 1), ints("strides", 2, 2), intAttr("ceil_mode", 1))
		checkGradients(t, m, "y")
	})
	t.Run("opset11", func(t *testing.T) {
		m := newModel(t, 11)
		m.input("x", m.randn(2, 2, 5, 5))
		m.node("LpPool", []string{"x"}, []string{"y"}, ints("kernel_shape", 2, 2), ints("strides", 2, 2))
		checkGradients(t, m, "y")
	})
	// A window of zeros: the norm's minimum, where the gradient is zero.
	t.Run("zero window", func(t *testing.T) {
		m := newModel(t, 17)
		x := m.randn(1, 1, 4, 4)
		for _, i := range []int{0, 1, 4, 5} {
			x.Float32s()[i] = 0
		}
		m.input("x", x)
		m.node("LpPool", []string{"x"}, []string{"y"}, ints("kernel_shape", 2, 2), ints("strides", 2, 2), intAttr("p", 3))
		checkGradients(t, m, "y")
	})
}

func TestGlobalPoolGradients(t *testing.T) {
	for _, op := range []string{"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"} {
		for _, shape := range [][]int{{2, 3, 4, 5}, {2, 3, 7}, {1, 2, 3, 2, 4}} {
			for _, opset := range []int64{9, 17, 22} {
				t.Run(fmt.Sprintf("%s/%v/opset%d", op, shape, opset), func(t *testing.T) {
					m := newModel(t, opset)
					m.input("x", m.randn(shape...))
					m.node(op, []string{"x"}, []string{"y"})
					checkGradients(t, m, "y")
				})
			}
		}
	}
	for _, p := range []int64{1, 3} {
		t.Run(fmt.Sprintf("GlobalLpPool/p=%d", p), func(t *testing.T) {
			m := newModel(t, 17)
			m.input("x", m.randn(2, 3, 4, 5))
			m.node("GlobalLpPool", []string{"x"}, []string{"y"}, intAttr("p", p))
			checkGradients(t, m, "y")
		})
	}
	// Ties: the first maximum of the plane takes all the gradient.
	t.Run("GlobalMaxPool ties", func(t *testing.T) {
		m := newModel(t, 17)
		m.input("x", onnx.FromSlice([]float32{1, 3, 3, 0, 2, 2, 2, 2}, 2, 1, 2, 2))
		m.node("GlobalMaxPool", []string{"x"}, []string{"y"})
		checkGradients(t, m, "y")
	})
	for _, op := range []string{"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"} {
		t.Run(op+"/free batch", func(t *testing.T) {
			checkBatches(t, 17, func(m *model, batch int) {
				m.input("x", m.randn(batch, 3, 4, 5))
				m.node(op, []string{"x"}, []string{"y"})
			}, "y")
		})
	}
}
