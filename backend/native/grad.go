package native

import (
	"errors"
	"fmt"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Reverse-mode differentiation over the compiled plan.
//
// InferenceAndBackprop runs the forward plan, which leaves every activation
// in its slot (once: kernels reuse their output buffers), then runs a
// backward plan for the loss: the nodes on a path from a trainable value
// to the loss, in reverse order, each compiled once by gradBuilder into a
// gradKernel that reads the gradients of its outputs and adds to those of
// its inputs. Gradients live in per-slot buffers reused from step to step,
// so a training step allocates nothing after the first once every kernel
// reuses its scratch.

// gradKernel computes the gradient contributions of one node's inputs from
// its forward inputs and outputs (in slots) and its outputs' gradients.
type gradKernel func(slots []onnx.Value, g *gradState) error

type gradStep struct {
	node *onnx.Node
	run  gradKernel
}

// backwardPlan is the backward pass for one loss.
type backwardPlan struct {
	loss  int
	steps []gradStep // reverse topological order
	state *gradState
}

// gradState holds the gradients of one backward pass, indexed by slot.
type gradState struct {
	grads []*onnx.Tensor // the gradient accumulated this pass; nil: none flowed
	bufs  []outputBuffer // storage of grads, reused across passes
	want  []bool         // slot lies on a path from a trainable value to the loss
	names map[string]int // gradient name to the slot of its value
	order []network.ParamGrad
}

// of returns the gradient that has reached slot, or nil when none did (the
// slot does not influence the loss, or its consumers were not reached).
func (g *gradState) of(slot int) *onnx.Tensor {
	if slot < 0 {
		return nil
	}
	return g.grads[slot]
}

// wants reports whether a gradient for slot is needed.
func (g *gradState) wants(slot int) bool { return slot >= 0 && g.want[slot] }

// add accumulates t into the gradient of slot. t may be a kernel's scratch
// buffer: it is copied (first contribution) or added (later ones), never
// kept; or the gradient itself (written through dest), which is left as
// it is.
func (g *gradState) add(slot int, t *onnx.Tensor) error {
	if !g.wants(slot) || t == nil {
		return nil
	}
	cur := g.grads[slot]
	if cur == t {
		return nil
	}
	if cur == nil {
		dst := g.bufs[slot].tensor(t.Type, t.Shape)
		onnx.CopySlice(dst.Data, t.Data)
		g.grads[slot] = dst
		return nil
	}
	if cur.Type != t.Type || !sameShape(cur.Shape, t.Shape) {
		return fmt.Errorf("gradient of tensor(%v)%v meets one of tensor(%v)%v", cur.Type, cur.Shape, t.Type, t.Shape)
	}
	switch d := cur.Data.(type) {
	case []float32:
		addInto(d, t.Data.([]float32))
	case []float64:
		addInto(d, t.Data.([]float64))
	default:
		return network.Unsupportedf("gradients of tensor(%v)", cur.Type)
	}
	return nil
}

// buffer returns a reusable tensor for slot's gradient to be written into
// directly (first contribution only): ok is false when a gradient is
// already there, and the caller must compute into scratch and add.
func (g *gradState) buffer(slot int, typ onnx.DataType, shape []int) (t *onnx.Tensor, ok bool) {
	if !g.wants(slot) || g.grads[slot] != nil {
		return nil, false
	}
	t = g.bufs[slot].tensor(typ, shape)
	g.grads[slot] = t
	return t, true
}

// dest returns the tensor a kernel writes its contribution to slot's
// gradient into, every element written and none read: the gradient's own
// buffer when no other contribution came first, so that nothing is copied,
// else the scratch s. add completes the contribution either way.
func (g *gradState) dest(slot int, s *gradScratch, typ onnx.DataType, shape []int) *onnx.Tensor {
	if t, ok := g.buffer(slot, typ, shape); ok {
		return t
	}
	return s.buf.tensor(typ, shape)
}

func addInto[T floatElem](dst, src []T) {
	for i, v := range src {
		dst[i] += v
	}
}

// trainable reports which slots backprop differentiates with respect to:
// the parameters that are not frozen and, unless skipInputGrads, the
// floating-point graph inputs.
func (e *executor) trainable() []bool {
	t := make([]bool, len(e.slots))
	for _, p := range e.params {
		if !e.frozen[p] {
			t[e.slotOf[p]] = true
		}
	}
	if e.skipInputGrads {
		return t
	}
	for _, in := range e.inputs {
		if e.initializers[in.name] {
			continue
		}
		if in.declared == nil || in.declared.Kind != onnx.TensorKind || in.declared.Elem.IsFloat() {
			t[in.slot] = true
		}
	}
	return t
}

// differentiableInput reports whether the schema lets gradients flow
// through input i of node n (unknown counts as yes; the rule decides).
func differentiableInput(n *onnx.Node, i int) bool {
	op, ok := n.Op.(ops.Op)
	if !ok || rnnStateInput(op, i) || gridSampleGridInput(op, i) {
		return true
	}
	s := ops.Schema(op.Domain(), op.OpType(), op.SinceVersion())
	if s == nil {
		return true
	}
	p := s.InputParam(i)
	return p == nil || p.Differentiation != ops.NonDifferentiable
}

// backwardFor returns the backward plan of loss, compiling it on first use.
func (e *executor) backwardFor(loss string) (*backwardPlan, error) {
	if bp, ok := e.backward[loss]; ok {
		return bp, nil
	}
	lossSlot, ok := e.slotOf[loss]
	if !ok {
		return nil, fmt.Errorf("native: loss %q is not a value of the graph", loss)
	}
	bp, err := e.compileBackward(lossSlot, e.trainable(), len(e.plan))
	if err != nil {
		return nil, err
	}
	if !bp.state.want[lossSlot] {
		return nil, fmt.Errorf("native: loss %q does not depend on any parameter or floating-point input", loss)
	}
	st := bp.state
	for _, p := range e.params {
		if !e.frozen[p] {
			st.order = append(st.order, network.ParamGrad{Param: p, Grad: network.GradName(p)})
			st.names[network.GradName(p)] = e.slotOf[p]
		}
	}
	for _, in := range e.inputs {
		if !e.initializers[in.name] && !e.skipInputGrads {
			st.names[network.GradName(in.name)] = in.slot
		}
	}
	if e.backward == nil {
		e.backward = map[string]*backwardPlan{}
	}
	e.backward[loss] = bp
	e.lastGrads = st
	return bp, nil
}

// compileBackward builds the backward pass of the value in lossSlot with
// respect to the slots marked trainable, over the first upTo steps of the
// plan (all of them for a loss; those before it for a Gradient node).
func (e *executor) compileBackward(lossSlot int, trainable []bool, upTo int) (*backwardPlan, error) {
	if len(e.fusedAway) > 0 {
		return nil, fmt.Errorf("native: backprop needs the values that fusion left out; build the network with Optimize off to train it")
	}
	n := len(e.slots)
	// Forward: which slots depend on a trainable value.
	active := make([]bool, n)
	copy(active, trainable)
	plan := e.plan[:upTo]
	for _, s := range plan {
		dep := false
		for i, name := range s.node.Inputs {
			if name != "" && active[e.slotOf[name]] && differentiableInput(s.node, i) {
				dep = true
			}
		}
		if dep {
			for _, name := range s.node.Outputs {
				if name != "" {
					active[e.slotOf[name]] = true
				}
			}
		}
	}
	// Backward: which slots the loss depends on.
	reaches := make([]bool, n)
	reaches[lossSlot] = true
	var relevant []int // plan indices, reverse order
	for i := len(plan) - 1; i >= 0; i-- {
		s := plan[i]
		hit := false
		for _, name := range s.node.Outputs {
			if name != "" && reaches[e.slotOf[name]] && active[e.slotOf[name]] {
				hit = true
			}
		}
		if !hit {
			continue
		}
		relevant = append(relevant, i)
		for j, name := range s.node.Inputs {
			if name != "" && active[e.slotOf[name]] && differentiableInput(s.node, j) {
				reaches[e.slotOf[name]] = true
			}
		}
	}
	st := &gradState{
		grads: make([]*onnx.Tensor, n),
		bufs:  make([]outputBuffer, n),
		want:  make([]bool, n),
		names: map[string]int{},
	}
	for i := range st.want {
		st.want[i] = active[i] && reaches[i]
	}
	bp := &backwardPlan{loss: lossSlot, state: st}
	gb := &gradBuilder{e: e}
	for _, i := range relevant {
		s := plan[i]
		k, err := gb.compile(s.node)
		if err != nil {
			return nil, err
		}
		bp.steps = append(bp.steps, gradStep{node: s.node, run: k})
	}
	return bp, nil
}

// runBackward runs a backward plan after the forward pass: the gradient of
// the loss value is seeded with ones (for a one-element loss, the usual
// dL/dL = 1; for a larger one, the gradient of the sum of its elements).
func (e *executor) runBackward(bp *backwardPlan) error {
	lt, ok := e.slots[bp.loss].(*onnx.Tensor)
	if !ok || lt == nil {
		return fmt.Errorf("native: %q is %s, not a tensor", e.slotNames[bp.loss], onnx.DescribeValue(e.slots[bp.loss]))
	}
	st := bp.state
	clear(st.grads)
	seed := st.bufs[bp.loss].tensor(lt.Type, lt.Shape)
	switch d := seed.Data.(type) {
	case []float32:
		for i := range d {
			d[i] = 1
		}
	case []float64:
		for i := range d {
			d[i] = 1
		}
	default:
		return network.Unsupportedf("differentiating a value of type %v", lt.Type)
	}
	st.grads[bp.loss] = seed
	for i := range bp.steps {
		if err := e.runGradStep(&bp.steps[i], st); err != nil {
			return err
		}
	}
	return nil
}

// InferenceAndBackprop runs the graph on feeds, then fills the gradients
// of loss (a floating-point tensor with one element) with respect to every
// parameter and floating-point input; Fetch(network.GradName(name)) reads
// them. It returns the outputs as Inference does.
func (e *executor) InferenceAndBackprop(feeds map[string]onnx.Value, loss string) (map[string]onnx.Value, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer par.Rest()
	if err := e.backprop(feeds, loss); err != nil {
		return nil, err
	}
	return e.collectOutputs()
}

// InferenceAndBackpropInto implements network.IntoTrainer.
func (e *executor) InferenceAndBackpropInto(feeds map[string]onnx.Value, loss string, dst map[string]onnx.Value) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer par.Rest()
	if dst == nil {
		return fmt.Errorf("native: InferenceAndBackpropInto: nil destination map")
	}
	if err := e.backprop(feeds, loss); err != nil {
		return err
	}
	return e.outputsInto(dst)
}

