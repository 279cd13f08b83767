package native

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

func TestReduceGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	x := func() map[string]*onnx.Tensor { return map[string]*onnx.Tensor{"X": randDoubles(r, 2, 3, 4)} }
	pos := func() map[string]*onnx.Tensor {
		v := randDoubles(r, 2, 3, 4)
		for i := range v.Float64s() {
			v.Float64s()[i] += 2
		}
		return map[string]*onnx.Tensor{"X": v}
	}
	withZeros := func() map[string]*onnx.Tensor {
		v := randDoubles(r, 2, 3, 4)
		d := v.Float64s()
		d[1] = 0          // one zero in group (0, :, 1)
		d[4], d[8] = 0, 0 // two zeros in group (0, :, 0)
		d[12+3*4-1] = 0   // one zero elsewhere
		return map[string]*onnx.Tensor{"X": v}
	}
	node := func(opset int64, op string, inputs []string, attrs ...*onnx.Attribute) []*onnx.Node {
		return []*onnx.Node{testNode(t, opset, op, inputs, []string{"Y"}, attrs...)}
	}
	ax := func(v ...int64) map[string]*onnx.Tensor { return map[string]*onnx.Tensor{"axes": i64s(v...)} }
	cases := []gradShapeCase{
		{name: "Sum 1 axes keepdims 0", nodes: node(1, "ReduceSum", []string{"X"}, intsAttr("axes", 1), intAttr("keepdims", 0)), feeds: x(), out: "Y"},
		{name: "Sum 13 axes input", nodes: node(13, "ReduceSum", []string{"X", "axes"}), feeds: x(), consts: ax(-1, 0), out: "Y"},
		{name: "Sum 13 all", nodes: node(13, "ReduceSum", []string{"X"}, intAttr("keepdims", 0)), feeds: x(), out: "Y"},
		{name: "Sum 13 noop", nodes: node(13, "ReduceSum", []string{"X", "axes"}, intAttr("noop_with_empty_axes", 1)), feeds: x(), consts: map[string]*onnx.Tensor{"axes": onnx.FromSlice([]int64{}, 0)}, out: "Y"},
		{name: "Mean 1", nodes: node(1, "ReduceMean", []string{"X"}, intsAttr("axes", 0, 2)), feeds: x(), out: "Y"},
		{name: "Mean 18", nodes: node(18, "ReduceMean", []string{"X", "axes"}, intAttr("keepdims", 0)), feeds: x(), consts: ax(1), out: "Y"},
		{name: "Max 13", nodes: node(13, "ReduceMax", []string{"X"}, intsAttr("axes", 1)), feeds: x(), out: "Y"},
		{name: "Max 18 all", nodes: node(18, "ReduceMax", []string{"X"}), feeds: x(), out: "Y"},
		{name: "Min 18", nodes: node(18, "ReduceMin", []string{"X", "axes"}, intAttr("keepdims", 0)), feeds: x(), consts: ax(2, 0), out: "Y"},
		{name: "Min 1", nodes: node(1, "ReduceMin", []string{"X"}), feeds: x(), out: "Y"},
		{name: "Prod 13", nodes: node(13, "ReduceProd", []string{"X"}, intsAttr("axes", 1)), feeds: x(), out: "Y"},
		{name: "Prod 18 zeros", nodes: node(18, "ReduceProd", []string{"X", "axes"}), feeds: withZeros(), consts: ax(1), out: "Y"},
		{name: "L1 13", nodes: node(13, "ReduceL1", []string{"X"}, intsAttr("axes", -1)), feeds: x(), out: "Y"},
		{name: "L1 18", nodes: node(18, "ReduceL1", []string{"X", "axes"}, intAttr("keepdims", 0)), feeds: x(), consts: ax(0), out: "Y"},
		{name: "L2 11", nodes: node(11, "ReduceL2", []string{"X"}, intsAttr("axes", 1, 2)), feeds: x(), out: "Y"},
		{name: "L2 18", nodes: node(18, "ReduceL2", []string{"X", "axes"}), feeds: x(), consts: ax(1), out: "Y"},
		{name: "LogSum 1", nodes: node(1, "ReduceLogSum", []string{"X"}, intsAttr("axes", 2)), feeds: pos(), out: "Y"},
		{name: "LogSum 18", nodes: node(18, "ReduceLogSum", []string{"X", "axes"}, intAttr("keepdims", 0)), feeds: pos(), consts: ax(0, 1), out: "Y"},
		{name: "LogSumExp 13", nodes: node(13, "ReduceLogSumExp", []string{"X"}, intsAttr("axes", 0)), feeds: x(), out: "Y"},
		{name: "LogSumExp 18", nodes: node(18, "ReduceLogSumExp", []string{"X", "axes"}), feeds: x(), consts: ax(-2), out: "Y"},
		{name: "SumSquare 1", nodes: node(1, "ReduceSumSquare", []string{"X"}, intAttr("keepdims", 0)), feeds: x(), out: "Y"},
		{name: "SumSquare 18", nodes: node(18, "ReduceSumSquare", []string{"X", "axes"}), feeds: x(), consts: ax(1), out: "Y"},
	}
	runGradCases(t, 4, cases)
}

