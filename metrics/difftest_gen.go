package metrics

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/deep500/deep500-go/onnx"
	onnxpb "github.com/deep500/deep500-go/onnx/pb"
	"github.com/deep500/deep500-go/ops"
	"google.golang.org/protobuf/proto"
)

// This file is the generator of difftest's cases: from an operator
// version's schema it makes a random valid one-node model and its inputs.
// The types come from the schema's type constraints; what the schema
// cannot say (shapes that fit together, attribute values in range, index
// inputs that point inside a tensor) comes from the per-operator rules of
// the difftest_rules_*.go files. An operator without a rule is taken to be
// element-wise: its tensor inputs get one shape (broadcast where the
// operator broadcasts) and its attributes the values of genericAttr.

// diffCase is one generated case: a one-node model, its feeds, and how to
// compare the two backends' outputs.
type diffCase struct {
	Name   string // "Conv-v11/float/case0"
	Op     string // "Conv", "ai.onnx.ml.Scaler"
	Model  *onnx.Model
	Feeds  map[string]onnx.Value
	Random string // non-empty: the outputs are drawn at random (says which way); compare types and shapes only
}

// errCannotGenerate marks a case the generator cannot make (a type or an
// attribute it has no rule for): the case is skipped with that reason.
var errCannotGenerate = errors.New("cannot generate")

func cannot(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errCannotGenerate, fmt.Sprintf(format, args...))
}

// opRule is what the generator knows of one operator beyond its schema.
type opRule struct {
	// gen sets the node's inputs, attributes and outputs; nil means the
	// element-wise default (genElementwise).
	gen func(g *gen) error
	// types, when set, keeps only the type choices it accepts (the map is
	// type parameter to type string, "tensor(float)"); typesAt does the
	// same knowing the version.
	types   func(t map[string]string) bool
	typesAt func(since int, t map[string]string) bool
}

// diffRules holds the per-operator rules, keyed by ruleKey; the
// difftest_rules_*.go files fill it in their init functions.
var diffRules = map[string]opRule{}

// ruleKey names an operator for diffRules: "Conv", "ai.onnx.ml.Scaler".
func ruleKey(domain, opType string) string {
	if domain == "" {
		return opType
	}
	return domain + "." + opType
}

func addRules(rules map[string]opRule) {
	for k, r := range rules {
		if _, dup := diffRules[k]; dup {
			panic("difftest: two rules for " + k)
		}
		diffRules[k] = r
	}
}

// genInput is one input of the node.
type genInput struct {
	value onnx.Value
	typ   *onnx.TypeInfo // declared type (with the value's shape for a tensor)
	// init makes the value an initializer (a constant of the model)
	// rather than a graph input fed at run time.
	init bool
}

// gen is the case under construction; rules fill it.
type gen struct {
	s     *ops.SchemaInfo
	since int
	r     *rand.Rand
	// types maps each type parameter to the chosen type.
	types   map[string]*onnx.TypeInfo
	typeStr map[string]string
	ins     []*genInput // by node input position; nil: omitted
	// nOut is the number of node outputs (0: every output the schema
	// declares, a variadic one once); outTypes overrides the declared
	// type of output i where the schema cannot say it.
	nOut     int
	outTypes map[int]*onnx.TypeInfo
	attrs    []*onnxpb.AttributeProto
	// random, when set, says why the outputs are random: they are then
	// compared by type and shape only.
	random string
	// opsets are extra opset imports (a subgraph's operators).
	opsets map[string]int64
	// outer are graph inputs the node does not take but its subgraphs
	// read from the enclosing scope.
	outer []outerInput
}

// outerInput is a graph input read by a subgraph.
type outerInput struct {
	name  string
	value *onnx.Tensor
}

// outerIn adds a graph input that a subgraph reads by name.
func (g *gen) outerIn(name string, t *onnx.Tensor) { g.outer = append(g.outer, outerInput{name, t}) }

// caseSeed derives the seed of one case from the run's seed and the
// case's identity, so that a case is the same whichever others run.
func caseSeed(seed uint64, parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64() ^ (seed * 0x9e3779b97f4a7c15)
}

