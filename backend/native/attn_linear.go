package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// LinearAttention (opset 27), the recurrent attention of linear-attention
// models, https://onnx.ai/onnx/operators/onnx__LinearAttention.html. It is
// computed in float32 (float16 and bfloat16 widened, rounded once at the
// end), like ONNX's definition.

// linearAttentionKernel computes LinearAttention: per batch and KV head, a
// state S (d_k x d_v) is carried over the T tokens,
//
//	gated rules:  S <- exp(g_t) * S      (g per head, or per key row)
//	delta rules:  v <- beta_t * (v_t - S^T k_t)
//	all rules:    S <- S + k_t (outer) v
//	output:       o_t = scale * q_t^T S  for each query head of the group
//
// where query head h reads KV head h / (q_num_heads / kv_num_heads).
// query, key, value, decay and beta are packed [B, T, heads*dim].
type linearAttentionKernel struct {
	qHeads, kvHeads int
	gated, delta    bool
	scale           float32 // 0: 1/sqrt(d_k)
	threads         int

	out, state                outputBuffer
	wq, wk, wv, wp, wg, wbeta float32Scratch
	o, s                      float32Scratch
}

func (k *linearAttentionKernel) compute(q, key, v, past, decay, beta *onnx.Tensor) (*onnx.Tensor, *onnx.Tensor, error) {
	for _, t := range []*onnx.Tensor{key, v, decay, beta} {
		if t != nil && t.Type != q.Type {
			return nil, nil, fmt.Errorf("inputs have different types: query is %v, another is %v", q.Type, t.Type)
		}
	}
	for _, t := range []struct {
		name string
		t    *onnx.Tensor
	}{{"query", q}, {"key", key}, {"value", v}, {"decay", decay}, {"beta", beta}} {
		if t.t != nil && len(t.t.Shape) != 3 {
			return nil, nil, fmt.Errorf("%s has shape %v; want rank 3 (B, T, heads*dim)", t.name, t.t.Shape)
		}
	}
	nb, nt := q.Shape[0], q.Shape[1]
	hq, hkv := k.qHeads, k.kvHeads
	if q.Shape[2]%hq != 0 || q.Shape[2] == 0 {
		return nil, nil, fmt.Errorf("query's last dimension %d is not a positive multiple of q_num_heads %d", q.Shape[2], hq)
	}
	dk := q.Shape[2] / hq
	if key.Shape[0] != nb || key.Shape[1] != nt || key.Shape[2] != hkv*dk {
		return nil, nil, fmt.Errorf("key has shape %v; want (%d, %d, %d)", key.Shape, nb, nt, hkv*dk)
	}
	if v.Shape[0] != nb || v.Shape[1] != nt || v.Shape[2]%hkv != 0 {
		return nil, nil, fmt.Errorf("value has shape %v; want (%d, %d, kv_num_heads %d * d_v)", v.Shape, nb, nt, hkv)
	}
	dv := v.Shape[2] / hkv
	if past != nil && (len(past.Shape) != 4 || past.Shape[0] != nb || past.Shape[1] != hkv || past.Shape[2] != dk || past.Shape[3] != dv) {
		return nil, nil, fmt.Errorf("past_state has shape %v; want (%d, %d, %d, %d)", past.Shape, nb, hkv, dk, dv)
	}
	decayPerKey := false
	if decay != nil {
		if decay.Shape[0] != nb || decay.Shape[1] != nt || (decay.Shape[2] != hkv && decay.Shape[2] != hkv*dk) {
			return nil, nil, fmt.Errorf("decay has shape %v; want (%d, %d, %d) or (%d, %d, %d)", decay.Shape, nb, nt, hkv, nb, nt, hkv*dk)
		}
		decayPerKey = decay.Shape[2] == hkv*dk && dk != 1
	}
	betaPerHead := false
	if beta != nil {
		if beta.Shape[0] != nb || beta.Shape[1] != nt || (beta.Shape[2] != hkv && beta.Shape[2] != 1) {
			return nil, nil, fmt.Errorf("beta has shape %v; want (%d, %d, %d) or (%d, %d, 1)", beta.Shape, nb, nt, hkv, nb, nt)
		}
		betaPerHead = beta.Shape[2] == hkv
	}
	for _, shape := range [][]int{{nb, nt, hq, dv}, {nb, hkv, dk, dv}} {
		if n, err := onnx.ShapeElements(shape); err != nil || n > convMaxElements {
			return nil, nil, fmt.Errorf("LinearAttention: a buffer of shape %v is too large", shape)
		}
	}
	stType := q.Type
	if past != nil {
		stType = past.Type
	}
	var in [6][]float32
	scr := [6]*float32Scratch{&k.wq, &k.wk, &k.wv, &k.wp, &k.wg, &k.wbeta}
	for i, t := range []*onnx.Tensor{q, key, v, past, decay, beta} {
		d, err := float32Data(t, scr[i])
		if err != nil {
			return nil, nil, fmt.Errorf("LinearAttention: %w", err)
		}
		in[i] = d
	}
	qs, ks, vs, ps, gs, bs := in[0], in[1], in[2], in[3], in[4], in[5]
	scale := k.scale
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(dk)))
	}
	o := k.o.get(nb * nt * hq * dv)
	st := k.s.get(nb * hkv * dk * dv)
	if ps != nil {
		copy(st, ps)
	} else {
		clear(st)
	}
	group := hq / hkv
	par.For(nb*hkv, k.threads, max(1, par.Grain/max(1, nt*dk*dv*(group+2))), func(lo, hi int) {
		vt := make([]float32, dv)
		for r := lo; r < hi; r++ {
			bi, h := r/hkv, r%hkv
			S := st[r*dk*dv : (r+1)*dk*dv]
			for t := range nt {
				tok := bi*nt + t
				kt := ks[(tok*hkv+h)*dk : (tok*hkv+h+1)*dk]
				copy(vt, vs[(tok*hkv+h)*dv:(tok*hkv+h+1)*dv])
				if k.gated {
					linearAttentionDecay(S, gs, tok*hkv+h, dk, dv, decayPerKey)
				}
				if k.delta {
					linearAttentionDelta(vt, nil, S, kt, bs[linearAttentionBetaAt(tok, h, hkv, betaPerHead)])
				}
				linearAttentionAddOuter(S, kt, vt)
				for qh := h * group; qh < (h+1)*group; qh++ {
					qt := qs[(tok*hq+qh)*dk : (tok*hq+qh+1)*dk]
					ot := o[(tok*hq+qh)*dv : (tok*hq+qh+1)*dv]
					clear(ot)
					for i, qv := range qt {
						row := S[i*dv : (i+1)*dv]
						for j, x := range row {
							ot[j] += qv * x
						}
					}
					for j := range ot {
						ot[j] *= scale
					}
				}
			}
		}
	})
	out := k.out.tensor(q.Type, []int{nb, nt, hq * dv})
	if err := storeFloat32s(out, o); err != nil {
		return nil, nil, err
	}
	state := k.state.tensor(stType, []int{nb, hkv, dk, dv})
	if err := storeFloat32s(state, st); err != nil {
		return nil, nil, err
	}
	return out, state, nil
}

