package autodiff_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/transform/autodiff"
)

func selBool(vals []bool) *onnx.Tensor { return onnx.FromSlice(append([]bool{}, vals...), len(vals)) }

func TestConcatSplitGradients(t *testing.T) {
	for _, opset := range []int64{9, 13} {
		for _, axis := range []int64{1, -1, 0} {
			t.Run(fmt.Sprintf("Concat axis %d opset %d", axis, opset), func(t *testing.T) {
				m := newModel(t, opset)
				a, b, c := []int{2, 3, 2}, []int{2, 3, 2}, []int{2, 3, 2}
				switch axis {
				case 1:
					b[1], c[1] = 1, 4
				case -1:
					b[2] = 3
				case 0:
					a[0] = 1
				}
				m.input("a", m.randn(a...))
				m.param("b", m.randn(b...))
				m.input("c", m.randn(c...))
				m.node("Concat", []string{"a", "b", "c"}, []string{"y"}, intAttr("axis", axis))
				checkGradients(t, m, "y")
			})
		}
	}
	for _, c := range []struct {
		name  string
		opset int64
		build func(m *model)
	}{
		{"Split-2 split attribute", 9, func(m *model) {
			m.node("Split", []string{"x"}, []string{"p", "q", "r"}, intAttr("axis", 1), ints("split", 1, 2, 3))
		}},
		{"Split-11 equal parts", 11, func(m *model) {
			m.node("Split", []string{"x"}, []string{"p", "q", "r"}, intAttr("axis", -1))
		}},
		{"Split-13 split input", 13, func(m *model) {
			m.param("s", shapeI64([]int64{3, 2, 1}))
			m.node("Split", []string{"x", "s"}, []string{"p", "q", "r"}, intAttr("axis", 1))
		}},
		{"Split-18 num_outputs uneven", 18, func(m *model) {
			m.node("Split", []string{"x"}, []string{"p", "q", "r"}, intAttr("axis", 0), intAttr("num_outputs", 3))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, c.opset)
			if c.opset == 18 {
				m.input("x", m.randn(8, 6))
			} else {
				m.input("x", m.randn(2, 6, 6))
			}
			c.build(m)
			// q gets no gradient: its part of dX is zeros.
			m.node("ReduceSum", []string{"p"}, []string{"ps"}, intAttr("keepdims", 0))
			m.node("ReduceSum", []string{"r"}, []string{"rs"}, intAttr("keepdims", 0))
			m.node("Mul", []string{"ps", "rs"}, []string{"y"})
			checkGradients(t, m, "y")
		})
	}
}

func TestSliceGradients(t *testing.T) {
	const big = math.MaxInt64
	for _, c := range []struct {
		name                      string
		starts, ends, axes, steps []int64
	}{
		{"plain", []int64{1, 0}, []int64{3, 2}, nil, nil},
		{"negative and clamped", []int64{-3, -100}, []int64{big, -1}, []int64{-1, 1}, nil},
		{"all", []int64{0}, []int64{big}, []int64{0}, nil},
		{"step 2", []int64{1}, []int64{big}, []int64{2}, []int64{2}},
		{"step 3 clamped", []int64{-100}, []int64{100}, []int64{1}, []int64{3}},
		{"step -1", []int64{-1}, []int64{math.MinInt64}, []int64{2}, []int64{-1}},
		{"step -2 two axes", []int64{4, 0}, []int64{0, big}, []int64{2, 1}, []int64{-2, 2}},
		{"step -3 clamped", []int64{100, 0}, []int64{-100, 2}, []int64{2, 0}, []int64{-3, 1}},
		{"empty", []int64{3}, []int64{1}, []int64{1}, nil},
	} {
		for _, opset := range []int64{9, 10, 13} {
			if opset == 9 && c.steps != nil {
				continue
			}
			t.Run(fmt.Sprintf("%s opset %d", c.name, opset), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", m.randn(3, 4, 7))
				if opset < 10 {
					attrs := []*onnx.Attribute{ints("starts", c.starts...), ints("ends", c.ends...)}
					if c.axes != nil {
						attrs = append(attrs, ints("axes", c.axes...))
					}
					m.node("Slice", []string{"x"}, []string{"y"}, attrs...)
				} else {
					m.param("st", shapeI64(c.starts))
					m.param("en", shapeI64(c.ends))
					ins := []string{"x", "st", "en"}
					if c.axes != nil || c.steps != nil {
						axes := c.axes
						if axes == nil {
							axes = []int64{0, 1}[:len(c.starts)]
						}
						m.param("ax", shapeI64(axes))
						ins = append(ins, "ax")
					}
					if c.steps != nil {
						m.param("sp", shapeI64(c.steps))
						ins = append(ins, "sp")
					}
					m.node("Slice", ins, []string{"y"})
				}
				if c.name == "empty" {
					// An empty slice: the loss must still depend on x.
					m.node("Concat", []string{"y", "x"}, []string{"z"}, intAttr("axis", 1))
					checkGradients(t, m, "z")
					return
				}
				checkGradients(t, m, "y")
			})
		}
	}
}