// typeChoices lists the type assignments of schema s that the generator
// can make (each a map from type parameter to type string), the preferred
// one first: the most common element types, as a model would use them.
func typeChoices(s *ops.SchemaInfo, filter func(map[string]string) bool) []map[string]string {
	var params []string
	var allowed [][]string
	for _, c := range s.TypeConstraints {
		var ok []string
		for _, t := range c.Allowed {
			if _, err := onnx.ParseTypeString(t); err == nil {
				ok = append(ok, t)
			}
		}
		sort.SliceStable(ok, func(i, j int) bool { return typeRank(ok[i]) < typeRank(ok[j]) })
		params = append(params, c.Param)
		allowed = append(allowed, ok)
	}
	var out []map[string]string
	const limit = 20000
	var walk func(i int, cur map[string]string)
	walk = func(i int, cur map[string]string) {
		if len(out) >= limit {
			return
		}
		if i == len(params) {
			m := make(map[string]string, len(cur))
			for k, v := range cur {
				m[k] = v
			}
			if filter == nil || filter(m) {
				out = append(out, m)
			}
			return
		}
		for _, t := range allowed[i] {
			cur[params[i]] = t
			walk(i+1, cur)
		}
		delete(cur, params[i])
	}
	walk(0, map[string]string{})
	// Preferred first: the lowest total rank; the rest keep their order.
	best := 0
	for i, m := range out {
		if choiceRank(m) < choiceRank(out[best]) {
			best = i
		}
	}
	if len(out) > 0 {
		out[0], out[best] = out[best], out[0]
	}
	return out
}

func choiceRank(m map[string]string) int {
	r := 0
	for _, t := range m {
		r += typeRank(t)
	}
	return r
}

// typePreference orders element types from the most to the least used.
var typePreference = []string{"float", "int64", "int32", "double", "uint8", "int8", "bool", "string", "float16", "bfloat16", "int16", "uint16", "uint32", "uint64"}

func typeRank(t string) int { return ops.TypeRank(t, typePreference) }

// typeLabel shortens a type string for a case name: "tensor(float)" is
// "float", "seq(tensor(int64))" is "seq-int64", "map(string, float)" is
// "map-string-float", "optional(tensor(bool))" is "opt-bool".
func typeLabel(t string) string {
	t = strings.TrimSpace(t)
	open := strings.IndexByte(t, '(')
	if open < 0 || !strings.HasSuffix(t, ")") {
		return t
	}
	kind, arg := t[:open], t[open+1:len(t)-1]
	switch kind {
	case "tensor":
		return arg
	case "optional":
		return "opt-" + typeLabel(arg)
	case "map":
		k, v, _ := strings.Cut(arg, ",")
		return "map-" + strings.TrimSpace(k) + "-" + typeLabel(strings.TrimSpace(v))
	}
	return kind + "-" + typeLabel(arg)
}

// choiceLabel names a type assignment: the labels of the parameters that
// have more than one choice, in schema order, joined by "_".
func choiceLabel(s *ops.SchemaInfo, choices []map[string]string, m map[string]string) string {
	var parts []string
	for _, c := range s.TypeConstraints {
		seen := map[string]bool{}
		for _, ch := range choices {
			seen[ch[c.Param]] = true
		}
		if len(seen) > 1 {
			parts = append(parts, typeLabel(m[c.Param]))
		}
	}
	if len(parts) == 0 {
		for _, c := range s.TypeConstraints {
			return typeLabel(m[c.Param])
		}
		return "notype"
	}
	return strings.Join(parts, "_")
}

// newGen starts a case of schema s with the type assignment choice.
func newGen(s *ops.SchemaInfo, r *rand.Rand, choice map[string]string) (*gen, error) {
	g := &gen{s: s, since: s.SinceVersion, r: r, types: map[string]*onnx.TypeInfo{}, typeStr: choice, outTypes: map[int]*onnx.TypeInfo{}}
	for p, t := range choice {
		ti, err := onnx.ParseTypeString(t)
		if err != nil {
			return nil, cannot("type %s of %s", t, p)
		}
		g.types[p] = ti
	}
	return g, nil
}

// paramType is the type a formal parameter stands for: its constraint's
// chosen type, or the type the schema names.
func (g *gen) paramType(p *ops.FormalParam) *onnx.TypeInfo {
	if p == nil {
		return nil
	}
	if t, ok := g.types[p.TypeParam]; ok {
		return t
	}
	t, err := onnx.ParseTypeString(p.TypeParam)
	if err != nil {
		return nil
	}
	return t
}

