package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Broadcasting operators whose operands and result share one numeric type:
// Max, Min, Sum, Mean (variadic), Mod, BitShift, BitwiseAnd/Or/Xor.

// elemOp names a same-type binary function.
type elemOp int

const (
	elemMax elemOp = iota
	elemMin
	elemSum
	elemMean
	elemMod  // integer mod with the sign of the divisor (Mod, fmod=0)
	elemFmod // C fmod: the sign of the dividend (Mod, fmod=1)
	elemShl
	elemShr
	elemBitAnd
	elemBitOr
	elemBitXor
	elemFloorMod  // Mod-28, fmod=0: elemMod, and floor mod on floats too
	elemShlSigned // BitShift-28: elemShl, and on signed integers too
	elemShrSigned // BitShift-28: elemShr, arithmetic on signed integers
)

func (op elemOp) String() string {
	return [...]string{"Max", "Min", "Sum", "Mean", "Mod", "Mod(fmod=1)", "BitShift(LEFT)", "BitShift(RIGHT)",
		"BitwiseAnd", "BitwiseOr", "BitwiseXor", "Mod", "BitShift(LEFT)", "BitShift(RIGHT)"}[op]
}

// elemBinFn returns op's function on T, or nil when op is not defined for
// T (bit operations on floats, mod with fmod=0 on floats).
func elemBinFn[T numeric](op elemOp) func(T, T) T {
	isFloat := elemIsFloat[T]()
	switch op {
	case elemMax:
		return func(a, b T) T {
			if a != a || a > b {
				return a
			}
			return b
		}
	case elemMin:
		return func(a, b T) T {
			if a != a || a < b {
				return a
			}
			return b
		}
	case elemSum, elemMean:
		return func(a, b T) T { return a + b }
	case elemFmod:
		switch {
		case isFloat:
			return func(a, b T) T { return T(math.Mod(float64(a), float64(b))) }
		case elemIsSigned[T]():
			return func(a, b T) T { return T(int64(a) % int64(b)) }
		}
		return func(a, b T) T { return T(uint64(a) % uint64(b)) }
	case elemFloorMod:
		if isFloat {
			return func(a, b T) T { return T(floorMod(float64(a), float64(b))) }
		}
		return elemBinFn[T](elemMod)
	case elemMod:
		switch {
		case isFloat:
			return nil
		case elemIsSigned[T]():
			return func(a, b T) T {
				r := int64(a) % int64(b)
				if r != 0 && (r < 0) != (b < 0) {
					r += int64(b)
				}
				return T(r)
			}
		}
		return func(a, b T) T { return T(uint64(a) % uint64(b)) }
	}
	if isFloat {
		return nil
	}
	switch op {
	case elemShl:
		if elemIsSigned[T]() {
			return nil
		}
		return func(a, b T) T { return T(uint64(a) << uint64(b)) }
	case elemShr:
		if elemIsSigned[T]() {
			return nil
		}
		return func(a, b T) T { return T(uint64(a) >> uint64(b)) }
	case elemShlSigned:
		// Bits past the type's width are dropped by the conversion to T, a
		// negative or too large count (a huge uint64) shifts all out: 0.
		return func(a, b T) T { return T(uint64(a) << uint64(b)) }
	case elemShrSigned:
		if !elemIsSigned[T]() {
			return elemBinFn[T](elemShr)
		}
		// Arithmetic: a count past the width leaves the sign fill, 0 or -1
		// (Go's shift of an int64 by 64 or more does exactly that).
		return func(a, b T) T {
			if b < 0 {
				return T(int64(a) >> 63)
			}
			return T(int64(a) >> uint64(b))
		}
	case elemBitAnd:
		return func(a, b T) T { return T(uint64(a) & uint64(b)) }
	case elemBitOr:
		return func(a, b T) T { return T(uint64(a) | uint64(b)) }
	case elemBitXor:
		return func(a, b T) T { return T(uint64(a) ^ uint64(b)) }
	}
	return nil
}

// elemSameKernel computes one same-type broadcasting node, binary or
// variadic, into its own buffer.
type elemSameKernel struct {
	op      elemOp
	threads int
	out     outputBuffer
	wide    elemWide
}

// compute folds op over the inputs with numpy broadcasting.
func (k *elemSameKernel) compute(ins ...*onnx.Tensor) (*onnx.Tensor, error) {
	shapes := elemShapes(ins)
	outShape, err := broadcastShapes(shapes...)
	if err != nil {
		return nil, err
	}
	return k.computeShapes(ins, shapes, outShape)
}