// Ties in ReduceMax and ReduceMin: the first extreme gets the gradient.
func TestReduceMaxTiesGoToTheFirst(t *testing.T) {
	for _, op := range []string{"ReduceMax", "ReduceMin"} {
		v := 3.0
		if op == "ReduceMin" {
			v = -3
		}
		nodes := []*onnx.Node{
			testNode(t, 13, op, []string{"X"}, []string{"M"}, intsAttr("axes", 1), intAttr("keepdims", 0)),
			testNode(t, 13, "MatMul", []string{"M", "w"}, []string{"L"}),
		}
		params := map[string]*onnx.Tensor{"w": onnx.FromSlice([]float64{2, 5}, 2)}
		m := graphOf(t, nodes, map[string][]int64{"X": {2, 3}}, "L", params)
		net, err := New(m, backend.Options{})
		if err != nil {
			t.Fatal(err)
		}
		feeds := map[string]onnx.Value{"X": onnx.FromSlice([]float64{1, v, v, v, 0, v}, 2, 3)}
		if _, err := net.InferenceAndBackprop(feeds, "L"); err != nil {
			t.Fatal(err)
		}
		g, err := net.Fetch(network.GradName("X"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := g[0].(*onnx.Tensor).Float64s(), []float64{0, 2, 0, 5, 0, 0}; !slices.Equal(got, want) {
			t.Errorf("%s: gradient %v, want %v", op, got, want)
		}
	}
}

func TestCumSumGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	var cases []gradShapeCase
	for _, ex := range []int64{0, 1} {
		for _, rev := range []int64{0, 1} {
			cases = append(cases, gradShapeCase{
				name:   "exclusive " + string(rune('0'+ex)) + " reverse " + string(rune('0'+rev)),
				nodes:  []*onnx.Node{testNode(t, 14, "CumSum", []string{"X", "axis"}, []string{"Y"}, intAttr("exclusive", ex), intAttr("reverse", rev))},
				feeds:  map[string]*onnx.Tensor{"X": randDoubles(r, 2, 4, 3)},
				consts: map[string]*onnx.Tensor{"axis": onnx.Scalar(int32(-2))},
				out:    "Y",
			})
		}
	}
	cases = append(cases, gradShapeCase{name: "11 axis 0",
		nodes: []*onnx.Node{testNode(t, 11, "CumSum", []string{"X", "axis"}, []string{"Y"}, intAttr("reverse", 1))},
		feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 3, 2)}, consts: map[string]*onnx.Tensor{"axis": onnx.FromSlice([]int64{0}, 1)}, out: "Y"})
	runGradCases(t, 5, cases)
}

func TestCumProdGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(55, 56))
	x := func(shape ...int) map[string]*onnx.Tensor {
		return map[string]*onnx.Tensor{"X": randDoubles(r, shape...)}
	}
	withZeros := func(shape ...int) map[string]*onnx.Tensor {
		m := x(shape...)
		d := m["X"].Float64s()
		d[1], d[4] = 0, 0
		d[len(d)-1] = 0
		return m
	}
	var cases []gradShapeCase
	for ex := range int64(2) {
		for rev := range int64(2) {
			cases = append(cases, gradShapeCase{name: fmt.Sprintf("CumProd ex%d rev%d", ex, rev),
				nodes: []*onnx.Node{testNode(t, 26, "CumProd", []string{"X", "A"}, []string{"Y"}, intAttr("exclusive", ex), intAttr("reverse", rev))},
				feeds: withZeros(2, 5, 3), consts: map[string]*onnx.Tensor{"A": onnx.FromSlice([]int64{1})}, out: "Y"},
				gradShapeCase{name: fmt.Sprintf("CumProd 1D ex%d rev%d", ex, rev),
					nodes: []*onnx.Node{testNode(t, 26, "CumProd", []string{"X", "A"}, []string{"Y"}, intAttr("exclusive", ex), intAttr("reverse", rev))},
					feeds: x(6), consts: map[string]*onnx.Tensor{"A": onnx.FromSlice([]int32{-1})}, out: "Y"})
		}
	}
	runGradCases(t, 13, cases)
}

func TestEinsumGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	eq := func(e string) *onnx.Attribute { return strAttrOf("equation", e) }
	ein := func(e string, ins ...string) []*onnx.Node {
		return []*onnx.Node{testNode(t, 12, "Einsum", ins, []string{"Y"}, eq(e))}
	}
	feeds := func(shapes ...[]int) map[string]*onnx.Tensor {
		m := map[string]*onnx.Tensor{}
		for i, s := range shapes {
			m[string(rune('A'+i))] = randDoubles(r, s...)
		}
		return m
	}
	runGradCases(t, 6, []gradShapeCase{
		{name: "matmul", nodes: ein("ij,jk->ik", "A", "B"), feeds: feeds([]int{2, 3}, []int{3, 4}), out: "Y"},
		{name: "batched", nodes: ein("bij,bjk->bik", "A", "B"), feeds: feeds([]int{2, 2, 3}, []int{2, 3, 2}), out: "Y"},
		{name: "transpose", nodes: ein("ijk->kij", "A"), feeds: feeds([]int{2, 3, 4}), out: "Y"},
		{name: "diagonal", nodes: ein("ii->i", "A"), feeds: feeds([]int{3, 3}), out: "Y"},
		{name: "trace implicit", nodes: ein("ii", "A"), feeds: feeds([]int{3, 3}), out: "Y"},
		{name: "dot implicit", nodes: ein("i,i", "A", "B"), feeds: feeds([]int{4}, []int{4}), out: "Y"},
		{name: "outer", nodes: ein("i,j->ij", "A", "B"), feeds: feeds([]int{2}, []int{3}), out: "Y"},
		{name: "sum all", nodes: ein("ij->", "A"), feeds: feeds([]int{2, 3}), out: "Y"},
		{name: "private label", nodes: ein("ij,jk->i", "A", "B"), feeds: feeds([]int{2, 3}, []int{3, 2}), out: "Y"},
		{name: "broadcast ellipsis", nodes: ein("...ij,...jk->...ik", "A", "B"), feeds: feeds([]int{2, 1, 2, 3}, []int{3, 3, 2}), out: "Y"},
		{name: "three operands", nodes: ein("ij,jk,kl->il", "A", "B", "C"), feeds: feeds([]int{2, 3}, []int{3, 2}, []int{2, 2}), out: "Y"},
		{name: "repeated operand label with others", nodes: ein("iij,jk->ik", "A", "B"), feeds: feeds([]int{2, 2, 3}, []int{3, 2}), out: "Y"},
	})
}

