package autodiff_test

import (
	"fmt"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestPReluGradients(t *testing.T) {
	for _, c := range []struct {
		name     string
		x, slope []int
	}{
		{"same shape", []int{2, 3, 4}, []int{2, 3, 4}},
		{"channel column", []int{2, 3, 4, 5}, []int{3, 1, 1}},
		{"trailing", []int{2, 3, 4}, []int{4}},
		{"one element", []int{2, 3, 4}, []int{1}},
		{"channel vector", []int{2, 3, 4, 5}, []int{3}},
		{"channel vector rank 2", []int{4, 3}, []int{3}},
	} {
		for _, opset := range []int64{7, 8, 9, 16} {
			t.Run(fmt.Sprintf("%s-%d", c.name, opset), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", elemAway(m.randn(c.x...), 0.05, 0))
				m.param("slope", m.randn(c.slope...))
				m.node("PRelu", []string{"x", "slope"}, []string{"y"})
				checkGradients(t, m, "y")
			})
		}
	}
	t.Run("free batch", func(t *testing.T) {
		checkBatches(t, 16, func(m *model, batch int) {
			m.input("x", elemAway(m.randn(batch, 3, 4), 0.05, 0))
			if batch == 2 {
				m.param("slope", m.randn(3, 1))
			}
			m.node("PRelu", []string{"x", "slope"}, []string{"y"})
		}, "y")
	})
}

func TestVariadicGradients(t *testing.T) {
	shapes := [][][]int{
		{{3, 4}},
		{{3, 4}, {3, 4}},
		{{3, 4}, {3, 4}, {3, 4}},
		{{2, 3, 4}, {4}},
		{{3, 1}, {1, 4}, {4}},
	}
	for _, op := range []string{"Max", "Min", "Sum", "Mean"} {
		// (Versions 1 and 6 pin a model below opset 8, where the driver
		// cannot seed the loss's gradient.)
		for _, opset := range []int64{8, 12, 13} {
			for _, ss := range shapes {
				t.Run(fmt.Sprintf("%s-%d/%v", op, opset, ss), func(t *testing.T) {
					m := newModel(t, opset)
					var ins []string
					for i, s := range ss {
						name := fmt.Sprintf("x%d", i)
						ins = append(ins, name)
						m.input(name, m.randn(s...))
					}
					m.node(op, ins, []string{"y"})
					checkGradients(t, m, "y")
				})
			}
		}
	}
}

// TestMaxMinGradientsTies: where inputs tie for the extreme the native
// backend splits the gradient evenly among them.
func TestMaxMinGradientsTies(t *testing.T) {
	for _, op := range []string{"Max", "Min"} {
		for _, opset := range []int64{8, 13} {
			for _, pin := range []bool{false, true} {
				if pin && opset > 8 {
					continue
				}
				t.Run(fmt.Sprintf("%s-%d-pinned-%v", op, opset, pin), func(t *testing.T) {
					m := newModel(t, opset)
					a := elemFloats([]float32{1, 2, 3, 4, 5, 6, -1, -2, -3, 0, 0.5, 7}, 3, 4)
					b := elemFloats([]float32{1, 9, -3, 4}, 4)
					c := elemFloats([]float32{1, 2, 3, 4, 0, 0, 0, 0, -3, -3, -3, -3}, 3, 4)
					m.input("a", a)
					m.param("b", b)
					m.input("c", c)
					if !pin {
						m.node(op, []string{"a", "b", "c"}, []string{"y"})
						checkGradients(t, m, "y")
						return
					}
					// A MatMul of version 1 keeps the graph at opset 8, where
					// Equal takes no floats.
					m.param("w", m.randn(4, 2))
					m.node(op, []string{"a", "b", "c"}, []string{"e"})
					m.node("MatMul", []string{"e", "w"}, []string{"y"})
					if res := checkGradients(t, m, "y"); res.Opset != 8 {
						t.Fatalf("opset %d, want 8", res.Opset)
					}
				})
			}
		}
	}
}

func TestVariadicGradientsFreeBatch(t *testing.T) {
	for _, op := range []string{"Max", "Min", "Sum", "Mean"} {
		checkBatches(t, 13, func(m *model, batch int) {
			m.input("a", m.randn(batch, 3, 4))
			m.input("b", m.randn(batch, 1, 4))
			if batch == 2 {
				m.param("c", m.randn(3, 1))
			}
			m.node(op, []string{"a", "b", "c"}, []string{"y"})
		}, "y")
	}
}

func TestModGradients(t *testing.T) {
	// |A/B| is kept away from whole numbers: q jumps there.
	operands := func(m *model, as, bs []int) (*onnx.Tensor, *onnx.Tensor) {
		b := elemAway(elemUniform(m, -2, 2, bs...), 0.6, 0)
		a := m.randn(as...)
		for i := range a.Len() {
			bv := getF(b, i%b.Len())
			q := float64(int(getF(a, i)*3/bv)) + 0.5
			setF(a, i, q*bv)
		}
		return a, b
	}
	for _, c := range []struct {
		opset  int64
		fmod   int64
		as, bs []int
	}{
		{10, 1, []int{3, 4}, []int{3, 4}},
		{10, 1, []int{2, 3, 4}, []int{4}},
		{12, 1, []int{2, 4}, []int{4}},
		{13, 1, []int{3, 4}, []int{4}},
		{22, 1, []int{3, 4}, []int{3, 4}},
		{28, 0, []int{3, 4}, []int{4}},
		{28, 1, []int{3, 4}, []int{4}},
	} {
		t.Run(fmt.Sprintf("%d-fmod%d-%v", c.opset, c.fmod, c.bs), func(t *testing.T) {
			m := newModel(t, c.opset)
			a, b := operands(m, c.as, c.bs)
			m.input("a", a)
			m.param("b", b)
			m.node("Mod", []string{"a", "b"}, []string{"y"}, intAttr("fmod", c.fmod))
			checkGradients(t, m, "y")
		})
	}
}
