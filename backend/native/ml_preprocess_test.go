package native

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestMLNormalizer(t *testing.T) {
	// Row 0 has a positive maximum, row 1 is all zeros (left as it is),
	// row 2 has a negative maximum (the divisor keeps its sign).
	x := onnx.FromSlice([]float32{3, -4, 1, 0, 0, 0, -1, -2, -4}, 3, 3)
	s26, s21 := math.Sqrt(26), math.Sqrt(21)
	for _, c := range []struct {
		norm string
		want []float32
	}{
		{"MAX", []float32{1, -4.0 / 3, 1.0 / 3, 0, 0, 0, 1, 2, 4}},
		{"L1", []float32{0.375, -0.5, 0.125, 0, 0, 0, -1.0 / 7, -2.0 / 7, -4.0 / 7}},
		{"L2", []float32{float32(3 / s26), float32(-4 / s26), float32(1 / s26), 0, 0, 0, float32(-1 / s21), float32(-2 / s21), float32(-4 / s21)}},
	} {
		got, err := mlTensorRun(t, 1, "Normalizer", []*onnx.Attribute{stringAttr("norm", c.norm)}, x)
		mlWantTensor(t, c.norm, got, err, onnx.FromSlice(c.want, 3, 3))
	}
	// A row whose maximum is 0 is left unchanged too.
	got, err := mlTensorRun(t, 1, "Normalizer", nil, onnx.FromSlice([]float64{-2, 0, -1}, 3))
	mlWantTensor(t, "MAX (the default) of a [F] double row with maximum 0", got, err, onnx.FromSlice([]float32{-2, 0, -1}, 3))
	got, err = mlTensorRun(t, 1, "Normalizer", []*onnx.Attribute{stringAttr("norm", "L1")}, onnx.FromSlice([]int64{1, 3, 0, 0}, 2, 2))
	mlWantTensor(t, "L1 of int64 rows", got, err, onnx.FromSlice([]float32{0.25, 0.75, 0, 0}, 2, 2))
	got, err = mlTensorRun(t, 1, "Normalizer", []*onnx.Attribute{stringAttr("norm", "L2")}, onnx.FromSlice([]int32{0, -5, 12}, 1, 3))
	mlWantTensor(t, "L2 of int32 rows", got, err, onnx.FromSlice([]float32{0, -5.0 / 13, 12.0 / 13}, 1, 3))

	_, err = mlTensorRun(t, 1, "Normalizer", []*onnx.Attribute{stringAttr("norm", "L3")}, x)
	mlWantError(t, "an unknown norm", err, `"L3"`)
	_, err = mlTensorRun(t, 1, "Normalizer", nil, onnx.FromSlice([]float32{1}, 1, 1, 1))
	mlWantError(t, "a 3-D input", err, "[N, F] or [F]")
	_, err = mlTensorRun(t, 1, "Normalizer", nil, onnx.FromSlice([]int8{1}, 1))
	mlWantError(t, "an int8 input", err, "tensor(int8)")
}

