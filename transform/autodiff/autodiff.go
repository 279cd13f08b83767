package autodiff

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/transform"
)

// Info is what the transform knows of a value of the forward graph: its
// element type and its shape, -1 for a dim that changes from run to run.
// A rank-0 value has an empty, non-nil Shape.
type Info struct {
	Type  onnx.DataType
	Shape []int64
	// Ints is the value of a small integer tensor (a shape, axes, pads,
	// indices) when it is the same in every probe run; rules read
	// attributes that later opsets pass as inputs from it.
	Ints []int64
}

// Options says what to differentiate.
type Options struct {
	// Loss names the scalar (one element) to differentiate.
	Loss string
	// WRT names the values to differentiate Loss with respect to:
	// floating-point graph inputs or initializers. Each gets a graph
	// output named network.GradName(name).
	WRT []string
	// Info describes every value of the main graph (Probe measures it).
	Info map[string]Info
	// MaxOpset bounds the ai.onnx opset the training graph is raised to
	// when that keeps every node's meaning (0: DefaultMaxOpset).
	MaxOpset int64
}

// DefaultMaxOpset is the highest ai.onnx opset the transform raises a
// model to: the newest that ONNX 1.12's checker (Debian's python3-onnx)
// knows, so an exported training graph passes it.
const DefaultMaxOpset = 17

// Result describes the training graph Gradients returns.
type Result struct {
	Model *onnx.Model
	// Grads pairs each WRT value with its gradient's graph output.
	Grads []network.ParamGrad
	// Opset is the ai.onnx opset of the training graph.
	Opset int64
}

// rule emits the gradient of one node: given the gradients of its outputs
// (dy[i] == "" where none flows) and which inputs need one, it returns
// the gradients of the inputs ("" for none).
type rule func(b *builder, n *onnx.Node, dy []string, need []bool) []string

// rules maps an ai.onnx op type to its rule; the files rules_*.go fill it.
var rules = map[string]rule{}

// register adds rules at package initialisation.
func register(r rule, opTypes ...string) {
	for _, t := range opTypes {
		if _, dup := rules[t]; dup {
			panic("autodiff: two rules for " + t)
		}
		rules[t] = r
	}
}

// Supported reports whether the transform has a gradient rule for an
// operator of the ai.onnx domain.
func Supported(opType string) bool {
	_, ok := rules[opType]
	return ok
}

// Gradients returns a copy of m whose main graph also computes the
// gradients of opts.Loss with respect to opts.WRT, built from standard
// ONNX operators only. Nodes that a standard engine cannot run in
// training (the ai.deep500 losses) must have been rewritten by Lower
// before the model was probed. An operator on a path from a WRT value to
// the loss without a rule is an error wrapping network.ErrUnsupported
// that names it. The caller's model is not modified.
func Gradients(m *onnx.Model, opts Options) (*Result, error) {
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("autodiff: the model has no graph")
	}
	c, err := transform.CloneModel(m)
	if err != nil {
		return nil, fmt.Errorf("autodiff: %w", err)
	}
	info := make(map[string]Info, len(opts.Info))
	for k, v := range opts.Info {
		info[k] = v
	}
	maxOpset := opts.MaxOpset
	if maxOpset == 0 {
		maxOpset = DefaultMaxOpset
	}
	if NeedsLowering(c) {
		return nil, fmt.Errorf("autodiff: the model has ai.deep500 losses: rewrite it with Lower, and probe the result, first")
	}
	opset := raiseOpset(c, maxOpset)
	g := c.Graph
	if _, ok := info[opts.Loss]; !ok {
		return nil, fmt.Errorf("autodiff: the loss %q is not a value of the graph", opts.Loss)
	}
	if n := numElements(info[opts.Loss].Shape); n != 1 {
		return nil, fmt.Errorf("autodiff: the loss %q has shape %v, not one element", opts.Loss, info[opts.Loss].Shape)
	}
	if !info[opts.Loss].Type.IsFloat() {
		return nil, fmt.Errorf("autodiff: the loss %q is a tensor(%v), not of a floating-point type", opts.Loss, info[opts.Loss].Type)
	}
	for _, w := range opts.WRT {
		inf, ok := info[w]
		if !ok {
			return nil, fmt.Errorf("autodiff: %q is not a value of the graph", w)
		}
		if !inf.Type.IsFloat() {
			return nil, fmt.Errorf("autodiff: %q is a tensor(%v): only floating-point values have gradients", w, inf.Type)
		}
	}

	need := pathValues(g, opts.WRT, opts.Loss, info)
	b := newBuilder(g, opset, info)
	forward := slices.Clone(g.Nodes)
	grads := map[string][]string{}
	total := func(v string) string {
		parts := grads[v]
		switch len(parts) {
		case 0:
			return ""
		case 1:
			return parts[0]
		}
		s := b.op("Sum", parts)
		b.setInfo(s, v)
		grads[v] = []string{s}
		return s
	}
	if need[opts.Loss] {
		seed := b.onesLike(opts.Loss)
		b.setInfo(seed, opts.Loss)
		grads[opts.Loss] = []string{seed}
	}
	for i := len(forward) - 1; i >= 0; i-- {
		n := forward[i]
		dy := make([]string, len(n.Outputs))
		any := false
		for j, o := range n.Outputs {
			if o != "" && need[o] {
				dy[j] = total(o)
				any = any || dy[j] != ""
			}
		}
		wants := make([]bool, len(n.Inputs))
		anyIn := false
		for j, in := range n.Inputs {
			wants[j] = in != "" && need[in]
			anyIn = anyIn || wants[j]
		}
		if !any || !anyIn {
			continue
		}
		r, ok := rules[n.OpType]
		if n.Domain != "" || !ok {
			dom := n.Domain
			if dom == "" {
				dom = "ai.onnx"
			}
			return nil, network.Unsupportedf("autodiff: no gradient rule for %s (domain %s), node %v", n.OpType, dom, n)
		}
		if hasGraphAttr(n) {
			return nil, network.Unsupportedf("autodiff: no gradient through the subgraphs of %v", n)
		}
		dx := r(b, n, dy, wants)
		if b.err != nil {
			return nil, fmt.Errorf("autodiff: gradient of %v: %w", n, b.err)
		}
		for j, in := range n.Inputs {
			if j < len(dx) && wants[j] && dx[j] != "" {
				b.setInfo(dx[j], in)
				grads[in] = append(grads[in], dx[j])
			}
		}
	}
	res := &Result{Model: c, Opset: opset}
	for _, w := range opts.WRT {
		gv := total(w)
		if gv == "" {
			gv = b.zerosLike(w)
		}
		name := network.GradName(w)
		if b.used[name] {
			return nil, fmt.Errorf("autodiff: the gradient's name %q is taken by a value of the graph", name)
		}
		b.used[name] = true
		b.graphOutput(gv, name, info[w])
		res.Grads = append(res.Grads, network.ParamGrad{Param: w, Grad: name})
	}
	if b.err != nil {
		return nil, fmt.Errorf("autodiff: %w", b.err)
	}
	if !slices.Contains(g.OutputNames(), opts.Loss) {
		g.Outputs = append(g.Outputs, &onnx.ValueInfo{Name: opts.Loss, Type: typeInfo(info[opts.Loss])})
	}
	return res, nil
}

