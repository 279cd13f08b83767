package native

import "github.com/deep500/deep500-go/onnx"

// outputBuffer is a kernel's output tensor kept between runs. When a run
// asks for the same type and element count as the last one, the backing
// slice is reused instead of allocated; only the shape is updated.
//
// Reuse is safe because a kernel runs once per run and never writes into
// its inputs, and the executor hands callers copies (Inference, Fetch), so
// nobody outside the plan holds a buffer while it is overwritten. A kernel
// using a buffer must write every element of it.
type outputBuffer struct{ t *onnx.Tensor }

// tensor returns a tensor of the given type and shape whose contents are
// unspecified (the previous run's values, or zeros).
func (b *outputBuffer) tensor(typ onnx.DataType, shape []int) *onnx.Tensor {
	n := onnx.NumElements(shape)
	if b.t != nil && b.t.Type == typ && b.t.Len() == n {
		b.t.Shape = append(b.t.Shape[:0], shape...)
		return b.t
	}
	b.t = onnx.NewTensor(typ, shape...)
	return b.t
}

// taskOf returns the *T held in slot, making it on first use (or when the
// slot holds a task for another element type). Kernels keep their parallel
// paths' tasks this way: a task handed to par.Spread escapes to the
// workers, so a task built per run would be allocated per run.
func taskOf[T any](slot *any) *T {
	if t, ok := (*slot).(*T); ok {
		return t
	}
	t := new(T)
	*slot = t
	return t
}
