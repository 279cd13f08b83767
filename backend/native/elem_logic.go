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

// Comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual), logic
// (And, Or, Xor), Where, Pow, Clip and PRelu: broadcasting operators whose
// types differ between operands or result.

// cmpOp names a comparison.
type cmpOp int

const (
	cmpEq cmpOp = iota
	cmpLt
	cmpGt
	cmpLe
	cmpGe
)

func (op cmpOp) String() string {
	return [...]string{"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}[op]
}

// elemOrdered is what the comparisons are written for.
type elemOrdered interface{ numeric | string }

func cmpFn[T elemOrdered](op cmpOp) func(T, T) bool {
	switch op {
	case cmpEq:
		return func(a, b T) bool { return a == b }
	case cmpLt:
		return func(a, b T) bool { return a < b }
	case cmpGt:
		return func(a, b T) bool { return a > b }
	case cmpLe:
		return func(a, b T) bool { return a <= b }
	}
	return func(a, b T) bool { return a >= b }
}

// cmpKernel computes one comparison node.
type cmpKernel struct {
	op      cmpOp
	threads int
	out     outputBuffer
	wide    elemWide
}

func (k *cmpKernel) compute(a, b *onnx.Tensor, aShape, bShape, outShape []int) (*onnx.Tensor, error) {
	if err := elemSameType(k.op.String(), a, b); err != nil {
		return nil, err
	}
	out := k.out.tensor(onnx.Bool, outShape)
	dst := out.Data.([]bool)
	switch ad := a.Data.(type) {
	case []float32:
		cmpRun(k, dst, ad, aShape, b.Data.([]float32), bShape, outShape)
	case []float64:
		cmpRun(k, dst, ad, aShape, b.Data.([]float64), bShape, outShape)
	case []int8:
		cmpRun(k, dst, ad, aShape, b.Data.([]int8), bShape, outShape)
	case []int16:
		cmpRun(k, dst, ad, aShape, b.Data.([]int16), bShape, outShape)
	case []int32:
		cmpRun(k, dst, ad, aShape, b.Data.([]int32), bShape, outShape)
	case []int64:
		cmpRun(k, dst, ad, aShape, b.Data.([]int64), bShape, outShape)
	case []uint8:
		cmpRun(k, dst, ad, aShape, b.Data.([]uint8), bShape, outShape)
	case []uint16:
		cmpRun(k, dst, ad, aShape, b.Data.([]uint16), bShape, outShape)
	case []uint32:
		cmpRun(k, dst, ad, aShape, b.Data.([]uint32), bShape, outShape)
	case []uint64:
		cmpRun(k, dst, ad, aShape, b.Data.([]uint64), bShape, outShape)
	case []string:
		cmpRun(k, dst, ad, aShape, b.Data.([]string), bShape, outShape)
	case []onnx.F16, []onnx.BF16:
		w, _ := k.wide.widen([]*onnx.Tensor{a, b}, 0)
		cmpRun(k, dst, w[0], aShape, w[1], bShape, outShape)
	case []bool:
		bd := b.Data.([]bool)
		var f func(x, y bool) bool
		switch k.op {
		case cmpEq:
			f = func(x, y bool) bool { return x == y }
		case cmpLt:
			f = func(x, y bool) bool { return !x && y }
		case cmpGt:
			f = func(x, y bool) bool { return x && !y }
		case cmpLe:
			f = func(x, y bool) bool { return !x || y }
		default:
			f = func(x, y bool) bool { return x || !y }
		}
		elemBroadcast2(k.threads, dst, ad, aShape, bd, bShape, outShape, f)
	default:
		return nil, elemUnsupported(k.op.String(), a.Type)
	}
	return out, nil
}

func cmpRun[T elemOrdered](k *cmpKernel, dst []bool, a []T, aShape []int, b []T, bShape, outShape []int) {
	elemBroadcast2(k.threads, dst, a, aShape, b, bShape, outShape, cmpFn[T](k.op))
}

// elemBinaryNode compiles a two-input operator whose kernel takes the
// operands and the shapes they are read with (legacy broadcast before
// version 7 when legacy is set).
func (b *builder) elemBinaryNode(legacy bool, broadcast int64, axis *int64, aName, bName, cName string,
	compute func(a, b *onnx.Tensor, aShape, bShape, outShape []int) (*onnx.Tensor, error)) error {
	x, err := b.input(aName)
	if err != nil {
		return err
	}
	y, err := b.input(bName)
	if err != nil {
		return err
	}
	if legacy && broadcast != 0 && broadcast != 1 {
		return fmt.Errorf("broadcast must be 0 or 1, got %d", broadcast)
	}
	out := b.output(cName)
	return b.emit(func(slots []onnx.Value) error {
		ta, err := x.tensor(slots)
		if err != nil {
			return err
		}
		tb, err := y.tensor(slots)
		if err != nil {
			return err
		}
		as, bs, os, err := elemLegacyShapes(legacy, broadcast, axis, ta.Shape, tb.Shape)
		if err != nil {
			return err
		}
		res, err := compute(ta, tb, as, bs, os)
		if err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	})
}

func (b *builder) compare(op cmpOp, since int, broadcast int64, axis *int64, aName, bName, cName string) error {
	k := &cmpKernel{op: op, threads: b.e.threads}
	return b.elemBinaryNode(since < 7, broadcast, axis, aName, bName, cName, k.compute)
}

// VisitEqual compiles Equal (numbers, bool, and strings from version 11).
func (b *builder) VisitEqual(op *ops.Equal) error {
	return b.compare(cmpEq, op.SinceVersion(), op.Broadcast, op.Axis, op.In.A, op.In.B, op.Out.C)
}

// VisitLess compiles Less.
func (b *builder) VisitLess(op *ops.Less) error {
	return b.compare(cmpLt, op.SinceVersion(), op.Broadcast, op.Axis, op.In.A, op.In.B, op.Out.C)
}

// VisitGreater compiles Greater.
func (b *builder) VisitGreater(op *ops.Greater) error {
	return b.compare(cmpGt, op.SinceVersion(), op.Broadcast, op.Axis, op.In.A, op.In.B, op.Out.C)
}

// VisitLessOrEqual compiles LessOrEqual.
func (b *builder) VisitLessOrEqual(op *ops.LessOrEqual) error {
	return b.compare(cmpLe, op.SinceVersion(), 0, nil, op.In.A, op.In.B, op.Out.C)
}

// VisitGreaterOrEqual compiles GreaterOrEqual.
func (b *builder) VisitGreaterOrEqual(op *ops.GreaterOrEqual) error {
	return b.compare(cmpGe, op.SinceVersion(), 0, nil, op.In.A, op.In.B, op.Out.C)
}

// logicKernel computes And, Or or Xor of boolean tensors.
type logicKernel struct {
	name    string
	f       func(a, b bool) bool
	threads int
	out     outputBuffer
}

func (k *logicKernel) compute(a, b *onnx.Tensor, aShape, bShape, outShape []int) (*onnx.Tensor, error) {
	ad, ok1 := a.Data.([]bool)
	bd, ok2 := b.Data.([]bool)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%s needs boolean operands, got %v and %v", k.name, a.Type, b.Type)
	}
	out := k.out.tensor(onnx.Bool, outShape)
	elemBroadcast2(k.threads, out.Data.([]bool), ad, aShape, bd, bShape, outShape, k.f)
	return out, nil
}

