package onnxruntime_test

import (
	"testing"

	"github.com/deep500/deep500-go/backend/onnxruntime"
)

// Known facts of ONNX Runtime 1.30's CPU build, from its conformance run
// and its kernel registrations.
func TestSupportsProbe(t *testing.T) {
	for _, c := range []struct {
		domain, op string
		since      int
		want       bool
	}{
		{"", "Relu", 14, true},
		{"", "Conv", 11, true},
		{"", "LSTM", 14, true}, // the probe's attributes reach the kernel's constructor
		{"", "If", 21, true},   // a control-flow operator with a probe body
		{"", "Loop", 21, true},
		{"ai.onnx.ml", "LabelEncoder", 2, true},
		{"", "Add", 6, false},      // no kernels before opset 7
		{"", "Scatter", 11, false}, // deprecated in favour of ScatterElements
		{"ai.onnx.preview.training", "Adam", 1, false},
		{"", "NoSuchOperator", 1, false},
	} {
		if got := onnxruntime.Supports(c.domain, c.op, c.since); got != c.want {
			t.Errorf("Supports(%q, %s, %d) = %v, want %v", c.domain, c.op, c.since, got, c.want)
		}
	}
}
