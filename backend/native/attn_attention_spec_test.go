package native

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// The cases of this file pin Attention to its newest definition
// (https://onnx.ai/onnx/operators/onnx__Attention.html, versions 23, 24 and
// 25): hand-computed ones for each rule, and the configurations of ONNX's
// test-case generator (onnx/backend/test/case/node/attention.py) checked
// against a port of the reference implementation's computation.

// attnQKV is one query (of 1) over keys 0 and ln 3 with values 2 and 6:
// softmax weights 1/4 and 3/4 and output 5 when nothing is masked.
func attnQKV(queries int) (q, k, v *onnx.Tensor) {
	ln3 := float32(math.Log(3))
	qd := make([]float32, queries)
	for i := range qd {
		qd[i] = 1
	}
	return onnx.FromSlice(qd, 1, 1, queries, 1), onnx.FromSlice([]float32{0, ln3}, 1, 1, 2, 1), onnx.FromSlice([]float32{2, 6}, 1, 1, 2, 1)
}

// A row whose keys are all masked attends nothing: its output row and its
// mode-3 probabilities are 0 (not NaN), at every version.
func TestAttentionFullyMaskedRowIsZero(t *testing.T) {
	q, k, v := attnQKV(2)
	boolMask := onnx.FromSlice([]bool{false, false, true, true}, 2, 2)
	floatMask := onnx.FromSlice([]float32{float32(math.Inf(-1)), float32(math.Inf(-1)), 0, 0}, 2, 2)
	for _, opset := range []int64{23, 24, 25} {
		for _, mask := range []*onnx.Tensor{boolMask, floatMask} {
			out, err := runOp(t, "", opset, "Attention", []*onnx.Attribute{intAttr("qk_matmul_output_mode", 3)}, 4, q, k, v, mask)
			if err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("opset %d, %v mask", opset, mask.Type)
			sigClose(t, what+": Y", sigFloats(t, out[0]), []float64{0, 5}, 1e-6)
			sigClose(t, what+": mode 3", sigFloats(t, out[3]), []float64{0, 0, 0.25, 0.75}, 1e-6)
		}
	}
	// Causal and a boolean mask intersect: query 0 may see key 0 only, which
	// the mask hides; query 1 sees key 1 only.
	out, err := runOp(t, "", 24, "Attention", []*onnx.Attribute{intAttr("is_causal", 1)}, 1, q, k, v, onnx.FromSlice([]bool{false, true}, 2))
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "causal and mask", sigFloats(t, out[0]), []float64{0, 6}, 1e-6)
	// Version 24, external cache of 1 valid key for 2 queries: the causal
	// offset is 1-2 = -1, so query 0 has no key and query 1 has key 0.
	out, err = runOp(t, "", 24, "Attention", []*onnx.Attribute{intAttr("is_causal", 1)}, 1, q, k, v, nil, nil, nil, onnx.FromSlice([]int64{1}, 1))
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "negative causal offset", sigFloats(t, out[0]), []float64{0, 2}, 1e-6)
}

// The softcap caps the scores before the mask is added: a -inf mask keeps
// its key at probability 0, and a float mask is added to capped scores.
func TestAttentionSoftcapBeforeMask(t *testing.T) {
	q, k, v := attnQKV(1)
	ninf := float32(math.Inf(-1))
	for _, opset := range []int64{23, 24, 25} {
		// Capping after the mask would turn -inf into -1 and give key 1 weight.
		out, err := runOp(t, "", opset, "Attention", []*onnx.Attribute{floatAttr("softcap", 1)}, 1, q, k, v, onnx.FromSlice([]float32{0, ninf}, 2))
		if err != nil {
			t.Fatal(err)
		}
		sigClose(t, "softcap, -inf mask", sigFloats(t, out[0]), []float64{2}, 1e-6)
		// Scores 0 and ln 3 cap to 0 and tanh(ln 3) = 0.8; the mask adds ln 3
		// to key 0: weights 3 : e^0.8. (Mask first would give 0.8 and 0.8.)
		out, err = runOp(t, "", opset, "Attention", []*onnx.Attribute{floatAttr("softcap", 1)}, 1, q, k, v, onnx.FromSlice([]float32{float32(math.Log(3)), 0}, 2))
		if err != nil {
			t.Fatal(err)
		}
		e := math.Exp(0.8)
		sigClose(t, "softcap, float mask", sigFloats(t, out[0]), []float64{(2*3 + 6*e) / (3 + e)}, 1e-6)
	}
}

