package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// Helpers every operator family needs. Keep them here rather than writing
// a private copy per family.

// normalizeAxis maps an axis in [-rank, rank) to [0, rank).
func normalizeAxis(axis int64, rank int) (int, error) {
	a := axis
	if a < 0 {
		a += int64(rank)
	}
	if a < 0 || a >= int64(rank) {
		return 0, fmt.Errorf("axis %d is out of range for rank %d", axis, rank)
	}
	return int(a), nil
}

// normalizeAxes normalizes a list of axes and rejects repeats.
func normalizeAxes(axes []int64, rank int) ([]int, error) {
	out := make([]int, len(axes))
	seen := make([]bool, rank)
	for i, a := range axes {
		n, err := normalizeAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, fmt.Errorf("axis %d is repeated in %v", a, axes)
		}
		seen[n] = true
		out[i] = n
	}
	return out, nil
}

// intsOf reads an integer tensor that carries indices or sizes (a shape,
// axes, pads, repeats input) as int64 values.
func intsOf(t *onnx.Tensor) ([]int64, error) {
	switch d := t.Data.(type) {
	case []int64:
		return d, nil
	case []int32:
		out := make([]int64, len(d))
		for i, v := range d {
			out[i] = int64(v)
		}
		return out, nil
	case []int16:
		out := make([]int64, len(d))
		for i, v := range d {
			out[i] = int64(v)
		}
		return out, nil
	case []int8:
		out := make([]int64, len(d))
		for i, v := range d {
			out[i] = int64(v)
		}
		return out, nil
	case []uint8:
		out := make([]int64, len(d))
		for i, v := range d {
			out[i] = int64(v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("expected an integer tensor, got tensor(%v)", t.Type)
}

// float64sOf converts any real-number or boolean tensor to float64 values.
// It allocates: use it for operators whose cost is not in the element loop
// (small parameter inputs, rarely used operators), never in a hot kernel.
func float64sOf(t *onnx.Tensor) ([]float64, error) {
	out := make([]float64, t.Len())
	if !float64sInto(out, t.Data) {
		return nil, network.Unsupportedf("tensor(%v) as real numbers", t.Type)
	}
	return out, nil
}

// float64sInto writes the elements of data (a real-number or boolean
// slice, float16 and bfloat16 included) as float64 into dst, which has
// their length, and reports false for another element type. It is the one
// widening loop of float64sOf and of the kernels that widen into their own
// scratch (loss.go, quant.go, signal_dft.go), which first narrow the types
// they accept.
func float64sInto(dst []float64, data any) bool {
	switch d := data.(type) {
	case []float32:
		for i, v := range d {
			dst[i] = float64(v)
		}
	case []float64:
		copy(dst, d)
	case []int8:
		for i, v := range d {
			dst[i] = float64(v)
		}
	case []int16:
		for i, v := range d {
			dst[i] = float64(v)
		}
	case []int32:
		for i, v := range d {
			dst[i] = float64(v)
		}
	case []int64:
		for i, v := range d {
			dst[i] = float64(v)
		}
	case []uint8:
		for i, v := range d {
			dst[i] = float64(v)
		}
	case []uint16:
		for i, v := range d {
			dst[i] = float64(v)
		}
	case []uint32:
		for i, v := range d {
			dst[i] = float64(v)
		}
	case []uint64:
		for i, v := range d {
			dst[i] = float64(v)
		}
	case []bool:
		for i, v := range d {
			if v {
				dst[i] = 1
			} else {
				dst[i] = 0
			}
		}
	case []onnx.F16:
		for i, v := range d {
			dst[i] = float64(v.Float32())
		}
	case []onnx.BF16:
		for i, v := range d {
			dst[i] = float64(v.Float32())
		}
	default:
		return false
	}
	return true
}

// scratchOf resizes *buf to n elements, reallocating it when its capacity
// is short, and returns it; the contents are unspecified. withLen is the
// same for a slice held by value.
func scratchOf[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// withLen returns s resized to n elements, reallocated when its capacity
// is short; the contents are unspecified.
func withLen[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// optionalData returns t's elements as []T, or nil for a nil t (an
// omitted optional input). t's type must already be checked to be T's.
func optionalData[T floatElem](t *onnx.Tensor) []T {
	if t == nil {
		return nil
	}
	return t.Data.([]T)
}

// storeFloat64s rounds v into t, a float32, float64, float16 or bfloat16
// tensor of v's length, and reports whether t had one of those types.
func storeFloat64s(t *onnx.Tensor, v []float64) bool {
	switch d := t.Data.(type) {
	case []float32:
		for i, x := range v {
			d[i] = float32(x)
		}
	case []float64:
		copy(d, v)
	case []onnx.F16:
		for i, x := range v {
			d[i] = onnx.F16From(float32(x))
		}
	case []onnx.BF16:
		for i, x := range v {
			d[i] = onnx.BF16From(float32(x))
		}
	default:
		return false
	}
	return true
}

// tensorFromFloat64s builds a tensor of type dt and the given shape from
// float64 values, converting as a C cast would (truncation toward zero for
// integers, rounding to nearest-even for reduced floats). The counterpart
// of float64sOf, with the same caveat about hot loops.
func tensorFromFloat64s(dt onnx.DataType, shape []int, v []float64) (*onnx.Tensor, error) {
	t := &onnx.Tensor{Type: dt, Shape: append([]int{}, shape...), Data: onnx.MakeSlice(dt, len(v))}
	switch d := t.Data.(type) {
	case []float32:
		for i, x := range v {
			d[i] = float32(x)
		}
	case []float64:
		copy(d, v)
	case []int8:
		for i, x := range v {
			d[i] = int8(x)
		}
	case []int16:
		for i, x := range v {
			d[i] = int16(x)
		}
	case []int32:
		for i, x := range v {
			d[i] = int32(x)
		}
	case []int64:
		for i, x := range v {
			d[i] = int64(x)
		}
	case []uint8:
		for i, x := range v {
			d[i] = uint8(x)
		}
	case []uint16:
		for i, x := range v {
			d[i] = uint16(x)
		}
	case []uint32:
		for i, x := range v {
			d[i] = uint32(x)
		}
	case []uint64:
		for i, x := range v {
			d[i] = uint64(x)
		}
	case []bool:
		for i, x := range v {
			d[i] = x != 0 && !math.IsNaN(x)
		}
	case []onnx.F16:
		for i, x := range v {
			d[i] = onnx.F16From(float32(x))
		}
	case []onnx.BF16:
		for i, x := range v {
			d[i] = onnx.BF16From(float32(x))
		}
	default:
		return nil, network.Unsupportedf("tensor(%v) from real numbers", dt)
	}
	return t, nil
}
