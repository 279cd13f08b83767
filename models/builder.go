package models

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/deep500/deep500-go/onnx"
	_ "github.com/deep500/deep500-go/ops" // registers the operators nodes are typed with
)

// DefaultOpset is the ai.onnx opset models import unless told otherwise.
const DefaultOpset = 17

// irVersion is the IR version models are written with: 8, the one that
// came with ai.onnx opset 17.
const irVersion = 8

// Value is a tensor of the model being built: its name and its static
// shape, -1 marking the symbolic batch dimension. The zero Value is
// invalid; a layer given one records an error.
type Value struct {
	name  string
	shape []int64
}

// Name is the value's name in the graph.
func (v Value) Name() string { return v.name }

// Shape is the value's static shape (-1 for the batch dimension); the
// caller must not modify it.
func (v Value) Shape() []int64 { return v.shape }

// Builder appends layers to a model. Its methods never fail: the first
// error is kept and returned by Model.
type Builder struct {
	// BatchNormTraining makes BatchNorm emit training_mode 1 (batch
	// statistics) instead of 0 (running statistics).
	BatchNormTraining bool
	// Init is how Conv and Dense parameters are drawn (InitHe, the zero
	// value, unless set before adding layers).
	Init Init

	name    string
	opset   int64
	rng     *rand.Rand
	nodes   []*onnx.Node
	inputs  []*onnx.ValueInfo
	outputs []*onnx.ValueInfo
	inits   []*onnx.Initializer
	used    map[string]bool
	counts  map[string]int
	alias   map[string]string // value renamed by Output: old name to new
	shapes  map[string][]int64
	err     error
}

// NewBuilder starts an empty model named name that imports ai.onnx at
// opset (DefaultOpset when 0). Its parameters are drawn with seed 0 until
// SetSeed says otherwise.
func NewBuilder(name string, opset int64) *Builder {
	if opset == 0 {
		opset = DefaultOpset
	}
	b := &Builder{
		name: name, opset: opset,
		used: map[string]bool{}, counts: map[string]int{}, alias: map[string]string{}, shapes: map[string][]int64{},
	}
	b.SetSeed(0)
	return b
}

// SetSeed restarts the parameter generator from seed; the parameters of
// layers added afterwards depend only on the seed and the layer sequence.
func (b *Builder) SetSeed(seed uint64) {
	b.rng = rand.New(rand.NewPCG(seed, 0x6d6f64656c73)) // stream: "models"
}

// Err returns the first error recorded, or nil.
func (b *Builder) Err() error { return b.err }

func (b *Builder) fail(format string, args ...any) Value {
	if b.err == nil {
		b.err = fmt.Errorf("model %q: "+format, append([]any{b.name}, args...)...)
	}
	return Value{}
}

// resolve returns the current value for v (following renames), or false
// after recording an error.
func (b *Builder) resolve(layer string, v Value) (Value, bool) {
	if b.err != nil {
		return Value{}, false
	}
	if v.name == "" {
		b.fail("%s: invalid (zero) input value", layer)
		return Value{}, false
	}
	name := v.name
	for {
		n, ok := b.alias[name]
		if !ok {
			break
		}
		name = n
	}
	shape, ok := b.shapes[name]
	if !ok {
		b.fail("%s: value %q is not of this model", layer, v.name)
		return Value{}, false
	}
	return Value{name, shape}, true
}

