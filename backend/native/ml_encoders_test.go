package native

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestMLOneHotEncoder(t *testing.T) {
	cats := intsAttr("cats_int64s", 1, 2, 3)
	got, err := mlTensorRun(t, 1, "OneHotEncoder", []*onnx.Attribute{cats}, onnx.FromSlice([]int64{1, 3, 2, 5}, 2, 2))
	mlWantTensor(t, "int64 [N, C], an unknown value gives zeros", got, err, onnx.FromSlice([]float32{
		1, 0, 0, 0, 0, 1,
		0, 1, 0, 0, 0, 0}, 2, 2, 3))
	got, err = mlTensorRun(t, 1, "OneHotEncoder", []*onnx.Attribute{stringsAttr("cats_strings", "a", "b", "c")}, onnx.FromSlice([]string{"a", "c"}, 2))
	mlWantTensor(t, "strings", got, err, onnx.FromSlice([]float32{1, 0, 0, 0, 0, 1}, 2, 3))
	got, err = mlTensorRun(t, 1, "OneHotEncoder", []*onnx.Attribute{cats}, onnx.FromSlice([]float32{1.7, 3, -0.5}, 3))
	mlWantTensor(t, "floats are truncated to integers", got, err, onnx.FromSlice([]float32{1, 0, 0, 0, 0, 1, 0, 0, 0}, 3, 3))
	got, err = mlTensorRun(t, 1, "OneHotEncoder", []*onnx.Attribute{cats}, onnx.FromSlice([]float64{2, math.NaN()}, 2))
	mlWantTensor(t, "double, NaN is no category", got, err, onnx.FromSlice([]float32{0, 1, 0, 0, 0, 0}, 2, 3))
	got, err = mlTensorRun(t, 1, "OneHotEncoder", []*onnx.Attribute{cats, intAttr("zeros", 0)}, onnx.FromSlice([]int32{3}, 1))
	mlWantTensor(t, "int32 with zeros=0, all known", got, err, onnx.FromSlice([]float32{0, 0, 1}, 1, 3))

	_, err = mlTensorRun(t, 1, "OneHotEncoder", []*onnx.Attribute{cats, intAttr("zeros", 0)}, onnx.FromSlice([]int64{1, 4}, 2))
	mlWantError(t, "zeros=0 and an unknown category", err, "element 1 (4)", "zeros is 0")
	_, err = mlTensorRun(t, 1, "OneHotEncoder", []*onnx.Attribute{stringsAttr("cats_strings", "a"), intAttr("zeros", 0)}, onnx.FromSlice([]string{"b"}, 1))
	mlWantError(t, "zeros=0 and an unknown string", err, `"b"`, "zeros is 0")
	_, err = mlTensorRun(t, 1, "OneHotEncoder", []*onnx.Attribute{cats}, onnx.FromSlice([]string{"b"}, 1))
	mlWantError(t, "strings with int64 categories", err, "cats_int64s")
	_, err = mlTensorRun(t, 1, "OneHotEncoder", []*onnx.Attribute{cats, stringsAttr("cats_strings", "a")}, onnx.FromSlice([]int64{1}, 1))
	mlWantError(t, "both category lists", err, "both cats_int64s and cats_strings")
	_, err = mlTensorRun(t, 1, "OneHotEncoder", nil, onnx.FromSlice([]int64{1}, 1))
	mlWantError(t, "no categories", err, "neither cats_int64s nor cats_strings")
}

func TestMLLabelEncoderONNXCases(t *testing.T) {
	x := onnx.FromSlice([]string{"a", "b", "d", "c", "g"}, 5)
	keys := stringsAttr("keys_strings", "a", "b", "c")
	// test_ai_onnx_ml_label_encoder_string_int(_no_default), at versions 2
	// and 4 (opsets 2 and 4 of ai.onnx.ml).
	for _, opset := range []int64{2, 3, 4, 5} {
		got, err := mlTensorRun(t, opset, "LabelEncoder", []*onnx.Attribute{keys, intsAttr("values_int64s", 0, 1, 2), intAttr("default_int64", 42)}, x)
		mlWantTensor(t, "string_int", got, err, onnx.FromSlice([]int64{0, 1, 42, 2, 42}, 5))
		got, err = mlTensorRun(t, opset, "LabelEncoder", []*onnx.Attribute{keys, intsAttr("values_int64s", 0, 1, 2)}, x)
		mlWantTensor(t, "string_int_no_default", got, err, onnx.FromSlice([]int64{0, 1, -1, 2, -1}, 5))
	}
	// test_ai_onnx_ml_label_encoder_tensor_mapping and
	// _tensor_value_only_mapping (version 4).
	values := mlAttrTensor("values_tensor", onnx.FromSlice([]int16{0, 1, 2}, 3))
	def := mlAttrTensor("default_tensor", onnx.FromSlice([]int16{42}, 1))
	want := onnx.FromSlice([]int16{0, 1, 42, 2, 42}, 5)
	got, err := mlTensorRun(t, 4, "LabelEncoder", []*onnx.Attribute{mlAttrTensor("keys_tensor", onnx.FromSlice([]string{"a", "b", "c"}, 3)), values, def}, x)
	mlWantTensor(t, "tensor_mapping", got, err, want)
	got, err = mlTensorRun(t, 4, "LabelEncoder", []*onnx.Attribute{keys, values, def}, x)
	mlWantTensor(t, "tensor_value_only_mapping", got, err, want)
}

