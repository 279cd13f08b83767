package onnxruntime

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	onnxpb "github.com/deep500/deep500-go/onnx/pb"
	"github.com/deep500/deep500-go/transform/autodiff"
	ort "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/proto"
)

func init() {
	b := backend.Backend{Name: "onnxruntime", New: New}
	// Without the library the probe cannot ask ONNX Runtime anything; the
	// ops table then says "?" rather than "no" for every operator.
	if _, err := os.Stat(LibraryPath(backend.Options{})); err == nil {
		b.Supports = Supports
	}
	backend.Register(b)
}

// net is a model made executable by ONNX Runtime.
//
// Parameters stay initializers of the session's graph rather than becoming
// inputs the backend feeds: ONNX Runtime then treats them as constants
// (constant folding, pre-packed weights for Conv, MatMul and Gemm), which is
// what makes inference fast. Feed of a parameter (or an update in place
// through UpdateParams) therefore marks the session stale; the next
// inference rebuilds it with the new initializers, once however many
// parameters changed. Training does not wait for that: its session takes
// the parameters as inputs (train.go).
type net struct {
	mu sync.Mutex

	model    *onnx.Model // the model, its ai.deep500 losses lowered to standard operators
	graph    *onnx.Graph
	base     *onnxpb.ModelProto // the model; its initializers follow Feed
	initIdx  map[string]int     // initializer name to index in base.Graph.Initializer
	threads  int
	feedable []string             // graph inputs without an initializer default, in order
	forms    map[string]inputForm // how each feedable input reached the current session
	declared map[string]*onnx.TypeInfo
	params   []string
	values   map[string]*onnx.Tensor // current initializer values (params and constants)
	known    map[string]bool         // every value name of the main graph
	outputs  []string                // graph outputs, then those added by AddOutput
	extra    []string                // values exposed only for Fetch
	held     map[string]onnx.Value   // inputs set with Feed

	sess     *ort.DynamicAdvancedSession
	inPlans  []inputPlan
	outPlans []outputPlan
	// outIndex places each session output name at its position among the
	// session's outputs; made with outPlans, which it is derived from.
	outIndex   map[string]int
	stale      bool                  // the session does not match base or the exposed set
	last       map[string]onnx.Value // every exposed value of the last run
	lastFeeds  map[string]onnx.Value // the feeds of the last run, to recompute a newly fetched value
	ortTypes   map[string]*valueType // what ONNX Runtime inferred for values the model does not type
	ranAtLeast bool

	// Training (train.go).
	frozen         []string
	skipInputGrads bool
	trainers       map[trainKey]*trainer
	grads          map[string]*onnx.Tensor // gradients of the last backprop, by gradient name
	lastLoss       string
	dirty          map[string]bool // parameters changed since base's initializers were written
	closers        []func()        // release the sessions of native optimizers
}

