package onnx

import (
	"fmt"
	"math"
)

// ElementBytes is the size in bytes of one element of a t tensor as the
// Go slice NewTensor makes holds it (a string counts its header only), or
// 0 for a type NewTensor has no slice for.
func ElementBytes(t DataType) int {
	switch t {
	case Double, Int64, Uint64, Complex64:
		return 8
	case Float, Int32, Uint32:
		return 4
	case Int16, Uint16, Float16, BFloat16:
		return 2
	case Int8, Uint8, Bool, Int4, Uint4, Int2, Uint2,
		Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float4E2M1, Float8E8M0:
		return 1
	case Complex128, String:
		return 16
	}
	return 0
}

// TensorBytes is the memory a t tensor of shape takes as NewTensor makes
// it, checked for overflow: a declared shape such as [1000000, 1000000]
// can be measured before anything is allocated.
func TensorBytes(t DataType, shape []int) (int64, error) {
	n, err := ShapeElements(shape)
	if err != nil {
		return 0, err
	}
	size := int64(ElementBytes(t))
	if size > 0 && int64(n) > math.MaxInt64/size {
		return 0, fmt.Errorf("shape %v of %v takes more than %d bytes", shape, t, int64(math.MaxInt64))
	}
	return int64(n) * size, nil
}