func TestPadGradients(t *testing.T) {
	for _, c := range []struct {
		name  string
		opset int64
		mode  string
		pads  []int64
		axes  []int64
		value bool
	}{
		{"Pad-2 constant", 9, "constant", []int64{1, 0, 2, 0, 3, 1}, nil, false},
		{"Pad-2 crop", 9, "constant", []int64{-1, 2, 0, 0, -2, 1}, nil, false},
		{"Pad-2 edge", 9, "edge", []int64{1, 2, 0, 2, 1, 3}, nil, false},
		{"Pad-2 reflect", 9, "reflect", []int64{1, 2, 0, 1, 1, 3}, nil, false},
		{"Pad-11 constant value", 11, "constant", []int64{1, 0, 2, 0, 3, 1}, nil, true},
		{"Pad-11 crop and value", 11, "constant", []int64{-1, 1, 0, 1, -2, 0}, nil, true},
		{"Pad-13 edge crop", 13, "edge", []int64{-1, 2, 0, 1, -1, 3}, nil, false},
		{"Pad-13 reflect", 13, "reflect", []int64{0, 3, 2, 1, 0, 3}, nil, false},
		{"Pad-18 axes", 18, "constant", []int64{2, -1, 1, 3}, []int64{-1, 0}, true},
		{"Pad-18 reflect axes", 18, "reflect", []int64{2, 1}, []int64{2}, false},
		{"Pad-19 wrap", 19, "wrap", []int64{1, 2, 4, 0, 1, 3}, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, c.opset)
			m.input("x", m.randn(2, 4, 5))
			if c.opset < 11 {
				m.node("Pad", []string{"x"}, []string{"y"}, strAttr("mode", c.mode), ints("pads", c.pads...))
			} else {
				m.param("pads", shapeI64(c.pads))
				ins := []string{"x", "pads"}
				if c.value {
					m.param("v", onnx.FromSlice([]float32{0.7}))
					ins = append(ins, "v")
				} else if c.axes != nil {
					ins = append(ins, "")
				}
				if c.axes != nil {
					m.param("axes", shapeI64(c.axes))
					ins = append(ins, "axes")
				}
				m.node("Pad", ins, []string{"y"}, strAttr("mode", c.mode))
			}
			checkGradients(t, m, "y")
		})
	}
}

