package models

import (
	"fmt"

	"github.com/deep500/deep500-go/onnx"
)

// Layers that rearrange, combine or scale tensors without parameters, and
// the hard activations of the mobile networks. Shape arguments (Reshape's
// target, Squeeze's axes, Gather's index) are Constant nodes, as an
// exporter writes them, so that they are not mistaken for parameters.

// HardSwish is x·HardSigmoid(x) = x·min(max(x+3, 0), 6)/6, PyTorch's
// nn.Hardswish (ONNX HardSwish).
func (b *Builder) HardSwish(x Value) Value { return b.unary("HardSwish", "hardswish", x) }

// HardSigmoid is min(max(x/6 + 1/2, 0), 1), PyTorch's F.hardsigmoid: ONNX
// HardSigmoid with alpha 1/6 and beta 0.5 (ONNX's default alpha is 0.2,
// which is not PyTorch's).
func (b *Builder) HardSigmoid(x Value) Value {
	return b.unary("HardSigmoid", "hardsigmoid", x, floatAttr("alpha", 1.0/6), floatAttr("beta", 0.5))
}

// Mul is the elementwise product of x and y under NumPy broadcasting, as
// a squeeze-and-excitation scale [N, C, 1, 1] times its input [N, C, H, W].
func (b *Builder) Mul(x, y Value) Value {
	x, ok := b.resolve("Mul", x)
	if !ok {
		return Value{}
	}
	y, ok = b.resolve("Mul", y)
	if !ok {
		return Value{}
	}
	shape, err := broadcastShapes(x.shape, y.shape)
	if err != nil {
		return b.fail("Mul: %q and %q: %v", x.name, y.name, err)
	}
	return b.node("Mul", b.nodeName("mul"), []string{x.name, y.name}, shape)
}

// Scale multiplies x by the constant s (a Constant scalar broadcast).
func (b *Builder) Scale(x Value, s float32) Value {
	x, ok := b.resolve("Mul", x)
	if !ok {
		return Value{}
	}
	name := b.nodeName("mul")
	c := b.constant(name+".scale", s)
	return b.node("Mul", name, []string{x.name, c}, x.shape)
}

// broadcastShapes is the NumPy broadcast of two static shapes, -1 (the
// symbolic batch) meeting 1 or -1.
func broadcastShapes(a, c []int64) ([]int64, error) {
	n := max(len(a), len(c))
	out := make([]int64, n)
	for i := range n {
		da, dc := int64(1), int64(1)
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(c) - n + i; j >= 0 {
			dc = c[j]
		}
		switch {
		case da == dc:
			out[i] = da
		case da == 1:
			out[i] = dc
		case dc == 1:
			out[i] = da
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", a, c)
		}
	}
	return out, nil
}

// constantInts adds a Constant node holding an int64 tensor of the given
// values (a vector, or a scalar when scalar is set) and returns its
// output's name.
func (b *Builder) constantInts(base string, scalar bool, v ...int64) string {
	name := b.fresh(base)
	t := onnx.FromSlice(append([]int64(nil), v...), len(v))
	shape := []int64{int64(len(v))}
	if scalar {
		t = onnx.Scalar(v[0])
		shape = []int64{}
	}
	b.node("Constant", name, nil, shape, &onnx.Attribute{Name: "value", Type: onnx.AttrTensor, Tensor: t})
	return name
}

// Reshape gives x the shape dims; a 0 copies x's dimension at that
// position (the symbolic batch, as an export of x.view(N, ...) writes it),
// and -1 is not accepted, so that every static size is known.
func (b *Builder) Reshape(x Value, dims ...int64) Value {
	x, ok := b.resolve("Reshape", x)
	if !ok {
		return Value{}
	}
	shape := make([]int64, len(dims))
	inKnown, outKnown := int64(1), int64(1)
	inUnknown, outUnknown := 0, 0
	for _, d := range x.shape {
		if d < 0 {
			inUnknown++
		} else {
			inKnown *= d
		}
	}
	for i, d := range dims {
		switch {
		case d == 0 && i < len(x.shape):
			shape[i] = x.shape[i]
		case d > 0:
			shape[i] = d
		default:
			return b.fail("Reshape: dimension %d of %v for %q of shape %v: want > 0, or 0 within its rank", i, dims, x.name, x.shape)
		}
		if shape[i] < 0 {
			outUnknown++
		} else {
			outKnown *= shape[i]
		}
	}
	if inKnown != outKnown || inUnknown != outUnknown {
		return b.fail("Reshape: %q of shape %v cannot take shape %v", x.name, x.shape, dims)
	}
	name := b.nodeName("reshape")
	target := b.constantInts(name+".shape", false, dims...)
	return b.node("Reshape", name, []string{x.name, target}, shape)
}

// Transpose permutes x's dimensions: output dimension i is input
// dimension perm[i].
func (b *Builder) Transpose(x Value, perm ...int64) Value {
	x, ok := b.resolve("Transpose", x)
	if !ok {
		return Value{}
	}
	if len(perm) != len(x.shape) {
		return b.fail("Transpose: permutation %v for %q of rank %d", perm, x.name, len(x.shape))
	}
	seen := make([]bool, len(perm))
	shape := make([]int64, len(perm))
	for i, p := range perm {
		if p < 0 || int(p) >= len(perm) || seen[p] {
			return b.fail("Transpose: %v is not a permutation", perm)
		}
		seen[p] = true
		shape[i] = x.shape[p]
	}
	return b.node("Transpose", b.nodeName("transpose"), []string{x.name}, shape, intsAttr("perm", perm...))
}