// New builds an ONNX Runtime session for model m. The library is loaded on
// first use (see LibraryPath); a model ONNX Runtime cannot run (an operator
// or type without a kernel, an opset it does not implement) gives an error
// wrapping network.ErrUnsupported with ONNX Runtime's message.
func New(m *onnx.Model, opts backend.Options) (network.Network, error) {
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("onnxruntime: model has no graph")
	}
	if err := ensureEnv(LibraryPath(opts)); err != nil {
		return nil, err
	}
	// ONNX Runtime knows only standard operators: the project's own
	// losses become the standard operators that compute them.
	m, err := autodiff.Lower(m)
	if err != nil {
		return nil, fmt.Errorf("onnxruntime: %w", err)
	}
	base, err := onnx.ModelToProto(m)
	if err != nil {
		return nil, fmt.Errorf("onnxruntime: serializing the model: %w", err)
	}
	g := m.Graph
	n := &net{
		model:          m,
		frozen:         slices.Clone(opts.Frozen),
		skipInputGrads: opts.SkipInputGradients,
		trainers:       map[trainKey]*trainer{},
		dirty:          map[string]bool{},
		graph:          g,
		base:           base,
		initIdx:        map[string]int{},
		threads:        opts.Threads,
		forms:          map[string]inputForm{},
		declared:       map[string]*onnx.TypeInfo{},
		values:         map[string]*onnx.Tensor{},
		known:          map[string]bool{},
		held:           map[string]onnx.Value{},
		ortTypes:       map[string]*valueType{},
	}
	for i, tp := range base.Graph.Initializer {
		n.initIdx[tp.GetName()] = i
	}
	for _, in := range g.Initializers {
		n.values[in.Name] = in.Tensor
		n.known[in.Name] = true
		if in.Tensor != nil && in.Tensor.Type.IsFloat() {
			n.params = append(n.params, in.Name)
		}
	}
	for _, in := range g.SparseInitializers {
		n.known[in.Name] = true
	}
	for _, vi := range g.Inputs {
		n.known[vi.Name] = true
		n.declared[vi.Name] = vi.Type
		if _, isInit := n.values[vi.Name]; isInit {
			continue
		}
		n.feedable = append(n.feedable, vi.Name)
		if t := vi.Type; t != nil && t.Kind == onnx.TensorKind && t.HasShape && len(t.Shape) == 0 {
			n.forms[vi.Name] = inputForm{kind: formRank1}
		}
	}
	for _, nd := range g.Nodes {
		for _, o := range nd.Outputs {
			if o != "" {
				n.known[o] = true
			}
		}
	}
	for _, o := range g.Outputs {
		if !n.known[o.Name] {
			return nil, fmt.Errorf("onnxruntime: graph output %q is not produced by any node, input or initializer", o.Name)
		}
		n.outputs = append(n.outputs, o.Name)
	}
	for _, name := range opts.Frozen {
		if !slices.Contains(n.params, name) {
			return nil, fmt.Errorf("onnxruntime: cannot freeze %q: it is not a parameter", name)
		}
	}
	if err := n.rebuild(); err != nil {
		return nil, err
	}
	return n, nil
}