func TestGatherGradients(t *testing.T) {
	for _, c := range []struct {
		name    string
		axis    int64
		idx     []int64
		shape   []int
		asInput bool // indices fed, not fixed
	}{
		{"axis 0 repeated negative", 0, []int64{1, -1, 1, 0}, []int{2, 2}, true},
		{"axis 1 fixed distinct", 1, []int64{2, 0, -1}, []int{3}, false},
		{"axis -1 fixed repeated", -1, []int64{2, 2, 0}, []int{3}, false},
		{"scalar index", 1, []int64{-2}, []int{}, false},
		{"axis 2 matrix", 2, []int64{0, 3, 3, 1, -4, 2}, []int{3, 2}, true},
	} {
		for _, opset := range []int64{9, 11, 13, 17} {
			t.Run(fmt.Sprintf("%s opset %d", c.name, opset), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", m.randn(3, 4, 4))
				it := shapeI64(c.idx, c.shape...)
				if c.asInput {
					m.input("i", it)
				} else {
					m.param("i", it)
				}
				m.node("Gather", []string{"x", "i"}, []string{"y"}, intAttr("axis", c.axis))
				checkGradients(t, m, "y")
			})
		}
	}
}

func TestGatherElementsNDGradients(t *testing.T) {
	for _, opset := range []int64{11, 13, 17} {
		for _, c := range []struct {
			name    string
			axis    int64
			idx     []int64
			shape   []int
			asInput bool
		}{
			{"axis 0 repeated", 0, []int64{0, 2, 2, 1, 0, -1}, []int{2, 3}, true},
			{"axis 1 smaller fixed distinct", 1, []int64{1, 0, 2, 0, 3, 1}, []int{3, 2}, false},
			{"axis -1 fixed repeated", -1, []int64{1, 1, 0, 0, 3, 3}, []int{3, 2}, false},
		} {
			t.Run(fmt.Sprintf("GatherElements %s opset %d", c.name, opset), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", m.randn(3, 4))
				it := shapeI64(c.idx, c.shape...)
				if c.asInput {
					m.input("i", it)
				} else {
					m.param("i", it)
				}
				m.node("GatherElements", []string{"x", "i"}, []string{"y"}, intAttr("axis", c.axis))
				checkGradients(t, m, "y")
			})
		}
	}
	for _, opset := range []int64{11, 12, 13, 17} {
		for _, c := range []struct {
			name    string
			batch   int64
			idx     []int64
			shape   []int
			asInput bool
		}{
			{"pairs repeated", 0, []int64{0, 1, 2, -1, 0, 1}, []int{3, 2}, true},
			{"rows fixed distinct", 0, []int64{2, 0}, []int{2, 1}, false},
			{"full tuples", 0, []int64{0, 1, 1, 2, 3, 0}, []int{2, 3}, false},
			{"full tuples fixed repeated", 0, []int64{0, 1, 1, 0, 1, -1}, []int{2, 3}, false},
			{"batch dims 1", 1, []int64{1, 1, 0, -1, 2, 0, 3, 1, 1, 1, 0, 0}, []int{3, 2, 2}, true},
			{"batch dims 2", 2, []int64{1, -1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1}, []int{3, 4, 1}, true},
		} {
			if c.batch > 0 && opset < 12 {
				continue
			}
			t.Run(fmt.Sprintf("GatherND %s opset %d", c.name, opset), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", m.randn(3, 4, 2))
				it := shapeI64(c.idx, c.shape...)
				if c.asInput {
					m.input("i", it)
				} else {
					m.param("i", it)
				}
				var attrs []*onnx.Attribute
				if c.batch > 0 {
					attrs = append(attrs, intAttr("batch_dims", c.batch))
				}
				m.node("GatherND", []string{"x", "i"}, []string{"y"}, attrs...)
				checkGradients(t, m, "y")
			})
		}
	}
}

