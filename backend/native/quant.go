package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Quantization operators. Values go through float64 (every quantized type
// is exactly representable there); the division of QuantizeLinear is done
// in float32 for float32 (and narrower) inputs, as ONNX's reference does,
// so that ties are the same, and rounding is half to even.

// quantValues writes t's elements as float64 into dst (len t.Len()): any
// real type, the sub-byte integers (stored one per element) and the 8-bit
// and 4-bit floats.
func quantValues(dst []float64, t *onnx.Tensor) error {
	switch d := t.Data.(type) {
	case []onnx.F8E4M3FN:
		for i, v := range d {
			dst[i] = float64(v.Float32())
		}
	case []onnx.F8E4M3FNUZ:
		for i, v := range d {
			dst[i] = float64(v.Float32())
		}
	case []onnx.F8E5M2:
		for i, v := range d {
			dst[i] = float64(v.Float32())
		}
	case []onnx.F8E5M2FNUZ:
		for i, v := range d {
			dst[i] = float64(v.Float32())
		}
	case []onnx.F4E2M1:
		for i, v := range d {
			dst[i] = float64(v.Float32())
		}
	case []onnx.F8E8M0:
		for i, v := range d {
			dst[i] = float64(v.Float32())
		}
	case []int64, []uint32, []uint64, []bool:
		// float64sInto would take these; quantization does not.
		return network.Unsupportedf("quantization of tensor(%v)", t.Type)
	default:
		if !float64sInto(dst, t.Data) {
			return network.Unsupportedf("quantization of tensor(%v)", t.Type)
		}
	}
	return nil
}

// quantRange is the integer range of a quantized type; ok is false for
// the float8/float4 types.
func quantRange(t onnx.DataType) (lo, hi float64, isInt bool, err error) {
	switch t {
	case onnx.Uint8:
		return 0, 255, true, nil
	case onnx.Int8:
		return -128, 127, true, nil
	case onnx.Uint16:
		return 0, 65535, true, nil
	case onnx.Int16:
		return -32768, 32767, true, nil
	case onnx.Uint4:
		return 0, 15, true, nil
	case onnx.Int4:
		return -8, 7, true, nil
	case onnx.Uint2:
		return 0, 3, true, nil
	case onnx.Int2:
		return -2, 1, true, nil
	case onnx.Int32:
		return math.MinInt32, math.MaxInt32, true, nil
	case onnx.Float8E4M3FN, onnx.Float8E4M3FNUZ, onnx.Float8E5M2, onnx.Float8E5M2FNUZ, onnx.Float4E2M1:
		return 0, 0, false, nil
	}
	return 0, 0, false, network.Unsupportedf("quantization to %v", t)
}

// quantStore writes vals (already rounded and clamped for integer types)
// into t, converting to the 8-bit and 4-bit floats with saturate.
func quantStore(t *onnx.Tensor, vals []float64, saturate bool) error {
	switch d := t.Data.(type) {
	case []int8:
		for i, v := range vals {
			d[i] = int8(v)
		}
	case []uint8:
		for i, v := range vals {
			d[i] = uint8(v)
		}
	case []int16:
		for i, v := range vals {
			d[i] = int16(v)
		}
	case []uint16:
		for i, v := range vals {
			d[i] = uint16(v)
		}
	case []int32:
		for i, v := range vals {
			d[i] = int32(v)
		}
	case []onnx.F8E4M3FN:
		for i, v := range vals {
			d[i] = onnx.F8E4M3FNFrom(float32(v), saturate)
		}
	case []onnx.F8E4M3FNUZ:
		for i, v := range vals {
			d[i] = onnx.F8E4M3FNUZFrom(float32(v), saturate)
		}
	case []onnx.F8E5M2:
		for i, v := range vals {
			d[i] = onnx.F8E5M2From(float32(v), saturate)
		}
	case []onnx.F8E5M2FNUZ:
		for i, v := range vals {
			d[i] = onnx.F8E5M2FNUZFrom(float32(v), saturate)
		}
	case []onnx.F4E2M1:
		// NaN as Cast converts it (castNaNToF4E2M1): ONNX's reference
		// quantizes to float4 with the same numpy conversion as Cast.
		for i, v := range vals {
			f := float32(v)
			if f != f {
				d[i] = castNaNToF4E2M1(f)
				continue
			}
			d[i] = onnx.F4E2M1From(f, saturate)
		}
	case []float32, []float64, []onnx.F16, []onnx.BF16:
		storeFloat64s(t, vals)
	default:
		return network.Unsupportedf("quantized output tensor(%v)", t.Type)
	}
	return nil
}

// quantLayout maps an element of x, seen as [outer, n, inner] around the
// quantization axis, to its scale and zero point: per tensor, per axis
// (one per index along axis), or blocked (one per block of bs indices).
type quantLayout struct {
	outer, n, inner int
	mode            int // 0 per tensor, 1 per axis, 2 blocked
	bs, nb          int
}

func (l *quantLayout) index(o, j, i int) int {
	switch l.mode {
	case 1:
		return j
	case 2:
		return (o*l.nb+j/l.bs)*l.inner + i
	}
	return 0
}

// newQuantLayout checks the scale's shape against x's.
func newQuantLayout(x, scale []int, axis int64, blockSize int64) (quantLayout, error) {
	var l quantLayout
	n := onnx.NumElements(scale)
	if blockSize == 0 && len(scale) <= 1 && n == 1 {
		l.outer, l.n, l.inner = 1, onnx.NumElements(x), 1
		return l, nil
	}
	if len(x) == 0 {
		return l, fmt.Errorf("scale of shape %v for a scalar input", scale)
	}
	a, err := normalizeAxis(axis, len(x))
	if err != nil {
		return l, err
	}
	l.outer, l.n, l.inner = onnx.NumElements(x[:a]), x[a], onnx.NumElements(x[a+1:])
	if blockSize < 0 {
		return l, fmt.Errorf("block_size %d is negative", blockSize)
	}
	if blockSize == 0 {
		if len(scale) != 1 || scale[0] != x[a] {
			return l, fmt.Errorf("scale of shape %v is neither a scalar nor a vector of the %d entries of axis %d of %v", scale, x[a], a, x)
		}
		l.mode = 1
		return l, nil
	}
	l.mode, l.bs = 2, int(blockSize)
	l.nb = (x[a] + l.bs - 1) / l.bs
	want := slices.Clone(x)
	want[a] = l.nb
	if !slices.Equal(scale, want) {
		return l, fmt.Errorf("blocked scale has shape %v, want %v for input %v and block_size %d", scale, want, x, blockSize)
	}
	return l, nil
}

// quantKernel computes QuantizeLinear or DequantizeLinear.
type quantKernel struct {
	dequant   bool
	axis      int64
	blockSize int64
	outDtype  onnx.DataType // output_dtype, Undefined when not set
	saturate  bool
	perAxisOK bool // from version 13
	out       outputBuffer
	xs, ss    []float64
	zs        []float64
}

func (k *quantKernel) name() string {
	if k.dequant {
		return "DequantizeLinear"
	}
	return "QuantizeLinear"
}

func (k *quantKernel) compute(x, scale, zp *onnx.Tensor) (*onnx.Tensor, error) {
	if !k.perAxisOK && scale.Len() != 1 {
		return nil, fmt.Errorf("%s: scale must be a scalar before version 13, got shape %v", k.name(), scale.Shape)
	}
	l, err := newQuantLayout(x.Shape, scale.Shape, k.axis, k.blockSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.name(), err)
	}
	if zp != nil && !slices.Equal(zp.Shape, scale.Shape) && !(zp.Len() == 1 && scale.Len() == 1) {
		return nil, fmt.Errorf("%s: zero point has shape %v, scale %v", k.name(), zp.Shape, scale.Shape)
	}
	k.xs = withLen(k.xs, x.Len())
	k.ss = withLen(k.ss, scale.Len())
	k.zs = withLen(k.zs, scale.Len())
	if err := quantValues(k.xs, x); err != nil {
		return nil, err
	}
	if err := quantValues(k.ss, scale); err != nil {
		return nil, err
	}
	clear(k.zs)
	if zp != nil {
		if err := quantValues(k.zs, zp); err != nil {
			return nil, err
		}
	}
	if k.dequant {
		return k.dequantize(x, scale, zp, l)
	}
	return k.quantize(x, scale, zp, l)
}

