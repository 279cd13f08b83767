package metrics

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Model surgery for the gradient check: copying a model, converting it to
// double precision, appending the checked function L = Σ_k Σ w_k ⊙ y_k, and
// finding which inputs and parameters reach an output through inputs the
// schemas mark differentiable.

// gradCloneModel returns a deep copy of m with every node typed afresh
// (through the protobuf form, which also re-sorts and re-checks the graph),
// so that attribute edits made on the copy reach the typed operators.
func gradCloneModel(m *onnx.Model) (*onnx.Model, error) {
	p, err := onnx.ModelToProto(m)
	if err != nil {
		return nil, err
	}
	return onnx.ModelFromProto(p, m.Dir)
}

// gradIsWidenable reports whether values of type t become double in a
// float64 check: float, float16 and bfloat16 (the float8 and float4 types
// are quantization formats and keep their type).
func gradIsWidenable(t onnx.DataType) bool {
	return t == onnx.Float || t == onnx.Float16 || t == onnx.BFloat16
}

// gradCheckable reports whether the check can perturb and compare tensors
// of type t.
func gradCheckable(t onnx.DataType) bool { return t == onnx.Float || t == onnx.Double }

// gradWidenTensor returns a double copy of a float, float16 or bfloat16
// tensor, or t itself (and false) for any other type.
func gradWidenTensor(t *onnx.Tensor) (*onnx.Tensor, bool) {
	if t == nil || !gradIsWidenable(t.Type) {
		return t, false
	}
	out := onnx.NewTensor(onnx.Double, t.Shape...)
	d := out.Float64s()
	switch s := t.Data.(type) {
	case []float32:
		for i, v := range s {
			d[i] = float64(v)
		}
	case []onnx.F16:
		for i, v := range s {
			d[i] = float64(v.Float32())
		}
	case []onnx.BF16:
		for i, v := range s {
			d[i] = float64(v.Float32())
		}
	default:
		return t, false
	}
	return out, true
}

// gradWidenValue widens the tensors of a fed value (a tensor, or the
// tensors inside a sequence or optional); changed tells whether anything
// was widened.
func gradWidenValue(v onnx.Value) (onnx.Value, bool) {
	switch x := v.(type) {
	case *onnx.Tensor:
		return gradWidenTensor(x)
	case *onnx.Sequence:
		out := &onnx.Sequence{Elem: gradCloneType(x.Elem), Values: make([]onnx.Value, len(x.Values))}
		changed := gradWidenType(out.Elem)
		for i, e := range x.Values {
			var c bool
			out.Values[i], c = gradWidenValue(e)
			changed = changed || c
		}
		return out, changed
	case *onnx.Optional:
		out := &onnx.Optional{Elem: gradCloneType(x.Elem), Value: x.Value}
		changed := gradWidenType(out.Elem)
		if x.Value != nil {
			var c bool
			out.Value, c = gradWidenValue(x.Value)
			changed = changed || c
		}
		return out, changed
	}
	return v, false
}

// gradCloneType returns a deep copy of t, which the widening of a fed
// value may change without touching the feed of the float32 check.
func gradCloneType(t *onnx.TypeInfo) *onnx.TypeInfo {
	if t == nil {
		return nil
	}
	c := *t
	c.Shape = slices.Clone(t.Shape)
	c.Inner = gradCloneType(t.Inner)
	return &c
}

// gradWidenType widens a declared type in place.
func gradWidenType(t *onnx.TypeInfo) bool {
	if t == nil {
		return false
	}
	changed := false
	switch t.Kind {
	case onnx.TensorKind, onnx.SparseTensorKind:
		if gradIsWidenable(t.Elem) {
			t.Elem = onnx.Double
			changed = true
		}
	}
	// A map's Elem is its key type, never a float; its values are Inner.
	if gradWidenType(t.Inner) {
		changed = true
	}
	return changed
}

