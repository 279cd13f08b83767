package gorgonia

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

func init() {
	backend.Register(backend.Backend{Name: "gorgonia", New: New, Supports: Supports})
}

// maxPrograms bounds the cache of built graphs per network: a training
// run needs two or three (full batches, the last batch, evaluation).
const maxPrograms = 8

// gnet is the Gorgonia backend's network. It keeps the values that outlive
// one graph (parameters, held feeds, the last gradients) as onnx.Tensors;
// the Gorgonia graphs built from the model read the parameters through
// dense tensors that share their backing slices, so an update by a solver
// or by Feed is seen by every graph.
type gnet struct {
	mu sync.Mutex

	graph     *onnx.Graph
	params    []string                // floating-point initializers, graph order
	isParam   map[string]bool         //
	inits     map[string]*onnx.Tensor // every initializer; parameters are owned copies
	inputs    []*onnx.ValueInfo       // graph inputs without an initializer
	inputDecl map[string]*onnx.ValueInfo
	held      map[string]*onnx.Tensor // values given to graph inputs with Feed
	frozen    map[string]bool
	// skipInputGrads leaves the graph inputs out of backprop
	// (backend.Options.SkipInputGradients).
	skipInputGrads bool
	outputs        []string

	programs []*program
	last     *program // the program of the last run, for Fetch

	grads    map[string]*onnx.Tensor // GradName(x) → gradient of the last backprop
	gradLoss string
}

// New prepares model m for the Gorgonia backend. Every node's operator is
// checked against the visitor first, so a model with an operator Gorgonia
// cannot express fails here with an error wrapping network.ErrUnsupported;
// the graph itself is built at the first run, when the feeds' shapes are
// known.
func New(m *onnx.Model, opts backend.Options) (network.Network, error) {
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("gorgonia: model has no graph")
	}
	g := m.Graph
	n := &gnet{graph: g, isParam: map[string]bool{}, inits: map[string]*onnx.Tensor{},
		inputDecl: map[string]*onnx.ValueInfo{}, held: map[string]*onnx.Tensor{}, frozen: map[string]bool{}}
	if len(g.SparseInitializers) > 0 {
		return nil, network.Unsupportedf("gorgonia: sparse initializers")
	}
	for _, init := range g.Initializers {
		if err := init.Tensor.Check(); err != nil {
			return nil, fmt.Errorf("gorgonia: initializer %q: %w", init.Name, err)
		}
		t := init.Tensor
		if t.Type.IsFloat() {
			t = t.Clone() // owned: solvers and Feed change it in place
			n.params = append(n.params, init.Name)
			n.isParam[init.Name] = true
		}
		n.inits[init.Name] = t
	}
	for _, vi := range g.Inputs {
		if _, ok := n.inits[vi.Name]; ok {
			continue
		}
		n.inputs = append(n.inputs, vi)
		n.inputDecl[vi.Name] = vi
	}
	for _, node := range g.Nodes {
		if err := probe(node); err != nil {
			return nil, fmt.Errorf("gorgonia: %v: %w", node, err)
		}
	}
	for _, out := range g.Outputs {
		n.outputs = append(n.outputs, out.Name)
	}
	n.skipInputGrads = opts.SkipInputGradients
	for _, name := range opts.Frozen {
		if !n.isParam[name] {
			return nil, fmt.Errorf("gorgonia: cannot freeze %q: it is not a parameter", name)
		}
		n.frozen[name] = true
	}
	return n, nil
}

// Inference implements network.Network.
func (n *gnet) Inference(feeds map[string]onnx.Value) (map[string]onnx.Value, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	p, err := n.run(feeds, "")
	if err != nil {
		return nil, err
	}
	return n.collect(p)
}

// InferenceAndBackprop implements network.Network with Gorgonia's
// symbolic differentiation: the program for loss holds the gradient nodes
// gorgonia.Grad added, and the tape machine computes them with the forward
// pass.
func (n *gnet) InferenceAndBackprop(feeds map[string]onnx.Value, loss string) (map[string]onnx.Value, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if loss == "" {
		return nil, fmt.Errorf("gorgonia: backprop needs the name of a loss")
	}
	p, err := n.run(feeds, loss)
	if err != nil {
		return nil, err
	}
	if err := n.readGrads(p); err != nil {
		return nil, err
	}
	return n.collect(p)
}