// fresh returns an unused name: base itself, or base_1, base_2, ...
func (b *Builder) fresh(base string) string {
	name := base
	for i := 1; b.used[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	b.used[name] = true
	return name
}

// nodeName returns the next unused name of a layer kind: conv1, conv2, ...
func (b *Builder) nodeName(kind string) string {
	for {
		b.counts[kind]++
		name := kind + strconv.Itoa(b.counts[kind])
		if !b.used[name] {
			b.used[name] = true
			return name
		}
	}
}

// node appends a node of opType named name with one output (named like
// the node) of the given shape, typing it through the operator registry.
func (b *Builder) node(opType, name string, inputs []string, shape []int64, attrs ...*onnx.Attribute) Value {
	return b.nodeOutputs(opType, name, inputs, []string{name}, [][]int64{shape}, attrs...)[0]
}

// nodeOutputs appends a node of opType named name with the given outputs
// and their shapes, and returns the output values (zero Values after an
// error).
func (b *Builder) nodeOutputs(opType, name string, inputs, outputs []string, shapes [][]int64, attrs ...*onnx.Attribute) []Value {
	values := make([]Value, len(outputs))
	n := &onnx.Node{Name: name, OpType: opType, Inputs: inputs, Outputs: outputs, Attributes: attrs, Opset: b.opset}
	if err := typeNode(n); err != nil {
		b.fail("%v", err)
		return values
	}
	b.nodes = append(b.nodes, n)
	for i, out := range outputs {
		b.shapes[out] = shapes[i]
		values[i] = Value{out, shapes[i]}
	}
	return values
}

// typeNode sets n.Op to the registered operator of the node's opset, as
// loading a model does.
func typeNode(n *onnx.Node) error { return onnx.TypeNode(n) }

// param adds a float initializer named node.suffix.
func (b *Builder) param(node, suffix string, data []float32, shape ...int) string {
	name := b.fresh(node + "." + suffix)
	b.inits = append(b.inits, &onnx.Initializer{Name: name, Tensor: onnx.FromSlice(data, shape...)})
	return name
}

func filled(n int, v float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func intAttr(name string, v int64) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrInt, Int: v}
}

func intsAttr(name string, v ...int64) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrInts, Ints: v}
}

func floatAttr(name string, v float32) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrFloat, Float: v}
}

func tensorType(elem onnx.DataType, shape []int64) *onnx.TypeInfo {
	dims := make([]onnx.Dim, len(shape))
	for i, d := range shape {
		dims[i] = onnx.Dim{Size: d}
		if d < 0 {
			dims[i] = onnx.Dim{Size: -1, Param: "N"}
		}
	}
	return &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: elem, Shape: dims, HasShape: true}
}

// Input adds a graph input of element type elem and shape dims; a negative
// dimension is the symbolic batch size "N".
func (b *Builder) Input(name string, elem onnx.DataType, dims ...int64) Value {
	if b.err != nil {
		return Value{}
	}
	if name == "" || b.used[name] {
		return b.fail("input %q: empty or already used name", name)
	}
	b.used[name] = true
	shape := append([]int64(nil), dims...)
	for i := range shape {
		if shape[i] < 0 {
			shape[i] = -1
		}
	}
	b.inputs = append(b.inputs, &onnx.ValueInfo{Name: name, Type: tensorType(elem, shape)})
	b.shapes[name] = shape
	return Value{name, shape}
}

// ConvSpec describes a 2-D convolution: Out output channels, a square
// Kernel, Stride and symmetric Pad, Group groups (1 when 0), and NoBias to
// leave the bias out (as before a BatchNorm).
type ConvSpec struct {
	Out, Kernel, Stride, Pad, Group int
	NoBias                          bool
}

// Conv is a 2-D convolution with bias of x [N, C, H, W]: out channels, a
// kernel×kernel window, stride and pad on every side.
func (b *Builder) Conv(x Value, out, kernel, stride, pad int) Value {
	return b.ConvWith(x, ConvSpec{Out: out, Kernel: kernel, Stride: stride, Pad: pad})
}

// ConvWith is a 2-D convolution as spec describes.
func (b *Builder) ConvWith(x Value, spec ConvSpec) Value {
	x, ok := b.resolve("Conv", x)
	if !ok {
		return Value{}
	}
	if spec.Group == 0 {
		spec.Group = 1
	}
	if spec.Stride == 0 {
		spec.Stride = 1
	}
	if len(x.shape) != 4 {
		return b.fail("Conv: input %q has shape %v, want [N, C, H, W]", x.name, x.shape)
	}
	c := int(x.shape[1])
	if spec.Out <= 0 || spec.Kernel <= 0 || spec.Pad < 0 || c%spec.Group != 0 || spec.Out%spec.Group != 0 {
		return b.fail("Conv: bad spec %+v for %d input channels", spec, c)
	}
	h, okh := poolOut(x.shape[2], spec.Kernel, spec.Stride, spec.Pad)
	w, okw := poolOut(x.shape[3], spec.Kernel, spec.Stride, spec.Pad)
	if !okh || !okw {
		return b.fail("Conv: kernel %d does not fit input %q of shape %v", spec.Kernel, x.name, x.shape)
	}
	name := b.nodeName("conv")
	k := spec.Kernel
	fanIn := c / spec.Group * k * k
	wname := b.param(name, "weight", b.weights(spec.Out*fanIn, fanIn), spec.Out, c/spec.Group, k, k)
	inputs := []string{x.name, wname}
	if !spec.NoBias {
		inputs = append(inputs, b.param(name, "bias", b.biases(spec.Out, fanIn), spec.Out))
	}
	k64, s64, p64 := int64(k), int64(spec.Stride), int64(spec.Pad)
	attrs := []*onnx.Attribute{intsAttr("kernel_shape", k64, k64), intsAttr("strides", s64, s64), intsAttr("pads", p64, p64, p64, p64)}
	if spec.Group != 1 {
		attrs = append(attrs, intAttr("group", int64(spec.Group)))
	}
	return b.node("Conv", name, inputs, []int64{x.shape[0], int64(spec.Out), h, w}, attrs...)
}

