package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// VisitMaxUnpool: X[i] was written to output position I[i] (re-addressed
// into output_shape when given), the last write winning for a repeated
// index; its gradient is read back from there. I and output_shape get
// none.
func (gb *gradBuilder) VisitMaxUnpool(op *ops.MaxUnpool) error {
	if len(op.KernelShape) == 0 {
		return fmt.Errorf("MaxUnpool: attribute kernel_shape is required")
	}
	x, ind, y := gb.slot(op.In.X), gb.slot(op.In.I), gb.slot(op.Out.Output)
	kernel, strideAttr, pads := slices.Clone(op.KernelShape), slices.Clone(op.Strides), slices.Clone(op.Pads)
	var scratch gradScratch
	var owner []int32
	var defBuf, dsBuf, osBuf []int
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		idx, err := slotInt64s(slots, ind, "indices I")
		if err != nil {
			return err
		}
		n := len(xt.Shape) - 2
		if n < 1 || len(kernel) != n || len(idx) != xt.Len() || len(gy.Shape) != len(xt.Shape) {
			return fmt.Errorf("MaxUnpool gradient of shape %v for X %v", gy.Shape, xt.Shape)
		}
		def := withLen(defBuf, len(xt.Shape))
		defBuf = def
		def[0], def[1] = xt.Shape[0], xt.Shape[1]
		for i := range n {
			stride := int64(1)
			if len(strideAttr) == n {
				stride = strideAttr[i]
			}
			d := int64(xt.Shape[i+2]-1)*stride + kernel[i]
			if len(pads) == 2*n {
				d -= pads[i] + pads[i+n]
			}
			def[i+2] = int(d)
		}
		remap := !sameShape(def, gy.Shape)
		ds := rowMajorStridesInto(withLen(dsBuf, len(def)), def)
		dsBuf = ds
		os := rowMajorStridesInto(withLen(osBuf, len(gy.Shape)), gy.Shape)
		osBuf = os
		defTotal, total := onnx.NumElements(def), gy.Len()
		if cap(owner) < total {
			owner = make([]int32, total)
		}
		owner = owner[:total]
		for p := range owner {
			owner[p] = -1
		}
		for i, p := range idx {
			if p < 0 || p >= int64(defTotal) {
				return fmt.Errorf("index %d is out of range for unpooled shape %v", p, def)
			}
			o := int(p)
			if remap {
				r := o
				o = 0
				for d := range def {
					o += r / ds[d] * os[d]
					r %= ds[d]
				}
			}
			owner[o] = int32(i)
		}
		gx := scratch.zeros(xt.Type, xt.Shape)
		switch d := gx.Data.(type) {
		case []float32:
			gatherOwned(d, gy.Data.([]float32), owner)
		case []float64:
			gatherOwned(d, gy.Data.([]float64), owner)
		}
		return g.add(x, gx)
	})
}

// gatherOwned sets dst[owner[p]] = src[p] for every position p that
// has an owner.
func gatherOwned[T floatElem](dst, src []T, owner []int32) {
	for p, i := range owner {
		if i >= 0 {
			dst[i] = src[p]
		}
	}
}
