package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestRoiAlignGradients(t *testing.T) {
	// The third region is under one pixel high in output_half_pixel
	// mode (enlarged), and reaches outside the map.
	rois := []float64{0.3, 0.7, 3.6, 4.2, 1.1, 0.2, 5.3, 3.9, -0.7, 2.1, 2.4, 2.63}
	cases := []struct {
		name  string
		opset int64
		attrs []*onnx.Attribute
	}{
		{"v10-avg-ratio2", 10, []*onnx.Attribute{intAttr("output_height", 2), intAttr("output_width", 3), intAttr("sampling_ratio", 2)}},
		{"v10-max-adaptive-scale", 10, []*onnx.Attribute{gconvStrAttr("mode", "max"), intAttr("output_height", 2), intAttr("output_width", 2), floatAttr("spatial_scale", 0.8)}},
		{"v16-avg-half-pixel-adaptive", 16, []*onnx.Attribute{intAttr("output_height", 3), intAttr("output_width", 2)}},
		{"v16-max-output-half-pixel", 16, []*onnx.Attribute{gconvStrAttr("mode", "max"), gconvStrAttr("coordinate_transformation_mode", "output_half_pixel"), intAttr("output_height", 2), intAttr("output_width", 2), intAttr("sampling_ratio", 2)}},
		{"v22-max-half-pixel", 22, []*onnx.Attribute{gconvStrAttr("mode", "max"), intAttr("output_height", 2), intAttr("output_width", 3), intAttr("sampling_ratio", 3)}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i+1), 29))
			xShape := []int{2, 2, 5, 6}
			nodes := []*onnx.Node{
				gelemConst(t, "B", onnx.FromSlice([]int64{1, 0, 1}, 3)),
				testNode(t, c.opset, "RoiAlign", []string{"X", "R", "B"}, []string{"Y"}, c.attrs...),
			}
			feeds := map[string]onnx.Value{"X": randDoubles(r, xShape...), "R": onnx.FromSlice(append([]float64{}, rois...), 3, 4)}
			gconvCheckWeighted(t, r, nodes, map[string][]int64{"X": gconvInts(xShape), "R": {3, 4}}, nil, feeds, "Y", 1e-6)
		})
	}
}