// Concat joins values along axis (non-negative); their other dimensions
// must agree.
func (b *Builder) Concat(axis int, xs ...Value) Value {
	if len(xs) == 0 {
		return b.fail("Concat: no inputs")
	}
	names := make([]string, len(xs))
	var shape []int64
	for i, x := range xs {
		x, ok := b.resolve("Concat", x)
		if !ok {
			return Value{}
		}
		names[i] = x.name
		if i == 0 {
			shape = append([]int64(nil), x.shape...)
			if axis < 0 || axis >= len(shape) || shape[axis] < 0 {
				return b.fail("Concat: axis %d of %q of shape %v", axis, x.name, x.shape)
			}
			continue
		}
		if len(x.shape) != len(shape) {
			return b.fail("Concat: %q of shape %v has not rank %d", x.name, x.shape, len(shape))
		}
		for d := range shape {
			switch {
			case d == axis && x.shape[d] >= 0:
				shape[d] += x.shape[d]
			case d == axis || x.shape[d] != shape[d]:
				return b.fail("Concat: %q of shape %v does not fit %v along axis %d", x.name, x.shape, shape, axis)
			}
		}
	}
	return b.node("Concat", b.nodeName("concat"), names, shape, intAttr("axis", int64(axis)))
}

// Split cuts x along axis (non-negative) into parts equal pieces, as
// torch.chunk exports: ONNX Split with no split input, its outputs' count
// giving the number of pieces.
func (b *Builder) Split(x Value, axis, parts int) []Value {
	x, ok := b.resolve("Split", x)
	if !ok {
		return make([]Value, parts)
	}
	if parts <= 0 || axis < 0 || axis >= len(x.shape) || x.shape[axis] < 0 || x.shape[axis]%int64(parts) != 0 {
		b.fail("Split: %q of shape %v into %d parts along axis %d", x.name, x.shape, parts, axis)
		return make([]Value, parts)
	}
	name := b.nodeName("split")
	outputs := make([]string, parts)
	shapes := make([][]int64, parts)
	for i := range outputs {
		outputs[i] = b.fresh(fmt.Sprintf("%s_%d", name, i))
		shapes[i] = append([]int64(nil), x.shape...)
		shapes[i][axis] /= int64(parts)
	}
	return b.nodeOutputs("Split", name, []string{x.name}, outputs, shapes, intAttr("axis", int64(axis)))
}

// ChannelShuffle interleaves the groups of x [N, C, H, W]'s channels, as
// ShuffleNet's channel_shuffle exports: Reshape to [N, groups, C/groups,
// H, W], Transpose the two channel dimensions, Reshape back.
func (b *Builder) ChannelShuffle(x Value, groups int) Value {
	x, ok := b.resolve("ChannelShuffle", x)
	if !ok {
		return Value{}
	}
	if len(x.shape) != 4 || groups <= 0 || x.shape[1]%int64(groups) != 0 {
		return b.fail("ChannelShuffle: %q of shape %v into %d groups", x.name, x.shape, groups)
	}
	c, h, w, g := x.shape[1], x.shape[2], x.shape[3], int64(groups)
	y := b.Reshape(x, 0, g, c/g, h, w)
	y = b.Transpose(y, 0, 2, 1, 3, 4)
	return b.Reshape(y, 0, c, h, w)
}

// Squeeze removes the given dimensions of size 1 (axes non-negative).
func (b *Builder) Squeeze(x Value, axes ...int64) Value {
	x, ok := b.resolve("Squeeze", x)
	if !ok {
		return Value{}
	}
	drop := map[int64]bool{}
	for _, a := range axes {
		if a < 0 || int(a) >= len(x.shape) || x.shape[a] != 1 {
			return b.fail("Squeeze: axis %d of %q of shape %v is not of size 1", a, x.name, x.shape)
		}
		drop[a] = true
	}
	var shape []int64
	for i, d := range x.shape {
		if !drop[int64(i)] {
			shape = append(shape, d)
		}
	}
	name := b.nodeName("squeeze")
	return b.node("Squeeze", name, []string{x.name, b.constantInts(name+".axes", false, axes...)}, shape)
}

// Gather takes position index (non-negative) of x's dimension axis and
// drops that dimension, as x[:, index] exports (a scalar index).
func (b *Builder) Gather(x Value, axis int, index int64) Value {
	x, ok := b.resolve("Gather", x)
	if !ok {
		return Value{}
	}
	if axis < 0 || axis >= len(x.shape) || index < 0 || x.shape[axis] >= 0 && index >= x.shape[axis] {
		return b.fail("Gather: index %d of axis %d of %q of shape %v", index, axis, x.name, x.shape)
	}
	shape := append(append([]int64(nil), x.shape[:axis]...), x.shape[axis+1:]...)
	name := b.nodeName("gather")
	return b.node("Gather", name, []string{x.name, b.constantInts(name+".index", true, index)}, shape, intAttr("axis", int64(axis)))
}

// ReduceMean averages x over one axis (non-negative) and drops it, as
// x.mean(axis) exports.
func (b *Builder) ReduceMean(x Value, axis int) Value {
	x, ok := b.resolve("ReduceMean", x)
	if !ok {
		return Value{}
	}
	if axis < 0 || axis >= len(x.shape) || x.shape[axis] <= 0 {
		return b.fail("ReduceMean: axis %d of %q of shape %v", axis, x.name, x.shape)
	}
	shape := append(append([]int64(nil), x.shape[:axis]...), x.shape[axis+1:]...)
	return b.node("ReduceMean", b.nodeName("mean"), []string{x.name}, shape, intsAttr("axes", int64(axis)), intAttr("keepdims", 0))
}