// The rules run in float32 too: a chain through most of them gives the
// float64 chain's gradients to float32 precision.
func TestShapeAndReduceGradientsFloat32(t *testing.T) {
	nodes := func() []*onnx.Node {
		return []*onnx.Node{
			testNode(t, 17, "Transpose", []string{"X"}, []string{"T"}, intsAttr("perm", 1, 0, 2)),                 // [3,2,4]
			testNode(t, 17, "Slice", []string{"T", "s", "e", "a", "st"}, []string{"S"}),                           // [3,2,2]
			testNode(t, 17, "Pad", []string{"S", "pads"}, []string{"P"}, strAttrOf("mode", "reflect")),            // [3,2,4]
			testNode(t, 17, "Concat", []string{"P", "T"}, []string{"C"}, intAttr("axis", 1)),                      // [3,4,4]
			testNode(t, 17, "Split", []string{"C"}, []string{"C1", "C2"}, intAttr("axis", 2)),                     // [3,4,2] x2
			testNode(t, 17, "Tile", []string{"C1", "reps"}, []string{"Ti"}),                                       // [3,4,4]
			testNode(t, 17, "Gather", []string{"Ti", "gi"}, []string{"G"}, intAttr("axis", 1)),                    // [3,3,4]
			testNode(t, 17, "ReduceMax", []string{"G"}, []string{"M"}, intsAttr("axes", 1)),                       // [3,1,4]
			testNode(t, 17, "CumSum", []string{"M", "ax"}, []string{"Cs"}, intAttr("reverse", 1)),                 // [3,1,4]
			testNode(t, 17, "Einsum", []string{"Cs", "C2"}, []string{"E"}, strAttrOf("equation", "bik,bjl->bkl")), // [3,4,2]
			testNode(t, 17, "Resize", []string{"E", "", "sc"}, []string{"R"}, strAttrOf("mode", "linear")),        // [3,4,3]
			testNode(t, 17, "ReduceLogSumExp", []string{"R"}, []string{"L1"}, intsAttr("axes", 2)),                // [3,4,1]
			testNode(t, 17, "Expand", []string{"L1", "shape"}, []string{"Ex"}),                                    // [3,4,2]
			testNode(t, 17, "Gather", []string{"C2", "g0"}, []string{"U"}),
			testNode(t, 17, "ScatterND", []string{"Ex", "si", "U"}, []string{"Sc"}),            // [3,4,2]
			testNode(t, 17, "ReduceProd", []string{"Sc"}, []string{"Pr"}, intsAttr("axes", 1)), // [3,1,2]
			testNode(t, 17, "ReduceL2", []string{"Pr"}, []string{"L"}, intAttr("keepdims", 0)),
		}
	}
	inits := func() []*onnx.Initializer {
		var out []*onnx.Initializer
		for name, v := range map[string]*onnx.Tensor{
			"s": i64s(-1, 0), "e": i64s(-100, 3), "a": i64s(2, 0), "st": i64s(-2, 1), "pads": i64s(0, 0, 1, 0, 0, 1),
			"reps": i64s(1, 1, 2), "gi": i64s(3, 0, -1), "ax": onnx.Scalar(int64(2)), "shape": i64s(3, 4, 2),
			"si": onnx.FromSlice([]int64{1}, 1, 1), "g0": i64s(0),
		} {
			out = append(out, &onnx.Initializer{Name: name, Tensor: v})
		}
		return out
	}
	r := rand.New(rand.NewPCG(31, 32))
	x64 := randDoubles(r, 2, 3, 4)
	x32 := onnx.NewTensor(onnx.Float, 2, 3, 4)
	for i, v := range x64.Float64s() {
		x32.Float32s()[i] = float32(v)
	}
	grads := map[onnx.DataType][]float64{}
	for _, typ := range []onnx.DataType{onnx.Float, onnx.Double} {
		in := floatTensorType(2, 3, 4)
		in.Elem = typ
		ns := append([]*onnx.Node{constNode(t, "sc", f32s(1, 1, 1.5))}, nodes()...)
		m := testModel(ns, []*onnx.ValueInfo{{Name: "X", Type: in}}, []*onnx.ValueInfo{{Name: "L"}}, inits()...)
		net, err := New(m, backend.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var feed onnx.Value = x64
		if typ == onnx.Float {
			feed = x32
		}
		for range 3 { // reused buffers give the same answer
			if _, err := net.InferenceAndBackprop(map[string]onnx.Value{"X": feed}, "L"); err != nil {
				t.Fatal(err)
			}
		}
		g, err := net.Fetch(network.GradName("X"))
		if err != nil {
			t.Fatal(err)
		}
		gt := g[0].(*onnx.Tensor)
		vals := make([]float64, gt.Len())
		for i := range vals {
			if typ == onnx.Float {
				vals[i] = float64(gt.Float32s()[i])
			} else {
				vals[i] = gt.Float64s()[i]
			}
		}
		grads[typ] = vals
	}
	nonZero := 0
	for i, want := range grads[onnx.Double] {
		got := grads[onnx.Float][i]
		if d := got - want; d > 1e-3*max(1, abs64(want)) || -d > 1e-3*max(1, abs64(want)) {
			t.Errorf("dL/dX[%d] = %v in float32, %v in float64", i, got, want)
		}
		if want != 0 {
			nonZero++
		}
	}
	if nonZero < 4 {
		t.Errorf("only %d non-zero gradient elements: %v", nonZero, grads[onnx.Double])
	}
}

func abs64(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
