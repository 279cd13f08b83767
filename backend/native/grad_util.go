package native

import (
	"fmt"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// Helpers shared by the backward rules (grad_*.go).

// gradScratch is a reusable tensor a backward kernel computes into before
// handing it to gradState.add.
type gradScratch struct{ buf outputBuffer }

// zeros returns the scratch tensor of the given type and shape, zeroed.
func (s *gradScratch) zeros(typ onnx.DataType, shape []int) *onnx.Tensor {
	t := s.buf.tensor(typ, shape)
	switch d := t.Data.(type) {
	case []float32:
		clear(d)
	case []float64:
		clear(d)
	}
	return t
}

// floatTensor checks that a value is a float32 or float64 tensor, the
// types the backward rules compute in.
func floatTensor(v onnx.Value, what string) (*onnx.Tensor, error) {
	t, ok := v.(*onnx.Tensor)
	if !ok || t == nil {
		return nil, fmt.Errorf("%s is %s, not a tensor", what, onnx.DescribeValue(v))
	}
	if t.Type != onnx.Float && t.Type != onnx.Double {
		return nil, network.Unsupportedf("gradients through tensor(%v) (%s)", t.Type, what)
	}
	return t, nil
}

// sumToShape adds src, of shape srcShape, into dst, of shape dstShape,
// summing over the dimensions numpy broadcasting expanded: the gradient of
// a broadcast operand. dstShape must broadcast to srcShape.
func sumToShape[T floatElem](dst []T, dstShape []int, src []T, srcShape []int) {
	if sameShape(dstShape, srcShape) {
		addInto(dst, src)
		return
	}
	if inner, ok := trailingBlock(dstShape, srcShape); ok {
		// dst repeats along leading dimensions only (a bias): add the
		// blocks of src, with no walk to plan (which would allocate).
		for o := 0; o+inner <= len(src); o += inner {
			addInto(dst[:inner], src[o:o+inner])
		}
		return
	}
	w := newStridedWalk(srcShape, rowMajorStrides(srcShape), broadcastStrides(dstShape, srcShape))
	n, ss, ds := w.rowLen(), w.rowStride(0), w.rowStride(1)
	w.forEachRow(func(_ int, off walkOffsets) {
		s, d := off[0], off[1]
		if ds == 0 {
			var acc T
			for i := range n {
				acc += src[s+i*ss]
			}
			dst[d] += acc
			return
		}
		for i := range n {
			dst[d+i*ds] += src[s+i*ss]
		}
	})
}

// trailingBlock reports whether dstShape, without its leading 1s, is the
// trailing part of srcShape, and then its number of elements: src is then
// whole copies of dst, one after the other.
func trailingBlock(dstShape, srcShape []int) (inner int, ok bool) {
	for len(dstShape) > 0 && dstShape[0] == 1 {
		dstShape = dstShape[1:]
	}
	if len(dstShape) > len(srcShape) || !sameShape(dstShape, srcShape[len(srcShape)-len(dstShape):]) {
		return 0, false
	}
	return onnx.NumElements(dstShape), true
}

// legacyOperandShape is the numpy-equivalent shape of operand B of an
// arithmetic node before opset 7: with broadcast=1 and an axis, B is
// aligned at that axis of A, which equals padding B's shape with trailing
// ones.
func legacyOperandShape(bShape []int, aRank int, axis *int64, broadcast int64) []int {
	if broadcast == 0 || axis == nil {
		return bShape
	}
	ax := int(*axis)
	if ax < 0 {
		ax += aRank
	}
	trailing := aRank - ax - len(bShape)
	if trailing <= 0 {
		return bShape
	}
	out := append([]int{}, bShape...)
	for range trailing {
		out = append(out, 1)
	}
	return out
}

// slotInt64s returns the int64 data of a forward value in slot s.
func slotInt64s(slots []onnx.Value, s int, what string) ([]int64, error) {
	t, ok := slots[s].(*onnx.Tensor)
	if !ok || t == nil || t.Type != onnx.Int64 {
		return nil, fmt.Errorf("%s must be an int64 tensor, is %s", what, onnx.DescribeValue(slots[s]))
	}
	return t.Int64s(), nil
}
