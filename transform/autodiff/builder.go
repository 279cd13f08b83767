package autodiff

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// builder appends nodes of standard ONNX operators to the training graph.
//
// Rules call its methods without checking an error after each: the first
// error is kept in err and every later call does nothing and returns ""
// (the driver checks err after each rule). That keeps a rule as short as
// the formula it writes.
type builder struct {
	g     *onnx.Graph
	opset int64 // the ai.onnx opset the emitted nodes are typed at
	info  map[string]Info
	used  map[string]bool
	count int
	err   error

	consts map[string]string // cache of constants by a key of their value
	shapes map[string]string // cache of Shape(x) by x
}

func newBuilder(g *onnx.Graph, opset int64, info map[string]Info) *builder {
	b := &builder{g: g, opset: opset, info: info, used: map[string]bool{},
		consts: map[string]string{}, shapes: map[string]string{}}
	for _, v := range g.Inputs {
		b.used[v.Name] = true
	}
	for _, v := range g.Outputs {
		b.used[v.Name] = true
	}
	for _, in := range g.Initializers {
		b.used[in.Name] = true
	}
	for _, n := range g.Nodes {
		b.used[n.Name] = true
		for _, o := range n.Outputs {
			b.used[o] = true
		}
		for _, i := range n.Inputs {
			b.used[i] = true
		}
	}
	return b
}

// fail records the first error. A rule that cannot write a node's
// gradient (an attribute it does not handle, an operator the opset lacks)
// makes the model unsupported: the error wraps network.ErrUnsupported.
// Only an inconsistency of the transform itself ("internal: ...") is a
// plain error.
func (b *builder) fail(format string, args ...any) {
	if b.err != nil {
		return
	}
	err := fmt.Errorf(format, args...)
	if !strings.HasPrefix(err.Error(), "internal:") {
		err = fmt.Errorf("%w: %w", network.ErrUnsupported, err)
	}
	b.err = err
}

// fresh returns a value or node name not used in the graph yet.
func (b *builder) fresh(base string) string {
	for {
		b.count++
		name := base + "_" + strconv.Itoa(b.count)
		if !b.used[name] {
			b.used[name] = true
			return name
		}
	}
}

// attribute constructors, for the variadic attrs of emit.
func attrInt(name string, v int64) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrInt, Int: v}
}
func attrInts(name string, v ...int64) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrInts, Ints: append([]int64{}, v...)}
}
func attrFloat(name string, v float32) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrFloat, Float: v}
}
func attrString(name, v string) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrString, String: v}
}
func attrTensor(name string, t *onnx.Tensor) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrTensor, Tensor: t}
}

// emit appends a node of the ai.onnx domain with nOut fresh outputs and
// returns their names.
func (b *builder) emit(opType string, ins []string, nOut int, attrs ...*onnx.Attribute) []string {
	outs := make([]string, nOut)
	if b.err != nil {
		return outs
	}
	for i := range outs {
		outs[i] = b.fresh("grad/" + opType)
	}
	if !b.emitNamed(opType, ins, outs, attrs...) {
		return make([]string, nOut)
	}
	return outs
}

// emitNamed appends a node of the ai.onnx domain writing the outputs
// outs, names the caller has reserved; it reports whether it did.
func (b *builder) emitNamed(opType string, ins, outs []string, attrs ...*onnx.Attribute) bool {
	if b.err != nil {
		return false
	}
	for _, in := range ins {
		if in != "" && !b.used[in] {
			b.fail("internal: %s reads %q, which nothing defines", opType, in)
			return false
		}
	}
	n := &onnx.Node{
		Name:       b.fresh("grad/" + opType + "_node"),
		OpType:     opType,
		Inputs:     append([]string{}, ins...),
		Outputs:    outs,
		Attributes: attrs,
		Opset:      b.opset,
		Graph:      b.g,
	}
	if _, _, ok := onnx.LookupOperator("", opType, b.opset); !ok {
		b.fail("the gradient needs %s, which ai.onnx opset %d does not define (the model could not be moved to a later opset without changing the meaning of its nodes)", opType, b.opset)
		return false
	}
	if err := onnx.TypeNode(n); err != nil {
		b.fail("internal: emit %s at opset %d: %w", opType, b.opset, err)
		return false
	}
	b.g.Nodes = append(b.g.Nodes, n)
	return true
}

