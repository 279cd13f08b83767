package transform_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestEliminateIdentityAndDropout(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	b := newTestGraph(t, 13)
	b.input("x", -1, 6)
	b.node("Relu", []string{"x"}, []string{"r"})
	b.node("Identity", []string{"r"}, []string{"i1"})
	b.init("ratio", onnx.Scalar(float32(0.3)))
	b.node("Dropout", []string{"i1", "ratio"}, []string{"d"})
	b.node("Neg", []string{"d"}, []string{"n"})
	// An Identity writing a graph output: Neg is renamed to write "y".
	b.node("Identity", []string{"n"}, []string{"y"})
	// A Dropout with training_mode false and its mask unused.
	b.init("training", onnx.Scalar(false))
	b.node("Dropout", []string{"r", "", "training"}, []string{"z", "unused_mask"})
	b.output("y", "z")
	m := b.model()
	opt, rep := optimize(t, m)
	if got := opTypes(opt); !slices.Equal(got, []string{"Relu", "Neg"}) {
		t.Fatalf("optimized nodes %v, want [Relu Neg]", got)
	}
	if passCount(rep, "eliminate-noops") != 4 {
		t.Errorf("report %v: want 4 no-ops removed", rep)
	}
	if got := opt.Graph.Nodes[1].Outputs[0]; got != "y" {
		t.Errorf("Neg writes %q, want the graph output name y", got)
	}
	// The second Dropout wrote graph output z from Relu's output: Relu now
	// writes z, and the chain to Neg reads it.
	if got := opt.Graph.Nodes[0].Outputs[0]; got != "z" {
		t.Errorf("Relu writes %q, want the graph output name z", got)
	}
	if !slices.Equal(opt.Graph.OutputNames(), []string{"y", "z"}) {
		t.Errorf("graph outputs %v, want [y z]", opt.Graph.OutputNames())
	}
	assertEquivalent(t, m, opt, map[string]onnx.Value{"x": randomTensor(rng, 3, 6)})
}

// No-ops that must stay: an Identity from a graph input to a graph
// output, a Dropout whose mask is read or that may train, an Identity
// between two graph outputs, a Cast that changes the type.
func TestEliminateNoopsKeeps(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	b := newTestGraph(t, 13)
	b.input("x", 2, 3)
	b.inputOf("train", onnx.Bool)
	b.node("Identity", []string{"x"}, []string{"copy"})
	b.node("Dropout", []string{"x"}, []string{"d", "mask"})
	b.node("Cast", []string{"mask"}, []string{"maskf"}, intAttr("to", int64(onnx.Float)))
	b.node("Dropout", []string{"x", "", "train"}, []string{"maybe"})
	b.node("Sigmoid", []string{"x"}, []string{"s"})
	b.node("Identity", []string{"s"}, []string{"s2"})
	b.output("copy", "d", "maskf", "maybe", "s", "s2")
	m := b.model()
	opt, rep := optimize(t, m)
	if got := opTypes(opt); !slices.Equal(got, opTypes(m)) {
		t.Fatalf("optimized nodes %v, want them all kept: %v", got, opTypes(m))
	}
	if passCount(rep, "eliminate-noops") != 0 {
		t.Errorf("report %v: want no no-op removed", rep)
	}
	assertEquivalent(t, m, opt, map[string]onnx.Value{"x": randomTensor(rng, 2, 3), "train": onnx.Scalar(false)})
}

