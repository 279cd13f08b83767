package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// lrnKernel computes LRN over X [N, C, D...]:
//
//	y = x / (bias + alpha/size * sum of x^2 over the channel window)^beta
//
// where the window of channel c is [c - floor((size-1)/2), c + ceil((size-1)/2)].
type lrnKernel struct {
	alpha, beta, bias float64
	size              int
	threads           int
	out               outputBuffer
	wideX, wideY      float32Scratch
}

func (k *lrnKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	if len(x.Shape) < 2 {
		return nil, fmt.Errorf("input X has shape %v; want [N, C, ...]", x.Shape)
	}
	n, c, inner := x.Shape[0], x.Shape[1], onnx.NumElements(x.Shape[2:])
	out := k.out.tensor(x.Type, x.Shape)
	switch xd := x.Data.(type) {
	case []float32:
		lrn(k, out.Data.([]float32), xd, n, c, inner)
	case []float64:
		lrn(k, out.Data.([]float64), xd, n, c, inner)
	case []onnx.F16, []onnx.BF16:
		wx, _ := widenToFloat32(k.wideX.get(x.Len()), x.Data)
		wy := k.wideY.get(out.Len())
		lrn(k, wy, wx, n, c, inner)
		if err := narrowFromFloat32(out.Data, wy); err != nil {
			return nil, err
		}
	default:
		return nil, network.Unsupportedf("LRN of %v tensors", x.Type)
	}
	return out, nil
}

func lrn[T floatElem](k *lrnKernel, y, x []T, n, c, inner int) {
	before, after := (k.size-1)/2, k.size-1-(k.size-1)/2
	coef := k.alpha / float64(k.size)
	par.For(n*c, k.threads, max(1, par.Grain/max(inner*k.size, 1)), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			img, ch := p/c, p%c
			c0, c1 := max(0, ch-before), min(c-1, ch+after)
			for i := range inner {
				var sq float64
				for cc := c0; cc <= c1; cc++ {
					v := float64(x[(img*c+cc)*inner+i])
					sq += v * v
				}
				idx := p*inner + i
				y[idx] = T(float64(x[idx]) / math.Pow(k.bias+coef*sq, k.beta))
			}
		}
	})
}

// VisitLRN compiles LRN (versions 1 and 13).
func (b *builder) VisitLRN(op *ops.LRN) error {
	if op.Size < 1 || op.Size > convMaxElements {
		return fmt.Errorf("LRN: size %d must be positive", op.Size)
	}
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &lrnKernel{alpha: float64(op.Alpha), beta: float64(op.Beta), bias: float64(op.Bias), size: int(op.Size), threads: b.e.threads}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// mvnKernel computes MeanVarianceNormalization: (x - mean) / (std + 1e-9)
// with mean and (population) standard deviation over the given axes, as
// the operator's function body defines it.
type mvnKernel struct {
	axes []int64
}

func (k *mvnKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	switch x.Type {
	case onnx.Float, onnx.Double, onnx.Float16, onnx.BFloat16:
	default:
		return nil, network.Unsupportedf("MeanVarianceNormalization of %v tensors", x.Type)
	}
	rank := len(x.Shape)
	axes, err := normalizeAxes(k.axes, rank)
	if err != nil {
		return nil, err
	}
	reduced := make([]bool, rank)
	for _, a := range axes {
		reduced[a] = true
	}
	// Strides of each input dimension into the array of kept positions.
	keptShape := make([]int, rank)
	for d := range rank {
		keptShape[d] = x.Shape[d]
		if reduced[d] {
			keptShape[d] = 1
		}
	}
	kStrides := rowMajorStrides(keptShape)
	for d := range rank {
		if reduced[d] {
			kStrides[d] = 0
		}
	}
	xs, err := float64sOf(x)
	if err != nil {
		return nil, err
	}
	nk := onnx.NumElements(keptShape)
	sum, sq := make([]float64, nk), make([]float64, nk)
	keyOf := make([]int, len(xs))
	idx := make([]int, rank)
	for i, v := range xs {
		key := 0
		for d, s := range kStrides {
			key += idx[d] * s
		}
		keyOf[i] = key
		sum[key] += v
		sq[key] += v * v
		for d := rank - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < x.Shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	cnt := float64(len(xs)) / float64(max(nk, 1))
	for j := range sum {
		sum[j] /= cnt
		sq[j] = math.Sqrt(math.Max(sq[j]/cnt-sum[j]*sum[j], 0)) + 1e-9
	}
	for i, v := range xs {
		xs[i] = (v - sum[keyOf[i]]) / sq[keyOf[i]]
	}
	return tensorFromFloat64s(x.Type, x.Shape, xs)
}

// VisitMeanVarianceNormalization compiles MeanVarianceNormalization
// (versions 9 and 13).
func (b *builder) VisitMeanVarianceNormalization(op *ops.MeanVarianceNormalization) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &mvnKernel{axes: append([]int64{}, op.Axes...)}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// lpNormKernel computes LpNormalization (versions 1 and 22,
// https://onnx.ai/onnx/operators/onnx__LpNormalization.html): x divided by
// its L1 or L2 norm along axis. A vector whose norm is 0 stays 0.
type lpNormKernel struct {
	axis int64
	p    int64
	wx   []float64
	res  []float64
	out  outputBuffer
}

func (k *lpNormKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	switch x.Type {
	case onnx.Float, onnx.Double, onnx.Float16, onnx.BFloat16:
	default:
		return nil, network.Unsupportedf("LpNormalization of %v tensors", x.Type)
	}
	rank := max(len(x.Shape), 1)
	ax, err := normalizeAxis(k.axis, rank)
	if err != nil {
		return nil, err
	}
	shape := x.Shape
	if len(shape) == 0 {
		shape = []int{1}
	}
	outer, n, inner := onnx.NumElements(shape[:ax]), shape[ax], onnx.NumElements(shape[ax+1:])
	xd, err := float64Data(x, &k.wx)
	if err != nil {
		return nil, err
	}
	if cap(k.res) < len(xd) {
		k.res = make([]float64, len(xd))
	}
	res := k.res[:len(xd)]
	for o := range outer {
		for i := range inner {
			base := o*n*inner + i
			norm := 0.0
			for j := range n {
				v := xd[base+j*inner]
				if k.p == 1 {
					norm += math.Abs(v)
				} else {
					norm += v * v
				}
			}
			if k.p == 2 {
				norm = math.Sqrt(norm)
			}
			for j := range n {
				if norm == 0 {
					res[base+j*inner] = 0
				} else {
					res[base+j*inner] = xd[base+j*inner] / norm
				}
			}
		}
	}
	o := k.out.tensor(x.Type, x.Shape)
	storeFloat64s(o, res)
	return o, nil
}

// VisitLpNormalization compiles LpNormalization.
func (b *builder) VisitLpNormalization(op *ops.LpNormalization) error {
	x, err := b.input(op.In.Input)
	if err != nil {
		return err
	}
	if op.P != 1 && op.P != 2 {
		return fmt.Errorf("p %d is not 1 or 2", op.P)
	}
	k := &lpNormKernel{axis: op.Axis, p: op.P}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Output), func(t *onnx.Tensor) (*onnx.Tensor, error) {
		if t.Type == onnx.BFloat16 && op.SinceVersion() < 22 {
			return nil, network.Unsupportedf("LpNormalization of bfloat16 before version 22")
		}
		return k.compute(t)
	}))
}
