package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rule of LinearAttention (version 27) for query, key, value,
// decay and beta, in float32 (the forward's precision; the reduced types
// are refused); past_state and present_state are non-differentiable in the
// schema. Per batch and KV head the forward is replayed to keep every state
// S_t, then time runs backwards with dS, the gradient of the current state:
//
//	o = scale·S_tᵀq:       dq = scale·S_t do,  dS += scale·q doᵀ
//	S_t = A + k uᵀ:        dk += dS u,  du = dSᵀk,  dA = dS
//	u = β(v − Aᵀk) (delta): dβ += du·(v − Aᵀk),  dv = β du,
//	                        dk −= A dv,  dA −= k dvᵀ   (else dv = du)
//	A = e^g ⊙ S_{t−1} (gated): dg += Σ dA ⊙ A (per key row or per head),
//	                        dS_{t−1} = e^g ⊙ dA        (else dS_{t−1} = dA)
type gradLinearAttentionKernel struct {
	qHeads, kvHeads int
	gated, delta    bool
	scale           float32

	in  [6]int // query, key, value, past_state, decay, beta
	y   int
	sg  [6]gradScratch
	buf []float32
}

func (gb *gradBuilder) VisitLinearAttention(op *ops.LinearAttention) error {
	k := &gradLinearAttentionKernel{scale: op.Scale}
	var err error
	if k.gated, k.delta, err = linearAttentionRule(op.UpdateRule); err != nil {
		return err
	}
	if k.qHeads, k.kvHeads, err = linearAttentionHeads(op); err != nil {
		return err
	}
	for i, name := range []string{op.In.Query, op.In.Key, op.In.Value, op.In.PastState, op.In.Decay, op.In.Beta} {
		k.in[i] = gb.slot(name)
	}
	k.y = gb.slot(op.Out.Output)
	return gb.set(k.run)
}