// claim reserves base as a value name, or base_1, base_2, ... when taken.
func (b *builder) claim(base string) string {
	name := base
	for i := 1; b.used[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	b.used[name] = true
	return name
}

// graphOutput makes v a graph output under name (reserved by the
// caller), declared with inf's type and shape.
func (b *builder) graphOutput(v, name string, inf Info) {
	if b.emitNamed("Identity", []string{v}, []string{name}) {
		b.g.Outputs = append(b.g.Outputs, &onnx.ValueInfo{Name: name, Type: typeInfo(inf)})
	}
}

// op emits a node with one output and returns its name.
func (b *builder) op(opType string, ins []string, attrs ...*onnx.Attribute) string {
	return b.emit(opType, ins, 1, attrs...)[0]
}

// Short forms of the element-wise operators.
func (b *builder) add(x, y string) string { return b.op("Add", []string{x, y}) }
func (b *builder) sub(x, y string) string { return b.op("Sub", []string{x, y}) }
func (b *builder) mul(x, y string) string { return b.op("Mul", []string{x, y}) }
func (b *builder) div(x, y string) string { return b.op("Div", []string{x, y}) }
func (b *builder) neg(x string) string    { return b.op("Neg", []string{x}) }

// typeOf is the element type of a value of the forward graph (or one the
// rules recorded with setInfo).
func (b *builder) typeOf(v string) onnx.DataType {
	if inf, ok := b.info[v]; ok {
		return inf.Type
	}
	b.fail("internal: no type known for %q", v)
	return onnx.Undefined
}

// shapeOf is the shape of a value: its dims, -1 for one that changes from
// run to run (the batch dimension of an exported graph).
func (b *builder) shapeOf(v string) []int64 {
	if inf, ok := b.info[v]; ok && inf.Shape != nil {
		return inf.Shape
	}
	b.fail("internal: no shape known for %q", v)
	return nil
}

// static reports whether every dim of v is fixed.
func (b *builder) static(v string) bool {
	for _, d := range b.shapeOf(v) {
		if d < 0 {
			return false
		}
	}
	return true
}

// setInfo records the type and shape of a value the rules made.
func (b *builder) setInfo(v string, like string) {
	if v != "" {
		if inf, ok := b.info[like]; ok {
			b.info[v] = inf
		}
	}
}

// scalar is a rank-0 constant of type dt.
func (b *builder) scalar(v float64, dt onnx.DataType) string {
	key := fmt.Sprintf("s/%v/%v", dt, v)
	if name, ok := b.consts[key]; ok {
		return name
	}
	t := floatTensor(dt, []float64{v})
	if t == nil {
		b.fail("no constant of type %v can be made", dt)
		return ""
	}
	name := b.op("Constant", nil, attrTensor("value", t))
	if name != "" {
		b.consts[key] = name
		b.info[name] = Info{Type: dt, Shape: []int64{}}
	}
	return name
}

// scalarLike is a rank-0 constant of v's type.
func (b *builder) scalarLike(x float64, v string) string { return b.scalar(x, b.typeOf(v)) }

// ints is a 1-D int64 constant.
func (b *builder) ints(vals ...int64) string {
	key := fmt.Sprintf("i/%v", vals)
	if name, ok := b.consts[key]; ok {
		return name
	}
	name := b.op("Constant", nil, attrTensor("value", onnx.FromSlice(append([]int64{}, vals...), len(vals))))
	if name != "" {
		b.consts[key] = name
		b.info[name] = Info{Type: onnx.Int64, Shape: []int64{int64(len(vals))}}
	}
	return name
}

// floatTensor makes a 1-D (one value: rank-0) tensor of a float type.
func floatTensor(dt onnx.DataType, vals []float64) *onnx.Tensor {
	var t *onnx.Tensor
	switch dt {
	case onnx.Float:
		d := make([]float32, len(vals))
		for i, v := range vals {
			d[i] = float32(v)
		}
		t = onnx.FromSlice(d)
	case onnx.Double:
		t = onnx.FromSlice(append([]float64{}, vals...))
	case onnx.Float16:
		d := make([]onnx.F16, len(vals))
		for i, v := range vals {
			d[i] = onnx.F16From(float32(v))
		}
		t = onnx.FromSlice(d)
	case onnx.BFloat16:
		d := make([]onnx.BF16, len(vals))
		for i, v := range vals {
			d[i] = onnx.BF16From(float32(v))
		}
		t = onnx.FromSlice(d)
	default:
		return nil
	}
	if len(vals) != 1 {
		t.Shape = []int{len(vals)}
	}
	return t
}

// shape is Shape(x), emitted once per x.
func (b *builder) shape(x string) string {
	if s, ok := b.shapes[x]; ok {
		return s
	}
	s := b.op("Shape", []string{x})
	if s != "" {
		b.shapes[x] = s
	}
	return s
}

// shapeValue is x's shape as a value: a constant when it is static, else
// Shape(x).
func (b *builder) shapeValue(x string) string {
	if b.static(x) {
		return b.ints(b.shapeOf(x)...)
	}
	return b.shape(x)
}

// reshape reshapes x to a static shape (0 copies a dim, -1 infers one).
func (b *builder) reshape(x string, shape ...int64) string {
	if b.opset < 5 {
		return b.op("Reshape", []string{x}, attrInts("shape", shape...))
	}
	return b.op("Reshape", []string{x, b.ints(shape...)})
}

// reshapeLike reshapes x to the shape of like.
func (b *builder) reshapeLike(x, like string) string {
	if inf, ok := b.info[x]; ok && b.err == nil && b.static(like) && sameDims(inf.Shape, b.shapeOf(like)) {
		return x
	}
	if b.static(like) {
		return b.reshape(x, b.shapeOf(like)...)
	}
	if b.opset < 5 {
		b.fail("reshaping to a dynamic shape needs ai.onnx opset 5 or later (the model imports %d)", b.opset)
		return ""
	}
	return b.op("Reshape", []string{x, b.shape(like)})
}

func sameDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// reduceSum sums x over axes, keeping them as size 1 when keep.
func (b *builder) reduceSum(x string, axes []int64, keep bool) string {
	if len(axes) == 0 {
		return x
	}
	k := int64(0)
	if keep {
		k = 1
	}
	if b.opset < 13 {
		return b.op("ReduceSum", []string{x}, attrInts("axes", axes...), attrInt("keepdims", k))
	}
	return b.op("ReduceSum", []string{x, b.ints(axes...)}, attrInt("keepdims", k))
}

// reduceMean averages x over axes (keeping them as size 1 when keep).
func (b *builder) reduceMean(x string, axes []int64, keep bool) string {
	k := int64(0)
	if keep {
		k = 1
	}
	if b.opset < 18 {
		return b.op("ReduceMean", []string{x}, attrInts("axes", axes...), attrInt("keepdims", k))
	}
	return b.op("ReduceMean", []string{x, b.ints(axes...)}, attrInt("keepdims", k))
}

// unsqueeze inserts size-1 axes.
func (b *builder) unsqueeze(x string, axes ...int64) string {
	if len(axes) == 0 {
		return x
	}
	if b.opset < 13 {
		return b.op("Unsqueeze", []string{x}, attrInts("axes", axes...))
	}
	return b.op("Unsqueeze", []string{x, b.ints(axes...)})
}

// squeeze removes size-1 axes.
func (b *builder) squeeze(x string, axes ...int64) string {
	if len(axes) == 0 {
		return x
	}
	if b.opset < 13 {
		return b.op("Squeeze", []string{x}, attrInts("axes", axes...))
	}
	return b.op("Squeeze", []string{x, b.ints(axes...)})
}

// transpose permutes x's axes.
func (b *builder) transpose(x string, perm ...int64) string {
	identity := true
	for i, p := range perm {
		if int64(i) != p {
			identity = false
		}
	}
	if identity {
		return x
	}
	return b.op("Transpose", []string{x}, attrInts("perm", perm...))
}

// slice takes x[starts:ends:steps] on axes (steps nil: 1).
func (b *builder) slice(x string, starts, ends, axes, steps []int64) string {
	if b.opset < 10 {
		for _, s := range steps {
			if s != 1 {
				b.fail("a Slice with steps needs ai.onnx opset 10 or later (the model imports %d)", b.opset)
				return ""
			}
		}
		return b.op("Slice", []string{x}, attrInts("starts", starts...), attrInts("ends", ends...), attrInts("axes", axes...))
	}
	ins := []string{x, b.ints(starts...), b.ints(ends...), b.ints(axes...)}
	if steps != nil {
		ins = append(ins, b.ints(steps...))
	}
	return b.op("Slice", ins)
}

// pad pads x with zeros: pads is [begin_0, ..., begin_r-1, end_0, ...];
// negative entries crop.
func (b *builder) pad(x string, pads []int64) string {
	zero := true
	for _, p := range pads {
		if p != 0 {
			zero = false
		}
	}
	if zero {
		return x
	}
	if b.opset < 11 {
		return b.op("Pad", []string{x}, attrInts("pads", pads...))
	}
	return b.op("Pad", []string{x, b.ints(pads...)})
}

// cast converts x to dt.
func (b *builder) cast(x string, dt onnx.DataType) string {
	return b.op("Cast", []string{x}, attrInt("to", int64(dt)))
}

// zerosLike is a tensor of zeros of v's type and shape.
func (b *builder) zerosLike(v string) string {
	dt := b.typeOf(v)
	t := floatTensor(dt, []float64{0})
	if t == nil {
		b.fail("no zeros of type %v can be made", dt)
		return ""
	}
	t.Shape = []int{1}
	if b.opset < 9 {
		// No ConstantOfShape: 0 · v would carry v's infinities.
		return b.op("Expand", []string{b.scalar(0, dt), b.shapeValue(v)})
	}
	return b.op("ConstantOfShape", []string{b.shapeValue(v)}, attrTensor("value", t))
}

// onesLike is a tensor of ones of v's type and shape.
func (b *builder) onesLike(v string) string {
	dt := b.typeOf(v)
	t := floatTensor(dt, []float64{1})
	if t == nil {
		b.fail("no ones of type %v can be made", dt)
		return ""
	}
	t.Shape = []int{1}
	if b.opset < 9 {
		return b.op("Expand", []string{b.scalar(1, dt), b.shapeValue(v)})
	}
	return b.op("ConstantOfShape", []string{b.shapeValue(v)}, attrTensor("value", t))
}

// unbroadcast sums g, the gradient of a value of shape out that x was
// broadcast to by a multidirectional broadcast, back to x's shape.
func (b *builder) unbroadcast(g, x string) string {
	if g == "" || b.err != nil {
		return ""
	}
	gs, xs := b.shapeOf(g), b.shapeOf(x)
	if b.err != nil {
		return ""
	}
	lead := len(gs) - len(xs)
	if lead < 0 {
		b.fail("internal: gradient of rank %d for %q of rank %d", len(gs), x, len(xs))
		return ""
	}
	var axes []int64
	for i := range lead {
		axes = append(axes, int64(i))
	}
	for i, d := range xs {
		if d == 1 && gs[lead+i] != 1 {
			axes = append(axes, int64(lead+i))
		}
	}
	if len(axes) == 0 && lead == 0 {
		return g
	}
	r := b.reduceSum(g, axes, true)
	return b.reshapeLike2(r, x, gs, axes)
}

// reshapeLike2 reshapes r, g summed over axes with kept dims, to x.
func (b *builder) reshapeLike2(r, x string, gs []int64, axes []int64) string {
	kept := append([]int64{}, gs...)
	for _, a := range axes {
		kept[a] = 1
	}
	b.info[r] = Info{Type: b.typeOf(x), Shape: kept}
	return b.reshapeLike(r, x)
}

// like records that v has the type and shape of ref, and returns v.
func (b *builder) like(v, ref string) string {
	b.setInfo(v, ref)
	return v
}

// intsOf is the value of an integer tensor the probe saw; a value that
// changes between runs (or was never seen) makes the rule fail.
func (b *builder) intsOf(v string) ([]int64, bool) {
	inf, ok := b.info[v]
	if !ok || inf.Ints == nil && numElements(inf.Shape) != 0 {
		b.fail("the value of %q must be known when the training graph is built (it changes between runs, or is not an integer tensor)", v)
		return nil, false
	}
	return inf.Ints, true
}