// qk_matmul_output_mode 0 is the scaled QK product, 1 the capped scores, 2
// the capped scores plus the mask, 3 the softmax.
func TestAttentionQKMatmulOutputModes(t *testing.T) {
	q, k, v := attnQKV(1)
	ln3 := math.Log(3)
	mask := onnx.FromSlice([]float32{float32(ln3), 0}, 2)
	e := math.Exp(0.8)
	want := [][]float64{{0, ln3}, {0, 0.8}, {ln3, 0.8}, {3 / (3 + e), e / (3 + e)}}
	for _, opset := range []int64{23, 24, 25} {
		for mode, w := range want {
			out, err := runOp(t, "", opset, "Attention", []*onnx.Attribute{floatAttr("softcap", 1), intAttr("qk_matmul_output_mode", int64(mode))}, 4, q, k, v, mask)
			if err != nil {
				t.Fatal(err)
			}
			sigClose(t, fmt.Sprintf("opset %d mode %d", opset, mode), sigFloats(t, out[3]), w, 1e-6)
		}
	}
	// Without softcap, mode 1 is mode 0.
	out, err := runOp(t, "", 23, "Attention", []*onnx.Attribute{intAttr("qk_matmul_output_mode", 1)}, 4, q, k, v, mask)
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "mode 1 without softcap", sigFloats(t, out[3]), []float64{0, ln3}, 1e-6)
}

// Version 25's windows: query i (absolute position p = i + offset) sees the
// keys j with p - left <= j <= p + right.
func TestAttentionWindows(t *testing.T) {
	// ONNX's test_attention_bidirectional_window: equal scores, values 0..4,
	// left 1, right 2.
	zeros := onnx.FromSlice(make([]float32, 5), 1, 1, 5, 1)
	vals := onnx.FromSlice([]float32{0, 1, 2, 3, 4}, 1, 1, 5, 1)
	out, err := runOp(t, "", 25, "Attention", []*onnx.Attribute{intAttr("left_window_size", 1), intAttr("right_window_size", 2)}, 1, zeros, zeros, vals)
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "bidirectional", sigFloats(t, out[0]), []float64{1, 1.5, 2.5, 3, 3.5}, 1e-6)
	// Causal with a left window of 1: {0}, {0,1}, {1,2}, {2,3}, {3,4}.
	out, err = runOp(t, "", 25, "Attention", []*onnx.Attribute{intAttr("is_causal", 1), intAttr("left_window_size", 1)}, 1, zeros, zeros, vals)
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "causal left window", sigFloats(t, out[0]), []float64{0, 0.5, 1.5, 2.5, 3.5}, 1e-6)
	// With 3 past keys, one query sits at position 3: left 1 gives keys
	// {2, 3} (values 2 and 3).
	past := onnx.FromSlice([]float32{0, 0, 0}, 1, 1, 3, 1)
	pastV := onnx.FromSlice([]float32{0, 1, 2}, 1, 1, 3, 1)
	one := onnx.FromSlice([]float32{0}, 1, 1, 1, 1)
	out, err = runOp(t, "", 25, "Attention", []*onnx.Attribute{intAttr("left_window_size", 1)}, 1, one, one, onnx.FromSlice([]float32{3}, 1, 1, 1, 1), nil, past, pastV)
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "window with past", sigFloats(t, out[0]), []float64{2.5}, 1e-6)
	// External cache: 5 keys, 4 valid, one query at position 3; left 1 and
	// right 5 give keys {2, 3} (key 4 is padding).
	out, err = runOp(t, "", 25, "Attention", []*onnx.Attribute{intAttr("left_window_size", 1), intAttr("right_window_size", 5)}, 1,
		one, zeros, vals, nil, nil, nil, onnx.FromSlice([]int64{4}, 1))
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "window with nonpad", sigFloats(t, out[0]), []float64{2.5}, 1e-6)
	// A window that leaves a query no key: left 0 and right 0 with the
	// query at position 6 of 5 keys (offset = nonpad 7 - 1).
	out, err = runOp(t, "", 25, "Attention", []*onnx.Attribute{intAttr("left_window_size", 0), intAttr("right_window_size", 0)}, 1,
		one, zeros, vals, nil, nil, nil, onnx.FromSlice([]int64{7}, 1))
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "empty window", sigFloats(t, out[0]), []float64{0}, 0)
	// Bad values, and what version 25 forbids.
	if _, err := runOp(t, "", 25, "Attention", []*onnx.Attribute{intAttr("left_window_size", -2)}, 1, zeros, zeros, vals); err == nil {
		t.Error("left_window_size -2: expected an error")
	}
	if _, err := runOp(t, "", 25, "Attention", []*onnx.Attribute{intAttr("q_num_heads", 1), intAttr("kv_num_heads", 1)}, 1, zeros, zeros, vals); err == nil {
		t.Error("version 25, 4-D with q_num_heads: expected an error")
	}
	if _, err := runOp(t, "", 25, "Attention", nil, 1, one, one, one, nil, past, past, onnx.FromSlice([]int64{4}, 1)); err == nil {
		t.Error("version 25, nonpad_kv_seqlen with a past: expected an error")
	}
	// Version 24 takes both (the offset is then the past length).
	if _, err := runOp(t, "", 24, "Attention", nil, 1, one, one, one, nil, past, past, onnx.FromSlice([]int64{4}, 1)); err != nil {
		t.Errorf("version 24, nonpad_kv_seqlen with a past: %v", err)
	}
}

