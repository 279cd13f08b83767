package onnxruntime

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	onnxpb "github.com/deep500/deep500-go/onnx/pb"
	ort "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/proto"
)

// The session's graph is the model's graph with a few nodes added around
// its inputs and outputs, because onnxruntime_go v1.27.0 cannot make a
// rank-0 tensor of every type nor read back any rank-0 tensor, and copies
// float16/bfloat16 outputs with one byte per element (half their data).
// Nothing the model computes changes: the added nodes only reshape and
// cast exactly (float16 and bfloat16 are subsets of float32).

// suffix marks the names of values the backend adds; a model's own names
// are not expected to contain it.
const suffix = "__d500_"

// minRewriteOpset is the default-domain opset from which the added nodes
// exist in the form used here (Cast with an int "to": 6; Reshape with a
// shape input: 5). ONNX Runtime has no kernels before opset 7 anyway.
const minRewriteOpset = 6

// addedOpset is imported for the added nodes when the model imports no
// default-domain opset (a model of ai.onnx.ml operators only).
const addedOpset = 13

// inputForm is how a graph input reaches the session. onnxruntime_go
// cannot make empty sequences or optional values, so those are made inside
// the graph (SequenceEmpty, Optional) and the form depends on the feed:
// the session is rebuilt when it changes.
type inputForm struct {
	kind formKind
	n    int // formSeqScalars, formOptSeqScalars: the sequence's length
}

type formKind int

const (
	formPlain       formKind = iota
	formRank1                // a declared scalar, fed as shape [1] and reshaped inside
	formEmptySeq             // an empty sequence, made by SequenceEmpty
	formOptValue             // an optional holding a value, fed as the value and wrapped by Optional
	formOptNone              // an empty optional, made by Optional
	formOptEmptySeq          // an optional holding an empty sequence
	// A sequence of rank-0 tensors (onnxruntime_go cannot read back its
	// elements): each is fed as [1], reshaped and joined by
	// SequenceConstruct inside the graph.
	formSeqScalars
	formOptSeqScalars
)

// inputPlan says how a graph input is fed to the session.
type inputPlan struct {
	name    string // the graph's input
	session string // the session's input name; "" when made inside the graph
	form    inputForm
	elems   []string // formSeqScalars, formOptSeqScalars: the session inputs of the elements
}

// dummyInput is fed to a session whose graph has no input: onnxruntime_go
// cannot run a session without one.
const dummyInput = suffix + "unused"

// outputPlan says how a value is read from the session's outputs.
type outputPlan struct {
	name  string        // the value
	value string        // the session output carrying its data
	shape string        // when set, value is flattened and this output has the shape
	cast  onnx.DataType // Float16 or BFloat16: value was cast to float32

	// An optional value is read as a flag (OptionalHasElement, planned like
	// a scalar output) and its content or, when empty, a stand-in of the
	// same type (an If inside the graph), planned as above.
	optional *onnx.TypeInfo // the optional's element type; nil for other values
	has      *outputPlan
}

// valueType is what the plan needs to know of a value's type.
type valueType struct {
	kind     onnx.TypeKind
	elem     onnx.DataType
	rankKnow bool // the rank is known
	rank     int
}

func typeOf(t *onnx.TypeInfo) *valueType {
	if t == nil {
		return nil
	}
	return &valueType{kind: t.Kind, elem: t.Elem, rankKnow: t.HasShape, rank: len(t.Shape)}
}

// ortTypeOf translates what ONNX Runtime infers for an output. ONNX Runtime
// reports an unknown rank as rank 0, so rank is only "known" when positive.
func ortTypeOf(info ort.InputOutputInfo) *valueType {
	switch info.OrtValueType {
	case ort.ONNXTypeTensor:
		return &valueType{kind: onnx.TensorKind, elem: elemFromORT(info.DataType), rankKnow: len(info.Dimensions) > 0, rank: len(info.Dimensions)}
	case ort.ONNXTypeSequence:
		return &valueType{kind: onnx.SequenceKind}
	case ort.ONNXTypeMap:
		return &valueType{kind: onnx.MapKind}
	case ort.ONNXTypeOptional:
		return &valueType{kind: onnx.OptionalKind}
	case ort.ONNXTypeSparseTensor:
		return &valueType{kind: onnx.SparseTensorKind}
	}
	return nil
}

