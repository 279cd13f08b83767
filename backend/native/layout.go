package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// This file holds the data-movement primitive that layout operators share
// (Transpose and Concat now; Slice, Split, Expand, Tile, Pad later): a
// strided copy between two views of backing slices, done by one generic
// loop per element type.

// rowMajorStrides returns the element strides of a contiguous tensor.
func rowMajorStrides(shape []int) []int {
	strides := make([]int, len(shape))
	step := 1
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = step
		step *= shape[i]
	}
	return strides
}

// stridedView is a window onto a backing slice: element (i0, i1, ...) of
// the window is data[offset + i0*strides[0] + i1*strides[1] + ...].
type stridedView struct {
	offset  int
	strides []int
}

// stridedCopy copies the elements of a shape-sized window of src into a
// window of dst. dst and src are backing slices of the same Go type.
func stridedCopy(dst any, dv stridedView, src any, sv stridedView, shape []int) error {
	if onnx.NumElements(shape) == 0 {
		return nil
	}
	switch d := dst.(type) {
	case []float32:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []float64:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []int8:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []int16:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []int32:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []int64:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []uint8:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []uint16:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []uint32:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []uint64:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []bool:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []string:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []complex64:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []complex128:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []onnx.F16:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []onnx.BF16:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []onnx.F8E4M3FN:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []onnx.F8E4M3FNUZ:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []onnx.F8E5M2:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []onnx.F8E5M2FNUZ:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []onnx.F4E2M1:
		return stridedCopyTyped(d, dv, src, sv, shape)
	case []onnx.F8E8M0:
		return stridedCopyTyped(d, dv, src, sv, shape)
	}
	return fmt.Errorf("cannot copy elements of %T", dst)
}

func stridedCopyTyped[T any](dst []T, dv stridedView, srcAny any, sv stridedView, shape []int) error {
	src, ok := srcAny.([]T)
	if !ok {
		return fmt.Errorf("cannot copy %T into %T", srcAny, dst)
	}
	walk := newStridedWalk(shape, dv.strides, sv.strides)
	if stridedCopyNested(dst[dv.offset:], src[sv.offset:], &walk) {
		return nil
	}
	n, ds, ss := walk.rowLen(), walk.rowStride(0), walk.rowStride(1)
	walk.forEachRow(func(_ int, off walkOffsets) {
		d, s := dst[dv.offset+off[0]:], src[sv.offset+off[1]:]
		if ds == 1 && ss == 1 {
			copy(d[:n], s[:n])
			return
		}
		for i := range n {
			d[i*ds] = s[i*ss]
		}
	})
	return nil
}

// nestedRank is the most merged dimensions stridedCopyNested walks.
const nestedRank = 4

// stridedCopyNested is stridedCopyTyped's walk as plain nested loops, for
// walks of at most nestedRank merged dimensions with no negative stride
// (every Transpose and most copies): the rows of a Transpose are often
// short (an attention head's 16 values), and a loop per dimension costs
// less per row than forEachRow's callback and odometer. When the two
// innermost dimensions swap which side is contiguous (a transpose of the
// last two axes), it copies them as a 2-D transpose instead, in blocks
// that keep both sides' cache lines in use. dst and src start at the
// views' offsets. It reports false, copying nothing, for any other walk.
func stridedCopyNested[T any](dst, src []T, w *stridedWalk) bool {
	r := w.rank
	if r > nestedRank {
		return false
	}
	var dims, ds, ss [nestedRank]int
	for i := range nestedRank {
		dims[i] = 1
	}
	for d := range r {
		at := nestedRank - r + d
		dims[at], ds[at], ss[at] = w.dim(d), w.stride(0, d), w.stride(1, d)
		if ds[at] < 0 || ss[at] < 0 {
			return false
		}
	}
	n := dims[3]
	if dims[2] > 1 && ds[3] == 1 && ss[3] != 1 && ss[2] == 1 {
		for i0 := range dims[0] {
			for i1 := range dims[1] {
				transpose2D(dst[i0*ds[0]+i1*ds[1]:], ds[2], src[i0*ss[0]+i1*ss[1]:], ss[3], dims[2], n)
			}
		}
		return true
	}
	for i0 := range dims[0] {
		for i1 := range dims[1] {
			for i2 := range dims[2] {
				d := dst[i0*ds[0]+i1*ds[1]+i2*ds[2]:]
				s := src[i0*ss[0]+i1*ss[1]+i2*ss[2]:]
				switch {
				case ds[3] == 1 && ss[3] == 1:
					copy(d[:n], s[:n])
				case ds[3] == 1:
					d = d[:n]
					for i := range d {
						d[i] = s[i*ss[3]]
					}
				default:
					for i := range n {
						d[i*ds[3]] = s[i*ss[3]]
					}
				}
			}
		}
	}
	return true
}

