package network

import (
	"fmt"

	"github.com/deep500/deep500-go/onnx"
)

// CheckOpsetRaise reports an error unless every ai.onnx node of g and of
// its nested graphs resolves to the same schema version at opset to as at
// from (0: not imported, which resolves as 1): moving the model to opset
// to then keeps the meaning of every node. Calls of model-local functions
// are left out (a function imports its own opsets).
func CheckOpsetRaise(g *onnx.Graph, from, to int64) error {
	if from == 0 {
		from = 1
	}
	return visitNodes(g, func(n *onnx.Node) error {
		if n.Domain != "" {
			return nil
		}
		if _, isCall := n.Op.(*onnx.FunctionCall); isCall {
			return nil
		}
		was, _, okWas := onnx.LookupOperator("", n.OpType, from)
		now, _, okNow := onnx.LookupOperator("", n.OpType, to)
		if okWas != okNow || was != now {
			return fmt.Errorf("node %v would change its schema version from %d to %d there", n, was, now)
		}
		return nil
	})
}

// SetOpset records a raised ai.onnx opset in the nodes of g and of its
// nested graphs (the caller sets the model's import); CheckOpsetRaise
// says whether that keeps their meaning.
func SetOpset(g *onnx.Graph, opset int64) {
	_ = visitNodes(g, func(n *onnx.Node) error {
		if n.Domain == "" {
			if _, isCall := n.Op.(*onnx.FunctionCall); !isCall {
				n.Opset = opset
			}
		}
		return nil
	})
}

// visitNodes calls f for every node of g and of its nested graphs.
func visitNodes(g *onnx.Graph, f func(*onnx.Node) error) error {
	for _, n := range g.Nodes {
		if err := f(n); err != nil {
			return err
		}
		for _, a := range n.Attributes {
			if a.Graph != nil {
				if err := visitNodes(a.Graph, f); err != nil {
					return err
				}
			}
			for _, sg := range a.Graphs {
				if err := visitNodes(sg, f); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
