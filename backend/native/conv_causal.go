package native

import (
	"fmt"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// CausalConvWithState (opset 27), the stateful causal convolution of
// state-space models, https://onnx.ai/onnx/operators/onnx__CausalConvWithState.html.
// It is computed in float32 (float16 and bfloat16 widened, rounded once at
// the end), like ONNX's definition.

// causalConvKernel computes CausalConvWithState: a depthwise 1-D
// convolution of each channel of input [B, C, L] with its kernel
// weight[c, 0, :] (size K) over the sequence past_state[b, c, :] (K-1
// values, zeros when omitted) followed by the input, with valid padding, so
// output[b, c, t] = bias[c] + sum_j weight[c, 0, j] * seq[t + j], then SiLU
// when asked. present_state is the last K-1 values of that sequence.
type causalConvKernel struct {
	silu    bool
	threads int

	out, state     outputBuffer
	wx, ww, wb, wp float32Scratch
	y, st32        float32Scratch
}

func (k *causalConvKernel) compute(x, w, bias, past *onnx.Tensor) (*onnx.Tensor, *onnx.Tensor, error) {
	for _, t := range []*onnx.Tensor{w, bias, past} {
		if t != nil && t.Type != x.Type {
			return nil, nil, fmt.Errorf("inputs have different types: input is %v, another is %v", x.Type, t.Type)
		}
	}
	if len(x.Shape) != 3 {
		return nil, nil, fmt.Errorf("input has shape %v; want (batch_size, channels, length)", x.Shape)
	}
	nb, nc, nl := x.Shape[0], x.Shape[1], x.Shape[2]
	if len(w.Shape) != 3 || w.Shape[0] != nc || w.Shape[1] != 1 || w.Shape[2] < 1 {
		return nil, nil, fmt.Errorf("weight has shape %v; want (%d, 1, k) with k >= 1", w.Shape, nc)
	}
	kk := w.Shape[2]
	if bias != nil && (len(bias.Shape) != 1 || bias.Shape[0] != nc) {
		return nil, nil, fmt.Errorf("bias has shape %v; want (%d)", bias.Shape, nc)
	}
	if past != nil && (len(past.Shape) != 3 || past.Shape[0] != nb || past.Shape[1] != nc || past.Shape[2] != kk-1) {
		return nil, nil, fmt.Errorf("past_state has shape %v; want (%d, %d, %d)", past.Shape, nb, nc, kk-1)
	}
	if n, err := onnx.ShapeElements([]int{nb, nc, kk - 1}); err != nil || n > convMaxElements {
		return nil, nil, fmt.Errorf("present_state of shape (%d, %d, %d) is too large", nb, nc, kk-1)
	}
	xs, err := float32Data(x, &k.wx)
	if err != nil {
		return nil, nil, fmt.Errorf("CausalConvWithState: %w", err)
	}
	ws, _ := float32Data(w, &k.ww)
	bs, _ := float32Data(bias, &k.wb)
	ps, _ := float32Data(past, &k.wp)
	y := k.y.get(x.Len())
	st := k.st32.get(nb * nc * (kk - 1))
	h := kk - 1
	par.For(nb*nc, k.threads, max(1, par.Grain/max(1, nl*kk)), func(lo, hi int) {
		seq := make([]float32, h+nl)
		for r := lo; r < hi; r++ {
			c := r % nc
			if ps != nil {
				copy(seq[:h], ps[r*h:(r+1)*h])
			} else {
				clear(seq[:h])
			}
			copy(seq[h:], xs[r*nl:(r+1)*nl])
			wr := ws[c*kk : (c+1)*kk]
			var b0 float32
			if bs != nil {
				b0 = bs[c]
			}
			yr := y[r*nl : (r+1)*nl]
			for t := range yr {
				acc := b0
				for j, wv := range wr {
					acc += wv * seq[t+j]
				}
				if k.silu {
					acc = float32(float64(acc) * sigmoid(float64(acc)))
				}
				yr[t] = acc
			}
			copy(st[r*h:(r+1)*h], seq[nl:])
		}
	})
	out := k.out.tensor(x.Type, x.Shape)
	if err := storeFloat32s(out, y); err != nil {
		return nil, nil, err
	}
	state := k.state.tensor(x.Type, []int{nb, nc, h})
	if err := storeFloat32s(state, st); err != nil {
		return nil, nil, err
	}
	return out, state, nil
}

// VisitCausalConvWithState compiles CausalConvWithState (version 27).
func (b *builder) VisitCausalConvWithState(op *ops.CausalConvWithState) error {
	x, err := b.input(op.In.Input)
	if err != nil {
		return err
	}
	w, err := b.input(op.In.Weight)
	if err != nil {
		return err
	}
	bias, err := b.optionalInput(op.In.Bias)
	if err != nil {
		return err
	}
	past, err := b.optionalInput(op.In.PastState)
	if err != nil {
		return err
	}
	k := &causalConvKernel{threads: b.e.threads}
	switch op.Activation {
	case "none":
	case "silu", "swish":
		k.silu = true
	default:
		return fmt.Errorf("activation %q is not one of none, silu, swish", op.Activation)
	}
	y := b.output(op.Out.Output)
	present := b.output(op.Out.PresentState)
	return b.emit(func(slots []onnx.Value) error {
		var ts [4]*onnx.Tensor
		for i, r := range []valueRef{x, w, bias, past} {
			t, err := r.optionalTensor(slots)
			if err != nil {
				return err
			}
			ts[i] = t
		}
		o, s, err := k.compute(ts[0], ts[1], ts[2], ts[3])
		if err != nil {
			return err
		}
		y.set(slots, o)
		present.set(slots, s)
		return nil
	})
}
