package autodiff_test

import (
	"fmt"
	"testing"
)

func TestEinsumGradients(t *testing.T) {
	for _, c := range []struct {
		eq     string
		shapes [][]int
	}{
		{"ij,jk->ik", [][]int{{2, 3}, {3, 4}}},
		{"ij,jk", [][]int{{2, 3}, {3, 4}}},
		{"bij,bjk->bik", [][]int{{2, 2, 3}, {2, 3, 4}}},
		// ONNX Runtime's shape inference refuses this forward (the
		// ellipses broadcast); the native backend runs it.
		{"...ij,...jk->...ik", [][]int{{2, 1, 2, 3}, {3, 3, 4}}},
		{"i...,j->...ij", [][]int{{2, 3, 1}, {4}}},
		{"...ij,...jk->...ik", [][]int{{2, 2, 3}, {2, 3, 4}}},
		{"...ij,jk", [][]int{{2, 2, 2, 3}, {3, 4}}},
		{"k...,...", [][]int{{2, 3}, {3}}},
		{"ij->i", [][]int{{3, 4}}},
		{"ij->", [][]int{{3, 4}}},
		{"ij->ji", [][]int{{3, 4}}},
		{"i,j->ij", [][]int{{3}, {4}}},
		{"ij,jk,kl->il", [][]int{{2, 3}, {3, 4}, {4, 2}}},
		{"ii->", [][]int{{3, 3}}},
		{"ii->i", [][]int{{3, 3}}},
		{"iji,j->ij", [][]int{{3, 2, 3}, {2}}},
		{"ij,ij->", [][]int{{3, 4}, {3, 4}}},
		{"bhqd,bhkd->bhqk", [][]int{{2, 2, 3, 4}, {2, 2, 5, 4}}},
		{"ab, b c -> a", [][]int{{2, 3}, {3, 4}}},
		{"Ab,bC->CA", [][]int{{2, 3}, {3, 4}}},
	} {
		for _, opset := range []int64{12, 17} {
			t.Run(fmt.Sprintf("%s opset %d", c.eq, opset), func(t *testing.T) {
				m := newModel(t, opset)
				var ins []string
				for i, s := range c.shapes {
					name := fmt.Sprintf("x%d", i)
					if i%2 == 0 {
						m.input(name, m.randn(s...))
					} else {
						m.param(name, m.randn(s...))
					}
					ins = append(ins, name)
				}
				m.node("Einsum", ins, []string{"y"}, strAttr("equation", c.eq))
				checkGradients(t, m, "y")
			})
		}
	}
}

func TestEinsumGradientsFreeBatch(t *testing.T) {
	for _, eq := range []string{"bij,jk->bik", "bij->bj", "bi,bi->b", "...j,jk->...k"} {
		t.Run(eq, func(t *testing.T) {
			checkBatches(t, 13, func(m *model, n int) {
				m.input("x", m.randn(n, 3, 4))
				switch eq {
				case "bij,jk->bik", "...j,jk->...k":
					m.param("w", m.randn(4, 2))
				case "bi,bi->b":
					m.input("w", m.randn(n, 12))
					m.param("s", shapeI64([]int64{0, -1}))
					m.node("Reshape", []string{"x", "s"}, []string{"xr"})
					m.node("Einsum", []string{"xr", "w"}, []string{"y"}, strAttr("equation", eq))
					return
				case "bij->bj":
					m.node("Einsum", []string{"x"}, []string{"y"}, strAttr("equation", eq))
					return
				}
				m.node("Einsum", []string{"x", "w"}, []string{"y"}, strAttr("equation", eq))
			}, "y")
		})
	}
}