// T is the element type chosen for tensor type parameter param (or the
// element of a sequence or optional of tensors).
func (g *gen) T(param string) onnx.DataType {
	t := g.types[param]
	for t != nil && (t.Kind == onnx.SequenceKind || t.Kind == onnx.OptionalKind) {
		t = t.Inner
	}
	if t == nil {
		if ti, err := onnx.ParseTypeString(param); err == nil {
			return ti.Elem
		}
		return onnx.Undefined
	}
	return t.Elem
}

// inT is the element type of node input i's formal parameter.
func (g *gen) inT(i int) onnx.DataType {
	t := g.paramType(g.s.InputParam(i))
	for t != nil && (t.Kind == onnx.SequenceKind || t.Kind == onnx.OptionalKind) {
		t = t.Inner
	}
	if t == nil {
		return onnx.Undefined
	}
	return t.Elem
}

// outT is the element type of node output i's formal parameter.
func (g *gen) outT(i int) onnx.DataType {
	t := g.paramType(g.s.OutputParam(i))
	if t == nil {
		return onnx.Undefined
	}
	return t.Elem
}

// --- random draws ---

func (g *gen) intn(n int) int { return g.r.IntN(n) }

// between is a uniform integer in [lo, hi].
func (g *gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

func (g *gen) coin() bool { return g.r.IntN(2) == 0 }

// chance is true with probability p.
func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// uniform is a float in [lo, hi).
func (g *gen) uniform(lo, hi float64) float64 { return lo + (hi-lo)*g.r.Float64() }

func pick[T any](g *gen, options ...T) T { return options[g.r.IntN(len(options))] }

// dims is a random shape of rank r with sizes in [lo, hi].
func (g *gen) dims(r, lo, hi int) []int {
	s := make([]int, r)
	for i := range s {
		s[i] = g.between(lo, hi)
	}
	return s
}

// axis is a random axis of a rank-r tensor, negative half the time where
// the operator version allows (neg).
func (g *gen) axis(r int, neg bool) int {
	a := g.intn(r)
	if neg && g.coin() {
		a -= r
	}
	return a
}

// axisAndPos is a random axis as axis draws it and its position 0..r-1.
func (g *gen) axisAndPos(r int, neg bool) (axis, pos int) {
	axis = g.axis(r, neg)
	return axis, axisPos(axis, r)
}

// axisPos is the position 0..r-1 of axis, which may count from the end.
func axisPos(axis, r int) int {
	if axis < 0 {
		return axis + r
	}
	return axis
}

// distinctAxes is k distinct axes of a rank-r tensor, in random order,
// some negative when neg.
func (g *gen) distinctAxes(r, k int, neg bool) []int64 {
	perm := g.r.Perm(r)[:k]
	out := make([]int64, k)
	for i, a := range perm {
		if neg && g.coin() {
			a -= r
		}
		out[i] = int64(a)
	}
	return out
}

// --- tensors ---

// valueRange is the default range of random values of an element type.
func valueRange(dt onnx.DataType) (lo, hi float64) {
	switch dt {
	case onnx.Uint8, onnx.Uint16, onnx.Uint32, onnx.Uint64:
		return 0, 20
	case onnx.Uint4:
		return 0, 15
	case onnx.Uint2:
		return 0, 3
	case onnx.Int4:
		return -8, 7
	case onnx.Int2:
		return -2, 1
	case onnx.Int8, onnx.Int16, onnx.Int32, onnx.Int64:
		return -10, 10
	case onnx.Float8E8M0:
		return 0.125, 8
	case onnx.Float4E2M1:
		return -6, 6
	}
	return -3, 3
}

// tensorOf makes a tensor of element type dt and shape from float64
// values, converted as a cast would (rounded to the nearest value of a
// reduced-precision float, truncated for integers).
func tensorOf(dt onnx.DataType, vals []float64, shape ...int) *onnx.Tensor {
	t := onnx.NewTensor(dt, shape...)
	n := t.Len()
	for i := 0; i < n && i < len(vals); i++ {
		setFloat(t, i, vals[i])
	}
	return t
}

// setFloat sets element i of t to v.
func setFloat(t *onnx.Tensor, i int, v float64) {
	f := float32(v)
	switch d := t.Data.(type) {
	case []float32:
		d[i] = f
	case []float64:
		d[i] = v
	case []int8:
		d[i] = int8(v)
	case []int16:
		d[i] = int16(v)
	case []int32:
		d[i] = int32(v)
	case []int64:
		d[i] = int64(v)
	case []uint8:
		d[i] = uint8(v)
	case []uint16:
		d[i] = uint16(v)
	case []uint32:
		d[i] = uint32(v)
	case []uint64:
		d[i] = uint64(v)
	case []bool:
		d[i] = v != 0
	case []string:
		d[i] = strconv.FormatFloat(v, 'g', -1, 64)
	case []complex64:
		d[i] = complex(f, 0)
	case []complex128:
		d[i] = complex(v, 0)
	case []onnx.F16:
		d[i] = onnx.F16From(f)
	case []onnx.BF16:
		d[i] = onnx.BF16From(f)
	case []onnx.F8E4M3FN:
		d[i] = onnx.F8E4M3FNFrom(f, true)
	case []onnx.F8E4M3FNUZ:
		d[i] = onnx.F8E4M3FNUZFrom(f, true)
	case []onnx.F8E5M2:
		d[i] = onnx.F8E5M2From(f, true)
	case []onnx.F8E5M2FNUZ:
		d[i] = onnx.F8E5M2FNUZFrom(f, true)
	case []onnx.F4E2M1:
		d[i] = onnx.F4E2M1From(f, true)
	case []onnx.F8E8M0:
		d[i] = onnx.F8E8M0From(f, true)
	}
}

// ints makes a tensor of integer values.
func ints(dt onnx.DataType, vals []int64, shape ...int) *onnx.Tensor {
	f := make([]float64, len(vals))
	for i, v := range vals {
		f[i] = float64(v)
	}
	if shape == nil {
		shape = []int{len(vals)}
	}
	t := tensorOf(dt, f, shape...)
	if d, ok := t.Data.([]int64); ok {
		copy(d, vals) // exact beyond float64's 53 bits
	}
	return t
}

// i64s is a 1-D int64 tensor.
func i64s(vals ...int64) *onnx.Tensor { return ints(onnx.Int64, vals) }

// scalarOf is a rank-0 tensor.
func scalarOf(dt onnx.DataType, v float64) *onnx.Tensor { return tensorOf(dt, []float64{v}) }

// rand draws a tensor of element type dt and shape with the type's
// default values.
func (g *gen) rand(dt onnx.DataType, shape ...int) *onnx.Tensor {
	lo, hi := valueRange(dt)
	return g.randIn(dt, lo, hi, shape...)
}

// randIn draws values uniformly in [lo, hi] (integers for integer types,
// any string of a small vocabulary for strings).
func (g *gen) randIn(dt onnx.DataType, lo, hi float64, shape ...int) *onnx.Tensor {
	n := onnx.NumElements(shape)
	t := onnx.NewTensor(dt, shape...)
	switch {
	case dt == onnx.String:
		d := t.Data.([]string)
		for i := range d {
			d[i] = pick(g, vocabulary...)
		}
	case dt == onnx.Bool:
		d := t.Data.([]bool)
		for i := range d {
			d[i] = g.coin()
		}
	case dt.IsFloat() || dt.IsComplex():
		for i := range n {
			setFloat(t, i, g.uniform(lo, hi))
		}
	default:
		for i := range n {
			setFloat(t, i, float64(g.between(int(math.Ceil(lo)), int(math.Floor(hi)))))
		}
	}
	return t
}

// randNonZero draws values in [lo, hi] away from zero: |v| >= 0.5 for
// floats, v != 0 for integers.
func (g *gen) randNonZero(dt onnx.DataType, lo, hi float64, shape ...int) *onnx.Tensor {
	t := g.randIn(dt, lo, hi, shape...)
	vals := floatsOf(t)
	for i, v := range vals {
		if math.Abs(v) < 0.5 {
			if hi >= 1 {
				setFloat(t, i, 1)
			} else {
				setFloat(t, i, -1)
			}
		}
	}
	return t
}

// grid draws values that are multiples of step in [lo, hi]: exact in
// every float type, and ties for rounding.
func (g *gen) grid(dt onnx.DataType, lo, hi, step float64, shape ...int) *onnx.Tensor {
	n := onnx.NumElements(shape)
	vals := make([]float64, n)
	k := int((hi - lo) / step)
	for i := range vals {
		vals[i] = lo + step*float64(g.between(0, k))
	}
	return tensorOf(dt, vals, shape...)
}

// floatsOf reads a numeric tensor's elements as float64.
func floatsOf(t *onnx.Tensor) []float64 {
	if t.Type.IsFloat() {
		return floatValues(t)
	}
	switch d := t.Data.(type) {
	case []int8:
		return widen(d)
	case []int16:
		return widen(d)
	case []int32:
		return widen(d)
	case []int64:
		return widen(d)
	case []uint8:
		return widen(d)
	case []uint16:
		return widen(d)
	case []uint32:
		return widen(d)
	case []uint64:
		return widen(d)
	case []bool:
		out := make([]float64, len(d))
		for i, v := range d {
			if v {
				out[i] = 1
			}
		}
		return out
	}
	return make([]float64, t.Len())
}

// widen converts integers to float64.
func widen[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](d []T) []float64 {
	out := make([]float64, len(d))
	for i, v := range d {
		out[i] = float64(v)
	}
	return out
}

// vocabulary is what random strings are drawn from: mixed case, spaces,
// an empty string, a non-ASCII one.
var vocabulary = []string{"a", "b", "abc", "Hello", "world", "x y", "", "DEF", "tree", "Straße", "42", "foo bar"}

// --- inputs, outputs, attributes ---

func tensorType(t *onnx.Tensor) *onnx.TypeInfo {
	dims := make([]onnx.Dim, len(t.Shape))
	for i, d := range t.Shape {
		dims[i] = onnx.Dim{Size: int64(d)}
	}
	return &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: t.Type, Shape: dims, HasShape: true}
}