func (b *builder) logic(name string, f func(x, y bool) bool, since int, broadcast int64, axis *int64, aName, bName, cName string) error {
	k := &logicKernel{name: name, f: f, threads: b.e.threads}
	return b.elemBinaryNode(since < 7, broadcast, axis, aName, bName, cName, k.compute)
}

// VisitAnd compiles And.
func (b *builder) VisitAnd(op *ops.And) error {
	return b.logic("And", func(x, y bool) bool { return x && y }, op.SinceVersion(), op.Broadcast, op.Axis, op.In.A, op.In.B, op.Out.C)
}

// VisitOr compiles Or.
func (b *builder) VisitOr(op *ops.Or) error {
	return b.logic("Or", func(x, y bool) bool { return x || y }, op.SinceVersion(), op.Broadcast, op.Axis, op.In.A, op.In.B, op.Out.C)
}

// VisitXor compiles Xor.
func (b *builder) VisitXor(op *ops.Xor) error {
	return b.logic("Xor", func(x, y bool) bool { return x != y }, op.SinceVersion(), op.Broadcast, op.Axis, op.In.A, op.In.B, op.Out.C)
}

// ---- Where ----

// whereKernel selects from X where the condition holds and from Y elsewhere.
type whereKernel struct {
	threads int
	out     outputBuffer
}

