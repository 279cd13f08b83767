package native

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/onnx"
)

// runSingleNode builds a one-node model at the given opset and runs it.
func runSingleNode(t *testing.T, opset int64, opType string, inputs map[string]*onnx.Tensor, order []string, attrs ...*onnx.Attribute) *onnx.Tensor {
	t.Helper()
	n := testNode(t, opset, opType, order, []string{"Y"}, attrs...)
	var ins []*onnx.ValueInfo
	feeds := map[string]onnx.Value{}
	for _, name := range order {
		ins = append(ins, &onnx.ValueInfo{Name: name})
		feeds[name] = inputs[name]
	}
	m := testModel([]*onnx.Node{n}, ins, []*onnx.ValueInfo{{Name: "Y"}})
	m.Opsets[""] = opset
	net, err := New(m, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := net.Inference(feeds)
	if err != nil {
		t.Fatal(err)
	}
	return out["Y"].(*onnx.Tensor)
}

func closeTo(t *testing.T, what string, got []float32, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-5*(1+math.Abs(want[i])) {
			t.Fatalf("%s: element %d = %v, want %v (all: %v)", what, i, got[i], want[i], got)
		}
	}
}

// TestGroupNormalizationVersions checks version 18 (scale and bias per
// group) against version 21 (per channel) on X [1, 4, 2]: groups {c0,c1}
// and {c2,c3}, each normalized over its 4 values.
func TestGroupNormalizationVersions(t *testing.T) {
	x := onnx.FromSlice([]float32{0, 1, 2, 3, 10, 10, 20, 20}, 1, 4, 2)
	// Group 0: values 0..3, mean 1.5, var 1.25. Group 1: mean 15, var 25.
	eps := 1e-5
	norm := func(v, mean, vr float64) float64 { return (v - mean) / math.Sqrt(vr+eps) }
	g0 := []float64{norm(0, 1.5, 1.25), norm(1, 1.5, 1.25), norm(2, 1.5, 1.25), norm(3, 1.5, 1.25)}
	g1 := []float64{norm(10, 15, 25), norm(10, 15, 25), norm(20, 15, 25), norm(20, 15, 25)}

	y18 := runSingleNode(t, 18, "GroupNormalization", map[string]*onnx.Tensor{
		"X": x, "S": onnx.FromSlice([]float32{2, 3}, 2), "B": onnx.FromSlice([]float32{1, -1}, 2),
	}, []string{"X", "S", "B"}, intAttr("num_groups", 2))
	want18 := make([]float64, 8)
	for i := range 4 {
		want18[i] = g0[i]*2 + 1
		want18[4+i] = g1[i]*3 - 1
	}
	closeTo(t, "v18", y18.Float32s(), want18)

	y21 := runSingleNode(t, 21, "GroupNormalization", map[string]*onnx.Tensor{
		"X": x, "S": onnx.FromSlice([]float32{1, 2, 3, 4}, 4), "B": onnx.FromSlice([]float32{0, 1, 0, 1}, 4),
	}, []string{"X", "S", "B"}, intAttr("num_groups", 2))
	want21 := []float64{g0[0] * 1, g0[1] * 1, g0[2]*2 + 1, g0[3]*2 + 1, g1[0] * 3, g1[1] * 3, g1[2]*4 + 1, g1[3]*4 + 1}
	closeTo(t, "v21", y21.Float32s(), want21)
}

// TestRMSNormalization checks version 23: y = x / sqrt(mean(x^2) + eps) * scale
// over the last axis.
func TestRMSNormalization(t *testing.T) {
	x := onnx.FromSlice([]float32{3, 4, 1, -1}, 2, 2)
	y := runSingleNode(t, 23, "RMSNormalization", map[string]*onnx.Tensor{
		"X": x, "S": onnx.FromSlice([]float32{1, 2}, 2),
	}, []string{"X", "S"})
	r0 := math.Sqrt((9+16)/2.0 + 1e-5)
	r1 := math.Sqrt(1 + 1e-5)
	closeTo(t, "rms", y.Float32s(), []float64{3 / r0, 8 / r0, 1 / r1, -2 / r1})
}