func (g *gen) setInput(i int, in *genInput) {
	for len(g.ins) <= i {
		g.ins = append(g.ins, nil)
	}
	g.ins[i] = in
}

// in sets node input i to a tensor fed at run time.
func (g *gen) in(i int, t *onnx.Tensor) { g.setInput(i, &genInput{value: t, typ: tensorType(t)}) }

// constIn sets node input i to a tensor stored as an initializer.
func (g *gen) constIn(i int, t *onnx.Tensor) {
	g.setInput(i, &genInput{value: t, typ: tensorType(t), init: true})
}

// indexIn sets node input i, an index-like input (a shape, axes, pads),
// as an initializer or a fed input at random: exported models hold them
// as constants, and a backend must also take them at run time.
func (g *gen) indexIn(i int, t *onnx.Tensor) {
	if g.coin() {
		g.constIn(i, t)
	} else {
		g.in(i, t)
	}
}

// valueIn sets node input i to a value of declared type typ.
func (g *gen) valueIn(i int, v onnx.Value, typ *onnx.TypeInfo) {
	g.setInput(i, &genInput{value: v, typ: typ})
}

// input returns node input i's tensor, or nil.
func (g *gen) input(i int) *onnx.Tensor {
	if i >= len(g.ins) || g.ins[i] == nil {
		return nil
	}
	t, _ := g.ins[i].value.(*onnx.Tensor)
	return t
}

