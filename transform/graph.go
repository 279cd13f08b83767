package transform

import (
	"fmt"
	"strconv"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// graphIndex says, for the graph a pass rewrites, who produces and who
// reads each value. A pass builds it once, rewrites with its help, and
// keeps it current through the methods below when it renames values.
type graphIndex struct {
	g         *onnx.Graph
	producer  map[string]*onnx.Node
	consumers map[string][]*onnx.Node // nodes reading the value as an input (each once)
	captured  map[string]bool         // read by a subgraph of some node
	outputs   map[string]bool         // graph outputs
	inputs    map[string]bool         // graph inputs
	inits     map[string]*onnx.Tensor // dense initializers, including overridable ones
	used      map[string]bool         // every name in the graph, for fresh names
}

func indexGraph(g *onnx.Graph) *graphIndex {
	x := &graphIndex{
		g:         g,
		producer:  map[string]*onnx.Node{},
		consumers: map[string][]*onnx.Node{},
		captured:  map[string]bool{},
		outputs:   map[string]bool{},
		inputs:    map[string]bool{},
		inits:     map[string]*onnx.Tensor{},
		used:      map[string]bool{},
	}
	for _, in := range g.Initializers {
		x.inits[in.Name] = in.Tensor
		x.used[in.Name] = true
	}
	for _, in := range g.SparseInitializers {
		x.used[in.Name] = true
	}
	for _, v := range g.Inputs {
		x.inputs[v.Name] = true
		x.used[v.Name] = true
	}
	for _, v := range g.Outputs {
		x.outputs[v.Name] = true
		x.used[v.Name] = true
	}
	for _, n := range g.Nodes {
		x.addNode(n)
	}
	return x
}

// addNode records n's outputs and reads.
func (x *graphIndex) addNode(n *onnx.Node) {
	for _, o := range n.Outputs {
		if o != "" {
			x.producer[o] = n
			x.used[o] = true
		}
	}
	seen := map[string]bool{}
	for _, in := range n.Inputs {
		if in != "" && !seen[in] {
			seen[in] = true
			x.consumers[in] = append(x.consumers[in], n)
		}
	}
	for _, name := range subgraphReads(n) {
		x.captured[name] = true
	}
	if n.Name != "" {
		x.used[n.Name] = true
	}
}

// subgraphReads lists the names n's subgraphs (If branches, Loop and Scan
// bodies) take from enclosing scopes; onnx.Graph.Captures already includes
// what deeper subgraphs take.
func subgraphReads(n *onnx.Node) []string {
	var out []string
	for _, a := range n.Attributes {
		if a.Graph != nil {
			out = append(out, a.Graph.Captures...)
		}
		for _, g := range a.Graphs {
			if g != nil {
				out = append(out, g.Captures...)
			}
		}
	}
	return out
}

// hasSubgraph reports whether n carries a graph attribute.
func hasSubgraph(n *onnx.Node) bool {
	for _, a := range n.Attributes {
		if a.Graph != nil || len(a.Graphs) > 0 {
			return true
		}
	}
	return false
}

// constant returns the value of name when it is fixed for every run: a
// dense initializer that is not also a graph input (an input with an
// initializer is a default the caller may override).
func (x *graphIndex) constant(name string) (*onnx.Tensor, bool) {
	if name == "" || x.inputs[name] {
		return nil, false
	}
	t, ok := x.inits[name]
	return t, ok && t != nil
}

// onlyFeeds reports whether value name reaches nothing but node n: it is
// not a graph output, no subgraph reads it, and n is its only reader.
func (x *graphIndex) onlyFeeds(name string, n *onnx.Node) bool {
	if x.outputs[name] || x.captured[name] {
		return false
	}
	readers := x.consumers[name]
	return len(readers) == 1 && readers[0] == n
}

// unused reports whether nothing reads value name.
func (x *graphIndex) unused(name string) bool {
	return !x.outputs[name] && !x.captured[name] && len(x.consumers[name]) == 0
}

// fresh returns a name not used in the graph: base, or base_1, base_2, ...
func (x *graphIndex) fresh(base string) string {
	name := base
	for i := 1; x.used[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	x.used[name] = true
	return name
}

// addInitializer appends a new initializer to the graph.
func (x *graphIndex) addInitializer(name string, t *onnx.Tensor) {
	x.g.Initializers = append(x.g.Initializers, &onnx.Initializer{Name: name, Tensor: t})
	x.inits[name] = t
	x.used[name] = true
}

// redirectReaders makes every node that reads from read to instead,
// keeping the index current. The caller makes sure no subgraph reads from.
func (x *graphIndex) redirectReaders(from, to string) error {
	for _, n := range x.consumers[from] {
		for i, in := range n.Inputs {
			if in == from {
				n.Inputs[i] = to
			}
		}
		if err := retype(n); err != nil {
			return err
		}
		if !containsNode(x.consumers[to], n) {
			x.consumers[to] = append(x.consumers[to], n)
		}
	}
	delete(x.consumers, from)
	return nil
}

// renameOutput makes producer p write to instead of from, and every
// reader of from read to.
func (x *graphIndex) renameOutput(p *onnx.Node, from, to string) error {
	for i, o := range p.Outputs {
		if o == from {
			p.Outputs[i] = to
		}
	}
	if err := retype(p); err != nil {
		return err
	}
	delete(x.producer, from)
	x.producer[to] = p
	x.used[to] = true
	return x.redirectReaders(from, to)
}

func containsNode(list []*onnx.Node, n *onnx.Node) bool {
	for _, m := range list {
		if m == n {
			return true
		}
	}
	return false
}

// removeNodes drops the nodes marked from the graph, keeping the order of
// the rest.
func removeNodes(g *onnx.Graph, drop map[*onnx.Node]bool) {
	if len(drop) == 0 {
		return
	}
	kept := g.Nodes[:0]
	for _, n := range g.Nodes {
		if !drop[n] {
			kept = append(kept, n)
		}
	}
	clear(g.Nodes[len(kept):])
	g.Nodes = kept
}

// retype rebuilds n's typed operator after its names or attributes
// changed: the typed operators of package ops copy them when built. An
// unknown operator or a call of a model-local function holds no names of
// the node and stays as it is.
func retype(n *onnx.Node) error {
	switch n.Op.(type) {
	case ops.Op:
		if err := onnx.TypeNode(n); err != nil {
			return fmt.Errorf("transform: %w", err)
		}
	}
	return nil
}

// opOf returns n's typed operator as T, if it is one.
func opOf[T ops.Op](n *onnx.Node) (T, bool) {
	op, ok := n.Op.(T)
	return op, ok
}

// CloneModel copies m deeply enough that passes may rewrite the copy's
// graph in place: the model, its main graph, every node and the lists of
// names and attributes are new. Tensors, attribute values, subgraphs and
// functions are shared; passes replace those, never modify them.
func CloneModel(m *onnx.Model) (*onnx.Model, error) {
	c := *m
	c.Opsets = cloneMap(m.Opsets)
	c.Metadata = cloneMap(m.Metadata)
	c.Functions = append([]*onnx.Function(nil), m.Functions...)
	g := *m.Graph
	g.Nodes = make([]*onnx.Node, len(m.Graph.Nodes))
	g.Inputs = append([]*onnx.ValueInfo(nil), m.Graph.Inputs...)
	g.Outputs = append([]*onnx.ValueInfo(nil), m.Graph.Outputs...)
	g.ValueInfo = append([]*onnx.ValueInfo(nil), m.Graph.ValueInfo...)
	g.Initializers = make([]*onnx.Initializer, len(m.Graph.Initializers))
	for i, in := range m.Graph.Initializers {
		cp := *in
		g.Initializers[i] = &cp
	}
	g.SparseInitializers = append([]*onnx.SparseInitializer(nil), m.Graph.SparseInitializers...)
	g.Captures = append([]string(nil), m.Graph.Captures...)
	for i, n := range m.Graph.Nodes {
		cn := *n
		cn.Inputs = append([]string(nil), n.Inputs...)
		cn.Outputs = append([]string(nil), n.Outputs...)
		cn.Attributes = append([]*onnx.Attribute(nil), n.Attributes...)
		cn.Graph = &g
		// The typed operator points back at the node it was built from.
		if err := retype(&cn); err != nil {
			return nil, err
		}
		g.Nodes[i] = &cn
	}
	c.Graph = &g
	return &c, nil
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// producerOp returns the typed operator of the node that writes name, or
// nil.
func (x *graphIndex) producerOp(name string) onnx.Operator {
	if p := x.producer[name]; p != nil {
		return p.Op
	}
	return nil
}

// forgetReader records that n no longer reads name.
func (x *graphIndex) forgetReader(name string, n *onnx.Node) {
	readers := x.consumers[name]
	for i, m := range readers {
		if m == n {
			x.consumers[name] = append(readers[:i:i], readers[i+1:]...)
			return
		}
	}
}

// forgetNode removes n, about to be dropped, from the index.
func (x *graphIndex) forgetNode(n *onnx.Node) {
	for _, in := range n.Inputs {
		if in != "" {
			x.forgetReader(in, n)
		}
	}
	for _, o := range n.Outputs {
		if o != "" && x.producer[o] == n {
			delete(x.producer, o)
		}
	}
}
