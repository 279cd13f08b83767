package native

import (
	"fmt"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// VisitTrilu: the gradient masked like the forward; k gets none.
func (gb *gradBuilder) VisitTrilu(op *ops.Trilu) error {
	x, y, kIn := gb.slot(op.In.Input), gb.slot(op.Out.Output), gb.slot(op.In.K)
	upper := op.Upper != 0
	var scratch gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		r := len(xt.Shape)
		if r < 2 || !sameShape(gy.Shape, xt.Shape) {
			return fmt.Errorf("Trilu gradient of shape %v for an input of %v", gy.Shape, xt.Shape)
		}
		k := int64(0)
		if kIn >= 0 {
			ks, err := slotInt64s(slots, kIn, "k")
			if err != nil {
				return err
			}
			if len(ks) != 1 {
				return fmt.Errorf("k must be a scalar")
			}
			k = ks[0]
		}
		gx := scratch.zeros(xt.Type, xt.Shape)
		batch, rows, cols := shapeProd(xt.Shape[:r-2]), xt.Shape[r-2], xt.Shape[r-1]
		switch d := gx.Data.(type) {
		case []float32:
			gradTrilu(d, gy.Data.([]float32), batch, rows, cols, k, upper)
		case []float64:
			gradTrilu(d, gy.Data.([]float64), batch, rows, cols, k, upper)
		}
		return g.add(x, gx)
	})
}

// gradTrilu copies the kept triangle of src into dst (zeroed).
func gradTrilu[T floatElem](dst, src []T, batch, rows, cols int, k int64, upper bool) {
	for m := range batch {
		for i := range rows {
			base := (m*rows + i) * cols
			edge := int64(i) + k
			lo, hi := 0, cols // kept columns [lo, hi)
			if upper {
				lo = int(min(max(edge, 0), int64(cols)))
			} else {
				hi = int(min(max(edge+1, 0), int64(cols)))
			}
			if lo < hi {
				copy(dst[base+lo:base+hi], src[base+lo:base+hi])
			}
		}
	}
}
