package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// The generic drivers of the elementwise family (elem_*.go): one for
// functions of one operand, one for broadcasting functions of two, one for
// three (Where), and a fold for the variadic operators. The operator
// chooses its per-element function once per call (after one type switch),
// and the driver runs it over flat slices, with same-shape and scalar
// operands on plain loops and everything else on a stridedWalk
// (broadcast.go), large outputs split over goroutines.

// elemGrain is the least number of elements worth a goroutine for the
// elementwise family's functions, which are often transcendental.
const elemGrain = par.Grain / 8

// elemMap writes dst[i] = f(src[i]).
func elemMap[I, O any](threads int, dst []O, src []I, f func(I) O) {
	dst = dst[:len(src)]
	if par.Chunks(len(src), threads, elemGrain) == 1 {
		for i, v := range src {
			dst[i] = f(v)
		}
		return
	}
	par.For(len(src), threads, elemGrain, func(lo, hi int) {
		s, d := src[lo:hi], dst[lo:hi]
		for i, v := range s {
			d[i] = f(v)
		}
	})
}

// elemBroadcast2 writes dst[i] = f(a[.], b[.]) over outShape, where a has
// shape aShape and b has shape bShape, both broadcastable to outShape.
// dst may alias a when aShape equals outShape.
func elemBroadcast2[A, B, O any](threads int, dst []O, a []A, aShape []int, b []B, bShape []int, outShape []int, f func(A, B) O) {
	elemBroadcastRows(threads, dst, a, aShape, b, bShape, outShape, func(d []O, x []A, sx int, y []B, sy int) {
		switch {
		case sx == 1 && sy == 1:
			x, y := x[:len(d)], y[:len(d)]
			for i := range d {
				d[i] = f(x[i], y[i])
			}
		case sx == 1 && sy == 0:
			x, v := x[:len(d)], y[0]
			for i := range d {
				d[i] = f(x[i], v)
			}
		case sx == 0 && sy == 1:
			u, y := x[0], y[:len(d)]
			for i := range d {
				d[i] = f(u, y[i])
			}
		default:
			for i := range d {
				d[i] = f(x[i*sx], y[i*sy])
			}
		}
	})
}

// elemBroadcastRows is the driver under elemBroadcast2: it hands row a
// whole row at a time, dst's elements with each operand's first element
// and its step (0 for a repeated element, 1 for contiguous), so that an
// operator with a hot loop can write it without a call per element.
func elemBroadcastRows[A, B, O any](threads int, dst []O, a []A, aShape []int, b []B, bShape []int, outShape []int, row func(d []O, x []A, sx int, y []B, sy int)) {
	n := len(dst)
	serial := par.Chunks(n, threads, elemGrain) == 1 // build no closure for For
	switch {
	case n == 0:
	case len(a) == n && len(b) == n && serial:
		row(dst, a, 1, b, 1)
	case len(a) == n && len(b) == 1 && serial:
		row(dst, a, 1, b, 0)
	case len(a) == 1 && len(b) == n && serial:
		row(dst, a, 0, b, 1)
	case len(a) == n && len(b) == n:
		par.For(n, threads, elemGrain, func(lo, hi int) { row(dst[lo:hi], a[lo:hi], 1, b[lo:hi], 1) })
	case len(a) == n && len(b) == 1:
		par.For(n, threads, elemGrain, func(lo, hi int) { row(dst[lo:hi], a[lo:hi], 1, b, 0) })
	case len(a) == 1 && len(b) == n:
		par.For(n, threads, elemGrain, func(lo, hi int) { row(dst[lo:hi], a, 0, b[lo:hi], 1) })
	default:
		walk := newBroadcastWalk(outShape, aShape, bShape)
		rl := walk.rowLen()
		if minRows := max(1, elemGrain/rl); par.Chunks(walk.rows(), threads, minRows) > 1 {
			elemWalkRowsParallel(threads, minRows, walk, dst, a, b, row)
			return
		}
		sa, sb := walk.rowStride(0), walk.rowStride(1)
		walk.forEachRow(func(r int, off walkOffsets) {
			row(dst[r*rl:(r+1)*rl], a[off[0]:], sa, b[off[1]:], sb)
		})
	}
}

// elemWalkRowsParallel is elemBroadcastRows's walk split over goroutines,
// in a function of its own so that only this path moves the walk to the
// heap (captured by For's closure).
func elemWalkRowsParallel[A, B, O any](threads, minRows int, walk stridedWalk, dst []O, a []A, b []B, row func(d []O, x []A, sx int, y []B, sy int)) {
	rl, sa, sb := walk.rowLen(), walk.rowStride(0), walk.rowStride(1)
	par.For(walk.rows(), threads, minRows, func(lo, hi int) {
		walk.forRows(lo, hi, func(r int, off walkOffsets) {
			row(dst[r*rl:(r+1)*rl], a[off[0]:], sa, b[off[1]:], sb)
		})
	})
}

