package onnxruntime

import (
	"fmt"
	"slices"

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
	// restored is set by SetState until the next step succeeds: a state
	// tensor the step's graph needs and SetState did not give is then an
	// error, not a fresh zero buffer.
	restored bool
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
		if !ok && o.restored && o.t > 1 {
			o.t--
			return 0, fmt.Errorf("onnxruntime: the restored %s state has no %q, which the update graph reads", o.name, st.Input)
		}
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
		o.t-- // nothing of the step is kept
		return 0, err
	}
	for _, st := range s.step.State {
		o.state[st.Input] = out[st.Next]
	}
	o.restored = false
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

// stepState names the step count in the state of this backend's native
// optimizers (an int64 scalar: the graph's step input is t as a float,
// which bias corrections and SGD's first step read). The other names are
// the graph's state inputs, "optimizer.<kind>.<param>", whose tensors have
// the parameter's type and shape.
const stepState = "optimizer.step"

var _ optimizer.Stateful = (*graphOptimizer)(nil)

// stateValues lists the state tensors the next step reads: those of a
// session built with the live hyperparameters, or else those AppendUpdate
// will declare, which SetState must know before the first step builds one.
// The kinds below follow AppendUpdate's; the round trip in the tests
// restores a state taken from a built session into an optimizer that has
// none, so a drift between the two fails there.
func (o *graphOptimizer) stateValues() []autodiff.StateValue {
	fixed := o.hp
	fixed.LR = o.built.LR
	if fixed == o.built {
		for _, s := range o.sessions {
			return s.step.State
		}
	}
	type kind struct {
		name string
		init float64
	}
	var kinds []kind
	switch o.name {
	case "sgd", "momentum", "nesterov":
		if o.hp.Momentum != 0 {
			kinds = []kind{{"momentum", 0}}
		}
	case "adam", "adamw":
		kinds = []kind{{"m", 0}, {"v", 0}}
	case "adagrad":
		kinds = []kind{{"sum", o.hp.InitialAcc}}
	case "rmsprop":
		kinds = []kind{{"square_avg", 0}}
		if o.hp.Centered {
			kinds = append(kinds, kind{"grad_avg", 0})
		}
		if o.hp.Momentum > 0 {
			kinds = append(kinds, kind{"momentum", 0})
		}
	}
	var out []autodiff.StateValue
	for _, pg := range o.net.Gradients(o.loss) {
		for _, k := range kinds {
			out = append(out, autodiff.StateValue{Param: pg.Param, Input: "optimizer." + k.name + "." + pg.Param, Init: k.init})
		}
	}
	return out
}

// State implements optimizer.Stateful: the step count and, once a step
// has been taken, every state tensor the update graph reads.
func (o *graphOptimizer) State() (map[string]*onnx.Tensor, error) {
	n := o.net
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string]*onnx.Tensor{stepState: onnx.Scalar(int64(o.t))}
	if o.t == 0 {
		return out, nil
	}
	for _, sv := range o.stateValues() {
		t, ok := o.state[sv.Input].(*onnx.Tensor)
		if !ok {
			return nil, fmt.Errorf("onnxruntime: the %s optimizer holds no state %q after %d steps", o.name, sv.Input, o.t)
		}
		out[sv.Input] = t.Clone()
	}
	return out, nil
}

// SetState implements optimizer.Stateful. Everything is checked before
// anything is replaced, so an error leaves the optimizer as it was.
func (o *graphOptimizer) SetState(in map[string]*onnx.Tensor) error {
	n := o.net
	n.mu.Lock()
	defer n.mu.Unlock()
	bad := func(name, format string, args ...any) error {
		return fmt.Errorf("onnxruntime %s state: tensor %q %s", o.name, name, fmt.Sprintf(format, args...))
	}
	st, ok := in[stepState]
	if !ok {
		return bad(stepState, "is missing")
	}
	if st == nil || st.Check() != nil || st.Type != onnx.Int64 || len(st.Shape) != 0 {
		return bad(stepState, "is not an int64 scalar")
	}
	t := st.Int64s()[0]
	if t < 0 || int64(int(t)) != t {
		return bad(stepState, "holds the count %d", t)
	}
	next := map[string]onnx.Value{}
	if t > 0 {
		for _, sv := range o.stateValues() {
			x, ok := in[sv.Input]
			if !ok {
				return bad(sv.Input, "is missing (the state of %q after %d steps)", sv.Param, t)
			}
			if x == nil {
				return bad(sv.Input, "is nil")
			}
			if err := x.Check(); err != nil {
				return bad(sv.Input, "is malformed: %v", err)
			}
			p := n.values[sv.Param]
			if p == nil {
				return fmt.Errorf("onnxruntime: parameter %q of state %q is not held", sv.Param, sv.Input)
			}
			if x.Type != p.Type || !slices.Equal(x.Shape, p.Shape) {
				return bad(sv.Input, "is %v of shape %v, want %v of shape %v as parameter %q", x.Type, x.Shape, p.Type, p.Shape, sv.Param)
			}
			next[sv.Input] = x.Clone()
		}
	}
	names := make([]string, 0, len(in))
	for name := range in {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if _, ok := next[name]; ok || name == stepState {
			continue
		}
		if t == 0 {
			return bad(name, "comes with a step count of 0: before the first step there is no other state")
		}
		return bad(name, "is not a state tensor of this optimizer (its names: %s and optimizer.<kind>.<param>)", stepState)
	}
	o.state, o.t, o.restored = next, int(t), true
	return nil
}