func (k *whereKernel) compute(c, x, y *onnx.Tensor) (*onnx.Tensor, error) {
	cd, ok := c.Data.([]bool)
	if !ok {
		return nil, fmt.Errorf("condition must be a boolean tensor, got %v", c.Type)
	}
	if x.Type != y.Type {
		return nil, fmt.Errorf("X and Y have different types %v and %v", x.Type, y.Type)
	}
	shape, err := broadcastShapes(c.Shape, x.Shape, y.Shape)
	if err != nil {
		return nil, err
	}
	out := k.out.tensor(x.Type, shape)
	switch xd := x.Data.(type) {
	case []float32:
		whereRun(k, out.Data.([]float32), cd, c.Shape, xd, x.Shape, y.Data.([]float32), y.Shape, shape)
	case []float64:
		whereRun(k, out.Data.([]float64), cd, c.Shape, xd, x.Shape, y.Data.([]float64), y.Shape, shape)
	case []int8:
		whereRun(k, out.Data.([]int8), cd, c.Shape, xd, x.Shape, y.Data.([]int8), y.Shape, shape)
	case []int16:
		whereRun(k, out.Data.([]int16), cd, c.Shape, xd, x.Shape, y.Data.([]int16), y.Shape, shape)
	case []int32:
		whereRun(k, out.Data.([]int32), cd, c.Shape, xd, x.Shape, y.Data.([]int32), y.Shape, shape)
	case []int64:
		whereRun(k, out.Data.([]int64), cd, c.Shape, xd, x.Shape, y.Data.([]int64), y.Shape, shape)
	case []uint8:
		whereRun(k, out.Data.([]uint8), cd, c.Shape, xd, x.Shape, y.Data.([]uint8), y.Shape, shape)
	case []uint16:
		whereRun(k, out.Data.([]uint16), cd, c.Shape, xd, x.Shape, y.Data.([]uint16), y.Shape, shape)
	case []uint32:
		whereRun(k, out.Data.([]uint32), cd, c.Shape, xd, x.Shape, y.Data.([]uint32), y.Shape, shape)
	case []uint64:
		whereRun(k, out.Data.([]uint64), cd, c.Shape, xd, x.Shape, y.Data.([]uint64), y.Shape, shape)
	case []bool:
		whereRun(k, out.Data.([]bool), cd, c.Shape, xd, x.Shape, y.Data.([]bool), y.Shape, shape)
	case []string:
		whereRun(k, out.Data.([]string), cd, c.Shape, xd, x.Shape, y.Data.([]string), y.Shape, shape)
	case []complex64:
		whereRun(k, out.Data.([]complex64), cd, c.Shape, xd, x.Shape, y.Data.([]complex64), y.Shape, shape)
	case []complex128:
		whereRun(k, out.Data.([]complex128), cd, c.Shape, xd, x.Shape, y.Data.([]complex128), y.Shape, shape)
	case []onnx.F16:
		whereRun(k, out.Data.([]onnx.F16), cd, c.Shape, xd, x.Shape, y.Data.([]onnx.F16), y.Shape, shape)
	case []onnx.BF16:
		whereRun(k, out.Data.([]onnx.BF16), cd, c.Shape, xd, x.Shape, y.Data.([]onnx.BF16), y.Shape, shape)
	case []onnx.F8E4M3FN:
		whereRun(k, out.Data.([]onnx.F8E4M3FN), cd, c.Shape, xd, x.Shape, y.Data.([]onnx.F8E4M3FN), y.Shape, shape)
	case []onnx.F8E4M3FNUZ:
		whereRun(k, out.Data.([]onnx.F8E4M3FNUZ), cd, c.Shape, xd, x.Shape, y.Data.([]onnx.F8E4M3FNUZ), y.Shape, shape)
	case []onnx.F8E5M2:
		whereRun(k, out.Data.([]onnx.F8E5M2), cd, c.Shape, xd, x.Shape, y.Data.([]onnx.F8E5M2), y.Shape, shape)
	case []onnx.F8E5M2FNUZ:
		whereRun(k, out.Data.([]onnx.F8E5M2FNUZ), cd, c.Shape, xd, x.Shape, y.Data.([]onnx.F8E5M2FNUZ), y.Shape, shape)
	default:
		return nil, elemUnsupported("Where", x.Type)
	}
	return out, nil
}