func (k *quantKernel) quantize(x, scale, zp *onnx.Tensor, l quantLayout) (*onnx.Tensor, error) {
	if !x.Type.IsFloat() && x.Type != onnx.Int32 {
		return nil, network.Unsupportedf("QuantizeLinear of tensor(%v)", x.Type)
	}
	outType := onnx.Uint8
	switch {
	case zp != nil:
		outType = zp.Type
		if k.outDtype != onnx.Undefined && k.outDtype != zp.Type {
			return nil, fmt.Errorf("QuantizeLinear: output_dtype %v differs from the zero point's type %v", k.outDtype, zp.Type)
		}
	case k.outDtype != onnx.Undefined:
		outType = k.outDtype
	}
	lo, hi, isInt, err := quantRange(outType)
	if err != nil {
		return nil, err
	}
	xs, ss, zs := k.xs, k.ss, k.zs
	single := x.Type != onnx.Double
	for o := range l.outer {
		for j := range l.n {
			for i := range l.inner {
				f := (o*l.n+j)*l.inner + i
				si := l.index(o, j, i)
				var q float64
				if single {
					q = float64(float32(xs[f]) / float32(ss[si]))
				} else {
					q = xs[f] / ss[si]
				}
				if isInt {
					q = math.RoundToEven(q) + zs[si]
					if q != q {
						q = 0
					}
					q = min(max(q, lo), hi)
				} else {
					q += zs[si]
				}
				xs[f] = q
			}
		}
	}
	out := k.out.tensor(outType, x.Shape)
	return out, quantStore(out, xs, k.saturate)
}

