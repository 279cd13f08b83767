package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rules of the indexing operators. Gathers scatter-add the
// gradient back to the elements they read (an element read twice gets
// both contributions); scatters pass the gradient to data except where
// updates overwrote it, and to each update from the position it was
// written to (with duplicate indices only the last write, which is the
// one the forward kept, gets it). Indices are never differentiated.

// gradShapeIndices reads an index input.
func gradShapeIndices(slots []onnx.Value, slot int) (*onnx.Tensor, error) {
	t, ok := slots[slot].(*onnx.Tensor)
	if !ok || t == nil {
		return nil, fmt.Errorf("indices are %s, not a tensor", onnx.DescribeValue(slots[slot]))
	}
	return t, nil
}

// gradShapeScatterAdd adds src's blocks into dst: dst[offs[k]+j] +=
// src[k*block+j].
func gradShapeScatterAdd[T floatElem](dst, src []T, offs []int, block int) {
	for k, o := range offs {
		addInto(dst[o:o+block], src[k*block:(k+1)*block])
	}
}

// gradShapeScatterAddTensor dispatches gradShapeScatterAdd.
func gradShapeScatterAddTensor(dst, src *onnx.Tensor, offs []int, block int) error {
	if len(offs)*block != src.Len() {
		return fmt.Errorf("gradient of %d elements for %d blocks of %d", src.Len(), len(offs), block)
	}
	switch d := dst.Data.(type) {
	case []float32:
		gradShapeScatterAdd(d, src.Data.([]float32), offs, block)
	case []float64:
		gradShapeScatterAdd(d, src.Data.([]float64), offs, block)
	default:
		return network.Unsupportedf("gradients of tensor(%v)", dst.Type)
	}
	return nil
}

// VisitGather: gradient rows are added back at the rows they came from.
func (gb *gradBuilder) VisitGather(op *ops.Gather) error {
	x, ind, y := gb.slot(op.In.Data), gb.slot(op.In.Indices), gb.slot(op.Out.Output)
	axis := op.Axis
	var scratch gradScratch
	var wrapped []int
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		it, err := gradShapeIndices(slots, ind)
		if err != nil {
			return err
		}
		if len(xt.Shape) == 0 {
			return fmt.Errorf("cannot gather from a scalar")
		}
		a, err := normalizeAxis(axis, len(xt.Shape))
		if err != nil {
			return err
		}
		idx, err := shapeIndexInts(it, "indices")
		if err != nil {
			return err
		}
		dim := xt.Shape[a]
		wrapped = withLen(wrapped, len(idx))
		for i, v := range idx {
			if wrapped[i], err = shapeWrapIndex(v, dim, "index"); err != nil {
				return err
			}
		}
		outer, inner := shapeProd(xt.Shape[:a]), shapeProd(xt.Shape[a+1:])
		if gy.Len() != outer*len(idx)*inner {
			return fmt.Errorf("gradient of shape %v for Gather of %v by indices %v", gy.Shape, xt.Shape, it.Shape)
		}
		gx := scratch.zeros(xt.Type, xt.Shape)
		switch d := gx.Data.(type) {
		case []float32:
			gradGatherAdd(d, gy.Data.([]float32), wrapped, outer, dim, inner)
		case []float64:
			gradGatherAdd(d, gy.Data.([]float64), wrapped, outer, dim, inner)
		}
		return g.add(x, gx)
	})
}

func gradGatherAdd[T floatElem](gx, gy []T, idx []int, outer, dim, inner int) {
	n := len(idx)
	for o := range outer {
		base := o * dim * inner
		for k, w := range idx {
			src := gy[(o*n+k)*inner : (o*n+k+1)*inner]
			addInto(gx[base+w*inner:base+(w+1)*inner], src)
		}
	}
}

// VisitGatherElements: every gradient element goes back to the element
// its index named.
func (gb *gradBuilder) VisitGatherElements(op *ops.GatherElements) error {
	x, ind, y := gb.slot(op.In.Data), gb.slot(op.In.Indices), gb.slot(op.Out.Output)
	axis := op.Axis
	var scratch gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		it, err := gradShapeIndices(slots, ind)
		if err != nil {
			return err
		}
		offs, err := elementsOffsets(xt.Shape, axis, it)
		if err != nil {
			return err
		}
		gx := scratch.zeros(xt.Type, xt.Shape)
		if err := gradShapeScatterAddTensor(gx, gy, offs, 1); err != nil {
			return err
		}
		return g.add(x, gx)
	})
}

// VisitGatherND: every gradient slice goes back to the slice its index
// tuple named.
func (gb *gradBuilder) VisitGatherND(op *ops.GatherND) error {
	x, ind, y := gb.slot(op.In.Data), gb.slot(op.In.Indices), gb.slot(op.Out.Output)
	batchDims := int(op.BatchDims)
	var scratch gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		it, err := gradShapeIndices(slots, ind)
		if err != nil {
			return err
		}
		offs, block, err := ndOffsets(xt.Shape, it, batchDims)
		if err != nil {
			return err
		}
		gx := scratch.zeros(xt.Type, xt.Shape)
		if err := gradShapeScatterAddTensor(gx, gy, offs, block); err != nil {
			return err
		}
		return g.add(x, gx)
	})
}

