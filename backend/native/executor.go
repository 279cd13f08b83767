package native

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
	"github.com/deep500/deep500-go/transform"
)

func init() {
	backend.Register(backend.Backend{Name: "native", New: New, Supports: Supports})
}

// kernel is a compiled node: it reads its inputs from slots and stores its
// outputs into slots, at indices resolved when it was compiled. An error
// it returns is wrapped with the node by the run loop.
type kernel func(slots []onnx.Value) error

// step is one entry of the execution plan.
type step struct {
	node *onnx.Node
	run  kernel
}

// graphInput is a value the caller feeds.
type graphInput struct {
	name     string
	slot     int
	declared *onnx.TypeInfo // nil when the graph does not say
	// held is the value used when a run's feeds omit this input: one set
	// with Feed, or the initializer that is the input's default.
	held onnx.Value
}

// executor is the native backend's network: a plan of compiled kernels
// over a table of value slots.
type executor struct {
	mu sync.Mutex // one run at a time: kernels own their output buffers

	graph   *onnx.Graph
	threads int
	// policy chooses between the pool and a serial run for each
	// inference (thread_policy.go); nil on one thread or with the
	// ThreadsSetting "fixed".
	policy *threadPolicies

	slots     []onnx.Value   // the current value of every named value
	slotNames []string       // slot index to value name, for messages
	slotOf    map[string]int // value name to slot index

	plan    []step
	inputs  []*graphInput // in graph order; includes inputs with defaults
	inputOf map[string]*graphInput

	initializers map[string]bool
	params       []string
	outputs      []string

	// fusedAway names the values inside fused chains (fuse.go), which are
	// never stored, with the chain that absorbed each.
	fusedAway map[string]string

	frozen map[string]bool // parameters backprop leaves out
	// skipInputGrads leaves the graph inputs out of backprop too
	// (backend.Options.SkipInputGradients).
	skipInputGrads bool
	backward       map[string]*backwardPlan // per loss, compiled on first use
	lastGrads      *gradState               // the gradients Fetch and Feed address
	// batchNorms are the forward kernels of the BatchNormalization nodes,
	// whose batch statistics their backward reads instead of computing
	// them again (grad_norm.go).
	batchNorms map[*onnx.Node]*batchNormKernel

	// owned marks the slots whose tensor the executor made itself (a copy
	// by Feed or UpdateParams) and may change in place; the others hold a
	// model's initializer or a caller's feed.
	owned []bool

	// optimized is set for a network built with Optimize (for
	// inference), whose kernels keep their constant weights packed
	// (packed_weights.go); versions counts, per slot, the times Feed or
	// UpdateParams changed its value, so that they pack it again.
	optimized bool
	versions  []uint64
}

