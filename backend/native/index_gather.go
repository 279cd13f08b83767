package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// The indexing operators: Gather, GatherElements, GatherND and their
// scatter counterparts. Each resolves its indices into a list of element
// offsets (negative indices wrap; anything else out of range is an error
// naming the index and the bound) and moves blocks of elements with
// shapeMove, so every element type works. TensorScatter (at the end), a
// KV-cache update, writes blocks at per-batch positions along one axis.

// gatherPlan returns Gather's output shape and the source offsets of its
// blocks (each block is the part of data after axis).
func gatherPlan(shape []int, axis int64, indices *onnx.Tensor) ([]int, []int, int, error) {
	return gatherPlanInto(&gatherScratch{}, shape, axis, indices)
}

// gatherScratch holds gatherPlan's slices between runs of a kernel.
type gatherScratch struct {
	wrapped, out, offs []int
}

// gatherPlanInto is gatherPlan with its slices in sc's storage.
func gatherPlanInto(sc *gatherScratch, shape []int, axis int64, indices *onnx.Tensor) ([]int, []int, int, error) {
	if len(shape) == 0 {
		return nil, nil, 0, fmt.Errorf("cannot gather from a scalar")
	}
	a, err := normalizeAxis(axis, len(shape))
	if err != nil {
		return nil, nil, 0, err
	}
	idx, err := shapeIndexInts(indices, "indices")
	if err != nil {
		return nil, nil, 0, err
	}
	dim := shape[a]
	outer, inner := shapeProd(shape[:a]), shapeProd(shape[a+1:])
	wrapped := scratchOf(&sc.wrapped, len(idx))
	for i, v := range idx {
		if wrapped[i], err = shapeWrapIndex(v, dim, "index"); err != nil {
			return nil, nil, 0, fmt.Errorf("%w (axis %d has size %d)", err, a, dim)
		}
	}
	out := append(append(append(sc.out[:0], shape[:a]...), indices.Shape...), shape[a+1:]...)
	offs := slices.Grow(sc.offs[:0], outer*len(wrapped))
	sc.out = out
	for o := range outer {
		base := o * dim * inner
		for _, w := range wrapped {
			offs = append(offs, base+w*inner)
		}
	}
	sc.offs = offs
	return out, offs, inner, nil
}

// gather compiles a gather node: plan resolves the data and indices
// tensors into the output shape, the source offsets of its blocks and the
// block length. Gather, GatherElements and GatherND differ only in plan.
func (b *builder) gather(data, indices, output string, plan func(t, it *onnx.Tensor) ([]int, []int, int, error)) error {
	x, err := b.input(data)
	if err != nil {
		return err
	}
	ind, err := b.input(indices)
	if err != nil {
		return err
	}
	out := b.output(output)
	threads := b.e.threads
	var buf outputBuffer
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		it, err := ind.tensor(slots)
		if err != nil {
			return err
		}
		shape, offs, block, err := plan(t, it)
		if err != nil {
			return err
		}
		res := buf.tensor(t.Type, shape)
		if err := shapeGatherIntoN(res, t, offs, block, threads); err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	})
}

// VisitGather compiles Gather (every version: negative indices wrap).
func (b *builder) VisitGather(op *ops.Gather) error {
	axis := op.Axis
	sc := new(gatherScratch) // the plan's slices, reused while the node runs
	return b.gather(op.In.Data, op.In.Indices, op.Out.Output, func(t, it *onnx.Tensor) ([]int, []int, int, error) {
		return gatherPlanInto(sc, t.Shape, axis, it)
	})
}

// elementsOffsets resolves the indices of GatherElements and
// ScatterElements: for every element of indices (same rank as data, each
// dimension no larger than data's except along axis), the offset in data
// of the element it names.
func elementsOffsets(shape []int, axis int64, indices *onnx.Tensor) ([]int, error) {
	rank := len(shape)
	a, err := normalizeAxis(axis, rank)
	if err != nil {
		return nil, err
	}
	if len(indices.Shape) != rank {
		return nil, fmt.Errorf("indices have shape %v, data has shape %v (ranks differ)", indices.Shape, shape)
	}
	for d := range rank {
		if d != a && indices.Shape[d] > shape[d] {
			return nil, fmt.Errorf("indices of shape %v exceed data of shape %v in dimension %d", indices.Shape, shape, d)
		}
	}
	idx, err := shapeIndexInts(indices, "indices")
	if err != nil {
		return nil, err
	}
	strides := rowMajorStrides(shape)
	offs := make([]int, len(idx))
	if len(idx) == 0 {
		return offs, nil
	}
	counter := make([]int, rank)
	base := 0 // offset of the current coordinate with axis coordinate 0
	for i, v := range idx {
		w, err := shapeWrapIndex(v, shape[a], "index")
		if err != nil {
			return nil, fmt.Errorf("%w (axis %d has size %d)", err, a, shape[a])
		}
		offs[i] = base + w*strides[a]
		for d := rank - 1; d >= 0; d-- {
			counter[d]++
			if d != a {
				base += strides[d]
			}
			if counter[d] < indices.Shape[d] {
				break
			}
			if d != a {
				base -= strides[d] * counter[d]
			}
			counter[d] = 0
		}
	}
	return offs, nil
}