func TestEliminateCastToSameType(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	b := newTestGraph(t, 13)
	b.input("x", 4)
	b.node("Cast", []string{"x"}, []string{"same"}, intAttr("to", int64(onnx.Float)))
	b.node("Cast", []string{"same"}, []string{"double"}, intAttr("to", int64(onnx.Double)))
	b.node("Cast", []string{"double"}, []string{"again"}, intAttr("to", int64(onnx.Double)))
	b.node("Exp", []string{"again"}, []string{"y"})
	b.output("y")
	m := b.model()
	opt, _ := optimize(t, m)
	if got := opTypes(opt); !slices.Equal(got, []string{"Cast", "Exp"}) {
		t.Fatalf("optimized nodes %v, want [Cast Exp]", got)
	}
	if to := opt.Graph.Nodes[0].Attr("to").Int; to != int64(onnx.Double) {
		t.Errorf("remaining Cast is to %v, want double", onnx.DataType(to))
	}
	assertEquivalent(t, m, opt, map[string]onnx.Value{"x": randomTensor(rng, 4)})
}

func TestMergeReshapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	b := newTestGraph(t, 14)
	b.input("x", 2, 3, 4)
	b.init("s1", onnx.FromSlice([]int64{6, 4}, 2))
	b.init("s2", onnx.FromSlice([]int64{-1, 12}, 2))
	b.init("s3", onnx.FromSlice([]int64{0, -1}, 2)) // 0 copies the input's dimension
	b.node("Reshape", []string{"x", "s1"}, []string{"r1"})
	b.node("Reshape", []string{"r1", "s2"}, []string{"r2"})
	b.node("Flatten", []string{"x"}, []string{"f"}, intAttr("axis", 2))
	b.node("Reshape", []string{"f", "s3"}, []string{"r3"})
	b.output("r2", "r3")
	m := b.model()
	opt, rep := optimize(t, m)
	// r1 is skipped and dies; the Reshape after Flatten reads a 0 and stays.
	if got := opTypes(opt); !slices.Equal(got, []string{"Reshape", "Flatten", "Reshape"}) {
		t.Fatalf("optimized nodes %v, want [Reshape Flatten Reshape]", got)
	}
	if got := opt.Graph.Nodes[0].Inputs[0]; got != "x" {
		t.Errorf("merged Reshape reads %q, want x", got)
	}
	if passCount(rep, "merge-reshapes") != 1 {
		t.Errorf("report %v: want 1 merge", rep)
	}
	assertEquivalent(t, m, opt, map[string]onnx.Value{"x": randomTensor(rng, 2, 3, 4)})
}

// A value an If branch reads from the main graph is never renamed: the
// Identity producing it stays even though it is a no-op.
func TestEliminateNoopsLeavesCapturedValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	b := newTestGraph(t, 13)
	b.input("x", 3)
	b.inputOf("cond", onnx.Bool)
	b.node("Relu", []string{"x"}, []string{"r"})
	b.node("Identity", []string{"r"}, []string{"captured"})
	branch := func(name, op string) *onnx.Graph {
		g := &onnx.Graph{Name: name, Parent: b.g, Captures: []string{"captured"}}
		n := &onnx.Node{Name: name + "_op", OpType: op, Inputs: []string{"captured"}, Outputs: []string{name + "_out"}, Opset: 13, Graph: g}
		if err := onnx.TypeNode(n); err != nil {
			t.Fatal(err)
		}
		g.Nodes = []*onnx.Node{n}
		g.Outputs = []*onnx.ValueInfo{{Name: name + "_out"}}
		return g
	}
	b.node("If", []string{"cond"}, []string{"y"},
		&onnx.Attribute{Name: "then_branch", Type: onnx.AttrGraph, Graph: branch("then", "Neg")},
		&onnx.Attribute{Name: "else_branch", Type: onnx.AttrGraph, Graph: branch("else", "Abs")})
	b.output("y")
	m := b.model()
	opt, _ := optimize(t, m)
	if got := opTypes(opt); !slices.Equal(got, []string{"Relu", "Identity", "If"}) {
		t.Fatalf("optimized nodes %v, want [Relu Identity If]", got)
	}
	for _, cond := range []bool{true, false} {
		assertEquivalent(t, m, opt, map[string]onnx.Value{"x": randomTensor(rng, 3), "cond": onnx.Scalar(cond)})
	}
}
