package native

import (
	"fmt"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// cumSumKernel computes CumSum (and, with prod set, CumProd): running sums
// (products) along one axis, seen as [outer, n, inner] and computed a row of
// inner elements at a time. exclusive leaves each element out of its own
// sum; reverse sums from the end. Float16 and bfloat16 are summed in float32.
type cumSumKernel struct {
	exclusive, reverse bool
	prod               bool // CumProd: running products
	out                outputBuffer
	wideIn, wideOut    float32Scratch
}

func (k *cumSumKernel) compute(x, axisT *onnx.Tensor) (*onnx.Tensor, error) {
	op := "CumSum"
	if k.prod {
		op = "CumProd"
	}
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	if axisT.Len() != 1 || len(axisT.Shape) > 1 {
		return nil, fmt.Errorf("%s: axis must be a scalar, got shape %v", op, axisT.Shape)
	}
	if axisT.Type != onnx.Int32 && axisT.Type != onnx.Int64 {
		return nil, fmt.Errorf("%s: axis must be int32 or int64, got %v", op, axisT.Type)
	}
	av, err := intsOf(axisT)
	if err != nil {
		return nil, err
	}
	if len(x.Shape) == 0 {
		return nil, fmt.Errorf("%s: input must have rank 1 or more", op)
	}
	axis, err := normalizeAxis(av[0], len(x.Shape))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	outer, n, inner := onnx.NumElements(x.Shape[:axis]), x.Shape[axis], onnx.NumElements(x.Shape[axis+1:])
	out := k.out.tensor(x.Type, x.Shape)
	switch src := x.Data.(type) {
	case []float32:
		cumScan(out.Data.([]float32), src, outer, n, inner, k.exclusive, k.reverse, k.prod)
	case []float64:
		cumScan(out.Data.([]float64), src, outer, n, inner, k.exclusive, k.reverse, k.prod)
	case []int32:
		cumScan(out.Data.([]int32), src, outer, n, inner, k.exclusive, k.reverse, k.prod)
	case []int64:
		cumScan(out.Data.([]int64), src, outer, n, inner, k.exclusive, k.reverse, k.prod)
	case []uint32:
		cumScan(out.Data.([]uint32), src, outer, n, inner, k.exclusive, k.reverse, k.prod)
	case []uint64:
		cumScan(out.Data.([]uint64), src, outer, n, inner, k.exclusive, k.reverse, k.prod)
	case []int8:
		cumScan(out.Data.([]int8), src, outer, n, inner, k.exclusive, k.reverse, k.prod)
	case []int16:
		cumScan(out.Data.([]int16), src, outer, n, inner, k.exclusive, k.reverse, k.prod)
	case []uint8:
		cumScan(out.Data.([]uint8), src, outer, n, inner, k.exclusive, k.reverse, k.prod)
	case []uint16:
		cumScan(out.Data.([]uint16), src, outer, n, inner, k.exclusive, k.reverse, k.prod)
	case []onnx.F16, []onnx.BF16:
		in, _ := widenToFloat32(k.wideIn.get(x.Len()), src)
		res := k.wideOut.get(x.Len())
		cumScan(res, in, outer, n, inner, k.exclusive, k.reverse, k.prod)
		if err := narrowFromFloat32(out.Data, res); err != nil {
			return nil, err
		}
	default:
		return nil, network.Unsupportedf("%s of %v tensors", op, x.Type)
	}
	return out, nil
}

// cumScan writes the running sums (products when prod is set) of src, seen
// as [outer, n, inner], along its middle dimension into dst.
func cumScan[T numeric](dst, src []T, outer, n, inner int, exclusive, reverse, prod bool) {
	for o := range outer {
		base := o * n * inner
		prev := -1 // the row whose sum continues, -1 for none
		for step := range n {
			j := step
			if reverse {
				j = n - 1 - step
			}
			d := dst[base+j*inner : base+(j+1)*inner]
			s := src[base+j*inner : base+(j+1)*inner]
			switch {
			case exclusive && prev < 0 && prod:
				for i := range d {
					d[i] = 1
				}
			case exclusive && prev < 0:
				clear(d)
			case exclusive:
				p := dst[base+prev*inner : base+(prev+1)*inner]
				ps := src[base+prev*inner : base+(prev+1)*inner]
				cumCombine(d, p, ps, prod)
			case prev < 0:
				copy(d, s)
			default:
				p := dst[base+prev*inner : base+(prev+1)*inner]
				cumCombine(d, p, s, prod)
			}
			prev = j
		}
	}
}

// cumCombine sets d to a+b, or a*b when prod is set.
func cumCombine[T numeric](d, a, b []T, prod bool) {
	if prod {
		for i := range d {
			d[i] = a[i] * b[i]
		}
		return
	}
	for i := range d {
		d[i] = a[i] + b[i]
	}
}

// VisitCumSum compiles CumSum (float16 and bfloat16 from version 14).
func (b *builder) VisitCumSum(op *ops.CumSum) error {
	return b.cumScan(op.In.X, op.In.Axis, op.Out.Y, op.Exclusive, op.Reverse, false)
}

// VisitCumProd compiles CumProd (version 26): CumSum's kernel with
// products.
func (b *builder) VisitCumProd(op *ops.CumProd) error {
	return b.cumScan(op.In.X, op.In.Axis, op.Out.Y, op.Exclusive, op.Reverse, true)
}

// cumScan compiles CumSum, or CumProd when prod is set: the two share their
// inputs, attributes and kernel.
func (b *builder) cumScan(xName, axisName, yName string, exclusive, reverse int64, prod bool) error {
	x, err := b.input(xName)
	if err != nil {
		return err
	}
	ax, err := b.input(axisName)
	if err != nil {
		return err
	}
	if exclusive != 0 && exclusive != 1 {
		return fmt.Errorf("exclusive must be 0 or 1, got %d", exclusive)
	}
	if reverse != 0 && reverse != 1 {
		return fmt.Errorf("reverse must be 0 or 1, got %d", reverse)
	}
	k := &cumSumKernel{exclusive: exclusive == 1, reverse: reverse == 1, prod: prod}
	return b.emit(binaryTensorKernel(x, ax, b.output(yName), k.compute))
}