// VisitGatherElements compiles GatherElements.
func (b *builder) VisitGatherElements(op *ops.GatherElements) error {
	axis := op.Axis
	return b.gather(op.In.Data, op.In.Indices, op.Out.Output, func(t, it *onnx.Tensor) ([]int, []int, int, error) {
		offs, err := elementsOffsets(t.Shape, axis, it)
		return it.Shape, offs, 1, err
	})
}

// ndOffsets resolves GatherND/ScatterND indices: indices of shape
// [batch..., rest..., m] name slices of data (whose first batchDims
// dimensions match the batch dimensions) by their m leading coordinates
// after the batch. It returns the offsets of the named slices, the slice
// length, and the shape of the index tuples (indices' shape without m).
func ndOffsets(shape []int, indices *onnx.Tensor, batchDims int) ([]int, int, error) {
	q, r := len(indices.Shape), len(shape)
	if q < 1 {
		return nil, 0, fmt.Errorf("indices must have rank at least 1, got shape %v", indices.Shape)
	}
	if batchDims < 0 || batchDims >= min(q, r) {
		return nil, 0, fmt.Errorf("batch_dims %d must be less than the ranks of data %v and indices %v", batchDims, shape, indices.Shape)
	}
	for d := range batchDims {
		if shape[d] != indices.Shape[d] {
			return nil, 0, fmt.Errorf("batch dimension %d differs: data %v, indices %v", d, shape, indices.Shape)
		}
	}
	m := indices.Shape[q-1]
	if m < 1 || m > r-batchDims {
		return nil, 0, fmt.Errorf("indices' last dimension %d must be in [1, %d] for data %v and batch_dims %d", m, r-batchDims, shape, batchDims)
	}
	idx, err := shapeIndexInts(indices, "indices")
	if err != nil {
		return nil, 0, err
	}
	strides := rowMajorStrides(shape)
	block := shapeProd(shape[batchDims+m:])
	batchSize := shapeProd(shape[batchDims:])
	tuples := len(idx) / m
	perBatch := max(1, shapeProd(indices.Shape[batchDims:q-1]))
	offs := make([]int, tuples)
	for t := range tuples {
		off := (t / perBatch) * batchSize
		for j := range m {
			dim := shape[batchDims+j]
			w, err := shapeWrapIndex(idx[t*m+j], dim, "index")
			if err != nil {
				return nil, 0, fmt.Errorf("%w (axis %d has size %d)", err, batchDims+j, dim)
			}
			off += w * strides[batchDims+j]
		}
		offs[t] = off
	}
	return offs, block, nil
}

// VisitGatherND compiles GatherND; batch_dims exists from version 12.
func (b *builder) VisitGatherND(op *ops.GatherND) error {
	batchDims := int(op.BatchDims)
	return b.gather(op.In.Data, op.In.Indices, op.Out.Output, func(t, it *onnx.Tensor) ([]int, []int, int, error) {
		offs, block, err := ndOffsets(t.Shape, it, batchDims)
		if err != nil {
			return nil, nil, 0, err
		}
		q := len(it.Shape)
		shape := slices.Concat(it.Shape[:q-1], t.Shape[batchDims+it.Shape[q-1]:])
		return shape, offs, block, nil
	})
}

// scatterKernel holds the inputs and buffer of a scatter node.
type scatterKernel struct {
	data, indices, updates valueRef
	out                    valueRef
	buf                    outputBuffer
	red                    shapeReduction
}

// run copies data into the output and writes updates at the offsets that
// resolve returns.
func (k *scatterKernel) run(slots []onnx.Value, resolve func(data, indices, updates *onnx.Tensor) ([]int, int, error)) error {
	t, err := k.data.tensor(slots)
	if err != nil {
		return err
	}
	it, err := k.indices.tensor(slots)
	if err != nil {
		return err
	}
	ut, err := k.updates.tensor(slots)
	if err != nil {
		return err
	}
	if ut.Type != t.Type {
		return fmt.Errorf("updates have type %v, data has %v", ut.Type, t.Type)
	}
	offs, block, err := resolve(t, it, ut)
	if err != nil {
		return err
	}
	res := k.buf.tensor(t.Type, t.Shape)
	if err := shapeCopyAll(res, t); err != nil {
		return err
	}
	if err := shapeScatterInto(res, ut, offs, block, k.red); err != nil {
		return err
	}
	k.out.set(slots, res)
	return nil
}

