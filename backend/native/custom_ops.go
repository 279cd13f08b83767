package native

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Custom operators: kernels written by a user of the package and
// registered at run time with RegisterKernel, for operators of the user's
// own domain. The builder and the gradient builder implement
// ops.CustomVisitor and run the registered kernel through the small
// interfaces below, so a custom operator is built, run, differentiated,
// probed by Supports and measured (conformance, gradcheck, bench) as a
// built-in one is.

// Kernel computes a custom operator. Forward gets the node's operator (its
// attributes, through op.Attr*) and its input values in node order, nil
// for an omitted optional input, and returns the output values in node
// order; it may return fewer values than the node has outputs when the
// missing ones are omitted ones.
//
// The inputs are other kernels' outputs, graph inputs or parameters:
// Forward must not change them, nor keep them (or the slice) after it
// returns. The values it returns are stored as they are, so each call
// must return new tensors, or the inputs themselves. A kernel is shared
// by every node and network that uses the operator, and networks may run
// concurrently: Forward must be safe for concurrent use.
//
// Forward should return an error that wraps network.ErrUnsupported
// (network.Unsupportedf) for an input type it does not implement, so that
// the conformance and gradient checks skip rather than fail. The error,
// and a panic, are reported naming the node.
type Kernel interface {
	Forward(op *ops.Custom, inputs []onnx.Value) ([]onnx.Value, error)
}

// Gradient is the backward rule of a custom operator, implemented by its
// Kernel where the operator is differentiable. It gets the forward inputs
// and outputs (as Forward got and returned them) and the gradient of the
// loss with respect to each output: zeros when no gradient reached that
// output, nil when the output is omitted or not a floating-point tensor.
// It returns the gradient of each input, in input order: nil, or a short
// slice, for an input it gives no gradient to (an integer index, a
// constant). A gradient must have its input's type and shape.
//
// Backprop runs in float32 or float64; the gradient check converts a
// float32 model to float64 when the kernels accept float64, so a kernel
// that implements both is checked at the tighter tolerance. The same
// rules about inputs and concurrency as for Forward apply; the output
// gradients are read-only too, and the returned tensors are copied, so
// they may be reused from call to call only under a lock.
type Gradient interface {
	Gradient(op *ops.Custom, inputs, outputs []onnx.Value, outputGrads []*onnx.Tensor) (inputGrads []*onnx.Tensor, err error)
}

// Checker is implemented by a Kernel that checks a node when a network
// is built: the number of inputs and outputs, the attributes. An error
// fails the build, naming the node.
type Checker interface {
	Check(op *ops.Custom) error
}

// KernelFunc adapts a function to the Kernel interface, for an operator
// without a gradient.
type KernelFunc func(op *ops.Custom, inputs []onnx.Value) ([]onnx.Value, error)

// Forward calls f.
func (f KernelFunc) Forward(op *ops.Custom, inputs []onnx.Value) ([]onnx.Value, error) {
	return f(op, inputs)
}

type kernelKey struct {
	domain, opType string
	since          int
}

var (
	kernelsMu sync.RWMutex
	kernels   = map[kernelKey]Kernel{}
)

// RegisterKernel makes k the native kernel of the custom operator
// (domain, opType) at version since: models that import domain at a
// version that selects since (since itself or later, up to the next
// registered version) run it. It also registers the operator with
// ops.RegisterCustom, so that onnx.Load types its nodes; register before
// loading models, typically from an init function or main.
//
// It is an error to register a kernel twice for one version, to use a
// domain that ONNX or this project defines, or an operator that is
// already registered otherwise (see ops.RegisterCustom). Implement
// Gradient on k to make the operator differentiable.
func RegisterKernel(domain, opType string, since int, k Kernel) error {
	if k == nil {
		return fmt.Errorf("native: RegisterKernel(%q, %q, %d): nil kernel", domain, opType, since)
	}
	key := kernelKey{onnx.CanonicalDomain(domain), opType, since}
	kernelsMu.Lock()
	defer kernelsMu.Unlock()
	if _, dup := kernels[key]; dup {
		return fmt.Errorf("native: a kernel for %s (domain %s, version %d) is already registered", opType, domain, since)
	}
	if err := ops.RegisterCustom(domain, opType, since); err != nil {
		return fmt.Errorf("native: %w", err)
	}
	kernels[key] = k
	return nil
}

