package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// VisitCenterCropPad: the forward is a constant zero pad with the
// centred (possibly negative) amounts; the gradient takes back the window
// the input was copied to. The shape input gets none.
func (gb *gradBuilder) VisitCenterCropPad(op *ops.CenterCropPad) error {
	x, y, shapeIn := gb.slot(op.In.InputData), gb.slot(op.Out.OutputData), gb.slot(op.In.Shape)
	axes := slices.Clone(op.Axes)
	var scratch gradScratch
	var normBuf, beginBuf, windowBuf, counterBuf, inBuf, outBuf []int
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		req, err := slotInt64s(slots, shapeIn, "shape input")
		if err != nil {
			return err
		}
		rank := len(xt.Shape)
		norm := withLen(normBuf, rank)
		normBuf = norm
		if axes == nil {
			for i := range norm {
				norm[i] = i
			}
		} else {
			if len(axes) > rank {
				return fmt.Errorf("axes %v for rank %d", axes, rank)
			}
			norm = norm[:len(axes)]
			for i, a := range axes {
				if norm[i], err = normalizeAxis(a, rank); err != nil {
					return err
				}
			}
		}
		if len(req) != len(norm) {
			return fmt.Errorf("shape %v has %d entries for %d axes", req, len(req), len(norm))
		}
		if len(gy.Shape) != rank {
			return fmt.Errorf("gradient of shape %v for an input of %v", gy.Shape, xt.Shape)
		}
		begin := withLen(beginBuf, rank) // output offset of the input's first element
		beginBuf = begin
		clear(begin)
		for i, a := range norm {
			diff := int(req[i]) - xt.Shape[a]
			if diff >= 0 {
				begin[a] = diff / 2
			} else {
				begin[a] = -((-diff) / 2)
			}
		}
		gx := scratch.zeros(xt.Type, xt.Shape)
		window := withLen(windowBuf, rank)
		windowBuf = window
		counter := withLen(counterBuf, rank)
		counterBuf = counter
		inStrides := rowMajorStridesInto(withLen(inBuf, len(xt.Shape)), xt.Shape)
		inBuf = inStrides
		outStrides := rowMajorStridesInto(withLen(outBuf, len(gy.Shape)), gy.Shape)
		outBuf = outStrides
		src, dst := 0, 0
		for a := range rank {
			lo, dlo := max(0, -begin[a]), max(0, begin[a])
			window[a] = max(min(xt.Shape[a]-lo, gy.Shape[a]-dlo), 0)
			src += lo * inStrides[a]
			dst += dlo * outStrides[a]
		}
		switch d := gx.Data.(type) {
		case []float32:
			addStridedBox(d, src, inStrides, gy.Data.([]float32), dst, outStrides, window, counter)
		case []float64:
			addStridedBox(d, src, inStrides, gy.Data.([]float64), dst, outStrides, window, counter)
		}
		return g.add(x, gx)
	})
}

// addStridedBox adds the box of src of size window starting at sOff (in
// elements, with strides ss) into dst at dOff (strides ds), the last
// dimension as contiguous runs; counter is scratch of the window's rank.
func addStridedBox[T floatElem](dst []T, dOff int, ds []int, src []T, sOff int, ss []int, window, counter []int) {
	r := len(window)
	for _, w := range window {
		if w == 0 {
			return
		}
	}
	if r == 0 {
		dst[dOff] += src[sOff]
		return
	}
	clear(counter)
	run := window[r-1]
	for {
		d, s := dOff, sOff
		for a := range r - 1 {
			d += counter[a] * ds[a]
			s += counter[a] * ss[a]
		}
		addInto(dst[d:d+run], src[s:s+run])
		a := r - 2
		for ; a >= 0; a-- {
			counter[a]++
			if counter[a] < window[a] {
				break
			}
			counter[a] = 0
		}
		if a < 0 {
			return
		}
	}
}