// hasInput reports whether the schema has an input at position i.
func (g *gen) hasInput(i int) bool { return i < len(g.s.Inputs) }

func (g *gen) attr(a *onnxpb.AttributeProto) {
	g.attrs = slices.DeleteFunc(g.attrs, func(x *onnxpb.AttributeProto) bool { return x.GetName() == a.GetName() })
	g.attrs = append(g.attrs, a)
}

func (g *gen) attrInt(name string, v int64) {
	g.attr(&onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)})
}

func (g *gen) attrFloat(name string, v float64) {
	g.attr(&onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(float32(v))})
}

func (g *gen) attrString(name, v string) {
	g.attr(&onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)})
}

func (g *gen) attrInts(name string, v ...int64) {
	g.attr(&onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: append([]int64{}, v...)})
}

func (g *gen) attrFloats(name string, v ...float64) {
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	g.attr(&onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOATS.Enum(), Floats: f})
}

func (g *gen) attrStrings(name string, v ...string) {
	b := make([][]byte, len(v))
	for i, s := range v {
		b[i] = []byte(s)
	}
	g.attr(&onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRINGS.Enum(), Strings: b})
}

func (g *gen) attrTensor(name string, t *onnx.Tensor) error {
	tp, err := onnx.TensorToProto("", t)
	if err != nil {
		return err
	}
	g.attr(&onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: tp})
	return nil
}

func (g *gen) attrGraph(name string, body *onnxpb.GraphProto) {
	g.attr(&onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: body})
}