// exposed lists the values the session must output.
func (n *net) exposed() []string {
	out := append([]string{}, n.outputs...)
	for _, e := range n.extra {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// typeOfValue returns what is known of a value's type: declared in the
// graph, an initializer's, or inferred by ONNX Runtime earlier.
func (n *net) typeOfValue(name string) *valueType {
	if t := n.graph.TypeOf(name); t != nil && t.Kind != onnx.UnknownKind {
		return typeOf(t)
	}
	if t := n.values[name]; t != nil {
		return &valueType{kind: onnx.TensorKind, elem: t.Type, rankKnow: true, rank: len(t.Shape)}
	}
	return n.ortTypes[name]
}

// rebuild makes a new session for the current parameters and exposed set.
func (n *net) rebuild() error {
	n.destroySession()
	if err := n.writeDirty(); err != nil {
		return err
	}
	exposed := n.exposed()
	types := map[string]*valueType{}
	var untyped []string
	for _, e := range exposed {
		if t := n.typeOfValue(e); t != nil {
			types[e] = t
		} else {
			untyped = append(untyped, e)
		}
	}
	if len(untyped) > 0 {
		// The model does not type these values: ask ONNX Runtime, whose
		// shape inference does, from a graph that outputs them as they are.
		if err := n.inferTypes(untyped); err != nil {
			return err
		}
		for _, e := range untyped {
			types[e] = n.ortTypes[e]
		}
	}
	p, ins, outs, err := sessionGraph(n.base, n.feedable, n.forms, exposed, types)
	if err != nil {
		return fmt.Errorf("onnxruntime: %w", err)
	}
	data, err := proto.Marshal(p)
	if err != nil {
		return fmt.Errorf("onnxruntime: serializing the model: %w", err)
	}
	var inNames []string
	for _, in := range ins {
		inNames = append(inNames, in.elems...)
		if in.session != "" {
			inNames = append(inNames, in.session)
		}
	}
	outNames := sessionOutputs(outs)
	opts, err := n.sessionOptions()
	if err != nil {
		return err
	}
	defer opts.Destroy()
	sess, err := ort.NewDynamicAdvancedSessionWithONNXData(data, inNames, outNames, opts)
	if err != nil {
		// ONNX Runtime refuses a model for what it lacks (a kernel, a type,
		// an opset) and for what is wrong with it, in one kind of error; a
		// model the loader accepted is taken to be valid, so the refusal is
		// ONNX Runtime's limit.
		return network.Unsupportedf("onnxruntime: ONNX Runtime cannot build a session: %v", err)
	}
	n.outIndex = make(map[string]int, len(outNames))
	for i, s := range outNames {
		n.outIndex[s] = i
	}
	n.sess, n.inPlans, n.outPlans, n.stale = sess, ins, outs, false
	return nil
}

// inferTypes asks ONNX Runtime the types of values the model leaves untyped.
func (n *net) inferTypes(names []string) error {
	p := proto.Clone(n.base).(*onnxpb.ModelProto)
	p.Graph.Output = nil
	for _, name := range names {
		p.Graph.Output = append(p.Graph.Output, &onnxpb.ValueInfoProto{Name: proto.String(name)})
	}
	data, err := proto.Marshal(p)
	if err != nil {
		return fmt.Errorf("onnxruntime: serializing the model: %w", err)
	}
	_, outs, err := ort.GetInputOutputInfoWithONNXData(data)
	if err != nil {
		return network.Unsupportedf("onnxruntime: ONNX Runtime cannot build a session: %v", err)
	}
	for _, o := range outs {
		n.ortTypes[o.Name] = ortTypeOf(o)
	}
	return nil
}

func (n *net) sessionOptions() (*ort.SessionOptions, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("onnxruntime: session options: %w", err)
	}
	if err := opts.SetLogSeverityLevel(ort.LoggingLevelFatal); err != nil {
		opts.Destroy()
		return nil, fmt.Errorf("onnxruntime: session options: %w", err)
	}
	if n.threads > 0 {
		// Intra-op threads split one operator's work; inter-op threads run
		// independent operators at once, which the sequential executor
		// (ONNX Runtime's default) does not do.
		if err := opts.SetIntraOpNumThreads(n.threads); err != nil {
			opts.Destroy()
			return nil, fmt.Errorf("onnxruntime: %d threads: %w", n.threads, err)
		}
		if err := opts.SetInterOpNumThreads(1); err != nil {
			opts.Destroy()
			return nil, fmt.Errorf("onnxruntime: %d threads: %w", n.threads, err)
		}
	}
	// ONNX Runtime's intra-op workers spin while waiting for work, and by
	// default go on spinning after Run has returned. In a process that
	// runs something else next (the bench interleaves native and ONNX
	// Runtime; difftest and compare do the same) those spinning threads
	// take the cores from it: native's 2-thread ResNet-18 took 50 ms
	// after an ONNX Runtime run against 35 ms alone. Stopping the spin
	// when Run returns keeps ONNX Runtime's own speed within a run.
	if err := opts.AddSessionConfigEntry("session.force_spinning_stop", "1"); err != nil {
		opts.Destroy()
		return nil, fmt.Errorf("onnxruntime: session options: %w", err)
	}
	return opts, nil
}

func (n *net) destroySession() {
	if n.sess != nil {
		n.sess.Destroy()
		n.sess = nil
	}
	n.stale = true
}

// Inference runs the session on feeds and returns the graph outputs and the
// values added with AddOutput.
func (n *net) Inference(feeds map[string]onnx.Value) (map[string]onnx.Value, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for name, v := range feeds {
		if slices.Contains(n.feedable, name) {
			continue
		}
		if _, isInit := n.values[name]; isInit && n.declared[name] != nil {
			// An input whose default is an initializer: feeding it replaces
			// the default, as Feed does.
			if err := n.feedInitializer(name, v); err != nil {
				return nil, err
			}
			continue
		}
		return nil, fmt.Errorf("onnxruntime: %q is not an input of the graph (inputs: %v)", name, n.graph.InputNames())
	}
	all, err := n.run(feeds)
	if err != nil {
		return nil, err
	}
	res := make(map[string]onnx.Value, len(n.outputs))
	for _, o := range n.outputs {
		res[o] = all[o]
	}
	return res, nil
}

// run runs the session, rebuilding it first if it is stale, and keeps every
// exposed value for Fetch.
func (n *net) run(feeds map[string]onnx.Value) (map[string]onnx.Value, error) {
	vals := make(map[string]onnx.Value, len(n.feedable))
	for _, name := range n.feedable {
		v, ok := feeds[name]
		if !ok {
			v = n.held[name]
		}
		if v == nil {
			return nil, fmt.Errorf("onnxruntime: missing feed for input %q (%v)", name, n.declared[name])
		}
		vals[name] = v
		if f := formOf(n.declared[name], v); f != n.forms[name] {
			n.forms[name] = f
			n.stale = true
		}
	}
	if n.stale || n.sess == nil {
		if err := n.rebuild(); err != nil {
			return nil, err
		}
	}
	var keep ortValues
	defer keep.destroy()
	var inputs []ort.Value
	for _, in := range n.inPlans {
		if len(in.elems) > 0 {
			seq, _ := vals[in.name].(*onnx.Sequence)
			if o, ok := vals[in.name].(*onnx.Optional); ok {
				seq, _ = o.Value.(*onnx.Sequence)
			}
			for i := range in.elems {
				t := seq.Values[i].(*onnx.Tensor)
				ov, err := toORT(&onnx.Tensor{Type: t.Type, Shape: []int{1}, Data: t.Data}, &keep)
				if err != nil {
					return nil, fmt.Errorf("onnxruntime: input %q, element %d: %w", in.name, i, err)
				}
				inputs = append(inputs, ov)
			}
			continue
		}
		if in.session == "" {
			continue
		}
		v := vals[in.name]
		switch in.form.kind {
		case formRank1:
			t := v.(*onnx.Tensor)
			v = &onnx.Tensor{Type: t.Type, Shape: []int{1}, Data: t.Data}
		case formOptValue:
			v = v.(*onnx.Optional).Value
		}
		if in.session == dummyInput {
			v = onnx.FromSlice([]float32{0}, 1)
		}
		ov, err := toORT(v, &keep)
		if err != nil {
			return nil, fmt.Errorf("onnxruntime: input %q: %w", in.name, err)
		}
		inputs = append(inputs, ov)
	}
	outputs := make([]ort.Value, len(n.outIndex))
	err := safeRun(n.sess, inputs, outputs)
	for _, o := range outputs {
		keep.add(o)
	}
	if err != nil {
		if strings.Contains(err.Error(), "Error creating tensor from ort") && strings.Contains(err.Error(), "no dimensions") {
			// A rank-0 tensor inside a sequence or map output: the session
			// graph flattens the tensors it outputs, but cannot reach
			// into containers.
			return nil, network.Unsupportedf("onnxruntime: onnxruntime_go cannot read a rank-0 tensor inside a sequence or map output: %v", err)
		}
		return nil, fmt.Errorf("onnxruntime: %w", err)
	}
	all := make(map[string]onnx.Value, len(n.outPlans))
	for _, o := range n.outPlans {
		v, err := readOutput(o, outputs, n.outIndex)
		if err != nil {
			return nil, err
		}
		all[o.name] = v
	}
	n.last = all
	n.lastFeeds = make(map[string]onnx.Value, len(feeds))
	for k, v := range feeds {
		n.lastFeeds[k] = v
	}
	n.ranAtLeast = true
	return all, nil
}

// narrow converts a float32 tensor back to float16 or bfloat16; the values
// came from that type, so the conversion is exact.
func narrow(t *onnx.Tensor, to onnx.DataType) *onnx.Tensor {
	src := t.Float32s()
	switch to {
	case onnx.Float16:
		d := make([]onnx.F16, len(src))
		for i, x := range src {
			d[i] = onnx.F16From(x)
		}
		return onnx.FromSlice(d, t.Shape...)
	default:
		d := make([]onnx.BF16, len(src))
		for i, x := range src {
			d[i] = onnx.BF16From(x)
		}
		return onnx.FromSlice(d, t.Shape...)
	}
}

// Fetch returns the current values of the named values: parameters and
// constants, inputs set with Feed, and any value of the last run. A value
// the session did not output is made an output (the session is rebuilt) and
// the last run's feeds, as the caller passed them, are run again to compute
// it; for a graph with random operators that second run draws new numbers.
// AddOutput before the run avoids both.
func (n *net) Fetch(names ...string) ([]onnx.Value, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]onnx.Value, len(names))
	var missing []string
	for i, name := range names {
		if v, ok := n.current(name); ok {
			out[i] = v
			continue
		}
		if g, ok := n.grads[name]; ok {
			out[i] = g.Clone()
			continue
		}
		if isGradName(name) {
			return nil, n.noGradient(name)
		}
		if !n.known[name] {
			return nil, fmt.Errorf("onnxruntime: no value named %q in the graph", name)
		}
		if !n.ranAtLeast {
			return nil, fmt.Errorf("onnxruntime: %q has no value yet (it is computed by Inference)", name)
		}
		missing = append(missing, name)
	}
	if len(missing) == 0 {
		return out, nil
	}
	n.extra = append(n.extra, missing...)
	n.stale = true
	if _, err := n.run(n.lastFeeds); err != nil {
		return nil, fmt.Errorf("onnxruntime: recomputing %v: %w", missing, err)
	}
	for i, name := range names {
		if out[i] == nil {
			v, ok := n.current(name)
			if !ok {
				return nil, fmt.Errorf("onnxruntime: %q was not computed", name)
			}
			out[i] = v
		}
	}
	return out, nil
}

