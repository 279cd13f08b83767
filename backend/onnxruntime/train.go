package onnxruntime

import (
	"fmt"
	"slices"
	"strings"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/transform/autodiff"
)

// Training runs the training graph that package autodiff derives from the
// model: the forward pass, the loss and the gradients in one session.
//
// That session takes every floating-point parameter as a graph input,
// fed from the values the network holds, where the inference session
// keeps them as initializers: an optimizer changes every parameter every
// step, and a new session per step is what a changed initializer costs:
// on LeNet (batch 64, one thread) rebuilding the session took 2.6 ms
// against 1.1 ms for the forward pass it serves, while feeding the
// parameters as inputs costs one copy of 0.2 MB. The gradient graph is
// specialised to the shapes of the feeds, which the probe measured; a
// batch of another size (the last of an epoch) gets a session of its own,
// kept beside the first.

// trainKey identifies a training session: the loss and the feeds' shapes.
type trainKey string

func makeTrainKey(loss string, feeds map[string]onnx.Value) trainKey {
	names := make([]string, 0, len(feeds))
	for k := range feeds {
		names = append(names, k)
	}
	slices.Sort(names)
	var sb strings.Builder
	sb.WriteString(loss)
	for _, k := range names {
		sb.WriteString("\x00")
		sb.WriteString(k)
		if t, ok := feeds[k].(*onnx.Tensor); ok {
			fmt.Fprintf(&sb, "%v%v", t.Type, t.Shape)
		}
	}
	return trainKey(sb.String())
}

// trainer is one training session.
type trainer struct {
	inner *net
	grads []network.ParamGrad // the wrt values and their gradients' outputs
}

// maxTrainers bounds the training sessions kept (one per batch shape).
const maxTrainers = 4

// trainable lists the parameters that get gradients, and the inputs
// unless the options leave them out.
func (n *net) trainable(feeds map[string]onnx.Value) []string {
	var wrt []string
	for _, p := range n.params {
		if !slices.Contains(n.frozen, p) {
			wrt = append(wrt, p)
		}
	}
	if !n.skipInputGrads {
		for _, in := range n.feedable {
			if t, ok := feeds[in].(*onnx.Tensor); ok && t.Type.IsFloat() {
				wrt = append(wrt, in)
			}
		}
	}
	return wrt
}

// trainerFor returns the training session for loss and the feeds' shapes,
// building it on first use.
func (n *net) trainerFor(loss string, feeds map[string]onnx.Value) (*trainer, error) {
	key := makeTrainKey(loss, feeds)
	if tr, ok := n.trainers[key]; ok {
		return tr, nil
	}
	if !n.known[loss] {
		return nil, fmt.Errorf("onnxruntime: loss %q is not a value of the graph", loss)
	}
	wrt := n.trainable(feeds)
	if len(wrt) == 0 {
		return nil, fmt.Errorf("onnxruntime: loss %q does not depend on any parameter or floating-point input", loss)
	}
	res, err := n.trainingGraph(loss, feeds, wrt)
	if err != nil {
		return nil, err
	}
	outs := slices.Clone(n.outputs)
	for _, pg := range res.Grads {
		outs = append(outs, pg.Grad)
	}
	in, err := n.session(res.Model, outs)
	if err != nil {
		return nil, err
	}
	if len(n.trainers) >= maxTrainers {
		for k, tr := range n.trainers {
			tr.inner.Close()
			delete(n.trainers, k)
			break
		}
	}
	tr := &trainer{inner: in, grads: res.Grads}
	n.trainers[key] = tr
	return tr, nil
}

// trainingGraph derives the training graph of loss for the feeds'
// shapes, with gradients of wrt.
func (n *net) trainingGraph(loss string, feeds map[string]onnx.Value, wrt []string) (*autodiff.Result, error) {
	build := func(pm *onnx.Model) (network.Network, error) {
		return New(pm, backend.Options{Threads: n.threads})
	}
	info, err := autodiff.Probe(build, paramsAsInputs(n.model, n.params), n.withParams(feeds))
	if err != nil {
		return nil, fmt.Errorf("onnxruntime: training graph: %w", err)
	}
	res, err := autodiff.Gradients(n.model, autodiff.Options{Loss: loss, WRT: wrt, Info: info})
	if err != nil {
		return nil, fmt.Errorf("onnxruntime: training graph: %w", err)
	}
	return res, nil
}

// session makes an ONNX Runtime network of a training graph m that takes
// the parameters as inputs and outputs outs.
func (n *net) session(m *onnx.Model, outs []string) (*net, error) {
	inner, err := New(paramsAsInputs(m, n.params), backend.Options{Threads: n.threads})
	if err != nil {
		return nil, fmt.Errorf("onnxruntime: training graph: %w", err)
	}
	in := inner.(*net)
	for _, o := range outs {
		if err := in.AddOutput(o); err != nil {
			in.Close()
			return nil, fmt.Errorf("onnxruntime: training graph: %w", err)
		}
	}
	return in, nil
}