// hasAttr reports whether the schema declares attribute name.
func (g *gen) hasAttr(name string) bool { return g.s.Attribute(name) != nil }

// maybeInt sets an int attribute the schema declares, half the time
// (otherwise the default applies).
func (g *gen) maybeInt(name string, v int64) {
	if g.hasAttr(name) && g.coin() {
		g.attrInt(name, v)
	}
}

// maybeFloat is maybeInt for a float attribute.
func (g *gen) maybeFloat(name string, v float64) {
	if g.hasAttr(name) && g.coin() {
		g.attrFloat(name, v)
	}
}

// outputs sets the number of node outputs.
func (g *gen) outputs(n int) { g.nOut = n }

// randomOutputs marks the outputs as random draws.
func (g *gen) randomOutputs(why string) { g.random = why }

// --- the element-wise default ---

// broadcastOps broadcast their inputs multidirectionally (numpy's rule);
// other operators without a rule get inputs of one shape.
var broadcastOps = map[string]bool{
	"Add": true, "Sub": true, "Mul": true, "Div": true, "Pow": true, "Mod": true,
	"And": true, "Or": true, "Xor": true, "Equal": true, "Greater": true, "Less": true,
	"GreaterOrEqual": true, "LessOrEqual": true, "BitShift": true,
	"BitwiseAnd": true, "BitwiseOr": true, "BitwiseXor": true, "Where": true,
	"Max": true, "Min": true, "Sum": true, "Mean": true,
}

// broadcastShapes makes n shapes that broadcast together to a shape of
// rank r: some lose leading dimensions, some have dimensions of 1.
func (g *gen) broadcastShapes(n, r int) [][]int {
	base := g.dims(r, 1, 4)
	out := make([][]int, n)
	full := g.intn(n) // at least one input keeps the whole shape
	for i := range out {
		if i == full {
			out[i] = append([]int{}, base...)
			continue
		}
		drop := 0
		if r > 0 && g.chance(0.3) {
			drop = g.between(1, r)
		}
		s := append([]int{}, base[drop:]...)
		for j := range s {
			if g.chance(0.25) {
				s[j] = 1
			}
		}
		out[i] = s
	}
	return out
}

// inputCount is how many node inputs to give formal parameter p: a
// variadic one gets between its minimum (at least 1) and 3.
func (g *gen) inputCount(p ops.FormalParam) int {
	switch p.Option {
	case ops.ParamOptional:
		if g.coin() {
			return 1
		}
		return 0
	case ops.ParamVariadic:
		return g.between(max(p.MinArity, 1), max(p.MinArity, 3))
	}
	return 1
}

// genElementwise is the rule of an operator without one: every tensor
// input gets random values of one shape (broadcast shapes where the
// operator broadcasts), values in the operator's domain (valueDomains),
// and the attributes that genericAttr knows are set at random.
func genElementwise(g *gen) error {
	var counts []int
	total := 0
	for _, p := range g.s.Inputs {
		c := g.inputCount(p)
		counts = append(counts, c)
		total += c
	}
	r := g.between(0, 4)
	zero := g.chance(1.0 / 16)
	var shapes [][]int
	if broadcastOps[g.s.OpType] && g.since >= 7 && !(g.since < 8 && slices.Contains([]string{"Max", "Min", "Sum", "Mean"}, g.s.OpType)) {
		shapes = g.broadcastShapes(total, r)
	} else {
		s := g.dims(r, 1, 4)
		for range total {
			shapes = append(shapes, s)
		}
	}
	if zero && r > 0 {
		d := g.intn(r)
		for _, s := range shapes {
			if k := len(s) - (r - d); k >= 0 && s[k] != 1 {
				s[k] = 0
			}
		}
	}
	pos, k := 0, 0
	for i, p := range g.s.Inputs {
		for range counts[i] {
			t := g.paramType(&p)
			if t == nil || t.Kind != onnx.TensorKind {
				return cannot("input %s of type %v needs a rule", p.Name, t)
			}
			g.in(pos, g.domainValues(i, t.Elem, shapes[k]...))
			pos++
			k++
		}
		if counts[i] == 0 {
			pos++
		}
	}
	// Drop trailing omitted inputs.
	for len(g.ins) > 0 && g.ins[len(g.ins)-1] == nil {
		g.ins = g.ins[:len(g.ins)-1]
	}
	for _, a := range g.s.Attributes {
		set, known := genericAttr[a.Name]
		switch {
		case known && (a.Required || g.coin()):
			set(g, a.Name)
		case a.Required:
			return cannot("required attribute %s has no rule", a.Name)
		}
	}
	return nil
}

