package metrics

import (
	"strings"

	"github.com/deep500/deep500-go/onnx"
	onnxpb "github.com/deep500/deep500-go/onnx/pb"
	"google.golang.org/protobuf/proto"
)

// Rules of difftest's generator for the operators on sequences and
// optionals, Identity over every type, and the control-flow operators
// (If, Loop, Scan, SequenceMap) with small subgraphs.

func init() {
	addRules(map[string]opRule{
		"Identity":           {gen: genIdentity},
		"SequenceConstruct":  {gen: genSequenceConstruct, types: sameElem("T", "S")},
		"SequenceEmpty":      {gen: genSequenceEmpty},
		"SequenceAt":         {gen: genSequenceAt, types: sameElem("S", "T")},
		"SequenceErase":      {gen: genSequenceErase},
		"SequenceInsert":     {gen: genSequenceInsert, types: sameElem("S", "T")},
		"SequenceLength":     {gen: genSequenceLength},
		"SplitToSequence":    {gen: genSplitToSequence, types: sameElem("T", "S")},
		"ConcatFromSequence": {gen: genConcatFromSequence, types: sameElem("S", "T")},
		"Optional":           {gen: genOptional, types: sameElem("V", "O")},
		"OptionalGetElement": {gen: genOptionalGetElement, types: optionalGetTypes},
		"OptionalHasElement": {gen: genOptionalHasElement},
		"If":                 {gen: genIf, types: tensorsOnly("V")},
		"Loop":               {gen: genLoop, types: tensorsOnly("V")},
		"Scan":               {gen: genScan, types: numericOnly("V")},
		"SequenceMap":        {gen: genSequenceMap, types: seqMapTypes},
	})
}

// innerMost strips seq( and optional( from a type string.
func innerMost(t string) string {
	for {
		switch {
		case strings.HasPrefix(t, "seq(") && strings.HasSuffix(t, ")"):
			t = t[4 : len(t)-1]
		case strings.HasPrefix(t, "optional(") && strings.HasSuffix(t, ")"):
			t = t[9 : len(t)-1]
		default:
			return t
		}
	}
}

// sameElem keeps the type choices where the two parameters hold the same
// element type ("tensor(float)" and "seq(tensor(float))").
func sameElem(a, b string) func(map[string]string) bool {
	return func(t map[string]string) bool { return innerMost(t[a]) == innerMost(t[b]) }
}

func tensorsOnly(p string) func(map[string]string) bool {
	return func(t map[string]string) bool { return strings.HasPrefix(t[p], "tensor(") }
}

// numericOnly keeps plain tensors of numbers.
func numericOnly(p string) func(map[string]string) bool {
	return func(t map[string]string) bool {
		ti, err := onnx.ParseTypeString(t[p])
		return err == nil && ti.Kind == onnx.TensorKind && (ti.Elem.IsFloat() || ti.Elem.IsInteger())
	}
}

// optionalGetTypes: V is what O holds (or, from version 18, O itself
// when it is not an optional).
func optionalGetTypes(t map[string]string) bool {
	o, v := t["O"], t["V"]
	if strings.HasPrefix(o, "optional(") {
		return o == "optional("+v+")"
	}
	return o == v
}

func seqMapTypes(t map[string]string) bool {
	return strings.HasPrefix(t["S"], "seq(tensor(") && strings.HasPrefix(t["V"], "tensor(") && innerMost(t["S"]) == t["V"]
}

// seqType is seq(tensor(dt)) without a shape.
func seqType(dt onnx.DataType) *onnx.TypeInfo {
	return &onnx.TypeInfo{Kind: onnx.SequenceKind, Inner: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: dt}}
}

// randSequence draws a sequence of n tensors of one rank.
func (g *gen) randSequence(dt onnx.DataType, n int, sameShape bool) *onnx.Sequence {
	r := g.between(0, 3)
	base := g.dims(r, 1, 3)
	s := &onnx.Sequence{Elem: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: dt}}
	for range n {
		shape := base
		if !sameShape {
			shape = g.dims(r, 1, 3)
		}
		s.Values = append(s.Values, g.rand(dt, shape...))
	}
	return s
}

// valueOf draws a value of type t (a tensor, a sequence of tensors, an
// optional of either) and its declared type.
func (g *gen) valueOf(t *onnx.TypeInfo, present bool) (onnx.Value, *onnx.TypeInfo, error) {
	switch t.Kind {
	case onnx.TensorKind:
		x := g.rand(t.Elem, g.dims(g.between(0, 3), 1, 3)...)
		return x, tensorType(x), nil
	case onnx.SequenceKind:
		if t.Inner == nil || t.Inner.Kind != onnx.TensorKind {
			return nil, nil, cannot("sequence of %v", t.Inner)
		}
		return g.randSequence(t.Inner.Elem, g.between(1, 3), false), seqType(t.Inner.Elem), nil
	case onnx.OptionalKind:
		inner, it, err := g.valueOf(t.Inner, true)
		if err != nil {
			return nil, nil, err
		}
		if it.Kind == onnx.TensorKind {
			it = &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: it.Elem}
		}
		o := &onnx.Optional{Elem: it}
		if present {
			o.Value = inner
		}
		return o, &onnx.TypeInfo{Kind: onnx.OptionalKind, Inner: it}, nil
	}
	return nil, nil, cannot("value of type %v", t)
}

