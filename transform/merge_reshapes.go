package transform

import (
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// mergeReshapes makes a Reshape whose input comes from another shape-only
// node (Reshape, Flatten, Squeeze, Unsqueeze) read that node's input
// instead: the result holds the same elements in the same order, and only
// the last shape counts. It applies only when the Reshape's target shape
// is a constant that does not copy dimensions from its input (no 0, or
// allowzero set), since those would be the skipped node's dimensions. The
// skipped node stays while anything else reads it; eliminateDead removes
// it otherwise.
func mergeReshapes(g *onnx.Graph, _ *Options) (int, error) {
	x := indexGraph(g)
	count := 0
	for _, n := range g.Nodes {
		r, ok := n.Op.(*ops.Reshape)
		if !ok || r.SinceVersion() < 5 || !selfContainedShape(x, r) {
			continue
		}
		p := x.producer[r.In.Data]
		if p == nil {
			continue
		}
		source, ok := shapeOnlyInput(p)
		if !ok || source == "" {
			continue
		}
		n.Inputs[0] = source // Reshape's data input
		x.forgetReader(r.In.Data, n)
		if !containsNode(x.consumers[source], n) {
			x.consumers[source] = append(x.consumers[source], n)
		}
		if err := retype(n); err != nil {
			return 0, err
		}
		count++
	}
	return count, nil
}

// selfContainedShape reports whether Reshape r's target shape is a
// constant whose result does not depend on its input's dimensions, only on
// its element count.
func selfContainedShape(x *graphIndex, r *ops.Reshape) bool {
	t, ok := x.constant(r.In.Shape)
	if !ok || t.Type != onnx.Int64 {
		return false
	}
	if r.Allowzero != 0 {
		return true
	}
	for _, d := range t.Int64s() {
		if d == 0 {
			return false
		}
	}
	return true
}

// shapeOnlyInput returns the data input of a node that only changes the
// shape of its input.
func shapeOnlyInput(n *onnx.Node) (string, bool) {
	switch op := n.Op.(type) {
	case *ops.Reshape:
		return op.In.Data, true
	case *ops.Flatten:
		return op.In.Input, true
	case *ops.Squeeze:
		return op.In.Data, true
	case *ops.Unsqueeze:
		return op.In.Data, true
	}
	return "", false
}