// current returns a copy of a value the network holds now.
func (n *net) current(name string) (onnx.Value, bool) {
	if v, ok := n.last[name]; ok {
		return cloneValue(v), true
	}
	if v, ok := n.held[name]; ok {
		return cloneValue(v), true
	}
	if t, ok := n.values[name]; ok && t != nil {
		return t.Clone(), true
	}
	return nil, false
}

func cloneValue(v onnx.Value) onnx.Value {
	if t, ok := v.(*onnx.Tensor); ok {
		return t.Clone()
	}
	return v
}

func isGradName(name string) bool {
	const s = ".grad"
	return len(name) > len(s) && name[len(name)-len(s):] == s && name != network.GradName("")
}

// Feed replaces a graph input's held value or an initializer's value.
// Values computed by the graph cannot be replaced: ONNX Runtime computes
// them inside one run.
func (n *net) Feed(name string, v onnx.Value) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if v == nil {
		return fmt.Errorf("onnxruntime: feed %q: nil value", name)
	}
	if slices.Contains(n.feedable, name) {
		n.held[name] = cloneValue(v)
		return nil
	}
	if _, ok := n.values[name]; ok {
		return n.feedInitializer(name, v)
	}
	if old, ok := n.grads[name]; ok {
		t, isT := v.(*onnx.Tensor)
		if !isT || t.Type != old.Type || !slices.Equal(t.Shape, old.Shape) {
			return fmt.Errorf("onnxruntime: feed %q: want a tensor(%v)%v, got %s", name, old.Type, old.Shape, onnx.DescribeValue(v))
		}
		n.grads[name] = t.Clone()
		return nil
	}
	if isGradName(name) {
		return n.noGradient(name)
	}
	if !n.known[name] {
		return fmt.Errorf("onnxruntime: no value named %q in the graph", name)
	}
	return network.Unsupportedf("onnxruntime: cannot replace %q: it is computed by the graph, inside ONNX Runtime's run", name)
}

