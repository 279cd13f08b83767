package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rules of the layout operators: Transpose, Flatten, Squeeze,
// Unsqueeze, Concat, Split, Slice, Pad, Expand, Tile, DepthToSpace and
// SpaceToDepth. Each forward kernel copies input elements to output
// positions (some more than once); its gradient adds the output's gradient
// back at the positions the elements came from, with gradStridedAdd, the
// accumulating twin of layout.go's strided copy.

// gradStridedAdd adds the elements of a shape-sized window of src into a
// window of dst: dst[dv.offset + Σ i·dv.strides] += src[sv.offset + Σ
// i·sv.strides]. Strides may be negative (Slice's negative steps) or zero
// in dst (elements read more than once by the forward, which therefore
// accumulate).
func gradStridedAdd[T floatElem](dst []T, dv stridedView, src []T, sv stridedView, shape []int) {
	if onnx.NumElements(shape) == 0 {
		return
	}
	w := newStridedWalk(shape, dv.strides, sv.strides)
	n, ds, ss := w.rowLen(), w.rowStride(0), w.rowStride(1)
	w.forEachRow(func(_ int, off walkOffsets) {
		d, s := dv.offset+off[0], sv.offset+off[1]
		if ds == 0 {
			var acc T
			for i := range n {
				acc += src[s+i*ss]
			}
			dst[d] += acc
			return
		}
		if ds == 1 && ss == 1 {
			addInto(dst[d:d+n], src[s:s+n])
			return
		}
		for i := range n {
			dst[d+i*ds] += src[s+i*ss]
		}
	})
}

// gradAddWindow is gradStridedAdd on tensors of the same float type.
func gradAddWindow(dst *onnx.Tensor, dv stridedView, src *onnx.Tensor, sv stridedView, shape []int) error {
	switch d := dst.Data.(type) {
	case []float32:
		s, ok := src.Data.([]float32)
		if !ok {
			return fmt.Errorf("gradient of tensor(%v) meets tensor(%v)", src.Type, dst.Type)
		}
		gradStridedAdd(d, dv, s, sv, shape)
		return nil
	case []float64:
		s, ok := src.Data.([]float64)
		if !ok {
			return fmt.Errorf("gradient of tensor(%v) meets tensor(%v)", src.Type, dst.Type)
		}
		gradStridedAdd(d, dv, s, sv, shape)
		return nil
	}
	return network.Unsupportedf("gradients of tensor(%v)", dst.Type)
}

// gradShapeIO returns the gradient reaching output y and the forward input
// x when x wants one (ok false: nothing to do).
func gradShapeIO(slots []onnx.Value, g *gradState, x, y int) (gy, xt *onnx.Tensor, ok bool, err error) {
	gy = g.of(y)
	if gy == nil || !g.wants(x) {
		return nil, nil, false, nil
	}
	xt, err = floatTensor(slots[x], "input")
	if err != nil {
		return nil, nil, false, err
	}
	if gy.Type != xt.Type {
		return nil, nil, false, fmt.Errorf("gradient of tensor(%v) for an input of tensor(%v)", gy.Type, xt.Type)
	}
	return gy, xt, true, nil
}

func (gb *gradBuilder) VisitFlatten(op *ops.Flatten) error {
	return gb.reshapeGrad(op.In.Input, op.Out.Output)
}

func (gb *gradBuilder) VisitSqueeze(op *ops.Squeeze) error {
	return gb.reshapeGrad(op.In.Data, op.Out.Squeezed)
}

func (gb *gradBuilder) VisitUnsqueeze(op *ops.Unsqueeze) error {
	return gb.reshapeGrad(op.In.Data, op.Out.Expanded)
}

// VisitTranspose: the gradient is transposed back by the inverse
// permutation, that is, added through the forward's permuted strides.
func (gb *gradBuilder) VisitTranspose(op *ops.Transpose) error {
	x, y := gb.slot(op.In.Data), gb.slot(op.Out.Transposed)
	perm := slices.Clone(op.Perm)
	var scratch gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		p, shape, err := transposeShape(xt.Shape, perm)
		if err != nil {
			return err
		}
		inStrides := rowMajorStrides(xt.Shape)
		dst := make([]int, len(p))
		for i, a := range p {
			dst[i] = inStrides[a]
		}
		gx := scratch.zeros(xt.Type, xt.Shape)
		if err := gradAddWindow(gx, stridedView{0, dst}, gy, stridedView{0, rowMajorStrides(shape)}, shape); err != nil {
			return err
		}
		return g.add(x, gx)
	})
}

