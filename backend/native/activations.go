package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/backend/native/internal/vec"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// activation names an elementwise function of one float tensor.
type activation int

const (
	actRelu activation = iota
	actSigmoid
	actTanh
)

func (a activation) String() string { return [...]string{"Relu", "Sigmoid", "Tanh"}[a] }

// activationKernel computes one activation node into its own buffer.
type activationKernel struct {
	fn        activation
	threads   int
	out       outputBuffer
	wideIn    float32Scratch
	wideOut   float32Scratch
	intsAllow bool // Relu from version 14 also takes signed integers
	task      any  // the parallel path's *activationTask (taskOf)
}

func (k *activationKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	out := k.out.tensor(x.Type, x.Shape)
	switch src := x.Data.(type) {
	case []float32:
		parallelActivation(k.fn, k.threads, out.Data.([]float32), src, true, taskOf[activationTask[float32]](&k.task))
	case []float64:
		parallelActivation(k.fn, k.threads, out.Data.([]float64), src, false, taskOf[activationTask[float64]](&k.task))
	case []onnx.F16, []onnx.BF16:
		in, _ := widenToFloat32(k.wideIn.get(x.Len()), src)
		res := k.wideOut.get(x.Len())
		parallelActivation(k.fn, k.threads, res, in, false, taskOf[activationTask[float32]](&k.task))
		if err := narrowFromFloat32(out.Data, res); err != nil {
			return nil, err
		}
	case []int8:
		if !k.intsAllow {
			return nil, network.Unsupportedf("%v of %v before version 14", k.fn, x.Type)
		}
		reluInts(out.Data.([]int8), src)
	case []int16:
		if !k.intsAllow {
			return nil, network.Unsupportedf("%v of %v before version 14", k.fn, x.Type)
		}
		reluInts(out.Data.([]int16), src)
	case []int32:
		if !k.intsAllow {
			return nil, network.Unsupportedf("%v of %v before version 14", k.fn, x.Type)
		}
		reluInts(out.Data.([]int32), src)
	case []int64:
		if !k.intsAllow {
			return nil, network.Unsupportedf("%v of %v before version 14", k.fn, x.Type)
		}
		reluInts(out.Data.([]int64), src)
	default:
		return nil, network.Unsupportedf("%v of %v tensors", k.fn, x.Type)
	}
	return out, nil
}

// parallelActivation is applyActivation with large tensors split over
// goroutines; Sigmoid and Tanh cost a transcendental per element (a
// fraction of a nanosecond in the vector kernels, so they take bigger
// chunks).
// The parallel path hands task (held by the kernel) to the workers, so
// that it allocates nothing.
func parallelActivation[T floatElem](fn activation, threads int, dst, src []T, vector bool, task *activationTask[T]) {
	grain := par.Grain / 8
	if vector {
		grain = par.Grain / 2
	}
	chunks := par.Chunks(len(src), threads, grain)
	if chunks <= 1 {
		applyActivation(fn, dst, src, vector)
		return
	}
	*task = activationTask[T]{fn: fn, dst: dst, src: src, vector: vector, chunks: chunks}
	par.Spread(chunks, task)
	*task = activationTask[T]{} // hold no tensors between runs
}

// activationTask is parallelActivation's work: worker w applies fn to
// chunk w of chunks.
type activationTask[T floatElem] struct {
	fn       activation
	dst, src []T
	vector   bool
	chunks   int
}

func (t *activationTask[T]) Work(w int) {
	n := len(t.src)
	lo, hi := w*n/t.chunks, (w+1)*n/t.chunks
	applyActivation(t.fn, t.dst[lo:hi], t.src[lo:hi], t.vector)
}

// applyActivation writes fn(src) into dst. With vector set (float32
// tensors) Sigmoid and Tanh run the kernels of internal/vec, within 2.5
// and 2 ulp of the exact values; otherwise (float64, and float16 and
// bfloat16 widened to float32) they go through float64 and the math
// package, which keeps them correctly rounded.
func applyActivation[T floatElem](fn activation, dst, src []T, vector bool) {
	dst = dst[:len(src)]
	switch fn {
	case actRelu:
		// float32 Relu is a Clip to [0, +inf], whose vector kernel has no
		// branch to mispredict on mixed signs (NaN and -0 kept, as below).
		if d, ok := any(dst).([]float32); ok {
			vec.Clip(d, any(src).([]float32), 0, float32(math.Inf(1)))
			return
		}
		for i, v := range src {
			if v < 0 {
				v = 0
			}
			dst[i] = v
		}
	case actSigmoid:
		if d, ok := any(dst).([]float32); ok && vector {
			vec.Sigmoid(d, any(src).([]float32))
			return
		}
		for i, v := range src {
			dst[i] = T(sigmoid(float64(v)))
		}
	case actTanh:
		if d, ok := any(dst).([]float32); ok && vector {
			vec.Tanh(d, any(src).([]float32))
			return
		}
		for i, v := range src {
			dst[i] = T(math.Tanh(float64(v)))
		}
	}
}

// sigmoid is 1/(1+e^-x), evaluated so that neither branch overflows.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// reluInts is Relu for the signed integer types of version 14.
func reluInts[T int8 | int16 | int32 | int64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = max(v, 0)
	}
}

// softmaxKernel computes Softmax. Before version 13 the input is seen as a
// 2-D matrix [prod(shape[:axis]), prod(shape[axis:])] and normalized per
// row (coerceTo2D); from version 13 it is normalized along axis alone.
type softmaxKernel struct {
	axis       int64
	coerceTo2D bool
	threads    int
	out        outputBuffer
	wideIn     float32Scratch
	wideOut    float32Scratch
	maxes      []float64
	sums       []float64
	rowsTask   softmaxRowsTask // softmaxRows' parallel work
}