// feedInitializer replaces an initializer's value; the session is rebuilt
// before the next run (see net).
func (n *net) feedInitializer(name string, v onnx.Value) error {
	t, ok := v.(*onnx.Tensor)
	if !ok {
		return fmt.Errorf("onnxruntime: feed %q: want a tensor, got %s", name, onnx.DescribeValue(v))
	}
	old := n.values[name]
	if old != nil && (old.Type != t.Type || !slices.Equal(old.Shape, t.Shape)) {
		return fmt.Errorf("onnxruntime: feed %q: %v%v does not match the current %v%v", name, t.Type, t.Shape, old.Type, old.Shape)
	}
	if _, ok := n.initIdx[name]; !ok {
		return fmt.Errorf("onnxruntime: feed %q: not an initializer of the serialized model", name)
	}
	// The serialized initializer is written when the session is rebuilt:
	// an optimizer feeding every parameter every step pays one copy.
	n.values[name] = t.Clone()
	n.dirty[name] = true
	n.destroySession()
	n.last = nil
	return nil
}

// writeDirty writes the parameters changed since the last session into
// the serialized model's initializers.
func (n *net) writeDirty() error {
	for name := range n.dirty {
		tp, err := onnx.TensorToProto(name, n.values[name])
		if err != nil {
			return fmt.Errorf("onnxruntime: initializer %q: %w", name, err)
		}
		n.base.Graph.Initializer[n.initIdx[name]] = tp
		delete(n.dirty, name)
	}
	return nil
}

