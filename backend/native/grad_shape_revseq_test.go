package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestReverseSequenceGradients(t *testing.T) {
	cases := []struct {
		name        string
		batch, time int64
		x           []int
		lens        []int64
	}{
		{"batch0-time1", 0, 1, []int{3, 4, 2}, []int64{4, 1, 2}},
		{"batch1-time0", 1, 0, []int{4, 3}, []int64{0, 3, 4}},
		{"batch1-time0-rank4", 1, 0, []int{3, 2, 2, 2}, []int64{2, 3}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i+1), 31))
			nodes := []*onnx.Node{
				gelemConst(t, "L", onnx.FromSlice(c.lens, len(c.lens))),
				testNode(t, 10, "ReverseSequence", []string{"X", "L"}, []string{"Y"}, intAttr("batch_axis", c.batch), intAttr("time_axis", c.time)),
			}
			feeds := map[string]onnx.Value{"X": randDoubles(r, c.x...)}
			gconvCheckWeighted(t, r, nodes, map[string][]int64{"X": gconvInts(c.x)}, nil, feeds, "Y", 1e-6)
		})
	}
}
