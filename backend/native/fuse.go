package native

import (
	"fmt"
	"math"
	"strings"

	"github.com/deep500/deep500-go/backend/native/internal/gemm"
	"github.com/deep500/deep500-go/backend/native/internal/vec"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Epilogue fusion: with backend.Options.Optimize, a Conv, Gemm or MatMul
// whose result goes only into an Add and/or an activation compiles, with
// them, into one kernel, whose GEMM adds the residual and applies the
// activation to each output tile while it is in cache (gemm.Epilogue; a
// depthwise convolution's kernels clamp in registers, or the epilogue
// runs over each output plane they write):
//
//	Conv|Gemm → [Add residual] → [Relu|Clip|LeakyRelu|HardSigmoid|HardSwish|Sigmoid]
//	MatMul → [Add bias] → [Add residual] → [activation]
//
// The planner (planFusions) lives here, on the native side, rather than as
// a transform pass rewriting the graph to an operator of the project's
// domain: what fuses is a property of this backend's kernels (which
// epilogues its GEMM and convolutions can apply), not of the graph, and a
// rewritten graph would hold an operator no other backend runs. The graph
// stays as the model says, so its value names, error messages and the
// unfused fallback (below) are the plain operators'.
//
// A chain fuses only when each value inside it is read by exactly one
// node (the next in the chain), by no subgraph, and is not a graph output:
// nothing else may need the values that are never stored. Whether the
// fused kernel applies also depends on the tensors, known only when it
// runs: the types must be float32 or float64, a residual must have exactly
// the output's shape (a broadcast Add is not an epilogue), a MatMul's bias
// must be one value per output column. When they are not, the kernel runs
// the chain's nodes one by one, compiled as they would be unfused.
//
// The fused kernel runs where the chain's last node stood in the plan: the
// residual may be computed between the Conv and its Add (a ResNet block's
// shortcut), and every input of the chain is defined by then. The values
// inside a chain are not materialised; Fetch and AddOutput name them in a
// clear error, and backprop, which needs them, is refused on a network
// with fusions (Optimize is for inference).

// fusion is one chain of nodes compiled as a single kernel.
type fusion struct {
	head      *onnx.Node   // the Conv, Gemm or MatMul
	adds      []*onnx.Node // the Adds that follow it, in order
	addends   []string     // the other operand of each Add
	act       *onnx.Node   // the activation that ends it, or nil
	activated *fusedActivation
}

// nodes lists the chain's nodes in order.
func (f *fusion) nodes() []*onnx.Node {
	list := append([]*onnx.Node{f.head}, f.adds...)
	if f.act != nil {
		list = append(list, f.act)
	}
	return list
}

// tail is the chain's last node, whose output the fused kernel writes.
func (f *fusion) tail() *onnx.Node {
	list := f.nodes()
	return list[len(list)-1]
}

// String describes the chain for messages, each node as the run loop's
// errors name it.
func (f *fusion) String() string {
	var parts []string
	for _, n := range f.nodes() {
		parts = append(parts, fmt.Sprint(n))
	}
	return strings.Join(parts, " + ")
}

// fusionPlan is what planFusions found: each chain keyed by its tail
// node, and the nodes a chain absorbs before its tail.
type fusionPlan struct {
	byTail   map[*onnx.Node]*fusion
	absorbed map[*onnx.Node]bool
}

// planFusions finds the chains of g that compile as one kernel. constant
// returns a value that is the same for every run (an initializer that is
// not an overridable graph input), for Clip's bounds.
func planFusions(g *onnx.Graph, constant func(name string) (*onnx.Tensor, bool)) fusionPlan {
	plan := fusionPlan{byTail: map[*onnx.Node]*fusion{}, absorbed: map[*onnx.Node]bool{}}
	reads := map[string]int{}
	reader := map[string]*onnx.Node{}
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			if in != "" {
				reads[in]++
				reader[in] = n
			}
		}
		for _, name := range subgraphCaptures(n) {
			reads[name] += 2 // never fused: a subgraph reads it
		}
	}
	for _, out := range g.Outputs {
		reads[out.Name] += 2
	}
	onlyReader := func(name string) (*onnx.Node, bool) {
		if reads[name] != 1 {
			return nil, false
		}
		return reader[name], true
	}
	for _, n := range g.Nodes {
		maxAdds := 1
		switch n.Op.(type) {
		case *ops.Conv, *ops.Gemm:
		case *ops.MatMul:
			maxAdds = 2 // a bias, then a residual
		default:
			continue
		}
		if len(n.Outputs) != 1 || n.Outputs[0] == "" {
			continue
		}
		f := &fusion{head: n}
		value := n.Outputs[0]
		for {
			next, ok := onlyReader(value)
			if !ok || len(next.Outputs) != 1 || next.Outputs[0] == "" {
				break
			}
			if _, isAdd := next.Op.(*ops.Add); isAdd && len(f.adds) < maxAdds {
				other, ok := otherOperand(next, value)
				if !ok {
					break
				}
				f.adds, f.addends = append(f.adds, next), append(f.addends, other)
				value = next.Outputs[0]
				continue
			}
			if act, ok := fusableActivation(next, constant); ok {
				f.act, f.activated = next, act
			}
			break
		}
		if len(f.adds) == 0 && f.act == nil || plan.claimed(f) {
			continue
		}
		for _, m := range f.nodes()[:len(f.nodes())-1] {
			plan.absorbed[m] = true
		}
		plan.byTail[f.tail()] = f
	}
	return plan
}

