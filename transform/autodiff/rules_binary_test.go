package autodiff_test

import (
	"fmt"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// elemBinaryShapes are operand shapes that broadcast every way: equal, B
// or A the smaller, both stretched, a scalar, a rank-0 operand.
var elemBinaryShapes = []struct {
	name string
	a, b []int
}{
	{"same", []int{3, 4}, []int{3, 4}},
	{"b trailing", []int{2, 3, 4}, []int{4}},
	{"b inner ones", []int{2, 3, 4}, []int{3, 1}},
	{"a smaller", []int{3, 1}, []int{2, 3, 4}},
	{"both ways", []int{3, 1}, []int{1, 4}},
	{"one element", []int{2, 3}, []int{1}},
	{"rank 0", []int{}, []int{2, 3}},
}

func TestArithmeticGradients(t *testing.T) {
	for _, op := range []string{"Add", "Sub", "Mul", "Div"} {
		for _, opset := range []int64{7, 13, 14} {
			for _, s := range elemBinaryShapes {
				t.Run(fmt.Sprintf("%s-%d/%s", op, opset, s.name), func(t *testing.T) {
					m := newModel(t, opset)
					m.input("a", m.randn(s.a...))
					bv := m.randn(s.b...)
					if op == "Div" {
						bv = elemAway(bv, 0.5, 0)
					}
					m.param("b", bv)
					m.node(op, []string{"a", "b"}, []string{"y"})
					checkGradients(t, m, "y")
				})
			}
		}
	}
}

// TestArithmeticGradientsSameOperand: x op x, both gradients into x.
func TestArithmeticGradientsSameOperand(t *testing.T) {
	for _, op := range []string{"Add", "Sub", "Mul", "Div"} {
		m := newModel(t, 13)
		m.input("x", elemAway(m.randn(2, 3), 0.5, 0))
		m.node(op, []string{"x", "x"}, []string{"y"})
		checkGradients(t, m, "y")
	}
}

func TestArithmeticGradientsFreeBatch(t *testing.T) {
	for _, op := range []string{"Add", "Sub", "Mul", "Div"} {
		checkBatches(t, 13, func(m *model, batch int) {
			m.input("a", m.randn(batch, 3, 1))
			if batch == 2 {
				m.param("b", elemAway(m.randn(3, 4), 0.5, 0))
			}
			m.node(op, []string{"a", "b"}, []string{"y"})
		}, "y")
		checkBatches(t, 13, func(m *model, batch int) {
			m.input("a", elemAway(m.randn(batch, 1, 4), 0.5, 0))
			m.input("b", elemAway(m.randn(batch, 3, 1), 0.5, 0))
			m.node(op, []string{"a", "b"}, []string{"y"})
		}, "y")
	}
}

// TestArithmeticGradientsDouble runs float64 operands (checked through a
// cast to float32).
func TestArithmeticGradientsDouble(t *testing.T) {
	for _, op := range []string{"Add", "Sub", "Mul", "Div", "Pow"} {
		m := newModel(t, 13)
		m.input("a", elemDouble(elemUniform(m, 0.5, 2, 2, 3)))
		m.param("b", elemDouble(elemUniform(m, 0.5, 2, 3)))
		m.node(op, []string{"a", "b"}, []string{"c"})
		elemToFloat(m, "c", "y")
		checkGradients(t, m, "y")
	}
}

func TestPowGradients(t *testing.T) {
	for _, opset := range []int64{7, 12, 13, 15} {
		for _, s := range elemBinaryShapes {
			t.Run(fmt.Sprintf("%d/%s", opset, s.name), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("a", elemUniform(m, 0.3, 2, s.a...))
				m.param("e", elemUniform(m, -1.5, 2.5, s.b...))
				m.node("Pow", []string{"a", "e"}, []string{"y"})
				checkGradients(t, m, "y")
			})
		}
	}
	// Zero bases and zero exponents: dA is 0 where E = 0, dE 0 where A = 0.
	t.Run("zeros", func(t *testing.T) {
		m := newModel(t, 13)
		m.input("a", elemFloats([]float32{0, 0, 0, 1.5, 0.7, 2, 0, 1.2}, 2, 4))
		m.param("e", elemFloats([]float32{0, 1, 2, 0, 3, 0.5, 1.5, 2}, 2, 4))
		m.node("Pow", []string{"a", "e"}, []string{"y"})
		checkGradients(t, m, "y")
	})
	t.Run("zeros opset 8", func(t *testing.T) {
		m := newModel(t, 8)
		m.input("a", elemFloats([]float32{0, 0, 0, 1.5, 0.7, 2, 0, 1.2}, 2, 4))
		m.param("e", elemFloats([]float32{0, 1, 2, 0, 3, 0.5, 1.5, 2}, 2, 4))
		m.param("w", m.randn(4, 3))
		m.node("Pow", []string{"a", "e"}, []string{"p"})
		m.node("MatMul", []string{"p", "w"}, []string{"y"})
		checkGradients(t, m, "y")
	})
	// An exponent of another type (from version 12): integers get no
	// gradient, another float type gets its own.
	t.Run("int exponent", func(t *testing.T) {
		m := newModel(t, 15)
		m.input("a", m.randn(2, 3))
		m.input("e", onnx.FromSlice([]int64{2, 3, 0}, 3))
		m.node("Pow", []string{"a", "e"}, []string{"y"})
		checkGradients(t, m, "y")
	})
	t.Run("double exponent", func(t *testing.T) {
		m := newModel(t, 13)
		m.input("a", elemUniform(m, 0.5, 2, 2, 3))
		m.param("e", elemDouble(elemUniform(m, -1, 2, 3)))
		m.node("Pow", []string{"a", "e"}, []string{"y"})
		checkGradients(t, m, "y")
	})
	t.Run("free batch", func(t *testing.T) {
		checkBatches(t, 15, func(m *model, batch int) {
			m.input("a", elemUniform(m, 0.5, 2, batch, 1, 3))
			if batch == 2 {
				m.param("e", elemUniform(m, -1, 2, 4, 1))
			}
			m.node("Pow", []string{"a", "e"}, []string{"y"})
		}, "y")
	})
}