// transpose2D writes dst[i·ldd+j] = src[j·lds+i] for i < rows, j < cols,
// eight columns at a time: each pass reads eight rows of src along i
// (contiguous) and writes eight consecutive elements of each row of dst.
func transpose2D[T any](dst []T, ldd int, src []T, lds, rows, cols int) {
	const block = 8
	j := 0
	for ; j+block <= cols; j += block {
		s0, s1, s2, s3 := src[j*lds:], src[(j+1)*lds:], src[(j+2)*lds:], src[(j+3)*lds:]
		s4, s5, s6, s7 := src[(j+4)*lds:], src[(j+5)*lds:], src[(j+6)*lds:], src[(j+7)*lds:]
		s0, s1, s2, s3 = s0[:rows], s1[:rows], s2[:rows], s3[:rows]
		s4, s5, s6, s7 = s4[:rows], s5[:rows], s6[:rows], s7[:rows]
		for i := range rows {
			d := dst[i*ldd+j : i*ldd+j+block]
			d[0], d[1], d[2], d[3] = s0[i], s1[i], s2[i], s3[i]
			d[4], d[5], d[6], d[7] = s4[i], s5[i], s6[i], s7[i]
		}
	}
	for ; j < cols; j++ {
		s := src[j*lds:]
		s = s[:rows]
		for i, v := range s {
			dst[i*ldd+j] = v
		}
	}
}

// transposeShape checks a permutation (nil or empty: reverse the axes) and
// returns it with the transposed shape.
func transposeShape(shape []int, perm []int64) ([]int, []int, error) {
	return transposeShapeInto(nil, nil, shape, perm)
}

// transposeShapeInto is transposeShape writing the permutation into pDst's
// storage and the shape into outDst's.
func transposeShapeInto(pDst, outDst, shape []int, perm []int64) ([]int, []int, error) {
	rank := len(shape)
	p := slices.Grow(pDst[:0], rank)[:rank]
	if len(perm) == 0 {
		for i := range p {
			p[i] = rank - 1 - i
		}
	} else {
		if len(perm) != rank {
			return nil, nil, fmt.Errorf("perm %v has %d entries for a tensor of rank %d", perm, len(perm), rank)
		}
		for i, a := range perm {
			if a < 0 || int(a) >= rank || slices.Contains(perm[:i], a) {
				return nil, nil, fmt.Errorf("perm %v is not a permutation of 0..%d", perm, rank-1)
			}
			p[i] = int(a)
		}
	}
	out := slices.Grow(outDst[:0], rank)[:rank]
	for i, a := range p {
		out[i] = shape[a]
	}
	return p, out, nil
}

// intsOfLen returns n ints: buf's when it is long enough (a caller's stack
// array), else new ones.
func intsOfLen(buf []int, n int) []int {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]int, n)
}

// rowMajorStridesInto writes shape's row-major strides into strides
// (len(shape) long) and returns it.
func rowMajorStridesInto(strides, shape []int) []int {
	step := 1
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = step
		step *= shape[i]
	}
	return strides
}

// transposeInto writes x transposed by perm into out, whose shape is the
// transposed shape: output axis i walks input axis perm[i].
func transposeInto(out, x *onnx.Tensor, perm []int) error {
	var inBuf, srcBuf, outBuf [walkInline]int
	inStrides := rowMajorStridesInto(intsOfLen(inBuf[:], len(x.Shape)), x.Shape)
	srcStrides := intsOfLen(srcBuf[:], len(perm))
	for i, a := range perm {
		srcStrides[i] = inStrides[a]
	}
	outStrides := rowMajorStridesInto(intsOfLen(outBuf[:], len(out.Shape)), out.Shape)
	return stridedCopy(out.Data, stridedView{0, outStrides}, x.Data, stridedView{0, srcStrides}, out.Shape)
}