// The mask's last dimension: version 23 broadcasts 1 (it defines no
// padding); from version 24 a shorter mask is padded with -inf.
func TestAttentionShortMaskByVersion(t *testing.T) {
	q, k, v := attnQKV(1)
	m := onnx.FromSlice([]float32{0}, 1, 1)
	for opset, want := range map[int64]float64{23: 5, 24: 2, 25: 2} {
		out, err := runOp(t, "", opset, "Attention", nil, 1, q, k, v, m)
		if err != nil {
			t.Fatal(err)
		}
		sigClose(t, fmt.Sprintf("opset %d", opset), sigFloats(t, out[0]), []float64{want}, 1e-6)
	}
	three := onnx.FromSlice([]bool{true, true, false}, 3)
	q3, k3, v3 := onnx.FromSlice([]float32{0}, 1, 1, 1, 1), onnx.FromSlice(make([]float32, 4), 1, 1, 4, 1), onnx.FromSlice([]float32{1, 3, 100, 100}, 1, 1, 4, 1)
	if _, err := runOp(t, "", 23, "Attention", nil, 1, q3, k3, v3, three); err == nil {
		t.Error("opset 23, 3 mask keys for 4: expected an error")
	}
	out, err := runOp(t, "", 24, "Attention", nil, 1, q3, k3, v3, three)
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "opset 24 padded", sigFloats(t, out[0]), []float64{2}, 1e-6)
}

// Query head h reads key/value head h / (q_num_heads / kv_num_heads): heads
// 0 and 1 share kv head 0, heads 2 and 3 kv head 1. V may have another
// float type than Q; Y has Q's, present_value V's.
func TestAttentionGroupsAndValueType(t *testing.T) {
	q := onnx.FromSlice(make([]float32, 4), 1, 4, 1, 1)
	k := onnx.FromSlice(make([]float32, 2), 1, 2, 1, 1)
	v := onnx.FromSlice([]float64{2, 6}, 1, 2, 1, 1)
	for _, opset := range []int64{23, 24, 25} {
		out, err := runOp(t, "", opset, "Attention", nil, 3, q, k, v)
		if err != nil {
			t.Fatal(err)
		}
		if out[0].Type != onnx.Float || out[2].Type != onnx.Double {
			t.Fatalf("Y is %v, present_value %v; want float and double", out[0].Type, out[2].Type)
		}
		sigClose(t, "groups", sigFloats(t, out[0]), []float64{2, 2, 6, 6}, 0)
	}
	if _, err := runOp(t, "", 23, "Attention", []*onnx.Attribute{intAttr("softmax_precision", 7)}, 1, q, k, v); err == nil {
		t.Error("softmax_precision 7 (INT64): expected an error")
	}
}

// attnND is a dense row-major array for the reference port.
type attnND struct {
	shape []int
	data  []float64
}

func newAttnND(shape ...int) attnND {
	return attnND{shape: shape, data: make([]float64, onnx.NumElements(shape))}
}

func (a attnND) idx(ix ...int) int {
	o := 0
	for d, i := range ix {
		o = o*a.shape[d] + i
	}
	return o
}

