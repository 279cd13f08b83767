package onnx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	onnxpb "github.com/deep500/deep500-go/onnx/pb"
	"google.golang.org/protobuf/proto"
)

// Load reads an ONNX model file. External tensor data is read relative to
// the file's folder. Errors name the file.
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	m, err := Decode(data, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", path, err)
	}
	return m, nil
}

// Decode parses a serialized ModelProto. dir is the folder external tensor
// data is read relative to ("" forbids external data).
func Decode(data []byte, dir string) (*Model, error) {
	var p onnxpb.ModelProto
	if err := proto.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("not a valid ONNX model (truncated or corrupt protobuf): %w", err)
	}
	return ModelFromProto(&p, dir)
}

// ModelFromProto builds the typed model from its protobuf message: every
// graph is converted, sorted and checked, and every node gets its typed
// operator.
func ModelFromProto(p *onnxpb.ModelProto, dir string) (*Model, error) {
	if p.GetGraph() == nil {
		return nil, errors.New("model has no graph")
	}
	m := &Model{
		IRVersion:       p.GetIrVersion(),
		ProducerName:    p.GetProducerName(),
		ProducerVersion: p.GetProducerVersion(),
		Domain:          p.GetDomain(),
		ModelVersion:    p.GetModelVersion(),
		DocString:       p.GetDocString(),
		Dir:             dir,
		Opsets:          opsetsFromProto(p.GetOpsetImport()),
	}
	if len(p.GetMetadataProps()) > 0 {
		m.Metadata = map[string]string{}
		for _, kv := range p.GetMetadataProps() {
			m.Metadata[kv.GetKey()] = kv.GetValue()
		}
	}
	d := &decoder{model: m, dir: dir}
	// Functions first, so that calls to them in the graph resolve.
	for _, fp := range p.GetFunctions() {
		f := &Function{
			Name:       fp.GetName(),
			Domain:     fp.GetDomain(),
			Inputs:     fp.GetInput(),
			Outputs:    fp.GetOutput(),
			Attributes: fp.GetAttribute(),
			DocString:  fp.GetDocString(),
			Opsets:     opsetsFromProto(fp.GetOpsetImport()),
		}
		if f.Name == "" {
			return nil, errors.New("model-local function without a name")
		}
		if m.Function(f.Domain, f.Name) != nil {
			return nil, fmt.Errorf("model-local function %s.%s defined twice", f.Domain, f.Name)
		}
		m.Functions = append(m.Functions, f)
	}
	for i, fp := range p.GetFunctions() {
		f := m.Functions[i]
		nodes, err := d.nodes(fp.GetNode(), nil, f.Opsets)
		if err != nil {
			return nil, fmt.Errorf("function %s.%s: %w", f.Domain, f.Name, err)
		}
		defined := map[string]bool{}
		for _, in := range f.Inputs {
			defined[in] = true
		}
		sorted, free, err := sortNodes(nodes, defined)
		if err != nil {
			return nil, fmt.Errorf("function %s.%s: %w", f.Domain, f.Name, err)
		}
		if len(free) > 0 {
			return nil, fmt.Errorf("function %s.%s: %s", f.Domain, f.Name, undefinedError(sorted, free[0]))
		}
		f.Nodes = sorted
	}
	g, err := d.graph(p.GetGraph(), nil, m.Opsets)
	if err != nil {
		return nil, err
	}
	m.Graph = g
	return m, nil
}

// opsetsFromProto maps each imported domain to its version. A model with no
// imports predates them and means opset 1 of the default domain.
func opsetsFromProto(ps []*onnxpb.OperatorSetIdProto) map[string]int64 {
	out := map[string]int64{}
	for _, o := range ps {
		out[CanonicalDomain(o.GetDomain())] = o.GetVersion()
	}
	if len(ps) == 0 {
		out[""] = 1
	}
	return out
}

// decoder carries what graph conversion needs from the model.
type decoder struct {
	model *Model
	dir   string
}