// New compiles model m for the native backend. Every node is visited once
// and turned into a kernel; an operator without a kernel makes New fail with
// an error wrapping network.ErrUnsupported that names the node and operator.
func New(m *onnx.Model, opts backend.Options) (network.Network, error) {
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("native: model has no graph")
	}
	adaptive, err := adaptiveThreads(opts.Settings)
	if err != nil {
		return nil, err
	}
	fuse := opts.Optimize
	if opts.Optimize {
		opts.Optimize = false // the evaluator's one-node models, and the result, compile as they are
		evaluate := transform.NetworkEvaluator(func(m *onnx.Model) (network.Network, error) { return New(m, backend.Options{Threads: 1}) })
		optimized, _, err := transform.Optimize(m, transform.Options{Evaluate: evaluate})
		if err != nil {
			return nil, fmt.Errorf("native: %w", err)
		}
		m = optimized
	}
	g := m.Graph
	e := &executor{
		graph:        g,
		threads:      opts.Threads,
		slotOf:       map[string]int{},
		inputOf:      map[string]*graphInput{},
		initializers: map[string]bool{},
		frozen:       map[string]bool{},
		fusedAway:    map[string]string{},
		optimized:    fuse,
	}
	if adaptive && e.parallelism() > 1 {
		e.policy = &threadPolicies{}
	}
	if err := e.loadInitializers(); err != nil {
		return nil, err
	}
	for _, vi := range g.Inputs {
		in := &graphInput{name: vi.Name, slot: e.defineSlot(vi.Name), declared: vi.Type}
		if e.initializers[vi.Name] {
			in.held = e.slots[in.slot]
		}
		e.inputs = append(e.inputs, in)
		e.inputOf[vi.Name] = in
	}
	b := &builder{e: e}
	var fusions fusionPlan
	if fuse {
		fusions = planFusions(g, e.constant)
	}
	for _, n := range g.Nodes {
		var err error
		switch {
		case fusions.absorbed[n]:
			continue // compiled with the chain's last node
		case fusions.byTail[n] != nil:
			err = b.compileFusion(fusions.byTail[n])
		default:
			err = b.compile(n)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, out := range g.Outputs {
		if _, ok := e.slotOf[out.Name]; !ok {
			return nil, fmt.Errorf("native: graph output %q is not produced by any node, input or initializer", out.Name)
		}
		e.outputs = append(e.outputs, out.Name)
	}
	e.skipInputGrads = opts.SkipInputGradients
	for _, name := range opts.Frozen {
		if !e.initializers[name] {
			return nil, fmt.Errorf("native: cannot freeze %q: it is not a parameter", name)
		}
		e.frozen[name] = true
	}
	return e, nil
}

// loadInitializers puts the graph's constants into their slots and records
// the floating-point ones as parameters.
func (e *executor) loadInitializers() error {
	for _, init := range e.graph.Initializers {
		if err := init.Tensor.Check(); err != nil {
			return fmt.Errorf("native: initializer %q: %w", init.Name, err)
		}
		e.slots[e.defineSlot(init.Name)] = init.Tensor
		e.initializers[init.Name] = true
		if init.Tensor.Type.IsFloat() {
			e.params = append(e.params, init.Name)
		}
	}
	for _, init := range e.graph.SparseInitializers {
		dense, err := init.Tensor.Dense()
		if err != nil {
			return fmt.Errorf("native: sparse initializer %q: %w", init.Name, err)
		}
		e.slots[e.defineSlot(init.Name)] = dense
		e.initializers[init.Name] = true
	}
	return nil
}

// constant returns the value of name when it is the same for every run:
// an initializer that is not also a graph input (whose initializer is
// only a default).
func (e *executor) constant(name string) (*onnx.Tensor, bool) {
	if !e.initializers[name] || e.inputOf[name] != nil {
		return nil, false
	}
	t, ok := e.slots[e.slotOf[name]].(*onnx.Tensor)
	return t, ok && t != nil
}

// notMaterialised is the error for a value inside a fused chain, which
// Fetch and AddOutput cannot return; nil for any other value.
func (e *executor) notMaterialised(name string) error {
	chain, ok := e.fusedAway[name]
	if !ok {
		return nil
	}
	return fmt.Errorf("native: %q is not materialised: the optimizer fused %s into one kernel (build with Optimize off to fetch it)", name, chain)
}

// defineSlot returns the slot of a value name, creating it on first use.
func (e *executor) defineSlot(name string) int {
	if s, ok := e.slotOf[name]; ok {
		return s
	}
	s := len(e.slots)
	e.slots = append(e.slots, nil)
	e.slotNames = append(e.slotNames, name)
	e.slotOf[name] = s
	return s
}

// Inference runs the plan on feeds and returns copies of the outputs.
func (e *executor) Inference(feeds map[string]onnx.Value) (map[string]onnx.Value, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer par.Rest()
	if err := e.bindFeeds(feeds); err != nil {
		return nil, err
	}
	if err := e.infer(); err != nil {
		return nil, err
	}
	return e.collectOutputs()
}

// InferenceInto implements network.IntoRunner: Inference with the
// outputs copied into the caller's tensors, so that a run whose shapes
// repeat allocates nothing.
func (e *executor) InferenceInto(feeds, dst map[string]onnx.Value) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer par.Rest()
	if dst == nil {
		return fmt.Errorf("native: InferenceInto: nil destination map")
	}
	if err := e.bindFeeds(feeds); err != nil {
		return err
	}
	if err := e.infer(); err != nil {
		return err
	}
	return e.outputsInto(dst)
}

