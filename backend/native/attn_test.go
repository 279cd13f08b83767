package native

import (
	"math"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// Keys 0 and ln 3 against a query of 1 give softmax weights 1/4 and 3/4;
// with values 2 and 6 the output is 5.
func TestAttentionDefinition(t *testing.T) {
	ln3 := float32(math.Log(3))
	q := onnx.FromSlice([]float32{1}, 1, 1, 1, 1)
	k := onnx.FromSlice([]float32{0, ln3}, 1, 1, 2, 1)
	v := onnx.FromSlice([]float32{2, 6}, 1, 1, 2, 1)
	for _, opset := range []int64{23, 24, 25} {
		out, err := runOp(t, "", opset, "Attention", nil, 4, q, k, v)
		if err != nil {
			t.Fatal(err)
		}
		sigClose(t, "plain", sigFloats(t, out[0]), []float64{5}, 1e-6)
		sigClose(t, "present_key", sigFloats(t, out[1]), []float64{0, float64(ln3)}, 0)
		sigClose(t, "qk", sigFloats(t, out[3]), []float64{0, float64(ln3)}, 1e-6)
	}
	// The softmax as qk_matmul_output (mode 3).
	out, err := runOp(t, "", 23, "Attention", []*onnx.Attribute{intAttr("qk_matmul_output_mode", 3)}, 4, q, k, v)
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "mode 3", sigFloats(t, out[3]), []float64{0.25, 0.75}, 1e-6)
	// A boolean mask hiding key 0, and a float mask that adds ln 3 to key 0.
	out, err = runOp(t, "", 23, "Attention", nil, 1, q, k, v, onnx.FromSlice([]bool{false, true}, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "bool mask", sigFloats(t, out[0]), []float64{6}, 1e-6)
	out, err = runOp(t, "", 23, "Attention", nil, 1, q, k, v, onnx.FromSlice([]float32{ln3, 0}, 2))
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "float mask", sigFloats(t, out[0]), []float64{4}, 1e-6)
	// A mask shorter than the keys is padded with -inf: only key 0.
	out, err = runOp(t, "", 24, "Attention", nil, 1, q, k, v, onnx.FromSlice([]float32{0}, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "short mask", sigFloats(t, out[0]), []float64{2}, 1e-6)
	// Scale 2 doubles the scores: weights 1/10 and 9/10.
	out, err = runOp(t, "", 23, "Attention", []*onnx.Attribute{floatAttr("scale", 2)}, 1, q, k, v)
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "scale", sigFloats(t, out[0]), []float64{0.2 + 5.4}, 1e-6)
	// Softcap 1: scores 0 and tanh(ln 3) = 0.8.
	out, err = runOp(t, "", 23, "Attention", []*onnx.Attribute{floatAttr("softcap", 1)}, 1, q, k, v)
	if err != nil {
		t.Fatal(err)
	}
	p := math.Exp(0.8) / (1 + math.Exp(0.8))
	sigClose(t, "softcap", sigFloats(t, out[0]), []float64{2*(1-p) + 6*p}, 1e-6)
	// nonpad_kv_seqlen (version 24) of 1 leaves key 0 only.
	out, err = runOp(t, "", 24, "Attention", nil, 1, q, k, v, nil, nil, nil, onnx.FromSlice([]int64{1}, 1))
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "nonpad", sigFloats(t, out[0]), []float64{2}, 1e-6)
	// A right window of 0 (version 25) lets query 0 see key 0 only.
	out, err = runOp(t, "", 25, "Attention", []*onnx.Attribute{intAttr("right_window_size", 0)}, 1, q, k, v)
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "right window", sigFloats(t, out[0]), []float64{2}, 1e-6)
}