// concatShape checks that the inputs agree on every dimension but axis
// (negative counts from the end) and returns the normalized axis and the
// shape of the result.
func concatShape(inputs []*onnx.Tensor, axis int64) (int, []int, error) {
	return concatShapeInto(nil, inputs, axis)
}

// concatShapeInto is concatShape writing the shape into dst's storage.
func concatShapeInto(dst []int, inputs []*onnx.Tensor, axis int64) (int, []int, error) {
	if len(inputs) == 0 {
		return 0, nil, fmt.Errorf("no inputs to concatenate")
	}
	first := inputs[0]
	rank := len(first.Shape)
	a := int(axis)
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		return 0, nil, fmt.Errorf("axis %d is out of range for rank %d", axis, rank)
	}
	shape := append(dst[:0], first.Shape...)
	shape[a] = 0
	for k, in := range inputs {
		if in.Type != first.Type {
			return 0, nil, fmt.Errorf("input %d has type %v, input 0 has %v", k, in.Type, first.Type)
		}
		if len(in.Shape) != rank {
			return 0, nil, fmt.Errorf("input %d has shape %v, input 0 has %v (ranks differ)", k, in.Shape, first.Shape)
		}
		for d := range rank {
			if d != a && in.Shape[d] != first.Shape[d] {
				return 0, nil, fmt.Errorf("input %d has shape %v, input 0 has %v (dimension %d differs)", k, in.Shape, first.Shape, d)
			}
		}
		shape[a] += in.Shape[a]
	}
	return a, shape, nil
}

// concatInto copies the inputs side by side along axis into out.
func concatInto(out *onnx.Tensor, inputs []*onnx.Tensor, axis int) error {
	var outBuf, inBuf [walkInline]int
	outStrides := rowMajorStridesInto(intsOfLen(outBuf[:], len(out.Shape)), out.Shape)
	offset := 0
	for _, in := range inputs {
		err := stridedCopy(out.Data, stridedView{offset * outStrides[axis], outStrides},
			in.Data, stridedView{0, rowMajorStridesInto(intsOfLen(inBuf[:], len(in.Shape)), in.Shape)}, in.Shape)
		if err != nil {
			return err
		}
		offset += in.Shape[axis]
	}
	return nil
}

// reshapeTarget resolves a Reshape shape: -1 (at most once) takes what is
// left of the element count; 0 copies the input's dimension at that index,
// unless allowZero is set, when it is a literal 0 (and may not be combined
// with -1).
func reshapeTarget(in []int, requested []int64, allowZero bool) ([]int, error) {
	return reshapeTargetInto(nil, in, requested, allowZero)
}

// reshapeTargetInto is reshapeTarget writing into dst's storage.
func reshapeTargetInto(dst, in []int, requested []int64, allowZero bool) ([]int, error) {
	out := slices.Grow(dst[:0], len(requested))[:len(requested)]
	clear(out)
	inferred := -1
	known := 1
	hasZero := false
	for i, d := range requested {
		switch {
		case d == -1:
			if inferred >= 0 {
				return nil, fmt.Errorf("shape %v has more than one -1", requested)
			}
			inferred = i
			continue
		case d == 0 && !allowZero:
			if i >= len(in) {
				return nil, fmt.Errorf("shape %v copies dimension %d, but the input %v has rank %d", requested, i, in, len(in))
			}
			out[i] = in[i]
		case d < 0:
			return nil, fmt.Errorf("shape %v has invalid dimension %d", requested, d)
		default:
			out[i] = int(d)
		}
		if out[i] == 0 {
			hasZero = true
		}
		known *= out[i]
	}
	total := onnx.NumElements(in)
	if inferred >= 0 {
		if allowZero && hasZero {
			return nil, fmt.Errorf("shape %v combines 0 and -1 with allowzero set", requested)
		}
		if known == 0 || total%known != 0 {
			return nil, fmt.Errorf("cannot reshape %v to %v: %d elements do not divide evenly", in, requested, total)
		}
		out[inferred] = total / known
	} else if known != total {
		return nil, fmt.Errorf("cannot reshape %v (%d elements) to %v (%d elements)", in, total, out, known)
	}
	return out, nil
}