func TestWhereCompressGradients(t *testing.T) {
	for _, opset := range []int64{9, 16} {
		t.Run(fmt.Sprintf("Where opset %d", opset), func(t *testing.T) {
			m := newModel(t, opset)
			m.input("c", onnx.FromSlice([]bool{true, false, true, true}, 4))
			m.input("a", m.randn(3, 1))
			m.param("b", m.randn(2, 3, 4))
			m.node("Where", []string{"c", "a", "b"}, []string{"y"})
			checkGradients(t, m, "y")
		})
	}
	for _, opset := range []int64{9, 11} {
		for _, axis := range []*int64{nil, new(int64(1)), new(int64(-1))} {
			name := "flat"
			if axis != nil {
				name = fmt.Sprint("axis ", *axis)
			}
			t.Run(fmt.Sprintf("Compress %s opset %d", name, opset), func(t *testing.T) {
				m := newModel(t, opset)
				m.input("x", m.randn(2, 3, 4))
				var attrs []*onnx.Attribute
				if axis != nil {
					attrs = append(attrs, intAttr("axis", *axis))
					m.input("c", selBool([]bool{true, false, true}))
				} else {
					m.input("c", selBool([]bool{false, true, true, false, false, true, true}))
				}
				m.node("Compress", []string{"x", "c"}, []string{"y"}, attrs...)
				checkGradients(t, m, "y")
			})
		}
	}
}

func TestTopKGradients(t *testing.T) {
	for _, c := range []struct {
		opset   int64
		axis    int64
		largest int64
	}{
		{9, -1, 1}, {10, 1, 1}, {11, 0, 0}, {11, -1, 1}, {13, 1, 0},
	} {
		t.Run(fmt.Sprintf("axis %d largest %d opset %d", c.axis, c.largest, c.opset), func(t *testing.T) {
			m := newModel(t, c.opset)
			m.input("x", m.randn(3, 4, 5))
			attrs := []*onnx.Attribute{intAttr("axis", c.axis)}
			ins := []string{"x"}
			if c.opset < 10 {
				attrs = append(attrs, intAttr("k", 2))
			} else {
				m.param("k", shapeI64([]int64{2}))
				ins = append(ins, "k")
			}
			if c.opset >= 11 {
				attrs = append(attrs, intAttr("largest", c.largest))
			}
			m.node("TopK", ins, []string{"y", "idx"}, attrs...)
			checkGradients(t, m, "y")
		})
	}
}

func TestScatterGradients(t *testing.T) {
	for _, c := range []struct {
		op        string
		opset     int64
		reduction string
		axis      int64
	}{
		{"Scatter", 9, "", 1},
		{"Scatter", 10, "", -2},
		{"ScatterElements", 11, "", 1},
		{"ScatterElements", 13, "", 0},
		{"ScatterElements", 16, "add", -1},
		{"ScatterND", 11, "", 0},
		{"ScatterND", 16, "none", 0},
		{"ScatterND", 16, "add", 0},
	} {
		t.Run(fmt.Sprintf("%s %s axis %d opset %d", c.op, c.reduction, c.axis, c.opset), func(t *testing.T) {
			m := newModel(t, c.opset)
			m.input("x", m.randn(3, 4))
			attrs := []*onnx.Attribute{}
			if c.reduction != "" {
				attrs = append(attrs, strAttr("reduction", c.reduction))
			}
			if c.op == "ScatterND" {
				// Rows 2 and 0 (by -3), and element [1, 3].
				m.input("i", shapeI64([]int64{2, -3}, 2, 1))
				m.param("u", m.randn(2, 4))
				m.node(c.op, []string{"x", "i", "u"}, []string{"y"}, attrs...)
				m.input("j", shapeI64([]int64{1, 3}, 1, 2))
				m.param("v", m.randn(1))
				m.node(c.op, []string{"y", "j", "v"}, []string{"z"}, attrs...)
				checkGradients(t, m, "z")
				return
			}
			attrs = append(attrs, intAttr("axis", c.axis))
			// Distinct positions along the axis, per line.
			var idx []int64
			var shape []int
			switch c.axis {
			case 1, -1:
				idx, shape = []int64{3, 0, 1, -1, 0, 2}, []int{3, 2}
			default:
				idx, shape = []int64{2, 0, 1, 0, 1, -1}, []int{2, 3}
			}
			m.input("i", shapeI64(idx, shape...))
			m.param("u", m.randn(shape...))
			m.node(c.op, []string{"x", "i", "u"}, []string{"y"}, attrs...)
			checkGradients(t, m, "y")
		})
	}
}

