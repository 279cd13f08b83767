package native

import (
	"math"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// Helpers of the tests of the ml classifiers and regressors.

// mlRun runs a one-node ai.onnx.ml model of opType at opset with input x
// and returns its nOut outputs.
func mlRun(t *testing.T, opset int64, opType string, attrs []*onnx.Attribute, nOut int, x *onnx.Tensor) []*onnx.Tensor {
	t.Helper()
	out, err := runOp(t, "ai.onnx.ml", opset, opType, attrs, nOut, x)
	if err != nil {
		t.Fatalf("%s-%d: %v", opType, opset, err)
	}
	return out
}

// mlRunErr is mlRun for a run that must fail; it returns the error.
func mlRunErr(t *testing.T, opset int64, opType string, attrs []*onnx.Attribute, nOut int, x *onnx.Tensor) error {
	t.Helper()
	_, err := runOp(t, "ai.onnx.ml", opset, opType, attrs, nOut, x)
	if err == nil {
		t.Fatalf("%s-%d: no error", opType, opset)
	}
	return err
}

func mlTensorAttr(name string, v *onnx.Tensor) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrTensor, Tensor: v}
}

// mlNear checks a float tensor's shape and values against want, within
// tol relative to max(1, |want|).
func mlNear(t *testing.T, what string, got *onnx.Tensor, shape []int, want []float64, tol float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no output", what)
	}
	if !slices.Equal(got.Shape, shape) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape, shape)
	}
	vals := make([]float64, got.Len())
	if !float64sInto(vals, got.Data) {
		t.Fatalf("%s: tensor(%v) is not a float tensor", what, got.Type)
	}
	if len(vals) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(vals), len(want))
	}
	for i, w := range want {
		g := vals[i]
		if math.IsNaN(w) != math.IsNaN(g) || math.Abs(g-w) > tol*max(1, math.Abs(w)) {
			t.Fatalf("%s: element %d is %v, want %v\n got %v\nwant %v", what, i, g, w, vals, want)
		}
	}
}

func mlInts(t *testing.T, what string, got *onnx.Tensor, want ...int64) {
	t.Helper()
	if got == nil || got.Type != onnx.Int64 || !slices.Equal(got.Int64s(), want) || !slices.Equal(got.Shape, []int{len(want)}) {
		t.Fatalf("%s: got %v, want int64 %v", what, got, want)
	}
}

func mlStrings(t *testing.T, what string, got *onnx.Tensor, want ...string) {
	t.Helper()
	if got == nil || got.Type != onnx.String || !slices.Equal(got.Strings(), want) || !slices.Equal(got.Shape, []int{len(want)}) {
		t.Fatalf("%s: got %v, want strings %v", what, got, want)
	}
}

func mlSig(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func TestMLTransformFunctions(t *testing.T) {
	v := []float64{1, 2, 3}
	mlSoftmax.apply(v)
	s := math.Exp(-2) + math.Exp(-1) + 1
	if math.Abs(v[0]-math.Exp(-2)/s) > 1e-12 || math.Abs(v[2]-1/s) > 1e-12 {
		t.Errorf("softmax: %v", v)
	}
	v = []float64{-800, 0, 800}
	mlLogistic.apply(v)
	if v[0] != 0 || v[1] != 0.5 || v[2] != 1 {
		t.Errorf("logistic: %v", v)
	}
	// SOFTMAX_ZERO leaves a zero score at (about) zero and normalizes the
	// exponentials of the others.
	v = []float64{0, 1, 2}
	mlSoftmaxZero.apply(v)
	s = math.Exp(-1) + 1
	if v[0] != 0 || math.Abs(v[1]-math.Exp(-1)/s) > 1e-12 || math.Abs(v[2]-1/s) > 1e-12 {
		t.Errorf("softmax_zero: %v", v)
	}
	v = []float64{0, 0}
	mlSoftmaxZero.apply(v)
	if v[0] != 0.5 || v[1] != 0.5 {
		t.Errorf("softmax_zero of zeros: %v", v)
	}
	// Probit with the approximate erfinv: 0 at 0.5, odd around it, and
	// within 2e-3 of the normal quantiles.
	for _, c := range []struct{ p, q float64 }{{0.5, 0}, {0.975, 1.959964}, {0.8413447, 1}, {0.1, -1.2815516}} {
		if got := mlProbitOf(c.p); math.Abs(got-c.q) > 2e-3 {
			t.Errorf("probit(%v) = %v, want about %v", c.p, got, c.q)
		}
	}
	if a, b := mlProbitOf(0.25), mlProbitOf(0.75); a != -b {
		t.Errorf("probit(0.25) = %v, probit(0.75) = %v: not opposite", a, b)
	}
	if !math.IsInf(mlProbitOf(1), 1) || !math.IsInf(mlProbitOf(0), -1) {
		t.Errorf("probit(1), probit(0) = %v, %v; want +Inf, -Inf", mlProbitOf(1), mlProbitOf(0))
	}
	if _, err := mlTransformOf("SIGMOID"); err == nil {
		t.Error("post_transform SIGMOID was accepted")
	}
	if _, err := mlTransformOfInt(5); err == nil {
		t.Error("post_transform 5 was accepted")
	}
}

func TestMLSupportsEveryVersion(t *testing.T) {
	for _, c := range []struct {
		op       string
		versions []int
	}{
		{"TreeEnsembleClassifier", []int{1, 3, 5}}, {"TreeEnsembleRegressor", []int{1, 3, 5}}, {"TreeEnsemble", []int{5}},
		{"LinearClassifier", []int{1}}, {"LinearRegressor", []int{1}}, {"SVMClassifier", []int{1}}, {"SVMRegressor", []int{1}},
	} {
		for _, v := range c.versions {
			if !Supports("ai.onnx.ml", c.op, v) {
				t.Errorf("Supports(ai.onnx.ml, %s, %d) = false", c.op, v)
			}
		}
	}
}
