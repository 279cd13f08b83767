package native

import (
	"math"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// noop_with_empty_axes=1 without axes reduces over the empty set of axes
// (numpy axis=()): the reduction step is the identity, but the element-wise
// steps of the composite reductions still apply (ReduceLogSum gives log x,
// ReduceSumSquare x², ReduceL1 and ReduceL2 |x|), as ONNX's reference and the
// attribute's documentation say.
// https://onnx.ai/onnx/operators/onnx__ReduceLogSum.html
func TestReduceNoopWithEmptyAxesKeepsElementwiseSteps(t *testing.T) {
	xs := []float32{1, -2, 3, 0.5, 4, -0.25}
	pos := []float32{1, 2, 3, 0.5, 4, 0.25}
	apply := func(v []float32, f func(float64) float64) []float64 {
		out := make([]float64, len(v))
		for i, e := range v {
			out[i] = f(float64(e))
		}
		return out
	}
	id := func(v float64) float64 { return v }
	cases := []struct {
		op      string
		opset   int64
		x       []float32
		f       func(float64) float64
		noInput bool // axes input absent rather than empty
	}{
		{"ReduceSum", 13, xs, id, false},
		{"ReduceMean", 18, xs, id, true},
		{"ReduceMax", 20, xs, id, false},
		{"ReduceMin", 18, xs, id, false},
		{"ReduceProd", 18, xs, id, false},
		{"ReduceL1", 18, xs, math.Abs, false},
		{"ReduceL2", 18, xs, math.Abs, true},
		{"ReduceLogSum", 18, pos, math.Log, false},
		{"ReduceLogSum", 28, pos, math.Log, true},
		{"ReduceLogSumExp", 18, xs, id, false},
		{"ReduceLogSumExp", 28, xs, id, false},
		{"ReduceSumSquare", 18, xs, func(v float64) float64 { return v * v }, false},
	}
	for _, c := range cases {
		x := onnx.FromSlice(slices.Clone(c.x), 2, 3)
		attrs := []*onnx.Attribute{intAttr("noop_with_empty_axes", 1), intAttr("keepdims", 0)}
		var got *onnx.Tensor
		var err error
		if c.noInput {
			got, err = runNode1(t, c.opset, c.op, attrs, x)
		} else {
			got, err = runNode1(t, c.opset, c.op, attrs, x, onnx.FromSlice([]int64{}, 0))
		}
		if err != nil {
			t.Fatalf("%s-%d: %v", c.op, c.opset, err)
		}
		if !slices.Equal(got.Shape, []int{2, 3}) {
			t.Fatalf("%s-%d: shape %v, want [2 3]", c.op, c.opset, got.Shape)
		}
		floatsClose(t, c.op, got.Float32s(), apply(c.x, c.f), 1e-6)
	}
}

// The integer cases difftest found against ONNX Runtime: ReduceLogSum of
// int32 3 over no axes is int32(log 3) = 1, ReduceL2 of -5 is 5.
func TestReduceNoopWithEmptyAxesIntegers(t *testing.T) {
	attrs := []*onnx.Attribute{intAttr("noop_with_empty_axes", 1)}
	x := onnx.FromSlice([]int32{3, 1, 8, 20}, 2, 2)
	got, err := runNode1(t, 18, "ReduceLogSum", attrs, x)
	if err != nil || !slices.Equal(got.Int32s(), []int32{1, 0, 2, 2}) {
		t.Fatalf("ReduceLogSum-18 int32 noop: %v %v, want [1 0 2 2]", got, err)
	}
	x = onnx.FromSlice([]int32{-5, 3, 0, -1}, 2, 2)
	got, err = runNode1(t, 18, "ReduceL2", attrs, x)
	if err != nil || !slices.Equal(got.Int32s(), []int32{5, 3, 0, 1}) {
		t.Fatalf("ReduceL2-18 int32 noop: %v %v, want [5 3 0 1]", got, err)
	}
	got, err = runNode1(t, 18, "ReduceSumSquare", attrs, x)
	if err != nil || !slices.Equal(got.Int32s(), []int32{25, 9, 0, 1}) {
		t.Fatalf("ReduceSumSquare-18 int32 noop: %v %v, want [25 9 0 1]", got, err)
	}
}

// The gradients follow the element-wise steps too.
func TestReduceNoopWithEmptyAxesGradients(t *testing.T) {
	x := func(shift float64) map[string]*onnx.Tensor {
		v := onnx.FromSlice([]float64{0.7, -1.3, 2.1, 0.4, -0.6, 1.5}, 2, 3)
		for i := range v.Float64s() {
			v.Float64s()[i] += shift
		}
		return map[string]*onnx.Tensor{"X": v}
	}
	empty := map[string]*onnx.Tensor{"axes": onnx.FromSlice([]int64{}, 0)}
	var cases []gradShapeCase
	for _, op := range []string{"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"} {
		shift := 0.0
		if op == "ReduceLogSum" {
			shift = 2
		}
		cases = append(cases, gradShapeCase{
			name:   op + " 18 noop",
			nodes:  []*onnx.Node{testNode(t, 18, op, []string{"X", "axes"}, []string{"Y"}, intAttr("noop_with_empty_axes", 1))},
			feeds:  x(shift),
			consts: empty,
			out:    "Y",
		})
	}
	runGradCases(t, 4, cases)
}