// subgraphCaptures lists the names n's subgraphs (If branches, Loop and
// Scan bodies) read from enclosing scopes, deeper subgraphs' included.
func subgraphCaptures(n *onnx.Node) []string {
	var names []string
	for _, a := range n.Attributes {
		if a.Graph != nil {
			names = append(names, a.Graph.Captures...)
		}
		for _, g := range a.Graphs {
			if g != nil {
				names = append(names, g.Captures...)
			}
		}
	}
	return names
}

// claimed reports whether a node of f already belongs to another chain:
// an Add of two Conv outputs can fuse with one of them only (the first,
// whose Add then reads the second as its residual).
func (p fusionPlan) claimed(f *fusion) bool {
	for _, n := range f.nodes() {
		if p.absorbed[n] || p.byTail[n] != nil {
			return true
		}
	}
	return false
}

// otherOperand returns the input of the two-input node add that is not
// value (value must be exactly one of them).
func otherOperand(add *onnx.Node, value string) (string, bool) {
	if len(add.Inputs) != 2 || add.Inputs[0] == add.Inputs[1] || add.Inputs[0] == "" || add.Inputs[1] == "" {
		return "", false
	}
	if add.Inputs[0] == value {
		return add.Inputs[1], true
	}
	return add.Inputs[0], true
}

// fusedActivation is the activation a fused kernel applies last: a clamp
// (Relu, Clip) or a function over each row segment (the others), computed
// exactly as the operator's own kernel computes it.
type fusedActivation struct {
	clamp  bool
	lo, hi float64
	// boundType is the element type of Clip's bound tensors (0 for none or
	// attributes): the fused kernel applies only to tensors of that type,
	// as the separate Clip rejects others.
	boundType onnx.DataType
	rows32    func([]float32)
	rows64    func([]float64)
}

// fusableActivation returns the fused form of n when n is an activation
// the epilogue applies; Clip's bounds must be constants.
func fusableActivation(n *onnx.Node, constant func(string) (*onnx.Tensor, bool)) (*fusedActivation, bool) {
	switch op := n.Op.(type) {
	case *ops.Relu:
		return &fusedActivation{clamp: true, lo: 0, hi: math.Inf(1)}, true
	case *ops.Clip:
		return clipActivation(op, constant)
	case *ops.LeakyRelu:
		return rowActivation(leakyReluRow[float32](float64(op.Alpha)), leakyReluRow[float64](float64(op.Alpha))), true
	case *ops.HardSigmoid:
		a, b := float64(op.Alpha), float64(op.Beta)
		alpha, beta := op.Alpha, op.Beta
		return rowActivation(func(row []float32) { vec.HardSigmoid(row, row, alpha, beta) }, hardSigmoidRow[float64](a, b)), true
	case *ops.HardSwish:
		return rowActivation(func(row []float32) { vec.HardSwish(row, row) }, hardSwishRow[float64]), true
	case *ops.Sigmoid:
		return rowActivation(func(row []float32) { vec.Sigmoid(row, row) }, sigmoidRow[float64]), true
	}
	return nil, false
}

