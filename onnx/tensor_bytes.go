package onnx

import (
	"fmt"
	"math"
)

// ElementBytes is the size in bytes of one element of a t tensor as the
// Go slice NewTensor makes holds it: its raw width, a byte at least (the
// 2- and 4-bit types take one each), and a string's header for strings;
// 0 for a type NewTensor has no slice for.
func ElementBytes(t DataType) int {
	if t == String {
		return 16
	}
	if bits := elemBits(t); bits > 0 {
		return max(bits/8, 1)
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