// backprop runs the forward pass on feeds and the backward pass of loss.
func (e *executor) backprop(feeds map[string]onnx.Value, loss string) error {
	bp, err := e.backwardFor(loss)
	if err != nil {
		return err
	}
	if err := e.bindFeeds(feeds); err != nil {
		return err
	}
	if err := e.execute(); err != nil {
		return err
	}
	lt, ok := e.slots[bp.loss].(*onnx.Tensor)
	if !ok || lt == nil || lt.Len() != 1 {
		return fmt.Errorf("native: loss %q must be a tensor with one element, is %s", loss, onnx.DescribeValue(e.slots[bp.loss]))
	}
	if err := e.runBackward(bp); err != nil {
		return err
	}
	e.lastGrads = bp.state
	return nil
}

func (e *executor) runGradStep(s *gradStep, st *gradState) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v: internal error in native gradient kernel: %v", s.node, r)
		}
	}()
	if err := s.run(e.slots, st); err != nil {
		return fmt.Errorf("%v: gradient: %w", s.node, err)
	}
	return nil
}

// Gradients pairs every trainable parameter with the name of its gradient
// of loss; nil when loss is not a value that depends on a parameter.
func (e *executor) Gradients(loss string) []network.ParamGrad {
	e.mu.Lock()
	defer e.mu.Unlock()
	bp, err := e.backwardFor(loss)
	if err != nil {
		return nil
	}
	return append([]network.ParamGrad{}, bp.state.order...)
}