func whereRun[T any](k *whereKernel, dst []T, c []bool, cShape []int, x []T, xShape []int, y []T, yShape, shape []int) {
	elemBroadcast3(k.threads, dst, c, cShape, x, xShape, y, yShape, shape, func(c bool, a, b T) T {
		if c {
			return a
		}
		return b
	})
}

// VisitWhere compiles Where.
func (b *builder) VisitWhere(op *ops.Where) error {
	refs, err := b.inputRefs(3, op.In.Condition, op.In.X, op.In.Y)
	if err != nil {
		return err
	}
	out := b.output(op.Out.Output)
	k := &whereKernel{threads: b.e.threads}
	return b.emit(tensorsKernel(refs, out, func(ts []*onnx.Tensor) (*onnx.Tensor, error) {
		return k.compute(ts[0], ts[1], ts[2])
	}))
}

// ---- Pow ----

// powKernel computes X ** Y; the result has X's type, and Y may be of any
// numeric type.
type powKernel struct {
	threads int
	out     outputBuffer
	exp     []float64
	wide    elemWide
}

func (k *powKernel) compute(x, y *onnx.Tensor, xShape, yShape, outShape []int) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	if err := checkStorage(y); err != nil {
		return nil, err
	}
	if cap(k.exp) < y.Len() {
		k.exp = make([]float64, y.Len())
	}
	e := k.exp[:y.Len()]
	if !castNumeric(1, e, y.Data) {
		switch y.Data.(type) {
		case []onnx.F16, []onnx.BF16:
			w, _ := k.wide.widen([]*onnx.Tensor{y}, 0)
			for i, v := range w[0] {
				e[i] = float64(v)
			}
		default:
			return nil, elemUnsupported("Pow with an exponent", y.Type)
		}
	}
	out := k.out.tensor(x.Type, outShape)
	switch xd := x.Data.(type) {
	case []float32:
		powRun(k, out.Data.([]float32), xd, xShape, e, yShape, outShape)
	case []float64:
		powRun(k, out.Data.([]float64), xd, xShape, e, yShape, outShape)
	case []int8:
		powRun(k, out.Data.([]int8), xd, xShape, e, yShape, outShape)
	case []int16:
		powRun(k, out.Data.([]int16), xd, xShape, e, yShape, outShape)
	case []int32:
		powRun(k, out.Data.([]int32), xd, xShape, e, yShape, outShape)
	case []int64:
		powRun(k, out.Data.([]int64), xd, xShape, e, yShape, outShape)
	case []uint8:
		powRun(k, out.Data.([]uint8), xd, xShape, e, yShape, outShape)
	case []uint16:
		powRun(k, out.Data.([]uint16), xd, xShape, e, yShape, outShape)
	case []uint32:
		powRun(k, out.Data.([]uint32), xd, xShape, e, yShape, outShape)
	case []uint64:
		powRun(k, out.Data.([]uint64), xd, xShape, e, yShape, outShape)
	case []onnx.F16, []onnx.BF16:
		w, wout := k.wide.widen([]*onnx.Tensor{x}, out.Len())
		powRun(k, wout, w[0], xShape, e, yShape, outShape)
		if err := narrowFromFloat32(out.Data, wout); err != nil {
			return nil, err
		}
	default:
		return nil, elemUnsupported("Pow", x.Type)
	}
	return out, nil
}

