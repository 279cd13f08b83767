package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/conv"
	"github.com/deep500/deep500-go/backend/native/internal/gemm"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// ConvInteger and QLinearConv run the convolution on int32 values with the
// zero points subtracted (so padding, which stands for the zero point, is
// a true zero): im2col as for Conv, then an integer GEMM per (image, group)
// accumulating in int32. QLinearConv then requantizes.

// convIntValues reads a uint8 or int8 tensor as int32 values.
func convIntValues(name string, t *onnx.Tensor) ([]int32, error) {
	switch d := t.Data.(type) {
	case []uint8:
		if t.Type != onnx.Uint8 {
			break
		}
		out := make([]int32, len(d))
		for i, v := range d {
			out[i] = int32(v)
		}
		return out, nil
	case []int8:
		if t.Type != onnx.Int8 {
			break
		}
		out := make([]int32, len(d))
		for i, v := range d {
			out[i] = int32(v)
		}
		return out, nil
	}
	return nil, network.Unsupportedf("%s of type %v", name, t.Type)
}

// zeroPoints reads an optional zero-point tensor of the data's type: a
// scalar, or (perChannel > 0) one value per output channel.
func zeroPoints(name string, t *onnx.Tensor, dataType onnx.DataType, perChannel int) ([]int32, error) {
	if t == nil {
		return []int32{0}, nil
	}
	if t.Type != dataType {
		return nil, fmt.Errorf("%s has type %v; want %v like its data", name, t.Type, dataType)
	}
	v, err := convIntValues(name, t)
	if err != nil {
		return nil, err
	}
	if len(v) == 1 || (perChannel > 0 && len(v) == perChannel && len(t.Shape) == 1) {
		return v, nil
	}
	return nil, fmt.Errorf("%s has shape %v; want a scalar%s", name, t.Shape, map[bool]string{true: fmt.Sprintf(" or [%d]", perChannel), false: ""}[perChannel > 0])
}

// convIntCore computes the int32 convolution of x (zero point xzp) and w
// (zero points wzp, one or per output channel).
type convIntCore struct {
	attrs       convWindowAttrs
	kernelShape []int64
	group       int64
	threads     int
	s           convScratch[int32]
	acc         []int32
}

func (k *convIntCore) run(x, w, xZero, wZero *onnx.Tensor) ([]int32, []int, error) {
	s, err := checkConvShapes(&k.attrs, k.kernelShape, k.group, x.Shape, w.Shape, false)
	if err != nil {
		return nil, nil, err
	}
	g := s.geom
	if g.KernelSize()*(s.c/s.group) > convMaxElements/max(1, g.OutSize()) {
		return nil, nil, fmt.Errorf("column buffer for kernel %v over output %v is too large", g.Kernel, g.Out)
	}
	xv, err := convIntValues("x", x)
	if err != nil {
		return nil, nil, err
	}
	wv, err := convIntValues("w", w)
	if err != nil {
		return nil, nil, err
	}
	xz, err := zeroPoints("x_zero_point", xZero, x.Type, 0)
	if err != nil {
		return nil, nil, err
	}
	wz, err := zeroPoints("w_zero_point", wZero, w.Type, s.m)
	if err != nil {
		return nil, nil, err
	}
	for i := range xv {
		xv[i] -= xz[0]
	}
	per := len(wv) / max(s.m, 1)
	for i := range wv {
		wv[i] -= wz[min(i/max(per, 1), len(wz)-1)]
	}
	cg, mg := s.c/s.group, s.m/s.group
	ks, inSz, outSz := g.KernelSize(), g.InSize(), g.OutSize()
	kc := cg * ks
	shape := append([]int{s.n, s.m}, g.Out...)
	n := onnx.NumElements(shape)
	if cap(k.acc) < n {
		k.acc = make([]int32, n)
	}
	y := k.acc[:n]
	col := k.s.get(0, kc*outSz)
	for ni := range s.n {
		for gi := range s.group {
			xg := xv[(ni*s.c+gi*cg)*inSz : (ni*s.c+(gi+1)*cg)*inSz]
			yg := y[(ni*s.m+gi*mg)*outSz : (ni*s.m+(gi+1)*mg)*outSz]
			conv.Im2col(col, xg, cg, g, k.threads)
			gemm.MultiplySimple(mg, outSz, kc, 1, wv[gi*mg*kc:(gi+1)*mg*kc], kc, false, col, outSz, false, 0, yg, outSz)
		}
	}
	return y, shape, nil
}

type convIntegerKernel struct {
	core convIntCore
	out  outputBuffer
}

func (k *convIntegerKernel) compute(x, w, xz, wz *onnx.Tensor) (*onnx.Tensor, error) {
	acc, shape, err := k.core.run(x, w, xz, wz)
	if err != nil {
		return nil, err
	}
	out := k.out.tensor(onnx.Int32, shape)
	copy(out.Data.([]int32), acc)
	return out, nil
}

