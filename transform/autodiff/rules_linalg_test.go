package autodiff_test

import "testing"

func TestMatMulGradients(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b []int
	}{
		{"matrix", []int{3, 4}, []int{4, 5}},
		{"batched", []int{2, 3, 4}, []int{4, 5}},
		{"broadcast batch", []int{2, 1, 3, 4}, []int{3, 4, 5}},
		{"vector left", []int{4}, []int{2, 4, 5}},
		{"vector right", []int{2, 3, 4}, []int{4}},
		{"vectors", []int{4}, []int{4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, 17)
			m.input("a", m.randn(c.a...))
			m.param("b", m.randn(c.b...))
			m.node("MatMul", []string{"a", "b"}, []string{"y"})
			checkGradients(t, m, "y")
		})
	}
}

func TestGemmGradients(t *testing.T) {
	for _, opset := range []int64{9, 13} {
		for ta := range int64(2) {
			for tb := range int64(2) {
				m := newModel(t, opset)
				as, bs := []int{3, 4}, []int{4, 5}
				if ta == 1 {
					as = []int{4, 3}
				}
				if tb == 1 {
					bs = []int{5, 4}
				}
				m.input("a", m.randn(as...))
				m.param("b", m.randn(bs...))
				m.param("c", m.randn(5))
				m.node("Gemm", []string{"a", "b", "c"}, []string{"y"}, intAttr("transA", ta), intAttr("transB", tb),
					floatAttr("alpha", 0.5), floatAttr("beta", 2))
				checkGradients(t, m, "y")
			}
		}
	}
}