// VisitLinearAttention compiles LinearAttention (version 27).
func (b *builder) VisitLinearAttention(op *ops.LinearAttention) error {
	var refs [6]valueRef
	var err error
	for i, name := range []string{op.In.Query, op.In.Key, op.In.Value} {
		if refs[i], err = b.input(name); err != nil {
			return err
		}
	}
	for i, name := range []string{op.In.PastState, op.In.Decay, op.In.Beta} {
		if refs[3+i], err = b.optionalInput(name); err != nil {
			return err
		}
	}
	k := &linearAttentionKernel{scale: op.Scale, threads: b.e.threads}
	if k.gated, k.delta, err = linearAttentionRule(op.UpdateRule); err != nil {
		return err
	}
	if !b.probing {
		if k.qHeads, k.kvHeads, err = linearAttentionHeads(op); err != nil {
			return err
		}
		if k.gated != refs[4].present() {
			return fmt.Errorf("update_rule %q: decay must be given exactly for the gated rules", op.UpdateRule)
		}
		if k.delta != refs[5].present() {
			return fmt.Errorf("update_rule %q: beta must be given exactly for the delta rules", op.UpdateRule)
		}
	}
	y := b.output(op.Out.Output)
	present := b.output(op.Out.PresentState)
	return b.emit(func(slots []onnx.Value) error {
		var ts [6]*onnx.Tensor
		for i, r := range refs {
			t, err := r.optionalTensor(slots)
			if err != nil {
				return err
			}
			ts[i] = t
		}
		o, s, err := k.compute(ts[0], ts[1], ts[2], ts[3], ts[4], ts[5])
		if err != nil {
			return err
		}
		y.set(slots, o)
		present.set(slots, s)
		return nil
	})
}