// graph converts a GraphProto; parent is the enclosing graph of a subgraph.
func (d *decoder) graph(p *onnxpb.GraphProto, parent *Graph, opsets map[string]int64) (*Graph, error) {
	g := &Graph{Name: p.GetName(), DocString: p.GetDocString(), Parent: parent}
	where := func(err error) error {
		if g.Name != "" {
			return fmt.Errorf("graph %q: %w", g.Name, err)
		}
		return err
	}
	defined := map[string]bool{}
	for _, tp := range p.GetInitializer() {
		t, err := TensorFromProto(tp, d.dir)
		if err != nil {
			return nil, where(fmt.Errorf("initializer %q: %w", tp.GetName(), err))
		}
		g.Initializers = append(g.Initializers, &Initializer{Name: tp.GetName(), Tensor: t})
		defined[tp.GetName()] = true
	}
	for _, sp := range p.GetSparseInitializer() {
		name := sp.GetValues().GetName()
		s, err := SparseTensorFromProto(sp, d.dir)
		if err != nil {
			return nil, where(fmt.Errorf("sparse initializer %q: %w", name, err))
		}
		g.SparseInitializers = append(g.SparseInitializers, &SparseInitializer{Name: name, Tensor: s})
		defined[name] = true
	}
	var err error
	if g.Inputs, err = valueInfos(p.GetInput()); err != nil {
		return nil, where(fmt.Errorf("input %w", err))
	}
	if g.Outputs, err = valueInfos(p.GetOutput()); err != nil {
		return nil, where(fmt.Errorf("output %w", err))
	}
	if g.ValueInfo, err = valueInfos(p.GetValueInfo()); err != nil {
		return nil, where(fmt.Errorf("value_info %w", err))
	}
	for _, in := range g.Inputs {
		defined[in.Name] = true
	}
	nodes, err := d.nodes(p.GetNode(), g, opsets)
	if err != nil {
		return nil, where(err)
	}
	sorted, free, err := sortNodes(nodes, defined)
	if err != nil {
		return nil, where(err)
	}
	g.Nodes = sorted
	if parent == nil && len(free) > 0 {
		return nil, where(errors.New(undefinedError(sorted, free[0])))
	}
	// A subgraph may return a value of an enclosing scope unchanged: that
	// is a capture too. In the main graph it is an error.
	produced := map[string]bool{}
	for _, n := range sorted {
		for _, o := range n.Outputs {
			produced[o] = true
		}
	}
	for _, o := range g.Outputs {
		if defined[o.Name] || produced[o.Name] || contains(free, o.Name) {
			continue
		}
		if parent == nil {
			return nil, where(fmt.Errorf("graph output %q is not produced by any node, input or initializer", o.Name))
		}
		free = append(free, o.Name)
	}
	g.Captures = free
	return g, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func undefinedError(nodes []*Node, name string) string {
	for _, n := range nodes {
		for _, in := range n.Inputs {
			if in == name {
				return fmt.Sprintf("node %v: input %q is not produced by any node, nor a graph input or initializer", n, name)
			}
		}
	}
	return fmt.Sprintf("value %q is used but never defined", name)
}

func valueInfos(ps []*onnxpb.ValueInfoProto) ([]*ValueInfo, error) {
	out := make([]*ValueInfo, 0, len(ps))
	for _, p := range ps {
		vi := &ValueInfo{Name: p.GetName()}
		if p.GetType() != nil {
			t, err := TypeInfoFromProto(p.GetType())
			if err != nil {
				return nil, fmt.Errorf("%q: %w", p.GetName(), err)
			}
			vi.Type = t
		}
		out = append(out, vi)
	}
	return out, nil
}

// nodes converts NodeProtos and types their operators. g is nil for a
// function body.
func (d *decoder) nodes(ps []*onnxpb.NodeProto, g *Graph, opsets map[string]int64) ([]*Node, error) {
	out := make([]*Node, 0, len(ps))
	for i, p := range ps {
		n := &Node{
			Name:      p.GetName(),
			OpType:    p.GetOpType(),
			Domain:    CanonicalDomain(p.GetDomain()),
			Inputs:    p.GetInput(),
			Outputs:   p.GetOutput(),
			DocString: p.GetDocString(),
			Graph:     g,
		}
		if n.OpType == "" {
			return nil, fmt.Errorf("node %d (%q) has no op_type", i, n.Name)
		}
		for _, ap := range p.GetAttribute() {
			a, err := d.attribute(ap, g, opsets)
			if err != nil {
				return nil, fmt.Errorf("node %v: attribute %q: %w", n, ap.GetName(), err)
			}
			n.Attributes = append(n.Attributes, a)
		}
		if err := d.typeOperator(n, opsets); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// typeOperator gives n its typed operator: a model-local function call, the
// registered operator for the imported opset, or an UnknownOperator.
func (d *decoder) typeOperator(n *Node, opsets map[string]int64) error {
	n.Opset = opsets[n.Domain]
	if f := d.model.Function(n.Domain, n.OpType); f != nil {
		n.Op = &FunctionCall{Function: f}
		return nil
	}
	opset := n.Opset
	if _, imported := opsets[n.Domain]; !imported && n.Domain == "" {
		opset = 1
	}
	since, ctor, ok := LookupOperator(n.Domain, n.OpType, opset)
	if !ok {
		n.Op = &UnknownOperator{Type: n.OpType, Dom: n.Domain, Opset: opset}
		return nil
	}
	return construct(n, since, ctor)
}

// TypeNode gives a node built in code its typed operator: the one
// registered for its domain and op type at n.Opset, validated, as loading
// a model does. The typed operator copies the node's names and attributes,
// so a node changed afterwards must be typed again. An operator not
// registered (package ops not imported, or no such version) is an error.
func TypeNode(n *Node) error {
	since, ctor, ok := LookupOperator(n.Domain, n.OpType, n.Opset)
	if !ok {
		return fmt.Errorf("node %v: operator %s (domain %q) is not registered at opset %d; import package ops", n, n.OpType, n.Domain, n.Opset)
	}
	return construct(n, since, ctor)
}

// construct builds and validates n's operator with the registered
// constructor of schema version since.
func construct(n *Node, since int, ctor OperatorConstructor) error {
	op, err := ctor(n, since)
	if err != nil {
		return fmt.Errorf("node %v: %w", n, err)
	}
	if v, ok := op.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return fmt.Errorf("node %v: %w", n, err)
		}
	}
	n.Op = op
	return nil
}

func (d *decoder) attribute(p *onnxpb.AttributeProto, g *Graph, opsets map[string]int64) (*Attribute, error) {
	a := &Attribute{
		Name:        p.GetName(),
		Type:        AttrType(p.GetType()),
		RefAttrName: p.GetRefAttrName(),
		Float:       p.GetF(),
		Int:         p.GetI(),
		String:      string(p.GetS()),
		Floats:      p.GetFloats(),
		Ints:        p.GetInts(),
	}
	if a.Type == AttrUndefined {
		a.Type = inferAttrType(p)
	}
	for _, s := range p.GetStrings() {
		a.Strings = append(a.Strings, string(s))
	}
	var err error
	if p.GetT() != nil {
		if a.Tensor, err = TensorFromProto(p.GetT(), d.dir); err != nil {
			return nil, err
		}
	}
	if p.GetSparseTensor() != nil {
		if a.SparseTensor, err = SparseTensorFromProto(p.GetSparseTensor(), d.dir); err != nil {
			return nil, err
		}
	}
	if p.GetTp() != nil {
		if a.TypeProto, err = TypeInfoFromProto(p.GetTp()); err != nil {
			return nil, err
		}
	}
	for _, tp := range p.GetTensors() {
		t, err := TensorFromProto(tp, d.dir)
		if err != nil {
			return nil, err
		}
		a.Tensors = append(a.Tensors, t)
	}
	for _, sp := range p.GetSparseTensors() {
		s, err := SparseTensorFromProto(sp, d.dir)
		if err != nil {
			return nil, err
		}
		a.SparseTensors = append(a.SparseTensors, s)
	}
	for _, tp := range p.GetTypeProtos() {
		t, err := TypeInfoFromProto(tp)
		if err != nil {
			return nil, err
		}
		a.TypeProtos = append(a.TypeProtos, t)
	}
	// Subgraphs see the enclosing graph's names; inside a function body
	// there is no enclosing Graph value, only the body's own names.
	if p.GetG() != nil {
		if a.Graph, err = d.graph(p.GetG(), g, opsets); err != nil {
			return nil, fmt.Errorf("subgraph: %w", err)
		}
	}
	for _, gp := range p.GetGraphs() {
		sg, err := d.graph(gp, g, opsets)
		if err != nil {
			return nil, fmt.Errorf("subgraph: %w", err)
		}
		a.Graphs = append(a.Graphs, sg)
	}
	return a, nil
}

// inferAttrType guesses the type of an attribute written without one
// (IR version 1 files), from the field that is set.
func inferAttrType(p *onnxpb.AttributeProto) AttrType {
	switch {
	case p.F != nil:
		return AttrFloat
	case p.I != nil:
		return AttrInt
	case p.S != nil:
		return AttrString
	case p.T != nil:
		return AttrTensor
	case p.G != nil:
		return AttrGraph
	case len(p.Floats) > 0:
		return AttrFloats
	case len(p.Ints) > 0:
		return AttrInts
	case len(p.Strings) > 0:
		return AttrStrings
	case len(p.Tensors) > 0:
		return AttrTensors
	case len(p.Graphs) > 0:
		return AttrGraphs
	}
	return AttrUndefined
}

// sortNodes orders nodes so each comes after the producers of its inputs
// (and of the names its subgraphs capture), keeping the file's order where
// it already is valid. defined holds the names available before any node.
// It returns the names used but defined neither here nor by a node (for a
// subgraph, those come from enclosing scopes), in first-use order.
func sortNodes(nodes []*Node, defined map[string]bool) (sorted []*Node, free []string, err error) {
	producer := map[string]int{}
	for i, n := range nodes {
		for _, o := range n.Outputs {
			if o == "" {
				continue
			}
			if defined[o] {
				return nil, nil, fmt.Errorf("node %v: output %q redefines a graph input or initializer", n, o)
			}
			if j, dup := producer[o]; dup {
				return nil, nil, fmt.Errorf("node %v: output %q is also produced by node %v", n, o, nodes[j])
			}
			producer[o] = i
		}
	}
	isFree := map[string]bool{}
	deps := make([][]int, len(nodes))       // producers each node waits for
	dependents := make([][]int, len(nodes)) // reverse edges
	for i, n := range nodes {
		for _, name := range nodeReads(n) {
			if defined[name] {
				continue
			}
			if j, ok := producer[name]; ok {
				if j == i {
					return nil, nil, fmt.Errorf("node %v: reads its own output %q", n, name)
				}
				deps[i] = append(deps[i], j)
				dependents[j] = append(dependents[j], i)
				continue
			}
			if !isFree[name] {
				isFree[name] = true
				free = append(free, name)
			}
		}
	}
	// Kahn's algorithm, always taking the lowest-numbered ready node so a
	// sorted file keeps its order.
	waiting := make([]int, len(nodes))
	for i := range nodes {
		waiting[i] = len(deps[i])
	}
	done := make([]bool, len(nodes))
	sorted = make([]*Node, 0, len(nodes))
	ready := &intHeap{}
	for i := range nodes {
		if waiting[i] == 0 {
			ready.push(i)
		}
	}
	for ready.len() > 0 {
		i := ready.pop()
		done[i] = true
		sorted = append(sorted, nodes[i])
		for _, k := range dependents[i] {
			waiting[k]--
			if waiting[k] == 0 {
				ready.push(k)
			}
		}
	}
	if len(sorted) != len(nodes) {
		for i, n := range nodes {
			if !done[i] {
				return nil, nil, fmt.Errorf("node %v is part of a cycle", n)
			}
		}
	}
	return sorted, free, nil
}

// nodeReads lists the names a node reads: its non-empty inputs and the
// names its subgraphs take from enclosing scopes.
func nodeReads(n *Node) []string {
	var out []string
	for _, in := range n.Inputs {
		if in != "" {
			out = append(out, in)
		}
	}
	for _, a := range n.Attributes {
		if a.Graph != nil {
			out = append(out, a.Graph.Captures...)
		}
		for _, g := range a.Graphs {
			out = append(out, g.Captures...)
		}
	}
	return out
}

// intHeap is a min-heap of node indices.
type intHeap struct{ a []int }

func (h *intHeap) len() int { return len(h.a) }

func (h *intHeap) push(x int) {
	h.a = append(h.a, x)
	for i := len(h.a) - 1; i > 0; {
		p := (i - 1) / 2
		if h.a[p] <= h.a[i] {
			break
		}
		h.a[p], h.a[i] = h.a[i], h.a[p]
		i = p
	}
}

func (h *intHeap) pop() int {
	top := h.a[0]
	last := len(h.a) - 1
	h.a[0] = h.a[last]
	h.a = h.a[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && h.a[l] < h.a[m] {
			m = l
		}
		if r < last && h.a[r] < h.a[m] {
			m = r
		}
		if m == i {
			break
		}
		h.a[m], h.a[i] = h.a[i], h.a[m]
		i = m
	}
	return top
}
