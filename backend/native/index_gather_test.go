package native

import (
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestTensorScatter(t *testing.T) {
	// Cache [2, 4, 1], updates of 2 positions at 1 (batch 0) and 3 (batch 1).
	cache := onnx.FromSlice([]float32{0, 0, 0, 0, 0, 0, 0, 0}, 2, 4, 1)
	upd := onnx.FromSlice([]float32{1, 2, 3, 4}, 2, 2, 1)
	idx := onnx.FromSlice([]int64{1, 3}, 2)
	out, err := runOp(t, "", 24, "TensorScatter", []*onnx.Attribute{stringAttr("mode", "circular")}, 1, cache, upd, idx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{0, 1, 2, 0, 4, 0, 0, 3}; !slices.Equal(out[0].Float32s(), want) {
		t.Fatalf("circular: %v", out[0].Float32s())
	}
	if _, err := runOp(t, "", 24, "TensorScatter", nil, 1, cache, upd, idx); err == nil {
		t.Error("linear overflow: expected an error")
	}
	out, err = runOp(t, "", 24, "TensorScatter", nil, 1, cache, upd)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{1, 2, 0, 0, 3, 4, 0, 0}; !slices.Equal(out[0].Float32s(), want) {
		t.Fatalf("default indices: %v", out[0].Float32s())
	}
}