// elemBroadcast3 is elemBroadcast2 for three operands (Where).
func elemBroadcast3[A, B, C, O any](threads int, dst []O, a []A, aShape []int, b []B, bShape []int, c []C, cShape []int, outShape []int, f func(A, B, C) O) {
	n := len(dst)
	if n == 0 {
		return
	}
	if len(a) == n && len(b) == n && len(c) == n {
		par.For(n, threads, elemGrain, func(lo, hi int) {
			x, y, z, d := a[lo:hi], b[lo:hi], c[lo:hi], dst[lo:hi]
			for i := range d {
				d[i] = f(x[i], y[i], z[i])
			}
		})
		return
	}
	walk := newBroadcastWalk(outShape, aShape, bShape, cShape)
	elemWalk3(threads, walk, dst, a, b, c, f)
}

// elemWalk3 runs elemBroadcast3's walk, split over goroutines when large.
func elemWalk3[A, B, C, O any](threads int, walk stridedWalk, dst []O, a []A, b []B, c []C, f func(A, B, C) O) {
	rl, sa, sb, sc := walk.rowLen(), walk.rowStride(0), walk.rowStride(1), walk.rowStride(2)
	par.For(walk.rows(), threads, max(1, elemGrain/rl), func(lo, hi int) {
		walk.forRows(lo, hi, func(row int, off walkOffsets) {
			d := dst[row*rl : (row+1)*rl]
			ia, ib, ic := off[0], off[1], off[2]
			for i := range d {
				d[i] = f(a[ia], b[ib], c[ic])
				ia += sa
				ib += sb
				ic += sc
			}
		})
	})
}

// elemFold writes the left fold of a row function over the inputs,
// broadcast together to outShape, into dst: f(f(in0, in1), in2)... One
// input is broadcast (copied) as it is.
func elemFold[T any](threads int, dst []T, ins [][]T, shapes [][]int, outShape []int, row func(d, x []T, sx int, y []T, sy int)) {
	if len(ins) == 1 {
		elemBroadcast2(threads, dst, ins[0], shapes[0], ins[0], shapes[0], outShape, func(x, _ T) T { return x })
		return
	}
	elemBroadcastRows(threads, dst, ins[0], shapes[0], ins[1], shapes[1], outShape, row)
	for i := 2; i < len(ins); i++ {
		elemBroadcastRows(threads, dst, dst, outShape, ins[i], shapes[i], outShape, row)
	}
}

// elemLegacyShapes gives the shapes two operands are read with by a binary
// operator of a version before 7: without broadcast they must be equal;
// with it, B is aligned to A at axis (or A's trailing dimensions). From
// version 7 (legacy false) numpy broadcasting applies.
func elemLegacyShapes(legacy bool, broadcast int64, axis *int64, a, b []int) (aShape, bShape, outShape []int, err error) {
	switch {
	case !legacy:
		out, err := broadcastShapes(a, b)
		return a, b, out, err
	case broadcast == 0:
		if !slices.Equal(a, b) {
			return nil, nil, nil, fmt.Errorf("operands have shapes %v and %v, and broadcast is 0", a, b)
		}
		return a, b, a, nil
	}
	aligned, err := legacyBroadcastShape(a, b, deref(axis), axis != nil)
	return a, aligned, a, err
}

// elemTypedInput is one operand of a same-type operator.
type elemWide struct {
	scratch []float32Scratch
	out     float32Scratch
}

// widen returns the float32 values of the reduced-float tensors ts (one
// scratch buffer each, kept between runs) and a float32 buffer of n
// elements for the result.
func (w *elemWide) widen(ts []*onnx.Tensor, n int) ([][]float32, []float32) {
	if len(w.scratch) < len(ts) {
		w.scratch = make([]float32Scratch, len(ts))
	}
	out := make([][]float32, len(ts))
	for i, t := range ts {
		out[i], _ = widenToFloat32(w.scratch[i].get(t.Len()), t.Data)
	}
	return out, w.out.get(n)
}

// elemSameType checks that every operand has the type of the first and a
// storage the kernels handle.
func elemSameType(name string, ts ...*onnx.Tensor) error {
	for _, t := range ts {
		if err := checkStorage(t); err != nil {
			return err
		}
		if t.Type != ts[0].Type {
			return fmt.Errorf("%s: operands have different types %v and %v", name, ts[0].Type, t.Type)
		}
	}
	return nil
}

// elemIsFloat reports whether T is a floating-point type.
func elemIsFloat[T numeric]() bool {
	var half T = 1
	half /= 2
	return half != 0
}

// elemIsSigned reports whether T can hold negative values.
func elemIsSigned[T numeric]() bool {
	var z T
	return z-1 < 0
}

// elemSlices gathers the typed backing slices of tensors known to hold T.
func elemSlices[T any](ts []*onnx.Tensor) [][]T {
	out := make([][]T, len(ts))
	for i, t := range ts {
		out[i] = t.Data.([]T)
	}
	return out
}

// elemShapes gathers the shapes of tensors.
func elemShapes(ts []*onnx.Tensor) [][]int {
	out := make([][]int, len(ts))
	for i, t := range ts {
		out[i] = t.Shape
	}
	return out
}

// elemUnsupported is the error for a type an elementwise operator lacks.
func elemUnsupported(op string, t onnx.DataType) error {
	return network.Unsupportedf("%s of %v tensors", op, t)
}
