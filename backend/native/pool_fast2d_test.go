package native

import (
	"math"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/onnx"
)

// MaxPool over whole 2×2 windows keeps the first maximum in window order
// and, when a window holds a NaN, the first NaN, with its index in either
// storage order: ties, NaN after a number, NaN first, and a plain window.
func TestMaxPool2x2FirstMaximumAndNaN(t *testing.T) {
	nan := float32(math.NaN())
	x := onnx.FromSlice([]float32{
		1, nan, 2, 2, nan, 5, -1, -3,
		3, nan, 1, 2, 5, nan, 4, 4,
	}, 1, 1, 2, 8)
	for _, c := range []struct {
		storageOrder int64
		indices      []int64
	}{
		{0, []int64{1, 2, 4, 14}},
		{1, []int64{2, 4, 8, 13}}, // (offset % W)·H + offset / W
	} {
		node := testNode(t, 12, "MaxPool", []string{"X"}, []string{"Y", "I"},
			intsAttr("kernel_shape", 2, 2), intsAttr("strides", 2, 2), intAttr("storage_order", c.storageOrder))
		net, err := New(testModel([]*onnx.Node{node}, []*onnx.ValueInfo{{Name: "X", Type: floatTensorType(1, 1, 2, 8)}},
			[]*onnx.ValueInfo{{Name: "Y"}, {Name: "I"}}), backend.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := net.Inference(map[string]onnx.Value{"X": x})
		if err != nil {
			t.Fatal(err)
		}
		y, idx := out["Y"].(*onnx.Tensor).Float32s(), out["I"].(*onnx.Tensor).Int64s()
		want := []float32{nan, 2, nan, 4}
		for i := range want {
			if y[i] != want[i] && !(math.IsNaN(float64(y[i])) && math.IsNaN(float64(want[i]))) {
				t.Errorf("storage order %d: Y = %v, want %v", c.storageOrder, y, want)
				break
			}
		}
		if !slices.Equal(idx, c.indices) {
			t.Errorf("storage order %d: indices %v, want %v", c.storageOrder, idx, c.indices)
		}
		net.Close()
	}
}
