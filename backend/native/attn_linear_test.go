package native

import (
	"math"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// Expected values are worked out by hand from the operator's definition,
// https://onnx.ai/onnx/operators/onnx__LinearAttention.html

func TestLinearAttention(t *testing.T) {
	heads := func(q, kv int64) []*onnx.Attribute {
		return []*onnx.Attribute{intAttr("q_num_heads", q), intAttr("kv_num_heads", kv)}
	}
	with := func(a []*onnx.Attribute, more ...*onnx.Attribute) []*onnx.Attribute {
		return append(slices.Clone(a), more...)
	}
	one := floatAttr("scale", 1)
	// B=1, T=2, one head, d_k=2, d_v=1.
	q := onnx.FromSlice([]float32{1, 0, 1, 1}, 1, 2, 2)
	k := onnx.FromSlice([]float32{1, 0, 0, 1}, 1, 2, 2)
	v := onnx.FromSlice([]float32{2, 3}, 1, 2, 1)
	lin := with(heads(1, 1), stringAttr("update_rule", "linear"))
	// S1 = [[2],[0]], o1 = 2; S2 = [[2],[3]], o2 = 5.
	got := runNodeOK(t, 27, "LinearAttention", with(lin, one), 2, q, k, v)
	floatsClose(t, "linear", got[0].Float32s(), []float64{2, 5}, 0)
	floatsClose(t, "linear state", got[1].Float32s(), []float64{2, 3}, 0)
	if !slices.Equal(got[0].Shape, []int{1, 2, 1}) || !slices.Equal(got[1].Shape, []int{1, 1, 2, 1}) {
		t.Errorf("shapes %v %v", got[0].Shape, got[1].Shape)
	}
	// Default scale 1/sqrt(d_k).
	got = runNodeOK(t, 27, "LinearAttention", lin, 2, q, k, v)
	floatsClose(t, "linear default scale", got[0].Float32s(), []float64{2 / math.Sqrt2, 5 / math.Sqrt2}, 1e-6)
	// A past state is added to: S0 = [[1],[1]] gives S1 = [[3],[1]], S2 = [[3],[4]].
	past := onnx.FromSlice([]float32{1, 1}, 1, 1, 2, 1)
	got = runNodeOK(t, 27, "LinearAttention", with(lin, one), 2, q, k, v, past)
	floatsClose(t, "linear past", got[0].Float32s(), []float64{3, 7}, 0)
	floatsClose(t, "linear past state", got[1].Float32s(), []float64{3, 4}, 0)

	// Gated, one decay per head: exp(g) = 0.5 each step.
	ln := func(x float64) float32 { return float32(math.Log(x)) }
	g := onnx.FromSlice([]float32{ln(0.5), ln(0.5)}, 1, 2, 1)
	gated := with(heads(1, 1), stringAttr("update_rule", "gated"), one)
	got = runNodeOK(t, 27, "LinearAttention", gated, 2, q, k, v, nil, g)
	// S1 = [[2],[0]]; S2 = 0.5*S1 + [[0],[3]] = [[1],[3]].
	floatsClose(t, "gated", got[0].Float32s(), []float64{2, 4}, 1e-6)
	floatsClose(t, "gated state", got[1].Float32s(), []float64{1, 3}, 1e-6)
	// Per key dimension: step 2 scales row 0 by 0.25 and row 1 by 0.5.
	gk := onnx.FromSlice([]float32{0, 0, ln(0.25), ln(0.5)}, 1, 2, 2)
	got = runNodeOK(t, 27, "LinearAttention", gated, 2, q, k, v, nil, gk)
	floatsClose(t, "gated per key", got[0].Float32s(), []float64{2, 3.5}, 1e-6)
	floatsClose(t, "gated per key state", got[1].Float32s(), []float64{0.5, 3}, 1e-6)

	// Delta: beta (B, T, 1) = 0.5, 1; k2 = [1, 1].
	k2 := onnx.FromSlice([]float32{1, 0, 1, 1}, 1, 2, 2)
	beta := onnx.FromSlice([]float32{0.5, 1}, 1, 2, 1)
	delta := with(heads(1, 1), stringAttr("update_rule", "delta"), one)
	// v1' = 0.5*(2-0) = 1, S1 = [[1],[0]]; v2' = 1*(3 - S1^T k2) = 2, S2 = [[3],[2]].
	got = runNodeOK(t, 27, "LinearAttention", delta, 2, q, k2, v, nil, nil, beta)
	floatsClose(t, "delta", got[0].Float32s(), []float64{1, 5}, 1e-6)
	floatsClose(t, "delta state", got[1].Float32s(), []float64{3, 2}, 1e-6)
	// Gated delta (the default rule): decay 0.5 before each update.
	// S1 = [[1],[0]]; S = [[0.5],[0]], v2' = 3 - 0.5 = 2.5, S2 = [[3],[2.5]].
	got = runNodeOK(t, 27, "LinearAttention", with(heads(1, 1), one), 2, q, k2, v, nil, g, beta)
	floatsClose(t, "gated_delta", got[0].Float32s(), []float64{1, 5.5}, 1e-6)
	floatsClose(t, "gated_delta state", got[1].Float32s(), []float64{3, 2.5}, 1e-6)

	// Grouped query heads: 4 query heads over 2 KV heads (d_k = d_v = 1);
	// query heads 0, 1 read KV head 0 and 2, 3 read KV head 1.
	q4 := onnx.FromSlice([]float32{1, 2, 3, 4}, 1, 1, 4)
	k4 := onnx.FromSlice([]float32{1, 2}, 1, 1, 2)
	v4 := onnx.FromSlice([]float32{4, 5}, 1, 1, 2)
	got = runNodeOK(t, 27, "LinearAttention", with(heads(4, 2), stringAttr("update_rule", "linear"), one), 2, q4, k4, v4)
	floatsClose(t, "GQA", got[0].Float32s(), []float64{4, 8, 30, 40}, 0)
	floatsClose(t, "GQA state", got[1].Float32s(), []float64{4, 10}, 0)
	// Per-head beta (B, T, H_kv) with two KV heads.
	b2 := onnx.FromSlice([]float32{0.5, 0.25}, 1, 1, 2)
	got = runNodeOK(t, 27, "LinearAttention", with(heads(2, 2), stringAttr("update_rule", "delta"), one), 2,
		onnx.FromSlice([]float32{1, 1}, 1, 1, 2), k4, v4, nil, nil, b2)
	// head 0: v' = 2, S = 1*2; head 1: v' = 1.25, S = 2*1.25.
	floatsClose(t, "per-head beta", got[0].Float32s(), []float64{2, 2.5}, 1e-6)

	// float16 in, float32 state.
	qh := &onnx.Tensor{Type: onnx.Float16, Shape: []int{1, 2, 2}, Data: f16Values(1, 0, 1, 1)}
	kh := &onnx.Tensor{Type: onnx.Float16, Shape: []int{1, 2, 2}, Data: f16Values(1, 0, 0, 1)}
	vh := &onnx.Tensor{Type: onnx.Float16, Shape: []int{1, 2, 1}, Data: f16Values(2, 3)}
	got = runNodeOK(t, 27, "LinearAttention", with(lin, one), 2, qh, kh, vh, past)
	if w := float32Values(got[0]); got[0].Type != onnx.Float16 || !slices.Equal(w, []float32{3, 7}) {
		t.Errorf("float16 output %v", got[0])
	}
	if got[1].Type != onnx.Float || !slices.Equal(got[1].Float32s(), []float32{3, 4}) {
		t.Errorf("float32 state %v", got[1])
	}

	// Bad input.
	for name, c := range map[string]struct {
		attrs  []*onnx.Attribute
		inputs []*onnx.Tensor
	}{
		"decay for linear": {lin, []*onnx.Tensor{q, k, v, nil, g}},
		"no beta":          {with(heads(1, 1), stringAttr("update_rule", "delta")), []*onnx.Tensor{q, k, v}},
		"no decay":         {heads(1, 1), []*onnx.Tensor{q, k, v, nil, nil, beta}},
		"heads":            {with(heads(3, 2), stringAttr("update_rule", "linear")), []*onnx.Tensor{q4, k4, v4}},
		"key width":        {with(heads(4, 1), stringAttr("update_rule", "linear")), []*onnx.Tensor{q4, k4, v4}},
		"rule":             {with(heads(1, 1), stringAttr("update_rule", "softmax")), []*onnx.Tensor{q, k, v}},
		"past shape":       {lin, []*onnx.Tensor{q, k, v, onnx.FromSlice([]float32{1, 1}, 1, 2, 1, 1)}},
	} {
		if _, err := runNode(t, 27, "LinearAttention", c.attrs, 2, c.inputs...); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