// noGradient explains why a gradient name has no value.
func (n *net) noGradient(name string) error {
	if n.grads == nil {
		return fmt.Errorf("onnxruntime: no gradient %q yet: run InferenceAndBackprop first", name)
	}
	return fmt.Errorf("onnxruntime: no gradient %q: the last backprop (of %q) computed the gradients of %v", name, n.lastLoss, slices.Sorted(maps.Keys(n.grads)))
}

// Params lists the floating-point initializers, in graph order.
func (n *net) Params() []string { return append([]string{}, n.params...) }

// Inputs lists the graph inputs without an initializer default.
func (n *net) Inputs() []string { return append([]string{}, n.feedable...) }

// Outputs lists the graph outputs, then the values added with AddOutput.
func (n *net) Outputs() []string { return append([]string{}, n.outputs...) }

// AddOutput makes Inference also return the named value; the session is
// rebuilt with it as an output before the next run.
func (n *net) AddOutput(name string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.known[name] {
		return fmt.Errorf("onnxruntime: no value named %q in the graph", name)
	}
	if slices.Contains(n.outputs, name) {
		return nil
	}
	n.outputs = append(n.outputs, name)
	if !slices.Contains(n.extra, name) {
		n.stale = true
	}
	return nil
}

// Close destroys the session. The process-wide environment stays for other
// networks.
func (n *net) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.destroySession()
	for _, tr := range n.trainers {
		tr.inner.Close()
	}
	n.trainers = map[trainKey]*trainer{}
	for _, c := range n.closers {
		c()
	}
	n.last, n.lastFeeds, n.held, n.grads = nil, nil, nil, nil
	return nil
}

