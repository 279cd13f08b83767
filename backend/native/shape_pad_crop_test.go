package native

import (
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// A negative pad removes elements before the other side is padded, so
// wrap (and reflect) read the cropped axis: [1 2 3 4] with pads (2, -1)
// is wrap-padding [1 2 3] by 2 at the start. This is how ONNX's
// reference (it slices negative pads off before numpy.pad), PyTorch and
// ONNX Runtime apply them.
func TestPadNegativeOtherSide(t *testing.T) {
	x := onnx.FromSlice([]float32{1, 2, 3, 4}, 4)
	for _, c := range []struct {
		mode       string
		begin, end int64
		want       []float32
	}{
		{"wrap", 2, -1, []float32{2, 3, 1, 2, 3}},
		{"wrap", -1, 2, []float32{2, 3, 4, 2, 3}},
		{"wrap", -2, 5, []float32{3, 4, 3, 4, 3, 4, 3}},
		{"reflect", -2, 2, []float32{3, 4, 3, 4}},
		{"reflect", 3, -1, []float32{2, 3, 2, 1, 2, 3}},
		{"edge", -1, 2, []float32{2, 3, 4, 4, 4}},
		{"wrap", 1, 1, []float32{4, 1, 2, 3, 4, 1}},
	} {
		for _, opset := range []int64{19, 25} {
			pads := onnx.FromSlice([]int64{c.begin, c.end}, 2)
			got, err := runNode1(t, opset, "Pad", []*onnx.Attribute{stringAttr("mode", c.mode)}, x, pads)
			if err != nil {
				t.Fatalf("Pad-%d %s (%d, %d): %v", opset, c.mode, c.begin, c.end, err)
			}
			if !slices.Equal(got.Float32s(), c.want) {
				t.Errorf("Pad-%d %s (%d, %d) = %v, want %v", opset, c.mode, c.begin, c.end, got.Float32s(), c.want)
			}
		}
	}
	// Two axes, each cropped on one side and padded on the other.
	x2 := onnx.FromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	pads := onnx.FromSlice([]int64{1, -1, -1, 1}, 4)
	got, err := runNode1(t, 19, "Pad", []*onnx.Attribute{stringAttr("mode", "wrap")}, x2, pads)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Shape, []int{2, 3}) || !slices.Equal(got.Int32s(), []int32{2, 3, 2, 2, 3, 2}) {
		t.Errorf("2-D wrap = %v %v, want [2 3] [2 3 2 2 3 2]", got.Shape, got.Int32s())
	}
	// The same through the axes input.
	got, err = runNode1(t, 19, "Pad", []*onnx.Attribute{stringAttr("mode", "wrap")}, x2, onnx.FromSlice([]int64{-1, 1}, 2), nil, onnx.FromSlice([]int64{-1}, 1))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Int32s(), []int32{2, 3, 2, 5, 6, 5}) {
		t.Errorf("wrap with axes = %v, want [2 3 2 5 6 5]", got.Int32s())
	}
	// Nothing left to wrap around.
	if _, err := runNode1(t, 19, "Pad", []*onnx.Attribute{stringAttr("mode", "wrap")}, x, onnx.FromSlice([]int64{-4, 1}, 2)); err == nil {
		t.Error("wrap of a fully cropped axis: expected an error")
	}
}
