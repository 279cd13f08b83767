package models

import "github.com/deep500/deep500-go/onnx"

// The small ImageNet classifiers of torchvision that users export for
// mobile and edge inference: MobileNetV3-small, ShuffleNetV2 ×0.5,
// SqueezeNet 1.1 and MNASNet 0.5, each layer for layer as torchvision
// defines it (channels, kernels, strides, paddings, biases, BatchNorm
// epsilon and momentum), dropout left out as at inference.

// makeDivisible rounds v to the nearest multiple of 8 (at least 8), one
// multiple up when rounding lost more than 10% — torchvision's
// _make_divisible with divisor 8, used by MobileNetV3 for its
// squeeze-and-excitation widths.
func makeDivisible(v int) int {
	r := max(8, (v+4)/8*8)
	if 10*r < 9*v {
		r += 8
	}
	return r
}

// mobileNetV3Block is one inverted-residual row of torchvision's
// mobilenet_v3_small table.
type mobileNetV3Block struct {
	in, kernel, expanded, out int
	squeeze, hardSwish        bool
	stride                    int
}

// BatchNorm of MobileNetV3 in torchvision: eps 0.001, PyTorch momentum
// 0.01 (ONNX 0.99).
const (
	mobileNetV3Epsilon  = 1e-3
	mobileNetV3Momentum = 0.99
)

// convBNAct is MobileNetV3's ConvBNActivation: a bias-free Conv padded to
// keep the size ((kernel-1)/2), BatchNorm, then HardSwish, Relu or
// nothing.
func (b *Builder) convBNAct(x Value, out, kernel, stride, group int, act func(Value) Value) Value {
	h := b.ConvWith(x, ConvSpec{Out: out, Kernel: kernel, Stride: stride, Pad: (kernel - 1) / 2, Group: group, NoBias: true})
	h = b.BatchNormWith(h, mobileNetV3Epsilon, mobileNetV3Momentum)
	if act != nil {
		h = act(h)
	}
	return h
}

// squeezeExcitation is torchvision's SqueezeExcitation with a hard
// sigmoid: global average pool, 1×1 Conv to makeDivisible(C/4) channels
// with bias, Relu, 1×1 Conv back to C with bias, HardSigmoid, and the
// input scaled by the result (Mul).
func (b *Builder) squeezeExcitation(x Value) Value {
	x, ok := b.resolve("SqueezeExcitation", x)
	if !ok {
		return Value{}
	}
	c := int(x.shape[1])
	s := b.GlobalAveragePool(x)
	s = b.Relu(b.ConvWith(s, ConvSpec{Out: makeDivisible(c / 4), Kernel: 1}))
	s = b.HardSigmoid(b.ConvWith(s, ConvSpec{Out: c, Kernel: 1}))
	return b.Mul(s, x)
}

func buildMobileNetV3Small(b *Builder) {
	x := b.Input("x", onnx.Float, -1, 3, 224, 224)
	h := b.convBNAct(x, 16, 3, 2, 1, b.HardSwish)
	for _, blk := range []mobileNetV3Block{
		{16, 3, 16, 16, true, false, 2},
		{16, 3, 72, 24, false, false, 2},
		{24, 3, 88, 24, false, false, 1},
		{24, 5, 96, 40, true, true, 2},
		{40, 5, 240, 40, true, true, 1},
		{40, 5, 240, 40, true, true, 1},
		{40, 5, 120, 48, true, true, 1},
		{48, 5, 144, 48, true, true, 1},
		{48, 5, 288, 96, true, true, 2},
		{96, 5, 576, 96, true, true, 1},
		{96, 5, 576, 96, true, true, 1},
	} {
		act := b.Relu
		if blk.hardSwish {
			act = b.HardSwish
		}
		y := h
		if blk.expanded != blk.in {
			y = b.convBNAct(y, blk.expanded, 1, 1, 1, act)
		}
		y = b.convBNAct(y, blk.expanded, blk.kernel, blk.stride, blk.expanded, act)
		if blk.squeeze {
			y = b.squeezeExcitation(y)
		}
		y = b.convBNAct(y, blk.out, 1, 1, 1, nil)
		if blk.stride == 1 && blk.in == blk.out {
			y = b.Add(y, h)
		}
		h = y
	}
	h = b.convBNAct(h, 6*96, 1, 1, 1, b.HardSwish)
	h = b.Flatten(b.GlobalAveragePool(h))
	h = b.HardSwish(b.Dense(h, 1024))
	b.Output(b.Dense(h, 1000), "y")
}