func TestCumSumReverseSequenceGradients(t *testing.T) {
	for _, opset := range []int64{11, 14} {
		for _, ex := range []int64{0, 1} {
			for _, rev := range []int64{0, 1} {
				t.Run(fmt.Sprintf("CumSum exclusive %d reverse %d opset %d", ex, rev, opset), func(t *testing.T) {
					m := newModel(t, opset)
					m.input("x", m.randn(3, 5))
					m.param("a", onnx.FromSlice([]int32{-1}))
					m.node("CumSum", []string{"x", "a"}, []string{"y"}, intAttr("exclusive", ex), intAttr("reverse", rev))
					checkGradients(t, m, "y")
				})
			}
		}
	}
	for _, batchAxis := range []int64{0, 1} {
		t.Run(fmt.Sprintf("ReverseSequence batch axis %d", batchAxis), func(t *testing.T) {
			m := newModel(t, 10)
			shape := []int{4, 3, 2}
			if batchAxis == 0 {
				shape = []int{3, 4, 2}
			}
			m.input("x", m.randn(shape...))
			m.input("l", shapeI64([]int64{4, 1, 3}))
			m.node("ReverseSequence", []string{"x", "l"}, []string{"y"}, intAttr("batch_axis", batchAxis), intAttr("time_axis", 1-batchAxis))
			checkGradients(t, m, "y")
		})
	}
}

