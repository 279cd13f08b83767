package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// LayerNormalization, RMSNormalization, InstanceNormalization and
// GroupNormalization all normalize rows of a tensor seen as [rows, inner]
// and then apply a per-feature affine map. They differ only in what a row
// is and which feature an element belongs to; normAffine describes the
// latter: element e (flat index) uses scale[(e/div) % len(scale)].

// normAffine is the affine map after normalization; bias may be nil.
type normAffine struct {
	scale, bias []float64
	div         int
}

// normRowsSpec is one normalization call.
type normRowsSpec struct {
	rows, inner int
	eps         float64
	rms         bool // RMSNormalization: no mean subtraction
	aff         normAffine
	// means and invStd receive each row's statistics when not nil.
	means, invStd []float64
	// scale32 and bias32, when set (LayerNormalization of float32 data),
	// are the affine map as float32 vectors of one row's length: the rows
	// then run the vector kernel (layerNormRows32).
	scale32, bias32 []float32
}

// normRows normalizes x into y, rows spread over goroutines. The
// statistics are computed in float64 (two passes: mean, then variance).
func normRows[T floatElem](y, x []T, sp *normRowsSpec, threads int) {
	if sp.scale32 != nil {
		if y32, ok := any(y).([]float32); ok {
			layerNormRows32(y32, any(x).([]float32), sp, threads)
			return
		}
	}
	minRows := max(1, par.Grain/max(sp.inner, 1))
	if par.Chunks(sp.rows, threads, minRows) == 1 {
		normRowRange(y, x, sp, 0, sp.rows) // no closure for For to allocate
		return
	}
	par.For(sp.rows, threads, minRows, func(lo, hi int) { normRowRange(y, x, sp, lo, hi) })
}

// normRowRange normalizes rows [lo, hi).
func normRowRange[T floatElem](y, x []T, sp *normRowsSpec, lo, hi int) {
	inner := sp.inner
	sc, bs, div := sp.aff.scale, sp.aff.bias, max(sp.aff.div, 1)
	nf := len(sc)
	for r := lo; r < hi; r++ {
		src, dst := x[r*inner:(r+1)*inner], y[r*inner:(r+1)*inner]
		var mean float64
		if !sp.rms {
			for _, v := range src {
				mean += float64(v)
			}
			mean /= float64(inner)
		}
		var q float64
		for _, v := range src {
			d := float64(v) - mean
			q += d * d
		}
		inv := 1 / math.Sqrt(q/float64(inner)+sp.eps)
		if sp.means != nil {
			sp.means[r] = mean
		}
		if sp.invStd != nil {
			sp.invStd[r] = inv
		}
		// Walk the row in runs that share one feature.
		for i := 0; i < inner; {
			flat := r*inner + i
			f := (flat / div) % nf
			run := min(div-flat%div, inner-i)
			a := sc[f] * inv
			b := -mean * a
			if bs != nil {
				b += bs[f]
			}
			for j := i; j < i+run; j++ {
				dst[j] = T(float64(src[j])*a + b)
			}
			i += run
		}
	}
}

// normKernel runs normRows on a tensor of any float type.
type normKernel struct {
	name         string
	threads      int
	out          outputBuffer
	wideX, wideY float32Scratch
}

func (k *normKernel) run(x *onnx.Tensor, sp *normRowsSpec) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	out := k.out.tensor(x.Type, x.Shape)
	if x.Len() == 0 {
		return out, nil
	}
	switch xd := x.Data.(type) {
	case []float32:
		normRows(out.Data.([]float32), xd, sp, k.threads)
	case []float64:
		normRows(out.Data.([]float64), xd, sp, k.threads)
	case []onnx.F16, []onnx.BF16:
		wx, _ := widenToFloat32(k.wideX.get(x.Len()), x.Data)
		wy := k.wideY.get(out.Len())
		normRows(wy, wx, sp, k.threads)
		if err := narrowFromFloat32(out.Data, wy); err != nil {
			return nil, err
		}
	default:
		return nil, network.Unsupportedf("%s of %v tensors", k.name, x.Type)
	}
	return out, nil
}

// normParam reads a scale or bias tensor as float64 values broadcast
// (numpy rules, one way) to shape target. The values are read into *buf
// (grown when short; nil: a new slice), which a kernel keeps so that a
// parameter of target's shape costs no allocation.
func normParam(name string, t *onnx.Tensor, target []int, buf *[]float64) ([]float64, error) {
	var v []float64
	if buf == nil {
		v = make([]float64, t.Len())
	} else {
		if cap(*buf) < t.Len() {
			*buf = make([]float64, t.Len())
		}
		v = (*buf)[:t.Len()]
	}
	if !float64sInto(v, t.Data) {
		return nil, fmt.Errorf("%s: %w", name, network.Unsupportedf("tensor(%v) as real numbers", t.Type))
	}
	if slices.Equal(t.Shape, target) || (t.Len() == onnx.NumElements(target) && len(t.Shape) <= 1) {
		return v, nil
	}
	bs, err := broadcastShapes(t.Shape, target)
	if err != nil || !slices.Equal(bs, target) {
		return nil, fmt.Errorf("%s has shape %v, which does not broadcast to %v", name, t.Shape, target)
	}
	out := make([]float64, onnx.NumElements(target))
	strides := broadcastStrides(t.Shape, target)
	idx := make([]int, len(target))
	for i := range out {
		off := 0
		for d, s := range strides {
			off += idx[d] * s
		}
		out[i] = v[off]
		for d := len(target) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < target[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out, nil
}

// statsTensor stores per-row statistics into a reusable tensor of a float
// type.
func statsTensor(buf *outputBuffer, typ onnx.DataType, shape []int, vals []float64) (*onnx.Tensor, error) {
	t := buf.tensor(typ, shape)
	if !storeFloat64s(t, vals) {
		return nil, network.Unsupportedf("statistics of type %v", typ)
	}
	return t, nil
}

// stashType maps a stash_type attribute to the element type of the
// statistics outputs.
func stashType(op string, v int64) (onnx.DataType, error) {
	switch dt := onnx.DataType(v); dt {
	case onnx.Float, onnx.Double, onnx.Float16, onnx.BFloat16:
		return dt, nil
	}
	return 0, network.Unsupportedf("%s stash_type %d", op, v)
}