// attnRefCase holds the arguments of the reference's _compute_attention.
type attnRefCase struct {
	name             string
	opset            int64
	q, k, v          attnND
	mask             *attnND // values 0/1 when maskBool
	maskBool         bool
	pastK, pastV     *attnND
	nonpad           []int64
	scale            *float64
	causal           bool
	qHeads, kvHeads  int
	softcap          float64
	mode             int // -1: no qk_matmul_output
	left, right      int
	softmaxPrecision int64
	half             bool // Q, K, V (and a float mask) are float16
}

// attnReference ports the reference implementation's steps: a materialized
// bias (mask padded and converted, causal, window and padding terms
// summed), repeated K/V heads, capped scores plus bias, a softmax whose
// all -inf rows are 0, and the fully-masked-row guard on the bias. Mode 0
// is the product before the softcap, as the schema and the function body
// define it.
func attnReference(c attnRefCase) (y, presentK, presentV, qk attnND) {
	Q, K, V := c.q, c.k, c.v
	threeD := len(Q.shape) == 3
	to4 := func(x attnND, heads int) attnND {
		B, S, hid := x.shape[0], x.shape[1], x.shape[2]
		d := hid / heads
		out := newAttnND(B, heads, S, d)
		for b := range B {
			for s := range S {
				for h := range heads {
					for e := range d {
						out.data[out.idx(b, h, s, e)] = x.data[(b*S+s)*hid+h*d+e]
					}
				}
			}
		}
		return out
	}
	if threeD {
		Q, K, V = to4(Q, c.qHeads), to4(K, c.kvHeads), to4(V, c.kvHeads)
	}
	B, Hq, S, D := Q.shape[0], Q.shape[1], Q.shape[2], Q.shape[3]
	Hkv, Dv := K.shape[1], V.shape[3]
	scale := 1 / math.Sqrt(float64(D))
	if c.scale != nil {
		scale = *c.scale
	}
	sq := math.Sqrt(scale)
	concat := func(p *attnND, x attnND) attnND {
		if p == nil {
			return x
		}
		P, N, E := p.shape[2], x.shape[2], x.shape[3]
		out := newAttnND(B, Hkv, P+N, E)
		for b := range B {
			for h := range Hkv {
				for s := range P + N {
					for e := range E {
						if s < P {
							out.data[out.idx(b, h, s, e)] = p.data[p.idx(b, h, s, e)]
						} else {
							out.data[out.idx(b, h, s, e)] = x.data[x.idx(b, h, s-P, e)]
						}
					}
				}
			}
		}
		return out
	}
	presentK, presentV = concat(c.pastK, K), concat(c.pastV, V)
	L := presentK.shape[2]
	neg := math.Inf(-1)
	// The mask, padded to L keys and converted to a bias.
	var maskAt func(b, h, i, j int) float64
	if m := c.mask; m != nil {
		r := len(m.shape)
		last := m.shape[r-1]
		maskAt = func(b, h, i, j int) float64 {
			if j >= last {
				return neg
			}
			full := []int{b, h, i, j}[4-r:]
			o := 0
			for d, n := range m.shape {
				ix := full[d]
				if n == 1 {
					ix = 0
				}
				o = o*n + ix
			}
			x := m.data[o]
			if c.maskBool {
				if x != 0 {
					return 0
				}
				return neg
			}
			return x
		}
	}
	offset := make([]int, B)
	for b := range B {
		switch {
		case c.pastK == nil && c.nonpad != nil:
			offset[b] = int(c.nonpad[b]) - S
		case c.pastK != nil:
			offset[b] = c.pastK.shape[2]
		}
	}
	bias := newAttnND(B, Hq, S, L)
	for b := range B {
		for h := range Hq {
			for i := range S {
				for j := range L {
					x := 0.0
					if maskAt != nil {
						x = maskAt(b, h, i, j)
					}
					if c.causal && j > i+offset[b] {
						x += neg
					}
					if c.left >= 0 || c.right >= 0 {
						diff := i + offset[b] - j
						if !((c.left < 0 || diff <= c.left) && (c.right < 0 || -diff <= c.right)) {
							x += neg
						}
					}
					if c.nonpad != nil && int64(j) >= c.nonpad[b] {
						x += neg
					}
					bias.data[bias.idx(b, h, i, j)] = x
				}
			}
		}
	}
	group := Hq / Hkv
	qk = newAttnND(B, Hq, S, L)
	y = newAttnND(B, Hq, S, Dv)
	for b := range B {
		for h := range Hq {
			g := h / group
			for i := range S {
				row := make([]float64, L)
				for j := range L {
					s := 0.0
					for d := range D {
						s += Q.data[Q.idx(b, h, i, d)] * sq * (presentK.data[presentK.idx(b, g, j, d)] * sq)
					}
					if c.mode == 0 {
						qk.data[qk.idx(b, h, i, j)] = s
					}
					if c.softcap > 0 {
						s = c.softcap * math.Tanh(s/c.softcap)
					}
					if c.mode == 1 {
						qk.data[qk.idx(b, h, i, j)] = s
					}
					row[j] = s + bias.data[bias.idx(b, h, i, j)]
					if c.mode == 2 {
						qk.data[qk.idx(b, h, i, j)] = row[j]
					}
				}
				xmax, bmax := neg, neg
				for j, x := range row {
					xmax = max(xmax, x)
					bmax = max(bmax, bias.data[bias.idx(b, h, i, j)])
				}
				safe := xmax
				if math.IsInf(xmax, -1) {
					safe = 0
				}
				sum := 0.0
				for j, x := range row {
					row[j] = math.Exp(x - safe)
					sum += row[j]
				}
				if sum == 0 {
					sum = 1
				}
				for j := range row {
					row[j] /= sum
					if math.IsInf(bmax, -1) {
						row[j] = 0
					}
					if c.mode == 3 {
						qk.data[qk.idx(b, h, i, j)] = row[j]
					}
					for e := range Dv {
						y.data[y.idx(b, h, i, e)] += row[j] * presentV.data[presentV.idx(b, g, j, e)]
					}
				}
			}
		}
	}
	if threeD {
		y3 := newAttnND(B, S, Hq*Dv)
		for b := range B {
			for h := range Hq {
				for i := range S {
					for e := range Dv {
						y3.data[(b*S+i)*Hq*Dv+h*Dv+e] = y.data[y.idx(b, h, i, e)]
					}
				}
			}
		}
		y = y3
	}
	return y, presentK, presentV, qk
}