// fetchGrad returns the gradient of the last backward pass under a
// gradient name: zeros of the value's shape when no gradient reached it.
func (e *executor) fetchGrad(name string) (onnx.Value, bool, error) {
	st := e.lastGrads
	if st == nil {
		return nil, false, nil
	}
	slot, ok := st.names[name]
	if !ok {
		return nil, false, nil
	}
	if g := st.grads[slot]; g != nil {
		return g.Clone(), true, nil
	}
	v, ok := e.slots[slot].(*onnx.Tensor)
	if !ok || v == nil {
		return nil, true, fmt.Errorf("native: no gradient for %q yet", name)
	}
	return onnx.NewTensor(v.Type, v.Shape...), true, nil
}

// feedGrad replaces a gradient of the last backward pass (an optimizer
// clipping gradients, for instance).
func (e *executor) feedGrad(name string, v onnx.Value) (bool, error) {
	st := e.lastGrads
	if st == nil {
		return false, nil
	}
	slot, ok := st.names[name]
	if !ok {
		return false, nil
	}
	t, ok := v.(*onnx.Tensor)
	if !ok {
		return true, fmt.Errorf("native: gradient %q must be a tensor", name)
	}
	p, _ := e.slots[slot].(*onnx.Tensor)
	if p == nil || p.Type != t.Type || !sameShape(p.Shape, t.Shape) {
		return true, fmt.Errorf("native: gradient %q must be tensor(%v)%v like its value", name, p.Type, p.Shape)
	}
	dst := st.bufs[slot].tensor(t.Type, t.Shape)
	onnx.CopySlice(dst.Data, t.Data)
	st.grads[slot] = dst
	return true, nil
}

// gradBuilder compiles the backward kernel of a node. Like builder, it is
// an ops.Visitor; operators without a backward rule keep the embedded
// UnsupportedVisitor's answer.
type gradBuilder struct {
	ops.UnsupportedVisitor
	e    *executor
	node *onnx.Node
	kern gradKernel
}

func (gb *gradBuilder) compile(n *onnx.Node) (k gradKernel, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("native: %v: internal error while compiling its gradient: %v", n, r)
		}
	}()
	gb.node, gb.kern = n, nil
	if err := ops.Visit(n, gb); err != nil {
		if errors.Is(err, network.ErrUnsupported) {
			return nil, fmt.Errorf("native: %v: no gradient rule: %w", n, err)
		}
		return nil, fmt.Errorf("native: %v: %w", n, err)
	}
	if gb.kern == nil {
		return nil, fmt.Errorf("native: %v: gradient rule compiled no kernel", n)
	}
	return gb.kern, nil
}

// slot resolves a node's value name to its slot (-1 for "").
func (gb *gradBuilder) slot(name string) int {
	if name == "" {
		return -1
	}
	return gb.e.slotOf[name]
}

// set records the compiled kernel; Visit methods end with it.
func (gb *gradBuilder) set(k gradKernel) error {
	gb.kern = k
	return nil
}