// genIdentity: any type the version allows.
func genIdentity(g *gen) error {
	v, t, err := g.valueOf(g.paramType(g.s.InputParam(0)), g.chance(0.8))
	if err != nil {
		return err
	}
	g.valueIn(0, v, t)
	return nil
}

// https://onnx.ai/onnx/operators/onnx__SequenceConstruct.html
func genSequenceConstruct(g *gen) error {
	dt := g.T("T")
	r := g.between(0, 3)
	for i := range g.between(1, 3) {
		g.in(i, g.rand(dt, g.dims(r, 1, 3)...))
	}
	return nil
}

// https://onnx.ai/onnx/operators/onnx__SequenceEmpty.html
func genSequenceEmpty(g *gen) error {
	dt := g.T("S")
	if dt != onnx.Float || g.coin() {
		g.attrInt("dtype", int64(dt))
	}
	return nil
}

// seqIn sets input i to a random sequence of n elements of the element
// type of parameter p.
func (g *gen) seqIn(i int, p string, n int, sameShape bool) *onnx.Sequence {
	dt := g.T(p)
	s := g.randSequence(dt, n, sameShape)
	g.valueIn(i, s, seqType(dt))
	return s
}

// https://onnx.ai/onnx/operators/onnx__SequenceAt.html
func genSequenceAt(g *gen) error {
	n := g.between(1, 3)
	g.seqIn(0, "S", n, false)
	g.in(1, ints(g.T("I"), []int64{int64(g.between(-n, n-1))}, []int{}...))
	return nil
}

// https://onnx.ai/onnx/operators/onnx__SequenceErase.html
func genSequenceErase(g *gen) error {
	n := g.between(1, 3)
	g.seqIn(0, "S", n, false)
	if g.coin() {
		g.in(1, ints(g.T("I"), []int64{int64(g.between(-n, n-1))}, []int{}...))
	}
	return nil
}

// https://onnx.ai/onnx/operators/onnx__SequenceInsert.html
func genSequenceInsert(g *gen) error {
	n := g.between(1, 3)
	s := g.seqIn(0, "S", n, true)
	g.in(1, g.rand(g.T("T"), s.Values[0].(*onnx.Tensor).Shape...))
	if g.coin() {
		g.in(2, ints(g.T("I"), []int64{int64(g.between(-n, n))}, []int{}...))
	}
	return nil
}

// https://onnx.ai/onnx/operators/onnx__SequenceLength.html
func genSequenceLength(g *gen) error {
	g.seqIn(0, "S", g.between(1, 4), false)
	return nil
}

// genSplitToSequence: by a chunk size (the last part smaller), by sizes,
// or into single slices (keepdims deciding whether the axis stays).
// https://onnx.ai/onnx/operators/onnx__SplitToSequence.html
func genSplitToSequence(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 3)
	shape := g.dims(r, 1, 5)
	axis, a := g.axisAndPos(r, true)
	g.in(0, g.rand(dt, shape...))
	g.maybeInt("axis", int64(axis))
	if axis != 0 {
		g.attrInt("axis", int64(axis))
	}
	switch g.intn(3) {
	case 0:
		g.maybeInt("keepdims", int64(g.intn(2)))
	case 1:
		g.indexIn(1, ints(g.T("I"), []int64{int64(g.between(1, shape[a]))}, []int{}...))
	default:
		var sizes []int64
		for rest := shape[a]; rest > 0; {
			s := g.between(1, rest)
			sizes = append(sizes, int64(s))
			rest -= s
		}
		g.indexIn(1, ints(g.T("I"), sizes))
	}
	return nil
}

// https://onnx.ai/onnx/operators/onnx__ConcatFromSequence.html
func genConcatFromSequence(g *gen) error {
	dt := g.T("T")
	r := g.between(1, 3)
	base := g.dims(r, 1, 3)
	newAxis := g.coin()
	var axis int
	if newAxis {
		axis = g.between(-r-1, r)
		g.attrInt("new_axis", 1)
	} else {
		axis = g.axis(r, true)
	}
	a := axisPos(axis, r)
	s := &onnx.Sequence{Elem: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: dt}}
	for range g.between(1, 3) {
		shape := append([]int{}, base...)
		if !newAxis {
			shape[a] = g.between(1, 3)
		}
		s.Values = append(s.Values, g.rand(dt, shape...))
	}
	g.valueIn(0, s, seqType(dt))
	g.attrInt("axis", int64(axis))
	return nil
}

