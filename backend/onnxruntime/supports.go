package onnxruntime

import (
	"sort"
	"strings"
	"sync"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/onnx"
	onnxpb "github.com/deep500/deep500-go/onnx/pb"
	"github.com/deep500/deep500-go/ops"
	ort "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/proto"
)

// ONNX Runtime has no API that lists its kernels. Supports asks it instead:
// it builds a one-node model of the operator version, with input types
// taken from the schema's type constraints and plausible values for
// required attributes, and reports whether ONNX Runtime makes a session of
// it. A session is proof of support. ONNX Runtime refuses a model it has no
// kernel for with "Could not find an implementation" (or an operator it
// does not register at all), which is proof of the opposite for that type;
// several type choices are tried before answering no. A probe that fails
// for another reason (the probe model itself is not acceptable) also
// answers no, so the column never claims support it did not see. Over the
// 659 schema versions of ONNX 1.23.1 one such case remains with ONNX
// Runtime 1.30: Cast-1, whose string "to" attribute ONNX Runtime's type
// inference rejects (it registers Cast kernels from opset 6 only).
// ONNX Runtime's error when a kernel's constructor rejects the probe's
// attributes ("Exception during initialization") means the kernel exists.

// probeAttempts bounds the type choices tried per operator version.
const probeAttempts = 4

type probeKey struct {
	domain, opType string
	since          int
}

var probeCache struct {
	mu   sync.Mutex
	done map[probeKey]bool
}

// Supports reports whether ONNX Runtime runs the operator version (domain,
// opType, since) for at least one choice of input types. Results are cached
// for the life of the process; the library is the one New would load with
// default options.
func Supports(domain, opType string, since int) bool {
	domain = onnx.CanonicalDomain(domain)
	k := probeKey{domain, opType, since}
	probeCache.mu.Lock()
	defer probeCache.mu.Unlock()
	if v, ok := probeCache.done[k]; ok {
		return v
	}
	if probeCache.done == nil {
		probeCache.done = map[probeKey]bool{}
	}
	v := probe(domain, opType, since)
	probeCache.done[k] = v
	return v
}

func probe(domain, opType string, since int) bool {
	s := ops.Schema(domain, opType, since)
	if s == nil {
		return false
	}
	if err := ensureEnv(LibraryPath(backend.Options{})); err != nil {
		return false
	}
	for attempt := range probeAttempts {
		m, ok := probeModel(s, attempt)
		if !ok {
			break
		}
		data, err := proto.Marshal(m)
		if err != nil {
			return false
		}
		ok, retry := trySession(data, m)
		if ok {
			return true
		}
		if !retry {
			return false
		}
	}
	return false
}

// trySession builds a session; retry says whether another type choice may
// succeed (ONNX Runtime lacked a kernel for these types, or refused the
// probe model itself).
func trySession(data []byte, m *onnxpb.ModelProto) (ok, retry bool) {
	var ins, outs []string
	for _, v := range m.Graph.Input {
		ins = append(ins, v.GetName())
	}
	for _, v := range m.Graph.Output {
		outs = append(outs, v.GetName())
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return false, false
	}
	defer opts.Destroy()
	opts.SetLogSeverityLevel(ort.LoggingLevelFatal)
	opts.SetIntraOpNumThreads(1)
	opts.SetInterOpNumThreads(1)
	sess, err := ort.NewDynamicAdvancedSessionWithONNXData(data, ins, outs, opts)
	if err == nil {
		sess.Destroy()
		return true, false
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Exception during initialization") &&
		(strings.Contains(msg, "OpKernelInfo") || strings.Contains(msg, "op_node_proto_helper") || strings.Contains(msg, "/providers/")):
		// The kernel was found and its constructor ran (and disliked
		// the probe's attributes): ONNX Runtime has it.
		return true, false
	case strings.Contains(msg, "is not a registered function/op"),
		strings.Contains(msg, "No opset import for domain"),
		strings.Contains(msg, "ValidateOpsetForDomain"), // an opset newer than the library knows
		strings.Contains(msg, "is deprecated"):
		return false, false
	}
	return false, true
}

// typePreference orders element types by how likely a kernel is to exist.
var typePreference = []string{"float", "int64", "int32", "double", "uint8", "int8", "bool", "string", "float16", "bfloat16", "uint16", "int16", "uint32", "uint64"}

func typeRank(t string) int { return ops.TypeRank(t, typePreference) }

