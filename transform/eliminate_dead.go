package transform

import "github.com/deep500/deep500-go/onnx"

// eliminateDead removes the nodes none of whose outputs reaches a graph
// output, then the initializers nothing reads. An initializer that is also
// a graph input stays: it is part of the graph's interface (a default the
// caller may override).
func eliminateDead(g *onnx.Graph, _ *Options) (int, error) {
	live := map[string]bool{}
	for _, o := range g.Outputs {
		live[o.Name] = true
	}
	drop := map[*onnx.Node]bool{}
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		n := g.Nodes[i]
		needed := false
		for _, o := range n.Outputs {
			if o != "" && live[o] {
				needed = true
				break
			}
		}
		if !needed {
			drop[n] = true
			continue
		}
		for _, in := range n.Inputs {
			live[in] = true
		}
		for _, name := range subgraphReads(n) {
			live[name] = true
		}
	}
	removeNodes(g, drop)
	inputs := map[string]bool{}
	for _, v := range g.Inputs {
		inputs[v.Name] = true
	}
	removed := 0
	kept := g.Initializers[:0]
	for _, in := range g.Initializers {
		if live[in.Name] || inputs[in.Name] {
			kept = append(kept, in)
		} else {
			removed++
		}
	}
	clear(g.Initializers[len(kept):])
	g.Initializers = kept
	keptSparse := g.SparseInitializers[:0]
	for _, in := range g.SparseInitializers {
		if live[in.Name] || inputs[in.Name] {
			keptSparse = append(keptSparse, in)
		} else {
			removed++
		}
	}
	clear(g.SparseInitializers[len(keptSparse):])
	g.SparseInitializers = keptSparse
	return len(drop) + removed, nil
}