// poolOut is the output size of a window over n: floor((n+2p-k)/s)+1.
func poolOut(n int64, k, s, p int) (int64, bool) {
	if n < 0 {
		return -1, true
	}
	span := n + 2*int64(p) - int64(k)
	if span < 0 || s <= 0 {
		return 0, false
	}
	return span/int64(s) + 1, true
}

// BatchNorm is BatchNormalization over the channels (dimension 1) of x,
// with epsilon 1e-5 and momentum 0.9 (PyTorch's defaults).
func (b *Builder) BatchNorm(x Value) Value {
	return b.BatchNormWith(x, 1e-5, 0.9)
}

// BatchNormWith is BatchNormalization over the channels of x with the given
// epsilon and ONNX momentum, the weight of the old running statistics:
// PyTorch's momentum m is ONNX's 1-m (PyTorch's default 0.1 is 0.9).
func (b *Builder) BatchNormWith(x Value, epsilon, momentum float32) Value {
	x, ok := b.resolve("BatchNorm", x)
	if !ok {
		return Value{}
	}
	if len(x.shape) < 2 || x.shape[1] <= 0 {
		return b.fail("BatchNorm: input %q has shape %v, want [N, C, ...]", x.name, x.shape)
	}
	c := int(x.shape[1])
	name := b.nodeName("bn")
	inputs := []string{x.name,
		b.param(name, "weight", filled(c, 1), c),
		b.param(name, "bias", make([]float32, c), c),
		b.param(name, "running_mean", make([]float32, c), c),
		b.param(name, "running_var", filled(c, 1), c),
	}
	attrs := []*onnx.Attribute{floatAttr("epsilon", epsilon), floatAttr("momentum", momentum)}
	if b.BatchNormTraining {
		attrs = append(attrs, intAttr("training_mode", 1))
	}
	return b.node("BatchNormalization", name, inputs, x.shape, attrs...)
}

func (b *Builder) unary(opType, kind string, x Value, attrs ...*onnx.Attribute) Value {
	x, ok := b.resolve(opType, x)
	if !ok {
		return Value{}
	}
	return b.node(opType, b.nodeName(kind), []string{x.name}, x.shape, attrs...)
}

// Relu is max(x, 0).
func (b *Builder) Relu(x Value) Value { return b.unary("Relu", "relu", x) }

// Relu6 is min(max(x, 0), 6): Clip with bounds from Constant nodes.
func (b *Builder) Relu6(x Value) Value {
	x, ok := b.resolve("Relu6", x)
	if !ok {
		return Value{}
	}
	name := b.nodeName("relu6")
	lo := b.constant(name+".min", 0)
	hi := b.constant(name+".max", 6)
	return b.node("Clip", name, []string{x.name, lo, hi}, x.shape)
}

// constant adds a Constant node holding a float scalar and returns its
// output's name.
func (b *Builder) constant(base string, v float32) string {
	name := b.fresh(base)
	b.node("Constant", name, nil, []int64{}, &onnx.Attribute{Name: "value", Type: onnx.AttrTensor, Tensor: onnx.Scalar(v)})
	return name
}

// MaxPool is 2-D max pooling with a kernel×kernel window.
func (b *Builder) MaxPool(x Value, kernel, stride, pad int) Value {
	return b.pool("MaxPool", "maxpool", x, kernel, stride, pad)
}

