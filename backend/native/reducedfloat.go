package native

import (
	"fmt"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// Kernels compute float16 and bfloat16 in float32 and round the result
// back once (onnx.F16From, onnx.BF16From: nearest, ties to even), as ONNX's
// reference implementation does with numpy. The helpers here widen a whole
// backing slice into a float32 scratch slice and narrow it again, so the
// arithmetic loops only ever see float32.

// widenToFloat32 converts a slice of a reduced float type (float16,
// bfloat16, the float8 kinds, float4) into dst, which must have the same
// length, and returns dst.
func widenToFloat32(dst []float32, src any) ([]float32, error) {
	switch s := src.(type) {
	case []onnx.F16:
		widenEach(dst, s)
	case []onnx.BF16:
		widenEach(dst, s)
	case []onnx.F8E4M3FN:
		widenEach(dst, s)
	case []onnx.F8E4M3FNUZ:
		widenEach(dst, s)
	case []onnx.F8E5M2:
		widenEach(dst, s)
	case []onnx.F8E5M2FNUZ:
		widenEach(dst, s)
	case []onnx.F4E2M1:
		widenEach(dst, s)
	case []onnx.F8E8M0:
		widenEach(dst, s)
	default:
		return nil, fmt.Errorf("cannot widen %T to float32", src)
	}
	return dst, nil
}

// widenEach writes the float32 value of every element of s into dst.
func widenEach[T interface{ Float32() float32 }](dst []float32, s []T) {
	dst = dst[:len(s)]
	for i, v := range s {
		dst[i] = v.Float32()
	}
}

// narrowFromFloat32 rounds src into dst, a []onnx.F16 or []onnx.BF16 of the
// same length, to nearest with ties to even.
func narrowFromFloat32(dst any, src []float32) error {
	switch d := dst.(type) {
	case []onnx.F16:
		for i, f := range src {
			d[i] = onnx.F16From(f)
		}
	case []onnx.BF16:
		for i, f := range src {
			d[i] = onnx.BF16From(f)
		}
	default:
		return fmt.Errorf("cannot narrow float32 to %T", dst)
	}
	return nil
}

// float32Scratch is a reusable float32 buffer.
type float32Scratch []float32

// get returns the buffer resized to n elements, growing it when needed.
func (s *float32Scratch) get(n int) []float32 {
	if cap(*s) < n {
		*s = make([]float32, n)
	}
	*s = (*s)[:n]
	return *s
}

// checkStorage rejects tensors whose type shares a Go slice type with
// another (int4 and int2 are stored in []int8, uint4 and uint2 in []uint8):
// a kernel written for the slice type would compute them in the wrong
// range, so they are unsupported until a kernel handles them explicitly.
func checkStorage(t *onnx.Tensor) error {
	if onnx.TypeOfSlice(t.Data) != t.Type {
		return network.Unsupportedf("tensors of type %v", t.Type)
	}
	return nil
}

// float32Data returns t's data as float32: the slice itself for float32,
// float16 and bfloat16 widened into scratch, nil for an omitted tensor. For
// kernels defined in float32 only (CausalConvWithState, LinearAttention).
func float32Data(t *onnx.Tensor, scratch *float32Scratch) ([]float32, error) {
	if t == nil {
		return nil, nil
	}
	switch d := t.Data.(type) {
	case []float32:
		return d, nil
	case []onnx.F16, []onnx.BF16:
		return widenToFloat32(scratch.get(t.Len()), d)
	}
	return nil, network.Unsupportedf("tensor(%v) here (float, float16 or bfloat16)", t.Type)
}

// float64Data returns t's data as float64: the slice itself for double,
// float32, float16 and bfloat16 widened into scratch. For kernels that
// compute in float64 (the signal transforms, the attention family).
func float64Data(t *onnx.Tensor, scratch *[]float64) ([]float64, error) {
	if d, ok := t.Data.([]float64); ok {
		return d, nil
	}
	n := t.Len()
	if cap(*scratch) < n {
		*scratch = make([]float64, n)
	}
	dst := (*scratch)[:n]
	switch t.Data.(type) {
	case []float32, []onnx.F16, []onnx.BF16:
		float64sInto(dst, t.Data)
		return dst, nil
	}
	return nil, network.Unsupportedf("tensor(%v) here (double, float, float16 or bfloat16)", t.Type)
}

// storeFloat32s writes float32 results into out (float32, float16 or
// bfloat16).
func storeFloat32s(out *onnx.Tensor, v []float32) error {
	if d, ok := out.Data.([]float32); ok {
		copy(d, v)
		return nil
	}
	return narrowFromFloat32(out.Data, v)
}
