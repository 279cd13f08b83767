package native

import (
	"errors"
	"fmt"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// builder compiles nodes into kernels. It is an ops.Visitor: the embedded
// UnsupportedVisitor answers "unsupported" for every operator, and the
// files of this package override the Visit methods of the operators they
// implement (arithmetic.go, activations.go, ...). A Visit method resolves
// names to slots, checks attributes, and calls emit with the kernel.
type builder struct {
	ops.UnsupportedVisitor
	e    *executor
	node *onnx.Node // the node being compiled
	// probing is set by Supports: names need not be defined and nothing
	// is emitted; only whether the Visit method accepts the operator counts.
	probing bool
	// sink, when not nil, receives the emitted steps instead of the plan
	// (the unfused fallback of a fusion, fuse.go).
	sink *[]step
}

// valueRef is a resolved input or output: its slot, and its name for
// messages. An omitted optional input or output has slot -1.
type valueRef struct {
	slot int
	name string
}

func (r valueRef) present() bool { return r.slot >= 0 }

// tensor returns the input's value as a tensor.
func (r valueRef) tensor(slots []onnx.Value) (*onnx.Tensor, error) {
	t, ok := slots[r.slot].(*onnx.Tensor)
	if !ok || t == nil {
		return nil, fmt.Errorf("input %q is %s, not a tensor", r.name, onnx.DescribeValue(slots[r.slot]))
	}
	return t, nil
}

// optionalTensor is tensor for an optional input: nil when omitted.
func (r valueRef) optionalTensor(slots []onnx.Value) (*onnx.Tensor, error) {
	if !r.present() {
		return nil, nil
	}
	return r.tensor(slots)
}

// set stores a kernel's output (dropped when the output is omitted).
func (r valueRef) set(slots []onnx.Value, v onnx.Value) {
	if r.present() {
		slots[r.slot] = v
	}
}

// input resolves a required input: it must be a graph input, an
// initializer, or an output of an earlier node.
func (b *builder) input(name string) (valueRef, error) {
	switch {
	case b.probing:
		return valueRef{b.e.defineSlot(name), name}, nil // a stand-in node names no inputs
	case name == "":
		return valueRef{-1, ""}, fmt.Errorf("a required input is missing")
	}
	return b.optionalInput(name)
}

// optionalInput resolves an input that the node may omit ("").
func (b *builder) optionalInput(name string) (valueRef, error) {
	if name == "" {
		return valueRef{-1, ""}, nil
	}
	if b.probing {
		return valueRef{b.e.defineSlot(name), name}, nil
	}
	s, ok := b.e.slotOf[name]
	if !ok {
		return valueRef{-1, name}, fmt.Errorf("input %q is not a graph input, an initializer, or an output of an earlier node", name)
	}
	return valueRef{s, name}, nil
}

// inputs resolves a list of required inputs (a variadic input).
func (b *builder) inputs(names []string) ([]valueRef, error) {
	refs := make([]valueRef, len(names))
	for i, n := range names {
		r, err := b.input(n)
		if err != nil {
			return nil, err
		}
		refs[i] = r
	}
	return refs, nil
}

// output defines the slot a node writes; "" (an omitted optional output)
// gives a reference that drops the value.
func (b *builder) output(name string) valueRef {
	if name == "" {
		return valueRef{-1, ""}
	}
	return valueRef{b.e.defineSlot(name), name}
}

// emit appends the compiled kernel of the current node to the plan.
func (b *builder) emit(k kernel) error {
	switch {
	case b.probing:
	case b.sink != nil:
		*b.sink = append(*b.sink, step{node: b.node, run: k})
	default:
		b.e.plan = append(b.e.plan, step{node: b.node, run: k})
	}
	return nil
}

// unaryTensorKernel adapts a tensor-to-tensor compute function into a
// kernel reading input x and writing output y: the shape of most
// single-input operators.
func unaryTensorKernel(x, y valueRef, compute func(*onnx.Tensor) (*onnx.Tensor, error)) kernel {
	return func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		out, err := compute(t)
		if err != nil {
			return err
		}
		y.set(slots, out)
		return nil
	}
}

// binaryTensorKernel is unaryTensorKernel for operators with two required
// inputs a and b.
func binaryTensorKernel(a, b, y valueRef, compute func(a, b *onnx.Tensor) (*onnx.Tensor, error)) kernel {
	return func(slots []onnx.Value) error {
		ta, err := a.tensor(slots)
		if err != nil {
			return err
		}
		tb, err := b.tensor(slots)
		if err != nil {
			return err
		}
		out, err := compute(ta, tb)
		if err != nil {
			return err
		}
		y.set(slots, out)
		return nil
	}
}

// tensorsKernel is unaryTensorKernel for operators with several inputs:
// compute gets the tensors of refs in order, nil where an optional input
// is omitted. The slice is reused between runs (a kernel, like its output
// buffers, serves one run at a time), so compute must not keep it.
func tensorsKernel(refs []valueRef, y valueRef, compute func(ts []*onnx.Tensor) (*onnx.Tensor, error)) kernel {
	ts := make([]*onnx.Tensor, len(refs))
	return func(slots []onnx.Value) error {
		if err := readTensors(ts, refs, slots); err != nil {
			return err
		}
		out, err := compute(ts)
		if err != nil {
			return err
		}
		y.set(slots, out)
		return nil
	}
}

// readTensors fills ts with the tensors of refs (nil for an omitted
// optional input).
func readTensors(ts []*onnx.Tensor, refs []valueRef, slots []onnx.Value) error {
	for i, r := range refs {
		t, err := r.optionalTensor(slots)
		if err != nil {
			return err
		}
		ts[i] = t
	}
	return nil
}

// inputRefs resolves the inputs named: the first required ones with
// input, the rest with optionalInput.
func (b *builder) inputRefs(required int, names ...string) ([]valueRef, error) {
	refs := make([]valueRef, len(names))
	for i, n := range names {
		var err error
		if i < required {
			refs[i], err = b.input(n)
		} else {
			refs[i], err = b.optionalInput(n)
		}
		if err != nil {
			return nil, err
		}
	}
	return refs, nil
}

// Supports reports whether the native backend compiles (domain, opType)
// at schema version since. It asks the builder itself: the operator is
// built with ops.New (defaults, no inputs) and visited by a builder in
// probing mode, so the answer comes from the Visit methods that New uses
// and cannot drift from them. A Visit method that rejects the stand-in
// for another reason than ErrUnsupported (an attribute a real node must
// set) still counts as support.
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
	b := &builder{e: newProbeExecutor(), node: op.Node(), probing: true}
	return !errors.Is(op.Accept(b), network.ErrUnsupported)
}

// newProbeExecutor is the empty executor a probing builder writes into.
func newProbeExecutor() *executor {
	return &executor{slotOf: map[string]int{}, inputOf: map[string]*graphInput{}, initializers: map[string]bool{}}
}