// newScatterKernel resolves the names of a scatter node.
func (b *builder) newScatterKernel(data, indices, updates, out, reduction string) (*scatterKernel, error) {
	red, err := shapeParseReduction(reduction)
	if err != nil {
		return nil, err
	}
	k := &scatterKernel{red: red, out: b.output(out)}
	if k.data, err = b.input(data); err != nil {
		return nil, err
	}
	if k.indices, err = b.input(indices); err != nil {
		return nil, err
	}
	if k.updates, err = b.input(updates); err != nil {
		return nil, err
	}
	return k, nil
}

// scatterElements compiles ScatterElements and the deprecated Scatter.
func (b *builder) scatterElements(data, indices, updates, out, reduction string, axis int64) error {
	k, err := b.newScatterKernel(data, indices, updates, out, reduction)
	if err != nil {
		return err
	}
	resolve := func(t, it, ut *onnx.Tensor) ([]int, int, error) {
		if !slices.Equal(it.Shape, ut.Shape) {
			return nil, 0, fmt.Errorf("updates have shape %v, indices have %v", ut.Shape, it.Shape)
		}
		offs, err := elementsOffsets(t.Shape, axis, it)
		return offs, 1, err
	}
	return b.emit(func(slots []onnx.Value) error { return k.run(slots, resolve) })
}

// VisitScatter compiles Scatter (versions 9 and 11), ScatterElements under
// its old name.
func (b *builder) VisitScatter(op *ops.Scatter) error {
	return b.scatterElements(op.In.Data, op.In.Indices, op.In.Updates, op.Out.Output, "none", op.Axis)
}

// VisitScatterElements compiles ScatterElements; reduction exists from
// version 16 (add, mul) and 18 (max, min).
func (b *builder) VisitScatterElements(op *ops.ScatterElements) error {
	if err := scatterReductionVersion(op.Reduction, op.SinceVersion()); err != nil {
		return err
	}
	return b.scatterElements(op.In.Data, op.In.Indices, op.In.Updates, op.Out.Output, op.Reduction, op.Axis)
}

// scatterReductionVersion rejects max and min before version 18.
func scatterReductionVersion(red string, since int) error {
	if (red == "max" || red == "min") && since < 18 {
		return fmt.Errorf("reduction %q needs version 18, the node resolves to version %d", red, since)
	}
	return nil
}

// VisitScatterND compiles ScatterND; reduction exists from version 16
// (add, mul) and 18 (max, min).
func (b *builder) VisitScatterND(op *ops.ScatterND) error {
	if err := scatterReductionVersion(op.Reduction, op.SinceVersion()); err != nil {
		return err
	}
	k, err := b.newScatterKernel(op.In.Data, op.In.Indices, op.In.Updates, op.Out.Output, op.Reduction)
	if err != nil {
		return err
	}
	resolve := func(t, it, ut *onnx.Tensor) ([]int, int, error) {
		offs, block, err := ndOffsets(t.Shape, it, 0)
		if err != nil {
			return nil, 0, err
		}
		q := len(it.Shape)
		want := slices.Concat(it.Shape[:q-1], t.Shape[it.Shape[q-1]:])
		if !slices.Equal(ut.Shape, want) {
			return nil, 0, fmt.Errorf("updates have shape %v, want %v for data %v and indices %v", ut.Shape, want, t.Shape, it.Shape)
		}
		return offs, block, nil
	}
	return b.emit(func(slots []onnx.Value) error { return k.run(slots, resolve) })
}

// tensorScatterKernel computes TensorScatter (version 24,
// https://onnx.ai/onnx/operators/onnx__TensorScatter.html): a copy of
// past_cache [batch, ..., max_seq, ...] with update [batch, ..., seq, ...]
// written along axis (the sequence axis, never the batch one) at
// positions write_indices[b] + s (default 0); mode "linear" requires them
// to fit, "circular" wraps them modulo max_seq.
type tensorScatterKernel struct {
	axis     int64
	circular bool
	out      outputBuffer
}

