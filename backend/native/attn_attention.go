package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Attention (versions 23, 24, 25) computes, per batch b, query head h and
// query position i,
//
//	s[j] = scale * <Q[b,h,i,:], K[b,g(h),j,:]>      (j over past and new keys)
//	c[j] = softcap * tanh(s[j] / softcap)          (when softcap > 0)
//	a[j] = c[j] + bias[j]
//	Y[b,h,i,:] = sum_j softmax(a)[j] V[b,g(h),j,:]
//
// with g(h) = h / (q_num_heads / kv_num_heads) (grouped-query attention)
// and scale = 1/sqrt(head_size) unless set. The bias adds attn_mask (a
// float bias, or a boolean keep-mask: false is -inf), padded with -inf to
// the total key count when it is shorter; with is_causal, -inf where j >
// i + offset (the causal mask is aligned at the bottom right: offset is the
// past length, or nonpad_kv_seqlen[b] minus the query length when only
// that input is given); and with nonpad_kv_seqlen (version 24), -inf where
// j >= nonpad_kv_seqlen[b]. The softcap is applied before the bias, so
// masked keys keep probability 0. Q, K and V are 4-D [batch, heads, seq,
// head_size], or 3-D [batch, seq, heads*head_size] with q_num_heads and
// kv_num_heads set. present_key and present_value are the past tensors
// with the new keys and values appended along the sequence. The optional
// qk_matmul_output is s (mode 0), s plus the bias (1), a (2) or the
// softmax (3).
type attentionKernel struct {
	isCausal         bool
	qHeads, kvHeads  int // 0 when not set
	scale            float64
	hasScale         bool
	softcap          float64
	mode             int64
	threads          int
	wq, wk, wv       []float64
	wpk, wpv, wm     []float64
	pk, pv, y, qk    []float64
	outY, outK, outV outputBuffer
	outQK            outputBuffer
}

// attentionInputs are the tensors of one run; optional ones may be nil.
type attentionInputs struct {
	q, k, v, mask, pastK, pastV, nonpad *onnx.Tensor
}

// attentionLayout locates element (b, h, s, d) of a 3-D or 4-D operand.
type attentionLayout struct {
	heads, seq, size int // per head
	sB, sH, sS       int
}

func (l attentionLayout) at(b, h, s int) int { return b*l.sB + h*l.sH + s*l.sS }

// attentionShape reads an operand's layout; heads is the attribute (0:
// unset) needed by 3-D operands.
func attentionShape(t *onnx.Tensor, what string, heads int) (batch int, l attentionLayout, err error) {
	switch len(t.Shape) {
	case 4:
		batch, l.heads, l.seq, l.size = t.Shape[0], t.Shape[1], t.Shape[2], t.Shape[3]
		l.sS, l.sH, l.sB = l.size, l.seq*l.size, l.heads*l.seq*l.size
		if heads != 0 && heads != l.heads {
			return 0, l, fmt.Errorf("%s has %d heads (shape %v), but the num_heads attribute says %d", what, l.heads, t.Shape, heads)
		}
	case 3:
		if heads <= 0 {
			return 0, l, fmt.Errorf("%s is 3-D (shape %v): q_num_heads and kv_num_heads must be set", what, t.Shape)
		}
		if t.Shape[2]%heads != 0 {
			return 0, l, fmt.Errorf("%s hidden size %d is not a multiple of %d heads", what, t.Shape[2], heads)
		}
		batch, l.heads, l.seq, l.size = t.Shape[0], heads, t.Shape[1], t.Shape[2]/heads
		l.sS, l.sH, l.sB = heads*l.size, l.size, l.seq*heads*l.size
	default:
		return 0, l, fmt.Errorf("%s has shape %v; Attention takes 3-D or 4-D tensors", what, t.Shape)
	}
	return batch, l, nil
}