// VisitConcat: each input gets its window of the gradient.
func (gb *gradBuilder) VisitConcat(op *ops.Concat) error {
	axis := int64(1)
	switch {
	case op.Axis != nil:
		axis = *op.Axis
	case op.SinceVersion() >= 4:
		return fmt.Errorf("attribute axis is required from version 4")
	}
	xs := make([]int, len(op.In.Inputs))
	for i, n := range op.In.Inputs {
		xs[i] = gb.slot(n)
	}
	y := gb.slot(op.Out.ConcatResult)
	scratch := make([]gradScratch, len(xs))
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy := g.of(y)
		if gy == nil {
			return nil
		}
		a, err := normalizeAxis(axis, len(gy.Shape))
		if err != nil {
			return err
		}
		outStrides := rowMajorStrides(gy.Shape)
		offset := 0
		for i, x := range xs {
			xt, ok := slots[x].(*onnx.Tensor)
			if !ok || xt == nil {
				return fmt.Errorf("input %d is %s, not a tensor", i, onnx.DescribeValue(slots[x]))
			}
			if len(xt.Shape) != len(gy.Shape) {
				return fmt.Errorf("input %d has shape %v, the gradient %v", i, xt.Shape, gy.Shape)
			}
			if g.wants(x) {
				if _, err := floatTensor(xt, "input"); err != nil {
					return err
				}
				gx := scratch[i].zeros(xt.Type, xt.Shape)
				if err := gradAddWindow(gx, stridedView{0, rowMajorStrides(xt.Shape)}, gy, stridedView{offset * outStrides[a], outStrides}, xt.Shape); err != nil {
					return err
				}
				if err := g.add(x, gx); err != nil {
					return err
				}
			}
			offset += xt.Shape[a]
		}
		return nil
	})
}

// VisitSplit: the gradients of the parts are put side by side; parts that
// received none contribute zeros.
func (gb *gradBuilder) VisitSplit(op *ops.Split) error {
	x := gb.slot(op.In.Input)
	splitIn := gb.slot(op.In.Split)
	ys := make([]int, len(op.Out.Outputs))
	for i, n := range op.Out.Outputs {
		ys[i] = gb.slot(n)
	}
	axis := deref(op.Axis)
	attrSplit := slices.Clone(op.Split)
	uneven := op.SinceVersion() >= 18
	var scratch gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		if !g.wants(x) {
			return nil
		}
		got := false
		for _, y := range ys {
			if g.of(y) != nil {
				got = true
			}
		}
		if !got {
			return nil
		}
		xt, err := floatTensor(slots[x], "input")
		if err != nil {
			return err
		}
		a, err := normalizeAxis(axis, len(xt.Shape))
		if err != nil {
			return err
		}
		split, haveSplit := attrSplit, attrSplit != nil
		if splitIn >= 0 {
			st, ok := slots[splitIn].(*onnx.Tensor)
			if !ok || st == nil {
				return fmt.Errorf("split input is %s, not a tensor", onnx.DescribeValue(slots[splitIn]))
			}
			if split, err = shapeIndexInts(st, "split input"); err != nil {
				return err
			}
			haveSplit = true
		}
		sizes, err := splitSizes(xt.Shape[a], split, haveSplit, len(ys), uneven)
		if err != nil {
			return err
		}
		gx := scratch.zeros(xt.Type, xt.Shape)
		inStrides := rowMajorStrides(xt.Shape)
		pos := 0
		for i, y := range ys {
			if gy := g.of(y); gy != nil {
				if gy.Shape[a] != sizes[i] || len(gy.Shape) != len(xt.Shape) {
					return fmt.Errorf("gradient of output %d has shape %v", i, gy.Shape)
				}
				if err := gradAddWindow(gx, stridedView{pos * inStrides[a], inStrides}, gy, stridedView{0, rowMajorStrides(gy.Shape)}, gy.Shape); err != nil {
					return err
				}
			}
			pos += sizes[i]
		}
		return g.add(x, gx)
	})
}

