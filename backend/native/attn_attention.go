package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Attention (versions 23, 24, 25), https://onnx.ai/onnx/operators/onnx__Attention.html,
// computes, per batch b, query head h and query position i,
//
//	s[j] = <Q[b,h,i,:]*sqrt(scale), K[b,g(h),j,:]*sqrt(scale)>   (j over past and new keys)
//	c[j] = softcap * tanh(s[j] / softcap)                          (when softcap != 0)
//	a[j] = c[j] + bias[b,h,i,j]
//	Y[b,h,i,:] = sum_j softmax(a)[j] V[b,g(h),j,:]
//
// with g(h) = h / (q_num_heads / kv_num_heads) (grouped-query attention)
// and scale = 1/sqrt(head_size) unless set. The bias is a sum of terms,
// each 0 or -inf unless a float mask says otherwise:
//   - attn_mask: a boolean keep-mask (false is -inf) or a numeric bias;
//     from version 24 a mask shorter than the keys is padded with -inf
//     (version 23 only broadcasts a last dimension of 1);
//   - is_causal: -inf where j > i + offset, the causal frontier aligned at
//     the bottom right: offset is the past length, or, from version 24,
//     nonpad_kv_seqlen[b] minus the query length when that input is given
//     without a past;
//   - left_window_size / right_window_size (version 25): -inf where
//     i + offset - j > left or j - (i + offset) > right (each when >= 0);
//   - nonpad_kv_seqlen (from version 24): -inf where j >= nonpad_kv_seqlen[b].
//
// The softcap is applied before the bias, so masked keys keep probability 0.
// A row whose bias is -inf for every key has no key to attend: its
// probabilities and its output row are 0 (the errata of all three
// versions), not the NaN of a softmax over -inf. Q, K and V are 4-D
// [batch, heads, seq, head_size], or 3-D [batch, seq, heads*head_size] with
// q_num_heads and kv_num_heads set; V (and past_value, present_value) may
// have another float type than Q. present_key and present_value are the
// past tensors with the new keys and values appended along the sequence.
// The optional qk_matmul_output is, by qk_matmul_output_mode: 0 s, 1 c,
// 2 a, 3 the softmax (fully masked rows 0), in Q's type.
type attentionKernel struct {
	version          int
	isCausal         bool
	qHeads, kvHeads  int // 0 when not set
	scale            float64
	hasScale         bool
	softcap          float64
	mode             int64 // -1: qk_matmul_output not requested
	left, right      int   // window bounds (version 25); -1 unbounded
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

// attentionBias is the additive bias of one run: the mask read as
// [B, Hq, S, maskLen] through broadcast strides, and the per-batch terms.
type attentionBias struct {
	mask       []float64 // numeric mask, or nil
	maskBool   []bool    // boolean mask, or nil
	str        []int
	maskLen    int // keys the mask covers; later keys are -inf (padding)
	causal     bool
	causalOff  []int   // per batch: the causal frontier's offset
	left       int     // -1: no bound
	right      int     // -1: no bound
	nonpad     []int64 // nil: no padding term
	hasMaskArg bool
}

// at is the bias of key j for query i of batch b, head h.
func (ab *attentionBias) at(b, h, i, j int) float64 {
	neg := math.Inf(-1)
	bias := 0.0
	if ab.hasMaskArg {
		switch {
		case j >= ab.maskLen:
			bias = neg
		case ab.maskBool != nil:
			if !ab.maskBool[b*ab.str[0]+h*ab.str[1]+i*ab.str[2]+j*ab.str[3]] {
				bias = neg
			}
		default:
			bias = ab.mask[b*ab.str[0]+h*ab.str[1]+i*ab.str[2]+j*ab.str[3]]
		}
	}
	// The terms add, as in the definition: a +inf mask value under a
	// masked position is NaN there too.
	p := i + ab.causalOff[b]
	if ab.causal && j > p {
		bias += neg
	}
	if (ab.left >= 0 && p-j > ab.left) || (ab.right >= 0 && j-p > ab.right) {
		bias += neg
	}
	if ab.nonpad != nil && int64(j) >= ab.nonpad[b] {
		bias += neg
	}
	return bias
}

func (k *attentionKernel) compute(in attentionInputs) (y, presentK, presentV, qkOut *onnx.Tensor, err error) {
	q, kk, v := in.q, in.k, in.v
	if len(q.Shape) != len(kk.Shape) || len(q.Shape) != len(v.Shape) {
		return nil, nil, nil, nil, fmt.Errorf("Q %v, K %v and V %v must have the same rank", q.Shape, kk.Shape, v.Shape)
	}
	if kk.Type != q.Type {
		return nil, nil, nil, nil, fmt.Errorf("Q and K have different types %v and %v", q.Type, kk.Type)
	}
	if k.version >= 25 && len(q.Shape) == 4 && (k.qHeads != 0 || k.kvHeads != 0) {
		return nil, nil, nil, nil, fmt.Errorf("q_num_heads and kv_num_heads must not be set for 4-D inputs (Q %v)", q.Shape)
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
		if in.pastK.Type != q.Type || in.pastV.Type != v.Type {
			return nil, nil, nil, nil, fmt.Errorf("past_key must have Q's type %v and past_value V's type %v (got %v, %v)", q.Type, v.Type, in.pastK.Type, in.pastV.Type)
		}
		past = pk[2]
	}
	S, L := ql.seq, past+kl.seq // query length, total key length
	if int64(B)*int64(Hq)*int64(S)*int64(max(L, Dv, 1)) > 1<<31 || int64(B)*int64(Hkv)*int64(L)*int64(max(D, Dv, 1)) > 1<<31 {
		return nil, nil, nil, nil, fmt.Errorf("Attention of Q %v and %d keys is too large", q.Shape, L)
	}
	bias := attentionBias{causal: k.isCausal, left: k.left, right: k.right, causalOff: make([]int, B)}
	for b := range B {
		bias.causalOff[b] = past
	}
	if in.nonpad != nil {
		nonpad, err := intsOf(in.nonpad)
		if err != nil || len(nonpad) != B || len(in.nonpad.Shape) != 1 {
			return nil, nil, nil, nil, fmt.Errorf("nonpad_kv_seqlen must hold %d integers, got %v %v", B, in.nonpad.Type, in.nonpad.Shape)
		}
		bias.nonpad = nonpad
		if in.pastK == nil {
			// An external cache: the queries are the last of nonpad[b] keys.
			for b, n := range nonpad {
				bias.causalOff[b] = int(min(max(n, -1<<40), 1<<40)) - S
			}
		}
	}
	if m := in.mask; m != nil {
		if err := k.readMask(&bias, m, B, Hq, S, L); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	qd, err := float64Data(q, &k.wq)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	kd, err := float64Data(kk, &k.wk)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	vd, err := float64Data(v, &k.wv)
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
	// Q and K are each scaled by sqrt(scale): a negative scale is NaN.
	sq := math.Sqrt(scale)
	rows := B * Hq * S
	k.y = withLen(k.y, rows*Dv)
	yd := k.y
	var qkd []float64
	if k.mode >= 0 {
		k.qk = withLen(k.qk, rows*L)
		qkd = k.qk
	}
	group := Hq / Hkv
	neg := math.Inf(-1)
	par.For(rows, k.threads, max(1, 8192/max(1, L*D)), func(lo, hi int) {
		a := make([]float64, L)
		for r := lo; r < hi; r++ {
			b, h, i := r/(Hq*S), (r/S)%Hq, r%S
			g := h / group
			qrow := qd[ql.at(b, h, i):][:D]
			var qkRow []float64
			if k.mode >= 0 {
				qkRow = qkd[r*L:][:L]
			}
			masked := true // every key's bias is -inf
			for j := range L {
				krow := pk[((b*Hkv+g)*L+j)*D:][:D]
				dot := 0.0
				for d, x := range qrow {
					dot += x * krow[d]
				}
				s := dot * sq * sq
				if k.mode == 0 {
					qkRow[j] = s
				}
				if k.softcap != 0 {
					s = k.softcap * math.Tanh(s/k.softcap)
				}
				if k.mode == 1 {
					qkRow[j] = s
				}
				bj := bias.at(b, h, i, j)
				if bj != neg {
					masked = false
				}
				a[j] = s + bj
				if k.mode == 2 {
					qkRow[j] = a[j]
				}
			}
			attentionSoftmax(a, masked)
			if k.mode == 3 {
				copy(qkRow, a)
			}
			out := yd[r*Dv:][:Dv]
			clear(out)
			for j, p := range a {
				vrow := pv[((b*Hkv+g)*L+j)*Dv:][:Dv]
				for d, x := range vrow {
					out[d] += p * x
				}
			}
		}
	})
	// Y in Q's layout: [B, Hq, S, Dv] or [B, S, Hq*Dv], of Q's type.
	var yShape []int
	if len(q.Shape) == 4 {
		yShape = []int{B, Hq, S, Dv}
	} else {
		yShape = []int{B, S, Hq * Dv}
	}
	y = k.outY.tensor(q.Type, yShape)
	if len(q.Shape) == 4 {
		storeFloat64s(y, yd)
	} else {
		tmp := make([]float64, len(yd))
		for b := range B {
			for h := range Hq {
				for i := range S {
					copy(tmp[((b*S+i)*Hq+h)*Dv:][:Dv], yd[((b*Hq+h)*S+i)*Dv:][:Dv])
				}
			}
		}
		storeFloat64s(y, tmp)
	}
	presentK = k.outK.tensor(q.Type, []int{B, Hkv, L, D})
	storeFloat64s(presentK, pk)
	presentV = k.outV.tensor(v.Type, []int{B, Hkv, L, Dv})
	storeFloat64s(presentV, pv)
	if k.mode >= 0 {
		qkOut = k.outQK.tensor(q.Type, []int{B, Hq, S, L})
		storeFloat64s(qkOut, qkd)
	}
	return y, presentK, presentV, qkOut, nil
}

// readMask checks attn_mask against [B, Hq, S, L] and points bias at its
// values.
func (k *attentionKernel) readMask(bias *attentionBias, m *onnx.Tensor, B, Hq, S, L int) error {
	bad := func() error {
		return fmt.Errorf("attn_mask has shape %v; it must broadcast to [%d, %d, %d, %d]", m.Shape, B, Hq, S, L)
	}
	if len(m.Shape) < 1 || len(m.Shape) > 4 {
		return bad()
	}
	maskLen := m.Shape[len(m.Shape)-1]
	switch {
	case maskLen == L:
	case maskLen == 1 && k.version < 24:
		maskLen = L // broadcast; version 24 pads instead
	case maskLen < L && k.version >= 24:
	case maskLen < L:
		return fmt.Errorf("attn_mask has %d keys, Attention-23 needs %d (or 1, broadcast); padding a shorter mask begins at version 24", maskLen, L)
	default:
		return bad()
	}
	full := []int{B, Hq, S, maskLen}
	for i, d := range m.Shape[:len(m.Shape)-1] {
		if want := full[4-len(m.Shape)+i]; d != 1 && d != want {
			return bad()
		}
	}
	bias.hasMaskArg = true
	bias.maskLen = maskLen
	bias.str = broadcastStrides(m.Shape, full)
	if bs, ok := m.Data.([]bool); ok {
		bias.maskBool = bs
		return nil
	}
	if d, ok := m.Data.([]float64); ok {
		bias.mask = d
		return nil
	}
	k.wm = withLen(k.wm, m.Len())
	if !float64sInto(k.wm, m.Data) {
		return fmt.Errorf("attn_mask of type %v: it must be bool or numeric", m.Type)
	}
	bias.mask = k.wm
	return nil
}

// attentionSoftmax turns the scores a into probabilities in place. A row
// with no key to attend (masked: every bias -inf), or whose scores are all
// -inf, is all zeros.
func attentionSoftmax(a []float64, masked bool) {
	m := math.Inf(-1)
	for _, x := range a {
		m = max(m, x)
	}
	if masked || math.IsInf(m, -1) {
		clear(a)
		return
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
}

// attentionConcat writes [B, H, past+new, size]: the past tensor (nil: no
// past) followed by the new operand read through its layout.
func attentionConcat(dst []float64, pastT *onnx.Tensor, wide *[]float64, cur []float64, l attentionLayout, B, H, past, size int) []float64 {
	L := past + l.seq
	dst = withLen(dst, B*H*L*size)
	var pd []float64
	if pastT != nil {
		pd, _ = float64Data(pastT, wide)
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

// softmaxPrecisionOK reports whether softmax_precision names a type the
// attention operators compute a softmax in: FLOAT, FLOAT16, DOUBLE or
// BFLOAT16. (Native computes in float64 whatever it names.)
func softmaxPrecisionOK(p *int64) bool {
	if p == nil {
		return true
	}
	switch onnx.DataType(*p) {
	case onnx.Float, onnx.Float16, onnx.Double, onnx.BFloat16:
		return true
	}
	return false
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
	version := op.SinceVersion()
	k := &attentionKernel{version: version, isCausal: op.IsCausal != 0, softcap: float64(op.Softcap), threads: b.e.threads, mode: -1, left: -1, right: -1}
	if version >= 25 {
		if op.LeftWindowSize < -1 || op.RightWindowSize < -1 {
			return fmt.Errorf("left_window_size %d and right_window_size %d must be -1 or nonnegative", op.LeftWindowSize, op.RightWindowSize)
		}
		k.left, k.right = int(min(op.LeftWindowSize, 1<<40)), int(min(op.RightWindowSize, 1<<40))
		if (op.Out.PresentKey == "") != (op.Out.PresentValue == "") {
			return fmt.Errorf("present_key and present_value must be requested together")
		}
		if op.In.NonpadKvSeqlen != "" && (op.In.PastKey != "" || op.In.PastValue != "" || op.Out.PresentKey != "") {
			return fmt.Errorf("nonpad_kv_seqlen cannot be combined with past or present key/value tensors")
		}
	}
	if op.QkMatmulOutputMode < 0 || op.QkMatmulOutputMode > 3 {
		return fmt.Errorf("qk_matmul_output_mode %d is not in [0, 3]", op.QkMatmulOutputMode)
	}
	if !softmaxPrecisionOK(op.SoftmaxPrecision) {
		return fmt.Errorf("softmax_precision %d is not FLOAT (1), FLOAT16 (10), DOUBLE (11) or BFLOAT16 (16)", *op.SoftmaxPrecision)
	}
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