// attnRand is a uniform [0, 1) array of the given shape, at float32's (or
// float16's) precision.
func attnRand(r *rand.Rand, half bool, shape ...int) attnND {
	a := newAttnND(shape...)
	for i := range a.data {
		x := float32(r.Float64())
		if half {
			x = onnx.F16From(x).Float32()
		}
		a.data[i] = float64(x)
	}
	return a
}

func (a attnND) tensor(half bool) *onnx.Tensor {
	t := onnx.NewTensor(onnx.Float, a.shape...)
	if half {
		t = onnx.NewTensor(onnx.Float16, a.shape...)
	}
	storeFloat64s(t, a.data)
	return t
}

// attnGeneratorCases are the configurations of ONNX's attention test
// cases (names as there), with inputs drawn here.
func attnGeneratorCases() []attnRefCase {
	r := rand.New(rand.NewPCG(23, 25))
	f := func(shape ...int) attnND { return attnRand(r, false, shape...) }
	h := func(shape ...int) attnND { return attnRand(r, true, shape...) }
	ptr := func(a attnND) *attnND { return &a }
	boolMask := func(shape []int, vals ...bool) *attnND {
		m := newAttnND(shape...)
		if vals == nil {
			for i := range m.data {
				if r.Float64() < 0.5 {
					m.data[i] = 1
				}
			}
		}
		for i, v := range vals {
			if v {
				m.data[i] = 1
			}
		}
		return &m
	}
	sc := func(x float64) *float64 { return &x }
	base := func(name string, opset int64, q, k, v attnND) attnRefCase {
		return attnRefCase{name: name, opset: opset, q: q, k: k, v: v, mode: -1, left: -1, right: -1}
	}
	var cs []attnRefCase
	add := func(c attnRefCase, edit func(*attnRefCase)) {
		if edit != nil {
			edit(&c)
		}
		cs = append(cs, c)
	}
	add(base("4d", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), nil)
	add(base("4d_fp16", 23, h(2, 3, 4, 8), h(2, 3, 6, 8), h(2, 3, 6, 8)), func(c *attnRefCase) { c.half = true })
	add(base("4d_gqa", 23, f(2, 9, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), nil)
	add(base("4d_diff_heads_sizes", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 10)), nil)
	add(base("4d_scaled", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.scale = sc(1e-2) })
	add(base("4d_causal", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.causal = true })
	add(base("4d_gqa_causal", 23, f(2, 9, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.causal = true })
	add(base("4d_attn_mask", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.mask = ptr(f(4, 6)) })
	add(base("4d_attn_mask_3d", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.mask = ptr(f(2, 1, 4, 6)) })
	add(base("4d_attn_mask_3d_causal", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.mask, c.causal = ptr(f(2, 1, 4, 6)), true })
	add(base("4d_attn_mask_4d_causal", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.mask, c.causal = ptr(f(2, 3, 4, 6)), true })
	add(base("4d_attn_mask_bool", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.mask, c.maskBool = boolMask([]int{4, 6}), true })
	add(base("4d_attn_mask_bool_4d", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.mask, c.maskBool = boolMask([]int{2, 3, 4, 6}), true })
	add(base("4d_gqa_with_past_and_present", 23, f(2, 9, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) {
		c.mask, c.pastK, c.pastV = ptr(f(4, 18)), ptr(f(2, 3, 12, 8)), ptr(f(2, 3, 12, 8))
	})
	add(base("4d_diff_heads_with_past_and_present_mask4d", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 10)), func(c *attnRefCase) {
		c.mask, c.pastK, c.pastV = ptr(f(2, 3, 4, 18)), ptr(f(2, 3, 12, 8)), ptr(f(2, 3, 12, 10))
	})
	add(base("4d_softcap", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.softcap = 2 })
	add(base("4d_with_qk_matmul", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.mode = 0 })
	add(base("4d_with_qk_matmul_bias", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.mode, c.mask = 2, ptr(f(4, 6)) })
	add(base("4d_with_qk_matmul_softcap", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.mode, c.mask, c.softcap = 1, ptr(f(4, 6)), 2 })
	add(base("4d_with_qk_matmul_softmax", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.mode, c.mask = 3, ptr(f(4, 6)) })
	add(base("4d_with_past_and_present_qk_matmul_bias_4d_mask_causal", 23, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) {
		c.mode, c.causal, c.mask, c.pastK, c.pastV = 2, true, ptr(f(2, 3, 4, 18)), ptr(f(2, 3, 12, 8)), ptr(f(2, 3, 12, 8))
	})
	add(base("3d", 23, f(2, 4, 24), f(2, 6, 24), f(2, 6, 24)), func(c *attnRefCase) { c.qHeads, c.kvHeads = 3, 3 })
	add(base("3d_gqa_causal", 23, f(2, 4, 72), f(2, 6, 24), f(2, 6, 24)), func(c *attnRefCase) { c.qHeads, c.kvHeads, c.causal = 9, 3, true })
	add(base("3d_diff_heads_sizes_softcap", 23, f(2, 4, 24), f(2, 6, 24), f(2, 6, 30)), func(c *attnRefCase) { c.qHeads, c.kvHeads, c.softcap = 3, 3, 3 })
	add(base("3d_with_past_and_present_qk_matmul_softcap", 23, f(2, 4, 24), f(2, 6, 24), f(2, 6, 24)), func(c *attnRefCase) {
		c.qHeads, c.kvHeads, c.mode, c.softcap = 3, 3, 1, 2
		c.mask, c.pastK, c.pastV = ptr(f(4, 18)), ptr(f(2, 3, 12, 8)), ptr(f(2, 3, 12, 8))
	})
	add(base("4d_diff_heads_mask4d_padded_kv", 24, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 10)), func(c *attnRefCase) {
		c.mask, c.nonpad = ptr(f(2, 3, 4, 4)), []int64{3, 4}
	})
	neginf := newAttnND(4, 6)
	for i := range 4 {
		neginf.data[i*6+4], neginf.data[i*6+5] = math.Inf(-1), math.Inf(-1)
	}
	poisonV := f(1, 1, 6, 8)
	for i := 32; i < 48; i++ {
		poisonV.data[i] = 1000
	}
	add(base("4d_softcap_neginf_mask_poison", 23, f(1, 1, 4, 8), f(1, 1, 6, 8), poisonV), func(c *attnRefCase) { c.mask, c.softcap = &neginf, 0.5 })
	add(base("4d_gqa_causal_nonpad_decode", 24, f(2, 4, 1, 8), f(2, 2, 8, 8), f(2, 2, 8, 8)), func(c *attnRefCase) { c.causal, c.nonpad = true, []int64{8, 5} })
	add(base("4d_gqa_causal_nonpad_decode_fp16", 24, h(2, 4, 1, 8), h(2, 2, 8, 8), h(2, 2, 8, 8)), func(c *attnRefCase) {
		c.causal, c.nonpad, c.half = true, []int64{8, 5}, true
	})
	add(base("4d_causal_nonpad_continued_prefill", 24, f(1, 2, 2, 8), f(1, 2, 4, 8), f(1, 2, 4, 8)), func(c *attnRefCase) { c.causal, c.nonpad = true, []int64{4} })
	add(base("4d_causal_with_past_and_present", 24, f(2, 3, 4, 8), f(2, 3, 4, 8), f(2, 3, 4, 8)), func(c *attnRefCase) {
		c.causal, c.pastK, c.pastV = true, ptr(f(2, 3, 3, 8)), ptr(f(2, 3, 3, 8))
	})
	add(base("causal_boolmask_nan_robustness", 24, f(1, 2, 2, 8), f(1, 2, 2, 8), f(1, 2, 2, 8)), func(c *attnRefCase) {
		c.causal, c.mask, c.maskBool = true, boolMask([]int{2, 2}, true, false, false, false), true
	})
	add(base("23_fullymasked_qk_matmul_output_mode3_zero", 23, f(1, 2, 2, 8), f(1, 2, 2, 8), f(1, 2, 2, 8)), func(c *attnRefCase) {
		c.mode, c.mask, c.maskBool = 3, boolMask([]int{2, 2}, false, false, true, true), true
	})
	add(base("24_qk_matmul_output_mode3_softmax_precision", 24, h(1, 2, 2, 8), h(1, 2, 2, 8), h(1, 2, 2, 8)), func(c *attnRefCase) {
		c.mode, c.mask, c.maskBool, c.half, c.softmaxPrecision = 3, boolMask([]int{2, 2}, false, false, true, true), true, true, 1
	})
	add(base("4d_causal_nonpad_negative_offset_structural_empty", 24, f(1, 2, 4, 8), f(1, 2, 4, 8), f(1, 2, 4, 8)), func(c *attnRefCase) {
		c.causal, c.nonpad = true, []int64{2}
	})
	add(base("4d_causal_nonpad_attn_mask_composition", 24, f(2, 2, 3, 8), f(2, 2, 6, 8), f(2, 2, 6, 8)), func(c *attnRefCase) {
		c.causal, c.nonpad, c.maskBool = true, []int64{4, 5}, true
		c.mask = boolMask([]int{2, 1, 3, 6},
			true, true, true, false, false, false, true, true, true, false, false, false, true, false, true, true, false, false,
			true, true, true, true, false, false, true, true, true, true, false, false, true, true, false, true, true, false)
	})
	add(base("4d_causal_nonpad_batch_prefill", 24, f(3, 2, 2, 8), f(3, 2, 6, 8), f(3, 2, 6, 8)), func(c *attnRefCase) { c.causal, c.nonpad = true, []int64{4, 5, 6} })
	add(base("local_window", 25, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) { c.causal, c.left = true, 2 })
	add(base("local_window_default", 25, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), nil)
	add(base("local_window_rank1_boolean_mask", 25, f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)), func(c *attnRefCase) {
		c.causal, c.left, c.maskBool, c.mask = true, 2, true, boolMask([]int{6}, true, true, true, true, false, false)
	})
	add(base("local_window_with_past", 25, f(2, 3, 4, 8), f(2, 3, 2, 8), f(2, 3, 2, 8)), func(c *attnRefCase) {
		c.causal, c.left, c.pastK, c.pastV = true, 2, ptr(f(2, 3, 8, 8)), ptr(f(2, 3, 8, 8))
	})
	add(base("local_window_ext_cache_rank3_head_mask", 25, f(2, 3, 4, 8), f(2, 3, 8, 8), f(2, 3, 8, 8)), func(c *attnRefCase) {
		c.causal, c.left, c.mask, c.nonpad = true, 2, ptr(f(3, 4, 8)), []int64{6, 7}
	})
	add(base("local_window_ext_cache_rank4_batch_mask", 25, f(2, 3, 4, 8), f(2, 3, 8, 8), f(2, 3, 8, 8)), func(c *attnRefCase) {
		c.causal, c.left, c.mask, c.nonpad = true, 2, ptr(f(2, 1, 4, 8)), []int64{6, 7}
	})
	add(base("local_window_ext_cache_rank2_mask", 25, f(2, 3, 4, 8), f(2, 3, 8, 8), f(2, 3, 8, 8)), func(c *attnRefCase) {
		c.causal, c.left, c.mask, c.nonpad = true, 2, ptr(f(1, 8)), []int64{6, 7}
	})
	add(base("3d_local_window", 25, f(2, 4, 32), f(2, 6, 8), f(2, 6, 6)), func(c *attnRefCase) { c.qHeads, c.kvHeads, c.causal, c.left = 4, 1, true, 2 })
	add(base("local_window_gqa_rank4_mask", 25, f(2, 4, 4, 8), f(2, 2, 6, 8), f(2, 2, 6, 6)), func(c *attnRefCase) {
		m := boolMask([]int{2, 4, 4, 6})
		for i := range m.data {
			m.data[i] = 1
			if i/6%4 == 0 {
				m.data[i] = 0 // query row 0 fully masked
			}
		}
		c.causal, c.left, c.softcap, c.softmaxPrecision, c.mode, c.mask, c.maskBool = true, 2, 2, 11, 3, m, true
	})
	return cs
}