// gradWidenModel converts, in place, a model (a copy: see gradCloneModel)
// to double precision: the declared types of inputs, outputs and value
// infos, the initializers, tensor attributes (Constant's value,
// ConstantOfShape's value, ...), Constant's value_float(s), and the
// element types that Cast's "to", the random and EyeLike operators'
// "dtype" and the normalizations' "stash_type" (float when absent) name,
// in the main graph, every subgraph and model-local functions. It reports whether anything changed. The typed operators must
// be rebuilt afterwards (gradCloneModel).
func gradWidenModel(m *onnx.Model) bool {
	changed := gradWidenGraph(m.Graph)
	for _, f := range m.Functions {
		for _, n := range f.Nodes {
			if gradWidenNode(n) {
				changed = true
			}
		}
	}
	return changed
}

func gradWidenGraph(g *onnx.Graph) bool {
	if g == nil {
		return false
	}
	changed := false
	for _, list := range [][]*onnx.ValueInfo{g.Inputs, g.Outputs, g.ValueInfo} {
		for _, v := range list {
			if gradWidenType(v.Type) {
				changed = true
			}
		}
	}
	for _, in := range g.Initializers {
		var c bool
		if in.Tensor, c = gradWidenTensor(in.Tensor); c {
			changed = true
		}
	}
	for _, in := range g.SparseInitializers {
		if in.Tensor != nil {
			var c bool
			if in.Tensor.Values, c = gradWidenTensor(in.Tensor.Values); c {
				changed = true
			}
		}
	}
	for _, n := range g.Nodes {
		if gradWidenNode(n) {
			changed = true
		}
	}
	return changed
}

// gradDoubleCode is TensorProto.DOUBLE, the code "to" and "dtype"
// attributes use.
const gradDoubleCode = int64(onnx.Double)

func gradWidenNode(n *onnx.Node) bool {
	changed := false
	isConstant := n.OpType == "Constant" && onnx.CanonicalDomain(n.Domain) == ""
	for i, a := range n.Attributes {
		if a.RefAttrName != "" {
			continue
		}
		switch a.Type {
		case onnx.AttrTensor:
			var c bool
			if a.Tensor, c = gradWidenTensor(a.Tensor); c {
				changed = true
			}
		case onnx.AttrTensors:
			for j := range a.Tensors {
				var c bool
				if a.Tensors[j], c = gradWidenTensor(a.Tensors[j]); c {
					changed = true
				}
			}
		case onnx.AttrSparseTensor:
			if a.SparseTensor != nil {
				var c bool
				if a.SparseTensor.Values, c = gradWidenTensor(a.SparseTensor.Values); c {
					changed = true
				}
			}
		case onnx.AttrSparseTensors:
			for _, s := range a.SparseTensors {
				if s != nil {
					var c bool
					if s.Values, c = gradWidenTensor(s.Values); c {
						changed = true
					}
				}
			}
		case onnx.AttrGraph:
			if gradWidenGraph(a.Graph) {
				changed = true
			}
		case onnx.AttrGraphs:
			for _, sg := range a.Graphs {
				if gradWidenGraph(sg) {
					changed = true
				}
			}
		case onnx.AttrTypeProto:
			if gradWidenType(a.TypeProto) {
				changed = true
			}
		case onnx.AttrTypeProtos:
			for _, tp := range a.TypeProtos {
				if gradWidenType(tp) {
					changed = true
				}
			}
		case onnx.AttrInt:
			// stash_type is the precision of the normalizations'
			// statistics (LayerNormalization's Mean and InvStdDev).
			if (a.Name == "to" || a.Name == "dtype" || a.Name == "stash_type") && gradIsWidenable(onnx.DataType(a.Int)) {
				a.Int = gradDoubleCode
				changed = true
			}
		case onnx.AttrString:
			// Cast-1 names its target type as a string.
			if a.Name == "to" && (a.String == "FLOAT" || a.String == "FLOAT16" || a.String == "BFLOAT16") {
				a.String = "DOUBLE"
				changed = true
			}
		case onnx.AttrFloat:
			if isConstant && a.Name == "value_float" {
				n.Attributes[i] = &onnx.Attribute{Name: "value", Type: onnx.AttrTensor, Tensor: onnx.FromSlice([]float64{float64(a.Float)})}
				changed = true
			}
		case onnx.AttrFloats:
			if isConstant && a.Name == "value_floats" {
				d := make([]float64, len(a.Floats))
				for j, v := range a.Floats {
					d[j] = float64(v)
				}
				n.Attributes[i] = &onnx.Attribute{Name: "value", Type: onnx.AttrTensor, Tensor: onnx.FromSlice(d, len(d))}
				changed = true
			}
		}
	}
	// An absent stash_type is float (every schema that has one says so).
	if !slices.ContainsFunc(n.Attributes, func(a *onnx.Attribute) bool { return a.Name == "stash_type" }) {
		if op, ok := n.Op.(ops.Op); ok {
			if s := ops.Schema(op.Domain(), op.OpType(), op.SinceVersion()); s != nil && s.Attribute("stash_type") != nil {
				n.Attributes = append(n.Attributes, &onnx.Attribute{Name: "stash_type", Type: onnx.AttrInt, Int: gradDoubleCode})
				changed = true
			}
		}
	}
	return changed
}