// gradScatterKernel is the backward of ScatterElements, Scatter and
// ScatterND with reduction none or add.
type gradScatterKernel struct {
	data, indices, updates, y int
	add                       bool // reduction "add"
	nd                        bool // ScatterND's index tuples, else elements along axis
	axis                      int64
	sd, su                    gradScratch
	written                   []bool
}

func (gb *gradBuilder) newGradScatter(data, indices, updates, out, reduction string, nd bool, axis int64) error {
	k := &gradScatterKernel{data: gb.slot(data), indices: gb.slot(indices), updates: gb.slot(updates), y: gb.slot(out), nd: nd, axis: axis}
	switch reduction {
	case "none", "":
	case "add":
		k.add = true
	default:
		return network.Unsupportedf("gradient of scatter with reduction %q", reduction)
	}
	return gb.set(k.run)
}

func (gb *gradBuilder) VisitScatter(op *ops.Scatter) error {
	return gb.newGradScatter(op.In.Data, op.In.Indices, op.In.Updates, op.Out.Output, "none", false, op.Axis)
}

func (gb *gradBuilder) VisitScatterElements(op *ops.ScatterElements) error {
	return gb.newGradScatter(op.In.Data, op.In.Indices, op.In.Updates, op.Out.Output, op.Reduction, false, op.Axis)
}

func (gb *gradBuilder) VisitScatterND(op *ops.ScatterND) error {
	return gb.newGradScatter(op.In.Data, op.In.Indices, op.In.Updates, op.Out.Output, op.Reduction, true, 0)
}

func (k *gradScatterKernel) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil || !g.wants(k.data) && !g.wants(k.updates) {
		return nil
	}
	dt, ok := slots[k.data].(*onnx.Tensor)
	if !ok || dt == nil {
		return fmt.Errorf("data is %s, not a tensor", onnx.DescribeValue(slots[k.data]))
	}
	if _, err := floatTensor(dt, "data"); err != nil {
		return err
	}
	ut, ok := slots[k.updates].(*onnx.Tensor)
	if !ok || ut == nil {
		return fmt.Errorf("updates are %s, not a tensor", onnx.DescribeValue(slots[k.updates]))
	}
	it, err := gradShapeIndices(slots, k.indices)
	if err != nil {
		return err
	}
	if !sameShape(gy.Shape, dt.Shape) || gy.Type != dt.Type {
		return fmt.Errorf("gradient of tensor(%v)%v for data of tensor(%v)%v", gy.Type, gy.Shape, dt.Type, dt.Shape)
	}
	var offs []int
	block := 1
	if k.nd {
		if offs, block, err = ndOffsets(dt.Shape, it, 0); err != nil {
			return err
		}
		q := len(it.Shape)
		if want := slices.Concat(it.Shape[:q-1], dt.Shape[it.Shape[q-1]:]); !slices.Equal(ut.Shape, want) {
			return fmt.Errorf("updates have shape %v, want %v", ut.Shape, want)
		}
	} else {
		if !slices.Equal(it.Shape, ut.Shape) {
			return fmt.Errorf("updates have shape %v, indices have %v", ut.Shape, it.Shape)
		}
		if offs, err = elementsOffsets(dt.Shape, k.axis, it); err != nil {
			return err
		}
	}
	// written[o]: the block at offset o was overwritten by a later update
	// (walking the updates from the last, which the forward kept).
	if !k.add {
		k.written = withLen(k.written, dt.Len())
		clear(k.written)
	}
	var gu *onnx.Tensor
	if g.wants(k.updates) {
		gu = k.su.zeros(ut.Type, ut.Shape)
	}
	switch d := gy.Data.(type) {
	case []float32:
		gradScatterSplit(d, gu, offs, block, k.add, k.written)
	case []float64:
		gradScatterSplit(d, gu, offs, block, k.add, k.written)
	}
	if gu != nil {
		if err := g.add(k.updates, gu); err != nil {
			return err
		}
	}
	if !g.wants(k.data) {
		return nil
	}
	gd := k.sd.buf.tensor(dt.Type, dt.Shape)
	onnx.CopySlice(gd.Data, gy.Data)
	if !k.add {
		switch d := gd.Data.(type) {
		case []float32:
			gradScatterMask(d, k.written, block)
		case []float64:
			gradScatterMask(d, k.written, block)
		}
	}
	return g.add(k.data, gd)
}

// gradScatterSplit gives each update the gradient at the block it was
// written to (only the last writer of a block without reduction) and marks
// overwritten blocks in written.
func gradScatterSplit[T floatElem](gy []T, gu *onnx.Tensor, offs []int, block int, add bool, written []bool) {
	var gud []T
	if gu != nil {
		gud = gu.Data.([]T)
	}
	for k := len(offs) - 1; k >= 0; k-- {
		o := offs[k]
		if !add {
			if written[o] {
				continue
			}
			written[o] = true
		}
		if gud != nil {
			copy(gud[k*block:(k+1)*block], gy[o:o+block])
		}
	}
}

// gradScatterMask zeroes the blocks whose first element is marked.
func gradScatterMask[T floatElem](gd []T, written []bool, block int) {
	for o, w := range written {
		if w {
			clear(gd[o : o+block])
		}
	}
}
