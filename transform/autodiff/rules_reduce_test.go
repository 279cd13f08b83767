package autodiff_test

import (
	"fmt"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// elemReduceOps lists each reduction, the opsets to test it at and the
// first version that takes the axes as an input.
var elemReduceOps = []struct {
	op        string
	opsets    []int64
	axesInput int64
}{
	{"ReduceSum", []int64{10, 11, 13}, 13},
	{"ReduceMean", []int64{11, 13, 18}, 18},
	{"ReduceMax", []int64{10, 11, 12, 13, 18, 20}, 18},
	{"ReduceMin", []int64{11, 12, 18, 20}, 18},
	{"ReduceProd", []int64{10, 13, 18}, 18},
	{"ReduceL1", []int64{11, 13, 18}, 18},
	{"ReduceL2", []int64{11, 13, 18}, 18},
	{"ReduceLogSum", []int64{11, 13, 18, 28}, 18},
	{"ReduceLogSumExp", []int64{11, 13, 18, 28}, 18},
	{"ReduceSumSquare", []int64{11, 13, 18}, 18},
}

// elemReduceInput draws an input the reduction is smooth at: positive for
// LogSum, away from 0 for L1, of magnitude near 1 for Prod.
func elemReduceInput(m *model, op string, shape ...int) *onnx.Tensor {
	switch op {
	case "ReduceLogSum":
		return elemUniform(m, 0.5, 2, shape...)
	case "ReduceProd":
		t := elemUniform(m, 0.6, 1.4, shape...)
		for i := 0; i < t.Len(); i += 3 {
			setF(t, i, -getF(t, i))
		}
		return t
	}
	return elemAway(m.randn(shape...), 0.05, 0)
}

// elemReduceNode appends y = op(x) over axes (nil: the attribute or input
// left out), as an attribute or an input by the opset.
func elemReduceNode(m *model, op string, axesInput int64, axes []int64, keep, noop int64) {
	elemReduceNodeTo(m, "y", op, axesInput, axes, keep, noop)
}

// elemReduceNodeTo is elemReduceNode with output out.
func elemReduceNodeTo(m *model, out, op string, axesInput int64, axes []int64, keep, noop int64) {
	attrs := []*onnx.Attribute{intAttr("keepdims", keep)}
	ins := []string{"x"}
	if noop != 0 {
		attrs = append(attrs, intAttr("noop_with_empty_axes", noop))
	}
	switch {
	case m.opset >= axesInput && axes != nil:
		m.param("axes", onnx.FromSlice(append([]int64{}, axes...), len(axes)))
		ins = append(ins, "axes")
	case axes != nil:
		attrs = append(attrs, ints("axes", axes...))
	}
	m.node(op, ins, []string{out}, attrs...)
}

func TestReduceGradients(t *testing.T) {
	for _, r := range elemReduceOps {
		for _, opset := range r.opsets {
			for _, axes := range [][]int64{nil, {1}, {0, 2}, {-1}, {-3, -1}} {
				for keep := range int64(2) {
					t.Run(fmt.Sprintf("%s-%d/axes%v/keep%d", r.op, opset, axes, keep), func(t *testing.T) {
						m := newModel(t, opset)
						m.input("x", elemReduceInput(m, r.op, 2, 3, 4))
						elemReduceNode(m, r.op, r.axesInput, axes, keep, 0)
						checkGradients(t, m, "y")
					})
				}
			}
		}
	}
}

// TestReduceGradientsNoop: noop_with_empty_axes with no axes (absent, or
// an empty input) reduces over no axis.
func TestReduceGradientsNoop(t *testing.T) {
	for _, r := range elemReduceOps {
		opset := r.opsets[len(r.opsets)-1]
		for _, axes := range [][]int64{nil, {}} {
			t.Run(fmt.Sprintf("%s-%d/%v", r.op, opset, axes != nil), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", elemReduceInput(m, r.op, 2, 3))
				elemReduceNode(m, r.op, r.axesInput, axes, 0, 1)
				checkGradients(t, m, "y")
			})
		}
	}
}