// RegisteredKernels lists the custom operator versions that have a native
// kernel, sorted.
func RegisteredKernels() []onnx.RegisteredOperator {
	kernelsMu.RLock()
	defer kernelsMu.RUnlock()
	out := make([]onnx.RegisteredOperator, 0, len(kernels))
	for k := range kernels {
		out = append(out, onnx.RegisteredOperator{Domain: k.domain, OpType: k.opType, Since: k.since})
	}
	onnx.SortRegisteredOperators(out)
	return out
}

// kernelOf returns the kernel registered for op's version, or an error
// wrapping network.ErrUnsupported that names it.
func kernelOf(op *ops.Custom) (Kernel, error) {
	kernelsMu.RLock()
	k := kernels[kernelKey{onnx.CanonicalDomain(op.Domain()), op.OpType(), op.SinceVersion()}]
	kernelsMu.RUnlock()
	if k == nil {
		return nil, fmt.Errorf("%w: no native kernel is registered for it", ops.Unsupported(op))
	}
	return k, nil
}

var (
	_ ops.CustomVisitor = (*builder)(nil)
	_ ops.CustomVisitor = (*gradBuilder)(nil)
)

// VisitCustom compiles a custom operator into a call of its registered
// kernel.
func (b *builder) VisitCustom(op *ops.Custom) error {
	k, err := kernelOf(op)
	if err != nil || b.probing {
		return err
	}
	if c, ok := k.(Checker); ok {
		if err := userCall("check", func() error { return c.Check(op) }); err != nil {
			return err
		}
	}
	ins := make([]valueRef, len(op.In))
	for i, name := range op.In {
		if ins[i], err = b.optionalInput(name); err != nil {
			return err
		}
	}
	outs := make([]valueRef, len(op.Out))
	for i, name := range op.Out {
		outs[i] = b.output(name)
	}
	vals := make([]onnx.Value, len(ins)) // reused: a kernel serves one run at a time
	return b.emit(func(slots []onnx.Value) error {
		for i, r := range ins {
			vals[i] = nil
			if !r.present() {
				continue
			}
			if vals[i] = slots[r.slot]; vals[i] == nil {
				return fmt.Errorf("input %q has no value", r.name)
			}
		}
		// vals is cleared after the outputs are stored (Forward may return
		// vals itself), so that it keeps no value alive between runs.
		defer clear(vals)
		var res []onnx.Value
		err := userCall("kernel", func() (err error) {
			res, err = k.Forward(op, vals)
			return err
		})
		if err != nil {
			return err
		}
		if len(res) > len(outs) {
			return fmt.Errorf("the kernel returned %d values for %d outputs", len(res), len(outs))
		}
		for i, r := range outs {
			if !r.present() {
				continue
			}
			if i >= len(res) || res[i] == nil {
				return fmt.Errorf("the kernel returned no value for output %q", r.name)
			}
			r.set(slots, res[i])
		}
		return nil
	})
}

// userCall runs a user's kernel code, turning a panic into an error that
// says where it happened.
func userCall(what string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in the custom operator's %s: %v%s", what, p, panicSite())
		}
	}()
	return f()
}

// panicSite names the first frame below the runtime's, from a deferred
// function that recovered a panic: " at pkg.F (file.go:12)", or "".
func panicSite() string {
	pcs := make([]uintptr, 16)
	n := runtime.Callers(3, pcs) // Callers, panicSite, the deferred function
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function != "" && !strings.HasPrefix(f.Function, "runtime.") {
			name := f.Function
			if i := strings.LastIndex(name, "/"); i >= 0 {
				name = name[i+1:]
			}
			return fmt.Sprintf(" at %s (%s:%d)", name, filepath.Base(f.File), f.Line)
		}
		if !more {
			return ""
		}
	}
}

