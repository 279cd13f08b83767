package onnx

import (
	"slices"
	"testing"
)

// UnknownNodes finds unknown operators in the graph, in subgraphs of
// attributes at any depth and in function bodies, and only those.
func TestModelUnknownNodes(t *testing.T) {
	unknown := func(name string) *Node {
		return &Node{Name: name, OpType: "NoSuchOp", Op: &UnknownOperator{Type: "NoSuchOp", Opset: 17}}
	}
	known := &Node{Name: "call", OpType: "f", Op: &FunctionCall{Function: &Function{Name: "f"}}}
	inner := &Graph{Nodes: []*Node{unknown("in_loop_body")}}
	branch := &Graph{Nodes: []*Node{known, {Name: "loop", OpType: "Loop", Attributes: []*Attribute{{Name: "body", Graph: inner}}}}}
	m := &Model{
		Graph: &Graph{Nodes: []*Node{
			unknown("top"),
			{Name: "if", OpType: "If", Attributes: []*Attribute{{Name: "then_branch", Graphs: []*Graph{branch}}}},
		}},
		Functions: []*Function{{Name: "f", Nodes: []*Node{unknown("in_function")}}},
	}
	var names []string
	for _, n := range m.UnknownNodes() {
		names = append(names, n.Name)
	}
	if want := []string{"top", "in_loop_body", "in_function"}; !slices.Equal(names, want) {
		t.Errorf("UnknownNodes = %v, want %v", names, want)
	}
	if got := (&Model{Graph: &Graph{Nodes: []*Node{known}}}).UnknownNodes(); len(got) != 0 {
		t.Errorf("a model without unknown operators: %v", got)
	}
}
