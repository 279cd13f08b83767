package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// FlexAttention (ai.onnx.preview, version 1),
// https://onnx.ai/onnx/operators/onnx_aionnxpreview_FlexAttention.html,
// is attention over 4-D Q [B, Hq, L, E], K [B, Hkv, S, E] and
// V [B, Hkv, S, Ev] with two optional subgraphs:
//
//	scores = (Q*sqrt(scale)) (K*sqrt(scale))^T   (query head h reads K/V head h / (Hq/Hkv))
//	scores = score_mod(scores)                   [B, Hq, L, S]
//	probs  = softmax(scores) over the keys
//	probs  = prob_mod(probs)                     [B, Hq, L, S]
//	Y      = probs V                             [B, Hq, L, Ev], Q's type
//
// Each subgraph gets and returns one tensor of the softmax precision: the
// softmax_precision attribute, else double for double inputs and float
// otherwise. Unlike Attention there is no fully-masked-row rule: a row that
// score_mod sets to -inf everywhere is a plain softmax's NaN.
type flexKernel struct {
	scale              float64
	hasScale           bool
	precision          onnx.DataType // the subgraphs' element type
	scoreMod, probMod  *subgraph
	threads            int
	wq, wk, wv, sc, yd []float64
	modIn              outputBuffer // the tensor handed to a subgraph
	outY               outputBuffer
}

// VisitFlexAttention compiles FlexAttention, its subgraphs included.
func (b *builder) VisitFlexAttention(op *ops.FlexAttention) error {
	refs, err := b.inputRefs(3, op.In.Q, op.In.K, op.In.V)
	if err != nil {
		return err
	}
	if !softmaxPrecisionOK(op.SoftmaxPrecision) {
		return fmt.Errorf("softmax_precision %d is not FLOAT (1), FLOAT16 (10), DOUBLE (11) or BFLOAT16 (16)", *op.SoftmaxPrecision)
	}
	k := &flexKernel{threads: b.e.threads}
	if op.Scale != nil {
		k.scale, k.hasScale = float64(*op.Scale), true
	}
	if op.SoftmaxPrecision != nil {
		k.precision = onnx.DataType(*op.SoftmaxPrecision)
	}
	if !b.probing { // a stand-in node has no subgraphs
		for _, m := range []struct {
			g    *onnx.Graph
			name string
			dst  **subgraph
		}{{op.ScoreMod, "score_mod", &k.scoreMod}, {op.ProbMod, "prob_mod", &k.probMod}} {
			if m.g == nil {
				continue
			}
			s, err := b.compileSubgraph(m.g, m.name)
			if err != nil {
				return err
			}
			if len(s.inputs) != 1 || len(s.outputs) != 1 {
				return fmt.Errorf("%s must take one input and give one output, it has %d and %d", m.name, len(s.inputs), len(s.outputs))
			}
			*m.dst = s
		}
	}
	y := b.output(op.Out.Y)
	ts := make([]*onnx.Tensor, 3)
	return b.emit(func(slots []onnx.Value) error {
		if err := readTensors(ts, refs, slots); err != nil {
			return err
		}
		out, err := k.compute(slots, ts[0], ts[1], ts[2])
		if err != nil {
			return err
		}
		y.set(slots, out)
		return nil
	})
}