func (k *tensorScatterKernel) compute(cache, update, idx *onnx.Tensor) (*onnx.Tensor, error) {
	if cache.Type != update.Type {
		return nil, fmt.Errorf("past_cache is %v but update is %v", cache.Type, update.Type)
	}
	r := len(cache.Shape)
	ax, err := normalizeAxis(k.axis, r)
	if err != nil {
		return nil, err
	}
	if ax == 0 {
		return nil, fmt.Errorf("axis %d is the batch axis", k.axis)
	}
	if len(update.Shape) != r {
		return nil, fmt.Errorf("update %v and past_cache %v differ in rank", update.Shape, cache.Shape)
	}
	for i := range r {
		if i != ax && update.Shape[i] != cache.Shape[i] {
			return nil, fmt.Errorf("update %v and past_cache %v differ outside axis %d", update.Shape, cache.Shape, ax)
		}
	}
	B, maxSeq, seq := cache.Shape[0], cache.Shape[ax], update.Shape[ax]
	if seq > maxSeq {
		return nil, fmt.Errorf("update of %d positions does not fit a cache of %d", seq, maxSeq)
	}
	starts := make([]int64, B)
	if idx != nil {
		v, err := intsOf(idx)
		if err != nil || len(v) != B {
			return nil, fmt.Errorf("write_indices must hold %d integers, got %v %v", B, idx.Type, idx.Shape)
		}
		copy(starts, v)
	}
	for b, s := range starts {
		if s < 0 || s >= int64(max(maxSeq, 1)) || (!k.circular && s+int64(seq) > int64(maxSeq)) {
			return nil, fmt.Errorf("write_indices[%d] = %d: %d positions do not fit a cache of %d", b, s, seq, maxSeq)
		}
	}
	out := k.out.tensor(cache.Type, cache.Shape)
	onnx.CopySlice(out.Data, cache.Data)
	mid := onnx.NumElements(cache.Shape[1:ax])
	inner := onnx.NumElements(cache.Shape[ax+1:])
	for b := range B {
		for m := range mid {
			for s := range seq {
				p := int(starts[b]) + s
				if k.circular {
					p %= maxSeq
				}
				src := ((b*mid+m)*seq + s) * inner
				dst := ((b*mid+m)*maxSeq + p) * inner
				if err := tensorScatterCopy(out.Data, dst, update.Data, src, inner); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// tensorScatterCopy copies n elements between two slices of one type.
func tensorScatterCopy(dst any, di int, src any, si, n int) error {
	switch d := dst.(type) {
	case []float32:
		copy(d[di:di+n], src.([]float32)[si:si+n])
	case []float64:
		copy(d[di:di+n], src.([]float64)[si:si+n])
	case []onnx.F16:
		copy(d[di:di+n], src.([]onnx.F16)[si:si+n])
	case []onnx.BF16:
		copy(d[di:di+n], src.([]onnx.BF16)[si:si+n])
	case []int8:
		copy(d[di:di+n], src.([]int8)[si:si+n])
	case []int16:
		copy(d[di:di+n], src.([]int16)[si:si+n])
	case []int32:
		copy(d[di:di+n], src.([]int32)[si:si+n])
	case []int64:
		copy(d[di:di+n], src.([]int64)[si:si+n])
	case []uint8:
		copy(d[di:di+n], src.([]uint8)[si:si+n])
	case []uint16:
		copy(d[di:di+n], src.([]uint16)[si:si+n])
	case []uint32:
		copy(d[di:di+n], src.([]uint32)[si:si+n])
	case []uint64:
		copy(d[di:di+n], src.([]uint64)[si:si+n])
	case []bool:
		copy(d[di:di+n], src.([]bool)[si:si+n])
	case []string:
		copy(d[di:di+n], src.([]string)[si:si+n])
	default:
		return network.Unsupportedf("TensorScatter of %T", dst)
	}
	return nil
}

// VisitTensorScatter compiles TensorScatter.
func (b *builder) VisitTensorScatter(op *ops.TensorScatter) error {
	cacheIn, err := b.input(op.In.PastCache)
	if err != nil {
		return err
	}
	updIn, err := b.input(op.In.Update)
	if err != nil {
		return err
	}
	idxIn, err := b.optionalInput(op.In.WriteIndices)
	if err != nil {
		return err
	}
	k := &tensorScatterKernel{axis: op.Axis}
	switch op.Mode {
	case "linear":
	case "circular":
		k.circular = true
	default:
		return fmt.Errorf("mode %q is not linear or circular", op.Mode)
	}
	y := b.output(op.Out.PresentCache)
	return b.emit(func(slots []onnx.Value) error {
		c, err := cacheIn.tensor(slots)
		if err != nil {
			return err
		}
		if err := checkStorage(c); err != nil {
			return err
		}
		u, err := updIn.tensor(slots)
		if err != nil {
			return err
		}
		idx, err := idxIn.optionalTensor(slots)
		if err != nil {
			return err
		}
		out, err := k.compute(c, u, idx)
		if err != nil {
			return err
		}
		y.set(slots, out)
		return nil
	})
}