// VisitSlice: the gradient is scattered into zeros at the window the
// forward read (walked backwards for negative steps).
func (gb *gradBuilder) VisitSlice(op *ops.Slice) error {
	x, y := gb.slot(op.In.Data), gb.slot(op.Out.Output)
	var scratch gradScratch
	run := func(slots []onnx.Value, g *gradState, starts, ends, axes, steps []int64) error {
		gy, xt, _, _ := gradShapeIO(slots, g, x, y)
		shape, src, _, err := slicePlan(xt.Shape, starts, ends, axes, steps)
		if err != nil {
			return err
		}
		if !sameShape(shape, gy.Shape) {
			return fmt.Errorf("gradient of shape %v for a slice of shape %v", gy.Shape, shape)
		}
		gx := scratch.zeros(xt.Type, xt.Shape)
		if err := gradAddWindow(gx, src, gy, stridedView{0, rowMajorStrides(shape)}, shape); err != nil {
			return err
		}
		return g.add(x, gx)
	}
	if op.SinceVersion() < 10 {
		starts, ends, axes := slices.Clone(op.Starts), slices.Clone(op.Ends), slices.Clone(op.Axes)
		if starts == nil || ends == nil {
			return fmt.Errorf("attributes starts and ends are required in version 1")
		}
		return gb.set(func(slots []onnx.Value, g *gradState) error {
			if _, _, ok, err := gradShapeIO(slots, g, x, y); !ok {
				return err
			}
			return run(slots, g, starts, ends, axes, nil)
		})
	}
	in := [4]int{gb.slot(op.In.Starts), gb.slot(op.In.Ends), gb.slot(op.In.Axes), gb.slot(op.In.Steps)}
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		if _, _, ok, err := gradShapeIO(slots, g, x, y); !ok {
			return err
		}
		var vals [4][]int64
		for i, s := range in {
			if s < 0 {
				continue
			}
			v, ok := slots[s].(*onnx.Tensor)
			if !ok || v == nil {
				return fmt.Errorf("slice input %d is %s, not a tensor", i+1, onnx.DescribeValue(slots[s]))
			}
			var err error
			if vals[i], err = shapeIndexInts(v, fmt.Sprintf("slice input %d", i+1)); err != nil {
				return err
			}
		}
		return run(slots, g, vals[0], vals[1], vals[2], vals[3])
	})
}

// VisitExpand: the gradient is summed over the broadcast dimensions.
func (gb *gradBuilder) VisitExpand(op *ops.Expand) error {
	x, y := gb.slot(op.In.Input), gb.slot(op.Out.Output)
	var scratch gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		gx := scratch.zeros(xt.Type, xt.Shape)
		switch d := gx.Data.(type) {
		case []float32:
			sumToShape(d, xt.Shape, gy.Data.([]float32), gy.Shape)
		case []float64:
			sumToShape(d, xt.Shape, gy.Data.([]float64), gy.Shape)
		}
		return g.add(x, gx)
	})
}

// VisitTile: the gradient of every tile is summed. The repeats are read
// off the output's shape, so both versions share the rule.
func (gb *gradBuilder) VisitTile(op *ops.Tile) error {
	x, y := gb.slot(op.In.Input), gb.slot(op.Out.Output)
	var scratch gradScratch
	var shape, dst, src []int
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		rank := len(xt.Shape)
		if len(gy.Shape) != rank {
			return fmt.Errorf("gradient of shape %v for an input of shape %v", gy.Shape, xt.Shape)
		}
		gx := scratch.zeros(xt.Type, xt.Shape)
		if xt.Len() == 0 || gy.Len() == 0 {
			return g.add(x, gx)
		}
		shape, dst, src = shape[:0], dst[:0], src[:0]
		inStrides, outStrides := rowMajorStrides(xt.Shape), rowMajorStrides(gy.Shape)
		for i := range rank {
			if gy.Shape[i]%xt.Shape[i] != 0 {
				return fmt.Errorf("gradient of shape %v is not a tiling of %v", gy.Shape, xt.Shape)
			}
			shape = append(shape, gy.Shape[i]/xt.Shape[i], xt.Shape[i])
			dst = append(dst, 0, inStrides[i])
			src = append(src, xt.Shape[i]*outStrides[i], outStrides[i])
		}
		if err := gradAddWindow(gx, stridedView{0, dst}, gy, stridedView{0, src}, shape); err != nil {
			return err
		}
		return g.add(x, gx)
	})
}

