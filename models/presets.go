package models

import (
	"fmt"
	"sort"
	"strings"

	"github.com/deep500/deep500-go/onnx"
)

// presets maps a preset's name to its builder body.
var presets = map[string]func(b *Builder){
	"mlp":         buildMLP,
	"lenet":       buildLeNet,
	"resnet8":     func(b *Builder) { buildCIFARResNet(b, 1) },
	"resnet20":    func(b *Builder) { buildCIFARResNet(b, 3) },
	"resnet18":    buildResNet18,
	"mobilenetv2": buildMobileNetV2,

	"mobilenet_v3_small": buildMobileNetV3Small,
	"shufflenet_v2_x0_5": buildShuffleNetV2x05,
	"squeezenet1_1":      buildSqueezeNet11,
	"mnasnet0_5":         buildMNASNet05,
	"transformer":        buildTransformer,
	"lstm_gru":           buildRecurrent,
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Preset builds the named model with parameters drawn from seed. Every
// preset has one float input "x" with a symbolic batch dimension and one
// output "y" of class scores (logits, no softmax):
//   - mlp: x [N, 1, 28, 28], flattened, Dense 512, Relu, Dense 10;
//   - lenet: LeNet-5 for x [N, 1, 28, 28]: Conv 6@5×5 pad 2, Relu,
//     MaxPool 2, Conv 16@5×5, Relu, MaxPool 2, Dense 120, Relu, Dense 84,
//     Relu, Dense 10 (61,706 parameters);
//   - resnet8, resnet20: He et al.'s CIFAR ResNets (6n+2 layers, n = 1, 3)
//     for x [N, 3, 32, 32]: Conv 16@3×3, BatchNorm, Relu, then three
//     stages of n basic blocks with 16, 32 and 64 channels (the last two
//     start with stride 2), the shortcut a strided 1×1 Conv with BatchNorm
//     where the shape changes and the identity elsewhere; global average
//     pooling and Dense 10;
//   - resnet18: He et al.'s ImageNet ResNet-18 for x [N, 3, 224, 224], 1000
//     classes, as torchvision's resnet18 (11,689,512 trainable
//     parameters);
//   - mobilenetv2: Sandler et al.'s MobileNetV2 (width 1.0) for x [N, 3,
//     224, 224], 1000 classes, as torchvision's mobilenet_v2 without its
//     dropout (3,504,872 trainable parameters);
//   - mobilenet_v3_small: Howard et al.'s MobileNetV3-small for x [N, 3,
//     224, 224], 1000 classes, as torchvision's mobilenet_v3_small without
//     its dropout (2,542,856 trainable parameters): HardSwish, and
//     squeeze-and-excitation as GlobalAveragePool, two 1×1 Convs with
//     bias, Relu, HardSigmoid (alpha 1/6, beta 0.5) and Mul; BatchNorm
//     epsilon 0.001, momentum 0.99 (PyTorch's 0.01);
//   - shufflenet_v2_x0_5: Ma et al.'s ShuffleNetV2 ×0.5 for x [N, 3, 224,
//     224], 1000 classes, as torchvision's shufflenet_v2_x0_5 (1,366,792
//     trainable parameters): the channel split is Split, the branches are
//     joined by Concat and shuffled by Reshape, Transpose, Reshape; the
//     spatial mean is GlobalAveragePool and Flatten;
//   - squeezenet1_1: Iandola et al.'s SqueezeNet 1.1 for x [N, 3, 224,
//     224], 1000 classes, as torchvision's squeezenet1_1 without its
//     dropout (1,235,496 trainable parameters): Fire modules joined by
//     Concat, MaxPool with ceil_mode 1, and a 1×1 Conv, Relu and global
//     average pooling as the classifier;
//   - mnasnet0_5: Tan et al.'s MNASNet-B1 with depth multiplier 0.5 for x
//     [N, 3, 224, 224], 1000 classes, as torchvision's mnasnet0_5 (its
//     version 2, whose stem is scaled too) without its dropout (2,218,512
//     trainable parameters); BatchNorm momentum 0.9997;
//   - transformer: an nn.TransformerEncoder of 2 post-norm layers
//     (norm_first False) for x [N, 32, 64] (32 steps of d_model 64): 4
//     heads, feed-forward width 256 (PyTorch's default, 2048, would make
//     the feed-forward 94% of a model this narrow), Relu, LayerNorm
//     epsilon 1e-5, dropout left out, attention written with MatMul,
//     Softmax, Transpose and Reshape as an export does; then the mean over
//     the 32 steps (ReduceMean) and Dense 10 (100,618 trainable
//     parameters: 49,984 per layer and 650 for the classifier);
//   - lstm_gru: a recurrent classifier for x [N, 32, 32] (32 steps of 32
//     features): Transpose to [32, N, 32], ONNX LSTM with hidden 64
//     (forward), Squeeze of the direction axis, ONNX GRU with hidden 64 in
//     both directions (linear_before_reset 1, as PyTorch), its output [32,
//     2, N, 64] made batch-first [N, 32, 128] by Transpose and Reshape,
//     the last step taken by Gather, and Dense 10 (76,298 trainable
//     parameters: LSTM 25,088, GRU 49,920, Dense 1,290).
//
// Convolutions followed by BatchNorm have no bias. The parameters follow
// the default initialisation, InitHe, except those InitHe does not cover:
// LayerNorm's scale is 1 and its bias 0, and the recurrent weights and
// biases are uniform in ±1/√hidden under every policy, as PyTorch draws
// them.
func Preset(name string, seed uint64) (*onnx.Model, error) {
	return PresetWith(name, seed, InitHe)
}

// PresetWith builds the named model with parameters drawn from seed under
// the initialisation policy init.
func PresetWith(name string, seed uint64, init Init) (*onnx.Model, error) {
	body, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("unknown model preset %q (known: %s)", name, strings.Join(PresetNames(), ", "))
	}
	b := NewBuilder(name, DefaultOpset)
	b.SetSeed(seed)
	b.Init = init
	body(b)
	return b.Model()
}