// typeInfo declares a tensor of inf's type and shape (a dim that changes
// is left without a value).
func typeInfo(inf Info) *onnx.TypeInfo {
	t := &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: inf.Type, HasShape: true}
	for _, d := range inf.Shape {
		if d < 0 {
			t.Shape = append(t.Shape, onnx.Dim{Size: -1})
		} else {
			t.Shape = append(t.Shape, onnx.Dim{Size: d})
		}
	}
	return t
}

func numElements(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

func hasGraphAttr(n *onnx.Node) bool {
	for _, a := range n.Attributes {
		if a.Graph != nil || len(a.Graphs) > 0 {
			return true
		}
	}
	return false
}

// pathValues returns the floating-point values on a path from a WRT value
// to the loss: those whose gradient the backward pass computes.
func pathValues(g *onnx.Graph, wrt []string, loss string, info map[string]Info) map[string]bool {
	from := map[string]bool{}
	for _, w := range wrt {
		from[w] = true
	}
	for _, n := range g.Nodes {
		reached := false
		for _, in := range n.Inputs {
			if in != "" && from[in] {
				reached = true
			}
		}
		if !reached || nonDifferentiable[n.OpType] && n.Domain == "" {
			continue
		}
		for _, o := range n.Outputs {
			// A value the probe could not measure (a sequence, a map) is
			// on the path too: its node then needs a rule, and without
			// one the model is unsupported rather than its gradient
			// silently zero.
			if inf, ok := info[o]; o != "" && (!ok || inf.Type.IsFloat()) {
				from[o] = true
			}
		}
	}
	to := map[string]bool{loss: true}
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		n := g.Nodes[i]
		reached := false
		for _, o := range n.Outputs {
			if o != "" && to[o] {
				reached = true
			}
		}
		if !reached {
			continue
		}
		for _, in := range n.Inputs {
			if in != "" {
				to[in] = true
			}
		}
	}
	need := map[string]bool{}
	for v := range from {
		if to[v] {
			need[v] = true
		}
	}
	return need
}

// nonDifferentiable lists operators whose outputs carry no gradient back
// to their inputs: they depend on their inputs' shapes, or are piecewise
// constant in them (comparisons, rounding, arg-max, random draws shaped
// like an input).
var nonDifferentiable = map[string]bool{
	"Shape": true, "Size": true, "ConstantOfShape": true, "EyeLike": true,
	"Equal": true, "Less": true, "LessOrEqual": true, "Greater": true, "GreaterOrEqual": true,
	"Not": true, "And": true, "Or": true, "Xor": true, "IsNaN": true, "IsInf": true,
	"ArgMax": true, "ArgMin": true, "NonZero": true,
	"Floor": true, "Ceil": true, "Round": true, "Sign": true, "Hardmax": true,
	"RandomNormalLike": true, "RandomUniformLike": true, "Bernoulli": true, "Multinomial": true,
	"OneHot": true, "Range": true,
}