// TestPoolDilations checks AveragePool version 19 and LpPool version 18
// with dilations and ceil_mode, computed by hand on [1 2 3 4 5].
func TestPoolDilations(t *testing.T) {
	x := onnx.FromSlice([]float32{1, 2, 3, 4, 5}, 1, 1, 5)
	// kernel 2, dilation 2: windows {1,3}, {2,4}, {3,5}.
	avg := runSingleNode(t, 19, "AveragePool", map[string]*onnx.Tensor{"X": x}, []string{"X"},
		intsAttr("kernel_shape", 2), intsAttr("dilations", 2))
	closeTo(t, "avg", avg.Float32s(), []float64{2, 3, 4})
	lp := runSingleNode(t, 18, "LpPool", map[string]*onnx.Tensor{"X": x}, []string{"X"},
		intsAttr("kernel_shape", 2), intsAttr("dilations", 2), intAttr("p", 1))
	closeTo(t, "lp1", lp.Float32s(), []float64{4, 6, 8})
	// ceil_mode with stride 2, kernel 2: windows {1,2}, {3,4}, {5}.
	ceil := runSingleNode(t, 18, "LpPool", map[string]*onnx.Tensor{"X": x}, []string{"X"},
		intsAttr("kernel_shape", 2), intsAttr("strides", 2), intAttr("ceil_mode", 1))
	closeTo(t, "lp2 ceil", ceil.Float32s(), []float64{math.Sqrt(5), 5, 5})
	// count_include_pad counts the padding in the divisor.
	pad := runSingleNode(t, 19, "AveragePool", map[string]*onnx.Tensor{"X": x}, []string{"X"},
		intsAttr("kernel_shape", 3), intsAttr("pads", 1, 1), intAttr("count_include_pad", 1))
	closeTo(t, "avg pad", pad.Float32s(), []float64{1, 2, 3, 4, 3})
}

// TestMaxPoolIndicesColumnMajor checks storage_order 1 on a 2x3 plane.
func TestMaxPoolIndicesColumnMajor(t *testing.T) {
	x := onnx.FromSlice([]float32{1, 9, 2, 3, 4, 8}, 1, 1, 2, 3)
	k := &poolKernel{mode: poolMax, attrs: convWindowAttrs{op: "MaxPool"}, kernelShape: []int64{2, 2}, storageOrder: 1, wantIndices: true}
	y, idx, err := k.compute(x)
	if err != nil {
		t.Fatal(err)
	}
	// Windows: cols 0-1 -> 9 at (0,1); cols 1-2 -> 9 at (0,1).
	// Column-major index of (h, w) in 2x3 is w*2 + h.
	if got := y.Float32s(); got[0] != 9 || got[1] != 9 {
		t.Fatalf("y = %v", got)
	}
	if got := idx.Int64s(); got[0] != 2 || got[1] != 2 {
		t.Fatalf("indices = %v, want [2 2]", got)
	}
}

// TestBatchNormalizationOldTraining checks version 6 with is_test = 0 and
// the statistics outputs: Y uses the batch statistics.
func TestBatchNormalizationTrainingStats(t *testing.T) {
	k := &batchNormKernel{epsilon: 0, momentum: 0.5, spatial: true, training: true}
	x := onnx.FromSlice([]float32{1, 3, 10, 20}, 2, 2) // channel 0: {1, 10}; channel 1: {3, 20}
	one := onnx.FromSlice([]float32{1, 1}, 2)
	zero := onnx.FromSlice([]float32{0, 0}, 2)
	res, err := k.compute(x, one, zero, zero, one)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "y", res.y.Float32s(), []float64{-1, -1, 1, 1})
	if res.runMean[0] != 2.75 || res.runVar[1] != 0.5+0.5*72.25 {
		t.Fatalf("running stats %v %v", res.runMean, res.runVar)
	}
}

func TestLpNormalization(t *testing.T) {
	x := onnx.FromSlice([]float32{3, 4, 0, 0, 1, -1}, 3, 2)
	out, err := runOp(t, "", 1, "LpNormalization", nil, 1, x)
	if err != nil {
		t.Fatal(err)
	}
	s := 1 / math.Sqrt(2)
	sigClose(t, "L2 rows", sigFloats(t, out[0]), []float64{0.6, 0.8, 0, 0, s, -s}, 1e-6)
	out, err = runOp(t, "", 22, "LpNormalization", []*onnx.Attribute{intAttr("axis", 0), intAttr("p", 1)}, 1, x)
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "L1 columns", sigFloats(t, out[0]), []float64{0.75, 0.8, 0, 0, 0.25, -0.2}, 1e-6)
	if _, err := runOp(t, "", 1, "LpNormalization", []*onnx.Attribute{intAttr("p", 3)}, 1, x); err == nil {
		t.Error("p 3: expected an error")
	}
}
