package native

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestLinearAttentionGradients(t *testing.T) {
	cases := []struct {
		name              string
		rule              string
		hq, hkv, dk, dv   int
		decayKey, betaOne bool
		past              bool
		scale             float32
	}{
		{"linear-mha", "linear", 2, 2, 3, 2, false, false, false, 0},
		{"linear-gqa-past-scale", "linear", 4, 2, 2, 3, false, false, true, 0.7},
		{"gated-head", "gated", 2, 1, 3, 2, false, false, true, 0},
		{"gated-key", "gated", 2, 2, 2, 2, true, false, false, 0},
		{"delta-head-beta", "delta", 2, 2, 3, 2, false, false, true, 0},
		{"gated-delta-key-shared-beta", "gated_delta", 4, 2, 2, 3, true, true, true, 0},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i+1), 43))
			nb, nt := 2, 3
			feeds := map[string]*onnx.Tensor{
				"Q": randFloat32s(r, nb, nt, c.hq*c.dk),
				"K": randFloat32s(r, nb, nt, c.hkv*c.dk),
				"V": randFloat32s(r, nb, nt, c.hkv*c.dv),
			}
			ins := []string{"Q", "K", "V", "", "", ""}
			var nodes []*onnx.Node
			if c.past {
				nodes = append(nodes, gelemConst(t, "P", randFloat32s(r, nb, c.hkv, c.dk, c.dv)))
				ins[3] = "P"
			}
			if c.rule == "gated" || c.rule == "gated_delta" {
				n := c.hkv
				if c.decayKey {
					n *= c.dk
				}
				d := randFloat32s(r, nb, nt, n)
				for j := range d.Float32s() {
					d.Float32s()[j] = d.Float32s()[j]*0.4 - 0.5
				}
				feeds["G"] = d
				ins[4] = "G"
			}
			if c.rule == "delta" || c.rule == "gated_delta" {
				n := c.hkv
				if c.betaOne {
					n = 1
				}
				b := randFloat32s(r, nb, nt, n)
				for j := range b.Float32s() {
					b.Float32s()[j] = b.Float32s()[j]*0.3 + 0.5
				}
				feeds["B"] = b
				ins[5] = "B"
			}
			attrs := []*onnx.Attribute{intAttr("q_num_heads", int64(c.hq)), intAttr("kv_num_heads", int64(c.hkv)), gconvStrAttr("update_rule", c.rule)}
			if c.scale != 0 {
				attrs = append(attrs, floatAttr("scale", c.scale))
			}
			nodes = append(nodes, testNode(t, 27, "LinearAttention", ins, []string{"Y", "S"}, attrs...))
			checkFloat32Gradients(t, r, nodes, feeds, "Y", []int{nb, nt, c.hq * c.dv}, 3e-3)
		})
	}
}
