package native

import (
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// Helpers of the one-node operator tests (runNode is in executor_test.go).

// runNodeOK is runNode that fails the test on an error.
func runNodeOK(t *testing.T, opset int64, opType string, attrs []*onnx.Attribute, nOut int, inputs ...*onnx.Tensor) []*onnx.Tensor {
	t.Helper()
	got, err := runNode(t, opset, opType, attrs, nOut, inputs...)
	if err != nil {
		t.Fatalf("%s-%d: %v", opType, opset, err)
	}
	return got
}

// f16Values rounds each value to float16.
func f16Values(v ...float32) []onnx.F16 {
	out := make([]onnx.F16, len(v))
	for i, x := range v {
		out[i] = onnx.F16From(x)
	}
	return out
}

// float32Values returns a real tensor's values as float32 (float64 and the
// reduced float types converted).
func float32Values(t *onnx.Tensor) []float32 {
	switch d := t.Data.(type) {
	case []float32:
		return d
	case []float64:
		out := make([]float32, len(d))
		for i, v := range d {
			out[i] = float32(v)
		}
		return out
	}
	w, err := widenToFloat32(make([]float32, t.Len()), t.Data)
	if err != nil {
		panic(err)
	}
	return w
}
