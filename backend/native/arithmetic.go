package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// arithOp is one of the four broadcasting arithmetic operators.
type arithOp int

const (
	opAdd arithOp = iota
	opSub
	opMul
	opDiv
)

func (op arithOp) String() string { return [...]string{"Add", "Sub", "Mul", "Div"}[op] }

// numeric is the set of element types the arithmetic loops are written
// for; float16 and bfloat16 go through float32 (see reducedfloat.go). The
// types are exact (no ~) so that onnx.F16, a uint16 underneath, cannot be
// computed as an integer by mistake.
type numeric interface {
	float32 | float64 | int8 | int16 | int32 | int64 |
		uint8 | uint16 | uint32 | uint64
}

// floatElem is the set of types the float kernels (the GEMM, the
// convolutions) are written for.
type floatElem interface{ float32 | float64 }

// arithKernel computes one broadcasting arithmetic node. It owns its output
// buffer and, for float16/bfloat16, float32 scratch space.
type arithKernel struct {
	op      arithOp
	threads int
	out     outputBuffer
	shape   []int // the output shape of the last run, kept for its storage
	task    any   // arith's parallel task (taskOf)
	wideA   float32Scratch
	wideB   float32Scratch
	wideOut float32Scratch
}

// compute returns a op b with numpy broadcasting.
func (k *arithKernel) compute(a, b *onnx.Tensor) (*onnx.Tensor, error) {
	if a.Type != b.Type {
		return nil, fmt.Errorf("operands have different types %v and %v", a.Type, b.Type)
	}
	shape, err := broadcastShapesInto(k.shape, a.Shape, b.Shape)
	if err != nil {
		return nil, err
	}
	k.shape = shape
	return k.computeInto(a, a.Shape, b, b.Shape, shape)
}

