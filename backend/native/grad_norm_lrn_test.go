package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestLRNGradients(t *testing.T) {
	cases := []struct {
		name  string
		opset int64
		x     []int
		attrs []*onnx.Attribute
	}{
		{"v1-size3-defaults", 1, []int{2, 5, 3, 2}, []*onnx.Attribute{intAttr("size", 3)}},
		{"v1-size2-even", 1, []int{1, 4, 3}, []*onnx.Attribute{intAttr("size", 2), floatAttr("alpha", 0.5), floatAttr("beta", 0.6), floatAttr("bias", 1.5)}},
		{"v13-size4-even-big-alpha", 13, []int{2, 6, 2, 2}, []*onnx.Attribute{intAttr("size", 4), floatAttr("alpha", 2), floatAttr("beta", 1.2), floatAttr("bias", 0.7)}},
		{"v13-size5-3d", 13, []int{1, 3, 2, 2, 2}, []*onnx.Attribute{intAttr("size", 5), floatAttr("alpha", 1), floatAttr("beta", 0.75), floatAttr("bias", 2)}},
		{"v13-size1-2d", 13, []int{3, 4}, []*onnx.Attribute{intAttr("size", 1), floatAttr("alpha", 3)}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i+1), 23))
			nodes := []*onnx.Node{testNode(t, c.opset, "LRN", []string{"X"}, []string{"Y"}, c.attrs...)}
			feeds := map[string]onnx.Value{"X": randDoubles(r, c.x...)}
			gconvCheckWeighted(t, r, nodes, map[string][]int64{"X": gconvInts(c.x)}, nil, feeds, "Y", 1e-6)
		})
	}
}
