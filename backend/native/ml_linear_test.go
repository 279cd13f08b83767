package native

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// The expected values of ONNX Runtime's LinearClassifier tests
// (onnxruntime/test/providers/cpu/ml/linearclassifer_test.cc).
func TestMLLinearClassifierRuntimeCases(t *testing.T) {
	coef := floatsAttr("coefficients", -0.22562418, 0.34188559, 0.68346153, -0.68051993, -0.1975279, 0.03748541)
	intercepts := floatsAttr("intercepts", -3.91601811, 0.42575697, 0.13731251)
	labels := intsAttr("classlabels_ints", 1, 2, 3)
	x := onnx.FromSlice([]float32{1, 0, 3, 44, 23, 11.3}, 3, 2)
	scores := []float64{-4.14164229, 1.1092185, -0.06021539, 10.45007543, -27.46673545, 1.19408663, -5.24206713, 8.45549693, -3.98224414}
	out := mlRun(t, 1, "LinearClassifier", []*onnx.Attribute{coef, intercepts, labels, intAttr("multi_class", 0)}, 2, x)
	mlInts(t, "multiclass Y", out[0], 2, 1, 2)
	mlNear(t, "multiclass Z", out[1], []int{3, 3}, scores, 1e-6)

	out = mlRun(t, 1, "LinearClassifier", []*onnx.Attribute{coef, intercepts, labels, stringAttr("post_transform", "LOGISTIC")}, 2, x)
	mlInts(t, "logistic Y", out[0], 2, 1, 2)
	mlNear(t, "logistic Z", out[1], []int{3, 3}, []float64{0.015647972, 0.751983387, 0.484950699, 0.999971055, 1.17855e-12,
		0.767471158, 0.005261482, 0.999787317, 0.018302525}, 1e-6)

	// Integer and double inputs.
	xi := []float64{1, 0, 3, 44, 23, 11}
	want := []float64{-4.14164229, 1.1092185, -0.06021539, 10.45007543, -27.46673545, 1.19408663, -5.3446321487426758, 8.6596536636352539, -3.9934897422790527}
	for _, x := range []*onnx.Tensor{onnx.FromSlice([]int64{1, 0, 3, 44, 23, 11}, 3, 2), onnx.FromSlice([]int32{1, 0, 3, 44, 23, 11}, 3, 2), onnx.FromSlice(xi, 3, 2)} {
		out = mlRun(t, 1, "LinearClassifier", []*onnx.Attribute{coef, intercepts, labels}, 2, x)
		mlInts(t, x.Type.String()+" Y", out[0], 2, 1, 2)
		mlNear(t, x.Type.String()+" Z", out[1], []int{3, 3}, want, 1e-6)
	}

	// One row of coefficients: the score of the positive class.
	bcoef, bint := floatsAttr("coefficients", 0.00085401, -0.00314063), floatsAttr("intercepts", 0.03930598)
	s := []float64{0.0401599929, -0.0963197052, 0.0234590918}
	out = mlRun(t, 1, "LinearClassifier", []*onnx.Attribute{bcoef, bint}, 2, x)
	mlInts(t, "binary Y", out[0], 1, 0, 1)
	mlNear(t, "binary Z", out[1], []int{3, 1}, s, 1e-6)
	out = mlRun(t, 1, "LinearClassifier", []*onnx.Attribute{bcoef, bint, stringsAttr("classlabels_strings", "not_so_good", "pretty_good")}, 2, x)
	mlStrings(t, "binary labels Y", out[0], "pretty_good", "not_so_good", "pretty_good")
	mlNear(t, "binary labels Z", out[1], []int{3, 2}, []float64{1 - s[0], s[0], 1 - s[1], s[1], 1 - s[2], s[2]}, 1e-6)
	// With PROBIT: [-p, p].
	out = mlRun(t, 1, "LinearClassifier", []*onnx.Attribute{bcoef, bint, intsAttr("classlabels_ints", 4, 9), stringAttr("post_transform", "PROBIT")}, 2, x)
	mlInts(t, "probit Y", out[0], 9, 4, 9)
	p := []float64{mlProbitOf(s[0]), mlProbitOf(s[1]), mlProbitOf(s[2])}
	mlNear(t, "probit Z", out[1], []int{3, 2}, []float64{-p[0], p[0], -p[1], p[1], -p[2], p[2]}, 1e-5)
}

// Hand-computed: two classes and no intercepts, SOFTMAX; a [F] input.
func TestMLLinearClassifierSoftmax(t *testing.T) {
	attrs := []*onnx.Attribute{floatsAttr("coefficients", 1, 2, -1, 0.5), stringsAttr("classlabels_strings", "a", "b"), stringAttr("post_transform", "SOFTMAX")}
	out := mlRun(t, 1, "LinearClassifier", attrs, 2, onnx.FromSlice([]float32{1, -1}, 2))
	// scores: 1-2 = -1 and -1-0.5 = -1.5
	e := 1 / (1 + math.Exp(-0.5))
	mlStrings(t, "Y", out[0], "a")
	mlNear(t, "Z", out[1], []int{1, 2}, []float64{e, 1 - e}, 1e-6)
	if err := mlRunErr(t, 1, "LinearClassifier", attrs, 2, onnx.FromSlice([]float32{1, 2, 3}, 1, 3)); err == nil {
		t.Error("coefficients not a multiple of the features were accepted")
	}
}

func TestMLLinearRegressor(t *testing.T) {
	x := onnx.FromSlice([]float32{1, 1, 0, 2}, 2, 2)
	attrs := []*onnx.Attribute{floatsAttr("coefficients", 1, 2, 3, 4), floatsAttr("intercepts", 0.5, -1), intAttr("targets", 2)}
	out := mlRun(t, 1, "LinearRegressor", attrs, 1, x)
	mlNear(t, "two targets", out[0], []int{2, 2}, []float64{3.5, 6, 4.5, 7}, 1e-6)
	out = mlRun(t, 1, "LinearRegressor", append(attrs, stringAttr("post_transform", "SOFTMAX")), 1, onnx.FromSlice([]int64{1, 1, 0, 2}, 2, 2))
	mlNear(t, "SOFTMAX", out[0], []int{2, 2}, []float64{mlSig(-2.5), mlSig(2.5), mlSig(-2.5), mlSig(2.5)}, 1e-6)
	// One target, no intercepts, LOGISTIC; a [F] input is one row.
	out = mlRun(t, 1, "LinearRegressor", []*onnx.Attribute{floatsAttr("coefficients", 0.5, -0.25), stringAttr("post_transform", "LOGISTIC")}, 1, onnx.FromSlice([]float64{2, 4}, 2))
	mlNear(t, "LOGISTIC", out[0], []int{1, 1}, []float64{0.5}, 1e-6)
	out = mlRun(t, 1, "LinearRegressor", []*onnx.Attribute{floatsAttr("coefficients", 0.5, -0.25), floatsAttr("intercepts", 1)}, 1, onnx.FromSlice([]float64{2, 8}, 2))
	mlNear(t, "NONE", out[0], []int{1, 1}, []float64{0}, 1e-6)
	if err := mlRunErr(t, 1, "LinearRegressor", attrs, 1, onnx.FromSlice([]float32{1, 2, 3}, 1, 3)); err == nil {
		t.Error("wrong feature count was accepted")
	}
	if err := mlRunErr(t, 1, "LinearRegressor", append(attrs, floatsAttr("intercepts", 1, 2, 3)), 1, x); err == nil {
		t.Error("three intercepts for two targets were accepted")
	}
}