func powRun[T numeric](k *powKernel, dst, x []T, xShape []int, y []float64, yShape, outShape []int) {
	var f func(T, float64) T
	if elemIsFloat[T]() {
		f = func(a T, b float64) T { return T(math.Pow(float64(a), b)) }
	} else {
		f = func(a T, b float64) T {
			if b >= 0 && b == math.Trunc(b) && b < 1<<63 {
				return intPow(a, uint64(b))
			}
			return T(int64(math.Pow(float64(a), b)))
		}
	}
	elemBroadcast2(k.threads, dst, x, xShape, y, yShape, outShape, f)
}

// intPow is a**n by squaring, wrapping around like the integer type.
func intPow[T numeric](a T, n uint64) T {
	r := T(1)
	for n > 0 {
		if n&1 == 1 {
			r *= a
		}
		a *= a
		n >>= 1
	}
	return r
}

// VisitPow compiles Pow (legacy broadcast before version 7).
func (b *builder) VisitPow(op *ops.Pow) error {
	k := &powKernel{threads: b.e.threads}
	return b.elemBinaryNode(op.SinceVersion() < 7, op.Broadcast, op.Axis, op.In.X, op.In.Y, op.Out.Z, k.compute)
}

// ---- Clip ----

// clipKernel clamps values to [lo, hi]; a nil bound is absent.
type clipKernel struct {
	threads int
	out     outputBuffer
	wide    elemWide
	task    any // clipRun's parallel task (taskOf)
}

// compute clamps x. lo and hi are scalar tensors of x's type, or nil; a
// bound given as float64 (the attributes of versions before 11) is
// converted to x's type.
func (k *clipKernel) compute(x, lo, hi *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	for _, t := range []*onnx.Tensor{lo, hi} {
		if t == nil {
			continue
		}
		if t.Type != x.Type {
			return nil, fmt.Errorf("Clip bound of type %v for input of type %v", t.Type, x.Type)
		}
		if t.Len() != 1 {
			return nil, fmt.Errorf("Clip bound must be a scalar, got shape %v", t.Shape)
		}
	}
	out := k.out.tensor(x.Type, x.Shape)
	switch xd := x.Data.(type) {
	case []float32:
		clipRun(k, out.Data.([]float32), xd, lo, hi)
	case []float64:
		clipRun(k, out.Data.([]float64), xd, lo, hi)
	case []int8:
		clipRun(k, out.Data.([]int8), xd, lo, hi)
	case []int16:
		clipRun(k, out.Data.([]int16), xd, lo, hi)
	case []int32:
		clipRun(k, out.Data.([]int32), xd, lo, hi)
	case []int64:
		clipRun(k, out.Data.([]int64), xd, lo, hi)
	case []uint8:
		clipRun(k, out.Data.([]uint8), xd, lo, hi)
	case []uint16:
		clipRun(k, out.Data.([]uint16), xd, lo, hi)
	case []uint32:
		clipRun(k, out.Data.([]uint32), xd, lo, hi)
	case []uint64:
		clipRun(k, out.Data.([]uint64), xd, lo, hi)
	case []onnx.F16, []onnx.BF16:
		ts := []*onnx.Tensor{x}
		for _, t := range []*onnx.Tensor{lo, hi} {
			if t != nil {
				ts = append(ts, t)
			}
		}
		w, wout := k.wide.widen(ts, out.Len())
		var wlo, whi *onnx.Tensor
		i := 1
		if lo != nil {
			wlo = onnx.FromSlice(w[i])
			i++
		}
		if hi != nil {
			whi = onnx.FromSlice(w[i])
		}
		clipRun(k, wout, w[0], wlo, whi)
		if err := narrowFromFloat32(out.Data, wout); err != nil {
			return nil, err
		}
	default:
		return nil, elemUnsupported("Clip", x.Type)
	}
	return out, nil
}