// spaceDepthGrad: DepthToSpace and SpaceToDepth are 6-D transposes; the
// gradient goes back through the same permuted strides.
func (gb *gradBuilder) spaceDepthGrad(in, out string, blocksize int64, mode string, toSpace bool) error {
	crd, err := spaceDepthCRD(mode)
	if err != nil {
		return err
	}
	if blocksize < 1 {
		return fmt.Errorf("blocksize %d must be positive", blocksize)
	}
	bs := int(min(blocksize, math.MaxInt32))
	x, y := gb.slot(in), gb.slot(out)
	var scratch gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		in6, perm, _, err := spaceDepthPlan(xt.Shape, bs, crd, toSpace)
		if err != nil {
			return err
		}
		inStrides := rowMajorStrides(in6)
		shape6, dst := make([]int, 6), make([]int, 6)
		for i, a := range perm {
			shape6[i], dst[i] = in6[a], inStrides[a]
		}
		gx := scratch.zeros(xt.Type, xt.Shape)
		if err := gradAddWindow(gx, stridedView{0, dst}, gy, stridedView{0, rowMajorStrides(shape6)}, shape6); err != nil {
			return err
		}
		return g.add(x, gx)
	})
}

func (gb *gradBuilder) VisitDepthToSpace(op *ops.DepthToSpace) error {
	return gb.spaceDepthGrad(op.In.Input, op.Out.Output, op.Blocksize, op.Mode, true)
}

func (gb *gradBuilder) VisitSpaceToDepth(op *ops.SpaceToDepth) error {
	return gb.spaceDepthGrad(op.In.Input, op.Out.Output, op.Blocksize, op.Mode, false)
}

// gradPadKernel is the backward of Pad. Constant mode crops the gradient
// (and the constant_value input, when it wants one, gets the sum over the
// padding); reflect, edge and wrap add every output position's gradient to
// the input element it copied, folding the padding back.
type gradPadKernel struct {
	x, y, pads, value, axes int
	mode                    shapePadMode
	attrPads                []int64 // before version 11
	scratch, vscratch       gradScratch
	maps                    [][]int
	counter                 []int
}

func (gb *gradBuilder) VisitPad(op *ops.Pad) error {
	since := op.SinceVersion()
	mode, err := shapeParsePadMode(op.Mode, since)
	if err != nil {
		return err
	}
	k := &gradPadKernel{x: gb.slot(op.In.Data), y: gb.slot(op.Out.Output), mode: mode, pads: -1, value: -1, axes: -1}
	if since < 11 {
		k.attrPads = slices.Clone(op.Pads)
		if since < 2 {
			k.attrPads = slices.Clone(op.Paddings)
		}
		if k.attrPads == nil {
			return fmt.Errorf("attribute pads is required before version 11")
		}
	} else {
		k.pads, k.value, k.axes = gb.slot(op.In.Pads), gb.slot(op.In.ConstantValue), gb.slot(op.In.Axes)
	}
	return gb.set(k.run)
}