func (k *quantKernel) dequantize(x, scale, zp *onnx.Tensor, l quantLayout) (*onnx.Tensor, error) {
	if zp != nil && zp.Type != x.Type {
		return nil, fmt.Errorf("DequantizeLinear: zero point is %v, input %v", zp.Type, x.Type)
	}
	outType := scale.Type
	if k.outDtype != onnx.Undefined {
		outType = k.outDtype
	}
	switch outType {
	case onnx.Float, onnx.Double, onnx.Float16, onnx.BFloat16:
	default:
		return nil, network.Unsupportedf("DequantizeLinear to tensor(%v)", outType)
	}
	xs, ss, zs := k.xs, k.ss, k.zs
	for o := range l.outer {
		for j := range l.n {
			for i := range l.inner {
				f := (o*l.n+j)*l.inner + i
				si := l.index(o, j, i)
				xs[f] = (xs[f] - zs[si]) * ss[si]
			}
		}
	}
	out := k.out.tensor(outType, x.Shape)
	storeFloat64s(out, xs)
	return out, nil
}

func (b *builder) quantBuild(k *quantKernel, xName, sName, zName, yName string) error {
	x, err := b.input(xName)
	if err != nil {
		return err
	}
	s, err := b.input(sName)
	if err != nil {
		return err
	}
	z, err := b.optionalInput(zName)
	if err != nil {
		return err
	}
	y := b.output(yName)
	return b.emit(tensorsKernel([]valueRef{x, s, z}, y, func(ts []*onnx.Tensor) (*onnx.Tensor, error) {
		return k.compute(ts[0], ts[1], ts[2])
	}))
}

// VisitQuantizeLinear compiles QuantizeLinear: per tensor (10), per axis
// (13), saturate and float8 (19), blocks, output_dtype and 4-bit types (21).
func (b *builder) VisitQuantizeLinear(op *ops.QuantizeLinear) error {
	v := op.SinceVersion()
	k := &quantKernel{axis: op.Axis, perAxisOK: v >= 13, saturate: true}
	if v >= 19 {
		k.saturate = op.Saturate != 0
	}
	if v >= 21 {
		k.blockSize, k.outDtype = op.BlockSize, onnx.DataType(op.OutputDtype)
	}
	return b.quantBuild(k, op.In.X, op.In.YScale, op.In.YZeroPoint, op.Out.Y)
}

// VisitDequantizeLinear compiles DequantizeLinear (per axis from 13,
// float8 from 19, blocks from 21, output_dtype from 23).
func (b *builder) VisitDequantizeLinear(op *ops.DequantizeLinear) error {
	v := op.SinceVersion()
	k := &quantKernel{dequant: true, axis: op.Axis, perAxisOK: v >= 13}
	if v >= 21 {
		k.blockSize = op.BlockSize
	}
	if v >= 23 {
		k.outDtype = onnx.DataType(op.OutputDtype)
	}
	return b.quantBuild(k, op.In.X, op.In.XScale, op.In.XZeroPoint, op.Out.Y)
}