func TestSelectGradientsFreeBatch(t *testing.T) {
	idxN := func(n int, vals ...int64) *onnx.Tensor { // n rows of vals
		var all []int64
		for range n {
			all = append(all, vals...)
		}
		return shapeI64(all, n, len(vals))
	}
	for _, c := range []struct {
		name  string
		opset int64
		build func(m *model, n int)
	}{
		{"Concat Split", 13, func(m *model, n int) {
			m.input("x", m.randn(n, 3))
			m.param("w", m.randn(1, 3))
			m.node("Concat", []string{"x", "w"}, []string{"c"}, intAttr("axis", 0))
			m.param("s", shapeI64([]int64{1, 2}))
			m.node("Split", []string{"c", "s"}, []string{"p", "q"}, intAttr("axis", 1))
			m.node("Mul", []string{"q", "q"}, []string{"y"})
		}},
		{"Concat Split opset 11", 11, func(m *model, n int) {
			m.input("x", m.randn(n, 3))
			m.input("w", m.randn(n, 2))
			m.node("Concat", []string{"x", "w"}, []string{"c"}, intAttr("axis", 1))
			m.node("Split", []string{"c"}, []string{"p", "q"}, intAttr("axis", 1), ints("split", 4, 1))
			m.node("Mul", []string{"p", "p"}, []string{"y"})
		}},
		{"Slice", 13, func(m *model, n int) {
			m.input("x", m.randn(n, 4, 7))
			m.param("st", shapeI64([]int64{0, 5, -1}))
			m.param("en", shapeI64([]int64{math.MaxInt64, 0, -100}))
			m.param("ax", shapeI64([]int64{0, 2, 1}))
			m.param("sp", shapeI64([]int64{1, -2, -1}))
			m.node("Slice", []string{"x", "st", "en", "ax", "sp"}, []string{"y"})
		}},
		{"Pad", 13, func(m *model, n int) {
			m.input("x", m.randn(n, 4, 5))
			m.param("p", shapeI64([]int64{0, 1, -1, 0, 2, 1}))
			m.node("Pad", []string{"x", "p"}, []string{"y"})
		}},
		{"Pad edge", 11, func(m *model, n int) {
			m.input("x", m.randn(n, 4, 5))
			m.param("p", shapeI64([]int64{0, 1, 2, 0, 2, 1}))
			m.node("Pad", []string{"x", "p"}, []string{"y"}, strAttr("mode", "edge"))
		}},
		{"Gather indices batch", 11, func(m *model, n int) {
			m.param("x", m.randn(5, 3))
			m.input("i", idxN(n, 4, -1, 0, 4))
			m.node("Gather", []string{"x", "i"}, []string{"y"})
		}},
		{"Gather indices batch opset 13", 13, func(m *model, n int) {
			m.param("x", m.randn(5, 3))
			m.input("i", idxN(n, 4, -1, 0, 4))
			m.node("Gather", []string{"x", "i"}, []string{"y"})
		}},
		{"Gather data batch", 9, func(m *model, n int) {
			m.input("x", m.randn(n, 5, 3))
			m.param("i", shapeI64([]int64{1, 1, -1}))
			m.node("Gather", []string{"x", "i"}, []string{"y"}, intAttr("axis", 1))
		}},
		{"Gather free axis", 13, func(m *model, n int) {
			m.input("x", m.randn(n, 3))
			m.param("i", shapeI64([]int64{0, 1, 0, -1}))
			m.node("Gather", []string{"x", "i"}, []string{"y"})
		}},
		{"GatherElements", 11, func(m *model, n int) {
			m.input("x", m.randn(n, 4))
			m.input("i", idxN(n, 3, 3, 0))
			m.node("GatherElements", []string{"x", "i"}, []string{"y"}, intAttr("axis", 1))
		}},
		{"GatherND", 17, func(m *model, n int) {
			m.input("x", m.randn(n, 4, 2))
			m.param("i", shapeI64([]int64{1, 3, -1, 0, 1, 3}, 3, 2))
			m.node("GatherND", []string{"x", "i"}, []string{"y"})
		}},
		{"GatherND opset 11", 11, func(m *model, n int) {
			m.param("x", m.randn(4, 2, 3))
			m.input("i", idxN(n, 1, -1))
			m.node("GatherND", []string{"x", "i"}, []string{"y"})
		}},
		{"Where", 9, func(m *model, n int) {
			m.input("x", m.randn(n, 1, 3))
			m.param("c", selBool([]bool{true, false, true}))
			m.param("w", m.randn(2, 1))
			m.node("Where", []string{"c", "x", "w"}, []string{"y"})
		}},
		{"Compress", 11, func(m *model, n int) {
			m.input("x", m.randn(n, 4))
			m.param("c", selBool([]bool{true, false, false, true}))
			m.node("Compress", []string{"x", "c"}, []string{"y"}, intAttr("axis", 1))
		}},
		{"Compress flat", 9, func(m *model, n int) {
			m.input("x", m.randn(n, 2))
			m.param("c", selBool([]bool{true, false, false, true}))
			m.node("Compress", []string{"x", "c"}, []string{"y"})
		}},
		{"TopK", 11, func(m *model, n int) {
			m.input("x", m.randn(n, 6))
			m.param("k", shapeI64([]int64{3}))
			m.node("TopK", []string{"x", "k"}, []string{"y", "i"})
		}},
		{"ScatterElements", 13, func(m *model, n int) {
			m.input("x", m.randn(n, 4))
			m.input("i", idxN(n, 3, 0))
			m.input("u", m.randn(n, 2))
			m.node("ScatterElements", []string{"x", "i", "u"}, []string{"y"}, intAttr("axis", 1))
		}},
		{"CumSum", 14, func(m *model, n int) {
			m.input("x", m.randn(n, 5))
			m.param("a", shapeI64([]int64{1}, []int{}...))
			m.node("CumSum", []string{"x", "a"}, []string{"y"}, intAttr("reverse", 1))
		}},
	} {
		t.Run(c.name, func(t *testing.T) { checkBatches(t, c.opset, c.build, "y") })
	}
}

