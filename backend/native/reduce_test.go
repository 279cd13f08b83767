package native

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// reduceByDefinition reduces x (of shape) over axes by visiting every
// input index and adding it to the output index with the reduced
// coordinates dropped: the operator's definition, with no plan.
func reduceByDefinition(op reduceOp, x []float64, shape []int, axes []int) []float64 {
	reduced := make([]bool, len(shape))
	for _, a := range axes {
		reduced[a] = true
	}
	var outDims []int
	for i, d := range shape {
		if !reduced[i] {
			outDims = append(outDims, d)
		}
	}
	n := onnx.NumElements(outDims)
	vals := make([][]float64, n)
	idx := make([]int, len(shape))
	for flat := range x {
		rem := flat
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d] = rem % shape[d]
			rem /= shape[d]
		}
		o := 0
		for d := range shape {
			if !reduced[d] {
				o = o*shape[d] + idx[d]
			}
		}
		vals[o] = append(vals[o], x[flat])
	}
	out := make([]float64, n)
	for o, v := range vals {
		var r float64
		switch op {
		case redSum, redMean, redLogSum:
			for _, e := range v {
				r += e
			}
			if op == redMean {
				r /= float64(len(v))
			}
			if op == redLogSum {
				r = math.Log(r)
			}
		case redMax:
			r = math.Inf(-1)
			for _, e := range v {
				r = math.Max(r, e)
			}
		case redMin:
			r = math.Inf(1)
			for _, e := range v {
				r = math.Min(r, e)
			}
		case redProd:
			r = 1
			for _, e := range v {
				r *= e
			}
		case redL1:
			for _, e := range v {
				r += math.Abs(e)
			}
		case redL2, redSumSquare:
			for _, e := range v {
				r += e * e
			}
			if op == redL2 {
				r = math.Sqrt(r)
			}
		case redLogSumExp:
			for _, e := range v {
				r += math.Exp(e)
			}
			r = math.Log(r)
		}
		out[o] = r
	}
	return out
}

func TestReduceMatchesDefinitionOnRandomShapes(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := range 300 {
		rank := 1 + rng.Intn(5)
		shape := make([]int, rank)
		for i := range shape {
			shape[i] = 1 + rng.Intn(4)
		}
		var axes []int
		for i := range rank {
			if rng.Intn(2) == 0 {
				axes = append(axes, i)
			}
		}
		if len(axes) == 0 {
			axes = []int{rng.Intn(rank)}
		}
		n := onnx.NumElements(shape)
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.Float64()*2 + 0.1
		}
		op := reduceOp(trial % 10)
		k := &reduceKernel{op: op, keepdims: trial%3 != 0, threads: 1 + trial%3}
		in := &onnx.Tensor{Type: onnx.Double, Shape: shape, Data: x}
		axes64 := make([]int64, len(axes))
		for i, a := range axes {
			axes64[i] = int64(a - rank*(i%2)) // some negative
		}
		got, err := k.compute(in, axes64)
		if err != nil {
			t.Fatal(err)
		}
		want := reduceByDefinition(op, x, shape, axes)
		g := got.Data.([]float64)
		if len(g) != len(want) {
			t.Fatalf("%v %v axes %v: %d outputs, want %d", op, shape, axes, len(g), len(want))
		}
		for i := range g {
			if math.Abs(g[i]-want[i]) > 1e-9*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("%v %v axes %v: output %d = %v, want %v", op, shape, axes, i, g[i], want[i])
			}
		}
		if k.keepdims && len(got.Shape) != rank {
			t.Fatalf("keepdims: shape %v", got.Shape)
		}
	}
}