// linearAttentionDecay multiplies the state S (dk rows of dv) of token and
// KV head th (= tok*hkv + h) by exp of the log-decay gs: one factor per key
// row (perKey) or one for the whole state.
func linearAttentionDecay(S, gs []float32, th, dk, dv int, perKey bool) {
	if !perKey {
		f := float32(math.Exp(float64(gs[th])))
		for j := range S {
			S[j] *= f
		}
		return
	}
	g := gs[th*dk : (th+1)*dk]
	for i := range dk {
		f := float32(math.Exp(float64(g[i])))
		row := S[i*dv : (i+1)*dv]
		for j := range row {
			row[j] *= f
		}
	}
}

// linearAttentionDelta applies the delta rules' correction to the value
// row u of a token: u <- beta·(u − Aᵀk) for the state A (len(k) rows of
// len(u)); w, when not nil, keeps u − Aᵀk.
func linearAttentionDelta(u, w, A, k []float32, beta float32) {
	dv := len(u)
	for j := range u {
		var acc float32
		for i, kv := range k {
			acc += A[i*dv+j] * kv
		}
		d := u[j] - acc
		if w != nil {
			w[j] = d
		}
		u[j] = beta * d
	}
}

// linearAttentionAddOuter adds the outer product k·uᵀ to the state S
// (len(k) rows of len(u)).
func linearAttentionAddOuter(S, k, u []float32) {
	dv := len(u)
	for i, kv := range k {
		row := S[i*dv : (i+1)*dv]
		for j, x := range u {
			row[j] += kv * x
		}
	}
}

// linearAttentionBetaAt is the index in beta of token tok and KV head h
// (of hkv): beta holds one value per token and head, or one per token.
func linearAttentionBetaAt(tok, h, hkv int, perHead bool) int {
	if perHead {
		return tok*hkv + h
	}
	return tok
}

// linearAttentionHeads reads q_num_heads and kv_num_heads, which the
// forward and the gradient check alike.
func linearAttentionHeads(op *ops.LinearAttention) (q, kv int, err error) {
	if op.QNumHeads < 1 || op.KvNumHeads < 1 || op.QNumHeads%op.KvNumHeads != 0 || op.QNumHeads > convMaxElements {
		return 0, 0, fmt.Errorf("q_num_heads %d must be a positive multiple of kv_num_heads %d", op.QNumHeads, op.KvNumHeads)
	}
	return int(op.QNumHeads), int(op.KvNumHeads), nil
}

// linearAttentionRule reads update_rule: whether the state decays (gated)
// and whether it is corrected toward v (delta).
func linearAttentionRule(rule string) (gated, delta bool, err error) {
	switch rule {
	case "linear":
	case "gated":
		gated = true
	case "delta":
		delta = true
	case "gated_delta":
		gated, delta = true, true
	default:
		err = fmt.Errorf("update_rule %q is not one of linear, gated, delta, gated_delta", rule)
	}
	return gated, delta, err
}