// selDouble is a float64 copy of a float32 tensor.
func selDouble(t *onnx.Tensor) *onnx.Tensor {
	d := make([]float64, t.Len())
	for i, v := range t.Float32s() {
		d[i] = float64(v)
	}
	return onnx.FromSlice(d, t.Shape...)
}

func TestSelectGradientsDouble(t *testing.T) {
	for _, c := range []struct {
		name  string
		opset int64
		build func(m *model)
	}{
		{"Gather OneHot", 11, func(m *model) {
			m.input("i", shapeI64([]int64{1, 1, -2}))
			m.node("Gather", []string{"x", "i"}, []string{"yd"}, intAttr("axis", 1))
		}},
		{"Gather ScatterND", 17, func(m *model) {
			m.input("i", shapeI64([]int64{1, 1, -2}))
			m.node("Gather", []string{"x", "i"}, []string{"yd"}, intAttr("axis", 1))
		}},
		{"Slice steps", 13, func(m *model) {
			m.param("st", shapeI64([]int64{-1, 0}))
			m.param("en", shapeI64([]int64{-100, 3}))
			m.param("ax", shapeI64([]int64{1, 2}))
			m.param("sp", shapeI64([]int64{-2, 2}))
			m.node("Slice", []string{"x", "st", "en", "ax", "sp"}, []string{"yd"})
		}},
		{"Pad reflect", 11, func(m *model) {
			m.param("p", shapeI64([]int64{0, 1, 2, 0, 2, 1}))
			m.node("Pad", []string{"x", "p"}, []string{"yd"}, strAttr("mode", "reflect"))
		}},
		{"Einsum", 13, func(m *model) {
			m.param("w", selDouble(m.randn(4, 3)))
			m.node("Einsum", []string{"x", "w"}, []string{"yd"}, strAttr("equation", "bij,jk->bki"))
		}},
		{"Cast", 13, func(m *model) {
			m.node("Cast", []string{"x"}, []string{"f"}, intAttr("to", int64(onnx.Float)))
			m.node("Cast", []string{"f"}, []string{"yd"}, intAttr("to", int64(onnx.Double)))
		}},
		{"Resize", 13, func(m *model) {
			m.shapeConst("sc", resizeF32(1, 1.5, 2))
			m.node("Resize", []string{"x", "", "sc"}, []string{"yd"}, strAttr("mode", "nearest"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, c.opset)
			m.input("x", selDouble(m.randn(2, 3, 4)))
			c.build(m)
			// The harness's loss takes a float output.
			m.node("Cast", []string{"yd"}, []string{"y"}, intAttr("to", int64(onnx.Float)))
			checkGradients(t, m, "y")
		})
	}
}

// Repeated indices without a reduction: the engines keep the last write,
// and only that update gets a gradient.
func TestScatterDuplicateGradients(t *testing.T) {
	for _, c := range []struct {
		op    string
		opset int64
		fixed bool
	}{
		{"Scatter", 9, false},
		{"Scatter", 10, true},
		{"ScatterElements", 11, false},
		{"ScatterElements", 13, true},
		{"ScatterElements", 16, false},
		{"ScatterND", 11, false},
		{"ScatterND", 16, true},
	} {
		t.Run(fmt.Sprintf("%s fixed %v opset %d", c.op, c.fixed, c.opset), func(t *testing.T) {
			m := newModel(t, c.opset)
			m.input("x", m.randn(3, 4))
			idx, shape := []int64{1, 1, 3, -1, 0, 0}, []int{3, 2}
			attrs := []*onnx.Attribute{intAttr("axis", 1)}
			ushape := shape
			if c.op == "ScatterND" {
				idx, shape, ushape, attrs = []int64{2, 0, -1, 0, 2}, []int{5, 1}, []int{5, 4}, nil
			}
			if c.fixed {
				m.param("i", shapeI64(idx, shape...))
			} else {
				m.input("i", shapeI64(idx, shape...))
			}
			m.param("u", m.randn(ushape...))
			m.node(c.op, []string{"x", "i", "u"}, []string{"y"}, attrs...)
			checkGradients(t, m, "y")
		})
	}
	for _, opset := range []int64{11, 16} {
		t.Run(fmt.Sprint("free batch opset ", opset), func(t *testing.T) {
			checkBatches(t, opset, func(m *model, n int) {
				m.input("x", m.randn(n, 4))
				var idx []int64
				for range n {
					idx = append(idx, 2, 2, 0)
				}
				m.input("i", shapeI64(idx, n, 3))
				m.input("u", m.randn(n, 3))
				m.node("ScatterElements", []string{"x", "i", "u"}, []string{"y"}, intAttr("axis", 1))
			}, "y")
		})
		t.Run(fmt.Sprint("ScatterND free batch opset ", opset), func(t *testing.T) {
			checkBatches(t, opset, func(m *model, n int) {
				m.param("x", m.randn(3, 4))
				var idx []int64
				for range n {
					idx = append(idx, 1, 1)
				}
				m.input("i", shapeI64(idx, n, 2, 1))
				m.input("u", m.randn(n, 2, 4))
				m.node("ScatterND", []string{"x", "i", "u"}, []string{"y"})
			}, "y")
		})
	}
}

// selExpectFail checks that building the training graph of m fails with
// an error that mentions want.
func selExpectFail(t *testing.T, m *model, output, want string) {
	t.Helper()
	mm := m.build(output)
	net, err := nativeNet(mm)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := net.Inference(m.feeds)
	net.Close()
	if err != nil {
		t.Fatal(err)
	}
	loss, err := network.AppendLoss(mm, network.LossMeanSquaredError, output, "target")
	if err != nil {
		t.Fatal(err)
	}
	low, err := autodiff.Lower(mm)
	if err != nil {
		t.Fatal(err)
	}
	feeds := map[string]onnx.Value{"target": outs[output]}
	for k, v := range m.feeds {
		feeds[k] = v
	}
	info, err := autodiff.Probe(nativeNet, low, feeds)
	if err != nil {
		t.Fatal(err)
	}
	var wrt []string
	for _, in := range mm.Graph.Inputs {
		if in.Type.Elem.IsFloat() {
			wrt = append(wrt, in.Name)
		}
	}
	_, err = autodiff.Gradients(low, autodiff.Options{Loss: loss, WRT: wrt, Info: info})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got error %v, want one that mentions %q", err, want)
	}
}