func TestReduceEmptySetGivesIdentity(t *testing.T) {
	// ONNX's *_empty_set cases: shape [2, 0, 4] reduced over axis 1.
	x := &onnx.Tensor{Type: onnx.Float, Shape: []int{2, 0, 4}, Data: []float32{}}
	want := map[reduceOp]float64{
		redSum: 0, redSumSquare: 0, redL1: 0, redL2: 0, redProd: 1,
		redMax: math.Inf(-1), redMin: math.Inf(1), redLogSum: math.Inf(-1), redLogSumExp: math.Inf(-1),
	}
	for op, w := range want {
		k := &reduceKernel{op: op, keepdims: true}
		got, err := k.compute(x, []int64{1})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Shape, []int{2, 1, 4}) {
			t.Fatalf("%v: shape %v", op, got.Shape)
		}
		for _, v := range got.Data.([]float32) {
			if float64(v) != w {
				t.Fatalf("%v of an empty set = %v, want %v", op, v, w)
			}
		}
	}
	// Reducing a non-empty axis of an empty tensor gives an empty tensor.
	k := &reduceKernel{op: redSum, keepdims: false}
	got, err := k.compute(x, []int64{2})
	if err != nil || !slices.Equal(got.Shape, []int{2, 0}) || got.Len() != 0 {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestReduceAxesInputNoopAndDefault(t *testing.T) {
	x := onnx.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	// Empty axes with noop_with_empty_axes: the input unchanged.
	k := &reduceKernel{op: redSum, keepdims: true, noopEmpty: true}
	got, err := k.compute(x, []int64{})
	if err != nil || !slices.Equal(got.Float32s(), x.Float32s()) || !slices.Equal(got.Shape, x.Shape) {
		t.Fatalf("noop: got %v, %v", got, err)
	}
	// Empty axes without it: everything.
	k = &reduceKernel{op: redMean, keepdims: false}
	got, err = k.compute(x, []int64{})
	if err != nil || len(got.Shape) != 0 || got.Float32s()[0] != 3.5 {
		t.Fatalf("all: got %v, %v", got, err)
	}
	// Axes out of range or repeated.
	if _, err := k.compute(x, []int64{2}); err == nil {
		t.Fatal("axis 2 of a rank-2 tensor accepted")
	}
	if _, err := k.compute(x, []int64{1, -1}); err == nil {
		t.Fatal("repeated axis accepted")
	}
}

func TestReduceIntegerAndBoolTypes(t *testing.T) {
	x := onnx.FromSlice([]int32{-3, 7, 2, 5, -8, 1}, 2, 3)
	cases := []struct {
		op   reduceOp
		want []int32
	}{
		{redSum, []int32{6, -2}},
		{redMean, []int32{2, 0}}, // 6/3, -2/3 truncated toward zero
		{redMax, []int32{7, 5}},
		{redMin, []int32{-3, -8}},
		{redProd, []int32{-42, -40}},
		{redL1, []int32{12, 14}},
		{redSumSquare, []int32{62, 90}},
		{redL2, []int32{7, 9}}, // sqrt(62)=7.87, sqrt(90)=9.49 truncated
	}
	for _, c := range cases {
		k := &reduceKernel{op: c.op, keepdims: false}
		got, err := k.compute(x, []int64{1})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Int32s(), c.want) {
			t.Errorf("%v: got %v, want %v", c.op, got.Int32s(), c.want)
		}
	}
	// int64 sums beyond 2^53 stay exact.
	big := onnx.FromSlice([]int64{1 << 60, 1, 1}, 3)
	k := &reduceKernel{op: redSum}
	got, _ := k.compute(big, []int64{0})
	if got.Int64s()[0] != 1<<60+2 {
		t.Errorf("int64 sum = %d", got.Int64s()[0])
	}
	u := onnx.FromSlice([]uint8{200, 7, 255}, 3)
	k = &reduceKernel{op: redMin}
	got, _ = k.compute(u, []int64{0})
	if got.Data.([]uint8)[0] != 7 {
		t.Errorf("uint8 min = %v", got.Data)
	}
	// ReduceMax/Min of bool (version 20): any / all.
	b := onnx.FromSlice([]bool{true, false, false, false}, 2, 2)
	k = &reduceKernel{op: redMax}
	got, err := k.compute(b, []int64{1})
	if err != nil || !slices.Equal(got.Bools(), []bool{true, false}) {
		t.Errorf("bool max: %v %v", got, err)
	}
	k = &reduceKernel{op: redMin}
	got, _ = k.compute(b, []int64{0})
	if !slices.Equal(got.Bools(), []bool{false, false}) {
		t.Errorf("bool min: %v", got.Bools())
	}
}