// isFloat32 reports whether s is a []float32, for the vector kernels.
func isFloat32[T any](s []T) bool {
	_, ok := any(s).([]float32)
	return ok
}

func clipRun[T numeric](k *clipKernel, dst, x []T, lo, hi *onnx.Tensor) {
	var l, h T
	hasLo, hasHi := lo != nil, hi != nil
	if hasLo {
		l = lo.Data.([]T)[0]
	}
	if hasHi {
		h = hi.Data.([]T)[0]
	}
	n := len(x)
	chunks := par.Chunks(n, k.threads, elemGrain)
	if chunks == 1 {
		clipRange(dst[:n], x, l, h, hasLo, hasHi)
		return
	}
	// The kernel's task, so that the parallel path allocates nothing.
	task := taskOf[clipTask[T]](&k.task)
	*task = clipTask[T]{dst: dst, x: x, l: l, h: h, hasLo: hasLo, hasHi: hasHi, n: n, chunks: chunks}
	par.Spread(chunks, task)
	*task = clipTask[T]{} // hold no tensors between runs
}

// clipRange clips x into dst (of x's length) to [l, h], each bound only
// when present; a NaN stays NaN.
func clipRange[T numeric](dst, x []T, l, h T, hasLo, hasHi bool) {
	switch {
	case hasLo && hasHi && isFloat32(x):
		vec.Clip(any(dst).([]float32), any(x).([]float32), any(l).(float32), any(h).(float32))
	case hasLo && hasHi:
		for i, v := range x {
			if v < l {
				v = l
			}
			if v > h {
				v = h
			}
			dst[i] = v
		}
	case hasLo:
		for i, v := range x {
			dst[i] = max(v, l)
		}
	case hasHi:
		for i, v := range x {
			dst[i] = min(v, h)
		}
	default:
		copy(dst, x)
	}
}

// clipTask is clipRun's parallel work: worker w clips the w-th of chunks
// equal runs of x.
type clipTask[T numeric] struct {
	dst, x       []T
	l, h         T
	hasLo, hasHi bool
	n, chunks    int
}

func (t *clipTask[T]) Work(w int) {
	lo, hi := w*t.n/t.chunks, (w+1)*t.n/t.chunks
	clipRange(t.dst[lo:hi], t.x[lo:hi], t.l, t.h, t.hasLo, t.hasHi)
}

// VisitClip compiles Clip: bounds are attributes before version 11
// (absent in version 1 unless set, ±max float from version 6), optional
// scalar inputs from version 11.
func (b *builder) VisitClip(op *ops.Clip) error {
	x, err := b.input(op.In.Input)
	if err != nil {
		return err
	}
	out := b.output(op.Out.Output)
	k := &clipKernel{threads: b.e.threads}
	if op.SinceVersion() < 11 {
		bound := func(p *float32) func(dt onnx.DataType) (*onnx.Tensor, error) {
			if p == nil {
				return func(onnx.DataType) (*onnx.Tensor, error) { return nil, nil }
			}
			return func(dt onnx.DataType) (*onnx.Tensor, error) {
				switch dt {
				case onnx.Float, onnx.Double, onnx.Float16, onnx.BFloat16:
				default:
					return nil, network.Unsupportedf("Clip before version 11 of %v tensors", dt)
				}
				return tensorFromFloat64s(dt, nil, []float64{float64(*p)})
			}
		}
		lo, hi := bound(op.Min), bound(op.Max)
		return b.emit(func(slots []onnx.Value) error {
			t, err := x.tensor(slots)
			if err != nil {
				return err
			}
			l, err := lo(t.Type)
			if err != nil {
				return err
			}
			h, err := hi(t.Type)
			if err != nil {
				return err
			}
			res, err := k.compute(t, l, h)
			if err != nil {
				return err
			}
			out.set(slots, res)
			return nil
		})
	}
	minRef, err := b.optionalInput(op.In.Min)
	if err != nil {
		return err
	}
	maxRef, err := b.optionalInput(op.In.Max)
	if err != nil {
		return err
	}
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		l, err := minRef.optionalTensor(slots)
		if err != nil {
			return err
		}
		h, err := maxRef.optionalTensor(slots)
		if err != nil {
			return err
		}
		if l != nil && l.Len() == 0 {
			l = nil
		}
		if h != nil && h.Len() == 0 {
			h = nil
		}
		res, err := k.compute(t, l, h)
		if err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	})
}

