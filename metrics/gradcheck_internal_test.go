package metrics

import (
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
	_ "github.com/deep500/deep500-go/ops" // registers the typed operators
)

func TestGradSample(t *testing.T) {
	a := gradSample(1000, 32, 1, 2)
	if len(a) != 32 || !slices.IsSorted(a) || slices.Compact(slices.Clone(a))[31] != a[31] {
		t.Fatalf("sample %v", a)
	}
	for _, i := range a {
		if i < 0 || i >= 1000 {
			t.Fatalf("index %d out of range", i)
		}
	}
	if b := gradSample(1000, 32, 1, 2); !slices.Equal(a, b) {
		t.Error("the same seed chose other elements")
	}
	if b := gradSample(1000, 32, 1, 3); slices.Equal(a, b) {
		t.Error("another stream chose the same elements")
	}
	if all := gradSample(5, 32, 1, 2); !slices.Equal(all, []int{0, 1, 2, 3, 4}) {
		t.Errorf("small tensor: %v", all)
	}
	if all := gradSample(40, -1, 1, 2); len(all) != 40 {
		t.Errorf("every element: %d", len(all))
	}
}

func TestGradWidenModel(t *testing.T) {
	sub := &onnx.Graph{
		Outputs:      []*onnx.ValueInfo{{Name: "s", Type: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float}}},
		Initializers: []*onnx.Initializer{{Name: "k", Tensor: onnx.FromSlice([]float32{1}, 1)}},
		Nodes:        []*onnx.Node{{OpType: "Identity", Inputs: []string{"k"}, Outputs: []string{"s"}}},
	}
	g := &onnx.Graph{
		Inputs: []*onnx.ValueInfo{
			{Name: "x", Type: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float16}},
			{Name: "i", Type: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Int64}},
			{Name: "q", Type: &onnx.TypeInfo{Kind: onnx.SequenceKind, Inner: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float}}},
		},
		Initializers: []*onnx.Initializer{
			{Name: "w", Tensor: onnx.FromSlice([]float32{1.5, -2}, 2)},
			{Name: "n", Tensor: onnx.FromSlice([]int64{3}, 1)},
		},
		Nodes: []*onnx.Node{
			{OpType: "Constant", Outputs: []string{"c"}, Attributes: []*onnx.Attribute{{Name: "value_float", Type: onnx.AttrFloat, Float: 0.25}}},
			{OpType: "Cast", Inputs: []string{"i"}, Outputs: []string{"f"}, Attributes: []*onnx.Attribute{{Name: "to", Type: onnx.AttrInt, Int: int64(onnx.Float)}}},
			{OpType: "Cast", Inputs: []string{"i"}, Outputs: []string{"j"}, Attributes: []*onnx.Attribute{{Name: "to", Type: onnx.AttrInt, Int: int64(onnx.Int32)}}},
			{OpType: "If", Inputs: []string{"b"}, Outputs: []string{"o"}, Attributes: []*onnx.Attribute{
				{Name: "then_branch", Type: onnx.AttrGraph, Graph: sub}, {Name: "else_branch", Type: onnx.AttrGraph, Graph: sub}}},
		},
	}
	m := &onnx.Model{Graph: g}
	if !gradWidenModel(m) {
		t.Fatal("nothing widened")
	}
	if g.Inputs[0].Type.Elem != onnx.Double || g.Inputs[1].Type.Elem != onnx.Int64 || g.Inputs[2].Type.Inner.Elem != onnx.Double {
		t.Errorf("input types %v %v %v", g.Inputs[0].Type, g.Inputs[1].Type, g.Inputs[2].Type)
	}
	if w := g.Initializers[0].Tensor; w.Type != onnx.Double || !slices.Equal(w.Float64s(), []float64{1.5, -2}) {
		t.Errorf("w = %v", w)
	}
	if g.Initializers[1].Tensor.Type != onnx.Int64 {
		t.Error("an integer initializer was widened")
	}
	if a := g.Nodes[0].Attributes[0]; a.Name != "value" || a.Tensor.Type != onnx.Double || a.Tensor.Float64s()[0] != 0.25 {
		t.Errorf("Constant: %+v", a)
	}
	if g.Nodes[1].Attributes[0].Int != int64(onnx.Double) || g.Nodes[2].Attributes[0].Int != int64(onnx.Int32) {
		t.Errorf("Cast targets %d, %d", g.Nodes[1].Attributes[0].Int, g.Nodes[2].Attributes[0].Int)
	}
	if sub.Initializers[0].Tensor.Type != onnx.Double || sub.Outputs[0].Type.Elem != onnx.Double {
		t.Error("the subgraph was not widened")
	}
	// Nothing to widen.
	m2 := &onnx.Model{Graph: &onnx.Graph{Inputs: []*onnx.ValueInfo{{Name: "i", Type: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Int64}}}}}
	if gradWidenModel(m2) {
		t.Error("an integer model was widened")
	}
	v, changed := gradWidenValue(&onnx.Sequence{Values: []onnx.Value{onnx.FromSlice([]float32{2}, 1)}})
	if !changed || v.(*onnx.Sequence).Values[0].(*onnx.Tensor).Type != onnx.Double {
		t.Errorf("sequence feed: %v %v", v, changed)
	}
}

