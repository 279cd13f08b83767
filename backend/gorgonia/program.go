package gorgonia

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// val is an ONNX value while a graph is built: its Gorgonia node (nil
// for a constant no op has needed as a node yet), its contents when known
// at build time, and its ONNX shape and type. The node's shape is
// gshape(shape), or a Gorgonia scalar where shape is [].
type val struct {
	n     *G.Node
	c     *onnx.Tensor
	shape []int
	typ   onnx.DataType
}

// wrtEntry is a value backprop differentiates the loss with respect to.
type wrtEntry struct {
	name  string
	node  *G.Node // the input or parameter node; nil when the graph does not use it
	grad  *G.Node // nil when the loss does not depend on it
	typ   onnx.DataType
	shape []int
}

// derivedInput is a node whose value the backend computes in Go from the
// feeds before every run (one-hot encoded class labels).
type derivedInput struct {
	node    *G.Node
	compute func(feeds map[string]*onnx.Tensor) (*tensor.Dense, error)
}

// program is one built Gorgonia graph: for one combination of feed types
// and shapes (and contents of the feeds read as constants), and one loss
// ("" for inference only).
type program struct {
	loss       string
	g          *G.ExprGraph
	vm         G.VM
	vals       map[string]*val
	sigs       map[string]feedSig
	consts     map[string]*onnx.Tensor
	inputNodes map[string]*G.Node
	paramNodes map[string]*G.Node
	derived    []derivedInput
	wrt        []wrtEntry
}

type feedSig struct {
	typ   onnx.DataType
	shape []int
}

func (p *program) matches(feeds map[string]*onnx.Tensor, loss string) bool {
	if p.loss != loss || len(p.sigs) != len(feeds) {
		return false
	}
	for name, t := range feeds {
		s, ok := p.sigs[name]
		if !ok || s.typ != t.Type || !slices.Equal(s.shape, t.Shape) {
			return false
		}
	}
	for name, c := range p.consts {
		if !reflect.DeepEqual(c.Data, feeds[name].Data) {
			return false
		}
	}
	return true
}

func (p *program) close() {
	if p.vm != nil {
		p.vm.Close()
		p.vm = nil
	}
}

// bind gives the input nodes their values for the next run: copies of the
// feeds, the network's parameters (shared), and the derived inputs.
func (p *program) bind(n *gnet, feeds map[string]*onnx.Tensor) (err error) {
	defer recovered("gorgonia: binding the feeds", &err)
	for name, node := range p.inputNodes {
		d, err := copyDenseOf(feeds[name])
		if err != nil {
			return fmt.Errorf("gorgonia: input %q: %w", name, err)
		}
		if err := G.Let(node, d); err != nil {
			return fmt.Errorf("gorgonia: input %q: %w", name, err)
		}
	}
	for name, node := range p.paramNodes {
		var d *tensor.Dense
		if f, ok := feeds[name]; ok {
			d, err = copyDenseOf(f)
		} else {
			d, err = denseOf(n.inits[name])
		}
		if err != nil {
			return fmt.Errorf("gorgonia: parameter %q: %w", name, err)
		}
		if err := G.Let(node, d); err != nil {
			return fmt.Errorf("gorgonia: parameter %q: %w", name, err)
		}
	}
	for _, d := range p.derived {
		v, err := d.compute(feeds)
		if err != nil {
			return fmt.Errorf("gorgonia: %w", err)
		}
		if err := G.Let(d.node, v); err != nil {
			return fmt.Errorf("gorgonia: %v: %w", d.node.Name(), err)
		}
	}
	return nil
}

// exec runs the tape machine once.
func (p *program) exec() (err error) {
	defer recovered("gorgonia: running the graph", &err)
	if p.vm == nil {
		return nil // every value is a constant
	}
	p.vm.Reset()
	if err := p.vm.RunAll(); err != nil {
		return fmt.Errorf("gorgonia: running the graph: %w", err)
	}
	return nil
}