// VisitTranspose compiles Transpose; without perm it reverses the axes.
func (b *builder) VisitTranspose(op *ops.Transpose) error {
	x, err := b.input(op.In.Data)
	if err != nil {
		return err
	}
	perm := slices.Clone(op.Perm)
	var buf outputBuffer
	var p, shape []int // kept for their storage
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Transposed), func(t *onnx.Tensor) (*onnx.Tensor, error) {
		var err error
		p, shape, err = transposeShapeInto(p, shape, t.Shape, perm)
		if err != nil {
			return nil, err
		}
		out := buf.tensor(t.Type, shape)
		return out, transposeInto(out, t, p)
	}))
}

// VisitConcat compiles Concat. Version 1 defaults the axis to 1; from
// version 4 the axis is required, and negative axes count from the end.
func (b *builder) VisitConcat(op *ops.Concat) error {
	ins, err := b.inputs(op.In.Inputs)
	if err != nil {
		return err
	}
	if len(ins) == 0 && !b.probing {
		return fmt.Errorf("Concat needs at least one input")
	}
	axis := int64(1)
	switch {
	case op.Axis != nil:
		axis = *op.Axis
	case op.SinceVersion() >= 4 && !b.probing:
		return fmt.Errorf("attribute axis is required from version 4")
	}
	out := b.output(op.Out.ConcatResult)
	var buf outputBuffer
	tensors := make([]*onnx.Tensor, len(ins))
	var shape []int // kept for its storage
	return b.emit(func(slots []onnx.Value) error {
		for i, in := range ins {
			t, err := in.tensor(slots)
			if err != nil {
				return err
			}
			tensors[i] = t
		}
		a, s, err := concatShapeInto(shape, tensors, axis)
		if err != nil {
			return err
		}
		shape = s
		res := buf.tensor(tensors[0].Type, shape)
		if err := concatInto(res, tensors, a); err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	})
}

// VisitReshape compiles Reshape: the shape is an attribute before version
// 5 and an int64 input from version 5; allowzero exists from version 14.
// The result shares the input's backing slice, as no kernel writes into
// its inputs.
func (b *builder) VisitReshape(op *ops.Reshape) error {
	x, err := b.input(op.In.Data)
	if err != nil {
		return err
	}
	out := b.output(op.Out.Reshaped)
	allowZero := op.Allowzero == 1
	if op.SinceVersion() < 5 {
		requested := slices.Clone(op.Shape)
		return b.emit(viewKernel(x, out, func(dst []int, t *onnx.Tensor, _ []onnx.Value) ([]int, error) {
			return reshapeTargetInto(dst, t.Shape, requested, false)
		}))
	}
	shapeIn, err := b.input(op.In.Shape)
	if err != nil {
		return err
	}
	return b.emit(viewKernel(x, out, func(dst []int, t *onnx.Tensor, slots []onnx.Value) ([]int, error) {
		s, err := shapeIn.tensor(slots)
		if err != nil {
			return nil, err
		}
		requested := s.Int64s()
		if s.Type != onnx.Int64 || len(s.Shape) != 1 {
			return nil, fmt.Errorf("shape input %q must be a 1-D int64 tensor, got tensor(%v)%v", shapeIn.name, s.Type, s.Shape)
		}
		return reshapeTargetInto(dst, t.Shape, requested, allowZero)
	}))
}

// viewKernel is the kernel of the operators that change only a tensor's
// shape (Reshape, Flatten, Squeeze, Unsqueeze): the output shares x's
// backing slice, with the shape shapeOf computes (into dst's storage) from
// x and the node's other inputs.
//
// The kernel keeps one tensor header and one shape, re-pointed at each
// run's input, so a view allocates nothing; as with outputBuffer, this is
// safe because nothing outside the plan holds a slot's tensor across runs
// (Inference, Fetch and subgraph results are copies).
func viewKernel(x, out valueRef, shapeOf func(dst []int, t *onnx.Tensor, slots []onnx.Value) ([]int, error)) kernel {
	view := new(onnx.Tensor)
	var shape []int
	return func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		s, err := shapeOf(shape, t, slots)
		if err != nil {
			return err
		}
		shape = s
		*view = onnx.Tensor{Type: t.Type, Shape: s, Data: t.Data}
		out.set(slots, view)
		return nil
	}
}