func TestAttentionAgainstReferenceCases(t *testing.T) {
	for _, c := range attnGeneratorCases() {
		t.Run(c.name, func(t *testing.T) {
			wantY, wantPK, wantPV, wantQK := attnReference(c)
			attrs := []*onnx.Attribute{}
			if c.scale != nil {
				attrs = append(attrs, floatAttr("scale", float32(*c.scale)))
			}
			if c.causal {
				attrs = append(attrs, intAttr("is_causal", 1))
			}
			if c.qHeads != 0 {
				attrs = append(attrs, intAttr("q_num_heads", int64(c.qHeads)), intAttr("kv_num_heads", int64(c.kvHeads)))
			}
			if c.softcap != 0 {
				attrs = append(attrs, floatAttr("softcap", float32(c.softcap)))
			}
			if c.mode >= 0 {
				attrs = append(attrs, intAttr("qk_matmul_output_mode", int64(c.mode)))
			}
			if c.left >= 0 {
				attrs = append(attrs, intAttr("left_window_size", int64(c.left)))
			}
			if c.softmaxPrecision != 0 {
				attrs = append(attrs, intAttr("softmax_precision", c.softmaxPrecision))
			}
			ins := []*onnx.Tensor{c.q.tensor(c.half), c.k.tensor(c.half), c.v.tensor(c.half), nil, nil, nil, nil}
			if c.mask != nil {
				if c.maskBool {
					bs := make([]bool, len(c.mask.data))
					for i, x := range c.mask.data {
						bs[i] = x != 0
					}
					ins[3] = onnx.FromSlice(bs, c.mask.shape...)
				} else {
					ins[3] = c.mask.tensor(c.half)
				}
			}
			if c.pastK != nil {
				ins[4], ins[5] = c.pastK.tensor(c.half), c.pastV.tensor(c.half)
			}
			if c.nonpad != nil {
				ins[6] = onnx.FromSlice(slices.Clone(c.nonpad), len(c.nonpad))
			}
			for len(ins) > 3 && ins[len(ins)-1] == nil {
				ins = ins[:len(ins)-1]
			}
			nOut := 4
			if c.nonpad != nil && c.opset >= 25 {
				nOut = 1 // version 25 forbids present outputs with nonpad_kv_seqlen
			}
			out, err := runOp(t, "", c.opset, "Attention", attrs, nOut, ins...)
			if err != nil {
				t.Fatal(err)
			}
			// Native narrows float64 results once; the reference's own float32
			// (or float16) arithmetic is what the tolerance allows for.
			tol := 1e-5
			if c.half {
				tol = 2e-3
			}
			if !slices.Equal(out[0].Shape, wantY.shape) {
				t.Fatalf("Y shape %v, want %v", out[0].Shape, wantY.shape)
			}
			sigClose(t, "Y", sigFloats(t, out[0]), wantY.data, tol)
			if nOut == 1 {
				return
			}
			sigClose(t, "present_key", sigFloats(t, out[1]), wantPK.data, tol)
			sigClose(t, "present_value", sigFloats(t, out[2]), wantPV.data, tol)
			if c.mode >= 0 {
				sigClose(t, "qk_matmul_output", sigFloats(t, out[3]), wantQK.data, tol)
			}
		})
	}
}