func (k *softmaxKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	rank := len(x.Shape)
	axis := int(k.axis)
	if axis < 0 {
		axis += rank
	}
	if rank == 0 {
		axis = 0 // a scalar is its own single-element row
	} else if axis < 0 || axis >= rank {
		return nil, fmt.Errorf("axis %d is out of range for shape %v", k.axis, x.Shape)
	}
	outer := onnx.NumElements(x.Shape[:min(axis, rank)])
	n, inner := 1, 1
	switch {
	case rank == 0:
	case k.coerceTo2D:
		n = onnx.NumElements(x.Shape[axis:])
	default:
		n, inner = x.Shape[axis], onnx.NumElements(x.Shape[axis+1:])
	}
	if cap(k.maxes) < inner {
		k.maxes, k.sums = make([]float64, inner), make([]float64, inner)
	}
	maxes, sums := k.maxes[:inner], k.sums[:inner]
	out := k.out.tensor(x.Type, x.Shape)
	switch src := x.Data.(type) {
	case []float32:
		if inner == 1 {
			softmaxRows(k.threads, out.Data.([]float32), src, outer, n, &k.rowsTask)
			break
		}
		softmax(out.Data.([]float32), src, outer, n, inner, maxes, sums)
	case []float64:
		softmax(out.Data.([]float64), src, outer, n, inner, maxes, sums)
	case []onnx.F16, []onnx.BF16:
		in, _ := widenToFloat32(k.wideIn.get(x.Len()), src)
		res := k.wideOut.get(x.Len())
		softmax(res, in, outer, n, inner, maxes, sums)
		if err := narrowFromFloat32(out.Data, res); err != nil {
			return nil, err
		}
	default:
		return nil, network.Unsupportedf("Softmax of %v tensors", x.Type)
	}
	return out, nil
}

// softmaxRows normalizes the rows of n contiguous float32 elements (the
// inner axis, or the whole of each row before version 13) with the vector
// kernel, rows spread over goroutines.
// The parallel path hands task (held by the kernel) to the workers, so
// that the call allocates nothing.
func softmaxRows(threads int, dst, src []float32, rows, n int, task *softmaxRowsTask) {
	chunks := par.Chunks(rows, threads, max(1, par.Grain/8/max(n, 1)))
	*task = softmaxRowsTask{dst: dst, src: src, rows: rows, n: n, chunks: chunks}
	par.Spread(chunks, task)
	*task = softmaxRowsTask{} // hold no tensors between runs
}

// softmaxRowsTask is softmaxRows' work: worker w normalizes chunk w of
// the rows.
type softmaxRowsTask struct {
	dst, src        []float32
	rows, n, chunks int
}

func (t *softmaxRowsTask) Work(w int) {
	n := t.n
	for r := w * t.rows / t.chunks; r < (w+1)*t.rows/t.chunks; r++ {
		vec.Softmax(t.dst[r*n:(r+1)*n], t.src[r*n:(r+1)*n])
	}
}

// softmax normalizes src, seen as [outer, n, inner], along its middle
// dimension: dst = exp(x - max) / sum(exp(x - max)). The loops run over
// inner contiguous elements at a time (maxes and sums hold one entry per
// inner position), so the axis never has to be walked with a stride.
func softmax[T floatElem](dst, src []T, outer, n, inner int, maxes, sums []float64) {
	block := n * inner
	for o := range outer {
		x := src[o*block : (o+1)*block]
		y := dst[o*block : (o+1)*block]
		for i := range maxes {
			maxes[i] = math.Inf(-1)
			sums[i] = 0
		}
		for j := range n {
			row := x[j*inner : (j+1)*inner]
			for i, v := range row {
				maxes[i] = math.Max(maxes[i], float64(v))
			}
		}
		for j := range n {
			row, outRow := x[j*inner:(j+1)*inner], y[j*inner:(j+1)*inner]
			for i, v := range row {
				e := math.Exp(float64(v) - maxes[i])
				sums[i] += e
				outRow[i] = T(e)
			}
		}
		for j := range n {
			outRow := y[j*inner : (j+1)*inner]
			for i := range outRow {
				outRow[i] = T(float64(outRow[i]) / sums[i])
			}
		}
	}
}

// VisitRelu compiles Relu; from version 14 it also takes signed integers.
func (b *builder) VisitRelu(op *ops.Relu) error {
	return b.activation(actRelu, op.In.X, op.Out.Y, op.SinceVersion() >= 14)
}

// VisitSigmoid compiles Sigmoid.
func (b *builder) VisitSigmoid(op *ops.Sigmoid) error {
	return b.activation(actSigmoid, op.In.X, op.Out.Y, false)
}

// VisitTanh compiles Tanh.
func (b *builder) VisitTanh(op *ops.Tanh) error {
	return b.activation(actTanh, op.In.Input, op.Out.Output, false)
}

func (b *builder) activation(fn activation, in, out string, intsAllowed bool) error {
	x, err := b.input(in)
	if err != nil {
		return err
	}
	k := &activationKernel{fn: fn, threads: b.e.threads, intsAllow: intsAllowed}
	return b.emit(unaryTensorKernel(x, b.output(out), k.compute))
}

// VisitSoftmax compiles Softmax with the axis semantics of its version.
func (b *builder) VisitSoftmax(op *ops.Softmax) error {
	x, err := b.input(op.In.Input)
	if err != nil {
		return err
	}
	k := &softmaxKernel{axis: op.Axis, coerceTo2D: op.SinceVersion() < 13, threads: b.e.threads}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Output), k.compute))
}
