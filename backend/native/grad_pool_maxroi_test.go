package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestMaxRoiPoolGradients(t *testing.T) {
	rois := []float64{1, 0.2, 0.6, 4.1, 3.3, 0, 1.4, 0.9, 5.2, 4.6, 1, -1.2, 2, 2.2, 6.4}
	cases := []struct {
		name   string
		opset  int64
		pooled []int64
		scale  float32
	}{
		{"v1-2x2", 1, []int64{2, 2}, 1},
		{"v1-3x2-scale", 1, []int64{3, 2}, 0.75},
		{"v22-1x3", 22, []int64{1, 3}, 1},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i+1), 37))
			xShape := []int{2, 2, 5, 6}
			nodes := []*onnx.Node{
				gelemConst(t, "R", onnx.FromSlice(append([]float64{}, rois...), 3, 5)),
				testNode(t, c.opset, "MaxRoiPool", []string{"X", "R"}, []string{"Y"}, intsAttr("pooled_shape", c.pooled...), floatAttr("spatial_scale", c.scale)),
			}
			feeds := map[string]onnx.Value{"X": randDoubles(r, xShape...)}
			gconvCheckWeighted(t, r, nodes, map[string][]int64{"X": gconvInts(xShape)}, nil, feeds, "Y", 1e-6)
		})
	}
}
