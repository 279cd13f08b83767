package autodiff_test

import (
	"fmt"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// shapeI64 is an int64 tensor of the given shape (none: 1-D).
func shapeI64(vals []int64, shape ...int) *onnx.Tensor {
	if shape == nil {
		shape = []int{len(vals)}
	}
	return onnx.FromSlice(append([]int64{}, vals...), shape...)
}

// shapeConst adds a Constant node holding t.
func (m *model) shapeConst(name string, t *onnx.Tensor) {
	m.t.Helper()
	m.node("Constant", nil, []string{name}, &onnx.Attribute{Name: "value", Type: onnx.AttrTensor, Tensor: t})
}

func TestIdentityReshapeGradients(t *testing.T) {
	for _, c := range []struct {
		name  string
		opset int64
		build func(m *model)
	}{
		{"Identity", 13, func(m *model) { m.node("Identity", []string{"x"}, []string{"y"}) }},
		{"Reshape-5", 9, func(m *model) {
			m.param("s", shapeI64([]int64{0, -1}))
			m.node("Reshape", []string{"x", "s"}, []string{"y"})
		}},
		{"Reshape-14", 17, func(m *model) {
			m.param("s", shapeI64([]int64{4, 3, 2}))
			m.node("Reshape", []string{"x", "s"}, []string{"y"}, intAttr("allowzero", 0))
		}},
		{"Flatten axis 0", 9, func(m *model) { m.node("Flatten", []string{"x"}, []string{"y"}, intAttr("axis", 0)) }},
		{"Flatten axis -1", 13, func(m *model) { m.node("Flatten", []string{"x"}, []string{"y"}, intAttr("axis", -1)) }},
		{"Squeeze-11", 11, func(m *model) {
			m.node("Unsqueeze", []string{"x"}, []string{"u"}, ints("axes", 0, -1))
			m.node("Squeeze", []string{"u"}, []string{"y"}, ints("axes", -1))
		}},
		{"Squeeze-13", 13, func(m *model) {
			m.param("ax", shapeI64([]int64{1, 4}))
			m.node("Unsqueeze", []string{"x", "ax"}, []string{"u"})
			m.node("Squeeze", []string{"u"}, []string{"y"})
		}},
		{"Unsqueeze-1", 9, func(m *model) { m.node("Unsqueeze", []string{"x"}, []string{"y"}, ints("axes", 0, 2)) }},
		{"Transpose default", 9, func(m *model) { m.node("Transpose", []string{"x"}, []string{"y"}) }},
		{"Transpose perm", 13, func(m *model) { m.node("Transpose", []string{"x"}, []string{"y"}, ints("perm", 1, 2, 0)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, c.opset)
			m.input("x", m.randn(2, 3, 4))
			c.build(m)
			checkGradients(t, m, "y")
		})
	}
}

func TestExpandTileGradients(t *testing.T) {
	for _, opset := range []int64{9, 13} {
		for _, c := range []struct {
			name  string
			x     []int
			shape []int64
		}{
			{"stretch", []int{3, 1}, []int64{3, 4}},
			{"lead axes", []int{3, 1}, []int64{2, 1, 3, 4}},
			{"shape smaller", []int{2, 3, 4}, []int64{3, 1}},
		} {
			t.Run(fmt.Sprintf("Expand %s opset %d", c.name, opset), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", m.randn(c.x...))
				m.param("s", shapeI64(c.shape))
				m.node("Expand", []string{"x", "s"}, []string{"y"})
				checkGradients(t, m, "y")
			})
		}
		for _, reps := range [][]int64{{2, 1, 3}, {1, 1, 1}, {1, 3, 1}} {
			t.Run(fmt.Sprintf("Tile %v opset %d", reps, opset), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", m.randn(2, 3, 2))
				m.param("r", shapeI64(reps))
				m.node("Tile", []string{"x", "r"}, []string{"y"})
				checkGradients(t, m, "y")
			})
		}
	}
}