// genOptional: wraps its input, or makes an empty optional of the type
// attribute. https://onnx.ai/onnx/operators/onnx__Optional.html
func genOptional(g *gen) error {
	vt := g.types["V"]
	if g.coin() {
		v, t, err := g.valueOf(vt, true)
		if err != nil {
			return err
		}
		g.valueIn(0, v, t)
		return nil
	}
	g.attr(&onnxpb.AttributeProto{Name: proto.String("type"), Type: onnxpb.AttributeProto_TYPE_PROTO.Enum(), Tp: onnx.TypeInfoToProto(vt)})
	return nil
}

// https://onnx.ai/onnx/operators/onnx__OptionalGetElement.html
func genOptionalGetElement(g *gen) error {
	v, t, err := g.valueOf(g.types["O"], true)
	if err != nil {
		return err
	}
	g.valueIn(0, v, t)
	return nil
}

// https://onnx.ai/onnx/operators/onnx__OptionalHasElement.html
func genOptionalHasElement(g *gen) error {
	if g.since >= 18 && g.chance(0.2) {
		return nil // no input: false
	}
	v, t, err := g.valueOf(g.types["O"], g.coin())
	if err != nil {
		return err
	}
	g.valueIn(0, v, t)
	return nil
}

// --- subgraphs ---

func nodeProto(op string, ins, outs []string) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{OpType: proto.String(op), Domain: proto.String(""), Input: ins, Output: outs}
}

func valueInfo(name string, t *onnx.TypeInfo) *onnxpb.ValueInfoProto {
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: onnx.TypeInfoToProto(t)}
}

func elemType(dt onnx.DataType) *onnx.TypeInfo {
	return &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: dt}
}

// addTypes are the element types Add has a kernel type for at an opset.
func addSupports(dt onnx.DataType, opset int) bool {
	switch dt {
	case onnx.Float, onnx.Double, onnx.Float16, onnx.Int32, onnx.Int64, onnx.Uint32, onnx.Uint64:
		return opset >= 7
	case onnx.BFloat16:
		return opset >= 13
	case onnx.Int8, onnx.Int16, onnx.Uint8, onnx.Uint16:
		return opset >= 14
	}
	return false
}

// genIf: each branch passes on tensors captured from the enclosing
// graph; the condition picks which. https://onnx.ai/onnx/operators/onnx__If.html
func genIf(g *gen) error {
	dt := g.T("V")
	k := g.between(1, 2)
	then := &onnxpb.GraphProto{Name: proto.String("then")}
	els := &onnxpb.GraphProto{Name: proto.String("else")}
	for j := range k {
		a, b := "then_in_"+string(rune('a'+j)), "else_in_"+string(rune('a'+j))
		shape := g.dims(g.between(0, 2), 1, 3)
		g.outerIn(a, g.rand(dt, shape...))
		g.outerIn(b, g.rand(dt, shape...))
		ta, tb := "then_out_"+string(rune('a'+j)), "else_out_"+string(rune('a'+j))
		then.Node = append(then.Node, nodeProto("Identity", []string{a}, []string{ta}))
		els.Node = append(els.Node, nodeProto("Identity", []string{b}, []string{tb}))
		then.Output = append(then.Output, valueInfo(ta, elemType(dt)))
		els.Output = append(els.Output, valueInfo(tb, elemType(dt)))
	}
	g.in(0, &onnx.Tensor{Type: onnx.Bool, Shape: pick(g, []int{}, []int{1}), Data: []bool{g.coin()}})
	g.attrGraph("then_branch", then)
	g.attrGraph("else_branch", els)
	g.outputs(k)
	return nil
}