func (k *gradPadKernel) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	wantValue := k.mode == shapePadConstant && g.wants(k.value)
	if gy == nil || !g.wants(k.x) && !wantValue {
		return nil
	}
	xt, err := floatTensor(slots[k.x], "input")
	if err != nil {
		return err
	}
	pads, axes := k.attrPads, []int64(nil)
	if k.pads >= 0 {
		pt, ok := slots[k.pads].(*onnx.Tensor)
		if !ok || pt == nil || pt.Type != onnx.Int64 {
			return fmt.Errorf("pads input must be an int64 tensor, is %s", onnx.DescribeValue(slots[k.pads]))
		}
		pads = pt.Int64s()
		if k.axes >= 0 {
			at, ok := slots[k.axes].(*onnx.Tensor)
			if !ok || at == nil {
				return fmt.Errorf("axes input is %s, not a tensor", onnx.DescribeValue(slots[k.axes]))
			}
			if axes, err = shapeIndexInts(at, "axes input"); err != nil {
				return err
			}
		}
	}
	begin, end, shape, err := shapePadAmounts(xt.Shape, pads, axes)
	if err != nil {
		return err
	}
	if !sameShape(shape, gy.Shape) {
		return fmt.Errorf("gradient of shape %v for a padded shape %v", gy.Shape, shape)
	}
	gx := k.scratch.zeros(xt.Type, xt.Shape)
	rank := len(xt.Shape)
	if k.mode == shapePadConstant {
		window := make([]int, rank)
		inStrides, outStrides := rowMajorStrides(xt.Shape), rowMajorStrides(gy.Shape)
		src, dst := stridedView{0, inStrides}, stridedView{0, outStrides}
		for a := range rank {
			lo, dlo := max(0, -begin[a]), max(0, begin[a])
			window[a] = max(min(xt.Shape[a]-lo, gy.Shape[a]-dlo), 0)
			src.offset += lo * inStrides[a]
			dst.offset += dlo * outStrides[a]
		}
		if err := gradAddWindow(gx, src, gy, dst, window); err != nil {
			return err
		}
		if wantValue {
			// The padding's share: everything minus the copied window.
			vt, err := floatTensor(slots[k.value], "constant_value")
			if err != nil {
				return err
			}
			gv := k.vscratch.zeros(vt.Type, vt.Shape)
			if gv.Len() > 0 {
				switch d := gv.Data.(type) {
				case []float32:
					d[0] = float32(gradPadRemainder(gy.Data.([]float32), dst, window))
				case []float64:
					d[0] = gradPadRemainder(gy.Data.([]float64), dst, window)
				}
			}
			if err := g.add(k.value, gv); err != nil {
				return err
			}
		}
		if !g.wants(k.x) {
			return nil
		}
		return g.add(k.x, gx)
	}
	for a := range rank {
		if kept := xt.Shape[a] - max(0, -begin[a]) - max(0, -end[a]); kept <= 0 && gy.Shape[a] > 0 {
			return fmt.Errorf("cannot pad axis %d of %v in this mode: no element is left after cropping", a, xt.Shape)
		}
	}
	if gy.Len() == 0 {
		return g.add(k.x, gx)
	}
	// maps[a][o]: offset in the input of output coordinate o along axis a,
	// as the forward maps it (a negative side cropped first).
	if cap(k.maps) < rank {
		k.maps = make([][]int, rank)
	}
	k.maps = k.maps[:rank]
	inStrides := rowMajorStrides(xt.Shape)
	for a := range rank {
		k.maps[a] = withLen(k.maps[a], gy.Shape[a])
		for o := range k.maps[a] {
			k.maps[a][o] = shapePadCropSourceIndex(k.mode, o, begin[a], end[a], xt.Shape[a]) * inStrides[a]
		}
	}
	k.counter = withLen(k.counter, rank)
	switch d := gx.Data.(type) {
	case []float32:
		gradPadFold(d, gy.Data.([]float32), gy.Shape, k.maps, k.counter)
	case []float64:
		gradPadFold(d, gy.Data.([]float64), gy.Shape, k.maps, k.counter)
	}
	return g.add(k.x, gx)
}

// gradPadRemainder is the sum of src minus the sum of its window.
func gradPadRemainder[T floatElem](src []T, win stridedView, shape []int) float64 {
	total := 0.0
	for _, v := range src {
		total += float64(v)
	}
	if onnx.NumElements(shape) == 0 {
		return total
	}
	w := newStridedWalk(shape, win.strides)
	n, s := w.rowLen(), w.rowStride(0)
	w.forEachRow(func(_ int, off walkOffsets) {
		for i := range n {
			total -= float64(src[win.offset+off[0]+i*s])
		}
	})
	return total
}

// gradPadFold adds gy (of shape outShape) into gx at the offsets the
// per-axis maps give, a row of the last axis at a time.
func gradPadFold[T floatElem](gx, gy []T, outShape []int, maps [][]int, counter []int) {
	rank := len(outShape)
	if rank == 0 {
		gx[0] += gy[0]
		return
	}
	clear(counter)
	last := maps[rank-1]
	row := outShape[rank-1]
	for r := 0; r*row < len(gy); r++ {
		base := 0
		for a := range rank - 1 {
			base += maps[a][counter[a]]
		}
		src := gy[r*row : (r+1)*row]
		for j, off := range last {
			gx[base+off] += src[j]
		}
		for a := rank - 2; a >= 0; a-- {
			counter[a]++
			if counter[a] < outShape[a] {
				break
			}
			counter[a] = 0
		}
	}
}