func (k *flexKernel) compute(slots []onnx.Value, q, kk, v *onnx.Tensor) (*onnx.Tensor, error) {
	if len(q.Shape) != 4 || len(kk.Shape) != 4 || len(v.Shape) != 4 {
		return nil, fmt.Errorf("FlexAttention takes 4-D Q, K and V, got %v, %v, %v", q.Shape, kk.Shape, v.Shape)
	}
	if kk.Type != q.Type || v.Type != q.Type {
		return nil, fmt.Errorf("Q, K and V must have one type, got %v, %v, %v", q.Type, kk.Type, v.Type)
	}
	B, Hq, L, E := q.Shape[0], q.Shape[1], q.Shape[2], q.Shape[3]
	Hkv, S, Ev := kk.Shape[1], kk.Shape[2], v.Shape[3]
	switch {
	case kk.Shape[0] != B || v.Shape[0] != B:
		return nil, fmt.Errorf("Q %v, K %v and V %v have different batch sizes", q.Shape, kk.Shape, v.Shape)
	case v.Shape[1] != Hkv || v.Shape[2] != S:
		return nil, fmt.Errorf("K %v and V %v must share heads and sequence length", kk.Shape, v.Shape)
	case kk.Shape[3] != E:
		return nil, fmt.Errorf("Q %v and K %v must share the head size", q.Shape, kk.Shape)
	case Hkv == 0 || Hq%Hkv != 0:
		return nil, fmt.Errorf("%d query heads are not a multiple of %d key/value heads", Hq, Hkv)
	}
	if int64(B)*int64(Hq)*int64(L)*int64(max(S, Ev, 1)) > 1<<31 || int64(B)*int64(Hkv)*int64(S)*int64(max(E, Ev, 1)) > 1<<31 {
		return nil, fmt.Errorf("FlexAttention of Q %v and K %v is too large", q.Shape, kk.Shape)
	}
	qd, err := float64Data(q, &k.wq)
	if err != nil {
		return nil, err
	}
	kd, err := float64Data(kk, &k.wk)
	if err != nil {
		return nil, err
	}
	vd, err := float64Data(v, &k.wv)
	if err != nil {
		return nil, err
	}
	precision := k.precision
	if precision == 0 {
		precision = onnx.Float
		if q.Type == onnx.Double {
			precision = onnx.Double
		}
	}
	scale := 1 / math.Sqrt(float64(E))
	if k.hasScale {
		scale = k.scale
	}
	sq := math.Sqrt(scale) // Q and K are each scaled by sqrt(scale)
	group := Hq / Hkv
	rows := B * Hq * L
	k.sc = withLen(k.sc, rows*S)
	sc := k.sc
	par.For(rows, k.threads, max(1, 8192/max(1, S*E)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, h, i := r/(Hq*L), (r/L)%Hq, r%L
			g := h / group
			qrow := qd[((b*Hq+h)*L+i)*E:][:E]
			out := sc[r*S:][:S]
			for j := range S {
				krow := kd[((b*Hkv+g)*S+j)*E:][:E]
				dot := 0.0
				for d, x := range qrow {
					dot += x * krow[d]
				}
				out[j] = dot * sq * sq
			}
		}
	})
	modShape := []int{B, Hq, L, S}
	if k.scoreMod != nil {
		if err := k.modify(slots, k.scoreMod, precision, modShape, sc); err != nil {
			return nil, err
		}
	} else {
		roundTo(precision, sc)
	}
	par.For(rows, k.threads, max(1, 8192/max(1, S)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := sc[r*S:][:S]
			m := math.Inf(-1)
			for _, x := range row {
				m = max(m, x)
			}
			sum := 0.0
			for j, x := range row {
				e := math.Exp(x - m)
				row[j] = e
				sum += e
			}
			for j := range row {
				row[j] /= sum
			}
		}
	})
	if k.probMod != nil {
		if err := k.modify(slots, k.probMod, precision, modShape, sc); err != nil {
			return nil, err
		}
	} else {
		roundTo(precision, sc)
	}
	y := k.outY.tensor(q.Type, []int{B, Hq, L, Ev})
	k.yd = withLen(k.yd, rows*Ev)
	yd := k.yd
	clear(yd)
	par.For(rows, k.threads, max(1, 8192/max(1, S*Ev)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, h := r/(Hq*L), (r/L)%Hq
			g := h / group
			out := yd[r*Ev:][:Ev]
			for j, p := range sc[r*S:][:S] {
				vrow := vd[((b*Hkv+g)*S+j)*Ev:][:Ev]
				for d, x := range vrow {
					out[d] += p * x
				}
			}
		}
	})
	storeFloat64s(y, yd)
	return y, nil
}

// modify runs a modifier subgraph on x (shape, in the softmax precision)
// and writes its result back into x.
func (k *flexKernel) modify(slots []onnx.Value, g *subgraph, precision onnx.DataType, shape []int, x []float64) error {
	in := k.modIn.tensor(precision, shape)
	storeFloat64s(in, x)
	res, err := g.run(slots, []onnx.Value{in})
	if err != nil {
		return err
	}
	out, ok := res[0].(*onnx.Tensor)
	if !ok || out == nil {
		return fmt.Errorf("%s returned %s, not a tensor", g.what, onnx.DescribeValue(res[0]))
	}
	if !slices.Equal(out.Shape, shape) {
		return fmt.Errorf("%s returned shape %v; it must keep its input's shape %v", g.what, out.Shape, shape)
	}
	if !float64sInto(x, out.Data) {
		return fmt.Errorf("%s returned a tensor of %v; it must be %v", g.what, out.Type, precision)
	}
	// The subgraph's result is read as the softmax precision.
	roundTo(precision, x)
	return nil
}

// roundTo rounds x to the values of type t (float32, float16, bfloat16;
// double is x itself): the softmax precision's intermediate values.
func roundTo(t onnx.DataType, x []float64) {
	switch t {
	case onnx.Float:
		for i, v := range x {
			x[i] = float64(float32(v))
		}
	case onnx.Float16:
		for i, v := range x {
			x[i] = float64(onnx.F16From(float32(v)).Float32())
		}
	case onnx.BFloat16:
		for i, v := range x {
			x[i] = float64(onnx.BF16From(float32(v)).Float32())
		}
	}
}