// outputsInto copies the outputs of the last run into dst: into the
// tensor already there when it has the output's type and shape, else into
// a new copy.
func (e *executor) outputsInto(dst map[string]onnx.Value) error {
	for _, name := range e.outputs {
		v := e.slots[e.slotOf[name]]
		if v == nil {
			return fmt.Errorf("native: output %q was not computed", name)
		}
		src, isTensor := v.(*onnx.Tensor)
		to, reuse := dst[name].(*onnx.Tensor)
		if isTensor && reuse && to != nil && to.Type == src.Type && sameShape(to.Shape, src.Shape) {
			onnx.CopySlice(to.Data, src.Data)
			continue
		}
		dst[name] = cloneValue(v)
	}
	return nil
}

// collectOutputs copies the outputs of the last run for the caller.
func (e *executor) collectOutputs() (map[string]onnx.Value, error) {
	results := make(map[string]onnx.Value, len(e.outputs))
	for _, name := range e.outputs {
		v := e.slots[e.slotOf[name]]
		if v == nil {
			return nil, fmt.Errorf("native: output %q was not computed", name)
		}
		results[name] = cloneValue(v)
	}
	return results, nil
}

// bindFeeds checks every feed against the graph's inputs and stores it in
// its slot; inputs not fed take their held value (a Feed, or a default).
func (e *executor) bindFeeds(feeds map[string]onnx.Value) error {
	for name := range feeds {
		if _, ok := e.inputOf[name]; !ok {
			return fmt.Errorf("native: %q is not an input of the graph (inputs: %v)", name, e.graph.InputNames())
		}
	}
	for _, in := range e.inputs {
		v, fed := feeds[in.name]
		if !fed {
			v = in.held
		}
		if v == nil {
			return fmt.Errorf("native: missing feed for input %q (%v)", in.name, in.declared)
		}
		if fed {
			if err := checkAgainstDeclared(v, in.declared); err != nil {
				return fmt.Errorf("native: input %q: %w", in.name, err)
			}
		}
		if fed || e.slots[in.slot] != v {
			e.disown(in.slot)
		}
		e.slots[in.slot] = v
	}
	return nil
}

// infer runs the plan for an inference: on the pool or serially, as the
// network's thread policy chooses, timing the run for it.
func (e *executor) infer() error {
	if e.policy == nil {
		return e.execute()
	}
	p := e.policy.get(e.inputSignature())
	serial := p.choose()
	if serial {
		par.BeginSerial()
		defer par.EndSerial()
	}
	start := time.Now()
	if err := e.execute(); err != nil {
		return err
	}
	e.policy.record(p, serial, time.Since(start))
	return nil
}

// execute runs the plan in order.
func (e *executor) execute() error {
	// The pool's goroutines start spinning now, while the first kernels
	// run, rather than being woken by the first parallel one; the public
	// entry points let them rest when the run is over (par.Rest), so that
	// they take no core from whatever the caller runs next.
	par.Warm(e.parallelism() - 1)
	for i := range e.plan {
		if err := e.runStep(&e.plan[i]); err != nil {
			return err
		}
	}
	return nil
}

// parallelism is the number of goroutines the kernels may use.
func (e *executor) parallelism() int {
	if e.threads > 0 {
		return e.threads
	}
	return runtime.GOMAXPROCS(0)
}

// runStep runs one kernel. A kernel reports bad shapes and types as errors;
// the recover is a last line of defence so that a kernel bug surfaces as an
// error naming the node instead of crashing the caller.
func (e *executor) runStep(s *step) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v: internal error in native kernel: %v", s.node, r)
		}
	}()
	if err := s.run(e.slots); err != nil {
		return fmt.Errorf("%v: %w", s.node, err)
	}
	return nil
}