func (k *attentionKernel) compute(in attentionInputs) (y, presentK, presentV, qkOut *onnx.Tensor, err error) {
	q, kk, v := in.q, in.k, in.v
	if len(q.Shape) != len(kk.Shape) || len(q.Shape) != len(v.Shape) {
		return nil, nil, nil, nil, fmt.Errorf("Q %v, K %v and V %v must have the same rank", q.Shape, kk.Shape, v.Shape)
	}
	if kk.Type != q.Type || v.Type != q.Type {
		return nil, nil, nil, nil, fmt.Errorf("Q, K and V have different types %v, %v, %v", q.Type, kk.Type, v.Type)
	}
	B, ql, err := attentionShape(q, "Q", k.qHeads)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	bk, kl, err := attentionShape(kk, "K", k.kvHeads)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	bv, vl, err := attentionShape(v, "V", k.kvHeads)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	Hq, Hkv, D, Dv := ql.heads, kl.heads, ql.size, vl.size
	if bk != B || bv != B || vl.heads != Hkv || kl.size != D || vl.seq != kl.seq {
		return nil, nil, nil, nil, fmt.Errorf("Q %v, K %v and V %v do not agree in batch, heads, head size or key length", q.Shape, kk.Shape, v.Shape)
	}
	if Hkv == 0 || Hq%Hkv != 0 {
		return nil, nil, nil, nil, fmt.Errorf("%d query heads are not a multiple of %d key/value heads", Hq, Hkv)
	}
	past := 0
	if (in.pastK == nil) != (in.pastV == nil) {
		return nil, nil, nil, nil, fmt.Errorf("past_key and past_value must be given together")
	}
	if in.pastK != nil {
		pk, pv := in.pastK.Shape, in.pastV.Shape
		if len(pk) != 4 || len(pv) != 4 || pk[0] != B || pk[1] != Hkv || pk[3] != D || pv[0] != B || pv[1] != Hkv || pv[2] != pk[2] || pv[3] != Dv {
			return nil, nil, nil, nil, fmt.Errorf("past_key %v and past_value %v do not match [%d, %d, past, %d] and [%d, %d, past, %d]", pk, pv, B, Hkv, D, B, Hkv, Dv)
		}
		if in.pastK.Type != q.Type || in.pastV.Type != q.Type {
			return nil, nil, nil, nil, fmt.Errorf("past_key and past_value must have Q's type %v", q.Type)
		}
		past = pk[2]
	}
	S, L := ql.seq, past+kl.seq // query length, total key length
	if int64(B)*int64(Hq)*int64(S)*int64(max(L, Dv, 1)) > 1<<31 || int64(B)*int64(Hkv)*int64(L)*int64(max(D, Dv, 1)) > 1<<31 {
		return nil, nil, nil, nil, fmt.Errorf("Attention of Q %v and %d keys is too large", q.Shape, L)
	}
	var nonpad []int64
	if in.nonpad != nil {
		if nonpad, err = intsOf(in.nonpad); err != nil || len(nonpad) != B {
			return nil, nil, nil, nil, fmt.Errorf("nonpad_kv_seqlen must hold %d integers, got %v %v", B, in.nonpad.Type, in.nonpad.Shape)
		}
		for b, n := range nonpad {
			if n < 0 || n > int64(L) {
				return nil, nil, nil, nil, fmt.Errorf("nonpad_kv_seqlen[%d] = %d is not in [0, %d]", b, n, L)
			}
		}
	}
	// The mask, read as [B, Hq, S, maskLen] through broadcast strides.
	var mask []float64
	var maskBool []bool
	var mStr []int
	maskLen := 0
	if m := in.mask; m != nil {
		if len(m.Shape) < 1 || len(m.Shape) > 4 {
			return nil, nil, nil, nil, fmt.Errorf("attn_mask has shape %v; it must broadcast to [%d, %d, %d, %d]", m.Shape, B, Hq, S, L)
		}
		maskLen = m.Shape[len(m.Shape)-1]
		full := []int{B, Hq, S, maskLen}
		if _, err := broadcastShapes(m.Shape, full); err != nil || maskLen > L {
			return nil, nil, nil, nil, fmt.Errorf("attn_mask has shape %v; it must broadcast to [%d, %d, %d, %d]", m.Shape, B, Hq, S, L)
		}
		for i, d := range m.Shape {
			if want := full[4-len(m.Shape)+i]; d != 1 && d != want {
				return nil, nil, nil, nil, fmt.Errorf("attn_mask has shape %v; it must broadcast to [%d, %d, %d, %d]", m.Shape, B, Hq, S, L)
			}
		}
		mStr = broadcastStrides(m.Shape, full)
		if bs, ok := m.Data.([]bool); ok {
			maskBool = bs
		} else if m.Type == q.Type {
			if mask, err = signalWiden(m, &k.wm); err != nil {
				return nil, nil, nil, nil, err
			}
		} else {
			return nil, nil, nil, nil, fmt.Errorf("attn_mask is %v; it must be bool or Q's type %v", m.Type, q.Type)
		}
	}
	qd, err := signalWiden(q, &k.wq)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	kd, err := signalWiden(kk, &k.wk)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	vd, err := signalWiden(v, &k.wv)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	// present_key and present_value, [B, Hkv, L, D|Dv].
	k.pk = attentionConcat(k.pk, in.pastK, &k.wpk, kd, kl, B, Hkv, past, D)
	k.pv = attentionConcat(k.pv, in.pastV, &k.wpv, vd, vl, B, Hkv, past, Dv)
	pk, pv := k.pk, k.pv
	scale := 1 / math.Sqrt(float64(D))
	if k.hasScale {
		scale = k.scale
	}
	rows := B * Hq * S
	k.y = attentionGrow(k.y, rows*Dv)
	yd := k.y
	var qkd []float64
	if k.mode >= 0 {
		k.qk = attentionGrow(k.qk, rows*L)
		qkd = k.qk
	}
	group := Hq / Hkv
	neg := math.Inf(-1)
	par.For(rows, k.threads, max(1, 8192/max(1, L*D)), func(lo, hi int) {
		a := make([]float64, L)
		raw := make([]float64, L)
		for r := lo; r < hi; r++ {
			b, h, i := r/(Hq*S), (r/S)%Hq, r%S
			g := h / group
			qrow := qd[ql.at(b, h, i):][:D]
			for j := range L {
				krow := pk[((b*Hkv+g)*L+j)*D:][:D]
				s := 0.0
				for d, x := range qrow {
					s += x * krow[d]
				}
				s *= scale
				raw[j] = s
				if k.softcap > 0 {
					s = k.softcap * math.Tanh(s/k.softcap)
				}
				a[j] = s
			}
			// The bias.
			offset := past
			if in.pastK == nil && nonpad != nil {
				offset = int(nonpad[b]) - S
			}
			for j := range L {
				bias := 0.0
				if j >= maskLen && (mask != nil || maskBool != nil) {
					bias = neg
				} else if mask != nil {
					bias = mask[b*mStr[0]+h*mStr[1]+i*mStr[2]+j*mStr[3]]
				} else if maskBool != nil && !maskBool[b*mStr[0]+h*mStr[1]+i*mStr[2]+j*mStr[3]] {
					bias = neg
				}
				if k.isCausal && j > i+offset {
					bias = neg
				}
				if nonpad != nil && j >= int(nonpad[b]) {
					bias = neg
				}
				a[j] += bias
				if k.mode == 1 {
					raw[j] += bias
				}
			}
			switch k.mode {
			case 0, 1:
				copy(qkd[r*L:], raw)
			case 2:
				copy(qkd[r*L:], a)
			}
			// Softmax; a row with every key masked is NaN, as 0/0.
			m := neg
			for _, x := range a {
				m = max(m, x)
			}
			sum := 0.0
			for j, x := range a {
				e := math.Exp(x - m)
				a[j] = e
				sum += e
			}
			for j := range a {
				a[j] /= sum
			}
			if k.mode == 3 {
				copy(qkd[r*L:], a)
			}
			out := yd[r*Dv:][:Dv]
			clear(out)
			for j, p := range a {
				if p == 0 {
					continue
				}
				vrow := pv[((b*Hkv+g)*L+j)*Dv:][:Dv]
				for d, x := range vrow {
					out[d] += p * x
				}
			}
		}
	})
	// Y in Q's layout: [B, Hq, S, Dv] or [B, S, Hq*Dv].
	var yShape []int
	if len(q.Shape) == 4 {
		yShape = []int{B, Hq, S, Dv}
	} else {
		yShape = []int{B, S, Hq * Dv}
	}
	y = k.outY.tensor(q.Type, yShape)
	if len(q.Shape) == 4 {
		signalNarrow(y, yd)
	} else {
		tmp := make([]float64, len(yd))
		for b := range B {
			for h := range Hq {
				for i := range S {
					copy(tmp[((b*S+i)*Hq+h)*Dv:][:Dv], yd[((b*Hq+h)*S+i)*Dv:][:Dv])
				}
			}
		}
		signalNarrow(y, tmp)
	}
	presentK = k.outK.tensor(q.Type, []int{B, Hkv, L, D})
	signalNarrow(presentK, pk)
	presentV = k.outV.tensor(q.Type, []int{B, Hkv, L, Dv})
	signalNarrow(presentV, pv)
	if k.mode >= 0 {
		qkOut = k.outQK.tensor(q.Type, []int{B, Hq, S, L})
		signalNarrow(qkOut, qkd)
	}
	return y, presentK, presentV, qkOut, nil
}