// valueOf returns a copy of a value of the last run.
func (p *program) valueOf(n *gnet, name string) (*onnx.Tensor, error) {
	v, ok := p.vals[name]
	if !ok {
		return nil, errNoValue
	}
	if v.n == nil {
		return v.c.Clone(), nil
	}
	return tensorOf(v.n.Value(), v.shape)
}

// build makes the program for feeds and loss: a new expression graph with
// a node for every ONNX value, the gradient nodes of loss, and a tape
// machine.
func (n *gnet) build(feeds map[string]*onnx.Tensor, loss string) (p *program, err error) {
	p = &program{loss: loss, g: G.NewGraph(), vals: map[string]*val{}, sigs: map[string]feedSig{},
		consts: map[string]*onnx.Tensor{}, inputNodes: map[string]*G.Node{}, paramNodes: map[string]*G.Node{}}
	for name, t := range feeds {
		p.sigs[name] = feedSig{t.Type, append([]int(nil), t.Shape...)}
	}
	b := &builder{n: n, p: p, feeds: feeds}
	for _, node := range n.graph.Nodes {
		if err := b.compile(node); err != nil {
			return nil, err
		}
	}
	for _, out := range n.outputs {
		if _, err := b.get(out); err != nil {
			return nil, fmt.Errorf("gorgonia: output %q: %w", out, err)
		}
	}
	if loss != "" {
		if err := b.differentiate(loss); err != nil {
			return nil, err
		}
	}
	defer recovered("gorgonia: compiling the graph", &err)
	if len(p.g.AllNodes()) > 0 {
		p.vm = G.NewTapeMachine(p.g, G.TraceExec())
	}
	return p, nil
}

// compile visits one node; a panic inside Gorgonia becomes an error
// naming the node.
func (b *builder) compile(node *onnx.Node) (err error) {
	defer recovered(fmt.Sprintf("gorgonia: %v", node), &err)
	b.node = node
	if err := ops.Visit(node, b); err != nil {
		return fmt.Errorf("gorgonia: %v: %w", node, err)
	}
	return nil
}

// differentiate adds the gradient nodes of loss with respect to every
// parameter that is not frozen and every floating-point graph input.
func (b *builder) differentiate(loss string) (err error) {
	defer recovered("gorgonia: differentiating "+loss, &err)
	lv, err := b.get(loss)
	if err != nil {
		return fmt.Errorf("gorgonia: loss %q: %w", loss, err)
	}
	if !lv.typ.IsFloat() || onnx.NumElements(lv.shape) != 1 {
		return fmt.Errorf("gorgonia: loss %q must be a floating-point scalar, is %v%v", loss, lv.typ, lv.shape)
	}
	cost, err := b.nodeOf(lv)
	if err != nil {
		return err
	}
	if !cost.IsScalar() {
		if cost, err = G.Sum(cost); err != nil {
			return fmt.Errorf("gorgonia: loss %q: %w", loss, err)
		}
	}
	reach := map[*G.Node]bool{}
	var walk func(*G.Node)
	walk = func(x *G.Node) {
		if reach[x] {
			return
		}
		reach[x] = true
		for it := b.p.g.From(x.ID()); it.Next(); {
			walk(it.Node().(*G.Node))
		}
	}
	walk(cost)
	p, n := b.p, b.n
	add := func(name string, node *G.Node, t onnx.DataType, shape []int) {
		p.wrt = append(p.wrt, wrtEntry{name: name, node: node, typ: t, shape: shape})
	}
	for _, name := range n.params {
		if n.frozen[name] {
			continue
		}
		t := n.inits[name]
		add(name, p.paramNodes[name], t.Type, t.Shape)
	}
	for _, vi := range n.inputs {
		t := b.feeds[vi.Name]
		if !n.skipInputGrads && t != nil && (t.Type == onnx.Float || t.Type == onnx.Double) {
			add(vi.Name, p.inputNodes[vi.Name], t.Type, t.Shape)
		}
	}
	var wrt G.Nodes
	var idx []int
	for i, w := range p.wrt {
		if w.node != nil && reach[w.node] {
			wrt = append(wrt, w.node)
			idx = append(idx, i)
		}
	}
	if len(wrt) == 0 {
		return nil
	}
	grads, err := G.Grad(cost, wrt...)
	if err != nil {
		return network.Unsupportedf("gorgonia cannot differentiate %q: %v", loss, err)
	}
	for k, i := range idx {
		p.wrt[i].grad = grads[k]
	}
	return nil
}