func rowActivation(rows32 func([]float32), rows64 func([]float64)) *fusedActivation {
	return &fusedActivation{rows32: rows32, rows64: rows64}
}

// clipActivation is the clamp of a Clip whose bounds are attributes
// (before version 11) or constant scalar inputs; a missing bound is
// infinite.
func clipActivation(op *ops.Clip, constant func(string) (*onnx.Tensor, bool)) (*fusedActivation, bool) {
	act := &fusedActivation{clamp: true, lo: math.Inf(-1), hi: math.Inf(1)}
	if op.SinceVersion() < 11 {
		if op.Min != nil {
			act.lo = float64(*op.Min)
		}
		if op.Max != nil {
			act.hi = float64(*op.Max)
		}
		return act, true
	}
	for _, bound := range []struct {
		name string
		dst  *float64
	}{{op.In.Min, &act.lo}, {op.In.Max, &act.hi}} {
		if bound.name == "" {
			continue
		}
		t, ok := constant(bound.name)
		if !ok || t.Len() > 1 {
			return nil, false
		}
		if t.Len() == 0 {
			continue // Clip treats an empty bound as none
		}
		if act.boundType != 0 && act.boundType != t.Type {
			return nil, false
		}
		act.boundType = t.Type
		switch d := t.Data.(type) {
		case []float32:
			*bound.dst = float64(d[0])
		case []float64:
			*bound.dst = d[0]
		default:
			return nil, false
		}
	}
	return act, true
}

// appliesTo reports whether the activation can be fused for tensors of
// type t.
func (a *fusedActivation) appliesTo(t onnx.DataType) bool {
	return a == nil || a.boundType == 0 || a.boundType == t
}

// epilogueOf returns an epilogue holding act (nil: none) for the caller
// to add its bias and residual to. It is a value, which the caller keeps
// on its stack: a product's epilogue costs no allocation.
func epilogueOf[T floatElem](act *fusedActivation) gemm.Epilogue[T] {
	var ep gemm.Epilogue[T]
	if act == nil {
		return ep
	}
	ep.Clamp, ep.Lo, ep.Hi = act.clamp, T(act.lo), T(act.hi)
	switch rows := any(&ep.Rows).(type) {
	case *func([]float32):
		*rows = act.rows32
	case *func([]float64):
		*rows = act.rows64
	}
	return ep
}

// The row functions compute what the operators' kernels compute, element
// for element, so that fusing changes no result: float32 HardSigmoid,
// HardSwish and Sigmoid run the same internal/vec kernels as their
// operators (in place: the kernels read each element before writing it);
// the others, and float64, compute in float64 and round once, as the
// operators do.

func leakyReluRow[T floatElem](alpha float64) func([]T) {
	return func(row []T) {
		for i, v := range row {
			if x := float64(v); x < 0 {
				row[i] = T(alpha * x)
			}
		}
	}
}

func hardSigmoidRow[T floatElem](alpha, beta float64) func([]T) {
	return func(row []T) {
		for i, v := range row {
			row[i] = T(max(0, min(1, alpha*float64(v)+beta)))
		}
	}
}

func hardSwishRow[T floatElem](row []T) {
	for i, v := range row {
		x := float64(v)
		row[i] = T(x * max(0, min(1, x/6+0.5)))
	}
}

func sigmoidRow[T floatElem](row []T) {
	for i, v := range row {
		row[i] = T(sigmoid(float64(v)))
	}
}