// dynamicQuantize computes DynamicQuantizeLinear: uint8 quantization of a
// float32 tensor with a scale and zero point chosen so that the range
// [min(0, min x), max(0, max x)] maps onto [0, 255].
func dynamicQuantize(x *onnx.Tensor) (y, scale, zp *onnx.Tensor, err error) {
	src, ok := x.Data.([]float32)
	if !ok {
		return nil, nil, nil, network.Unsupportedf("DynamicQuantizeLinear of tensor(%v)", x.Type)
	}
	var lo, hi float32
	for _, v := range src {
		lo, hi = min(lo, v), max(hi, v)
	}
	s := (hi - lo) / 255
	var z float64
	if s != 0 {
		z = min(max(math.RoundToEven(float64(0-lo/s)), 0), 255)
	}
	y = onnx.NewTensor(onnx.Uint8, x.Shape...)
	dst := y.Data.([]uint8)
	if s != 0 {
		for i, v := range src {
			dst[i] = uint8(min(max(math.RoundToEven(float64(v/s))+z, 0), 255))
		}
	}
	return y, onnx.Scalar(s), onnx.Scalar(uint8(z)), nil
}

// VisitDynamicQuantizeLinear compiles DynamicQuantizeLinear.
func (b *builder) VisitDynamicQuantizeLinear(op *ops.DynamicQuantizeLinear) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	y, s, z := b.output(op.Out.Y), b.output(op.Out.YScale), b.output(op.Out.YZeroPoint)
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		yt, st, zt, err := dynamicQuantize(t)
		if err != nil {
			return err
		}
		y.set(slots, yt)
		s.set(slots, st)
		z.set(slots, zt)
		return nil
	})
}

// quantCentered returns t minus its zero point as int32 values shaped like
// t. The zero point is a scalar, a vector of one entry per row (rowWise,
// for A: t's second-to-last axis) or per column (for B: the last axis),
// or a tensor broadcastable to t.
func quantCentered(t, zp *onnx.Tensor, rowWise bool, threads int) ([]int32, error) {
	vals := make([]float64, t.Len())
	if err := quantValues(vals, t); err != nil {
		return nil, err
	}
	if t.Type != onnx.Int8 && t.Type != onnx.Uint8 && t.Type != onnx.Int16 && t.Type != onnx.Uint16 {
		return nil, network.Unsupportedf("integer matrix product of tensor(%v)", t.Type)
	}
	x := make([]int32, len(vals))
	for i, v := range vals {
		x[i] = int32(v)
	}
	if zp == nil {
		return x, nil
	}
	if zp.Type != t.Type {
		return nil, fmt.Errorf("zero point is %v, operand %v", zp.Type, t.Type)
	}
	zv := make([]float64, zp.Len())
	if err := quantValues(zv, zp); err != nil {
		return nil, err
	}
	z := make([]int32, len(zv))
	for i, v := range zv {
		z[i] = int32(v)
	}
	zShape := zp.Shape
	if len(zShape) == 1 && len(t.Shape) >= 2 && zShape[0] != 1 {
		if rowWise {
			zShape = []int{zShape[0], 1}
		} else {
			zShape = []int{zShape[0]}
		}
	}
	if s, err := broadcastShapes(t.Shape, zShape); err != nil || !slices.Equal(s, t.Shape) {
		return nil, fmt.Errorf("zero point of shape %v does not fit operand %v", zp.Shape, t.Shape)
	}
	out := make([]int32, len(x))
	if err := arith(opSub, threads, nil, out, x, t.Shape, z, zShape, t.Shape); err != nil {
		return nil, err
	}
	return out, nil
}

// matMulInteger returns (a - a_zp) x (b - b_zp) in int32, with MatMul's
// broadcasting.
func matMulInteger(a, b, azp, bzp *onnx.Tensor, threads int) (*onnx.Tensor, error) {
	p, err := planMatMul(a.Shape, b.Shape)
	if err != nil {
		return nil, err
	}
	ac, err := quantCentered(a, azp, true, threads)
	if err != nil {
		return nil, fmt.Errorf("A: %w", err)
	}
	bc, err := quantCentered(b, bzp, false, threads)
	if err != nil {
		return nil, fmt.Errorf("B: %w", err)
	}
	out := onnx.NewTensor(onnx.Int32, p.outShape...)
	batchedGemmSimple(p, ac, bc, out.Data.([]int32))
	return out, nil
}

