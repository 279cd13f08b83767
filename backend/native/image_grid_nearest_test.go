package native

import (
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// Expected values of ONNX's GridSample test cases
// (onnx/backend/test/case/node/gridsample.py): nearest mode rounds half
// to even in 3-D as in 2-D. In the volumetric cases several coordinates
// denormalize to exactly -0.5, which rounds to 0 (inside) where rounding
// away from zero gives -1 (outside: 0 under zeros padding).

func TestGridSampleNearestVolumetric(t *testing.T) {
	x := onnx.FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 1, 1, 3, 2, 2)
	grid := onnx.FromSlice([]float32{
		-1, -1, -1, -1, -0.5, 0.3,
		-0.5, -0.5, -0.5, 1, -0.6, -1,
		-0.2, -0.2, -0.2, 0.4, 0.2, 0.6,
		0, 0, 0, -1, 0, 0,
		0, 0, 0, -1, 1, 0,
		-0.2, -0.2, -0.2, 1, 0.4, -0.2,
		0.5, 0.5, 0.5, -1, -0.8, 0.8,
		1, 1, 1, 0.4, 0.6, -0.3,
	}, 1, 2, 4, 2, 3)
	for _, c := range []struct {
		align int64
		want  []float32
	}{
		{0, []float32{1, 5, 1, 0, 5, 12, 5, 5, 5, 0, 5, 0, 12, 9, 0, 8}},
		{1, []float32{1, 5, 1, 2, 5, 12, 5, 5, 5, 7, 5, 8, 12, 9, 12, 8}},
	} {
		for _, opset := range []int64{20, 22} {
			attrs := []*onnx.Attribute{stringAttr("mode", "nearest"), intAttr("align_corners", c.align)}
			got, err := runNode1(t, opset, "GridSample", attrs, x, grid)
			if err != nil {
				t.Fatalf("GridSample-%d align_corners=%d: %v", opset, c.align, err)
			}
			if !slices.Equal(got.Shape, []int{1, 1, 2, 4, 2}) || !slices.Equal(got.Float32s(), c.want) {
				t.Errorf("GridSample-%d align_corners=%d: %v %v, want %v", opset, c.align, got.Shape, got.Float32s(), c.want)
			}
		}
	}
}

func TestGridSampleNearest2D(t *testing.T) {
	x := onnx.FromSlice([]float32{0, 1, 2, 3, 4, 5}, 1, 1, 3, 2)
	grid := onnx.FromSlice([]float32{
		-1, -0.8, -0.6, -0.5, -0.1, -0.2, 0.7, 0,
		0, 0.4, 0.2, -0.2, -0.3, 0.5, -1, 1,
	}, 1, 2, 4, 2)
	for _, c := range []struct {
		align int64
		want  []float32
	}{
		{0, []float32{0, 0, 2, 3, 4, 3, 4, 4}},
		{1, []float32{0, 0, 2, 3, 2, 3, 4, 4}},
	} {
		attrs := []*onnx.Attribute{stringAttr("mode", "nearest"), intAttr("align_corners", c.align)}
		got, err := runNode1(t, 20, "GridSample", attrs, x, grid)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Float32s(), c.want) {
			t.Errorf("align_corners=%d: %v, want %v", c.align, got.Float32s(), c.want)
		}
	}
}
