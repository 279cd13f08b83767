package native

import (
	"fmt"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rule of CausalConvWithState (version 27) for input, weight and
// bias; past_state and present_state are non-differentiable in the
// schema. The forward computes in float32 only (float16 and bfloat16 are
// widened), so the rule does float32 and refuses the reduced types. With
// seq = [past_state; input] and pre_t = bias + Σ_j w_j seq[t+j]:
//
//	dpre_t = dy_t (· SiLU'(pre_t) = σ(pre)(1 + pre(1 − σ(pre))) under silu)
//	dinput[s] = Σ_j dpre_{s+h−j} w_j,  dw_j = Σ_t dpre_t seq[t+j],  dbias = Σ_t dpre_t
//
// where h = K − 1. Rows (batch, channel) are independent for the input;
// weight and bias sums run over the batch per channel.
type gradCausalConvKernel struct {
	silu                bool
	x, w, bias, past, y int
	sx, sw, sb          gradScratch
	dpre, seq           []float32
}

func (gb *gradBuilder) VisitCausalConvWithState(op *ops.CausalConvWithState) error {
	k := &gradCausalConvKernel{}
	switch op.Activation {
	case "none":
	case "silu", "swish":
		k.silu = true
	default:
		return fmt.Errorf("activation %q is not one of none, silu, swish", op.Activation)
	}
	k.x, k.w, k.bias = gb.slot(op.In.Input), gb.slot(op.In.Weight), gb.slot(op.In.Bias)
	k.past, k.y = gb.slot(op.In.PastState), gb.slot(op.Out.Output)
	return gb.set(k.run)
}

func (k *gradCausalConvKernel) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil || !(g.wants(k.x) || g.wants(k.w) || g.wants(k.bias)) {
		return nil
	}
	var ts [4]*onnx.Tensor
	for i, s := range []int{k.x, k.w, k.bias, k.past} {
		if s < 0 {
			continue
		}
		t, ok := slots[s].(*onnx.Tensor)
		if !ok || t == nil {
			return fmt.Errorf("CausalConvWithState gradient: input %d is %s", i, onnx.DescribeValue(slots[s]))
		}
		if t.Type != onnx.Float {
			return network.Unsupportedf("gradients of CausalConvWithState in tensor(%v)", t.Type)
		}
		ts[i] = t
	}
	x, w, bias, past := ts[0], ts[1], ts[2], ts[3]
	if x == nil || w == nil || len(x.Shape) != 3 || len(w.Shape) != 3 || gy.Type != onnx.Float || !sameShape(gy.Shape, x.Shape) {
		return fmt.Errorf("CausalConvWithState gradient: unexpected shapes")
	}
	nb, nc, nl := x.Shape[0], x.Shape[1], x.Shape[2]
	kk := w.Shape[2]
	h := kk - 1
	if w.Shape[0] != nc || (past != nil && past.Len() != nb*nc*h) || (bias != nil && bias.Len() != nc) {
		return fmt.Errorf("CausalConvWithState gradient: weight %v, input %v", w.Shape, x.Shape)
	}
	xs, ws, dy := x.Data.([]float32), w.Data.([]float32), gy.Data.([]float32)
	var bs, ps []float32
	if bias != nil {
		bs = bias.Data.([]float32)
	}
	if past != nil {
		ps = past.Data.([]float32)
	}
	dx := k.sx.zeros(onnx.Float, x.Shape)
	dw := k.sw.zeros(onnx.Float, w.Shape)
	var db *onnx.Tensor
	if bias != nil {
		db = k.sb.zeros(onnx.Float, bias.Shape)
	}
	dxs, dws := dx.Data.([]float32), dw.Data.([]float32)
	if cap(k.dpre) < nl {
		k.dpre = make([]float32, nl)
	}
	dpre := k.dpre[:nl]
	if cap(k.seq) < h+nl {
		k.seq = make([]float32, h+nl)
	}
	seq := k.seq[:h+nl]
	for r := range nb * nc {
		c := r % nc
		if ps != nil {
			copy(seq[:h], ps[r*h:(r+1)*h])
		} else {
			clear(seq[:h])
		}
		copy(seq[h:], xs[r*nl:(r+1)*nl])
		wr := ws[c*kk : (c+1)*kk]
		gr := dy[r*nl : (r+1)*nl]
		for t := range nl {
			d := gr[t]
			if k.silu {
				var acc float32
				if bs != nil {
					acc = bs[c]
				}
				for j, wv := range wr {
					acc += wv * seq[t+j]
				}
				a := float64(acc)
				s := sigmoid(a)
				d = float32(float64(d) * s * (1 + a*(1-s)))
			}
			dpre[t] = d
		}
		dxr := dxs[r*nl : (r+1)*nl]
		dwr := dws[c*kk : (c+1)*kk]
		var dbsum float32
		for t, d := range dpre {
			dbsum += d
			for j, wv := range wr {
				s := t + j
				dwr[j] += d * seq[s]
				if s >= h {
					dxr[s-h] += d * wv
				}
			}
		}
		if db != nil {
			db.Data.([]float32)[c] += dbsum
		}
	}
	if err := g.add(k.x, dx); err != nil {
		return err
	}
	if err := g.add(k.w, dw); err != nil {
		return err
	}
	if db != nil {
		return g.add(k.bias, db)
	}
	return nil
}