func buildMLP(b *Builder) {
	x := b.Input("x", onnx.Float, -1, 1, 28, 28)
	h := b.Relu(b.Dense(b.Flatten(x), 512))
	b.Output(b.Dense(h, 10), "y")
}

func buildLeNet(b *Builder) {
	x := b.Input("x", onnx.Float, -1, 1, 28, 28)
	h := b.MaxPool(b.Relu(b.Conv(x, 6, 5, 1, 2)), 2, 2, 0)
	h = b.MaxPool(b.Relu(b.Conv(h, 16, 5, 1, 0)), 2, 2, 0)
	h = b.Relu(b.Dense(b.Flatten(h), 120))
	h = b.Relu(b.Dense(h, 84))
	b.Output(b.Dense(h, 10), "y")
}

// convBN is a bias-free Conv followed by BatchNorm.
func (b *Builder) convBN(x Value, out, kernel, stride, pad, group int) Value {
	return b.BatchNorm(b.ConvWith(x, ConvSpec{Out: out, Kernel: kernel, Stride: stride, Pad: pad, Group: group, NoBias: true}))
}

// basicBlock is a ResNet basic block: two 3×3 convolutions with
// BatchNorm, added to the shortcut, then Relu.
func (b *Builder) basicBlock(x Value, out, stride int) Value {
	h := b.Relu(b.convBN(x, out, 3, stride, 1, 1))
	h = b.convBN(h, out, 3, 1, 1, 1)
	short := x
	if stride != 1 || (len(x.Shape()) == 4 && x.Shape()[1] != int64(out)) {
		short = b.convBN(x, out, 1, stride, 0, 1)
	}
	return b.Relu(b.Add(h, short))
}

func buildCIFARResNet(b *Builder, n int) {
	x := b.Input("x", onnx.Float, -1, 3, 32, 32)
	h := b.Relu(b.convBN(x, 16, 3, 1, 1, 1))
	for stage, ch := range []int{16, 32, 64} {
		for i := range n {
			stride := 1
			if stage > 0 && i == 0 {
				stride = 2
			}
			h = b.basicBlock(h, ch, stride)
		}
	}
	h = b.Flatten(b.GlobalAveragePool(h))
	b.Output(b.Dense(h, 10), "y")
}

func buildResNet18(b *Builder) {
	x := b.Input("x", onnx.Float, -1, 3, 224, 224)
	h := b.Relu(b.convBN(x, 64, 7, 2, 3, 1))
	h = b.MaxPool(h, 3, 2, 1)
	for stage, ch := range []int{64, 128, 256, 512} {
		for i := range 2 {
			stride := 1
			if stage > 0 && i == 0 {
				stride = 2
			}
			h = b.basicBlock(h, ch, stride)
		}
	}
	h = b.Flatten(b.GlobalAveragePool(h))
	b.Output(b.Dense(h, 1000), "y")
}

func buildMobileNetV2(b *Builder) {
	x := b.Input("x", onnx.Float, -1, 3, 224, 224)
	h := b.Relu6(b.convBN(x, 32, 3, 2, 1, 1))
	in := 32
	// Expansion t, output channels c, repeats n, first stride s.
	for _, st := range [][4]int{{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}} {
		t, c, n, s := st[0], st[1], st[2], st[3]
		for i := range n {
			stride := 1
			if i == 0 {
				stride = s
			}
			hidden := in * t
			y := h
			if t != 1 {
				y = b.Relu6(b.convBN(y, hidden, 1, 1, 0, 1))
			}
			y = b.Relu6(b.convBN(y, hidden, 3, stride, 1, hidden))
			y = b.convBN(y, c, 1, 1, 0, 1)
			if stride == 1 && in == c {
				y = b.Add(h, y)
			}
			h, in = y, c
		}
	}
	h = b.Relu6(b.convBN(h, 1280, 1, 1, 0, 1))
	h = b.Flatten(b.GlobalAveragePool(h))
	b.Output(b.Dense(h, 1000), "y")
}