// VisitConvInteger compiles ConvInteger (version 10).
func (b *builder) VisitConvInteger(op *ops.ConvInteger) error {
	if err := checkAutoPad(op.AutoPad); err != nil {
		return err
	}
	refs, err := b.inputRefs(2, op.In.X, op.In.W, op.In.XZeroPoint, op.In.WZeroPoint)
	if err != nil {
		return err
	}
	k := &convIntegerKernel{core: convIntCore{
		attrs:       convWindowAttrs{op: "ConvInteger", autoPad: op.AutoPad, strides: op.Strides, dilations: op.Dilations, pads: op.Pads},
		kernelShape: slices.Clone(op.KernelShape), group: op.Group, threads: b.e.threads,
	}}
	y := b.output(op.Out.Y)
	return b.emit(tensorsKernel(refs, y, func(ts []*onnx.Tensor) (*onnx.Tensor, error) {
		return k.compute(ts[0], ts[1], ts[2], ts[3])
	}))
}

type qlinearConvKernel struct {
	core convIntCore
	out  outputBuffer
}

// compute: inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point,
// y_scale, y_zero_point, B (optional int32).
func (k *qlinearConvKernel) compute(ts []*onnx.Tensor) (*onnx.Tensor, error) {
	x, xs, xz, w, ws, wz, ys, yz, b := ts[0], ts[1], ts[2], ts[3], ts[4], ts[5], ts[6], ts[7], ts[8]
	acc, shape, err := k.core.run(x, w, xz, wz)
	if err != nil {
		return nil, err
	}
	m, outSz := shape[1], onnx.NumElements(shape[2:])
	scalar := func(name string, t *onnx.Tensor) (float64, error) {
		if t.Type != onnx.Float || t.Len() != 1 {
			return 0, fmt.Errorf("%s must be a float scalar, got tensor(%v)%v", name, t.Type, t.Shape)
		}
		return float64(t.Data.([]float32)[0]), nil
	}
	xScale, err := scalar("x_scale", xs)
	if err != nil {
		return nil, err
	}
	yScale, err := scalar("y_scale", ys)
	if err != nil {
		return nil, err
	}
	if ws.Type != onnx.Float || (ws.Len() != 1 && ws.Len() != m) {
		return nil, fmt.Errorf("w_scale must be a float scalar or have %d values, got tensor(%v)%v", m, ws.Type, ws.Shape)
	}
	wScale := ws.Data.([]float32)
	yzp, err := zeroPoints("y_zero_point", yz, yz.Type, 0)
	if err != nil {
		return nil, err
	}
	var bias []int32
	if b != nil {
		if b.Type != onnx.Int32 || b.Len() != m {
			return nil, fmt.Errorf("B must be int32 with %d values, got tensor(%v)%v", m, b.Type, b.Shape)
		}
		bias = b.Data.([]int32)
	}
	lo, hi := 0.0, 255.0
	if yz.Type == onnx.Int8 {
		lo, hi = -128, 127
	}
	out := k.out.tensor(yz.Type, shape)
	for i, a := range acc {
		c := (i / max(outSz, 1)) % max(m, 1)
		v := a
		if bias != nil {
			v += bias[c]
		}
		scale := float32(xScale) * wScale[min(c, len(wScale)-1)] / float32(yScale)
		q := math.RoundToEven(float64(float32(v)*scale)) + float64(yzp[0])
		q = math.Max(lo, math.Min(hi, q))
		switch d := out.Data.(type) {
		case []uint8:
			d[i] = uint8(q)
		case []int8:
			d[i] = int8(q)
		}
	}
	return out, nil
}

// VisitQLinearConv compiles QLinearConv (version 10).
func (b *builder) VisitQLinearConv(op *ops.QLinearConv) error {
	if err := checkAutoPad(op.AutoPad); err != nil {
		return err
	}
	names := []string{op.In.X, op.In.XScale, op.In.XZeroPoint, op.In.W, op.In.WScale, op.In.WZeroPoint, op.In.YScale, op.In.YZeroPoint, op.In.B}
	refs, err := b.inputRefs(8, names...)
	if err != nil {
		return err
	}
	k := &qlinearConvKernel{core: convIntCore{
		attrs:       convWindowAttrs{op: "QLinearConv", autoPad: op.AutoPad, strides: op.Strides, dilations: op.Dilations, pads: op.Pads},
		kernelShape: slices.Clone(op.KernelShape), group: op.Group, threads: b.e.threads,
	}}
	y := b.output(op.Out.Y)
	return b.emit(tensorsKernel(refs, y, k.compute))
}