func attentionGrow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// attentionConcat writes [B, H, past+new, size]: the past tensor (nil: no
// past) followed by the new operand read through its layout.
func attentionConcat(dst []float64, pastT *onnx.Tensor, wide *[]float64, cur []float64, l attentionLayout, B, H, past, size int) []float64 {
	L := past + l.seq
	dst = attentionGrow(dst, B*H*L*size)
	var pd []float64
	if pastT != nil {
		pd, _ = signalWiden(pastT, wide)
	}
	for b := range B {
		for h := range H {
			base := (b*H + h) * L * size
			if past > 0 {
				copy(dst[base:base+past*size], pd[(b*H+h)*past*size:][:past*size])
			}
			for s := range l.seq {
				copy(dst[base+(past+s)*size:][:size], cur[l.at(b, h, s):][:size])
			}
		}
	}
	return dst
}

// VisitAttention compiles Attention.
func (b *builder) VisitAttention(op *ops.Attention) error {
	names := []string{op.In.Q, op.In.K, op.In.V}
	req, err := b.inputs(names)
	if err != nil {
		return err
	}
	var opt [4]valueRef
	for i, n := range []string{op.In.AttnMask, op.In.PastKey, op.In.PastValue, op.In.NonpadKvSeqlen} {
		if opt[i], err = b.optionalInput(n); err != nil {
			return err
		}
	}
	if op.SinceVersion() >= 25 && (op.LeftWindowSize != -1 || op.RightWindowSize != -1) {
		return network.Unsupportedf("Attention with left_window_size %d / right_window_size %d (sliding windows)", op.LeftWindowSize, op.RightWindowSize)
	}
	if op.QkMatmulOutputMode < 0 || op.QkMatmulOutputMode > 3 {
		return fmt.Errorf("qk_matmul_output_mode %d is not in [0, 3]", op.QkMatmulOutputMode)
	}
	k := &attentionKernel{isCausal: op.IsCausal != 0, softcap: float64(op.Softcap), threads: b.e.threads, mode: -1}
	if op.QNumHeads != nil {
		k.qHeads = int(*op.QNumHeads)
	}
	if op.KvNumHeads != nil {
		k.kvHeads = int(*op.KvNumHeads)
	}
	if k.qHeads < 0 || k.kvHeads < 0 || k.qHeads > 1<<20 || k.kvHeads > 1<<20 {
		return fmt.Errorf("q_num_heads %d and kv_num_heads %d must be positive", k.qHeads, k.kvHeads)
	}
	if op.Scale != nil {
		k.scale, k.hasScale = float64(*op.Scale), true
	}
	y, pk, pv, qk := b.output(op.Out.Y), b.output(op.Out.PresentKey), b.output(op.Out.PresentValue), b.output(op.Out.QkMatmulOutput)
	if qk.present() {
		k.mode = op.QkMatmulOutputMode
	}
	return b.emit(func(slots []onnx.Value) error {
		var in attentionInputs
		var err error
		for i, p := range []**onnx.Tensor{&in.q, &in.k, &in.v} {
			if *p, err = req[i].tensor(slots); err != nil {
				return err
			}
		}
		for i, p := range []**onnx.Tensor{&in.mask, &in.pastK, &in.pastV, &in.nonpad} {
			if *p, err = opt[i].optionalTensor(slots); err != nil {
				return err
			}
		}
		yt, pkt, pvt, qkt, err := k.compute(in)
		if err != nil {
			return err
		}
		y.set(slots, yt)
		pk.set(slots, pkt)
		pv.set(slots, pvt)
		if qkt != nil {
			qk.set(slots, qkt)
		}
		return nil
	})
}