// withParams returns feeds and every parameter's current value.
func (n *net) withParams(feeds map[string]onnx.Value) map[string]onnx.Value {
	all := make(map[string]onnx.Value, len(feeds)+len(n.params))
	for k, v := range feeds {
		all[k] = v
	}
	for _, p := range n.params {
		if _, fed := all[p]; !fed {
			all[p] = n.values[p]
		}
	}
	return all
}

// paramsAsInputs returns a copy of m whose floating-point initializers
// (params) are graph inputs without defaults.
func paramsAsInputs(m *onnx.Model, params []string) *onnx.Model {
	c := *m
	g := *m.Graph
	g.Initializers = nil
	g.Inputs = slices.Clone(m.Graph.Inputs)
	declared := map[string]bool{}
	for _, in := range g.Inputs {
		declared[in.Name] = true
	}
	for _, in := range m.Graph.Initializers {
		if !slices.Contains(params, in.Name) {
			g.Initializers = append(g.Initializers, in)
			continue
		}
		if !declared[in.Name] {
			g.Inputs = append(g.Inputs, &onnx.ValueInfo{Name: in.Name, Type: onnx.TensorTypeOf(in.Tensor)})
		}
	}
	// Nodes keep pointing at the original graph; only the lists differ,
	// which is all the session graph is built from.
	c.Graph = &g
	return &c
}

// InferenceAndBackprop runs the training graph: the outputs, and the
// gradients of loss kept for Fetch (under network.GradName).
func (n *net) InferenceAndBackprop(feeds map[string]onnx.Value, loss string) (map[string]onnx.Value, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	all, err := n.feedsOf(feeds)
	if err != nil {
		return nil, err
	}
	tr, err := n.trainerFor(loss, all)
	if err != nil {
		return nil, err
	}
	got, err := tr.inner.Inference(n.withParams(all))
	if err != nil {
		return nil, err
	}
	n.grads = map[string]*onnx.Tensor{}
	n.lastLoss = loss
	for _, pg := range tr.grads {
		t, ok := got[pg.Grad].(*onnx.Tensor)
		if !ok {
			return nil, fmt.Errorf("onnxruntime: the training graph gave no gradient %q", pg.Grad)
		}
		n.grads[pg.Grad] = t
	}
	res := make(map[string]onnx.Value, len(n.outputs))
	n.last = map[string]onnx.Value{}
	for _, o := range n.outputs {
		res[o] = got[o]
		n.last[o] = got[o]
	}
	n.lastFeeds = all
	n.ranAtLeast = true
	return res, nil
}

// Gradients pairs every parameter that is not frozen with its gradient.
func (n *net) Gradients(loss string) []network.ParamGrad {
	if !n.known[loss] {
		return nil
	}
	var out []network.ParamGrad
	for _, p := range n.params {
		if !slices.Contains(n.frozen, p) {
			out = append(out, network.ParamGrad{Param: p, Grad: network.GradName(p)})
		}
	}
	return out
}

// UpdateParams implements network.ParamUpdater: fn changes the held
// parameters in place; the inference session takes them when it next runs.
func (n *net) UpdateParams(loss string, fn func(param, grad *onnx.Tensor, name string) error) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.grads == nil || n.lastLoss != loss {
		return fmt.Errorf("onnxruntime: no gradients of %q: run InferenceAndBackprop first", loss)
	}
	for _, pg := range n.Gradients(loss) {
		p := n.values[pg.Param]
		g := n.grads[pg.Grad]
		if g == nil {
			g = onnx.NewTensor(p.Type, p.Shape...)
			n.grads[pg.Grad] = g
		}
		if err := fn(p, g, pg.Param); err != nil {
			return err
		}
		n.dirty[pg.Param] = true
	}
	if n.sess != nil {
		n.destroySession()
	}
	n.last = nil
	return nil
}

// feedsOf checks feeds and completes them with the inputs held by Feed.
func (n *net) feedsOf(feeds map[string]onnx.Value) (map[string]onnx.Value, error) {
	for name := range feeds {
		if !slices.Contains(n.feedable, name) {
			return nil, fmt.Errorf("onnxruntime: %q is not an input of the graph (inputs: %v)", name, n.feedable)
		}
	}
	all := make(map[string]onnx.Value, len(n.feedable))
	for _, name := range n.feedable {
		v, ok := feeds[name]
		if !ok {
			v = n.held[name]
		}
		if v == nil {
			return nil, fmt.Errorf("onnxruntime: missing feed for input %q (%v)", name, n.declared[name])
		}
		all[name] = v
	}
	return all, nil
}