// VisitCustom compiles the backward rule of a custom operator: its
// kernel's Gradient method.
func (gb *gradBuilder) VisitCustom(op *ops.Custom) error {
	k, err := kernelOf(op)
	if err != nil {
		return err
	}
	gk, ok := k.(Gradient)
	if !ok {
		return network.Unsupportedf("gradient of custom operator %s (domain %s, version %d): its kernel has no Gradient method",
			op.OpType(), op.Domain(), op.SinceVersion())
	}
	r := &customGradRule{op: op, k: gk, ins: make([]int, len(op.In)), outs: make([]int, len(op.Out))}
	for i, name := range op.In {
		r.ins[i] = gb.slot(name)
	}
	for i, name := range op.Out {
		r.outs[i] = gb.slot(name)
	}
	r.inVals = make([]onnx.Value, len(r.ins))
	r.outVals = make([]onnx.Value, len(r.outs))
	r.outGrads = make([]*onnx.Tensor, len(r.outs))
	r.zeros = make([]gradScratch, len(r.outs))
	return gb.set(r.run)
}

// customGradRule calls a custom operator's Gradient for one node.
type customGradRule struct {
	op        *ops.Custom
	k         Gradient
	ins, outs []int // slots, -1 where omitted
	inVals    []onnx.Value
	outVals   []onnx.Value
	outGrads  []*onnx.Tensor
	zeros     []gradScratch // the gradients of outputs no gradient reached
}

func (r *customGradRule) run(slots []onnx.Value, g *gradState) error {
	reached, wanted := false, false
	for _, s := range r.outs {
		reached = reached || g.of(s) != nil
	}
	for _, s := range r.ins {
		wanted = wanted || g.wants(s)
	}
	if !reached || !wanted {
		return nil
	}
	defer func() { clear(r.inVals); clear(r.outVals); clear(r.outGrads) }()
	for i, s := range r.ins {
		if s >= 0 {
			r.inVals[i] = slots[s]
		}
	}
	for i, s := range r.outs {
		if s < 0 {
			continue
		}
		r.outVals[i] = slots[s]
		if gt := g.of(s); gt != nil {
			r.outGrads[i] = gt
		} else if t, ok := slots[s].(*onnx.Tensor); ok && t != nil && (t.Type == onnx.Float || t.Type == onnx.Double) {
			r.outGrads[i] = r.zeros[i].zeros(t.Type, t.Shape)
		}
	}
	var grads []*onnx.Tensor
	if err := userCall("gradient", func() (err error) {
		grads, err = r.k.Gradient(r.op, r.inVals, r.outVals, r.outGrads)
		return err
	}); err != nil {
		return err
	}
	if len(grads) > len(r.ins) {
		return fmt.Errorf("the custom gradient returned %d gradients for %d inputs", len(grads), len(r.ins))
	}
	for i, gt := range grads {
		if gt == nil {
			continue
		}
		name := r.op.In[i]
		in, ok := r.inVals[i].(*onnx.Tensor)
		if !ok || in == nil {
			return fmt.Errorf("the custom gradient returned a gradient for input %d (%q), which is %s, not a tensor", i, name, onnx.DescribeValue(r.inVals[i]))
		}
		if gt.Type != in.Type || !sameShape(gt.Shape, in.Shape) {
			return fmt.Errorf("the custom gradient of input %q is tensor(%v)%v; the input is tensor(%v)%v", name, gt.Type, gt.Shape, in.Type, in.Shape)
		}
		if err := gt.Check(); err != nil {
			return fmt.Errorf("the custom gradient of input %q: %w", name, err)
		}
		if err := g.add(r.ins[i], gt); err != nil {
			return fmt.Errorf("input %q: %w", name, err)
		}
	}
	return nil
}
