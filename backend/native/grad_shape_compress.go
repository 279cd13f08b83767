package native

import (
	"fmt"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// VisitCompress: the kept slices' gradients go back to their positions;
// the condition gets none.
func (gb *gradBuilder) VisitCompress(op *ops.Compress) error {
	x, y, c := gb.slot(op.In.Input), gb.slot(op.Out.Output), gb.slot(op.In.Condition)
	axis := op.Axis
	var scratch gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		ct, ok := slots[c].(*onnx.Tensor)
		if !ok || ct == nil || ct.Type != onnx.Bool {
			return fmt.Errorf("condition must be a bool tensor, is %s", onnx.DescribeValue(slots[c]))
		}
		// The flattened input without axis: one axis of all the elements.
		dim, outer, inner := xt.Len(), 1, 1
		if axis != nil {
			a, err := normalizeAxis(*axis, len(xt.Shape))
			if err != nil {
				return err
			}
			dim, outer, inner = xt.Shape[a], shapeProd(xt.Shape[:a]), shapeProd(xt.Shape[a+1:])
		}
		cond := ct.Bools()
		kept := 0
		for i, v := range cond {
			if v && i < dim {
				kept++
			}
		}
		if gy.Len() != outer*kept*inner {
			return fmt.Errorf("Compress gradient of shape %v for %d kept slices of %v", gy.Shape, kept, xt.Shape)
		}
		gx := scratch.zeros(xt.Type, xt.Shape)
		switch d := gx.Data.(type) {
		case []float32:
			gradCompress(d, gy.Data.([]float32), cond, outer, dim, kept, inner)
		case []float64:
			gradCompress(d, gy.Data.([]float64), cond, outer, dim, kept, inner)
		}
		return g.add(x, gx)
	})
}

// gradCompress copies the kept slices of src ([outer, kept, inner]) to
// their positions in dst ([outer, dim, inner]).
func gradCompress[T floatElem](dst, src []T, cond []bool, outer, dim, kept, inner int) {
	for o := range outer {
		j := 0
		for s, v := range cond {
			if !v || s >= dim {
				continue
			}
			copy(dst[(o*dim+s)*inner:(o*dim+s+1)*inner], src[(o*kept+j)*inner:(o*kept+j+1)*inner])
			j++
		}
	}
}