// Gradients implements network.Network: the parameters that are not
// frozen, in graph order.
func (n *gnet) Gradients(loss string) []network.ParamGrad {
	var out []network.ParamGrad
	for _, p := range n.params {
		if !n.frozen[p] {
			out = append(out, network.ParamGrad{Param: p, Grad: network.GradName(p)})
		}
	}
	return out
}

// run binds the feeds to the program for their shapes and loss (building
// it when new) and runs the tape machine.
func (n *gnet) run(feeds map[string]onnx.Value, loss string) (*program, error) {
	eff := make(map[string]*onnx.Tensor, len(n.inputs))
	for name, v := range feeds {
		vi, isInput := n.inputDecl[name]
		if !isInput && !n.isParam[name] {
			if _, isInit := n.inits[name]; !isInit {
				return nil, fmt.Errorf("gorgonia: %q is not an input of the graph (inputs: %v)", name, n.Inputs())
			}
		}
		t, ok := v.(*onnx.Tensor)
		if !ok || t == nil {
			return nil, network.Unsupportedf("gorgonia: input %q is %s; only tensors are supported", name, onnx.DescribeValue(v))
		}
		if err := t.Check(); err != nil {
			return nil, fmt.Errorf("gorgonia: input %q: %w", name, err)
		}
		if isInput && vi.Type != nil && vi.Type.Kind == onnx.TensorKind && vi.Type.Elem != onnx.Undefined && vi.Type.Elem != t.Type {
			return nil, fmt.Errorf("gorgonia: input %q: expected element type %v, got %v", name, vi.Type.Elem, t.Type)
		}
		if isInput && vi.Type != nil && vi.Type.Kind != onnx.TensorKind && vi.Type.Kind != onnx.UnknownKind {
			return nil, network.Unsupportedf("gorgonia: input %q is a %v; only tensors are supported", name, vi.Type)
		}
		if old, isInit := n.inits[name]; isInit && (old.Type != t.Type || !slices.Equal(old.Shape, t.Shape)) {
			return nil, fmt.Errorf("gorgonia: input %q: expected %v%v like its initializer, got %v%v", name, old.Type, old.Shape, t.Type, t.Shape)
		}
		eff[name] = t
	}
	for _, vi := range n.inputs {
		if _, ok := eff[vi.Name]; ok {
			continue
		}
		if h, ok := n.held[vi.Name]; ok {
			eff[vi.Name] = h
			continue
		}
		return nil, fmt.Errorf("gorgonia: missing feed for input %q (%v)", vi.Name, vi.Type)
	}
	var p *program
	for _, c := range n.programs {
		if c.matches(eff, loss) {
			p = c
			break
		}
	}
	if p == nil {
		var err error
		if p, err = n.build(eff, loss); err != nil {
			return nil, err
		}
		if len(n.programs) == maxPrograms {
			old := n.programs[0]
			n.programs = n.programs[1:]
			old.close()
		}
		n.programs = append(n.programs, p)
	}
	if err := p.bind(n, eff); err != nil {
		return nil, err
	}
	if err := p.exec(); err != nil {
		return nil, err
	}
	n.last = p
	return p, nil
}