// probeModel makes the one-node model of schema s for the attempt-th type
// choice; ok is false when there is no such choice left.
func probeModel(s *ops.SchemaInfo, attempt int) (m *onnxpb.ModelProto, ok bool) {
	choice := map[string]string{}
	more := attempt == 0
	for _, c := range s.TypeConstraints {
		if len(c.Allowed) == 0 {
			continue
		}
		allowed := append([]string(nil), c.Allowed...)
		sort.SliceStable(allowed, func(i, j int) bool { return typeRank(allowed[i]) < typeRank(allowed[j]) })
		if attempt < len(allowed) {
			more = true
		}
		choice[c.Param] = allowed[min(attempt, len(allowed)-1)]
	}
	if !more {
		return nil, false
	}
	typeOfParam := func(p ops.FormalParam) *onnxpb.TypeProto {
		t := p.TypeParam
		if c, ok := choice[t]; ok {
			t = c
		}
		return parseType(t)
	}
	g := &onnxpb.GraphProto{Name: proto.String("probe")}
	n := &onnxpb.NodeProto{OpType: proto.String(s.OpType), Domain: proto.String(s.Domain), Name: proto.String("probe")}
	for i, p := range s.Inputs {
		count := 1
		switch p.Option {
		case ops.ParamOptional:
			// Optional's only input is optional, yet without it (or its
			// type attribute) the node has no type.
			count = 0
			if s.OpType == "Optional" {
				count = 1
			}
		case ops.ParamVariadic:
			count = p.MinArity
			if count == 0 && (i == 0 || s.OpType == "Loop") {
				count = 1
			}
		}
		for j := range count {
			name := p.Name + strings.Repeat("_", j)
			t := typeOfParam(p)
			if t == nil {
				return nil, false
			}
			g.Input = append(g.Input, &onnxpb.ValueInfoProto{Name: proto.String(name), Type: t})
			n.Input = append(n.Input, name)
		}
		if count == 0 && i < len(s.Inputs)-1 {
			n.Input = append(n.Input, "")
		}
	}
	for _, p := range s.Outputs {
		count := 1
		switch p.Option {
		case ops.ParamOptional:
			count = 0
		case ops.ParamVariadic:
			count = max(p.MinArity, 1)
		}
		for j := range count {
			name := "out_" + p.Name + strings.Repeat("_", j)
			g.Output = append(g.Output, &onnxpb.ValueInfoProto{Name: proto.String(name)})
			n.Output = append(n.Output, name)
		}
		if count == 0 {
			n.Output = append(n.Output, "")
		}
	}
	for len(n.Output) > 0 && n.Output[len(n.Output)-1] == "" {
		n.Output = n.Output[:len(n.Output)-1]
	}
	// Trailing omitted inputs are dropped rather than named "".
	for len(n.Input) > 0 && n.Input[len(n.Input)-1] == "" {
		n.Input = n.Input[:len(n.Input)-1]
	}
	extra := probeExtraAttributes(s.OpType)
	for _, a := range s.Attributes {
		if x, ok := extra[a.Name]; ok {
			n.Attribute = append(n.Attribute, x)
		} else if a.Required || a.Name == "hidden_size" || (s.OpType == "Constant" && a.Name == "value") {
			n.Attribute = append(n.Attribute, probeAttribute(s, a, choice))
		}
	}
	g.Node = []*onnxpb.NodeProto{n}
	imports := []*onnxpb.OperatorSetIdProto{{Domain: proto.String(s.Domain), Version: proto.Int64(int64(s.SinceVersion))}}
	if s.Domain != "" {
		imports = append(imports, &onnxpb.OperatorSetIdProto{Domain: proto.String(""), Version: proto.Int64(17)})
	}
	return &onnxpb.ModelProto{IrVersion: proto.Int64(10), Graph: g, OpsetImport: imports}, true
}

// parseType is the TypeProto of a type string, nil when it cannot be
// read.
func parseType(t string) *onnxpb.TypeProto {
	ti, err := onnx.ParseTypeString(t)
	if err != nil {
		return nil
	}
	return onnx.TypeInfoToProto(ti)
}

// probeAttribute gives a required attribute a value its operator accepts
// for the probe's inputs (whose shapes are unknown).
func probeAttribute(s *ops.SchemaInfo, a ops.AttrInfo, choice map[string]string) *onnxpb.AttributeProto {
	p := &onnxpb.AttributeProto{Name: proto.String(a.Name)}
	setInt := func(v int64) { p.Type = onnxpb.AttributeProto_INT.Enum(); p.I = proto.Int64(v) }
	setInts := func(v ...int64) { p.Type = onnxpb.AttributeProto_INTS.Enum(); p.Ints = v }
	setString := func(v string) { p.Type = onnxpb.AttributeProto_STRING.Enum(); p.S = []byte(v) }
	switch a.Type {
	case onnx.AttrInt:
		switch a.Name {
		case "axis", "max_skip_count":
			setInt(0)
		case "to":
			setInt(int64(elemOfChoice(choice, "T2", onnx.Float)))
		case "blocksize":
			setInt(2)
		default:
			setInt(1)
		}
	case onnx.AttrInts:
		switch a.Name {
		case "kernel_shape", "pooled_shape":
			setInts(1, 1)
		case "pads", "paddings":
			setInts(0, 0, 0, 0)
		case "starts", "axes", "ngram_counts", "ngram_indexes":
			setInts(0)
		default:
			setInts(1)
		}
	case onnx.AttrFloat:
		p.Type = onnxpb.AttributeProto_FLOAT.Enum()
		p.F = proto.Float32(1)
	case onnx.AttrFloats:
		p.Type = onnxpb.AttributeProto_FLOATS.Enum()
		p.Floats = []float32{1, 1, 1, 1}
	case onnx.AttrString:
		switch {
		case a.Name == "direction":
			setString("LEFT")
		case a.Name == "to":
			setString("FLOAT")
		case a.Name == "equation":
			setString("ij->ji")
		case a.Name == "mode":
			setString("TF")
		default:
			setString("")
		}
	case onnx.AttrStrings:
		p.Type = onnxpb.AttributeProto_STRINGS.Enum()
		p.Strings = [][]byte{[]byte("x")}
	case onnx.AttrTensor:
		t, _ := onnx.TensorToProto("", onnx.FromSlice([]float32{0}, 1))
		p.Type = onnxpb.AttributeProto_TENSOR.Enum()
		p.T = t
	case onnx.AttrGraph:
		p.Type = onnxpb.AttributeProto_GRAPH.Enum()
		p.G = probeBody(s)
	}
	return p
}

