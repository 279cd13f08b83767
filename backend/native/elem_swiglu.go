package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// https://onnx.ai/onnx/operators/onnx__SwiGLU.html

// swigluKernel computes SwiGLU: Y = A * sigmoid(alpha*A) * B for A and B of
// the same shape (no broadcasting). Float16 and bfloat16 are computed in
// float32 and rounded once.
type swigluKernel struct {
	alpha   float64
	threads int
	out     outputBuffer
	wa, wb  float32Scratch
	wy      float32Scratch
}

func (k *swigluKernel) compute(a, b *onnx.Tensor) (*onnx.Tensor, error) {
	if a.Type != b.Type {
		return nil, fmt.Errorf("SwiGLU: A is %v but B is %v", a.Type, b.Type)
	}
	if !slices.Equal(a.Shape, b.Shape) {
		return nil, fmt.Errorf("SwiGLU: A has shape %v but B has shape %v; they must be equal", a.Shape, b.Shape)
	}
	out := k.out.tensor(a.Type, a.Shape)
	switch ad := a.Data.(type) {
	case []float32:
		swiGLU(out.Data.([]float32), ad, b.Data.([]float32), k.alpha, k.threads)
	case []float64:
		swiGLU(out.Data.([]float64), ad, b.Data.([]float64), k.alpha, k.threads)
	case []onnx.F16, []onnx.BF16:
		n := a.Len()
		wa, _ := widenToFloat32(k.wa.get(n), a.Data)
		wb, _ := widenToFloat32(k.wb.get(n), b.Data)
		wy := k.wy.get(n)
		swiGLU(wy, wa, wb, k.alpha, k.threads)
		if err := narrowFromFloat32(out.Data, wy); err != nil {
			return nil, err
		}
	default:
		return nil, network.Unsupportedf("SwiGLU of %v tensors", a.Type)
	}
	return out, nil
}

// swiGLU writes A * sigmoid(alpha*A) * B elementwise into dst.
func swiGLU[T floatElem](dst, a, b []T, alpha float64, threads int) {
	par.For(len(dst), threads, par.Grain/8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := float64(a[i])
			dst[i] = T(x * sigmoid(alpha*x) * float64(b[i]))
		}
	})
}

// VisitSwiGLU compiles SwiGLU (version 28).
func (b *builder) VisitSwiGLU(op *ops.SwiGLU) error {
	a, err := b.input(op.In.A)
	if err != nil {
		return err
	}
	bb, err := b.input(op.In.B)
	if err != nil {
		return err
	}
	y := b.output(op.Out.Y)
	k := &swigluKernel{alpha: float64(op.Alpha), threads: b.e.threads}
	return b.emit(func(slots []onnx.Value) error {
		at, err := a.tensor(slots)
		if err != nil {
			return err
		}
		bt, err := bb.tensor(slots)
		if err != nil {
			return err
		}
		res, err := k.compute(at, bt)
		if err != nil {
			return err
		}
		y.set(slots, res)
		return nil
	})
}