// gradTerm is one output y_k of L = Σ_k Σ w_k ⊙ y_k.
type gradTerm struct {
	output string
	typ    onnx.DataType
	n      int          // number of elements
	w      *onnx.Tensor // [n, 1], of the loss type
	wf     []float64    // w's values (0 for an element left out of L)
}

// gradNames hands out value names that the graph does not use yet.
type gradNames struct {
	used map[string]bool
	next int
}

func newGradNames(m *onnx.Model) *gradNames {
	used := map[string]bool{}
	var walk func(g *onnx.Graph)
	walk = func(g *onnx.Graph) {
		for _, list := range [][]*onnx.ValueInfo{g.Inputs, g.Outputs, g.ValueInfo} {
			for _, v := range list {
				used[v.Name] = true
			}
		}
		for _, in := range g.Initializers {
			used[in.Name] = true
		}
		for _, in := range g.SparseInitializers {
			used[in.Name] = true
		}
		for _, n := range g.Nodes {
			for _, s := range n.Inputs {
				used[s] = true
			}
			for _, s := range n.Outputs {
				used[s] = true
			}
			used[n.Name] = true
			for _, a := range n.Attributes {
				if a.Graph != nil {
					walk(a.Graph)
				}
				for _, sg := range a.Graphs {
					walk(sg)
				}
			}
		}
	}
	walk(m.Graph)
	return &gradNames{used: used}
}

func (gn *gradNames) fresh(what string) string {
	for {
		name := "gradcheck_" + what + "_" + strconv.Itoa(gn.next)
		gn.next++
		if !gn.used[name] {
			gn.used[name] = true
			return name
		}
	}
}

// gradLossModel returns a copy of m whose only output is the scalar
// L = Σ_k Σ w_k ⊙ y_k of type lossType, shaped [1, 1], and L's name. Each
// term is Reshape(y_k, [1, -1]) · w_k (MatMul with a [n_k, 1] constant),
// the terms are summed with Add, and an output of another floating type
// is first Cast to lossType. The nodes use the model's imported version of
// the default domain (Reshape takes its shape as an attribute before
// opset 5, Cast its target as a string before opset 6).
func gradLossModel(m *onnx.Model, terms []gradTerm, lossType onnx.DataType) (*onnx.Model, string, error) {
	c, err := gradCloneModel(m)
	if err != nil {
		return nil, "", err
	}
	g := c.Graph
	opset := c.Opset("")
	if opset == 0 {
		opset = 1 // as the decoder reads a model that imports no default domain
	}
	names := newGradNames(c)
	node := func(opType string, inputs []string, attrs ...*onnx.Attribute) string {
		out := names.fresh(opType)
		g.Nodes = append(g.Nodes, &onnx.Node{Name: out, OpType: opType, Inputs: inputs, Outputs: []string{out}, Attributes: attrs, Graph: g})
		return out
	}
	constant := func(t *onnx.Tensor) string {
		return node("Constant", nil, &onnx.Attribute{Name: "value", Type: onnx.AttrTensor, Tensor: t})
	}
	var shape string
	if opset >= 5 {
		shape = constant(onnx.FromSlice([]int64{1, -1}, 2))
	}
	var sum string
	for _, t := range terms {
		y := t.output
		if t.typ != lossType {
			to := &onnx.Attribute{Name: "to", Type: onnx.AttrInt, Int: int64(lossType)}
			if opset < 6 {
				to = &onnx.Attribute{Name: "to", Type: onnx.AttrString, String: gradCastName(lossType)}
			}
			y = node("Cast", []string{y}, to)
		}
		var row string
		if opset >= 5 {
			row = node("Reshape", []string{y, shape})
		} else {
			row = node("Reshape", []string{y}, &onnx.Attribute{Name: "shape", Type: onnx.AttrInts, Ints: []int64{1, -1}})
		}
		p := node("MatMul", []string{row, constant(t.w)})
		if sum == "" {
			sum = p
		} else {
			sum = node("Add", []string{sum, p})
		}
	}
	if sum == "" {
		return nil, "", fmt.Errorf("no output to differentiate")
	}
	g.Outputs = []*onnx.ValueInfo{{Name: sum, Type: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: lossType,
		Shape: []onnx.Dim{{Size: 1}, {Size: 1}}, HasShape: true}}}
	out, err := gradCloneModel(c) // types the new nodes
	if err != nil {
		return nil, "", err
	}
	return out, sum, nil
}