// valueDomain is where an element-wise operator's input values are drawn
// from, for the inputs it does not define everywhere.
type valueDomain func(g *gen, input int, dt onnx.DataType, shape []int) *onnx.Tensor

func rangeDomain(lo, hi float64) valueDomain {
	return func(g *gen, _ int, dt onnx.DataType, shape []int) *onnx.Tensor {
		return g.randIn(dt, lo, hi, shape...)
	}
}

// valueDomains holds the domains of the operators whose inputs need one.
var valueDomains = map[string]valueDomain{}

// domainValues draws input i's values of an element-wise operator.
func (g *gen) domainValues(i int, dt onnx.DataType, shape ...int) *onnx.Tensor {
	if d, ok := valueDomains[ruleKey(g.s.Domain, g.s.OpType)]; ok {
		return d(g, i, dt, shape)
	}
	return g.rand(dt, shape...)
}

// genericAttr sets attributes that mean the same in every operator that
// has them, for genElementwise.
var genericAttr = map[string]func(g *gen, name string){
	"alpha": func(g *gen, name string) { g.attrFloat(name, roundTo(g.uniform(0.1, 2), 0.05)) },
	"beta":  func(g *gen, name string) { g.attrFloat(name, roundTo(g.uniform(0.1, 1), 0.05)) },
	"gamma": func(g *gen, name string) { g.attrFloat(name, roundTo(g.uniform(0.5, 2), 0.05)) },
	"bias":  func(g *gen, name string) { g.attrFloat(name, roundTo(g.uniform(0, 1), 0.05)) },
	"lambd": func(g *gen, name string) { g.attrFloat(name, roundTo(g.uniform(0, 1.5), 0.05)) },
	"approximate": func(g *gen, name string) {
		g.attrString(name, pick(g, "none", "tanh"))
	},
}

// roundTo rounds v to a multiple of step, so attributes print short.
func roundTo(v, step float64) float64 { return math.Round(v/step) * step }

// --- building the model ---

// build makes the case's model and feeds from g.
func (g *gen) build() (*onnx.Model, map[string]onnx.Value, error) {
	s := g.s
	node := &onnxpb.NodeProto{OpType: proto.String(s.OpType), Domain: proto.String(s.Domain), Name: proto.String("node")}
	graph := &onnxpb.GraphProto{Name: proto.String("difftest")}
	feeds := map[string]onnx.Value{}
	used := map[string]int{}
	uniqueName := func(base string) string {
		used[base]++
		if used[base] == 1 {
			return base
		}
		return base + "_" + strconv.Itoa(used[base]-1)
	}
	for i, in := range g.ins {
		if in == nil {
			node.Input = append(node.Input, "")
			continue
		}
		p := s.InputParam(i)
		if p == nil {
			return nil, nil, fmt.Errorf("generator bug: input %d beyond the schema's", i)
		}
		name := uniqueName(p.Name)
		node.Input = append(node.Input, name)
		if in.init {
			t, ok := in.value.(*onnx.Tensor)
			if !ok {
				return nil, nil, fmt.Errorf("generator bug: initializer %s is not a tensor", name)
			}
			tp, err := onnx.TensorToProto(name, t)
			if err != nil {
				return nil, nil, err
			}
			graph.Initializer = append(graph.Initializer, tp)
			continue
		}
		graph.Input = append(graph.Input, &onnxpb.ValueInfoProto{Name: proto.String(name), Type: onnx.TypeInfoToProto(in.typ)})
		feeds[name] = in.value
	}
	for _, o := range g.outer {
		graph.Input = append(graph.Input, &onnxpb.ValueInfoProto{Name: proto.String(o.name), Type: onnx.TypeInfoToProto(tensorType(o.value))})
		feeds[o.name] = o.value
	}
	for i, p := range s.Inputs {
		if p.Option == ops.ParamSingle && (i >= len(g.ins) || g.ins[i] == nil) {
			return nil, nil, fmt.Errorf("generator bug: required input %s not set", p.Name)
		}
	}
	nOut := g.nOut
	if nOut == 0 {
		nOut = len(s.Outputs)
	}
	for i := range nOut {
		p := s.OutputParam(i)
		if p == nil {
			return nil, nil, fmt.Errorf("generator bug: output %d beyond the schema's", i)
		}
		name := uniqueName("out_" + p.Name)
		node.Output = append(node.Output, name)
		t := g.outTypes[i]
		if t == nil {
			t = g.paramType(p)
		}
		vi := &onnxpb.ValueInfoProto{Name: proto.String(name)}
		if t != nil {
			vi.Type = onnx.TypeInfoToProto(t)
		}
		graph.Output = append(graph.Output, vi)
	}
	sort.Slice(g.attrs, func(i, j int) bool { return g.attrs[i].GetName() < g.attrs[j].GetName() })
	node.Attribute = g.attrs
	graph.Node = []*onnxpb.NodeProto{node}
	imports := map[string]int64{s.Domain: int64(g.since)}
	if s.Domain != "" {
		imports[""] = 21
	}
	for d, v := range g.opsets {
		if _, ok := imports[d]; !ok {
			imports[d] = v
		}
	}
	var opset []*onnxpb.OperatorSetIdProto
	for _, d := range sortedKeys(imports) {
		opset = append(opset, &onnxpb.OperatorSetIdProto{Domain: proto.String(d), Version: proto.Int64(imports[d])})
	}
	mp := &onnxpb.ModelProto{IrVersion: proto.Int64(irVersionFor(g)), ProducerName: proto.String("d500 difftest"), Graph: graph, OpsetImport: opset}
	m, err := onnx.ModelFromProto(mp, "")
	if err != nil {
		return nil, nil, fmt.Errorf("generated model does not load: %w", err)
	}
	return m, feeds, nil
}