func elemOfChoice(choice map[string]string, param string, def onnx.DataType) onnx.DataType {
	t := parseType(choice[param])
	if t == nil || t.GetTensorType() == nil {
		return def
	}
	return onnx.DataType(t.GetTensorType().GetElemType())
}

// probeBody is the subgraph of a control-flow operator: the least body its
// node's probe inputs and outputs (all float, the first choice) accept.
func probeBody(s *ops.SchemaInfo) *onnxpb.GraphProto {
	f := parseType("tensor(float)")
	b := parseType("tensor(bool)")
	i := parseType("tensor(int64)")
	vi := func(name string, t *onnxpb.TypeProto) *onnxpb.ValueInfoProto {
		return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: t}
	}
	id := func(in, out string) *onnxpb.NodeProto {
		return &onnxpb.NodeProto{OpType: proto.String("Identity"), Input: []string{in}, Output: []string{out}}
	}
	g := &onnxpb.GraphProto{Name: proto.String("body")}
	switch s.OpType {
	case "If":
		c, _ := onnx.TensorToProto("", onnx.FromSlice([]float32{0}, 1))
		g.Node = []*onnxpb.NodeProto{{OpType: proto.String("Constant"), Output: []string{"o"},
			Attribute: []*onnxpb.AttributeProto{{Name: proto.String("value"), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: c}}}}
		g.Output = []*onnxpb.ValueInfoProto{vi("o", f)}
	case "Loop":
		// Loop(M, cond, v) with one loop-carried value.
		g.Input = []*onnxpb.ValueInfoProto{vi("iter", i), vi("cond", b), vi("v", f)}
		g.Node = []*onnxpb.NodeProto{id("cond", "cond_out"), id("v", "v_out")}
		g.Output = []*onnxpb.ValueInfoProto{vi("cond_out", b), vi("v_out", f)}
	default:
		// Scan and SequenceMap: one element in, the same out.
		g.Input = []*onnxpb.ValueInfoProto{vi("x", f)}
		g.Node = []*onnxpb.NodeProto{id("x", "y")}
		g.Output = []*onnxpb.ValueInfoProto{vi("y", f)}
	}
	return g
}

// probeExtraAttributes gives the operators of ai.onnx.ml whose schemas
// require "one of" several attributes (which a schema cannot say) the
// attributes their type inference insists on: a one-class, one-split model.
func probeExtraAttributes(opType string) map[string]*onnxpb.AttributeProto {
	ints := func(name string, v ...int64) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
	}
	floats := func(name string, v ...float32) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOATS.Enum(), Floats: v}
	}
	strs := func(name string, v ...string) *onnxpb.AttributeProto {
		a := &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRINGS.Enum()}
		for _, x := range v {
			a.Strings = append(a.Strings, []byte(x))
		}
		return a
	}
	tensor := func(name string, t *onnx.Tensor) *onnxpb.AttributeProto {
		tp, _ := onnx.TensorToProto("", t)
		return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: tp}
	}
	set := func(as ...*onnxpb.AttributeProto) map[string]*onnxpb.AttributeProto {
		m := map[string]*onnxpb.AttributeProto{}
		for _, a := range as {
			m[a.GetName()] = a
		}
		return m
	}
	switch opType {
	case "CategoryMapper":
		return set(ints("cats_int64s", 1), strs("cats_strings", "a"))
	case "LabelEncoder":
		return set(floats("keys_floats", 1), floats("values_floats", 1))
	case "OneHotEncoder":
		return set(ints("cats_int64s", 1))
	case "ZipMap", "TreeEnsembleClassifier":
		return set(ints("classlabels_int64s", 0))
	case "DictVectorizer":
		return set(ints("int64_vocabulary", 1))
	case "TreeEnsemble":
		return set(ints("tree_roots", 0), ints("nodes_featureids", 0),
			tensor("nodes_splits", onnx.FromSlice([]float32{0.5}, 1)),
			tensor("nodes_modes", onnx.FromSlice([]uint8{0}, 1)),
			ints("nodes_truenodeids", 0), ints("nodes_trueleafs", 1),
			ints("nodes_falsenodeids", 1), ints("nodes_falseleafs", 1),
			ints("leaf_targetids", 0, 0), tensor("leaf_weights", onnx.FromSlice([]float32{1, 2}, 2)))
	}
	return nil
}
