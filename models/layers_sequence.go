package models

import (
	"math"

	"github.com/deep500/deep500-go/onnx"
)

// Layers of sequence models: matrix products over batched values,
// LayerNormalization, Softmax and the ONNX recurrent operators.

// MatMul is the matrix product of x [..., M, K] and y [..., K, P] (NumPy's
// matmul): the leading dimensions broadcast.
func (b *Builder) MatMul(x, y Value) Value {
	x, ok := b.resolve("MatMul", x)
	if !ok {
		return Value{}
	}
	y, ok = b.resolve("MatMul", y)
	if !ok {
		return Value{}
	}
	shape, ok := matMulShape(x.shape, y.shape)
	if !ok {
		return b.fail("MatMul: shapes %v (%q) and %v (%q) do not multiply", x.shape, x.name, y.shape, y.name)
	}
	return b.node("MatMul", b.nodeName("matmul"), []string{x.name, y.name}, shape)
}

func matMulShape(x, y []int64) ([]int64, bool) {
	if len(x) < 2 || len(y) < 2 {
		return nil, false
	}
	m, k := x[len(x)-2], x[len(x)-1]
	k2, p := y[len(y)-2], y[len(y)-1]
	if k != k2 || k < 0 {
		return nil, false
	}
	lead, err := broadcastShapes(x[:len(x)-2], y[:len(y)-2])
	if err != nil {
		return nil, false
	}
	return append(lead, m, p), true
}

// Linear is PyTorch's nn.Linear on x [..., in] as an export writes it for
// inputs of any rank: MatMul with the transposed weight, an initializer
// [in, out], then Add of the bias [out]. The parameters follow the
// builder's Init with fan_in = in, as Dense's. The weight and bias are
// named after the layer ("linear1.weight", "linear1.bias"), which is also
// the Add's name; the MatMul is "linear1_matmul".
func (b *Builder) Linear(x Value, out int) Value {
	x, ok := b.resolve("Linear", x)
	if !ok {
		return Value{}
	}
	if len(x.shape) < 2 || x.shape[len(x.shape)-1] <= 0 || out <= 0 {
		return b.fail("Linear: input %q has shape %v, want [..., features] (and %d outputs > 0)", x.name, x.shape, out)
	}
	in := int(x.shape[len(x.shape)-1])
	name := b.nodeName("linear")
	w := b.param(name, "weight", b.weights(in*out, in), in, out)
	bias := b.param(name, "bias", b.biases(out, in), out)
	shape := append(append([]int64(nil), x.shape[:len(x.shape)-1]...), int64(out))
	mm := b.node("MatMul", b.fresh(name+"_matmul"), []string{x.name, w}, shape)
	if mm.name == "" {
		return Value{}
	}
	return b.node("Add", name, []string{mm.name, bias}, shape)
}

// Softmax normalises x along its last axis (ONNX Softmax, opset 13 and
// later, axis -1).
func (b *Builder) Softmax(x Value) Value {
	return b.unary("Softmax", "softmax", x, intAttr("axis", -1))
}

// LayerNorm is LayerNormalization over x's last axis with epsilon 1e-5
// (PyTorch's nn.LayerNorm default): a scale initialised to 1 and a bias
// to 0, under every Init policy, as PyTorch does.
func (b *Builder) LayerNorm(x Value) Value {
	x, ok := b.resolve("LayerNorm", x)
	if !ok {
		return Value{}
	}
	if len(x.shape) < 2 || x.shape[len(x.shape)-1] <= 0 {
		return b.fail("LayerNorm: input %q has shape %v, want [..., features]", x.name, x.shape)
	}
	c := int(x.shape[len(x.shape)-1])
	name := b.nodeName("ln")
	inputs := []string{x.name, b.param(name, "weight", filled(c, 1), c), b.param(name, "bias", make([]float32, c), c)}
	return b.node("LayerNormalization", name, inputs, x.shape, intAttr("axis", -1), floatAttr("epsilon", 1e-5))
}

// LSTM is ONNX's LSTM over x [T, N, C] (sequence-major, layout 0) with
// the given hidden size, one direction or both; its output Y is [T,
// directions, N, hidden]. Parameters per direction: W [4·hidden, C], R
// [4·hidden, hidden] and B [8·hidden] (input and recurrent biases, as
// PyTorch's bias_ih and bias_hh), the same count as PyTorch's nn.LSTM.
func (b *Builder) LSTM(x Value, hidden int, bidirectional bool) Value {
	return b.recurrent("LSTM", "lstm", 4, x, hidden, bidirectional)
}

// GRU is ONNX's GRU over x [T, N, C] like LSTM, with 3 gates instead of 4
// and linear_before_reset 1, PyTorch's formulation (the reset gate scales
// the recurrent product after its bias is added), so that nn.GRU's
// weights carry over.
func (b *Builder) GRU(x Value, hidden int, bidirectional bool) Value {
	return b.recurrent("GRU", "gru", 3, x, hidden, bidirectional, intAttr("linear_before_reset", 1))
}

// recurrent adds an ONNX recurrent operator with gates gates. Its
// parameters are drawn uniform in ±1/√hidden under every Init policy:
// PyTorch's reset_parameters for nn.LSTM and nn.GRU, which He's rule,
// made for rectifiers, does not suit (the gates are sigmoids and tanh).
func (b *Builder) recurrent(opType, kind string, gates int, x Value, hidden int, bidirectional bool, attrs ...*onnx.Attribute) Value {
	x, ok := b.resolve(opType, x)
	if !ok {
		return Value{}
	}
	if len(x.shape) != 3 || x.shape[0] <= 0 || x.shape[2] <= 0 || hidden <= 0 {
		return b.fail("%s: input %q has shape %v, want [T, N, C] with T and C known (and hidden %d > 0)", opType, x.name, x.shape, hidden)
	}
	dirs, direction := 1, "forward"
	if bidirectional {
		dirs, direction = 2, "bidirectional"
	}
	c := int(x.shape[2])
	g := gates * hidden
	name := b.nodeName(kind)
	bound := 1 / math.Sqrt(float64(hidden))
	draw := func(n int) []float32 {
		out := make([]float32, n)
		b.uniform(out, bound)
		return out
	}
	inputs := []string{x.name,
		b.param(name, "W", draw(dirs*g*c), dirs, g, c),
		b.param(name, "R", draw(dirs*g*hidden), dirs, g, hidden),
		b.param(name, "B", draw(dirs*2*g), dirs, 2*g),
	}
	attrs = append(attrs, intAttr("hidden_size", int64(hidden)),
		&onnx.Attribute{Name: "direction", Type: onnx.AttrString, String: direction})
	return b.node(opType, name, inputs, []int64{x.shape[0], int64(dirs), x.shape[1], int64(hidden)}, attrs...)
}
