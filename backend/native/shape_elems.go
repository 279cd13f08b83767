package native

import (
	"fmt"
	"runtime"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// Element-moving helpers of the shape and indexing operators. These
// operators never compute on their elements, so one type switch per call
// (shapeMove) instantiates a generic loop for any backing slice type,
// strings and bools included.

// shapeMoveKind is one of the element movements shapeMove performs.
type shapeMoveKind int

const (
	// shapeGather: dst[k*block+j] = src[offs[k]+j] for every k < len(offs).
	shapeGather shapeMoveKind = iota
	// shapeScatter: dst[offs[k]+j] = src[k*block+j] for every k < len(offs).
	shapeScatter
	// shapeFill: every element of dst becomes src[0].
	shapeFill
	// shapeStrided: a strided copy of a shape-sized window whose source
	// strides may be negative (Slice with negative steps); the source
	// offset is that of the window's first element.
	shapeStrided
	// shapeZeroRuns: dst[offs[2k] : offs[2k]+offs[2k+1]] becomes the zero
	// value (0, false, "").
	shapeZeroRuns
	// shapeSetAt: dst[o] = src[0] for every o in offs.
	shapeSetAt
)

// shapeMoveSpec describes one movement.
type shapeMoveSpec struct {
	kind  shapeMoveKind
	offs  []int
	block int
	// threads > 1 lets a large gather run on that many goroutines.
	threads int
	// strided copies
	shape      []int
	dst, src   stridedView
	srcStrides []int
}

// shapeMove runs spec from src into dst, two backing slices of the same Go
// type.
func shapeMove(spec *shapeMoveSpec, dst, src any) error {
	switch d := dst.(type) {
	case []float32:
		return shapeMoveTyped(spec, d, src)
	case []float64:
		return shapeMoveTyped(spec, d, src)
	case []int8:
		return shapeMoveTyped(spec, d, src)
	case []int16:
		return shapeMoveTyped(spec, d, src)
	case []int32:
		return shapeMoveTyped(spec, d, src)
	case []int64:
		return shapeMoveTyped(spec, d, src)
	case []uint8:
		return shapeMoveTyped(spec, d, src)
	case []uint16:
		return shapeMoveTyped(spec, d, src)
	case []uint32:
		return shapeMoveTyped(spec, d, src)
	case []uint64:
		return shapeMoveTyped(spec, d, src)
	case []bool:
		return shapeMoveTyped(spec, d, src)
	case []string:
		return shapeMoveTyped(spec, d, src)
	case []complex64:
		return shapeMoveTyped(spec, d, src)
	case []complex128:
		return shapeMoveTyped(spec, d, src)
	case []onnx.F16:
		return shapeMoveTyped(spec, d, src)
	case []onnx.BF16:
		return shapeMoveTyped(spec, d, src)
	case []onnx.F8E4M3FN:
		return shapeMoveTyped(spec, d, src)
	case []onnx.F8E4M3FNUZ:
		return shapeMoveTyped(spec, d, src)
	case []onnx.F8E5M2:
		return shapeMoveTyped(spec, d, src)
	case []onnx.F8E5M2FNUZ:
		return shapeMoveTyped(spec, d, src)
	case []onnx.F4E2M1:
		return shapeMoveTyped(spec, d, src)
	case []onnx.F8E8M0:
		return shapeMoveTyped(spec, d, src)
	}
	return fmt.Errorf("cannot move elements of %T", dst)
}

func shapeMoveTyped[T any](spec *shapeMoveSpec, dst []T, srcAny any) error {
	src, ok := srcAny.([]T)
	if !ok {
		return fmt.Errorf("cannot move %T into %T", srcAny, dst)
	}
	b := spec.block
	switch spec.kind {
	case shapeGather:
		threads := max(spec.threads, 1)
		n, minItems := len(spec.offs), max(1, par.Grain/max(b, 1))
		if par.Chunks(n, threads, minItems) == 1 {
			gatherBlocks(dst, src, spec.offs, b, 0, n) // no closure for For to allocate
			break
		}
		offs := spec.offs
		par.For(n, threads, minItems, func(lo, hi int) { gatherBlocks(dst, src, offs, b, lo, hi) })
	case shapeScatter:
		if b == 1 {
			for k, o := range spec.offs {
				dst[o] = src[k]
			}
			return nil
		}
		for k, o := range spec.offs {
			copy(dst[o:o+b], src[k*b:(k+1)*b])
		}
	case shapeFill:
		if len(dst) == 0 {
			return nil
		}
		v := src[0]
		for i := range dst {
			dst[i] = v
		}
	case shapeStrided:
		if onnx.NumElements(spec.shape) == 0 {
			return nil
		}
		walk := newStridedWalk(spec.shape, spec.dst.strides, spec.src.strides)
		n, ds, ss := walk.rowLen(), walk.rowStride(0), walk.rowStride(1)
		walk.forEachRow(func(_ int, off walkOffsets) {
			d, s := spec.dst.offset+off[0], spec.src.offset+off[1]
			for i := range n {
				dst[d+i*ds] = src[s+i*ss]
			}
		})
	case shapeZeroRuns:
		for k := 0; k+1 < len(spec.offs); k += 2 {
			clear(dst[spec.offs[k] : spec.offs[k]+spec.offs[k+1]])
		}
	case shapeSetAt:
		for _, o := range spec.offs {
			dst[o] = src[0]
		}
	}
	return nil
}

// shapeGatherInto fills out with blocks of src read at offs, on the
// calling goroutine.
func shapeGatherInto(out *onnx.Tensor, src *onnx.Tensor, offs []int, block int) error {
	return shapeMove(&shapeMoveSpec{kind: shapeGather, offs: offs, block: block}, out.Data, src.Data)
}

// gatherBlocks copies blocks [lo, hi) of b elements from their offsets
// offs in src to their places in dst.
func gatherBlocks[T any](dst, src []T, offs []int, b, lo, hi int) {
	if b == 1 {
		for k, o := range offs[lo:hi] {
			dst[lo+k] = src[o]
		}
		return
	}
	for k := lo; k < hi; k++ {
		o := offs[k]
		copy(dst[k*b:(k+1)*b], src[o:o+b])
	}
}

// shapeGatherIntoN is shapeGatherInto spread over up to threads goroutines
// when the output is large (0: GOMAXPROCS).
func shapeGatherIntoN(out *onnx.Tensor, src *onnx.Tensor, offs []int, block, threads int) error {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	spec := shapeMoveSpec{kind: shapeGather, offs: offs, block: block, threads: threads}
	return shapeMove(&spec, out.Data, src.Data)
}

// shapeFillValue fills out with the single element of v (a one-element
// backing slice of out's Go type).
func shapeFillValue(out *onnx.Tensor, v any) error {
	return shapeMove(&shapeMoveSpec{kind: shapeFill}, out.Data, v)
}

// shapeCopyAll copies src's backing slice into dst's (same type and
// length).
func shapeCopyAll(dst, src *onnx.Tensor) error {
	if onnx.CopySlice(dst.Data, src.Data) != src.Len() && src.Len() != 0 {
		return fmt.Errorf("cannot copy tensor(%v) into tensor(%v)", src.Type, dst.Type)
	}
	return nil
}

// shapeZeroOf returns a one-element backing slice holding the zero value
// of data type dt (0, false, "").
func shapeZeroOf(dt onnx.DataType) any { return onnx.MakeSlice(dt, 1) }

// shapeMaxElements bounds the element count of a tensor whose shape comes
// from a tensor's values (ConstantOfShape, Expand, Tile, Range, ...), so
// that a hostile shape is an error instead of an allocation failure.
const shapeMaxElements = 1 << 34

// shapeFromInts checks a requested shape (no negative dimension, element
// count within shapeMaxElements) and converts it to ints.
func shapeFromInts(dims []int64) ([]int, error) {
	out := make([]int, len(dims))
	n := int64(1)
	zero := false
	for i, d := range dims {
		if d < 0 {
			return nil, fmt.Errorf("shape %v has negative dimension %d", dims, d)
		}
		if d == 0 {
			zero = true
		}
		out[i] = int(d)
	}
	if zero {
		return out, nil
	}
	for _, d := range dims {
		if d > shapeMaxElements || n > shapeMaxElements/d {
			return nil, fmt.Errorf("shape %v has more than %d elements", dims, int64(shapeMaxElements))
		}
		n *= d
	}
	return out, nil
}

// shapeIndexInts reads an index tensor (int32 or int64, as the index
// operators allow) as int64 values.
func shapeIndexInts(t *onnx.Tensor, what string) ([]int64, error) {
	switch d := t.Data.(type) {
	case []int64:
		return d, nil
	case []int32:
		out := make([]int64, len(d))
		for i, v := range d {
			out[i] = int64(v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s must be an int32 or int64 tensor, got tensor(%v)", what, t.Type)
}

// shapeWrapIndex maps an index in [-bound, bound) to [0, bound); anything
// else is an error naming the index and the bound.
func shapeWrapIndex(i int64, bound int, what string) (int, error) {
	j := i
	if j < 0 {
		j += int64(bound)
	}
	if j < 0 || j >= int64(bound) {
		return 0, fmt.Errorf("%s %d is out of range [-%d, %d)", what, i, bound, bound)
	}
	return int(j), nil
}

// shapeScalarInt reads a one-element integer tensor.
func shapeScalarInt(t *onnx.Tensor, what string) (int64, error) {
	v, err := intsOf(t)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("%s must hold one value, has shape %v", what, t.Shape)
	}
	return v[0], nil
}

// shapeProd is the product of dims (1 when empty).
func shapeProd(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// shapeReduction is the reduction attribute of ScatterElements and
// ScatterND.
type shapeReduction int

const (
	shapeReduceNone shapeReduction = iota
	shapeReduceAdd
	shapeReduceMul
	shapeReduceMax
	shapeReduceMin
)

func shapeParseReduction(s string) (shapeReduction, error) {
	switch s {
	case "", "none":
		return shapeReduceNone, nil
	case "add":
		return shapeReduceAdd, nil
	case "mul":
		return shapeReduceMul, nil
	case "max":
		return shapeReduceMax, nil
	case "min":
		return shapeReduceMin, nil
	}
	return 0, network.Unsupportedf("reduction %q", s)
}

// shapeScatterInto writes blocks of updates into dst at offs, combining
// them with the existing values by red. dst already holds a copy of the
// data.
func shapeScatterInto(dst, updates *onnx.Tensor, offs []int, block int, red shapeReduction) error {
	if red == shapeReduceNone {
		return shapeMove(&shapeMoveSpec{kind: shapeScatter, offs: offs, block: block}, dst.Data, updates.Data)
	}
	switch d := dst.Data.(type) {
	case []float32:
		return shapeScatterReduce(d, updates.Data, offs, block, red)
	case []float64:
		return shapeScatterReduce(d, updates.Data, offs, block, red)
	case []int8:
		return shapeScatterReduce(d, updates.Data, offs, block, red)
	case []int16:
		return shapeScatterReduce(d, updates.Data, offs, block, red)
	case []int32:
		return shapeScatterReduce(d, updates.Data, offs, block, red)
	case []int64:
		return shapeScatterReduce(d, updates.Data, offs, block, red)
	case []uint8:
		return shapeScatterReduce(d, updates.Data, offs, block, red)
	case []uint16:
		return shapeScatterReduce(d, updates.Data, offs, block, red)
	case []uint32:
		return shapeScatterReduce(d, updates.Data, offs, block, red)
	case []uint64:
		return shapeScatterReduce(d, updates.Data, offs, block, red)
	case []onnx.F16, []onnx.BF16:
		wd, _ := widenToFloat32(make([]float32, dst.Len()), dst.Data)
		wu, _ := widenToFloat32(make([]float32, updates.Len()), updates.Data)
		if err := shapeScatterReduce(wd, wu, offs, block, red); err != nil {
			return err
		}
		return narrowFromFloat32(dst.Data, wd)
	}
	return network.Unsupportedf("scatter reduction on tensor(%v)", dst.Type)
}

func shapeScatterReduce[T numeric](dst []T, srcAny any, offs []int, block int, red shapeReduction) error {
	src, ok := srcAny.([]T)
	if !ok {
		return fmt.Errorf("updates %T do not match data %T", srcAny, dst)
	}
	for k, o := range offs {
		d, s := dst[o:o+block], src[k*block:(k+1)*block]
		switch red {
		case shapeReduceAdd:
			for j := range d {
				d[j] += s[j]
			}
		case shapeReduceMul:
			for j := range d {
				d[j] *= s[j]
			}
		case shapeReduceMax:
			for j := range d {
				d[j] = shapeMaxNaN(d[j], s[j])
			}
		case shapeReduceMin:
			for j := range d {
				d[j] = shapeMinNaN(d[j], s[j])
			}
		}
	}
	return nil
}

// shapeMaxNaN is max that propagates NaN like numpy.maximum.
func shapeMaxNaN[T numeric](a, b T) T {
	if a != a { //nolint:staticcheck // NaN test
		return a
	}
	if b != b || b > a {
		return b
	}
	return a
}

// shapeMinNaN is min that propagates NaN like numpy.minimum.
func shapeMinNaN[T numeric](a, b T) T {
	if a != a { //nolint:staticcheck // NaN test
		return a
	}
	if b != b || b < a {
		return b
	}
	return a
}