func TestMLLabelEncoderVersions(t *testing.T) {
	// Version 1: strings to their index in classes_strings and back.
	classes := stringsAttr("classes_strings", "a", "b", "c")
	got, err := mlTensorRun(t, 1, "LabelEncoder", []*onnx.Attribute{classes}, onnx.FromSlice([]string{"b", "z", "a"}, 3))
	mlWantTensor(t, "v1 string->int64", got, err, onnx.FromSlice([]int64{1, -1, 0}, 3))
	got, err = mlTensorRun(t, 1, "LabelEncoder", []*onnx.Attribute{classes, stringAttr("default_string", "?")}, onnx.FromSlice([]int64{2, 7, -1, 0}, 2, 2))
	mlWantTensor(t, "v1 int64->string", got, err, onnx.FromSlice([]string{"c", "?", "?", "a"}, 2, 2))
	_, err = mlTensorRun(t, 1, "LabelEncoder", []*onnx.Attribute{classes}, onnx.FromSlice([]float32{1}, 1))
	mlWantError(t, "v1 float input", err, "tensor(float)")

	// Version 2 defaults: default_float is -0, default_string "_Unused".
	got, err = mlTensorRun(t, 2, "LabelEncoder", []*onnx.Attribute{intsAttr("keys_int64s", 5, 6), floatsAttr("values_floats", 0.5, 1.5)}, onnx.FromSlice([]int64{6, 7}, 2))
	mlWantTensor(t, "v2 int64->float", got, err, onnx.FromSlice([]float32{1.5, 0}, 2))
	if y := got.Float32s()[1]; !math.Signbit(float64(y)) {
		t.Errorf("v2 default_float is %v, want -0", y)
	}
	got, err = mlTensorRun(t, 2, "LabelEncoder", []*onnx.Attribute{floatsAttr("keys_floats", 0.5, 2), stringsAttr("values_strings", "half", "two")}, onnx.FromSlice([]float32{2, 3}, 2))
	mlWantTensor(t, "v2 float->string", got, err, onnx.FromSlice([]string{"two", "_Unused"}, 2))
	got, err = mlTensorRun(t, 2, "LabelEncoder", []*onnx.Attribute{stringsAttr("keys_strings", "x"), stringsAttr("values_strings", "y"), stringAttr("default_string", "none")}, onnx.FromSlice([]string{"x", "q"}, 2))
	mlWantTensor(t, "v2 string->string", got, err, onnx.FromSlice([]string{"y", "none"}, 2))

	// Version 4: keys_tensor and values_tensor of the newer types, with
	// their defaults: -1 for the integer types, default_float for double.
	got, err = mlTensorRun(t, 4, "LabelEncoder", []*onnx.Attribute{
		mlAttrTensor("keys_tensor", onnx.FromSlice([]float64{0.25, -3}, 2)), mlAttrTensor("values_tensor", onnx.FromSlice([]int32{7, 8}, 2))},
		onnx.FromSlice([]float64{-3, 1, 0.25}, 3))
	mlWantTensor(t, "v4 double->int32", got, err, onnx.FromSlice([]int32{8, -1, 7}, 3))
	got, err = mlTensorRun(t, 4, "LabelEncoder", []*onnx.Attribute{
		mlAttrTensor("keys_tensor", onnx.FromSlice([]int32{1, 2}, 2)), mlAttrTensor("values_tensor", onnx.FromSlice([]float64{0.5, 2.5}, 2)), floatAttr("default_float", 9)},
		onnx.FromSlice([]int32{2, 3}, 1, 2))
	mlWantTensor(t, "v4 int32->double", got, err, onnx.FromSlice([]float64{2.5, 9}, 1, 2))
	got, err = mlTensorRun(t, 4, "LabelEncoder", []*onnx.Attribute{
		mlAttrTensor("keys_tensor", onnx.FromSlice([]int16{4}, 1)), stringsAttr("values_strings", "four")},
		onnx.FromSlice([]int16{4, 5}, 2))
	mlWantTensor(t, "v4 int16->string", got, err, onnx.FromSlice([]string{"four", "_Unused"}, 2))
	got, err = mlTensorRun(t, 4, "LabelEncoder", []*onnx.Attribute{
		intsAttr("keys_int64s", 1, 2, 1), intsAttr("values_int64s", 10, 20, 30)},
		onnx.FromSlice([]int64{1, 2}, 2))
	mlWantTensor(t, "v4: a repeated key takes its last value", got, err, onnx.FromSlice([]int64{30, 20}, 2))

	_, err = mlTensorRun(t, 4, "LabelEncoder", []*onnx.Attribute{mlKeysInts(1, 2), intsAttr("values_int64s", 1)}, onnx.FromSlice([]int64{1}, 1))
	mlWantError(t, "fewer values than keys", err, "2 keys but 1 values")
	_, err = mlTensorRun(t, 4, "LabelEncoder", []*onnx.Attribute{mlKeysInts(1), intsAttr("values_int64s", 1)}, onnx.FromSlice([]int32{1}, 1))
	mlWantError(t, "an input of another type than the keys", err, "input is tensor(int32) but the keys are int64")
	_, err = mlTensorRun(t, 4, "LabelEncoder", []*onnx.Attribute{mlKeysInts(1), stringsAttr("keys_strings", "a"), intsAttr("values_int64s", 1)}, onnx.FromSlice([]int64{1}, 1))
	mlWantError(t, "two keys attributes", err, "2 keys_* attributes")
	_, err = mlTensorRun(t, 4, "LabelEncoder", []*onnx.Attribute{mlKeysInts(1), intsAttr("values_int64s", 1), mlAttrTensor("default_tensor", onnx.FromSlice([]float32{1}, 1))}, onnx.FromSlice([]int64{1}, 1))
	mlWantError(t, "a default_tensor of another type", err, "default_tensor is tensor(float)")
	_, err = mlTensorRun(t, 2, "LabelEncoder", []*onnx.Attribute{intsAttr("values_int64s", 1)}, onnx.FromSlice([]int64{1}, 1))
	mlWantError(t, "no keys", err, "no keys_* attribute")
}

