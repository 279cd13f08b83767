package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestCausalConvWithStateGradients(t *testing.T) {
	cases := []struct {
		name       string
		activation string
		k          int
		bias, past bool
	}{
		{"none-k3-bias-past", "none", 3, true, true},
		{"silu-k2-bias", "silu", 2, true, false},
		{"swish-k4-past", "swish", 4, false, true},
		{"none-k1", "none", 1, false, false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i+1), 41))
			nb, nc, nl := 2, 3, 5
			feeds := map[string]*onnx.Tensor{"X": randFloat32s(r, nb, nc, nl), "W": randFloat32s(r, nc, 1, c.k)}
			ins := []string{"X", "W", "", ""}
			if c.bias {
				feeds["B"] = randFloat32s(r, nc)
				ins[2] = "B"
			}
			var nodes []*onnx.Node
			if c.past {
				nodes = append(nodes, gelemConst(t, "P", randFloat32s(r, nb, nc, c.k-1)))
				ins[3] = "P"
			}
			nodes = append(nodes, testNode(t, 27, "CausalConvWithState", ins, []string{"Y", "S"}, gconvStrAttr("activation", c.activation)))
			checkFloat32Gradients(t, r, nodes, feeds, "Y", []int{nb, nc, nl}, 2e-3)
		})
	}
}
