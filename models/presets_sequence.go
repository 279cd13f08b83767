package models

import (
	"math"

	"github.com/deep500/deep500-go/onnx"
)

// Sequence models: a small Transformer encoder and a recurrent net, each
// classifying a fixed-length sequence of feature vectors into 10 classes.

// The transformer preset's shape.
const (
	transformerSteps    = 32
	transformerModel    = 64
	transformerHeads    = 4
	transformerFF       = 256
	transformerLayers   = 2
	transformerClasses  = 10
	recurrentSteps      = 32
	recurrentFeatures   = 32
	recurrentHidden     = 64
	recurrentClassCount = 10
)

// selfAttention is nn.MultiheadAttention's self-attention on x [N, T, D]
// with heads heads, as an export writes it: query, key and value
// projections (Linear), each split into heads by Reshape [N, T, heads,
// D/heads] and Transpose, scores Q·Kᵀ scaled by 1/√(D/heads), Softmax over
// the keys, the weighted sum of the values, the heads joined back by
// Transpose and Reshape, and the output projection (Linear). PyTorch
// keeps the three input projections in one in_proj_weight [3D, D]; three
// [D, D] weights are the same parameters.
func (b *Builder) selfAttention(x Value, heads int) Value {
	x, ok := b.resolve("SelfAttention", x)
	if !ok {
		return Value{}
	}
	t, d := x.shape[1], x.shape[2]
	hd := d / int64(heads)
	split := func(v Value, perm ...int64) Value {
		return b.Transpose(b.Reshape(v, 0, t, int64(heads), hd), perm...)
	}
	q := split(b.Linear(x, int(d)), 0, 2, 1, 3) // [N, heads, T, hd]
	k := split(b.Linear(x, int(d)), 0, 2, 3, 1) // [N, heads, hd, T]
	v := split(b.Linear(x, int(d)), 0, 2, 1, 3) // [N, heads, T, hd]
	scores := b.Scale(b.MatMul(q, k), float32(1/math.Sqrt(float64(hd))))
	att := b.MatMul(b.Softmax(scores), v)                  // [N, heads, T, hd]
	att = b.Reshape(b.Transpose(att, 0, 2, 1, 3), 0, t, d) // [N, T, D]
	return b.Linear(att, int(d))
}

// encoderLayer is nn.TransformerEncoderLayer with norm_first False (post-
// norm, PyTorch's default) and activation Relu: x + SelfAttention(x),
// LayerNorm, then h + Linear(Relu(Linear(h, ff))), LayerNorm.
func (b *Builder) encoderLayer(x Value, heads, ff int) Value {
	d := int(x.Shape()[len(x.Shape())-1])
	h := b.LayerNorm(b.Add(x, b.selfAttention(x, heads)))
	f := b.Linear(b.Relu(b.Linear(h, ff)), d)
	return b.LayerNorm(b.Add(h, f))
}

func buildTransformer(b *Builder) {
	x := b.Input("x", onnx.Float, -1, transformerSteps, transformerModel)
	h := x
	for range transformerLayers {
		h = b.encoderLayer(h, transformerHeads, transformerFF)
	}
	h = b.ReduceMean(h, 1) // [N, D]: the mean over the sequence
	b.Output(b.Dense(h, transformerClasses), "y")
}

func buildRecurrent(b *Builder) {
	x := b.Input("x", onnx.Float, -1, recurrentSteps, recurrentFeatures)
	h := b.Transpose(x, 1, 0, 2)                                                    // [T, N, C]: ONNX's layout 0
	h = b.Squeeze(b.LSTM(h, recurrentHidden, false), 1)                             // [T, N, H]
	h = b.GRU(h, recurrentHidden, true)                                             // [T, 2, N, H]
	h = b.Reshape(b.Transpose(h, 2, 0, 1, 3), 0, recurrentSteps, 2*recurrentHidden) // [N, T, 2H]
	h = b.Gather(h, 1, recurrentSteps-1)                                            // [N, 2H]: the last step
	b.Output(b.Dense(h, recurrentClassCount), "y")
}