func TestReduceLogSumExpIsStableAndHalfRounded(t *testing.T) {
	x := onnx.FromSlice([]float64{1000, 1000, -1000}, 3)
	k := &reduceKernel{op: redLogSumExp}
	got, _ := k.compute(x, []int64{0})
	if w := 1000 + math.Log(2); math.Abs(got.Float64s()[0]-w) > 1e-9 {
		t.Errorf("LogSumExp = %v, want %v", got.Float64s()[0], w)
	}
	h := onnx.FromSlice([]onnx.F16{onnx.F16From(1), onnx.F16From(2), onnx.F16From(3)}, 3)
	k = &reduceKernel{op: redSum}
	got, _ = k.compute(h, []int64{0})
	if v := got.Data.([]onnx.F16)[0].Float32(); v != 6 {
		t.Errorf("float16 sum = %v", v)
	}
	// NaN propagates through Max.
	n := onnx.FromSlice([]float32{1, float32(math.NaN()), 3}, 3)
	k = &reduceKernel{op: redMax}
	got, _ = k.compute(n, []int64{0})
	if !math.IsNaN(float64(got.Float32s()[0])) {
		t.Errorf("max with NaN = %v", got.Float32s()[0])
	}
}

func TestReduceLargeParallelMatchesSerial(t *testing.T) {
	shape := []int{3, 70000}
	x := make([]float32, 3*70000)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	in := onnx.FromSlice(x, shape...)
	for _, axes := range [][]int64{{0}, {1}} {
		a := &reduceKernel{op: redSumSquare, threads: 1}
		b := &reduceKernel{op: redSumSquare, threads: 4}
		ga, _ := a.compute(in, axes)
		gb, _ := b.compute(in, axes)
		if !slices.Equal(ga.Float32s(), gb.Float32s()) {
			t.Fatalf("axes %v: parallel result differs", axes)
		}
	}
}

// Expected values worked out by hand,
// https://onnx.ai/onnx/operators/onnx__CumProd.html
func TestCumProd(t *testing.T) {
	x := onnx.FromSlice([]float32{1, 2, 3, 4}, 4)
	ax := onnx.Scalar(int64(0))
	for _, c := range []struct {
		excl, rev int64
		want      []float32
	}{
		{0, 0, []float32{1, 2, 6, 24}},
		{1, 0, []float32{1, 1, 2, 6}},
		{0, 1, []float32{24, 24, 12, 4}},
		{1, 1, []float32{24, 12, 4, 1}},
	} {
		got := runNodeOK(t, 26, "CumProd", []*onnx.Attribute{intAttr("exclusive", c.excl), intAttr("reverse", c.rev)}, 1, x, ax)
		if !slices.Equal(got[0].Float32s(), c.want) {
			t.Errorf("CumProd exclusive=%d reverse=%d: got %v, want %v", c.excl, c.rev, got[0].Float32s(), c.want)
		}
	}
	m := onnx.FromSlice([]int64{1, 2, 3, 4, 5, 6}, 2, 3)
	got := runNodeOK(t, 26, "CumProd", nil, 1, m, onnx.Scalar(int32(1)))
	if !slices.Equal(got[0].Int64s(), []int64{1, 2, 6, 4, 20, 120}) {
		t.Errorf("CumProd axis 1: %v", got[0].Int64s())
	}
	got = runNodeOK(t, 26, "CumProd", nil, 1, m, onnx.Scalar(int64(-2)))
	if !slices.Equal(got[0].Int64s(), []int64{1, 2, 3, 4, 10, 18}) {
		t.Errorf("CumProd axis -2: %v", got[0].Int64s())
	}
	h := &onnx.Tensor{Type: onnx.Float16, Shape: []int{3}, Data: f16Values(0.5, 3, -2)}
	got = runNodeOK(t, 26, "CumProd", []*onnx.Attribute{intAttr("exclusive", 1)}, 1, h, ax)
	if w := float32Values(got[0]); !slices.Equal(w, []float32{1, 0.5, 1.5}) {
		t.Errorf("CumProd float16: %v", w)
	}
	// CumSum still sums.
	got = runNodeOK(t, 14, "CumSum", []*onnx.Attribute{intAttr("exclusive", 1)}, 1, x, ax)
	if !slices.Equal(got[0].Float32s(), []float32{0, 1, 3, 6}) {
		t.Errorf("CumSum exclusive: %v", got[0].Float32s())
	}
	if _, err := runNode(t, 26, "CumProd", nil, 1, x, onnx.Scalar(int64(1))); err == nil {
		t.Error("CumProd accepted axis 1 of a rank-1 input")
	}
}