func TestSelectGradientsUnsupported(t *testing.T) {
	t.Run("ScatterElements reduction mul", func(t *testing.T) {
		m := newModel(t, 16)
		m.input("x", m.randn(3, 4))
		m.shapeConst("i", shapeI64([]int64{1, 2}, 1, 2))
		m.input("u", m.randn(1, 2))
		m.node("ScatterElements", []string{"x", "i", "u"}, []string{"y"}, intAttr("axis", 1), strAttr("reduction", "mul"))
		selExpectFail(t, m, "y", `reduction "mul"`)
	})
	t.Run("Pad reflect beyond the axis", func(t *testing.T) {
		m := newModel(t, 13)
		m.input("x", m.randn(2, 3))
		m.shapeConst("p", shapeI64([]int64{0, 3, 0, 0}))
		m.node("Pad", []string{"x", "p"}, []string{"y"}, strAttr("mode", "reflect"))
		selExpectFail(t, m, "y", "reflect padding")
	})
	t.Run("Resize keep_aspect_ratio_policy", func(t *testing.T) {
		m := newModel(t, 18)
		m.input("x", m.randn(1, 1, 3, 4))
		m.shapeConst("s", shapeI64([]int64{1, 1, 6, 6}))
		m.node("Resize", []string{"x", "", "", "s"}, []string{"y"}, strAttr("keep_aspect_ratio_policy", "not_larger"))
		selExpectFail(t, m, "y", "keep_aspect_ratio_policy")
	})
}