// Fetch returns copies of the current values of the named values: inputs,
// parameters, and activations and outputs of the last run.
func (e *executor) Fetch(names ...string) ([]onnx.Value, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]onnx.Value, len(names))
	for i, name := range names {
		if g, ok, err := e.fetchGrad(name); ok {
			if err != nil {
				return nil, err
			}
			out[i] = g
			continue
		}
		if err := e.notMaterialised(name); err != nil {
			return nil, err
		}
		s, ok := e.slotOf[name]
		if !ok {
			return nil, fmt.Errorf("native: no value named %q in the graph", name)
		}
		if e.slots[s] == nil {
			return nil, fmt.Errorf("native: %q has no value yet (it is computed by Inference)", name)
		}
		out[i] = cloneValue(e.slots[s])
	}
	return out, nil
}

// Feed replaces a named value with a copy of v. A graph input keeps it for
// runs that do not feed the input; a parameter (or any other value that has
// one) must keep its type and shape.
func (e *executor) Feed(name string, v onnx.Value) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v == nil {
		return fmt.Errorf("native: feed %q: nil value", name)
	}
	if err := e.notMaterialised(name); err != nil {
		return err
	}
	if ok, err := e.feedGrad(name, v); ok {
		return err
	}
	s, ok := e.slotOf[name]
	if !ok {
		return fmt.Errorf("native: no value named %q in the graph", name)
	}
	if in, ok := e.inputOf[name]; ok {
		if err := checkAgainstDeclared(v, in.declared); err != nil {
			return fmt.Errorf("native: feed %q: %w", name, err)
		}
	}
	if old := e.slots[s]; old != nil {
		if err := checkSameKind(v, old); err != nil {
			return fmt.Errorf("native: feed %q: %w", name, err)
		}
	}
	e.changed(s)
	if t, ok := v.(*onnx.Tensor); ok {
		if dst := e.writable(s); dst != nil && dst.Type == t.Type && sameShape(dst.Shape, t.Shape) {
			// The slot's own tensor, shared with nothing else: overwrite it
			// rather than allocate a new copy.
			onnx.CopySlice(dst.Data, t.Data)
			return nil
		}
	}
	v = cloneValue(v)
	e.slots[s] = v
	if in, ok := e.inputOf[name]; ok {
		in.held = v
	}
	if _, ok := v.(*onnx.Tensor); ok {
		e.own(s)
	}
	return nil
}

// Params lists the floating-point initializers, in graph order.
func (e *executor) Params() []string { return append([]string{}, e.params...) }

// Inputs lists the graph inputs a caller must feed: those without an
// initializer as default.
func (e *executor) Inputs() []string {
	var names []string
	for _, in := range e.inputs {
		if !e.initializers[in.name] {
			names = append(names, in.name)
		}
	}
	return names
}

// Outputs lists what Inference returns: the graph outputs, then the values
// added with AddOutput.
func (e *executor) Outputs() []string { return append([]string{}, e.outputs...) }

// AddOutput makes Inference also return the named value.
func (e *executor) AddOutput(name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.notMaterialised(name); err != nil {
		return err
	}
	if _, ok := e.slotOf[name]; !ok {
		return fmt.Errorf("native: no value named %q in the graph", name)
	}
	for _, o := range e.outputs {
		if o == name {
			return nil
		}
	}
	e.outputs = append(e.outputs, name)
	return nil
}

// Close drops every value; the network must not be used afterwards.
func (e *executor) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	clear(e.slots)
	e.plan = nil
	return nil
}

// compile visits one node; the visitor method appends its kernel to the
// plan. Errors name the node; as in runStep, a panic in a Visit method is
// turned into an error rather than crashing the caller.
func (b *builder) compile(n *onnx.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("native: %v: internal error while compiling: %v", n, r)
		}
	}()
	b.node = n
	if err := ops.Visit(n, b); err != nil {
		return fmt.Errorf("native: %v: %w", n, err)
	}
	return nil
}