// genLoop: a trip count (and a condition at times), loop-carried values
// that accumulate a captured tensor where Add exists for the type, and a
// scan output stacking one of them.
// https://onnx.ai/onnx/operators/onnx__Loop.html
func genLoop(g *gen) error {
	dt := g.T("V")
	k, scan := g.between(1, 2), g.between(0, 1)
	body := &onnxpb.GraphProto{Name: proto.String("body")}
	body.Input = append(body.Input, valueInfo("iter", &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Int64, HasShape: true}),
		valueInfo("cond_in", &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Bool, HasShape: true}))
	body.Node = append(body.Node, nodeProto("Identity", []string{"cond_in"}, []string{"cond_out"}))
	body.Output = append(body.Output, valueInfo("cond_out", &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Bool, HasShape: true}))
	g.in(0, i64sScalar(int64(g.between(0, 4))))
	if g.coin() {
		g.in(1, &onnx.Tensor{Type: onnx.Bool, Shape: []int{}, Data: []bool{true}})
	} else {
		g.setInput(1, nil)
	}
	add := addSupports(dt, g.since)
	for j := range k {
		shape := g.dims(g.between(0, 2), 1, 3)
		g.in(2+j, g.rand(dt, shape...))
		in, out := "v_in_"+string(rune('a'+j)), "v_out_"+string(rune('a'+j))
		body.Input = append(body.Input, valueInfo(in, elemType(dt)))
		if add {
			step := "step_" + string(rune('a'+j))
			g.outerIn(step, g.rand(dt, shape...))
			body.Node = append(body.Node, nodeProto("Add", []string{in, step}, []string{out}))
		} else {
			body.Node = append(body.Node, nodeProto("Identity", []string{in}, []string{out}))
		}
		body.Output = append(body.Output, valueInfo(out, elemType(dt)))
	}
	if scan == 1 {
		body.Node = append(body.Node, nodeProto("Identity", []string{"v_in_a"}, []string{"scan_out"}))
		body.Output = append(body.Output, valueInfo("scan_out", elemType(dt)))
	}
	g.attrGraph("body", body)
	g.outputs(k + scan)
	return nil
}

func i64sScalar(v int64) *onnx.Tensor {
	return &onnx.Tensor{Type: onnx.Int64, Shape: []int{}, Data: []int64{v}}
}

// genScan: one state summing the slices of one scan input, and a scan
// output of the running sums; axes and directions from version 9, a
// batch axis and sequence lengths in version 8.
// https://onnx.ai/onnx/operators/onnx__Scan.html
func genScan(g *gen) error {
	dt := g.T("V")
	d, seq := g.between(1, 3), g.between(1, 4)
	body := &onnxpb.GraphProto{Name: proto.String("body")}
	op := "Add"
	if !addSupports(dt, g.since) {
		return cannot("the body's Add has no %v at opset %d", dt, g.since)
	}
	body.Input = []*onnxpb.ValueInfoProto{valueInfo("state_in", elemType(dt)), valueInfo("x", elemType(dt))}
	body.Node = []*onnxpb.NodeProto{
		nodeProto(op, []string{"state_in", "x"}, []string{"state_out"}),
		nodeProto("Identity", []string{"state_out"}, []string{"scan_out"}),
	}
	body.Output = []*onnxpb.ValueInfoProto{valueInfo("state_out", elemType(dt)), valueInfo("scan_out", elemType(dt))}
	g.attrGraph("body", body)
	g.attrInt("num_scan_inputs", 1)
	g.outputs(2)
	if g.since == 8 {
		batch := g.between(1, 2)
		if g.coin() {
			lens := make([]int64, batch)
			for i := range lens {
				lens[i] = int64(g.between(1, seq))
			}
			g.in(0, i64s(lens...))
		} else {
			g.setInput(0, nil)
		}
		g.in(1, g.rand(dt, batch, d))
		g.in(2, g.rand(dt, batch, seq, d))
		if g.coin() {
			g.attrInts("directions", int64(g.intn(2)))
		}
		return nil
	}
	g.in(0, g.rand(dt, d))
	x := []int{seq, d}
	if g.coin() {
		x = []int{d, seq}
		ax := int64(1)
		if g.since >= 11 && g.coin() {
			ax = -1
		}
		g.attrInts("scan_input_axes", ax)
	}
	g.in(1, g.rand(dt, x...))
	if g.coin() {
		g.attrInts("scan_input_directions", int64(g.intn(2)))
	}
	if g.coin() {
		g.attrInts("scan_output_directions", int64(g.intn(2)))
	}
	if g.coin() {
		g.attrInts("scan_output_axes", int64(g.intn(2)))
	}
	return nil
}

// genSequenceMap: a body applied to each element, with an extra input
// at times. https://onnx.ai/onnx/operators/onnx__SequenceMap.html
func genSequenceMap(g *gen) error {
	dt := g.T("V")
	s := g.seqIn(0, "S", g.between(1, 3), true)
	body := &onnxpb.GraphProto{Name: proto.String("body")}
	body.Input = []*onnxpb.ValueInfoProto{valueInfo("elem", elemType(dt))}
	if addSupports(dt, g.since) && g.coin() {
		g.in(1, g.rand(dt, s.Values[0].(*onnx.Tensor).Shape...))
		body.Input = append(body.Input, valueInfo("extra", elemType(dt)))
		body.Node = []*onnxpb.NodeProto{nodeProto("Add", []string{"elem", "extra"}, []string{"y"})}
	} else {
		body.Node = []*onnxpb.NodeProto{nodeProto("Identity", []string{"elem"}, []string{"y"})}
	}
	body.Output = []*onnxpb.ValueInfoProto{valueInfo("y", elemType(dt))}
	g.attrGraph("body", body)
	g.outputs(1)
	return nil
}
