package autodiff

import (
	"fmt"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
	"github.com/deep500/deep500-go/transform"
)

// NeedsLowering reports whether m's main graph has a node Lower rewrites.
func NeedsLowering(m *onnx.Model) bool {
	if m == nil || m.Graph == nil {
		return false
	}
	for _, n := range m.Graph.Nodes {
		if lowerable(n) {
			return true
		}
	}
	return false
}

func lowerable(n *onnx.Node) bool {
	switch n.Op.(type) {
	case *ops.MeanSquaredError, *ops.L1Loss, *ops.BinaryCrossEntropyWithLogits:
		return true
	}
	return false
}

// Lower returns a copy of m whose main graph has the project's own loss
// operators (ai.deep500 MeanSquaredError, L1Loss,
// BinaryCrossEntropyWithLogits) rewritten as the standard ONNX operators
// that compute them, so that any ONNX engine runs the model and the
// gradient transform differentiates it. A model without them is returned
// as it is.
func Lower(m *onnx.Model) (*onnx.Model, error) {
	if !NeedsLowering(m) {
		return m, nil
	}
	c, err := transform.CloneModel(m)
	if err != nil {
		return nil, fmt.Errorf("lower: %w", err)
	}
	g := c.Graph
	opset := c.Opsets[""]
	if opset == 0 {
		// The losses were the only ai.onnx-free nodes: import the opset
		// the lowered nodes need.
		opset = 13
		c.Opsets[""] = opset
	}
	b := newBuilder(g, opset, map[string]Info{})
	orig := g.Nodes
	var out []*onnx.Node
	for _, n := range orig {
		if !lowerable(n) {
			out = append(out, n)
			continue
		}
		mark := len(g.Nodes)
		lowerLoss(b, g, n)
		if b.err != nil {
			return nil, fmt.Errorf("lower %v: %w", n, b.err)
		}
		tail := g.Nodes[mark:]
		// The last node computes the loss: give it the node's output name.
		last := tail[len(tail)-1]
		last.Outputs[0] = n.Outputs[0]
		if err := onnx.TypeNode(last); err != nil {
			return nil, fmt.Errorf("lower %v: %w", n, err)
		}
		out = append(out, tail...)
		g.Nodes = g.Nodes[:mark]
	}
	g.Nodes = out
	used := false
	for _, n := range g.Nodes {
		if onnx.CanonicalDomain(n.Domain) == network.LossDomain {
			used = true
		}
	}
	if !used {
		delete(c.Opsets, network.LossDomain)
	}
	return c, nil
}

// lowerLoss appends the standard nodes computing a loss node; the last
// one appended yields the loss.
func lowerLoss(b *builder, g *onnx.Graph, n *onnx.Node) {
	dt := onnx.Float
	if t := g.TypeOf(n.Outputs[0]); t != nil && t.Elem != onnx.Undefined {
		dt = t.Elem
	} else if t := g.TypeOf(n.Inputs[0]); t != nil && t.Elem != onnx.Undefined {
		dt = t.Elem
	}
	var elem, reduction string
	switch op := n.Op.(type) {
	case *ops.MeanSquaredError:
		d := b.sub(op.In.Input, op.In.Target)
		elem, reduction = b.mul(d, d), op.Reduction
	case *ops.L1Loss:
		elem, reduction = b.op("Abs", []string{b.sub(op.In.Input, op.In.Target)}), op.Reduction
	case *ops.BinaryCrossEntropyWithLogits:
		// w [(1 - y) x + (1 + (p - 1) y) softplus(-x)]
		x, y := op.In.Input, op.In.Target
		one := b.scalar(1, dt)
		sp := b.op("Softplus", []string{b.neg(x)})
		coef := one
		if op.In.PosWeight != "" {
			coef = b.add(one, b.mul(b.sub(op.In.PosWeight, one), y))
		}
		elem = b.add(b.mul(b.sub(one, y), x), b.mul(coef, sp))
		if op.In.Weight != "" {
			elem = b.mul(op.In.Weight, elem)
		}
		reduction = op.Reduction
	}
	switch reduction {
	case "none":
		b.op("Identity", []string{elem})
	case "sum":
		b.op("ReduceSum", []string{elem}, attrInt("keepdims", 0))
	default:
		b.op("ReduceMean", []string{elem}, attrInt("keepdims", 0))
	}
}

// raiseOpset moves m's ai.onnx opset to the highest version up to max at
// which every node of the domain resolves to the schema version it has
// now (so its meaning is unchanged), and returns the opset the training
// graph's new nodes use. Functions pin the opset: a model with local
// functions keeps its own.
func raiseOpset(m *onnx.Model, max int64) int64 {
	cur := m.Opsets[""]
	if cur >= max || len(m.Functions) > 0 {
		return cur
	}
	for t := max; t > cur; t-- {
		if network.CheckOpsetRaise(m.Graph, cur, t) == nil {
			network.SetOpset(m.Graph, t)
			m.Opsets[""] = t
			return t
		}
	}
	return cur
}
