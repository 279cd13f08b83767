package native

import (
	"fmt"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// VisitTopK: the values' gradient goes to the selected positions (the
// indices output, read from its slot); k and the indices get none.
func (gb *gradBuilder) VisitTopK(op *ops.TopK) error {
	x, v, idx := gb.slot(op.In.X), gb.slot(op.Out.Values), gb.slot(op.Out.Indices)
	axis := op.Axis
	var scratch gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, v)
		if !ok {
			return err
		}
		if idx < 0 {
			return fmt.Errorf("TopK gradient needs the indices output")
		}
		ids, err := slotInt64s(slots, idx, "indices output")
		if err != nil {
			return err
		}
		a, err := normalizeAxis(axis, len(xt.Shape))
		if err != nil {
			return err
		}
		n := xt.Shape[a]
		outer, inner := shapeProd(xt.Shape[:a]), shapeProd(xt.Shape[a+1:])
		if len(ids) != gy.Len() || len(gy.Shape) != len(xt.Shape) {
			return fmt.Errorf("TopK gradient of shape %v for indices of %d elements", gy.Shape, len(ids))
		}
		k := gy.Shape[a]
		gx := scratch.zeros(xt.Type, xt.Shape)
		switch d := gx.Data.(type) {
		case []float32:
			err = gradTopK(d, gy.Data.([]float32), ids, outer, n, k, inner)
		case []float64:
			err = gradTopK(d, gy.Data.([]float64), ids, outer, n, k, inner)
		}
		if err != nil {
			return err
		}
		return g.add(x, gx)
	})
}

// gradTopK adds src, seen as [outer, k, inner], into dst, seen as
// [outer, n, inner], at the positions along the middle axis that ids
// (shaped like src) name.
func gradTopK[T floatElem](dst, src []T, ids []int64, outer, n, k, inner int) error {
	for o := range outer {
		for j := range k {
			base := (o*k + j) * inner
			for i := range inner {
				p := ids[base+i]
				if p < 0 {
					p += int64(n)
				}
				if p < 0 || p >= int64(n) {
					return fmt.Errorf("index %d out of range for an axis of size %d", ids[base+i], n)
				}
				dst[(o*n+int(p))*inner+i] += src[base+i]
			}
		}
	}
	return nil
}