// MaxPoolCeil is MaxPool with ceil_mode 1, as PyTorch's MaxPool2d(...,
// ceil_mode=True) exports: the output size rounds up, so a last window
// that starts inside the input (or its left padding) but overhangs its
// end is kept.
func (b *Builder) MaxPoolCeil(x Value, kernel, stride, pad int) Value {
	x, ok := b.resolve("MaxPool", x)
	if !ok {
		return Value{}
	}
	if len(x.shape) != 4 || kernel <= 0 || stride <= 0 || pad < 0 {
		return b.fail("MaxPool: window %d/%d/%d or input %q of shape %v, want [N, C, H, W]", kernel, stride, pad, x.name, x.shape)
	}
	h, okh := poolOutCeil(x.shape[2], kernel, stride, pad)
	w, okw := poolOutCeil(x.shape[3], kernel, stride, pad)
	if !okh || !okw {
		return b.fail("MaxPool: window %d/%d/%d does not fit input %q of shape %v", kernel, stride, pad, x.name, x.shape)
	}
	k, s, p := int64(kernel), int64(stride), int64(pad)
	return b.node("MaxPool", b.nodeName("maxpool"), []string{x.name}, []int64{x.shape[0], x.shape[1], h, w},
		intsAttr("kernel_shape", k, k), intsAttr("strides", s, s), intsAttr("pads", p, p, p, p), intAttr("ceil_mode", 1))
}

// poolOutCeil is the output size of a window over n in ceil mode:
// ceil((n+2p-k)/s)+1, less one when the last window would start in the
// right padding (PyTorch's and ONNX's rule).
func poolOutCeil(n int64, k, s, p int) (int64, bool) {
	span := n + 2*int64(p) - int64(k)
	if span < 0 || s <= 0 {
		return 0, false
	}
	out := (span+int64(s)-1)/int64(s) + 1
	if (out-1)*int64(s) >= n+int64(p) {
		out--
	}
	return out, true
}

// AveragePool is 2-D average pooling with a kernel×kernel window; padded
// cells are not counted (count_include_pad 0).
func (b *Builder) AveragePool(x Value, kernel, stride, pad int) Value {
	return b.pool("AveragePool", "avgpool", x, kernel, stride, pad)
}

func (b *Builder) pool(opType, kind string, x Value, kernel, stride, pad int) Value {
	x, ok := b.resolve(opType, x)
	if !ok {
		return Value{}
	}
	if len(x.shape) != 4 {
		return b.fail("%s: input %q has shape %v, want [N, C, H, W]", opType, x.name, x.shape)
	}
	h, okh := poolOut(x.shape[2], kernel, stride, pad)
	w, okw := poolOut(x.shape[3], kernel, stride, pad)
	if !okh || !okw || kernel <= 0 || pad < 0 {
		return b.fail("%s: window %d/%d/%d does not fit input %q of shape %v", opType, kernel, stride, pad, x.name, x.shape)
	}
	k, s, p := int64(kernel), int64(stride), int64(pad)
	return b.node(opType, b.nodeName(kind), []string{x.name}, []int64{x.shape[0], x.shape[1], h, w},
		intsAttr("kernel_shape", k, k), intsAttr("strides", s, s), intsAttr("pads", p, p, p, p))
}

// GlobalAveragePool averages each channel over its spatial dimensions:
// [N, C, H, W] to [N, C, 1, 1].
func (b *Builder) GlobalAveragePool(x Value) Value {
	x, ok := b.resolve("GlobalAveragePool", x)
	if !ok {
		return Value{}
	}
	if len(x.shape) < 3 {
		return b.fail("GlobalAveragePool: input %q has shape %v, want [N, C, ...]", x.name, x.shape)
	}
	shape := []int64{x.shape[0], x.shape[1]}
	for range x.shape[2:] {
		shape = append(shape, 1)
	}
	return b.node("GlobalAveragePool", b.nodeName("gap"), []string{x.name}, shape)
}

// Flatten reshapes [N, d1, d2, ...] to [N, d1·d2·...].
func (b *Builder) Flatten(x Value) Value {
	x, ok := b.resolve("Flatten", x)
	if !ok {
		return Value{}
	}
	if len(x.shape) < 1 {
		return b.fail("Flatten: input %q is a scalar", x.name)
	}
	n := int64(1)
	for _, d := range x.shape[1:] {
		if d < 0 {
			return b.fail("Flatten: input %q has shape %v, unknown beyond the batch", x.name, x.shape)
		}
		n *= d
	}
	return b.node("Flatten", b.nodeName("flatten"), []string{x.name}, []int64{x.shape[0], n}, intAttr("axis", 1))
}