// TestReduceGradientsOldOpsets keeps the graph at opset 8 (a MatMul of
// version 1 next to the reduction): no Where, Sign or float Equal.
func TestReduceGradientsOldOpsets(t *testing.T) {
	for _, r := range elemReduceOps {
		t.Run(r.op, func(t *testing.T) {
			m := newModel(t, 8)
			x := elemReduceInput(m, r.op, 2, 3, 4)
			if r.op == "ReduceProd" {
				setF(x, 0, 0)
			}
			m.input("x", x)
			m.param("w", m.randn(4, 2))
			m.node(r.op, []string{"x"}, []string{"r"}, ints("axes", 1), intAttr("keepdims", 0))
			m.node("MatMul", []string{"r", "w"}, []string{"y"})
			if res := checkGradients(t, m, "y"); res.Opset != 8 {
				t.Fatalf("opset %d, want 8", res.Opset)
			}
		})
	}
}

// TestReduceExtremeGradientsTies: the gradient goes to the first extreme
// of each group, in row-major order over the reduced axes.
func TestReduceExtremeGradientsTies(t *testing.T) {
	for _, op := range []string{"ReduceMax", "ReduceMin"} {
		for _, opset := range []int64{11, 18} {
			for _, axes := range [][]int64{nil, {0}, {1}, {2}, {0, 2}, {1, 2}, {-1, 0}} {
				for keep := range int64(2) {
					t.Run(fmt.Sprintf("%s-%d/axes%v/keep%d", op, opset, axes, keep), func(t *testing.T) {
						m := newModel(t, opset)
						x := onnx.NewTensor(onnx.Float, 3, 2, 4)
						for i := range x.Len() {
							setF(x, i, float64(m.rng.IntN(3)))
						}
						m.input("x", x)
						elemReduceNode(m, op, 18, axes, keep, 0)
						checkGradients(t, m, "y")
					})
				}
			}
		}
	}
}

// TestReduceProdGradientsZeros: groups with one zero (the zero gets the
// product of the others, the rest 0) and with two (all 0).
func TestReduceProdGradientsZeros(t *testing.T) {
	for _, opset := range []int64{13, 18} {
		for _, axes := range [][]int64{{1}, nil, {0, 2}} {
			t.Run(fmt.Sprintf("%d/%v", opset, axes), func(t *testing.T) {
				m := newModel(t, opset)
				x := elemReduceInput(m, "ReduceProd", 2, 3, 4)
				setF(x, 0, 0)
				setF(x, 13, 0)
				setF(x, 17, 0)
				m.input("x", x)
				elemReduceNode(m, "ReduceProd", 18, axes, 1, 0)
				checkGradients(t, m, "y")
			})
		}
	}
}

// TestReduceL2GradientsZeroGroup: a group of zeros has norm 0 and gets no
// gradient.
func TestReduceL2GradientsZeroGroup(t *testing.T) {
	m := newModel(t, 18)
	x := m.randn(3, 4)
	for i := 4; i < 8; i++ {
		setF(x, i, 0)
	}
	m.input("x", x)
	elemReduceNode(m, "ReduceL2", 18, []int64{1}, 0, 0)
	checkGradients(t, m, "y")
}

func TestReduceGradientsDouble(t *testing.T) {
	for _, r := range elemReduceOps {
		opset := r.opsets[len(r.opsets)-1]
		m := newModel(t, opset)
		m.input("x", elemDouble(elemReduceInput(m, r.op, 2, 3, 4)))
		elemReduceNodeTo(m, "r", r.op, r.axesInput, []int64{0, 2}, 0, 0)
		elemToFloat(m, "r", "y")
		checkGradients(t, m, "y")
	}
}

func TestReduceGradientsFreeBatch(t *testing.T) {
	for _, r := range elemReduceOps {
		for _, axes := range [][]int64{{0}, {0, 2}, {1}, nil} {
			for _, opset := range []int64{11, r.opsets[len(r.opsets)-1]} {
				checkBatches(t, opset, func(m *model, batch int) {
					m.input("x", elemReduceInput(m, r.op, batch, 3, 4))
					elemReduceNode(m, r.op, r.axesInput, axes, 0, 0)
				}, "y")
			}
		}
	}
}