// ---- PRelu ----

// preluKernel computes x < 0 ? slope*x : x, with slope broadcast to x.
type preluKernel struct {
	threads int
	out     outputBuffer
	wide    elemWide
}

// slopeShape is the shape slope is read with: numpy broadcasting to x's
// shape, or (versions before 7, and as a fallback) a 1-D slope of x's
// channel count aligned at axis 1.
func preluSlopeShape(x, s []int) ([]int, error) {
	if out, err := broadcastShapes(x, s); err == nil && sameShape(out, x) {
		return s, nil
	}
	if len(s) == 1 && len(x) >= 2 && s[0] == x[1] {
		aligned := make([]int, len(x))
		for i := range aligned {
			aligned[i] = 1
		}
		aligned[1] = s[0]
		return aligned, nil
	}
	return nil, fmt.Errorf("slope of shape %v does not broadcast to input shape %v", s, x)
}

func (k *preluKernel) compute(x, slope *onnx.Tensor) (*onnx.Tensor, error) {
	if err := elemSameType("PRelu", x, slope); err != nil {
		return nil, err
	}
	ss, err := preluSlopeShape(x.Shape, slope.Shape)
	if err != nil {
		return nil, err
	}
	out := k.out.tensor(x.Type, x.Shape)
	switch xd := x.Data.(type) {
	case []float32:
		preluRun(k, out.Data.([]float32), xd, x.Shape, slope.Data.([]float32), ss)
	case []float64:
		preluRun(k, out.Data.([]float64), xd, x.Shape, slope.Data.([]float64), ss)
	case []int32:
		preluRun(k, out.Data.([]int32), xd, x.Shape, slope.Data.([]int32), ss)
	case []int64:
		preluRun(k, out.Data.([]int64), xd, x.Shape, slope.Data.([]int64), ss)
	case []uint32:
		preluRun(k, out.Data.([]uint32), xd, x.Shape, slope.Data.([]uint32), ss)
	case []uint64:
		preluRun(k, out.Data.([]uint64), xd, x.Shape, slope.Data.([]uint64), ss)
	case []onnx.F16, []onnx.BF16:
		w, wout := k.wide.widen([]*onnx.Tensor{x, slope}, out.Len())
		preluRun(k, wout, w[0], x.Shape, w[1], ss)
		if err := narrowFromFloat32(out.Data, wout); err != nil {
			return nil, err
		}
	default:
		return nil, network.Unsupportedf("PRelu of %v tensors", x.Type)
	}
	return out, nil
}

func preluRun[T numeric](k *preluKernel, dst, x []T, xShape []int, s []T, sShape []int) {
	elemBroadcast2(k.threads, dst, x, xShape, s, sShape, xShape, func(v, a T) T {
		if v < 0 {
			return v * a
		}
		return v
	})
}

// VisitPRelu compiles PRelu.
func (b *builder) VisitPRelu(op *ops.PRelu) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	s, err := b.input(op.In.Slope)
	if err != nil {
		return err
	}
	out := b.output(op.Out.Y)
	k := &preluKernel{threads: b.e.threads}
	return b.emit(binaryTensorKernel(x, s, out, k.compute))
}
