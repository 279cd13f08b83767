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

// globalPoolKernel reduces every (image, channel) plane of X [N, C, D...]
// to one value: Y [N, C, 1, ...].
type globalPoolKernel struct {
	mode    poolMode
	p       int64
	threads int
	out     outputBuffer
	shape   []int // the output shape, kept for its storage
	wideX   float32Scratch
	wideY   float32Scratch
	task    any // the parallel path's globalPoolTask, kept between runs
}

func (k *globalPoolKernel) name() string { return "Global" + k.mode.String() }

func (k *globalPoolKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	if len(x.Shape) < 2 {
		return nil, fmt.Errorf("input X has shape %v; want [N, C, D1, ...]", x.Shape)
	}
	shape := append(k.shape[:0], x.Shape[0], x.Shape[1])
	for range len(x.Shape) - 2 {
		shape = append(shape, 1)
	}
	k.shape = shape
	planes := x.Shape[0] * x.Shape[1]
	inner := onnx.NumElements(x.Shape[2:])
	out := k.out.tensor(x.Type, shape)
	switch xd := x.Data.(type) {
	case []float32:
		globalPool(k, out.Data.([]float32), xd, planes, inner)
	case []float64:
		globalPool(k, out.Data.([]float64), xd, planes, inner)
	case []onnx.F16, []onnx.BF16:
		wx, _ := widenToFloat32(k.wideX.get(x.Len()), x.Data)
		wy := k.wideY.get(out.Len())
		globalPool(k, wy, wx, planes, inner)
		if err := narrowFromFloat32(out.Data, wy); err != nil {
			return nil, err
		}
	default:
		return nil, network.Unsupportedf("%s of %v tensors", k.name(), x.Type)
	}
	return out, nil
}

func globalPool[T floatElem](k *globalPoolKernel, y, x []T, planes, inner int) {
	chunks := par.Chunks(planes, k.threads, max(1, par.TaskGrain/max(inner, 1)))
	if chunks == 1 {
		globalPoolRange(k, y, x, inner, 0, planes)
		return
	}
	t := taskOf[globalPoolTask[T]](&k.task)
	*t = globalPoolTask[T]{k: k, y: y, x: x, planes: planes, inner: inner, chunks: chunks}
	par.Spread(chunks, t)
	*t = globalPoolTask[T]{} // hold no tensors between runs
}

// globalPoolTask is globalPool's parallel work: worker w reduces the w-th
// of chunks runs of planes.
type globalPoolTask[T floatElem] struct {
	k                     *globalPoolKernel
	y, x                  []T
	planes, inner, chunks int
}

func (t *globalPoolTask[T]) Work(w int) {
	globalPoolRange(t.k, t.y, t.x, t.inner, w*t.planes/t.chunks, (w+1)*t.planes/t.chunks)
}

// globalPoolRange reduces planes [lo, hi).
func globalPoolRange[T floatElem](k *globalPoolKernel, y, x []T, inner, lo, hi int) {
	p := float64(k.p)
	for pl := lo; pl < hi; pl++ {
		src := x[pl*inner : (pl+1)*inner]
		switch k.mode {
		case poolMax:
			if len(src) == 0 {
				y[pl] = T(math.Inf(-1))
				continue
			}
			m := src[0]
			for _, v := range src[1:] {
				if v > m || v != v {
					m = v
				}
			}
			y[pl] = m
		case poolAvg:
			if src32, ok := any(src).([]float32); ok {
				// In vector lanes: the float64 loop below is bound
				// by the latency of its one chain of additions.
				y[pl] = T(vec.Sum(src32) / float32(len(src)))
				continue
			}
			var s float64
			for _, v := range src {
				s += float64(v)
			}
			y[pl] = T(s / float64(len(src)))
		case poolLp:
			var s float64
			switch p {
			case 1:
				for _, v := range src {
					s += math.Abs(float64(v))
				}
			case 2:
				for _, v := range src {
					s += float64(v) * float64(v)
				}
				s = math.Sqrt(s)
			default:
				for _, v := range src {
					s += math.Pow(math.Abs(float64(v)), p)
				}
				s = math.Pow(s, 1/p)
			}
			y[pl] = T(s)
		}
	}
}

func (b *builder) globalPool(k *globalPoolKernel, in, out string) error {
	x, err := b.input(in)
	if err != nil {
		return err
	}
	k.threads = b.e.threads
	return b.emit(unaryTensorKernel(x, b.output(out), k.compute))
}

// VisitGlobalAveragePool compiles GlobalAveragePool (every version).
func (b *builder) VisitGlobalAveragePool(op *ops.GlobalAveragePool) error {
	return b.globalPool(&globalPoolKernel{mode: poolAvg}, op.In.X, op.Out.Y)
}

// VisitGlobalMaxPool compiles GlobalMaxPool (every version).
func (b *builder) VisitGlobalMaxPool(op *ops.GlobalMaxPool) error {
	return b.globalPool(&globalPoolKernel{mode: poolMax}, op.In.X, op.Out.Y)
}

// VisitGlobalLpPool compiles GlobalLpPool; p was a float before version 2.
func (b *builder) VisitGlobalLpPool(op *ops.GlobalLpPool) error {
	if op.P < 1 {
		return network.Unsupportedf("GlobalLpPool with p = %d", op.P)
	}
	return b.globalPool(&globalPoolKernel{mode: poolLp, p: op.P}, op.In.X, op.Out.Y)
}