func (k *gradLinearAttentionKernel) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil {
		return nil
	}
	var ts [6]*onnx.Tensor
	var data [6][]float32
	for i, s := range k.in {
		if s < 0 {
			continue
		}
		t, ok := slots[s].(*onnx.Tensor)
		if !ok || t == nil {
			return fmt.Errorf("LinearAttention gradient: input %d is %s", i, onnx.DescribeValue(slots[s]))
		}
		if t.Type != onnx.Float {
			return network.Unsupportedf("gradients of LinearAttention in tensor(%v)", t.Type)
		}
		ts[i], data[i] = t, t.Data.([]float32)
	}
	q, key, v := ts[0], ts[1], ts[2]
	if q == nil || key == nil || v == nil || len(q.Shape) != 3 || len(key.Shape) != 3 || len(v.Shape) != 3 || gy.Type != onnx.Float {
		return fmt.Errorf("LinearAttention gradient: missing or malformed inputs")
	}
	nb, nt := q.Shape[0], q.Shape[1]
	hq, hkv := k.qHeads, k.kvHeads
	dk, dv := q.Shape[2]/hq, v.Shape[2]/hkv
	if gy.Len() != nb*nt*hq*dv || key.Len() != nb*nt*hkv*dk || q.Len() != nb*nt*hq*dk {
		return fmt.Errorf("LinearAttention gradient: query %v, key %v, value %v, output gradient %v", q.Shape, key.Shape, v.Shape, gy.Shape)
	}
	if (ts[3] != nil && ts[3].Len() != nb*hkv*dk*dv) || (k.gated && ts[4] == nil) || (k.delta && ts[5] == nil) {
		return fmt.Errorf("LinearAttention gradient: past_state, decay or beta do not match")
	}
	decayPerKey := k.gated && ts[4].Shape[2] == hkv*dk && dk != 1
	betaPerHead := k.delta && ts[5].Shape[2] == hkv
	var grads [6][]float32
	var gts [6]*onnx.Tensor
	for _, i := range []int{0, 1, 2, 4, 5} {
		if ts[i] != nil && g.wants(k.in[i]) {
			gts[i] = k.sg[i].zeros(onnx.Float, ts[i].Shape)
			grads[i] = gts[i].Data.([]float32)
		}
	}
	// Scratch: the nt+1 states, A, dS, u, w, du.
	sz := (nt+1)*dk*dv + 2*dk*dv + 3*dv
	buf := scratchOf(&k.buf, sz)
	states, rest := buf[:(nt+1)*dk*dv], buf[(nt+1)*dk*dv:]
	A, dS, u, w, du := rest[:dk*dv], rest[dk*dv:2*dk*dv], rest[2*dk*dv:2*dk*dv+dv], rest[2*dk*dv+dv:2*dk*dv+2*dv], rest[2*dk*dv+2*dv:]
	scale := k.scale
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(dk)))
	}
	qs, ks, vs, ps, gs, bs := data[0], data[1], data[2], data[3], data[4], data[5]
	dqs, dks, dvs, dgs, dbs := grads[0], grads[1], grads[2], grads[4], grads[5]
	dys := gy.Data.([]float32)
	group := hq / hkv
	// step computes A and u of token tok from the state S (and w = v − Aᵀk
	// under the delta rules).
	step := func(S []float32, tok, h int) {
		copy(A, S)
		if k.gated {
			linearAttentionDecay(A, gs, tok*hkv+h, dk, dv, decayPerKey)
		}
		copy(u, vs[(tok*hkv+h)*dv:(tok*hkv+h+1)*dv])
		if k.delta {
			kt := ks[(tok*hkv+h)*dk : (tok*hkv+h+1)*dk]
			linearAttentionDelta(u, w, A, kt, bs[linearAttentionBetaAt(tok, h, hkv, betaPerHead)])
		}
	}
	for r := range nb * hkv {
		bi, h := r/hkv, r%hkv
		if ps != nil {
			copy(states[:dk*dv], ps[r*dk*dv:(r+1)*dk*dv])
		} else {
			clear(states[:dk*dv])
		}
		for t := range nt {
			tok := bi*nt + t
			step(states[t*dk*dv:(t+1)*dk*dv], tok, h)
			kt := ks[(tok*hkv+h)*dk : (tok*hkv+h+1)*dk]
			next := states[(t+1)*dk*dv : (t+2)*dk*dv]
			copy(next, A)
			linearAttentionAddOuter(next, kt, u)
		}
		clear(dS)
		for t := nt - 1; t >= 0; t-- {
			tok := bi*nt + t
			St := states[(t+1)*dk*dv : (t+2)*dk*dv]
			for qh := h * group; qh < (h+1)*group; qh++ {
				qt := qs[(tok*hq+qh)*dk : (tok*hq+qh+1)*dk]
				dot := dys[(tok*hq+qh)*dv : (tok*hq+qh+1)*dv]
				for i, qv := range qt {
					row, drow := St[i*dv:(i+1)*dv], dS[i*dv:(i+1)*dv]
					var acc float32
					for j, d := range dot {
						acc += row[j] * d
						drow[j] += scale * qv * d
					}
					if dqs != nil {
						dqs[(tok*hq+qh)*dk+i] += scale * acc
					}
				}
			}
			step(states[t*dk*dv:(t+1)*dk*dv], tok, h)
			kt := ks[(tok*hkv+h)*dk : (tok*hkv+h+1)*dk]
			kOff, vOff := (tok*hkv+h)*dk, (tok*hkv+h)*dv
			clear(du)
			for i, kv := range kt {
				drow := dS[i*dv : (i+1)*dv]
				var acc float32
				for j, d := range drow {
					acc += d * u[j]
					du[j] += d * kv
				}
				if dks != nil {
					dks[kOff+i] += acc
				}
			}
			if k.delta {
				at := linearAttentionBetaAt(tok, h, hkv, betaPerHead)
				var db float32
				for j := range dv {
					db += du[j] * w[j]
					du[j] *= bs[at] // now dw = dv
				}
				if dbs != nil {
					dbs[at] += db
				}
				for i, kv := range kt {
					row, drow := A[i*dv:(i+1)*dv], dS[i*dv:(i+1)*dv]
					var acc float32
					for j, d := range du {
						acc += row[j] * d
						drow[j] -= kv * d
					}
					if dks != nil {
						dks[kOff+i] -= acc
					}
				}
			}
			if dvs != nil {
				for j, d := range du {
					dvs[vOff+j] += d
				}
			}
			if k.gated {
				for i := range dk {
					row, drow := A[i*dv:(i+1)*dv], dS[i*dv:(i+1)*dv]
					var acc float32
					for j, d := range drow {
						acc += d * row[j]
					}
					f := float32(math.Exp(float64(gs[tok*hkv+h])))
					if decayPerKey {
						f = float32(math.Exp(float64(gs[kOff+i])))
						if dgs != nil {
							dgs[kOff+i] += acc
						}
					} else if dgs != nil {
						dgs[tok*hkv+h] += acc
					}
					for j := range drow {
						drow[j] *= f
					}
				}
			}
		}
	}
	for _, i := range []int{0, 1, 2, 4, 5} {
		if gts[i] != nil {
			if err := g.add(k.in[i], gts[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