// collect converts the outputs of the last run.
func (n *gnet) collect(p *program) (map[string]onnx.Value, error) {
	out := make(map[string]onnx.Value, len(n.outputs))
	for _, name := range n.outputs {
		t, err := p.valueOf(n, name)
		if err != nil {
			return nil, fmt.Errorf("gorgonia: output %q: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// readGrads copies the gradients of the last backprop out of the graph.
func (n *gnet) readGrads(p *program) error {
	grads := make(map[string]*onnx.Tensor, len(p.wrt))
	for _, w := range p.wrt {
		var t *onnx.Tensor
		if w.grad == nil {
			t = onnx.NewTensor(w.typ, w.shape...)
		} else {
			var err error
			if t, err = tensorOf(w.grad.Value(), w.shape); err != nil {
				return fmt.Errorf("gorgonia: gradient of %q: %w", w.name, err)
			}
		}
		grads[network.GradName(w.name)] = t
	}
	n.grads, n.gradLoss = grads, p.loss
	return nil
}

// Fetch implements network.Network: parameters, graph inputs, gradients
// of the last backprop, and every value the last run computed.
func (n *gnet) Fetch(names ...string) ([]onnx.Value, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]onnx.Value, len(names))
	for i, name := range names {
		if g, ok := n.grads[name]; ok {
			out[i] = g.Clone()
			continue
		}
		if t, ok := n.inits[name]; ok {
			out[i] = t.Clone()
			continue
		}
		if n.last != nil {
			if t, err := n.last.valueOf(n, name); err == nil {
				out[i] = t
				continue
			} else if !errors.Is(err, errNoValue) {
				return nil, fmt.Errorf("gorgonia: fetch %q: %w", name, err)
			}
		}
		if h, ok := n.held[name]; ok {
			out[i] = h.Clone()
			continue
		}
		if _, ok := n.inputDecl[name]; ok || n.produced(name) {
			return nil, fmt.Errorf("gorgonia: %q has no value yet (it is computed by Inference)", name)
		}
		return nil, fmt.Errorf("gorgonia: no value named %q in the graph", name)
	}
	return out, nil
}

// produced reports whether a node of the graph outputs name.
func (n *gnet) produced(name string) bool {
	for _, node := range n.graph.Nodes {
		if slices.Contains(node.Outputs, name) {
			return true
		}
	}
	return false
}

// Feed implements network.Network for parameters (and other
// initializers), graph inputs, and gradients of the last backprop.
func (n *gnet) Feed(name string, v onnx.Value) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	t, ok := v.(*onnx.Tensor)
	if !ok || t == nil {
		return fmt.Errorf("gorgonia: feed %q: %s is not a tensor", name, onnx.DescribeValue(v))
	}
	if err := t.Check(); err != nil {
		return fmt.Errorf("gorgonia: feed %q: %w", name, err)
	}
	same := func(old *onnx.Tensor) error {
		if old.Type != t.Type || !slices.Equal(old.Shape, t.Shape) {
			return fmt.Errorf("gorgonia: feed %q: expected %v%v, got %v%v", name, old.Type, old.Shape, t.Type, t.Shape)
		}
		return nil
	}
	if g, ok := n.grads[name]; ok {
		if err := same(g); err != nil {
			return err
		}
		onnx.CopySlice(g.Data, t.Data)
		return nil
	}
	if old, ok := n.inits[name]; ok {
		if err := same(old); err != nil {
			return err
		}
		if n.isParam[name] {
			onnx.CopySlice(old.Data, t.Data) // shared with the graphs
		} else {
			n.inits[name] = t.Clone()
			n.dropPrograms() // a constant may decide shapes
		}
		return nil
	}
	if vi, ok := n.inputDecl[name]; ok {
		if vi.Type != nil && vi.Type.Elem != onnx.Undefined && vi.Type.Elem != t.Type {
			return fmt.Errorf("gorgonia: feed %q: expected element type %v, got %v", name, vi.Type.Elem, t.Type)
		}
		n.held[name] = t.Clone()
		return nil
	}
	if n.produced(name) {
		return network.Unsupportedf("gorgonia: feed %q: replacing an intermediate value is not supported (Gorgonia computes it in the graph)", name)
	}
	return fmt.Errorf("gorgonia: no value named %q in the graph", name)
}

func (n *gnet) dropPrograms() {
	for _, p := range n.programs {
		p.close()
	}
	n.programs, n.last = nil, nil
}

// Params implements network.Network.
func (n *gnet) Params() []string { return append([]string{}, n.params...) }

// Inputs implements network.Network.
func (n *gnet) Inputs() []string {
	var out []string
	for _, vi := range n.inputs {
		out = append(out, vi.Name)
	}
	return out
}

// Outputs implements network.Network.
func (n *gnet) Outputs() []string { return append([]string{}, n.outputs...) }

// AddOutput implements network.Network.
func (n *gnet) AddOutput(name string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if slices.Contains(n.outputs, name) {
		return nil
	}
	_, isInit := n.inits[name]
	_, isInput := n.inputDecl[name]
	if !isInit && !isInput && !n.produced(name) {
		return fmt.Errorf("gorgonia: no value named %q in the graph", name)
	}
	n.outputs = append(n.outputs, name)
	return nil
}

// Close implements network.Network.
func (n *gnet) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.dropPrograms()
	n.grads = nil
	return nil
}

// errNoValue says that a program did not compute a value of that name.
var errNoValue = errors.New("no such value")

// recovered turns a panic inside Gorgonia into an error.
func recovered(what string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: gorgonia panicked: %v", what, r)
	}
}
