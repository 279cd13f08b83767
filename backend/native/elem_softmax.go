package native

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/deep500/deep500-go/backend/native/internal/vec"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// LogSoftmax, Hardmax (both with Softmax's axis semantics: before version
// 13 the input is a 2-D matrix [prod(shape[:axis]), prod(shape[axis:])]
// normalised per row; from 13 along axis alone) and Dropout.

// rowLayout gives the [outer, n, inner] view of a shape for a
// normalisation along axis, or along all dimensions from axis when
// coerceTo2D.
func rowLayout(shape []int, axis int64, coerceTo2D bool) (outer, n, inner int, err error) {
	rank := len(shape)
	if rank == 0 {
		return 1, 1, 1, nil
	}
	a, err := normalizeAxis(axis, rank)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("axis %d is out of range for shape %v", axis, shape)
	}
	outer = onnx.NumElements(shape[:a])
	if coerceTo2D {
		return outer, onnx.NumElements(shape[a:]), 1, nil
	}
	return outer, shape[a], onnx.NumElements(shape[a+1:]), nil
}

// axisKernel is a normalisation along an axis (LogSoftmax, Hardmax).
type axisKernel struct {
	name       string
	axis       int64
	coerceTo2D bool
	hardmax    bool
	out        outputBuffer
	wide       elemWide
	acc        []float64
}

func (k *axisKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	outer, n, inner, err := rowLayout(x.Shape, k.axis, k.coerceTo2D)
	if err != nil {
		return nil, err
	}
	if cap(k.acc) < 2*inner {
		k.acc = make([]float64, 2*inner)
	}
	acc := k.acc[:2*inner]
	out := k.out.tensor(x.Type, x.Shape)
	switch xd := x.Data.(type) {
	case []float32:
		if inner == 1 && !k.hardmax {
			logSoftmaxRows(out.Data.([]float32), xd, outer, n)
			break
		}
		axisRun(k, out.Data.([]float32), xd, outer, n, inner, acc)
	case []float64:
		axisRun(k, out.Data.([]float64), xd, outer, n, inner, acc)
	case []onnx.F16, []onnx.BF16:
		w, wout := k.wide.widen([]*onnx.Tensor{x}, out.Len())
		axisRun(k, wout, w[0], outer, n, inner, acc)
		if err := narrowFromFloat32(out.Data, wout); err != nil {
			return nil, err
		}
	default:
		return nil, elemUnsupported(k.name, x.Type)
	}
	return out, nil
}

func axisRun[T floatElem](k *axisKernel, dst, src []T, outer, n, inner int, acc []float64) {
	if k.hardmax {
		hardmax(dst, src, outer, n, inner)
		return
	}
	logSoftmax(dst, src, outer, n, inner, acc[:inner], acc[inner:])
}

// logSoftmax writes x - max - log(sum(exp(x - max))) along the middle
// dimension of [outer, n, inner].
func logSoftmax[T floatElem](dst, src []T, outer, n, inner int, maxes, sums []float64) {
	block := n * inner
	for o := range outer {
		x, y := src[o*block:(o+1)*block], dst[o*block:(o+1)*block]
		for i := range maxes {
			maxes[i], sums[i] = math.Inf(-1), 0
		}
		for j := range n {
			for i, v := range x[j*inner : (j+1)*inner] {
				maxes[i] = math.Max(maxes[i], float64(v))
			}
		}
		for j := range n {
			for i, v := range x[j*inner : (j+1)*inner] {
				sums[i] += math.Exp(float64(v) - maxes[i])
			}
		}
		for i := range sums {
			sums[i] = maxes[i] + math.Log(sums[i])
		}
		for j := range n {
			row, out := x[j*inner:(j+1)*inner], y[j*inner:(j+1)*inner]
			for i, v := range row {
				out[i] = T(float64(v) - sums[i])
			}
		}
	}
}

// logSoftmaxRows is logSoftmax over rows of n contiguous float32
// elements, with the vector kernel.
func logSoftmaxRows(dst, src []float32, rows, n int) {
	for r := range rows {
		vec.LogSoftmax(dst[r*n:(r+1)*n], src[r*n:(r+1)*n])
	}
}

// hardmax writes 1 at the first maximum along the middle dimension of
// [outer, n, inner] and 0 elsewhere.
func hardmax[T floatElem](dst, src []T, outer, n, inner int) {
	clear(dst[:outer*n*inner])
	block := n * inner
	for o := range outer {
		x, y := src[o*block:(o+1)*block], dst[o*block:(o+1)*block]
		for i := range inner {
			best := 0
			for j := 1; j < n; j++ {
				if x[j*inner+i] > x[best*inner+i] {
					best = j
				}
			}
			if n > 0 {
				y[best*inner+i] = 1
			}
		}
	}
}

// VisitLogSoftmax compiles LogSoftmax.
func (b *builder) VisitLogSoftmax(op *ops.LogSoftmax) error {
	x, err := b.input(op.In.Input)
	if err != nil {
		return err
	}
	k := &axisKernel{name: "LogSoftmax", axis: op.Axis, coerceTo2D: op.SinceVersion() < 13}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Output), k.compute))
}

// VisitHardmax compiles Hardmax.
func (b *builder) VisitHardmax(op *ops.Hardmax) error {
	x, err := b.input(op.In.Input)
	if err != nil {
		return err
	}
	k := &axisKernel{name: "Hardmax", axis: op.Axis, coerceTo2D: op.SinceVersion() < 13, hardmax: true}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Output), k.compute))
}

// ---- Dropout ----

