package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestGridSampleGradients(t *testing.T) {
	cases := []struct {
		name      string
		opset     int64
		mode, pad string
		align     int64
		x, grid   []int
		spread    float64
	}{
		{"v16-bilinear-zeros", 16, "bilinear", "zeros", 0, []int{2, 2, 3, 4}, []int{2, 2, 3, 2}, 1.2},
		{"v16-bilinear-border-align", 16, "bilinear", "border", 1, []int{1, 2, 3, 4}, []int{1, 3, 2, 2}, 1.5},
		{"v16-bilinear-reflection", 16, "bilinear", "reflection", 0, []int{1, 2, 4, 3}, []int{1, 3, 3, 2}, 2.5},
		{"v16-bilinear-reflection-align", 16, "bilinear", "reflection", 1, []int{1, 1, 4, 3}, []int{1, 3, 3, 2}, 2.5},
		{"v16-nearest-zeros", 16, "nearest", "zeros", 0, []int{1, 2, 3, 4}, []int{1, 2, 3, 2}, 1.2},
		{"v20-linear-3d-zeros-align", 20, "linear", "zeros", 1, []int{1, 2, 2, 3, 3}, []int{1, 2, 2, 2, 3}, 1.1},
		{"v20-linear-1d-border", 20, "linear", "border", 0, []int{2, 2, 5}, []int{2, 4, 1}, 1.4},
		{"v22-nearest-3d-reflection", 22, "nearest", "reflection", 0, []int{1, 2, 2, 3, 3}, []int{1, 2, 2, 2, 3}, 1.8},
		{"v22-linear-reflection", 22, "linear", "reflection", 0, []int{1, 2, 3, 3}, []int{1, 2, 4, 2}, 3},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i+1), 17))
			g := randDoubles(r, c.grid...)
			for j := range g.Float64s() {
				g.Float64s()[j] *= c.spread
			}
			nodes := []*onnx.Node{testNode(t, c.opset, "GridSample", []string{"X", "G"}, []string{"Y"},
				gconvStrAttr("mode", c.mode), gconvStrAttr("padding_mode", c.pad), intAttr("align_corners", c.align))}
			feeds := map[string]onnx.Value{"X": randDoubles(r, c.x...), "G": g}
			gconvCheckWeighted(t, r, nodes, map[string][]int64{"X": gconvInts(c.x), "G": gconvInts(c.grid)}, nil, feeds, "Y", 1e-6)
		})
	}
}

// TestGridSampleNearestHalfGradient samples a volume exactly between
// pixels: nearest mode rounds those halves to even at every rank, so the
// gradient must reach the pixel the forward read (0.5 → 0, not 1). The
// grid is a constant: its derivative is 0 almost everywhere and jumps at
// these points.
func TestGridSampleNearestHalfGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	// align_corners=1 on length 3: coordinate g maps to g+1.
	grid := onnx.FromSlice([]float64{
		-0.5, -0.5, -0.5,
		0.5, -0.5, 0,
		-0.5, 0.5, 1,
		0, 0, -0.5,
	}, 1, 1, 2, 2, 3)
	for _, pad := range []string{"zeros", "border", "reflection"} {
		t.Run(pad, func(t *testing.T) {
			nodes := []*onnx.Node{
				gelemConst(t, "G", grid),
				testNode(t, 22, "GridSample", []string{"X", "G"}, []string{"Y"},
					gconvStrAttr("mode", "nearest"), gconvStrAttr("padding_mode", pad), intAttr("align_corners", 1)),
			}
			feeds := map[string]onnx.Value{"X": randDoubles(r, 1, 2, 3, 3, 3)}
			gconvCheckWeighted(t, r, nodes, map[string][]int64{"X": {1, 2, 3, 3, 3}}, nil, feeds, "Y", 1e-6)
		})
	}
}