func mlKeysInts(v ...int64) *onnx.Attribute { return intsAttr("keys_int64s", v...) }

// Version 4 matches every NaN key to every NaN input and -0 to 0;
// version 2 compares bit patterns.
func TestMLLabelEncoderNaNKeys(t *testing.T) {
	quiet := float32(math.NaN())
	other := math.Float32frombits(0x7fc00abc) // a NaN with another payload
	negZero := float32(math.Copysign(0, -1))
	attrs := []*onnx.Attribute{floatsAttr("keys_floats", quiet, 0, 1.5), stringsAttr("values_strings", "nan", "zero", "x")}
	x := onnx.FromSlice([]float32{other, quiet, negZero, 1.5, 2}, 5)
	got, err := mlTensorRun(t, 4, "LabelEncoder", attrs, x)
	mlWantTensor(t, "v4", got, err, onnx.FromSlice([]string{"nan", "nan", "zero", "x", "_Unused"}, 5))
	got, err = mlTensorRun(t, 2, "LabelEncoder", attrs, x)
	mlWantTensor(t, "v2", got, err, onnx.FromSlice([]string{"_Unused", "nan", "_Unused", "x", "_Unused"}, 5))

	// Double keys from keys_tensor, a NaN input mapped to an int64.
	got, err = mlTensorRun(t, 4, "LabelEncoder", []*onnx.Attribute{
		mlAttrTensor("keys_tensor", onnx.FromSlice([]float64{math.NaN(), 2}, 2)), intsAttr("values_int64s", 100, 200)},
		onnx.FromSlice([]float64{math.Float64frombits(0xfff0000000000123), 2, 3}, 3))
	mlWantTensor(t, "v4 double NaN", got, err, onnx.FromSlice([]int64{100, 200, -1}, 3))
}

func TestMLCategoryMapper(t *testing.T) {
	cats := []*onnx.Attribute{stringsAttr("cats_strings", "a", "b", "c"), intsAttr("cats_int64s", 1, 2, 3)}
	got, err := mlTensorRun(t, 1, "CategoryMapper", cats, onnx.FromSlice([]string{"b", "z", "c", "a"}, 2, 2))
	mlWantTensor(t, "string->int64", got, err, onnx.FromSlice([]int64{2, -1, 3, 1}, 2, 2))
	got, err = mlTensorRun(t, 1, "CategoryMapper", cats, onnx.FromSlice([]int64{3, 0}, 2))
	mlWantTensor(t, "int64->string", got, err, onnx.FromSlice([]string{"c", "_Unused"}, 2))
	withDefaults := append(cats[:2:2], intAttr("default_int64", 99), stringAttr("default_string", "unknown"))
	got, err = mlTensorRun(t, 1, "CategoryMapper", withDefaults, onnx.FromSlice([]string{"q"}, 1))
	mlWantTensor(t, "default_int64", got, err, onnx.FromSlice([]int64{99}, 1))
	got, err = mlTensorRun(t, 1, "CategoryMapper", withDefaults, onnx.FromSlice([]int64{4}, 1))
	mlWantTensor(t, "default_string", got, err, onnx.FromSlice([]string{"unknown"}, 1))

	_, err = mlTensorRun(t, 1, "CategoryMapper", []*onnx.Attribute{stringsAttr("cats_strings", "a", "b"), intsAttr("cats_int64s", 1)}, onnx.FromSlice([]string{"a"}, 1))
	mlWantError(t, "lists of different lengths", err, "cats_int64s has 1 entries and cats_strings 2")
	_, err = mlTensorRun(t, 1, "CategoryMapper", cats, onnx.FromSlice([]float32{1}, 1))
	mlWantError(t, "a float input", err, "tensor(float)")
}
