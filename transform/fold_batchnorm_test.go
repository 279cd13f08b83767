package transform_test

import (
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// addBatchNorm appends an inference BatchNormalization over channels
// with random parameters, reading x and writing y.
func addBatchNorm(b *testGraph, rng *rand.Rand, x, y string, channels int) *onnx.Node {
	for _, p := range []string{"scale", "bias", "mean"} {
		b.init(y+"."+p, randomTensor(rng, channels))
	}
	b.init(y+".var", positiveTensor(rng, channels))
	return b.node("BatchNormalization", []string{x, y + ".scale", y + ".bias", y + ".mean", y + ".var"}, []string{y}, floatAttr("epsilon", 1e-3))
}

func TestFoldBatchNormIntoConv(t *testing.T) {
	for _, tc := range []struct {
		name   string
		group  int64
		bias   bool
		opset  int64
		inputs int64 // input channels
	}{
		{"plain", 1, false, 17, 3},
		{"with bias", 1, true, 17, 3},
		{"grouped", 2, true, 17, 4},
		{"depthwise", 4, false, 17, 4},
		{"opset 9", 1, true, 9, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			b := newTestGraph(t, tc.opset)
			b.input("x", -1, tc.inputs, 6, 5)
			const out = 4
			b.init("w", randomTensor(rng, out, int(tc.inputs/tc.group), 3, 3))
			in := []string{"x", "w"}
			if tc.bias {
				b.init("b", randomTensor(rng, out))
				in = append(in, "b")
			}
			b.node("Conv", in, []string{"c"}, ints("pads", 1, 1, 1, 1), intAttr("group", tc.group))
			addBatchNorm(b, rng, "c", "bn", out)
			b.node("Relu", []string{"bn"}, []string{"y"})
			b.output("y")
			m := b.model()
			opt, rep := optimize(t, m)
			if got := opTypes(opt); len(got) != 2 || got[0] != "Conv" || got[1] != "Relu" {
				t.Fatalf("optimized nodes %v, want [Conv Relu]", got)
			}
			if passCount(rep, "fold-batchnorm") != 1 {
				t.Errorf("report %v: want 1 fold-batchnorm", rep)
			}
			if n := len(opt.Graph.Nodes[0].Inputs); n != 3 {
				t.Errorf("folded Conv has %d inputs, want 3 (with a bias)", n)
			}
			// Only the folded weight and bias remain.
			if n := len(opt.Graph.Initializers); n != 2 {
				t.Errorf("%d initializers remain, want 2", n)
			}
			assertEquivalent(t, m, opt, map[string]onnx.Value{"x": randomTensor(rng, 2, int(tc.inputs), 6, 5)})
		})
	}
}

func TestFoldBatchNormIntoConvTranspose(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	b := newTestGraph(t, 17)
	b.input("x", 1, 4, 5, 5)
	// Weights [C=4, M/group=3, 2, 2] with group 2: 6 output channels.
	b.init("w", randomTensor(rng, 4, 3, 2, 2))
	b.init("b", randomTensor(rng, 6))
	b.node("ConvTranspose", []string{"x", "w", "b"}, []string{"c"}, intAttr("group", 2), ints("strides", 2, 2))
	addBatchNorm(b, rng, "c", "y", 6)
	b.output("y")
	m := b.model()
	opt, _ := optimize(t, m)
	if got := opTypes(opt); len(got) != 1 || got[0] != "ConvTranspose" {
		t.Fatalf("optimized nodes %v, want [ConvTranspose]", got)
	}
	assertEquivalent(t, m, opt, map[string]onnx.Value{"x": randomTensor(rng, 1, 4, 5, 5)})
}

func TestFoldBatchNormIntoGemm(t *testing.T) {
	for _, tc := range []struct {
		name   string
		transB int64
		c      []int // shape of C; nil for none
		beta   float32
	}{
		{"no C", 0, nil, 1},
		{"transB, C [M]", 1, []int{5}, 1},
		{"C [1 M], beta 0.5", 0, []int{1, 5}, 0.5},
		{"scalar C", 1, []int{}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			b := newTestGraph(t, 17)
			b.input("x", -1, 7)
			if tc.transB != 0 {
				b.init("w", randomTensor(rng, 5, 7))
			} else {
				b.init("w", randomTensor(rng, 7, 5))
			}
			in := []string{"x", "w"}
			if tc.c != nil {
				b.init("c", randomTensor(rng, tc.c...))
				in = append(in, "c")
			}
			b.node("Gemm", in, []string{"g"}, intAttr("transB", tc.transB), floatAttr("beta", tc.beta), floatAttr("alpha", 0.75))
			addBatchNorm(b, rng, "g", "y", 5)
			b.output("y")
			m := b.model()
			opt, _ := optimize(t, m)
			if got := opTypes(opt); len(got) != 1 || got[0] != "Gemm" {
				t.Fatalf("optimized nodes %v, want [Gemm]", got)
			}
			assertEquivalent(t, m, opt, map[string]onnx.Value{"x": randomTensor(rng, 3, 7)})
		})
	}
}