func TestCastGradients(t *testing.T) {
	t.Run("Cast", func(t *testing.T) {
		for _, opset := range []int64{9, 13} {
			m := newModel(t, opset)
			m.input("x", m.randn(2, 3))
			m.node("Cast", []string{"x"}, []string{"d"}, intAttr("to", int64(onnx.Double)))
			m.node("Mul", []string{"d", "d"}, []string{"d2"})
			m.node("Cast", []string{"d2"}, []string{"y"}, intAttr("to", int64(onnx.Float)))
			checkGradients(t, m, "y")
		}
	})
	t.Run("Cast same type", func(t *testing.T) {
		m := newModel(t, 13)
		m.input("x", m.randn(2, 3))
		m.node("Cast", []string{"x"}, []string{"y"}, intAttr("to", int64(onnx.Float)))
		checkGradients(t, m, "y")
	})
	t.Run("CastLike", func(t *testing.T) {
		m := newModel(t, 15)
		m.input("x", m.randn(2, 3))
		m.shapeConst("like", onnx.FromSlice([]float64{0}))
		m.node("CastLike", []string{"x", "like"}, []string{"d"})
		m.node("Mul", []string{"d", "d"}, []string{"d2"})
		m.shapeConst("likef", onnx.FromSlice([]float32{0}))
		m.node("CastLike", []string{"d2", "likef"}, []string{"y"})
		checkGradients(t, m, "y")
	})
}

func TestSpaceDepthGradients(t *testing.T) {
	for _, c := range []struct {
		op    string
		opset int64
		mode  string
	}{
		{"DepthToSpace", 9, ""},
		{"DepthToSpace", 11, "DCR"},
		{"DepthToSpace", 11, "CRD"},
		{"DepthToSpace", 13, "CRD"},
		{"SpaceToDepth", 9, ""},
		{"SpaceToDepth", 13, ""},
	} {
		t.Run(fmt.Sprintf("%s %s opset %d", c.op, c.mode, c.opset), func(t *testing.T) {
			m := newModel(t, c.opset)
			if c.op == "DepthToSpace" {
				m.input("x", m.randn(2, 8, 2, 3))
			} else {
				m.input("x", m.randn(2, 2, 4, 6))
			}
			attrs := []*onnx.Attribute{intAttr("blocksize", 2)}
			if c.mode != "" {
				attrs = append(attrs, strAttr("mode", c.mode))
			}
			m.node(c.op, []string{"x"}, []string{"y"}, attrs...)
			checkGradients(t, m, "y")
		})
	}
}

func TestShapeGradientsFreeBatch(t *testing.T) {
	for _, c := range []struct {
		name  string
		opset int64
		build func(m *model, n int)
	}{
		{"Reshape", 13, func(m *model, n int) {
			m.input("x", m.randn(n, 3, 4))
			m.param("s", shapeI64([]int64{0, -1}))
			m.node("Reshape", []string{"x", "s"}, []string{"y"})
		}},
		{"Flatten Unsqueeze Transpose", 11, func(m *model, n int) {
			m.input("x", m.randn(n, 3, 4))
			m.node("Flatten", []string{"x"}, []string{"f"})
			m.node("Unsqueeze", []string{"f"}, []string{"u"}, ints("axes", 1))
			m.node("Transpose", []string{"u"}, []string{"y"}, ints("perm", 2, 0, 1))
		}},
		{"Expand", 13, func(m *model, n int) {
			m.input("x", m.randn(n, 1, 4))
			m.param("s", shapeI64([]int64{2, 1, 3, 1}))
			m.node("Expand", []string{"x", "s"}, []string{"y"})
		}},
		{"Tile", 13, func(m *model, n int) {
			m.input("x", m.randn(n, 3, 2))
			m.param("r", shapeI64([]int64{2, 1, 3}))
			m.node("Tile", []string{"x", "r"}, []string{"y"})
		}},
		{"DepthToSpace", 13, func(m *model, n int) {
			m.input("x", m.randn(n, 8, 2, 3))
			m.node("DepthToSpace", []string{"x"}, []string{"y"}, intAttr("blocksize", 2), strAttr("mode", "CRD"))
		}},
		{"SpaceToDepth", 9, func(m *model, n int) {
			m.input("x", m.randn(n, 2, 4, 6))
			m.node("SpaceToDepth", []string{"x"}, []string{"y"}, intAttr("blocksize", 2))
		}},
	} {
		t.Run(c.name, func(t *testing.T) { checkBatches(t, c.opset, c.build, "y") })
	}
}