// computeInto writes a op b, with a read as shape aShape and b as bShape
// (both broadcastable to outShape), into the kernel's output buffer.
func (k *arithKernel) computeInto(a *onnx.Tensor, aShape []int, b *onnx.Tensor, bShape, outShape []int) (*onnx.Tensor, error) {
	if err := checkStorage(a); err != nil {
		return nil, err
	}
	out := k.out.tensor(a.Type, outShape)
	var err error
	switch ad := a.Data.(type) {
	case []float32:
		err = arith(k.op, k.threads, &k.task, out.Data.([]float32), ad, aShape, b.Data.([]float32), bShape, outShape)
	case []float64:
		err = arith(k.op, k.threads, &k.task, out.Data.([]float64), ad, aShape, b.Data.([]float64), bShape, outShape)
	case []int8:
		err = arith(k.op, k.threads, &k.task, out.Data.([]int8), ad, aShape, b.Data.([]int8), bShape, outShape)
	case []int16:
		err = arith(k.op, k.threads, &k.task, out.Data.([]int16), ad, aShape, b.Data.([]int16), bShape, outShape)
	case []int32:
		err = arith(k.op, k.threads, &k.task, out.Data.([]int32), ad, aShape, b.Data.([]int32), bShape, outShape)
	case []int64:
		err = arith(k.op, k.threads, &k.task, out.Data.([]int64), ad, aShape, b.Data.([]int64), bShape, outShape)
	case []uint8:
		err = arith(k.op, k.threads, &k.task, out.Data.([]uint8), ad, aShape, b.Data.([]uint8), bShape, outShape)
	case []uint16:
		err = arith(k.op, k.threads, &k.task, out.Data.([]uint16), ad, aShape, b.Data.([]uint16), bShape, outShape)
	case []uint32:
		err = arith(k.op, k.threads, &k.task, out.Data.([]uint32), ad, aShape, b.Data.([]uint32), bShape, outShape)
	case []uint64:
		err = arith(k.op, k.threads, &k.task, out.Data.([]uint64), ad, aShape, b.Data.([]uint64), bShape, outShape)
	case []onnx.F16, []onnx.BF16:
		wa, _ := widenToFloat32(k.wideA.get(a.Len()), a.Data)
		wb, _ := widenToFloat32(k.wideB.get(b.Len()), b.Data)
		wout := k.wideOut.get(out.Len())
		if err = arith(k.op, k.threads, &k.task, wout, wa, aShape, wb, bShape, outShape); err == nil {
			err = narrowFromFloat32(out.Data, wout)
		}
	default:
		return nil, network.Unsupportedf("%v of %v tensors", k.op, a.Type)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// arith writes a op b into dst (of shape outShape), broadcasting a and b,
// with large outputs split over up to threads goroutines. Integer division
// truncates toward zero, as ONNX's reference does (numpy division followed
// by a cast), and division by zero is an error rather than Go's run-time
// panic.
//
// task, when not nil, is the caller's slot for the parallel path's task
// (taskOf), so that a kernel's large same-shape or scalar operations hand
// the workers a task it keeps instead of a new one.
func arith[T numeric](op arithOp, threads int, task *any, dst, a []T, aShape []int, b []T, bShape, outShape []int) error {
	if op == opDiv && isIntegerSlice(b) {
		for _, v := range b {
			if v == 0 {
				return fmt.Errorf("integer division by zero")
			}
		}
	}
	n := len(dst)
	switch {
	case n == 0:
		return nil
	case len(a) == n && len(b) == n:
		// Same element count as the output means neither operand is
		// broadcast (a size-1 dimension can only repeat one element).
		arithSpread(op, threads, task, dst, a, 1, b, 1)
	case len(a) == n && len(b) == 1:
		arithSpread(op, threads, task, dst, a, 1, b, 0)
	case len(a) == 1 && len(b) == n:
		arithSpread(op, threads, task, dst, a, 0, b, 1)
	default:
		walk := newBroadcastWalk(outShape, aShape, bShape)
		rl := walk.rowLen()
		if chunks := par.Chunks(walk.rows(), threads, max(1, par.TaskGrain/rl)); chunks > 1 {
			arithWalkParallel(op, chunks, task, &walk, dst, a, b)
			return nil
		}
		sa, sb := walk.rowStride(0), walk.rowStride(1)
		walk.forEachRow(func(row int, off walkOffsets) {
			arithRow(op, dst[row*rl:(row+1)*rl], a[off[0]:], sa, b[off[1]:], sb)
		})
	}
	return nil
}

// arithSpread computes dst[i] = a[i*sa] op b[i*sb] (strides 0 or 1),
// split over the workers when large.
func arithSpread[T numeric](op arithOp, threads int, slot *any, dst, a []T, sa int, b []T, sb int) {
	n := len(dst)
	chunks := par.Chunks(n, threads, par.TaskGrain)
	if chunks == 1 {
		arithRow(op, dst, a, sa, b, sb)
		return
	}
	var t *arithTask[T]
	if slot != nil {
		t = taskOf[arithTask[T]](slot)
	} else {
		t = new(arithTask[T])
	}
	*t = arithTask[T]{op: op, dst: dst, a: a, b: b, sa: sa, sb: sb, n: n, chunks: chunks}
	par.Spread(chunks, t)
	*t = arithTask[T]{} // hold no tensors between runs
}

// arithTask is arithSpread's parallel work: worker w computes the w-th of
// chunks equal runs of dst; an operand with stride 0 is one element.
type arithTask[T numeric] struct {
	op                arithOp
	dst, a, b         []T
	sa, sb, n, chunks int
}

func (t *arithTask[T]) Work(w int) {
	lo, hi := w*t.n/t.chunks, (w+1)*t.n/t.chunks
	a, b := t.a, t.b
	if t.sa == 1 {
		a = a[lo:hi]
	}
	if t.sb == 1 {
		b = b[lo:hi]
	}
	arithRow(t.op, t.dst[lo:hi], a, t.sa, b, t.sb)
}

// arithWalkParallel is arith's broadcasting walk split into chunks runs
// of rows over goroutines, through the task kept in slot (nil: a new one).
func arithWalkParallel[T numeric](op arithOp, chunks int, slot *any, walk *stridedWalk, dst, a, b []T) {
	var t *arithWalkTask[T]
	if slot != nil {
		t = taskOf[arithWalkTask[T]](slot)
	} else {
		t = new(arithWalkTask[T])
	}
	*t = arithWalkTask[T]{op: op, walk: *walk, dst: dst, a: a, b: b, chunks: chunks}
	par.Spread(chunks, t)
	*t = arithWalkTask[T]{} // hold no tensors between runs
}

// arithWalkTask is arithWalkParallel's work: worker w computes the w-th
// of chunks runs of the walk's rows.
type arithWalkTask[T numeric] struct {
	op        arithOp
	walk      stridedWalk
	dst, a, b []T
	chunks    int
}

func (t *arithWalkTask[T]) Work(w int) {
	rows, n := t.walk.rows(), t.walk.rowLen()
	sa, sb := t.walk.rowStride(0), t.walk.rowStride(1)
	t.walk.forRows(w*rows/t.chunks, (w+1)*rows/t.chunks, func(row int, off walkOffsets) {
		arithRow(t.op, t.dst[row*n:(row+1)*n], t.a[off[0]:], sa, t.b[off[1]:], sb)
	})
}

// isIntegerSlice reports whether T is an integer type, by a property of its
// arithmetic: integer division of 1 by 2 is 0.
func isIntegerSlice[T numeric](_ []T) bool {
	var one T = 1
	return one/(one+one) == 0
}

// arithRow computes len(dst) elements: dst[i] = a[i*sa] op b[i*sb]. Strides
// of 0 (a repeated element) and 1 (contiguous) have their own loops so the
// compiler sees plain indexed loops without multiplications.
func arithRow[T numeric](op arithOp, dst, a []T, sa int, b []T, sb int) {
	n := len(dst)
	switch {
	case sa == 1 && sb == 1:
		a, b = a[:n], b[:n]
		switch op {
		case opAdd:
			for i := range dst {
				dst[i] = a[i] + b[i]
			}
		case opSub:
			for i := range dst {
				dst[i] = a[i] - b[i]
			}
		case opMul:
			for i := range dst {
				dst[i] = a[i] * b[i]
			}
		case opDiv:
			for i := range dst {
				dst[i] = a[i] / b[i]
			}
		}
	case sa == 1 && sb == 0:
		a, y := a[:n], b[0]
		switch op {
		case opAdd:
			for i := range dst {
				dst[i] = a[i] + y
			}
		case opSub:
			for i := range dst {
				dst[i] = a[i] - y
			}
		case opMul:
			for i := range dst {
				dst[i] = a[i] * y
			}
		case opDiv:
			for i := range dst {
				dst[i] = a[i] / y
			}
		}
	case sa == 0 && sb == 1:
		x, b := a[0], b[:n]
		switch op {
		case opAdd:
			for i := range dst {
				dst[i] = x + b[i]
			}
		case opSub:
			for i := range dst {
				dst[i] = x - b[i]
			}
		case opMul:
			for i := range dst {
				dst[i] = x * b[i]
			}
		case opDiv:
			for i := range dst {
				dst[i] = x / b[i]
			}
		}
	default:
		for i := range dst {
			x, y := a[i*sa], b[i*sb]
			switch op {
			case opAdd:
				dst[i] = x + y
			case opSub:
				dst[i] = x - y
			case opMul:
				dst[i] = x * y
			case opDiv:
				dst[i] = x / y
			}
		}
	}
}

// legacyBroadcastShape gives B's shape aligned to A's for the broadcast
// attribute of Add/Sub/Mul/Div before version 7: B's dimensions match A's
// starting at axis (by default, A's trailing dimensions), and B is only ever
// broadcast to A, never the other way.
func legacyBroadcastShape(aShape, bShape []int, axis int64, axisSet bool) ([]int, error) {
	start := len(aShape) - len(bShape)
	if axisSet {
		start = int(axis)
		if start < 0 {
			start += len(aShape)
		}
	}
	if start < 0 || start+len(bShape) > len(aShape) {
		return nil, fmt.Errorf("legacy broadcast of %v to %v at axis %d is out of range", bShape, aShape, start)
	}
	aligned := make([]int, len(aShape))
	for i := range aligned {
		aligned[i] = 1
	}
	for i, d := range bShape {
		if d != aShape[start+i] && d != 1 {
			return nil, fmt.Errorf("legacy broadcast: shape %v does not match %v at axis %d", bShape, aShape, start)
		}
		aligned[start+i] = d
	}
	return aligned, nil
}

// VisitAdd compiles Add.
func (b *builder) VisitAdd(op *ops.Add) error {
	return b.arithmetic(opAdd, op.SinceVersion(), op.In.A, op.In.B, op.Out.C, op.Broadcast, op.Axis)
}

// VisitSub compiles Sub.
func (b *builder) VisitSub(op *ops.Sub) error {
	return b.arithmetic(opSub, op.SinceVersion(), op.In.A, op.In.B, op.Out.C, op.Broadcast, op.Axis)
}

// VisitMul compiles Mul.
func (b *builder) VisitMul(op *ops.Mul) error {
	return b.arithmetic(opMul, op.SinceVersion(), op.In.A, op.In.B, op.Out.C, op.Broadcast, op.Axis)
}

// VisitDiv compiles Div.
func (b *builder) VisitDiv(op *ops.Div) error {
	return b.arithmetic(opDiv, op.SinceVersion(), op.In.A, op.In.B, op.Out.C, op.Broadcast, op.Axis)
}

// arithmetic compiles the four arithmetic operators. From version 7 they
// broadcast like numpy. Before, operands must have the same shape unless
// the broadcast attribute is 1, which lets B (only B) broadcast to A,
// aligned at axis or at A's trailing dimensions.
func (b *builder) arithmetic(op arithOp, since int, aName, bName, cName string, broadcast int64, axis *int64) error {
	x, err := b.input(aName)
	if err != nil {
		return err
	}
	y, err := b.input(bName)
	if err != nil {
		return err
	}
	out := b.output(cName)
	k := &arithKernel{op: op, threads: b.e.threads}
	legacy := since < 7
	if legacy && broadcast != 0 && broadcast != 1 {
		return fmt.Errorf("broadcast must be 0 or 1, got %d", broadcast)
	}
	return b.emit(func(slots []onnx.Value) error {
		ta, err := x.tensor(slots)
		if err != nil {
			return err
		}
		tb, err := y.tensor(slots)
		if err != nil {
			return err
		}
		var res *onnx.Tensor
		switch {
		case !legacy:
			res, err = k.compute(ta, tb)
		case broadcast == 0:
			if !slices.Equal(ta.Shape, tb.Shape) {
				return fmt.Errorf("operands have shapes %v and %v, and broadcast is 0", ta.Shape, tb.Shape)
			}
			res, err = k.compute(ta, tb)
		default:
			if ta.Type != tb.Type {
				return fmt.Errorf("operands have different types %v and %v", ta.Type, tb.Type)
			}
			var aligned []int
			aligned, err = legacyBroadcastShape(ta.Shape, tb.Shape, deref(axis), axis != nil)
			if err == nil {
				res, err = k.computeInto(ta, ta.Shape, tb, aligned, ta.Shape)
			}
		}
		if err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	})
}

// deref returns *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