func TestMLScaler(t *testing.T) {
	x := onnx.FromSlice([]float32{1, 2, 3, 4}, 2, 2)
	got, err := mlTensorRun(t, 1, "Scaler", []*onnx.Attribute{floatsAttr("offset", 1, 0.5), floatsAttr("scale", 2, -1)}, x)
	mlWantTensor(t, "per feature", got, err, onnx.FromSlice([]float32{0, -1.5, 4, -3.5}, 2, 2))
	got, err = mlTensorRun(t, 1, "Scaler", []*onnx.Attribute{floatsAttr("offset", 2), floatsAttr("scale", 0.5)}, onnx.FromSlice([]int64{2, 4, 7}, 3))
	mlWantTensor(t, "one value for all, int64 [F]", got, err, onnx.FromSlice([]float32{0, 1, 2.5}, 3))
	got, err = mlTensorRun(t, 1, "Scaler", []*onnx.Attribute{floatsAttr("offset", 1, 2, 3), floatsAttr("scale", 10)}, onnx.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	mlWantTensor(t, "per-feature offset, one scale, double", got, err, onnx.FromSlice([]float32{0, 0, 0, 30, 30, 30}, 2, 3))
	got, err = mlTensorRun(t, 1, "Scaler", []*onnx.Attribute{floatsAttr("scale", 3)}, onnx.FromSlice([]int32{1, -2}, 1, 2))
	mlWantTensor(t, "no offset, int32", got, err, onnx.FromSlice([]float32{3, -6}, 1, 2))

	_, err = mlTensorRun(t, 1, "Scaler", []*onnx.Attribute{floatsAttr("offset", 1, 2, 3), floatsAttr("scale", 1, 2, 3)}, x)
	mlWantError(t, "three offsets for two features", err, "offset has 3 values", "(2)")
	_, err = mlTensorRun(t, 1, "Scaler", []*onnx.Attribute{floatsAttr("scale", 1)}, onnx.FromSlice([]float32{1}))
	mlWantError(t, "a scalar", err, "scalar")
}

func TestMLImputer(t *testing.T) {
	nan := float32(math.NaN())
	got, err := mlTensorRun(t, 1, "Imputer", []*onnx.Attribute{floatsAttr("imputed_value_floats", 10, 20), floatAttr("replaced_value_float", nan)},
		onnx.FromSlice([]float32{nan, 1, 2, nan, 0, 3}, 3, 2))
	mlWantTensor(t, "NaN replaced per feature", got, err, onnx.FromSlice([]float32{10, 1, 2, 20, 0, 3}, 3, 2))
	got, err = mlTensorRun(t, 1, "Imputer", []*onnx.Attribute{floatsAttr("imputed_value_floats", 7)},
		onnx.FromSlice([]float64{0, 1, math.NaN(), 0}, 4))
	mlWantTensor(t, "the default replaced value 0, one imputed value, double", got, err, onnx.FromSlice([]float64{7, 1, math.NaN(), 7}, 4))
	got, err = mlTensorRun(t, 1, "Imputer", []*onnx.Attribute{intsAttr("imputed_value_int64s", 9), intAttr("replaced_value_int64", -1)},
		onnx.FromSlice([]int64{-1, 5, 7, -1}, 2, 2))
	mlWantTensor(t, "an int64 value", got, err, onnx.FromSlice([]int64{9, 5, 7, 9}, 2, 2))
	got, err = mlTensorRun(t, 1, "Imputer", []*onnx.Attribute{intsAttr("imputed_value_int64s", 4, 5, 6), intAttr("replaced_value_int64", 2)},
		onnx.FromSlice([]int32{2, 2, 1, 3, 2, 2}, 2, 3))
	mlWantTensor(t, "int32 per feature", got, err, onnx.FromSlice([]int32{4, 5, 1, 3, 5, 6}, 2, 3))

	_, err = mlTensorRun(t, 1, "Imputer", []*onnx.Attribute{floatsAttr("imputed_value_floats", 1, 2)}, onnx.FromSlice([]float32{0, 0, 0}, 1, 3))
	mlWantError(t, "two values for three features", err, "imputed_value_floats has 2 values")
	_, err = mlTensorRun(t, 1, "Imputer", nil, onnx.FromSlice([]float32{0}, 1))
	mlWantError(t, "no imputed values", err, "neither imputed_value_floats nor imputed_value_int64s")
	_, err = mlTensorRun(t, 1, "Imputer", []*onnx.Attribute{intsAttr("imputed_value_int64s", 1<<40)}, onnx.FromSlice([]int32{0}, 1))
	mlWantError(t, "a value beyond int32", err, "does not fit")
}

func TestMLBinarizer(t *testing.T) {
	// As ONNX's test case: 1 where x > threshold (here 1), else 0.
	nan := float32(math.NaN())
	got, err := mlTensorRun(t, 1, "Binarizer", []*onnx.Attribute{floatAttr("threshold", 1)}, onnx.FromSlice([]float32{0.5, 1, 1.5, -2, nan, 3}, 2, 3))
	mlWantTensor(t, "float", got, err, onnx.FromSlice([]float32{0, 0, 1, 0, 0, 1}, 2, 3))
	got, err = mlTensorRun(t, 1, "Binarizer", nil, onnx.FromSlice([]int64{-1, 0, 1, 2}, 4))
	mlWantTensor(t, "int64, threshold 0", got, err, onnx.FromSlice([]int64{0, 0, 1, 1}, 4))
	got, err = mlTensorRun(t, 1, "Binarizer", []*onnx.Attribute{floatAttr("threshold", 1.5)}, onnx.FromSlice([]int32{1, 2}, 1, 2))
	mlWantTensor(t, "int32", got, err, onnx.FromSlice([]int32{0, 1}, 1, 2))
	got, err = mlTensorRun(t, 1, "Binarizer", []*onnx.Attribute{floatAttr("threshold", -0.5)}, onnx.FromSlice([]float64{-1, -0.25}, 2))
	mlWantTensor(t, "double", got, err, onnx.FromSlice([]float64{0, 1}, 2))
	_, err = mlTensorRun(t, 1, "Binarizer", nil, onnx.FromSlice([]string{"a"}, 1))
	mlWantError(t, "strings", err, "tensor(string)")
}

func TestMLArrayFeatureExtractor(t *testing.T) {
	// ONNX's test case: columns 0 and 1 of arange(12) as [3, 4].
	x := make([]float32, 12)
	for i := range x {
		x[i] = float32(i)
	}
	idx := onnx.FromSlice([]int64{0, 1}, 2)
	got, err := mlTensorRun(t, 1, "ArrayFeatureExtractor", nil, onnx.FromSlice(x, 3, 4), idx)
	mlWantTensor(t, "ONNX's case", got, err, onnx.FromSlice([]float32{0, 1, 4, 5, 8, 9}, 3, 2))
	got, err = mlTensorRun(t, 1, "ArrayFeatureExtractor", nil, onnx.FromSlice([]int64{10, 20, 30}, 3), onnx.FromSlice([]int64{2, 0, 2}, 1, 3))
	mlWantTensor(t, "a 1-D input gives [1, k]", got, err, onnx.FromSlice([]int64{30, 10, 30}, 1, 3))
	got, err = mlTensorRun(t, 1, "ArrayFeatureExtractor", nil, onnx.FromSlice([]string{"a", "b", "c", "d", "e", "f", "g", "h"}, 2, 2, 2), onnx.FromSlice([]int64{1}, 1))
	mlWantTensor(t, "strings along the last axis of a 3-D input", got, err, onnx.FromSlice([]string{"b", "d", "f", "h"}, 2, 2, 1))
	got, err = mlTensorRun(t, 1, "ArrayFeatureExtractor", nil, onnx.FromSlice([]float64{1, 2, 3, 4}, 2, 2), onnx.FromSlice([]int64{1}))
	mlWantTensor(t, "a scalar index, double", got, err, onnx.FromSlice([]float64{2, 4}, 2, 1))

	_, err = mlTensorRun(t, 1, "ArrayFeatureExtractor", nil, onnx.FromSlice(x, 3, 4), onnx.FromSlice([]int64{4}, 1))
	mlWantError(t, "an index past the end", err, "Y[0] = 4 is out of range for 4 features")
	_, err = mlTensorRun(t, 1, "ArrayFeatureExtractor", nil, onnx.FromSlice(x, 3, 4), onnx.FromSlice([]int64{0, -1}, 2))
	mlWantError(t, "a negative index", err, "Y[1] = -1 is out of range")
	_, err = mlTensorRun(t, 1, "ArrayFeatureExtractor", nil, onnx.FromSlice([]float32{1}), idx)
	mlWantError(t, "a scalar X", err, "scalar")
}

func TestMLFeatureVectorizer(t *testing.T) {
	a := onnx.FromSlice([]int64{1, 2, 3, 4}, 2, 2)
	b := onnx.FromSlice([]float32{5, 6}, 2, 1)
	got, err := mlTensorRun(t, 1, "FeatureVectorizer", []*onnx.Attribute{intsAttr("inputdimensions", 3, 1)}, a, b)
	mlWantTensor(t, "padded with zeros", got, err, onnx.FromSlice([]float32{1, 2, 0, 5, 3, 4, 0, 6}, 2, 4))
	got, err = mlTensorRun(t, 1, "FeatureVectorizer", []*onnx.Attribute{intsAttr("inputdimensions", 1, 1)}, a, b)
	mlWantTensor(t, "cut to the dimension", got, err, onnx.FromSlice([]float32{1, 5, 3, 6}, 2, 2))
	got, err = mlTensorRun(t, 1, "FeatureVectorizer", nil, onnx.FromSlice([]float64{0.5, 1.5}, 2), onnx.FromSlice([]int32{7}, 1))
	mlWantTensor(t, "[C] inputs are one row; dimensions default to the inputs'", got, err, onnx.FromSlice([]float32{0.5, 1.5, 7}, 1, 3))

	_, err = mlTensorRun(t, 1, "FeatureVectorizer", []*onnx.Attribute{intsAttr("inputdimensions", 2, 1)}, a, onnx.FromSlice([]float32{5, 6, 7}, 3, 1))
	mlWantError(t, "different batch sizes", err, "input 1 has 3 rows, input 0 has 2")
	_, err = mlTensorRun(t, 1, "FeatureVectorizer", []*onnx.Attribute{intsAttr("inputdimensions", 2)}, a, b)
	mlWantError(t, "too few dimensions", err, "inputdimensions has 1 entries for 2 inputs")
}