// compileFusion compiles chain f into one step at the position of its
// tail. The chain's nodes are also compiled one by one, as they would be
// unfused, into the fallback the step runs when the fused kernel does not
// apply to a run's tensors.
func (b *builder) compileFusion(f *fusion) error {
	var fallback []step
	b.sink = &fallback
	for _, n := range f.nodes() {
		if err := b.compile(n); err != nil {
			b.sink = nil
			return err
		}
	}
	b.sink = nil
	b.node = f.head
	addends := make([]valueRef, len(f.addends))
	for i, name := range f.addends {
		ref, err := b.input(name)
		if err != nil {
			return fmt.Errorf("native: %v: %w", f.adds[i], err)
		}
		addends[i] = ref
	}
	act := f.activated
	refs, compute, err := b.fusedHead(f.head, act)
	if err != nil {
		return fmt.Errorf("native: %v: %w", f.head, err)
	}
	out := b.output(f.tail().Outputs[0])
	for _, n := range f.nodes()[:len(f.nodes())-1] {
		b.e.fusedAway[n.Outputs[0]] = f.String()
	}
	addTensors := make([]*onnx.Tensor, len(addends))
	ins := make([]*onnx.Tensor, len(refs))
	fused := func(slots []onnx.Value) (*onnx.Tensor, bool, error) {
		for i, r := range addends {
			t, err := r.tensor(slots)
			if err != nil {
				return nil, false, err
			}
			addTensors[i] = t
		}
		if err := readTensors(ins, refs, slots); err != nil {
			return nil, false, err
		}
		if !act.appliesTo(ins[0].Type) {
			return nil, false, nil
		}
		return compute(ins, addTensors)
	}
	return b.emit(func(slots []onnx.Value) error {
		res, ok, err := fused(slots)
		// Hold no tensors between runs: the step would otherwise keep
		// this run's inputs alive until the next.
		clear(addTensors)
		clear(ins)
		if err != nil {
			return err
		}
		if ok {
			out.set(slots, res)
			return nil
		}
		for _, s := range fallback {
			if err := s.run(slots); err != nil {
				if s.node == f.head {
					return err
				}
				return fmt.Errorf("%v: %w", s.node, err)
			}
		}
		return nil
	})
}

// fusedHeadCompute computes a chain's head from the tensors of its inputs
// (nil for an omitted optional one) and the addends of its Adds, with the
// chain's activation fused, reporting false (and computing nothing) when
// the fused kernel does not apply to these tensors.
type fusedHeadCompute func(ins, addends []*onnx.Tensor) (*onnx.Tensor, bool, error)

// fusedHead returns the inputs of a chain's head node and its fused
// kernel, which applies act (nil: none).
func (b *builder) fusedHead(n *onnx.Node, act *fusedActivation) ([]valueRef, fusedHeadCompute, error) {
	switch op := n.Op.(type) {
	case *ops.Conv:
		refs, err := b.inputRefs(2, op.In.X, op.In.W, op.In.B)
		if err != nil {
			return nil, nil, err
		}
		k, err := b.newConvKernel(op)
		if err != nil {
			return nil, nil, err
		}
		return refs, func(ins, addends []*onnx.Tensor) (*onnx.Tensor, bool, error) {
			return k.computeFused(ins[0], ins[1], ins[2], firstOrNil(addends), act)
		}, nil
	case *ops.Gemm:
		refs, err := b.inputRefs(2, op.In.A, op.In.B, op.In.C)
		if err != nil {
			return nil, nil, err
		}
		k := b.newGemmKernel(op)
		return refs, func(ins, addends []*onnx.Tensor) (*onnx.Tensor, bool, error) {
			return k.computeFused(ins[0], ins[1], ins[2], firstOrNil(addends), act)
		}, nil
	case *ops.MatMul:
		refs, err := b.inputRefs(2, op.In.A, op.In.B)
		if err != nil {
			return nil, nil, err
		}
		k := &matmulKernel{threads: b.e.threads, weights: newWeightOperands(b, op.In.A, op.In.B)}
		return refs, func(ins, addends []*onnx.Tensor) (*onnx.Tensor, bool, error) {
			return k.computeFused(ins[0], ins[1], addends, act)
		}, nil
	}
	return nil, nil, fmt.Errorf("%s cannot head a fusion", n.OpType)
}

// firstOrNil returns ts[0], or nil for an empty list.
func firstOrNil(ts []*onnx.Tensor) *onnx.Tensor {
	if len(ts) == 0 {
		return nil
	}
	return ts[0]
}