// The folds that must not happen leave the BatchNormalization in place,
// and the model still computes the same.
func TestFoldBatchNormRefuses(t *testing.T) {
	build := func(t *testing.T, variant string) *onnx.Model {
		rng := rand.New(rand.NewPCG(7, 8))
		b := newTestGraph(t, 15)
		b.input("x", 1, 2, 4, 4)
		b.init("w", randomTensor(rng, 3, 2, 1, 1))
		b.node("Conv", []string{"x", "w"}, []string{"c"})
		switch variant {
		case "conv output is a graph output":
			addBatchNorm(b, rng, "c", "y", 3)
			b.output("y", "c")
		case "conv output read elsewhere":
			addBatchNorm(b, rng, "c", "bn", 3)
			b.node("Add", []string{"bn", "c"}, []string{"y"})
			b.output("y")
		case "training mode":
			bn := addBatchNorm(b, rng, "c", "y", 3)
			bn.Outputs = append(bn.Outputs, "rm", "rv")
			bn.Attributes = append(bn.Attributes, intAttr("training_mode", 1))
			if err := onnx.TypeNode(bn); err != nil {
				t.Fatal(err)
			}
			b.output("y")
		case "statistics fed by the caller":
			addBatchNorm(b, rng, "c", "y", 3)
			b.g.Inputs = append(b.g.Inputs, &onnx.ValueInfo{Name: "y.mean", Type: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float, HasShape: true, Shape: []onnx.Dim{{Size: 3}}}})
			b.output("y")
		}
		return b.model()
	}
	for _, variant := range []string{"conv output is a graph output", "conv output read elsewhere", "training mode", "statistics fed by the caller"} {
		t.Run(variant, func(t *testing.T) {
			m := build(t, variant)
			opt, rep := optimize(t, m)
			if count(opt, "BatchNormalization") != 1 || passCount(rep, "fold-batchnorm") != 0 {
				t.Fatalf("BatchNormalization folded (nodes %v, %v)", opTypes(opt), rep)
			}
			if variant != "training mode" {
				assertEquivalent(t, m, opt, map[string]onnx.Value{"x": randomTensor(rand.New(rand.NewPCG(9, 9)), 1, 2, 4, 4)})
			}
		})
	}
}

func TestFoldBatchNormIntoMatMulAdd(t *testing.T) {
	build := func(t *testing.T, flatten bool) (*onnx.Model, map[string]onnx.Value) {
		rng := rand.New(rand.NewPCG(41, 42))
		b := newTestGraph(t, 17)
		feeds := map[string]onnx.Value{}
		if flatten {
			b.input("x", -1, 2, 3)
			b.node("Flatten", []string{"x"}, []string{"f"})
			feeds["x"] = randomTensor(rng, 4, 2, 3)
		} else {
			// A batch of sequences: MatMul's output is [N, 2, 5], and
			// BatchNormalization's channel axis is the 2, not the 5.
			b.input("x", 4, 5, 6)
			b.node("Identity", []string{"x"}, []string{"f"})
			feeds["x"] = randomTensor(rng, 4, 5, 6)
		}
		b.init("w", randomTensor(rng, 6, 5))
		b.init("c", randomTensor(rng, 5))
		b.node("MatMul", []string{"f", "w"}, []string{"mm"})
		b.node("Add", []string{"c", "mm"}, []string{"lin"})
		addBatchNorm(b, rng, "lin", "y", 5)
		b.output("y")
		return b.model(), feeds
	}
	t.Run("matrix input", func(t *testing.T) {
		m, feeds := build(t, true)
		opt, _ := optimize(t, m)
		if got := opTypes(opt); len(got) != 3 || got[2] != "Add" {
			t.Fatalf("optimized nodes %v, want [Flatten MatMul Add]", got)
		}
		assertEquivalent(t, m, opt, feeds)
	})
	t.Run("rank 3 input", func(t *testing.T) {
		m, feeds := build(t, false)
		opt, _ := optimize(t, m)
		if count(opt, "BatchNormalization") != 1 {
			t.Fatalf("optimized nodes %v: BatchNormalization folded across the wrong axis", opTypes(opt))
		}
		assertEquivalent(t, m, opt, feeds)
	})
}