// Dense is a fully connected layer of x [N, in]: Gemm(x, W, b) with W
// [out, in] (transB 1, PyTorch's Linear layout) and b [out].
func (b *Builder) Dense(x Value, out int) Value {
	x, ok := b.resolve("Dense", x)
	if !ok {
		return Value{}
	}
	if len(x.shape) != 2 || x.shape[1] <= 0 || out <= 0 {
		return b.fail("Dense: input %q has shape %v, want [N, features] (and %d outputs > 0)", x.name, x.shape, out)
	}
	in := int(x.shape[1])
	name := b.nodeName("fc")
	w := b.param(name, "weight", b.weights(out*in, in), out, in)
	bias := b.param(name, "bias", b.biases(out, in), out)
	return b.node("Gemm", name, []string{x.name, w, bias}, []int64{x.shape[0], int64(out)}, intAttr("transB", 1))
}

// Gemm is Dense under ONNX's name.
func (b *Builder) Gemm(x Value, out int) Value { return b.Dense(x, out) }

// Add is the elementwise sum of two values of the same shape.
func (b *Builder) Add(x, y Value) Value {
	x, ok := b.resolve("Add", x)
	if !ok {
		return Value{}
	}
	y, ok = b.resolve("Add", y)
	if !ok {
		return Value{}
	}
	if !equalShapes(x.shape, y.shape) {
		return b.fail("Add: shapes %v (%q) and %v (%q) differ", x.shape, x.name, y.shape, y.name)
	}
	return b.node("Add", b.nodeName("add"), []string{x.name, y.name}, x.shape)
}

func equalShapes(a, b []int64) bool {
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

// Output makes x a graph output named name, renaming the value (a node's
// output) when it is not already so named. Values held by the caller keep
// working after the rename.
func (b *Builder) Output(x Value, name string) Value {
	x, ok := b.resolve("Output", x)
	if !ok {
		return Value{}
	}
	for _, o := range b.outputs {
		if o.Name == name {
			return b.fail("output %q: already an output", name)
		}
	}
	if name != x.name {
		var producer *onnx.Node
		output := 0 // which of producer's outputs x is
		for _, n := range b.nodes {
			for i, out := range n.Outputs {
				if out == x.name {
					producer, output = n, i
				}
			}
		}
		if producer == nil || b.used[name] {
			// A graph input, or the name is taken: copy through Identity.
			if b.used[name] {
				return b.fail("output %q: name already used", name)
			}
			b.used[name] = true
			x = b.node("Identity", name, []string{x.name}, x.shape)
		} else {
			b.used[name] = true
			producer.Outputs[output] = name
			for _, n := range b.nodes {
				renamed := n == producer
				for i, in := range n.Inputs {
					if in == x.name {
						n.Inputs[i] = name
						renamed = true
					}
				}
				if renamed {
					if err := typeNode(n); err != nil {
						return b.fail("output %q: %v", name, err)
					}
				}
			}
			b.alias[x.name] = name
			b.shapes[name] = x.shape
			delete(b.shapes, x.name)
			x = Value{name, x.shape}
		}
	}
	b.outputs = append(b.outputs, &onnx.ValueInfo{Name: name, Type: tensorType(onnx.Float, x.shape)})
	return x
}

// Model returns the model built so far, or the first error recorded. The
// builder may not be used afterwards.
func (b *Builder) Model() (*onnx.Model, error) {
	if b.err != nil {
		return nil, b.err
	}
	if len(b.outputs) == 0 {
		return nil, errors.New("model " + strconv.Quote(b.name) + ": no outputs")
	}
	g := &onnx.Graph{Name: b.name, Nodes: b.nodes, Inputs: b.inputs, Outputs: b.outputs, Initializers: b.inits}
	for _, n := range g.Nodes {
		n.Graph = g
	}
	return &onnx.Model{
		IRVersion:       irVersion,
		Opsets:          map[string]int64{"": b.opset},
		ProducerName:    "deep500-go",
		ProducerVersion: "models",
		Graph:           g,
	}, nil
}

// ParamCount counts the elements of m's floating-point initializers: the
// trainable parameters together with BatchNormalization's running
// statistics.
func ParamCount(m *onnx.Model) int {
	n := 0
	for _, in := range m.Graph.Initializers {
		if in.Tensor.Type.IsFloat() {
			n += in.Tensor.Len()
		}
	}
	return n
}
