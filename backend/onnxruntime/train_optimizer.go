package onnxruntime

import (
	"fmt"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/transform/autodiff"
)

// The native optimizers of this backend are the reference update rules
// written as ONNX (autodiff.AppendUpdate) at the end of the training
// graph: a step is one run of ONNX Runtime, which reads the parameters
// and the optimizer's state and gives back their next values.

var _ optimizer.BackendOptimizers = (*net)(nil)

// NativeOptimizer implements optimizer.BackendOptimizers.
func (n *net) NativeOptimizer(name string, hp optimizer.Hyperparams, loss string) (optimizer.TunableOptimizer, error) {
	if _, err := optimizer.New(name, hp); err != nil {
		return nil, err
	}
	supported := false
	for _, u := range autodiff.UpdateOptimizers() {
		supported = supported || u == name
	}
	if !supported {
		return nil, network.Unsupportedf("onnxruntime: the %s update is not written as ONNX (native optimizers here: %v); use --impl reference", name, autodiff.UpdateOptimizers())
	}
	if hp.ClipNorm > 0 {
		return nil, network.Unsupportedf("onnxruntime: gradient clipping is not part of the update written as ONNX; use --impl reference")
	}
	if !n.known[loss] {
		return nil, fmt.Errorf("onnxruntime: loss %q is not a value of the graph", loss)
	}
	o := &graphOptimizer{net: n, name: name, hp: hp, built: hp, loss: loss,
		sessions: map[trainKey]*updateSession{}, state: map[string]onnx.Value{}}
	n.mu.Lock()
	n.closers = append(n.closers, o.closeSessions)
	n.mu.Unlock()
	return o, nil
}

// graphOptimizer is a native optimizer of this backend.
type graphOptimizer struct {
	net      *net
	name     string
	hp       optimizer.Hyperparams // live: a schedule changes it between steps
	built    optimizer.Hyperparams // what the sessions were built with
	loss     string
	sessions map[trainKey]*updateSession
	state    map[string]onnx.Value // the optimizer's state, by input name
	t        int                   // steps taken
}

type updateSession struct {
	inner *net
	step  *autodiff.UpdateStep
	grads []network.ParamGrad
}

// Hyperparameters implements optimizer.Tunable. The learning rate is an
// input of the graph; a change of another hyperparameter rebuilds the
// sessions (the state carries over).
func (o *graphOptimizer) Hyperparameters() *optimizer.Hyperparams { return &o.hp }

// Step implements optimizer.Optimizer.
func (o *graphOptimizer) Step(batch map[string]onnx.Value) (float64, error) {
	n := o.net
	n.mu.Lock()
	defer n.mu.Unlock()
	all, err := n.feedsOf(batch)
	if err != nil {
		return 0, err
	}
	// The learning rate is an input; any other change rebuilds.
	fixed := o.hp
	fixed.LR = o.built.LR
	if fixed != o.built {
		o.closeSessions()
		o.built = o.hp
	}
	key := makeTrainKey(o.loss, all)
	s, ok := o.sessions[key]
	if !ok {
		if s, err = o.build(all); err != nil {
			return 0, err
		}
		o.sessions[key] = s
	}
	o.t++
	in := n.withParams(all)
	in[s.step.LR] = onnx.Scalar(float32(o.hp.LR))
	in[s.step.Step] = onnx.Scalar(float32(o.t))
	for _, st := range s.step.State {
		v, ok := o.state[st.Input]
		if !ok {
			p := n.values[st.Param]
			t := onnx.NewTensor(p.Type, p.Shape...)
			if st.Init != 0 {
				fill(t, st.Init)
			}
			v = t
		}
		in[st.Input] = v
	}
	out, err := s.inner.Inference(in)
	if err != nil {
		o.t--
		return 0, err
	}
	loss, err := network.LossValue(out, o.loss)
	if err != nil {
		return 0, err
	}
	for _, st := range s.step.State {
		o.state[st.Input] = out[st.Next]
	}
	for _, pn := range s.step.Next {
		t, ok := out[pn.Grad].(*onnx.Tensor)
		if !ok {
			return 0, fmt.Errorf("onnxruntime: the update gave no %q", pn.Grad)
		}
		n.values[pn.Param] = t
		n.dirty[pn.Param] = true
	}
	n.grads = map[string]*onnx.Tensor{}
	n.lastLoss = o.loss
	for _, pg := range s.grads {
		if t, ok := out[pg.Grad].(*onnx.Tensor); ok {
			n.grads[pg.Grad] = t
		}
	}
	n.last = map[string]onnx.Value{}
	for _, name := range n.outputs {
		n.last[name] = out[name]
	}
	n.lastFeeds = all
	n.ranAtLeast = true
	n.destroySession()
	return loss, nil
}

// build makes the session of a step for the feeds' shapes.
func (o *graphOptimizer) build(feeds map[string]onnx.Value) (*updateSession, error) {
	n := o.net
	var wrt []string
	for _, pg := range n.Gradients(o.loss) {
		wrt = append(wrt, pg.Param)
	}
	if len(wrt) == 0 {
		return nil, fmt.Errorf("onnxruntime: no parameter to train")
	}
	res, err := n.trainingGraph(o.loss, feeds, wrt)
	if err != nil {
		return nil, err
	}
	st, err := autodiff.AppendUpdate(res, o.name, o.hp)
	if err != nil {
		return nil, fmt.Errorf("onnxruntime: %w", err)
	}
	outs := append([]string{}, n.outputs...)
	for _, pg := range res.Grads {
		outs = append(outs, pg.Grad)
	}
	for _, pn := range st.Next {
		outs = append(outs, pn.Grad)
	}
	for _, s := range st.State {
		outs = append(outs, s.Next)
	}
	inner, err := n.session(st.Model, outs)
	if err != nil {
		return nil, err
	}
	return &updateSession{inner: inner, step: st, grads: res.Grads}, nil
}

func (o *graphOptimizer) closeSessions() {
	for k, s := range o.sessions {
		s.inner.Close()
		delete(o.sessions, k)
	}
}

// fill sets every element of a float tensor to v.
func fill(t *onnx.Tensor, v float64) {
	switch d := t.Data.(type) {
	case []float32:
		for i := range d {
			d[i] = float32(v)
		}
	case []float64:
		for i := range d {
			d[i] = v
		}
	}
}