// formOf says how a fed value must reach the session (see inputForm).
func formOf(declared *onnx.TypeInfo, v onnx.Value) inputForm {
	switch v := v.(type) {
	case *onnx.Tensor:
		if declared != nil && declared.Kind == onnx.TensorKind && declared.HasShape && len(declared.Shape) == 0 && len(v.Shape) == 0 {
			return inputForm{kind: formRank1}
		}
	case *onnx.Sequence:
		if len(v.Values) == 0 {
			return inputForm{kind: formEmptySeq}
		}
		if allScalars(v) {
			return inputForm{kind: formSeqScalars, n: len(v.Values)}
		}
	case *onnx.Optional:
		switch inner := v.Value.(type) {
		case nil:
			return inputForm{kind: formOptNone}
		case *onnx.Sequence:
			if len(inner.Values) == 0 {
				return inputForm{kind: formOptEmptySeq}
			}
			if allScalars(inner) {
				return inputForm{kind: formOptSeqScalars, n: len(inner.Values)}
			}
		}
		return inputForm{kind: formOptValue}
	}
	return inputForm{}
}

// allScalars reports whether every element of a sequence is a rank-0
// tensor.
func allScalars(s *onnx.Sequence) bool {
	for _, e := range s.Values {
		if t, ok := e.(*onnx.Tensor); !ok || len(t.Shape) != 0 {
			return false
		}
	}
	return true
}

// safeRun runs the session; a panic inside onnxruntime_go becomes an error.
func safeRun(s *ort.DynamicAdvancedSession, inputs, outputs []ort.Value) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in onnxruntime_go: %v", r)
		}
	}()
	return s.Run(inputs, outputs)
}

// readOutput turns the session outputs of one plan back into the value.
func readOutput(o outputPlan, outputs []ort.Value, index map[string]int) (onnx.Value, error) {
	if o.optional != nil {
		hv, err := readOutput(*o.has, outputs, index)
		if err != nil {
			return nil, err
		}
		h, ok := hv.(*onnx.Tensor)
		if !ok || len(h.Bools()) != 1 {
			return nil, fmt.Errorf("onnxruntime: output %q: its has-element flag is %s", o.name, onnx.DescribeValue(hv))
		}
		if !h.Bools()[0] {
			return &onnx.Optional{Elem: o.optional}, nil
		}
		inner := o
		inner.optional = nil
		v, err := readOutput(inner, outputs, index)
		if err != nil {
			return nil, err
		}
		return &onnx.Optional{Elem: o.optional, Value: v}, nil
	}
	v, err := fromORT(outputs[index[o.value]])
	if err != nil {
		return nil, fmt.Errorf("onnxruntime: output %q: %w", o.name, err)
	}
	if o.shape != "" {
		st, err := fromORT(outputs[index[o.shape]])
		if err != nil {
			return nil, fmt.Errorf("onnxruntime: shape of output %q: %w", o.name, err)
		}
		t, ok1 := v.(*onnx.Tensor)
		s, ok2 := st.(*onnx.Tensor)
		if !ok1 || !ok2 || s.Type != onnx.Int64 {
			return nil, fmt.Errorf("onnxruntime: output %q: the flattened value or its shape is not a tensor", o.name)
		}
		shape := make([]int, len(s.Int64s()))
		for i, d := range s.Int64s() {
			shape[i] = int(d)
		}
		if onnx.NumElements(shape) != t.Len() {
			return nil, fmt.Errorf("onnxruntime: output %q: %d elements for shape %v", o.name, t.Len(), shape)
		}
		t.Shape = shape
	}
	if o.cast != onnx.Undefined {
		t, ok := v.(*onnx.Tensor)
		if !ok || t.Type != onnx.Float {
			return nil, fmt.Errorf("onnxruntime: output %q: its float32 copy is %s", o.name, onnx.DescribeValue(v))
		}
		v = narrow(t, o.cast)
	}
	return v, nil
}

// sessionOutputs lists the session's output names for plans, each once, in
// the order the session is built and run with.
func sessionOutputs(plans []outputPlan) []string {
	var names []string
	var add func(o *outputPlan)
	add = func(o *outputPlan) {
		if o.has != nil {
			add(o.has)
		}
		for _, s := range []string{o.value, o.shape} {
			if s != "" && !slices.Contains(names, s) {
				names = append(names, s)
			}
		}
	}
	for i := range plans {
		add(&plans[i])
	}
	return names
}