func gradCastName(t onnx.DataType) string {
	if t == onnx.Double {
		return "DOUBLE"
	}
	return "FLOAT"
}

// gradReaching returns the sources (graph inputs and initializers) from
// which a path reaches one of outputs, every edge of it through a node
// input that the operator's schema does not mark non-differentiable (an
// operator without a schema counts as differentiable, as in the native
// backend's backward planner). Values read by subgraphs from an enclosing
// scope are not edges.
func gradReaching(g *onnx.Graph, sources, outputs []string) map[string]bool {
	active := map[string]bool{}
	for _, s := range sources {
		active[s] = true
	}
	for _, n := range g.Nodes {
		dep := false
		for i, name := range n.Inputs {
			if name != "" && active[name] && gradDifferentiableInput(n, i) {
				dep = true
			}
		}
		if dep {
			for _, name := range n.Outputs {
				if name != "" {
					active[name] = true
				}
			}
		}
	}
	reaches := map[string]bool{}
	for _, o := range outputs {
		reaches[o] = true
	}
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		n := g.Nodes[i]
		hit := false
		for _, name := range n.Outputs {
			if name != "" && reaches[name] && active[name] {
				hit = true
			}
		}
		if !hit {
			continue
		}
		for j, name := range n.Inputs {
			if name != "" && active[name] && gradDifferentiableInput(n, j) {
				reaches[name] = true
			}
		}
	}
	out := map[string]bool{}
	for _, s := range sources {
		if reaches[s] {
			out[s] = true
		}
	}
	return out
}

func gradDifferentiableInput(n *onnx.Node, i int) bool {
	op, ok := n.Op.(ops.Op)
	if !ok {
		return true
	}
	s := ops.Schema(op.Domain(), op.OpType(), op.SinceVersion())
	if s == nil {
		return true
	}
	p := s.InputParam(i)
	return p == nil || p.Differentiation != ops.NonDifferentiable
}

// gradNonDifferentiableOutputs lists the values that a node produces at an
// output its schema marks non-differentiable (BatchNormalization's running
// statistics, Dropout's mask): L leaves them out, since backprop rightly
// sends no gradient through them.
func gradNonDifferentiableOutputs(g *onnx.Graph) map[string]bool {
	out := map[string]bool{}
	for _, n := range g.Nodes {
		op, ok := n.Op.(ops.Op)
		if !ok {
			continue
		}
		s := ops.Schema(op.Domain(), op.OpType(), op.SinceVersion())
		if s == nil {
			continue
		}
		for i, name := range n.Outputs {
			if p := s.OutputParam(i); name != "" && p != nil && p.Differentiation == ops.NonDifferentiable {
				out[name] = true
			}
		}
	}
	return out
}