func elemFromORT(dt ort.TensorElementDataType) onnx.DataType {
	switch dt {
	case ort.TensorElementDataTypeFloat16:
		return onnx.Float16
	case ort.TensorElementDataTypeBFloat16:
		return onnx.BFloat16
	case ort.TensorElementDataTypeInt4:
		return onnx.Int4
	case ort.TensorElementDataTypeUint4:
		return onnx.Uint4
	case ort.TensorElementDataTypeComplex64:
		return onnx.Complex64
	case ort.TensorElementDataTypeComplex128:
		return onnx.Complex128
	}
	// The others need no special handling; onnx.Float stands for them.
	return onnx.Float
}

func defaultOpset(p *onnxpb.ModelProto) int64 {
	for _, o := range p.OpsetImport {
		if d := o.GetDomain(); d == "" || d == "ai.onnx" {
			return o.GetVersion()
		}
	}
	return 0
}

// sessionGraph returns the model the session is built from: base with the
// outputs replaced by those the plan reads, and the nodes that make inputs
// and read outputs added. forms says how each feedable input is fed (plain
// when not listed); types gives what is known of each exposed value's type
// (nil: nothing).
func sessionGraph(base *onnxpb.ModelProto, feedable []string, forms map[string]inputForm, exposed []string, types map[string]*valueType) (*onnxpb.ModelProto, []inputPlan, []outputPlan, error) {
	p := proto.Clone(base).(*onnxpb.ModelProto)
	g := p.Graph
	opset := defaultOpset(p)
	if opset == 0 {
		p.OpsetImport = append(p.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: proto.String(""), Version: proto.Int64(addedOpset)})
		opset = addedOpset
	}
	rewrite := opset >= minRewriteOpset

	var pre, post []*onnxpb.NodeProto
	var inputs []inputPlan
	var keptInputs []*onnxpb.ValueInfoProto
	for _, vi := range g.Input {
		name := vi.GetName()
		if !slices.Contains(feedable, name) {
			keptInputs = append(keptInputs, vi)
			continue
		}
		in := inputPlan{name: name, session: name, form: forms[name]}
		if !rewrite {
			in.form = inputForm{}
		}
		switch in.form.kind {
		case formRank1:
			in.session = name + suffix + "in"
			vi.Name = proto.String(in.session)
			if tt := vi.GetType().GetTensorType(); tt != nil {
				tt.Shape = &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 1}}}}
			}
			shape := name + suffix + "scalar_shape"
			pre = append(pre, constantInt64s(shape, nil), node("Reshape", []string{in.session, shape}, name))
		case formEmptySeq:
			in.session = ""
			pre = append(pre, sequenceEmpty(vi.GetType().GetSequenceType().GetElemType(), name))
		case formOptValue:
			in.session = name + suffix + "in"
			inner := vi.GetType().GetOptionalType().GetElemType()
			vi = &onnxpb.ValueInfoProto{Name: proto.String(in.session), Type: inner}
			pre = append(pre, node("Optional", []string{in.session}, name))
		case formOptNone:
			in.session = ""
			n := node("Optional", nil, name)
			n.Attribute = []*onnxpb.AttributeProto{{Name: proto.String("type"), Type: onnxpb.AttributeProto_TYPE_PROTO.Enum(), Tp: vi.GetType().GetOptionalType().GetElemType()}}
			pre = append(pre, n)
		case formOptEmptySeq:
			in.session = ""
			seq := name + suffix + "seq"
			pre = append(pre, sequenceEmpty(vi.GetType().GetOptionalType().GetElemType().GetSequenceType().GetElemType(), seq),
				node("Optional", []string{seq}, name))
		case formSeqScalars, formOptSeqScalars:
			in.session = ""
			seqType := vi.GetType().GetSequenceType()
			if in.form.kind == formOptSeqScalars {
				seqType = vi.GetType().GetOptionalType().GetElemType().GetSequenceType()
			}
			elemType := seqType.GetElemType().GetTensorType().GetElemType()
			shape := name + suffix + "scalar_shape"
			pre = append(pre, constantInt64s(shape, nil))
			var parts []string
			for i := range in.form.n {
				fed := fmt.Sprintf("%s%se%d", name, suffix, i)
				part := fed + "_scalar"
				in.elems = append(in.elems, fed)
				keptInputs = append(keptInputs, &onnxpb.ValueInfoProto{Name: proto.String(fed), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
					ElemType: proto.Int32(elemType),
					Shape:    &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 1}}}},
				}}}})
				pre = append(pre, node("Reshape", []string{fed, shape}, part))
				parts = append(parts, part)
			}
			if in.form.kind == formSeqScalars {
				pre = append(pre, node("SequenceConstruct", parts, name))
			} else {
				seq := name + suffix + "seq"
				pre = append(pre, node("SequenceConstruct", parts, seq), node("Optional", []string{seq}, name))
			}
		}
		if in.session != "" {
			keptInputs = append(keptInputs, vi)
		}
		inputs = append(inputs, in)
	}
	hasSessionInput := false
	for _, in := range inputs {
		hasSessionInput = hasSessionInput || in.session != "" || len(in.elems) > 0
	}
	if !hasSessionInput {
		keptInputs = append(keptInputs, &onnxpb.ValueInfoProto{Name: proto.String(dummyInput), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
			ElemType: proto.Int32(int32(onnx.Float)),
			Shape:    &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 1}}}},
		}}}})
		inputs = append(inputs, inputPlan{session: dummyInput})
	}
	g.Input = keptInputs

	var outs []*onnxpb.ValueInfoProto
	declared := map[string]*onnxpb.ValueInfoProto{}
	for _, vi := range g.Output {
		declared[vi.GetName()] = vi
	}
	seen := map[string]bool{}
	addOut := func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		if vi, ok := declared[name]; ok {
			outs = append(outs, vi)
		} else {
			outs = append(outs, &onnxpb.ValueInfoProto{Name: proto.String(name)})
		}
	}
	// readAs plans reading value name of type t through session outputs.
	readAs := func(op *outputPlan, name string, t *valueType) {
		op.value = name
		if !rewrite || (t != nil && t.kind != onnx.TensorKind) {
			return
		}
		src := name
		if t != nil && (t.elem == onnx.Float16 || t.elem == onnx.BFloat16) {
			op.cast = t.elem
			src = name + suffix + "f32"
			post = append(post, castNode(name, src, int64(onnx.Float)))
		}
		if t == nil || !t.rankKnow || t.rank == 0 {
			m1 := name + suffix + "minus1"
			op.value = name + suffix + "flat"
			op.shape = name + suffix + "shape"
			post = append(post, constantInt64s(m1, []int64{-1}),
				node("Reshape", []string{src, m1}, op.value),
				node("Shape", []string{name}, op.shape))
		} else {
			op.value = src
		}
	}
	var plans []outputPlan
	for _, name := range exposed {
		t := types[name]
		op := outputPlan{name: name}
		if t != nil {
			switch t.kind {
			case onnx.SparseTensorKind:
				return nil, nil, nil, network.Unsupportedf("output %q is a sparse tensor, which onnxruntime_go cannot read", name)
			case onnx.TensorKind:
				switch t.elem {
				case onnx.Int4, onnx.Uint4, onnx.Int2, onnx.Uint2, onnx.Float4E2M1, onnx.Complex64, onnx.Complex128:
					return nil, nil, nil, network.Unsupportedf("output %q is a tensor(%v), which onnxruntime_go cannot read", name, t.elem)
				}
			}
		}
		if t != nil && t.kind == onnx.OptionalKind {
			inner := declared[name].GetType().GetOptionalType().GetElemType()
			elem, err := onnx.TypeInfoFromProto(inner)
			if inner == nil || err != nil || !rewrite || opset < 15 {
				return nil, nil, nil, network.Unsupportedf("output %q is an optional value, which onnxruntime_go cannot read (and the model does not declare its type, or its opset is below 15)", name)
			}
			has := name + suffix + "has"
			val := name + suffix + "val"
			stand, err := emptyOf(inner, "else_out")
			if err != nil {
				return nil, nil, nil, network.Unsupportedf("output %q: %v", name, err)
			}
			post = append(post, node("OptionalHasElement", []string{name}, has), ifNode(has, val,
				&onnxpb.GraphProto{Name: proto.String(val + "_then"), Node: []*onnxpb.NodeProto{node("OptionalGetElement", []string{name}, "then_out")},
					Output: []*onnxpb.ValueInfoProto{{Name: proto.String("then_out"), Type: withoutShape(inner)}}},
				&onnxpb.GraphProto{Name: proto.String(val + "_else"), Node: []*onnxpb.NodeProto{stand},
					Output: []*onnxpb.ValueInfoProto{{Name: proto.String("else_out"), Type: withoutShape(inner)}}}))
			hp := &outputPlan{name: has}
			readAs(hp, has, &valueType{kind: onnx.TensorKind, elem: onnx.Bool, rankKnow: true})
			op.has = hp
			op.optional = elem
			readAs(&op, val, typeOf(elem))
			for _, s := range []string{hp.value, hp.shape} {
				addOut(s)
			}
		} else {
			readAs(&op, name, t)
		}
		addOut(op.value)
		if op.shape != "" {
			addOut(op.shape)
		}
		plans = append(plans, op)
	}
	g.Node = append(append(pre, g.Node...), post...)
	g.Output = outs
	return p, inputs, plans, nil
}