func TestAttentionCausalPastAndGroups(t *testing.T) {
	ln3 := float32(math.Log(3))
	// Two queries of 1 over keys 0, ln 3, causal: query 0 sees key 0 only.
	q := onnx.FromSlice([]float32{1, 1}, 1, 1, 2, 1)
	k := onnx.FromSlice([]float32{0, ln3}, 1, 1, 2, 1)
	v := onnx.FromSlice([]float32{2, 6}, 1, 1, 2, 1)
	out, err := runOp(t, "", 23, "Attention", []*onnx.Attribute{intAttr("is_causal", 1)}, 1, q, k, v)
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "causal", sigFloats(t, out[0]), []float64{2, 5}, 1e-6)
	// One query with one past key: causal alignment at the bottom right lets
	// it see both keys.
	out, err = runOp(t, "", 23, "Attention", []*onnx.Attribute{intAttr("is_causal", 1)}, 3,
		onnx.FromSlice([]float32{1}, 1, 1, 1, 1), onnx.FromSlice([]float32{ln3}, 1, 1, 1, 1), onnx.FromSlice([]float32{6}, 1, 1, 1, 1),
		nil, onnx.FromSlice([]float32{0}, 1, 1, 1, 1), onnx.FromSlice([]float32{2}, 1, 1, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "past", sigFloats(t, out[0]), []float64{5}, 1e-6)
	if !slices.Equal(out[1].Shape, []int{1, 1, 2, 1}) {
		t.Fatalf("present_key shape %v", out[1].Shape)
	}
	sigClose(t, "present_value", sigFloats(t, out[2]), []float64{2, 6}, 0)
	// Grouped queries, 3-D: two query heads (queries 1 and 0) share one
	// key/value head; head size 1.
	q3 := onnx.FromSlice([]float64{1, 0}, 1, 1, 2)
	k3 := onnx.FromSlice([]float64{0, float64(ln3)}, 1, 2, 1)
	v3 := onnx.FromSlice([]float64{2, 6}, 1, 2, 1)
	out, err = runOp(t, "", 23, "Attention", []*onnx.Attribute{intAttr("q_num_heads", 2), intAttr("kv_num_heads", 1)}, 1, q3, k3, v3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out[0].Shape, []int{1, 1, 2}) {
		t.Fatalf("3-D output shape %v", out[0].Shape)
	}
	sigClose(t, "gqa", out[0].Float64s(), []float64{5, 4}, 1e-7)
	// Errors: 3-D without heads; heads that do not divide; mismatched head sizes.
	if _, err := runOp(t, "", 23, "Attention", nil, 1, q3, k3, v3); err == nil {
		t.Error("3-D without q_num_heads: expected an error")
	}
	if _, err := runOp(t, "", 23, "Attention", nil, 1, onnx.NewTensor(onnx.Float, 1, 3, 1, 2), onnx.NewTensor(onnx.Float, 1, 2, 1, 2), onnx.NewTensor(onnx.Float, 1, 2, 1, 2)); err == nil {
		t.Error("3 query heads over 2 kv heads: expected an error")
	}
	if _, err := runOp(t, "", 23, "Attention", nil, 1, onnx.NewTensor(onnx.Float, 1, 1, 1, 2), onnx.NewTensor(onnx.Float, 1, 1, 1, 3), onnx.NewTensor(onnx.Float, 1, 1, 1, 2)); err == nil {
		t.Error("head sizes 2 and 3: expected an error")
	}
}

func TestRotaryEmbedding(t *testing.T) {
	// One head of size 4, two positions; angles 90 degrees for the first pair
	// and 0 for the second.
	x := onnx.FromSlice([]float32{1, 2, 3, 4, 1, 2, 3, 4}, 1, 1, 2, 4)
	cos := onnx.FromSlice([]float32{0, 1, 1, 1}, 2, 2) // position 0: (0, 1); position 1: (1, 1)
	sin := onnx.FromSlice([]float32{1, 0, 0, 0}, 2, 2)
	pos := onnx.FromSlice([]int64{0, 1}, 1, 2)
	out, err := runOp(t, "", 23, "RotaryEmbedding", nil, 1, x, cos, sin, pos)
	if err != nil {
		t.Fatal(err)
	}
	// Halves: pairs (x0, x2) and (x1, x3). Position 0, pair 0 at 90 degrees:
	// x0' = -x2 = -3, x2' = x0 = 1; pair 1 unchanged. Position 1 unchanged.
	sigClose(t, "halves", sigFloats(t, out[0]), []float64{-3, 2, 1, 4, 1, 2, 3, 4}, 1e-6)
	// Interleaved: pairs (x0, x1) and (x2, x3).
	out, err = runOp(t, "", 23, "RotaryEmbedding", []*onnx.Attribute{intAttr("interleaved", 1)}, 1, x, cos, sin, pos)
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "interleaved", sigFloats(t, out[0]), []float64{-2, 1, 3, 4, 1, 2, 3, 4}, 1e-6)
	// 3-D input with two heads of size 2, rotary_embedding_dim 2, caches
	// per [batch, seq] (no position_ids).
	x3 := onnx.FromSlice([]float32{1, 2, 3, 4}, 1, 1, 4)
	c3 := onnx.FromSlice([]float32{0}, 1, 1, 1)
	s3 := onnx.FromSlice([]float32{1}, 1, 1, 1)
	out, err = runOp(t, "", 23, "RotaryEmbedding", []*onnx.Attribute{intAttr("num_heads", 2), intAttr("rotary_embedding_dim", 2)}, 1, x3, c3, s3)
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "3-D", sigFloats(t, out[0]), []float64{-2, 1, -4, 3}, 1e-6)
	if _, err := runOp(t, "", 23, "RotaryEmbedding", nil, 1, x, cos, sin, onnx.FromSlice([]int64{0, 5}, 1, 2)); err == nil {
		t.Error("position 5 outside the cache: expected an error")
	}
}
