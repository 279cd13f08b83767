package transform_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/transform"
)

func TestFoldConstants(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	b := newTestGraph(t, 17)
	b.input("x", -1, 3, 2)
	b.init("a", randomTensor(rng, 2, 3))
	b.node("Constant", nil, []string{"k"}, &onnx.Attribute{Name: "value", Type: onnx.AttrTensor, Tensor: randomTensor(rng, 2, 3)})
	b.node("Mul", []string{"a", "k"}, []string{"ak"})
	b.node("Transpose", []string{"ak"}, []string{"akT"}, ints("perm", 1, 0))
	b.node("Add", []string{"x", "akT"}, []string{"sum"})
	// Shape of an initializer, then arithmetic on shapes: all constant.
	b.node("Shape", []string{"a"}, []string{"ashape"})
	b.node("Constant", nil, []string{"minus"}, &onnx.Attribute{Name: "value_ints", Type: onnx.AttrInts, Ints: []int64{-1, 1}})
	b.node("Mul", []string{"ashape", "minus"}, []string{"target"}) // [-2, 3]: a -1 to infer
	b.node("Abs", []string{"target"}, []string{"abs"})             // [2, 3]
	b.node("ReduceProd", []string{"abs"}, []string{"prod"}, intAttr("keepdims", 1))
	b.node("Reshape", []string{"sum", "prod"}, []string{"flat"}) // to [6]: the test feeds a batch of 1
	b.output("flat")
	m := b.model()
	opt, rep := optimize(t, m)
	if got := opTypes(opt); !slices.Equal(got, []string{"Add", "Reshape"}) {
		t.Fatalf("optimized nodes %v, want [Add Reshape]", got)
	}
	if n := passCount(rep, "fold-constants"); n != 8 {
		t.Errorf("report %v: want 8 nodes folded", rep)
	}
	// What remains: the folded transposed product and the target shape.
	if n := len(opt.Graph.Initializers); n != 2 {
		t.Errorf("%d initializers remain, want 2", n)
	}
	shape := opt.Graph.Initializer("prod")
	if shape == nil || !slices.Equal(shape.Int64s(), []int64{6}) {
		t.Errorf("folded shape %v, want [6]", shape)
	}
	assertEquivalent(t, m, opt, map[string]onnx.Value{"x": randomTensor(rng, 1, 3, 2)})
}

// Constant folding leaves alone: a random generator, an input with an
// initializer (a default the caller may override), and, without an
// evaluator, everything but Shape.
func TestFoldConstantsKeeps(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	b := newTestGraph(t, 17)
	b.input("x", 4)
	b.input("overridable", 4)
	b.init("overridable", randomTensor(rng, 4))
	b.init("c", randomTensor(rng, 4))
	b.node("Neg", []string{"overridable"}, []string{"n"})
	b.node("RandomUniform", nil, []string{"noise"}, ints("shape", 4), floatAttr("low", 0), floatAttr("high", 0))
	b.node("Add", []string{"n", "noise"}, []string{"s"})
	b.node("Exp", []string{"c"}, []string{"e"})
	b.node("Add", []string{"s", "e"}, []string{"s2"})
	b.node("Add", []string{"s2", "x"}, []string{"y"})
	b.output("y")
	m := b.model()
	opt, _ := optimize(t, m)
	if got := opTypes(opt); !slices.Equal(got, []string{"Neg", "RandomUniform", "Add", "Add", "Add"}) {
		t.Fatalf("optimized nodes %v, want Exp folded and the rest kept", got)
	}
	// low = high = 0 makes the noise zero, so the outputs can be compared.
	feeds := map[string]onnx.Value{"x": randomTensor(rng, 4)}
	assertEquivalent(t, m, opt, feeds)
	feeds["overridable"] = randomTensor(rng, 4)
	assertEquivalent(t, m, opt, feeds)

	plain, rep, err := transform.Optimize(m, transform.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if count(plain, "Exp") != 1 || passCount(rep, "fold-constants") != 0 {
		t.Errorf("without an evaluator: nodes %v, report %v; want nothing folded", opTypes(plain), rep)
	}
}

func TestFoldShapeOfStaticInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	b := newTestGraph(t, 17)
	b.input("x", 2, 3, 4)
	b.input("dynamic", -1, 5)
	b.node("Shape", []string{"x"}, []string{"sx"}, intAttr("start", 1))
	b.node("ConstantOfShape", []string{"sx"}, []string{"ones"}, &onnx.Attribute{Name: "value", Type: onnx.AttrTensor, Tensor: onnx.FromSlice([]float32{1}, 1)})
	b.node("Add", []string{"x", "ones"}, []string{"y"})
	b.node("Shape", []string{"dynamic"}, []string{"ydyn"})
	b.output("y", "ydyn")
	m := b.model()
	feeds := map[string]onnx.Value{"x": randomTensor(rng, 2, 3, 4), "dynamic": randomTensor(rng, 3, 5)}

	// Without an evaluator only the Shape is folded.
	opt, rep, err := transform.Optimize(m, transform.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := opTypes(opt); !slices.Equal(got, []string{"ConstantOfShape", "Add", "Shape"}) {
		t.Fatalf("optimized nodes %v, want [ConstantOfShape Add Shape]", got)
	}
	if sx := opt.Graph.Initializer("sx"); sx == nil || !slices.Equal(sx.Int64s(), []int64{3, 4}) {
		t.Errorf("folded Shape %v, want [3 4]", sx)
	}
	if passCount(rep, "fold-constants") != 1 {
		t.Errorf("report %v: want 1 fold", rep)
	}
	assertEquivalent(t, m, opt, feeds)

	// With one, the ConstantOfShape follows.
	opt, _ = optimize(t, m)
	if got := opTypes(opt); !slices.Equal(got, []string{"Add", "Shape"}) {
		t.Fatalf("optimized nodes %v, want [Add Shape]", got)
	}
	assertEquivalent(t, m, opt, feeds)
}
