package native

import (
	"math"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// VisitLpNormalization: along each line, y = x / ‖x‖_p, so with s = Σ g·y
// dx = (g - y·s) / ‖x‖_2 for p = 2 and dx = (g - sign(x)·s) / ‖x‖_1 for
// p = 1 (sign(0) = 0, a subgradient). A line of zeros, where the forward
// outputs zeros and the map is not continuous, gets a zero gradient.
func (gb *gradBuilder) VisitLpNormalization(op *ops.LpNormalization) error {
	x, y := gb.slot(op.In.Input), gb.slot(op.Out.Output)
	axis, p := op.Axis, op.P
	var scratch gradScratch
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		shape := xt.Shape
		if len(shape) == 0 {
			shape = []int{1}
		}
		a, err := normalizeAxis(axis, len(shape))
		if err != nil {
			return err
		}
		outer, n, inner := onnx.NumElements(shape[:a]), shape[a], onnx.NumElements(shape[a+1:])
		gx := scratch.buf.tensor(xt.Type, xt.Shape)
		switch d := gx.Data.(type) {
		case []float32:
			gradLpNorm(d, gy.Data.([]float32), xt.Data.([]float32), outer, n, inner, p)
		case []float64:
			gradLpNorm(d, gy.Data.([]float64), xt.Data.([]float64), outer, n, inner, p)
		}
		return g.add(x, gx)
	})
}

// gradLpNorm writes LpNormalization's input gradient into dx, x and gy
// seen as [outer, n, inner] lines.
func gradLpNorm[T floatElem](dx, gy, x []T, outer, n, inner int, p int64) {
	for o := range outer {
		for i := range inner {
			base := o*n*inner + i
			norm := 0.0
			for j := range n {
				v := float64(x[base+j*inner])
				if p == 1 {
					norm += math.Abs(v)
				} else {
					norm += v * v
				}
			}
			if p == 2 {
				norm = math.Sqrt(norm)
			}
			if norm == 0 {
				for j := range n {
					dx[base+j*inner] = 0
				}
				continue
			}
			s := 0.0 // Σ g·y
			for j := range n {
				s += float64(gy[base+j*inner]) * float64(x[base+j*inner]) / norm
			}
			for j := range n {
				v := float64(x[base+j*inner])
				var d float64
				if p == 1 {
					sign := 0.0
					if v > 0 {
						sign = 1
					} else if v < 0 {
						sign = -1
					}
					d = sign * s
				} else {
					d = v / norm * s
				}
				dx[base+j*inner] = T((float64(gy[base+j*inner]) - d) / norm)
			}
		}
	}
}