// builder builds one program's graph. It is an ops.Visitor: the embedded
// UnsupportedVisitor answers "unsupported" for every operator, and the
// files of this package override the operators Gorgonia can express
// (elementwise.go, nn.go, shape.go, gather.go, reduce.go, loss.go).
type builder struct {
	ops.UnsupportedVisitor
	n     *gnet
	p     *program
	feeds map[string]*onnx.Tensor
	node  *onnx.Node
	// probing is set by Supports and New's check: nothing is built, and a
	// Visit method stops with errProbe at its first input.
	probing bool
}

// errProbe ends a Visit method of a probing builder once it has accepted
// the operator's attributes.
var errProbe = errors.New("probe: operator accepted")

// probe reports whether the visitor has a mapping for the node's operator
// (and accepts the attributes it checks before reading inputs).
func probe(node *onnx.Node) (err error) {
	defer recovered("probing the operator", &err)
	b := &builder{probing: true, node: node}
	if err := ops.Visit(node, b); errors.Is(err, network.ErrUnsupported) {
		return err
	}
	return nil
}

// Supports reports whether the backend maps (domain, opType) at schema
// version since, asking the visitor itself in probing mode with the
// operator's defaults.
func Supports(domain, opType string, since int) (ok bool) {
	op, err := ops.New(domain, opType, since)
	if err != nil || op.SinceVersion() != since {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	b := &builder{probing: true, node: op.Node()}
	return !errors.Is(op.Accept(b), network.ErrUnsupported)
}

// get resolves a required input by name.
func (b *builder) get(name string) (*val, error) {
	if b.probing {
		return nil, errProbe
	}
	if name == "" {
		return nil, fmt.Errorf("a required input is missing")
	}
	if v, ok := b.p.vals[name]; ok {
		return v, nil
	}
	p, n := b.p, b.n
	if n.isParam[name] {
		t := n.inits[name]
		if f, ok := b.feeds[name]; ok {
			t = f
		}
		node, err := b.newNode(t, "param:"+name, shareValue)
		if err != nil {
			return nil, fmt.Errorf("parameter %q: %w", name, err)
		}
		p.paramNodes[name] = node
		v := &val{n: node, shape: t.Shape, typ: t.Type}
		p.vals[name] = v
		return v, nil
	}
	if t, ok := n.inits[name]; ok {
		if f, ok := b.feeds[name]; ok {
			p.consts[name] = f.Clone()
			t = f
		}
		v := &val{c: t, shape: t.Shape, typ: t.Type}
		p.vals[name] = v
		return v, nil
	}
	if t, ok := b.feeds[name]; ok {
		if _, err := dtypeOf(t.Type); err != nil {
			return nil, fmt.Errorf("input %q: %w", name, err)
		}
		node, err := b.newNode(t, "input:"+name, noValue)
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", name, err)
		}
		p.inputNodes[name] = node
		v := &val{n: node, shape: t.Shape, typ: t.Type}
		p.vals[name] = v
		return v, nil
	}
	return nil, fmt.Errorf("input %q is not a graph input, an initializer, or an output of an earlier node", name)
}

// getNode is get for an input that an op reads as a Gorgonia node.
func (b *builder) getNode(name string) (*val, *G.Node, error) {
	v, err := b.get(name)
	if err != nil {
		return nil, nil, err
	}
	nd, err := b.nodeOf(v)
	return v, nd, err
}