// irVersionFor is the oldest IR version that has the case's element
// types (IR 10 for ONNX 1.16's int4; 11 for float4e2m1; 12 for
// float8e8m0, int2 and uint2).
func irVersionFor(g *gen) int64 {
	ir := int64(10)
	for _, t := range g.typeStr {
		switch {
		case strings.Contains(t, "float8e8m0"), strings.Contains(t, "int2"):
			ir = max(ir, 12)
		case strings.Contains(t, "float4e2m1"):
			ir = max(ir, 11)
		}
	}
	return ir
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// firstVersions are operators whose versions up to the one given differ
// in form from the later ones (other attributes or inputs) and have no
// rule: no backend here runs them.
var firstVersions = map[string]int{"BatchNormalization": 6, "Pad": 1, "Tile": 1, "Upsample": 1}

// generate makes case k of schema s for the run's seed: the type
// assignment (the preferred one for case 0, then the others in a seeded
// random order), then the operator's rule.
func generate(s *ops.SchemaInfo, seed uint64, k int) (*diffCase, error) {
	op := ruleKey(s.Domain, s.OpType)
	base := fmt.Sprintf("%s-v%d", op, s.SinceVersion)
	rule := diffRules[op]
	filter := rule.types
	if rule.typesAt != nil {
		filter = func(t map[string]string) bool { return rule.typesAt(s.SinceVersion, t) }
	}
	choices := typeChoices(s, filter)
	if len(choices) == 0 {
		return &diffCase{Name: base + "/notype/case" + strconv.Itoa(k), Op: op}, cannot("no type assignment of the schema's constraints can be generated")
	}
	order := rand.New(rand.NewPCG(seed, caseSeed(seed, base)))
	rest := append([]map[string]string{}, choices[1:]...)
	order.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	choice := choices[0]
	if k > 0 && len(rest) > 0 {
		choice = rest[(k-1)%len(rest)]
	}
	name := fmt.Sprintf("%s/%s/case%d", base, choiceLabel(s, choices, choice), k)
	c := &diffCase{Name: name, Op: op}
	r := rand.New(rand.NewPCG(seed, caseSeed(seed, name)))
	g, err := newGen(s, r, choice)
	if err != nil {
		return c, err
	}
	if old := firstVersions[op]; old >= s.SinceVersion {
		return c, cannot("version %d of %s has attributes or inputs that later versions replaced, and no rule", s.SinceVersion, op)
	}
	run := rule.gen
	if run == nil {
		run = genElementwise
	}
	if err := run(g); err != nil {
		return c, err
	}
	m, feeds, err := g.build()
	if err != nil {
		return c, err
	}
	c.Model, c.Feeds, c.Random = m, feeds, g.random
	return c, nil
}