// The float64 copy computes the normalizations' statistics in double too,
// stash_type given or not, and leaves a float32 feed's declared type alone.
func TestGradWidenStashTypeAndFeeds(t *testing.T) {
	f := &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float}
	g := &onnx.Graph{
		Inputs: []*onnx.ValueInfo{{Name: "x", Type: f}, {Name: "s", Type: f}, {Name: "b", Type: f}},
		Nodes: []*onnx.Node{
			{OpType: "LayerNormalization", Inputs: []string{"x", "s", "b"}, Outputs: []string{"y", "m", "r"}},
			{OpType: "LayerNormalization", Inputs: []string{"x", "s", "b"}, Outputs: []string{"y2"},
				Attributes: []*onnx.Attribute{{Name: "stash_type", Type: onnx.AttrInt, Int: int64(onnx.Float)}}},
			{OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"y3"}},
		},
		Outputs: []*onnx.ValueInfo{{Name: "y"}, {Name: "m"}, {Name: "r"}, {Name: "y2"}, {Name: "y3"}},
	}
	m, err := gradCloneModel(&onnx.Model{IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g})
	if err != nil {
		t.Fatal(err)
	}
	if !gradWidenModel(m) {
		t.Fatal("nothing widened")
	}
	for i, n := range m.Graph.Nodes[:2] {
		if len(n.Attributes) != 1 || n.Attributes[0].Name != "stash_type" || n.Attributes[0].Int != int64(onnx.Double) {
			t.Errorf("LayerNormalization %d: attributes %+v", i, n.Attributes)
		}
	}
	if len(m.Graph.Nodes[2].Attributes) != 0 {
		t.Errorf("Relu got attributes %+v", m.Graph.Nodes[2].Attributes)
	}

	elem := &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float}
	seq := &onnx.Sequence{Elem: elem, Values: []onnx.Value{onnx.FromSlice([]float32{2}, 1)}}
	w, changed := gradWidenValue(seq)
	if !changed || w.(*onnx.Sequence).Elem.Elem != onnx.Double {
		t.Errorf("widened sequence: %v", w)
	}
	if seq.Elem != elem || elem.Elem != onnx.Float || seq.Values[0].(*onnx.Tensor).Type != onnx.Float {
		t.Errorf("the float32 feed changed: %v, element type %v", seq, elem.Elem)
	}
	opt := &onnx.Optional{Elem: elem, Value: onnx.FromSlice([]float32{2}, 1)}
	if w, _ := gradWidenValue(opt); w.(*onnx.Optional).Elem.Elem != onnx.Double || elem.Elem != onnx.Float {
		t.Errorf("optional: widened %v, the feed's element type %v", w, elem.Elem)
	}
}