// VisitMatMulInteger compiles MatMulInteger.
func (b *builder) VisitMatMulInteger(op *ops.MatMulInteger) error {
	refs, err := b.inputs([]string{op.In.A, op.In.B})
	if err != nil {
		return err
	}
	az, err := b.optionalInput(op.In.AZeroPoint)
	if err != nil {
		return err
	}
	bz, err := b.optionalInput(op.In.BZeroPoint)
	if err != nil {
		return err
	}
	y := b.output(op.Out.Y)
	threads := b.e.threads
	return b.emit(func(slots []onnx.Value) error {
		at, err := refs[0].tensor(slots)
		if err != nil {
			return err
		}
		bt, err := refs[1].tensor(slots)
		if err != nil {
			return err
		}
		azt, err := az.optionalTensor(slots)
		if err != nil {
			return err
		}
		bzt, err := bz.optionalTensor(slots)
		if err != nil {
			return err
		}
		res, err := matMulInteger(at, bt, azt, bzt, threads)
		if err != nil {
			return err
		}
		y.set(slots, res)
		return nil
	})
}

// qlinearMatMul computes QLinearMatMul: the integer product of the
// centered operands, rescaled by a_scale*b_scale/y_scale (per tensor, or
// per row of A / per column of B), rounded half to even, plus y's zero
// point, saturated to y's type.
func qlinearMatMul(in []*onnx.Tensor, threads int) (*onnx.Tensor, error) {
	a, as, azp, b, bs, bzp, ys, yzp := in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7]
	acc, err := matMulInteger(a, b, azp, bzp, threads)
	if err != nil {
		return nil, err
	}
	if ys.Len() != 1 || yzp.Len() != 1 {
		return nil, fmt.Errorf("y_scale and y_zero_point must be scalars, got shapes %v and %v", ys.Shape, yzp.Shape)
	}
	scales := func(t *onnx.Tensor) ([]float64, error) {
		v := make([]float64, t.Len())
		return v, quantValues(v, t)
	}
	av, err := scales(as)
	if err != nil {
		return nil, err
	}
	bv, err := scales(bs)
	if err != nil {
		return nil, err
	}
	yv, err := scales(ys)
	if err != nil {
		return nil, err
	}
	zv, err := scales(yzp)
	if err != nil {
		return nil, err
	}
	p, _ := planMatMul(a.Shape, b.Shape)
	if len(av) != 1 && len(av) != p.m {
		return nil, fmt.Errorf("a_scale has %d entries for %d rows", len(av), p.m)
	}
	if len(bv) != 1 && len(bv) != p.n {
		return nil, fmt.Errorf("b_scale has %d entries for %d columns", len(bv), p.n)
	}
	lo, hi, isInt, err := quantRange(yzp.Type)
	if err != nil || !isInt {
		return nil, network.Unsupportedf("QLinearMatMul to tensor(%v)", yzp.Type)
	}
	src := acc.Data.([]int32)
	vals := make([]float64, len(src))
	for idx, v := range src {
		j := idx % p.n
		i := (idx / p.n) % p.m
		sa, sb := av[0], bv[0]
		if len(av) > 1 {
			sa = av[i]
		}
		if len(bv) > 1 {
			sb = bv[j]
		}
		q := float64(v) * float64(float32(sa)*float32(sb)) / yv[0]
		vals[idx] = min(max(math.RoundToEven(q)+zv[0], lo), hi)
	}
	out := onnx.NewTensor(yzp.Type, acc.Shape...)
	return out, quantStore(out, vals, true)
}

// VisitQLinearMatMul compiles QLinearMatMul.
func (b *builder) VisitQLinearMatMul(op *ops.QLinearMatMul) error {
	refs, err := b.inputs([]string{op.In.A, op.In.AScale, op.In.AZeroPoint, op.In.B, op.In.BScale,
		op.In.BZeroPoint, op.In.YScale, op.In.YZeroPoint})
	if err != nil {
		return err
	}
	y := b.output(op.Out.Y)
	threads := b.e.threads
	return b.emit(func(slots []onnx.Value) error {
		ts := make([]*onnx.Tensor, len(refs))
		for i, r := range refs {
			t, err := r.tensor(slots)
			if err != nil {
				return err
			}
			ts[i] = t
		}
		res, err := qlinearMatMul(ts, threads)
		if err != nil {
			return err
		}
		y.set(slots, res)
		return nil
	})
}