// dropoutKernel passes its input through (inference) or zeroes each
// element with probability ratio and scales the rest by 1/(1-ratio)
// (training). The mask is boolean from version 10 and of the input's type
// before.
type dropoutKernel struct {
	boolMask bool
	rng      *rand.Rand
	out      outputBuffer
	mask     outputBuffer
	wide     elemWide
	// For the gradient rule (grad_elem_softmax.go): the training mask,
	// reused between runs, and what the last run multiplied each element
	// by (0 or 1/(1-ratio), float64); lastFactor is nil when the last run
	// passed its input through.
	keep       []bool
	factor     outputBuffer
	lastFactor *onnx.Tensor
}

// dropoutFactorName names the hidden slot where a Dropout node leaves its
// lastFactor for the gradient rule; the NUL keeps it apart from every
// name a graph can use.
func dropoutFactorName(output string) string { return output + "\x00dropout_factor" }

// compute returns the output and, when wantMask, the mask.
func (k *dropoutKernel) compute(x *onnx.Tensor, ratio float64, training, wantMask bool) (*onnx.Tensor, *onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, nil, err
	}
	if training && (ratio < 0 || ratio > 1 || math.IsNaN(ratio)) {
		return nil, nil, fmt.Errorf("Dropout ratio %v is outside [0, 1]", ratio)
	}
	n := x.Len()
	k.lastFactor = nil
	var keep []bool
	if training && ratio > 0 {
		if cap(k.keep) < n {
			k.keep = make([]bool, n)
		}
		keep = k.keep[:n]
		for i := range keep {
			keep[i] = k.rng.Float64() >= ratio
		}
	}
	out := k.out.tensor(x.Type, x.Shape)
	if len(keep) == 0 {
		onnx.CopySlice(out.Data, x.Data)
	} else {
		scale := 0.0
		if ratio < 1 {
			scale = 1 / (1 - ratio)
		}
		switch xd := x.Data.(type) {
		case []float32:
			dropoutApply(out.Data.([]float32), xd, keep, scale)
		case []float64:
			dropoutApply(out.Data.([]float64), xd, keep, scale)
		case []onnx.F16, []onnx.BF16:
			w, wout := k.wide.widen([]*onnx.Tensor{x}, n)
			dropoutApply(wout, w[0], keep, scale)
			if err := narrowFromFloat32(out.Data, wout); err != nil {
				return nil, nil, err
			}
		default:
			return nil, nil, elemUnsupported("Dropout", x.Type)
		}
		f := k.factor.tensor(onnx.Double, x.Shape)
		fd := f.Float64s()
		for i, kept := range keep {
			fd[i] = 0
			if kept {
				fd[i] = scale
			}
		}
		k.lastFactor = f
	}
	if !wantMask {
		return out, nil, nil
	}
	if k.boolMask {
		m := k.mask.tensor(onnx.Bool, x.Shape)
		md := m.Data.([]bool)
		for i := range md {
			md[i] = len(keep) == 0 || keep[i]
		}
		return out, m, nil
	}
	ones := make([]float64, n)
	for i := range ones {
		if len(keep) == 0 || keep[i] {
			ones[i] = 1
		}
	}
	m, err := tensorFromFloat64s(x.Type, x.Shape, ones)
	if err != nil {
		return nil, nil, err
	}
	return out, m, nil
}

func dropoutApply[T floatElem](dst, src []T, keep []bool, scale float64) {
	for i, v := range src {
		if keep[i] {
			dst[i] = T(float64(v) * scale)
		} else {
			dst[i] = 0
		}
	}
}

// VisitDropout compiles Dropout. Before version 7 the is_test attribute
// chooses inference (nonzero) or training; versions 7 to 10 always infer;
// from version 12 the optional training_mode input (default false) and
// ratio input (default 0.5) decide, and seed makes the mask reproducible.
func (b *builder) VisitDropout(op *ops.Dropout) error {
	since := op.SinceVersion()
	x, err := b.input(op.In.Data)
	if err != nil {
		return err
	}
	var ratioRef, trainRef valueRef = valueRef{slot: -1}, valueRef{slot: -1}
	if since >= 12 {
		if ratioRef, err = b.optionalInput(op.In.Ratio); err != nil {
			return err
		}
		if trainRef, err = b.optionalInput(op.In.TrainingMode); err != nil {
			return err
		}
	}
	out, mask := b.output(op.Out.Output), b.output(op.Out.Mask)
	factor := valueRef{slot: -1}
	if !b.probing && op.Out.Output != "" {
		factor = b.output(dropoutFactorName(op.Out.Output))
	}
	var seed uint64
	if op.Seed != nil {
		seed = uint64(*op.Seed)
	} else {
		seed = rand.Uint64()
	}
	k := &dropoutKernel{boolMask: since >= 10, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		ratio := float64(op.Ratio)
		training := since < 7 && op.IsTest == 0
		if since >= 12 {
			ratio = 0.5
			rt, err := ratioRef.optionalTensor(slots)
			if err != nil {
				return err
			}
			if rt != nil {
				v, err := float64sOf(rt)
				if err != nil {
					return err
				}
				if len(v) != 1 {
					return fmt.Errorf("ratio must be a scalar, got shape %v", rt.Shape)
				}
				ratio = v[0]
			}
			tt, err := trainRef.optionalTensor(slots)
			if err != nil {
				return err
			}
			if tt != nil {
				v, ok := tt.Data.([]bool)
				if !ok || len(v) != 1 {
					return network.Unsupportedf("training_mode of type %v and shape %v (want a boolean scalar)", tt.Type, tt.Shape)
				}
				training = v[0]
			}
		}
		o, m, err := k.compute(t, ratio, training, mask.present())
		if err != nil {
			return err
		}
		out.set(slots, o)
		if m != nil {
			mask.set(slots, m)
		}
		if k.lastFactor != nil {
			factor.set(slots, k.lastFactor)
		} else {
			factor.set(slots, nil)
		}
		return nil
	})
}