func node(op string, inputs []string, output string) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{OpType: proto.String(op), Input: inputs, Output: []string{output}, Name: proto.String(output)}
}

func castNode(in, out string, to int64) *onnxpb.NodeProto {
	n := node("Cast", []string{in}, out)
	n.Attribute = []*onnxpb.AttributeProto{{Name: proto.String("to"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(to)}}
	return n
}

// constantInt64s is a Constant node holding a 1-D int64 tensor. A node, not
// an initializer: models of IR version 3 must list every initializer as an
// input.
func constantInt64s(name string, vals []int64) *onnxpb.NodeProto {
	n := node("Constant", nil, name)
	t := &onnxpb.TensorProto{Dims: []int64{int64(len(vals))}, DataType: proto.Int32(int32(onnx.Int64)), Int64Data: vals}
	n.Attribute = []*onnxpb.AttributeProto{{Name: proto.String("value"), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: t}}
	return n
}

// sequenceEmpty makes an empty sequence of the element type of a
// seq(tensor(T)) type (float when the type does not say).
func sequenceEmpty(elem *onnxpb.TypeProto, out string) *onnxpb.NodeProto {
	n := node("SequenceEmpty", nil, out)
	if dt := elem.GetTensorType().GetElemType(); dt != 0 {
		n.Attribute = []*onnxpb.AttributeProto{{Name: proto.String("dtype"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(int64(dt))}}
	}
	return n
}

func ifNode(cond, out string, then, els *onnxpb.GraphProto) *onnxpb.NodeProto {
	n := node("If", []string{cond}, out)
	n.Attribute = []*onnxpb.AttributeProto{
		{Name: proto.String("then_branch"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: then},
		{Name: proto.String("else_branch"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: els},
	}
	return n
}

// emptyOf makes a node whose output is an empty value of type t: an empty
// sequence, or a tensor with no elements.
func emptyOf(t *onnxpb.TypeProto, out string) (*onnxpb.NodeProto, error) {
	switch {
	case t.GetSequenceType() != nil:
		return sequenceEmpty(t.GetSequenceType().GetElemType(), out), nil
	case t.GetTensorType() != nil:
		n := node("Constant", nil, out)
		n.Attribute = []*onnxpb.AttributeProto{{Name: proto.String("value"), Type: onnxpb.AttributeProto_TENSOR.Enum(),
			T: &onnxpb.TensorProto{Dims: []int64{0}, DataType: proto.Int32(t.GetTensorType().GetElemType())}}}
		return n, nil
	}
	return nil, fmt.Errorf("no empty value of an optional's element type %v", t)
}

// withoutShape copies a type without its tensor shape: the two branches of
// the If that reads an optional have different shapes.
func withoutShape(t *onnxpb.TypeProto) *onnxpb.TypeProto {
	c := proto.Clone(t).(*onnxpb.TypeProto)
	if tt := c.GetTensorType(); tt != nil {
		tt.Shape = nil
	}
	return c
}