// computeShapes is compute with the shapes each input is read with given
// (the legacy broadcast of old versions aligns B's shape to A's).
func (k *elemSameKernel) computeShapes(ins []*onnx.Tensor, shapes [][]int, outShape []int) (*onnx.Tensor, error) {
	if len(ins) == 0 {
		return nil, fmt.Errorf("%v needs at least one input", k.op)
	}
	if err := elemSameType(k.op.String(), ins...); err != nil {
		return nil, err
	}
	out := k.out.tensor(ins[0].Type, outShape)
	var err error
	switch ins[0].Data.(type) {
	case []float32:
		err = elemSameRun(k, out.Data.([]float32), elemSlices[float32](ins), shapes, outShape)
	case []float64:
		err = elemSameRun(k, out.Data.([]float64), elemSlices[float64](ins), shapes, outShape)
	case []int8:
		err = elemSameRun(k, out.Data.([]int8), elemSlices[int8](ins), shapes, outShape)
	case []int16:
		err = elemSameRun(k, out.Data.([]int16), elemSlices[int16](ins), shapes, outShape)
	case []int32:
		err = elemSameRun(k, out.Data.([]int32), elemSlices[int32](ins), shapes, outShape)
	case []int64:
		err = elemSameRun(k, out.Data.([]int64), elemSlices[int64](ins), shapes, outShape)
	case []uint8:
		err = elemSameRun(k, out.Data.([]uint8), elemSlices[uint8](ins), shapes, outShape)
	case []uint16:
		err = elemSameRun(k, out.Data.([]uint16), elemSlices[uint16](ins), shapes, outShape)
	case []uint32:
		err = elemSameRun(k, out.Data.([]uint32), elemSlices[uint32](ins), shapes, outShape)
	case []uint64:
		err = elemSameRun(k, out.Data.([]uint64), elemSlices[uint64](ins), shapes, outShape)
	case []onnx.F16, []onnx.BF16:
		wins, wout := k.wide.widen(ins, out.Len())
		if err = elemSameRun(k, wout, wins, shapes, outShape); err == nil {
			err = narrowFromFloat32(out.Data, wout)
		}
	default:
		return nil, elemUnsupported(k.op.String(), ins[0].Type)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func elemSameRun[T numeric](k *elemSameKernel, dst []T, ins [][]T, shapes [][]int, outShape []int) error {
	fn := elemBinFn[T](k.op)
	if fn == nil {
		if k.op == elemMod {
			return fmt.Errorf("Mod of floating-point tensors needs fmod=1 before version 28")
		}
		var z T
		return network.Unsupportedf("%v of %T tensors", k.op, z)
	}
	if (k.op == elemMod || k.op == elemFmod || k.op == elemFloorMod) && !elemIsFloat[T]() {
		for _, in := range ins[1:] {
			for _, v := range in {
				if v == 0 {
					return fmt.Errorf("integer modulo by zero")
				}
			}
		}
	}
	elemFold(k.threads, dst, ins, shapes, outShape, elemSameRow(k.op, fn))
	if k.op == elemMean && len(ins) > 1 {
		n := T(len(ins))
		for i := range dst {
			dst[i] /= n
		}
	}
	return nil
}

// elemSameRow returns the row function of op: tight loops for the
// common operators on contiguous or repeated operands, fn per element
// otherwise.
func elemSameRow[T numeric](op elemOp, fn func(T, T) T) func(d, x []T, sx int, y []T, sy int) {
	generic := func(d, x []T, sx int, y []T, sy int) {
		for i := range d {
			d[i] = fn(x[i*sx], y[i*sy])
		}
	}
	switch op {
	case elemSum, elemMean:
		return func(d, x []T, sx int, y []T, sy int) {
			switch {
			case sx == 1 && sy == 1:
				x, y := x[:len(d)], y[:len(d)]
				for i := range d {
					d[i] = x[i] + y[i]
				}
			case sx == 1 && sy == 0:
				x, v := x[:len(d)], y[0]
				for i := range d {
					d[i] = x[i] + v
				}
			default:
				generic(d, x, sx, y, sy)
			}
		}
	case elemMax, elemMin:
		less := op == elemMin
		return func(d, x []T, sx int, y []T, sy int) {
			if sx != 1 || sy > 1 {
				generic(d, x, sx, y, sy)
				return
			}
			x = x[:len(d)]
			for i := range d {
				a, b := x[i], y[i*sy]
				if a != a || (a < b) == less && a != b {
					d[i] = a
				} else {
					d[i] = b
				}
			}
		}
	}
	return generic
}

// variadic compiles Max, Min, Sum and Mean. Version 1 takes no
// broadcasting (inputs of one shape); from version 8 they broadcast.
func (b *builder) elemVariadic(op elemOp, since int, names []string, outName string) error {
	refs, err := b.inputs(names)
	if err != nil {
		return err
	}
	if len(refs) == 0 && !b.probing {
		return fmt.Errorf("%v needs at least one input", op)
	}
	out := b.output(outName)
	k := &elemSameKernel{op: op, threads: b.e.threads}
	ins := make([]*onnx.Tensor, len(refs))
	return b.emit(func(slots []onnx.Value) error {
		for i, r := range refs {
			t, err := r.tensor(slots)
			if err != nil {
				return err
			}
			if since < 8 && i > 0 && !sameShape(t.Shape, ins[0].Shape) {
				return fmt.Errorf("%v before version 8 needs inputs of one shape, got %v and %v", op, ins[0].Shape, t.Shape)
			}
			ins[i] = t
		}
		res, err := k.compute(ins...)
		if err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	})
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// VisitMax compiles Max.
func (b *builder) VisitMax(op *ops.Max) error {
	return b.elemVariadic(elemMax, op.SinceVersion(), op.In.Data0, op.Out.Max)
}

// VisitMin compiles Min.
func (b *builder) VisitMin(op *ops.Min) error {
	return b.elemVariadic(elemMin, op.SinceVersion(), op.In.Data0, op.Out.Min)
}

// VisitSum compiles Sum.
func (b *builder) VisitSum(op *ops.Sum) error {
	return b.elemVariadic(elemSum, op.SinceVersion(), op.In.Data0, op.Out.Sum)
}

// VisitMean compiles Mean.
func (b *builder) VisitMean(op *ops.Mean) error {
	return b.elemVariadic(elemMean, op.SinceVersion(), op.In.Data0, op.Out.Mean)
}

// elemSameBinary compiles a same-type binary operator with numpy
// broadcasting (legacy: the broadcast/axis attributes before version 7).
func (b *builder) elemSameBinary(op elemOp, legacy bool, broadcast int64, axis *int64, aName, bName, cName string) error {
	k := &elemSameKernel{op: op, threads: b.e.threads}
	return b.elemBinaryNode(legacy, broadcast, axis, aName, bName, cName, func(ta, tb *onnx.Tensor, as, bs, os []int) (*onnx.Tensor, error) {
		return k.computeShapes([]*onnx.Tensor{ta, tb}, [][]int{as, bs}, os)
	})
}

// floorMod is a - floor(a/b)*b on floats, the sign of b's (Python's %),
// with Mod-28's special cases: a zero result takes b's sign, an infinite
// a or a zero b gives NaN, and an infinite b gives a when a has its sign
// (a nonzero) and b otherwise.
func floorMod(a, b float64) float64 {
	m := math.Mod(a, b) // exact; NaN for an infinite a or a zero b
	switch {
	case m == 0:
		return math.Copysign(0, b)
	case (m < 0) != (b < 0):
		return m + b // also b for an infinite b of the other sign
	}
	return m
}

// VisitMod compiles Mod: fmod=0 is integer mod with the divisor's sign
// (floats need fmod=1 before version 28, which defines floor mod on them
// too), fmod=1 is C's fmod with the dividend's sign.
// https://onnx.ai/onnx/operators/onnx__Mod.html
func (b *builder) VisitMod(op *ops.Mod) error {
	var m elemOp
	switch op.Fmod {
	case 0:
		m = elemMod
		if op.SinceVersion() >= 28 {
			m = elemFloorMod
		}
	case 1:
		m = elemFmod
	default:
		return fmt.Errorf("fmod must be 0 or 1, got %d", op.Fmod)
	}
	return b.elemSameBinary(m, false, 0, nil, op.In.A, op.In.B, op.Out.C)
}

// VisitBitShift compiles BitShift: unsigned integers, and from version 28
// signed ones too (an arithmetic right shift; a count that is negative or
// not below the width gives the sign fill).
// https://onnx.ai/onnx/operators/onnx__BitShift.html
func (b *builder) VisitBitShift(op *ops.BitShift) error {
	signed := op.SinceVersion() >= 28
	var m elemOp
	switch op.Direction {
	case "LEFT":
		m = elemShl
		if signed {
			m = elemShlSigned
		}
	case "RIGHT":
		m = elemShr
		if signed {
			m = elemShrSigned
		}
	default:
		if b.probing {
			m = elemShl
			break
		}
		return fmt.Errorf("direction must be LEFT or RIGHT, got %q", op.Direction)
	}
	return b.elemSameBinary(m, false, 0, nil, op.In.X, op.In.Y, op.Out.Z)
}

// VisitBitwiseAnd compiles BitwiseAnd.
func (b *builder) VisitBitwiseAnd(op *ops.BitwiseAnd) error {
	return b.elemSameBinary(elemBitAnd, false, 0, nil, op.In.A, op.In.B, op.Out.C)
}

// VisitBitwiseOr compiles BitwiseOr.
func (b *builder) VisitBitwiseOr(op *ops.BitwiseOr) error {
	return b.elemSameBinary(elemBitOr, false, 0, nil, op.In.A, op.In.B, op.Out.C)
}

// VisitBitwiseXor compiles BitwiseXor.
func (b *builder) VisitBitwiseXor(op *ops.BitwiseXor) error {
	return b.elemSameBinary(elemBitXor, false, 0, nil, op.In.A, op.In.B, op.Out.C)
}