// shuffleBlock is ShuffleNetV2's InvertedResidual producing out channels:
// with stride 1 the input's first half passes through and the second goes
// through branch 2; with stride 2 both branches see the whole input and
// halve the size. The halves are joined (Concat) and shuffled.
func (b *Builder) shuffleBlock(x Value, out, stride int) Value {
	half := out / 2
	branch2 := func(v Value) Value {
		v = b.Relu(b.convBN(v, half, 1, 1, 0, 1))
		v = b.convBN(v, half, 3, stride, 1, half)
		return b.Relu(b.convBN(v, half, 1, 1, 0, 1))
	}
	var left, right Value
	if stride == 1 {
		parts := b.Split(x, 1, 2)
		left, right = parts[0], branch2(parts[1])
	} else {
		x, ok := b.resolve("ShuffleBlock", x)
		if !ok {
			return Value{}
		}
		in := int(x.shape[1])
		left = b.convBN(x, in, 3, stride, 1, in)
		left = b.Relu(b.convBN(left, half, 1, 1, 0, 1))
		right = branch2(x)
	}
	return b.ChannelShuffle(b.Concat(1, left, right), 2)
}

func buildShuffleNetV2x05(b *Builder) {
	x := b.Input("x", onnx.Float, -1, 3, 224, 224)
	h := b.Relu(b.convBN(x, 24, 3, 2, 1, 1))
	h = b.MaxPool(h, 3, 2, 1)
	for stage, out := range []int{48, 96, 192} {
		repeats := []int{4, 8, 4}[stage]
		h = b.shuffleBlock(h, out, 2)
		for range repeats - 1 {
			h = b.shuffleBlock(h, out, 1)
		}
	}
	h = b.Relu(b.convBN(h, 1024, 1, 1, 0, 1))
	h = b.Flatten(b.GlobalAveragePool(h))
	b.Output(b.Dense(h, 1000), "y")
}

// fire is SqueezeNet's Fire module: a 1×1 squeeze Conv with Relu, then
// 1×1 and 3×3 (pad 1) expand Convs with Relu, concatenated. Every Conv
// has a bias.
func (b *Builder) fire(x Value, squeeze, expand1, expand3 int) Value {
	s := b.Relu(b.Conv(x, squeeze, 1, 1, 0))
	return b.Concat(1, b.Relu(b.Conv(s, expand1, 1, 1, 0)), b.Relu(b.Conv(s, expand3, 3, 1, 1)))
}

func buildSqueezeNet11(b *Builder) {
	x := b.Input("x", onnx.Float, -1, 3, 224, 224)
	h := b.Relu(b.Conv(x, 64, 3, 2, 0))
	h = b.MaxPoolCeil(h, 3, 2, 0)
	h = b.fire(h, 16, 64, 64)
	h = b.fire(h, 16, 64, 64)
	h = b.MaxPoolCeil(h, 3, 2, 0)
	h = b.fire(h, 32, 128, 128)
	h = b.fire(h, 32, 128, 128)
	h = b.MaxPoolCeil(h, 3, 2, 0)
	h = b.fire(h, 48, 192, 192)
	h = b.fire(h, 48, 192, 192)
	h = b.fire(h, 64, 256, 256)
	h = b.fire(h, 64, 256, 256)
	h = b.Relu(b.Conv(h, 1000, 1, 1, 0))
	b.Output(b.Flatten(b.GlobalAveragePool(h)), "y")
}

// MNASNet's BatchNorm in torchvision: eps 1e-5, PyTorch momentum
// 1-0.9997 (TensorFlow's 0.9997, which is ONNX's convention too).
const mnasNetMomentum = 0.9997

func (b *Builder) mnasConvBN(x Value, out, kernel, stride, group int) Value {
	h := b.ConvWith(x, ConvSpec{Out: out, Kernel: kernel, Stride: stride, Pad: kernel / 2, Group: group, NoBias: true})
	return b.BatchNormWith(h, 1e-5, mnasNetMomentum)
}

func buildMNASNet05(b *Builder) {
	// torchvision's _get_depths(0.5): [32, 16, 24, 40, 80, 96, 192, 320]
	// halved and rounded to multiples of 8 (MNASNet version 2, which
	// scales the stem too).
	x := b.Input("x", onnx.Float, -1, 3, 224, 224)
	h := b.Relu(b.mnasConvBN(x, 16, 3, 2, 1))
	h = b.Relu(b.mnasConvBN(h, 16, 3, 1, 16))
	h = b.mnasConvBN(h, 8, 1, 1, 1)
	in := 8
	// Output channels, kernel, first stride, expansion, repeats.
	for _, st := range [][5]int{{16, 3, 2, 3, 3}, {24, 5, 2, 3, 3}, {40, 5, 2, 6, 3}, {48, 3, 1, 6, 2}, {96, 5, 2, 6, 4}, {160, 3, 1, 6, 1}} {
		out, k, s, t, n := st[0], st[1], st[2], st[3], st[4]
		for i := range n {
			stride := 1
			if i == 0 {
				stride = s
			}
			mid := in * t
			y := b.Relu(b.mnasConvBN(h, mid, 1, 1, 1))
			y = b.Relu(b.mnasConvBN(y, mid, k, stride, mid))
			y = b.mnasConvBN(y, out, 1, 1, 1)
			if stride == 1 && in == out {
				y = b.Add(y, h)
			}
			h, in = y, out
		}
	}
	h = b.Relu(b.mnasConvBN(h, 1280, 1, 1, 1))
	h = b.Flatten(b.GlobalAveragePool(h))
	b.Output(b.Dense(h, 1000), "y")
}
