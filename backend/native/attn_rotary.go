package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// rotaryKernel computes RotaryEmbedding (version 23). X is [batch, heads,
// seq, head_size] or [batch, seq, heads*head_size] (num_heads set). For
// each head vector, its first rotary_embedding_dim elements (0: all) are
// rotated in pairs by the angle whose cosine and sine are cos[b, s, p] and
// sin[b, s, p]: the caches are [batch, seq, rd/2], or [max_position, rd/2]
// indexed by position_ids[b, s]. Pairs are (x[p], x[p + rd/2]), or
// (x[2p], x[2p+1]) when interleaved:
//
//	x1' = x1 cos - x2 sin;  x2' = x2 cos + x1 sin
//
// and the remaining elements are copied.
type rotaryKernel struct {
	interleaved bool
	numHeads    int
	rotaryDim   int
	wx, wc, ws  []float64
	res         []float64
	out         outputBuffer
}

func (k *rotaryKernel) compute(x, cosT, sinT, pos *onnx.Tensor) (*onnx.Tensor, error) {
	var B, H, S, D, sB, sH, sS int
	switch len(x.Shape) {
	case 4:
		B, H, S, D = x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
		sS, sH, sB = D, S*D, H*S*D
	case 3:
		if k.numHeads <= 0 {
			return nil, fmt.Errorf("X is 3-D (shape %v): num_heads must be set", x.Shape)
		}
		if x.Shape[2]%k.numHeads != 0 {
			return nil, fmt.Errorf("X hidden size %d is not a multiple of num_heads %d", x.Shape[2], k.numHeads)
		}
		B, H, S, D = x.Shape[0], k.numHeads, x.Shape[1], x.Shape[2]/k.numHeads
		sS, sH, sB = H*D, D, S*H*D
	default:
		return nil, fmt.Errorf("X has shape %v; RotaryEmbedding takes 3-D or 4-D input", x.Shape)
	}
	rd := k.rotaryDim
	if rd == 0 {
		rd = D
	}
	if rd > D || rd%2 != 0 {
		return nil, fmt.Errorf("rotary_embedding_dim %d must be even and at most the head size %d", rd, D)
	}
	half := rd / 2
	if cosT.Type != x.Type || sinT.Type != x.Type {
		return nil, fmt.Errorf("cos_cache and sin_cache must have X's type %v", x.Type)
	}
	if !slices.Equal(cosT.Shape, sinT.Shape) {
		return nil, fmt.Errorf("cos_cache %v and sin_cache %v differ in shape", cosT.Shape, sinT.Shape)
	}
	var positions []int64
	if pos != nil {
		var err error
		if positions, err = intsOf(pos); err != nil {
			return nil, fmt.Errorf("position_ids: %w", err)
		}
		if !slices.Equal(pos.Shape, []int{B, S}) && !(len(pos.Shape) == 1 && pos.Shape[0] == S) && !(len(pos.Shape) == 2 && pos.Shape[0] == 1 && pos.Shape[1] == S) {
			return nil, fmt.Errorf("position_ids has shape %v, want [%d, %d]", pos.Shape, B, S)
		}
		if len(cosT.Shape) != 2 || cosT.Shape[1] != half {
			return nil, fmt.Errorf("with position_ids the caches must be [max_position, %d], got %v", half, cosT.Shape)
		}
		for _, p := range positions {
			if p < 0 || p >= int64(cosT.Shape[0]) {
				return nil, fmt.Errorf("position id %d is outside the cache of %d positions", p, cosT.Shape[0])
			}
		}
	} else if !slices.Equal(cosT.Shape, []int{B, S, half}) {
		return nil, fmt.Errorf("without position_ids the caches must be [%d, %d, %d], got %v", B, S, half, cosT.Shape)
	}
	xd, err := float64Data(x, &k.wx)
	if err != nil {
		return nil, err
	}
	cd, err := float64Data(cosT, &k.wc)
	if err != nil {
		return nil, err
	}
	sd, err := float64Data(sinT, &k.ws)
	if err != nil {
		return nil, err
	}
	if cap(k.res) < len(xd) {
		k.res = make([]float64, len(xd))
	}
	res := k.res[:len(xd)]
	copy(res, xd)
	for b := range B {
		for s := range S {
			row := b*S + s
			if positions != nil {
				if len(positions) == S {
					row = int(positions[s])
				} else {
					row = int(positions[b*S+s])
				}
			}
			c, sn := cd[row*half:][:half], sd[row*half:][:half]
			for h := range H {
				in := xd[b*sB+h*sH+s*sS:][:D]
				out := res[b*sB+h*sH+s*sS:][:D]
				for p := range half {
					i1, i2 := p, p+half
					if k.interleaved {
						i1, i2 = 2*p, 2*p+1
					}
					x1, x2 := in[i1], in[i2]
					out[i1] = x1*c[p] - x2*sn[p]
					out[i2] = x2*c[p] + x1*sn[p]
				}
			}
		}
	}
	o := k.out.tensor(x.Type, x.Shape)
	storeFloat64s(o, res)
	return o, nil
}

// VisitRotaryEmbedding compiles RotaryEmbedding.
func (b *builder) VisitRotaryEmbedding(op *ops.RotaryEmbedding) error {
	ins, err := b.inputs([]string{op.In.X, op.In.CosCache, op.In.SinCache})
	if err != nil {
		return err
	}
	posIn, err := b.optionalInput(op.In.PositionIds)
	if err != nil {
		return err
	}
	k := &rotaryKernel{interleaved: op.Interleaved != 0, rotaryDim: int(op.RotaryEmbeddingDim)}
	if op.RotaryEmbeddingDim < 0 || op.RotaryEmbeddingDim > 1<<20 {
		return fmt.Errorf("rotary_embedding_dim %d is negative or too large", op.RotaryEmbeddingDim)
	}
	if op.NumHeads != nil {
		if *op.NumHeads <= 0 || *op.NumHeads > 1<<20 {
			return fmt.Errorf("num_heads %d must be positive", *op.NumHeads)
		}
		k.numHeads = int(*op.NumHeads)
	}
	y := b.output(op.Out.Y)
	return b.emit(func(slots []onnx.Value) error {
		var t [3]*onnx.Tensor
		var err error
		for i := range t {
			if t[i], err = ins[i].tensor(slots); err != nil {
				return err
			}
		}
		pos, err := posIn.optionalTensor(slots)
		if err != nil {
			return err
		}
		out, err := k.compute(t[0], t[1], t[2], pos)
		if err != nil {
			return err
		}
		y.set(slots, out)
		return nil
	})
}
