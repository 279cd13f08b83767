package transform

import (
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// nondeterministic lists the ai.onnx operators whose result may differ
// between runs with the same inputs; they are never folded.
var nondeterministic = map[string]bool{
	"RandomNormal": true, "RandomNormalLike": true, "RandomUniform": true, "RandomUniformLike": true,
	"Multinomial": true, "Bernoulli": true, "Dropout": true,
}

// foldConstants replaces each node whose inputs are all constants
// (initializers that are not graph inputs, or outputs of nodes folded
// before it) by initializers holding its outputs, computed once with
// opts.Evaluate on a model of that node alone. A Shape of a graph input
// whose declared shape is fully static (backends check feeds against it)
// is folded too, computed here. Left alone: operators outside ai.onnx,
// unknown ones, nondeterministic ones, nodes with subgraphs, nodes writing
// a graph output, nodes the evaluator fails on or whose outputs are not
// tensors or exceed opts.MaxFoldedElements. Without an evaluator only the
// Shape folding is done.
func foldConstants(g *onnx.Graph, opts *Options) (int, error) {
	x := indexGraph(g)
	drop := map[*onnx.Node]bool{}
	for _, n := range g.Nodes {
		if !foldable(x, n) {
			continue
		}
		var results []*onnx.Tensor
		if shape, ok := staticShapeOf(x, n); ok {
			results = []*onnx.Tensor{shape}
		} else if allConstant(x, n) && opts.Evaluate != nil {
			results = evaluateNode(x, n, opts)
		}
		if results == nil {
			continue
		}
		x.forgetNode(n)
		for i, o := range n.Outputs {
			if o != "" {
				x.addInitializer(o, results[i])
			}
		}
		drop[n] = true
	}
	removeNodes(g, drop)
	return len(drop), nil
}

// foldable reports whether n is a kind of node folding may replace.
func foldable(x *graphIndex, n *onnx.Node) bool {
	if n.Domain != "" || nondeterministic[n.OpType] || hasSubgraph(n) {
		return false
	}
	if _, typed := n.Op.(ops.Op); !typed {
		return false
	}
	if c, ok := n.Op.(*ops.Constant); ok && c.SparseValue != nil {
		return false // its value belongs among the sparse initializers
	}
	written := 0
	for _, o := range n.Outputs {
		if o == "" {
			continue
		}
		if _, defined := x.inits[o]; defined || x.outputs[o] || x.inputs[o] {
			return false
		}
		written++
	}
	return written > 0
}

// allConstant reports whether every input n names is a constant.
func allConstant(x *graphIndex, n *onnx.Node) bool {
	for _, in := range n.Inputs {
		if in == "" {
			continue
		}
		if _, ok := x.constant(in); !ok {
			return false
		}
	}
	return true
}

// evaluateNode runs n alone on its constant inputs and returns its
// outputs in the order of n.Outputs (nil where an output is omitted), or
// nil when n cannot be folded.
func evaluateNode(x *graphIndex, n *onnx.Node, opts *Options) []*onnx.Tensor {
	g := &onnx.Graph{Name: "fold"}
	seen := map[string]bool{}
	for _, in := range n.Inputs {
		if in != "" && !seen[in] {
			seen[in] = true
			t, _ := x.constant(in)
			g.Initializers = append(g.Initializers, &onnx.Initializer{Name: in, Tensor: t})
		}
	}
	single := *n
	single.Inputs = append([]string(nil), n.Inputs...)
	single.Outputs = append([]string(nil), n.Outputs...)
	single.Graph = g
	if err := retype(&single); err != nil {
		return nil
	}
	g.Nodes = []*onnx.Node{&single}
	for _, o := range n.Outputs {
		if o != "" {
			g.Outputs = append(g.Outputs, &onnx.ValueInfo{Name: o})
		}
	}
	m := &onnx.Model{IRVersion: 8, Opsets: map[string]int64{n.Domain: n.Opset}, Graph: g}
	values, err := opts.Evaluate(m)
	if err != nil {
		return nil
	}
	results := make([]*onnx.Tensor, len(n.Outputs))
	for i, o := range n.Outputs {
		if o == "" {
			continue
		}
		t, ok := values[o].(*onnx.Tensor)
		if !ok || t == nil || t.Check() != nil || t.Len() > opts.MaxFoldedElements {
			return nil
		}
		// A backend's result may share memory with its inputs or with
		// buffers it reuses; the model gets its own copy.
		results[i] = t.Clone()
	}
	return results
}

// staticShapeOf computes a Shape node's output when its input is a graph
// input (without an initializer) declared with every dimension fixed.
func staticShapeOf(x *graphIndex, n *onnx.Node) (*onnx.Tensor, bool) {
	s, ok := n.Op.(*ops.Shape)
	if !ok || !x.inputs[s.In.Data] || len(n.Outputs) != 1 {
		return nil, false
	}
	if _, hasDefault := x.inits[s.In.Data]; hasDefault {
		return nil, false
	}
	ti := x.g.TypeOf(s.In.Data)
	if ti == nil || ti.Kind != onnx.TensorKind || !ti.HasShape {
		return nil, false
	}
	dims := make([]int64, len(ti.Shape))
	for i, d := range ti.Shape {
		if d.Size < 0 || d.Param != "" {
			return nil, false
		}
		dims[i] = d.Size
	}
	rank := int64(len(dims))
	clampAxis := func(a int64) int64 {
		if a < 0 {
			a += rank
		}
		return min(max(a, 0), rank)
	}
	start, end := clampAxis(s.Start), rank
	if s.End != nil {
		end = clampAxis(*s.End)
	}
	if end < start {
		end = start
	}
	out := append([]int64{}, dims[start:end]...)
	return onnx.FromSlice(out, len(out)), true
}