// getFloat is getNode for an input that must be float or double.
func (b *builder) getFloat(name string) (*val, *G.Node, error) {
	v, err := b.get(name)
	if err != nil {
		return nil, nil, err
	}
	if v.typ != onnx.Float && v.typ != onnx.Double {
		return nil, nil, network.Unsupportedf("input %q of type %v (Gorgonia computes this operator in float and double only)", name, v.typ)
	}
	nd, err := b.nodeOf(v)
	return v, nd, err
}

// constant returns the contents of an input that must be known when the
// graph is built: an initializer, a Constant's output, or a fed graph
// input (whose contents then key the program).
func (b *builder) constant(name string) (*onnx.Tensor, error) {
	if b.probing {
		return nil, errProbe
	}
	v, err := b.get(name)
	if err != nil {
		return nil, err
	}
	if v.c != nil && !b.n.isParam[name] {
		return v.c, nil
	}
	if t, ok := b.feeds[name]; ok {
		b.p.consts[name] = t.Clone()
		return t, nil
	}
	if b.n.isParam[name] {
		return b.n.inits[name], nil
	}
	return nil, network.Unsupportedf("input %q must be a constant (an initializer, a Constant or a graph input): Gorgonia's graphs have static shapes", name)
}

// optionalConstant is constant for an optional input: nil when omitted.
func (b *builder) optionalConstant(name string) (*onnx.Tensor, error) {
	if name == "" {
		return nil, nil
	}
	return b.constant(name)
}

// optionalInt64s reads an optional constant integer input; nil when the
// input is absent.
func (b *builder) optionalInt64s(name string) ([]int64, error) {
	c, err := b.optionalConstant(name)
	if err != nil || c == nil {
		return nil, err
	}
	return int64sOf(c)
}

// nodeOf returns v's node, making a constant node for a value known at
// build time.
func (b *builder) nodeOf(v *val) (*G.Node, error) {
	if v.n != nil {
		return v.n, nil
	}
	nd, err := b.newNode(v.c, fmt.Sprintf("const:%p", v), copyValue)
	if err != nil {
		return nil, err
	}
	v.n = nd
	return nd, nil
}

// How newNode gives a node its value.
const (
	noValue    = iota // bound before every run (graph inputs)
	copyValue         // a copy of the tensor (constants)
	shareValue        // the tensor's own data (parameters)
)

// newNode makes an input node of t's type and shape, with the value that
// mode says.
func (b *builder) newNode(t *onnx.Tensor, name string, mode int) (*G.Node, error) {
	dt, err := dtypeOf(t.Type)
	if err != nil {
		return nil, err
	}
	if onnx.NumElements(t.Shape) == 0 {
		return nil, network.Unsupportedf("empty tensors (shape %v)", t.Shape)
	}
	shp := gshape(t.Shape)
	opts := []G.NodeConsOpt{G.WithShape(shp...), G.WithName(name)}
	if mode != noValue {
		var d *tensor.Dense
		if mode == shareValue {
			d, err = denseOf(t)
		} else {
			d, err = copyDenseOf(t)
		}
		if err != nil {
			return nil, err
		}
		opts = append(opts, G.WithValue(d))
	}
	return G.NewTensor(b.p.g, dt, len(shp), opts...), nil
}

// set records the value an op computed for output name ("" drops it).
func (b *builder) set(name string, n *G.Node, shape []int, typ onnx.DataType) error {
	if name == "" {
		return nil
	}
	if n == nil {
		return fmt.Errorf("output %q: no node", name)
	}
	want := onnx.NumElements(shape)
	got := 1
	if !n.IsScalar() {
		got = n.Shape().TotalSize()
	}
	if got != want {
		return fmt.Errorf("output %q: gorgonia's result has shape %v, ONNX's is %v", name, n.Shape(), shape)
	}
	b.p.vals[name] = &val{n: n, shape: append([]int{}, shape...), typ: typ}
	return nil
}

// setConst records an output known at build time.
func (b *builder) setConst(name string, t *onnx.Tensor) {
	if name != "" {
		b.p.vals[name] = &val{c: t, shape: t.Shape, typ: t.Type}
	}
}
