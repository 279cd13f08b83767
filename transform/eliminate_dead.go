package transform

import "github.com/deep500/deep500-go/onnx"

// eliminateDead removes the nodes none of whose outputs reaches a graph
// output, then the initializers nothing reads. An initializer that is also
// a graph input stays: it is part of the graph's interface (a default the
// caller may override). The value infos of names nothing defines any
// more go too; they are not counted.
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
	pruneValueInfo(g)
	return len(drop) + removed, nil
}

// pruneValueInfo drops the value infos of names that no node, input or
// initializer defines: values other passes renamed or removed.
func pruneValueInfo(g *onnx.Graph) {
	defined := map[string]bool{}
	for _, v := range g.Inputs {
		defined[v.Name] = true
	}
	for _, in := range g.Initializers {
		defined[in.Name] = true
	}
	for _, in := range g.SparseInitializers {
		defined[in.Name] = true
	}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			defined[o] = true
		}
	}
	kept := g.ValueInfo[:0]
	for _, v := range g.ValueInfo {
		if defined[v.Name] {
			kept = append(kept, v)
		}
	}
	clear(g.ValueInfo[len(kept):])
	g.ValueInfo = kept
}
