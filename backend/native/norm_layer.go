package native

import (
	"fmt"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/backend/native/internal/vec"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// layerNormKernel computes LayerNormalization (or, with rms set,
// RMSNormalization): X is seen as [prod(shape[:axis]), prod(shape[axis:])]
// and each row is normalized, then scaled (and shifted) by Scale and B
// broadcast to shape[axis:]. Mean and InvStdDev have X's shape with the
// normalized dimensions set to 1, in the stash type.
type layerNormKernel struct {
	normKernel
	axis      int64
	eps       float64
	rms       bool
	statType  onnx.DataType
	meanBuf   outputBuffer
	invBuf    outputBuffer
	means     []float64
	invStd    []float64
	wantStats bool
	// scale32 and bias32 hold Scale and B as float32 for the vector rows.
	scale32, bias32 []float32
	// scale64 and bias64 hold Scale and B as float64 (normParam); spec
	// is the call's description, which the parallel rows share.
	scale64, bias64 []float64
	spec            normRowsSpec
}

func (k *layerNormKernel) compute(x, scale, bias *onnx.Tensor) (y, mean, inv *onnx.Tensor, err error) {
	rank := len(x.Shape)
	axis, err := normalizeAxis(k.axis, rank)
	if err != nil {
		return nil, nil, nil, err
	}
	target := x.Shape[axis:]
	sp := &k.spec
	*sp = normRowsSpec{rows: onnx.NumElements(x.Shape[:axis]), inner: onnx.NumElements(target), eps: k.eps, rms: k.rms}
	defer func() { *sp = normRowsSpec{} }() // hold no slices of tensors between runs
	if sp.aff.scale, err = normParam("Scale", scale, target, &k.scale64); err != nil {
		return nil, nil, nil, err
	}
	if bias != nil {
		if sp.aff.bias, err = normParam("B", bias, target, &k.bias64); err != nil {
			return nil, nil, nil, err
		}
	}
	if len(sp.aff.scale) == 0 {
		sp.aff.scale = append(k.scale64[:0], 1) // empty rows: never read
	}
	sp.aff.div = 1
	if k.wantStats {
		if cap(k.means) < sp.rows {
			k.means, k.invStd = make([]float64, sp.rows), make([]float64, sp.rows)
		}
		sp.means, sp.invStd = k.means[:sp.rows], k.invStd[:sp.rows]
	}
	if x.Type == onnx.Float && !k.rms && sp.inner > 0 {
		k.scale32 = float32Params(k.scale32, sp.aff.scale)
		if sp.aff.bias != nil {
			k.bias32 = float32Params(k.bias32, sp.aff.bias)
		} else {
			if cap(k.bias32) < sp.inner {
				k.bias32 = make([]float32, sp.inner)
			}
			k.bias32 = k.bias32[:sp.inner]
			clear(k.bias32) // no B: a zero shift
		}
		sp.scale32, sp.bias32 = k.scale32, k.bias32
	}
	if y, err = k.run(x, sp); err != nil {
		return nil, nil, nil, err
	}
	if k.wantStats {
		shape := make([]int, rank)
		for i := range shape {
			if i < axis {
				shape[i] = x.Shape[i]
			} else {
				shape[i] = 1
			}
		}
		if mean, err = statsTensor(&k.meanBuf, k.statType, shape, sp.means); err != nil {
			return nil, nil, nil, err
		}
		if inv, err = statsTensor(&k.invBuf, k.statType, shape, sp.invStd); err != nil {
			return nil, nil, nil, err
		}
	}
	return y, mean, inv, nil
}

// float32Params converts the float64 affine parameters to float32 into
// buf, grown to len(v) when short.
func float32Params(buf []float32, v []float64) []float32 {
	if cap(buf) < len(v) {
		buf = make([]float32, len(v))
	}
	buf = buf[:len(v)]
	for i, p := range v {
		buf[i] = float32(p)
	}
	return buf
}

// layerNormRows32 is normRows for LayerNormalization of float32 data:
// each row through vec.LayerNorm (mean and two-pass variance summed in
// float32 vector lanes; its doc comment states the error), rows spread
// over goroutines.
func layerNormRows32(y, x []float32, sp *normRowsSpec, threads int) {
	minRows := max(1, par.Grain/8/max(sp.inner, 1))
	if par.Chunks(sp.rows, threads, minRows) == 1 {
		layerNormRowRange32(y, x, sp, 0, sp.rows) // no closure for For to allocate
		return
	}
	par.For(sp.rows, threads, minRows, func(lo, hi int) { layerNormRowRange32(y, x, sp, lo, hi) })
}

// layerNormRowRange32 normalizes rows [lo, hi) with the vector kernel.
func layerNormRowRange32(y, x []float32, sp *normRowsSpec, lo, hi int) {
	inner := sp.inner
	eps := float32(sp.eps)
	for r := lo; r < hi; r++ {
		mean, inv := vec.LayerNorm(y[r*inner:(r+1)*inner], x[r*inner:(r+1)*inner], sp.scale32, sp.bias32, eps)
		if sp.means != nil {
			sp.means[r] = float64(mean)
		}
		if sp.invStd != nil {
			sp.invStd[r] = float64(inv)
		}
	}
}

// VisitLayerNormalization compiles LayerNormalization (version 17).
func (b *builder) VisitLayerNormalization(op *ops.LayerNormalization) error {
	st, err := stashType("LayerNormalization", op.StashType)
	if err != nil {
		return err
	}
	k := &layerNormKernel{normKernel: normKernel{name: "LayerNormalization", threads: b.e.threads},
		axis: op.Axis, eps: float64(op.Epsilon), statType: st}
	return b.layerNorm(k, op.In.X, op.In.Scale, op.In.B, op.Out.Y, op.Out.Mean, op.Out.InvStdDev)
}

// VisitRMSNormalization compiles RMSNormalization (version 23).
func (b *builder) VisitRMSNormalization(op *ops.RMSNormalization) error {
	st, err := stashType("RMSNormalization", op.StashType)
	if err != nil {
		return err
	}
	k := &layerNormKernel{normKernel: normKernel{name: "RMSNormalization", threads: b.e.threads},
		axis: op.Axis, eps: float64(op.Epsilon), statType: st, rms: true}
	return b.layerNorm(k, op.In.X, op.In.Scale, "", op.Out.Y, "", "")
}

func (b *builder) layerNorm(k *layerNormKernel, xn, sn, bn, yn, mn, in string) error {
	x, err := b.input(xn)
	if err != nil {
		return err
	}
	scale, err := b.input(sn)
	if err != nil {
		return err
	}
	bias, err := b.optionalInput(bn)
	if err != nil {
		return err
	}
	y, mean, inv := b.output(yn), b.output(mn), b.output(in)
	k.wantStats = mean.present() || inv.present()
	return b.emit(func(slots []onnx.Value) error {
		xt, err := x.tensor(slots)
		if err != nil {
			return err
		}
		st, err := scale.tensor(slots)
		if err != nil {
			return err
		}
		bt, err := bias.optionalTensor(slots)
		if err != nil {
			return err
		}
		yt, mt, it, err := k.compute(xt, st, bt)
		if err != nil {
			return fmt.Errorf("%s: %w", k.name, err)
		}
		y.set(slots, yt)
		mean.set(slots, mt)
		inv.set(slots, it)
		return nil
	})
}
