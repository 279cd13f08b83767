package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// VisitDet: for invertible A, d det(A) / dA = det(A)·A^{-T} (Jacobi's
// formula), computed in float64 by Gauss-Jordan elimination with partial
// pivoting. A singular matrix (a zero pivot), where the gradient is the
// adjugate's transpose, is not differentiated.
func (gb *gradBuilder) VisitDet(op *ops.Det) error {
	x, y := gb.slot(op.In.X), gb.slot(op.Out.Y)
	var scratch gradScratch
	var a, inv []float64
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		yt, err := floatTensor(slots[y], "output")
		if err != nil {
			return err
		}
		r := len(xt.Shape)
		if r < 2 || xt.Shape[r-1] != xt.Shape[r-2] {
			return fmt.Errorf("input must be a batch of square matrices, got shape %v", xt.Shape)
		}
		n := xt.Shape[r-1]
		batch := shapeProd(xt.Shape[:r-2])
		if gy.Len() != batch || yt.Len() != batch {
			return fmt.Errorf("Det gradient of shape %v for an input of %v", gy.Shape, xt.Shape)
		}
		if cap(a) < n*n {
			a, inv = make([]float64, n*n), make([]float64, n*n)
		}
		a, inv = a[:n*n], inv[:n*n]
		gx := scratch.buf.tensor(xt.Type, xt.Shape)
		for m := range batch {
			var gm, dm float64
			switch d := xt.Data.(type) {
			case []float32:
				for i, v := range d[m*n*n : (m+1)*n*n] {
					a[i] = float64(v)
				}
				gm, dm = float64(gy.Data.([]float32)[m]), float64(yt.Data.([]float32)[m])
			case []float64:
				copy(a, d[m*n*n:(m+1)*n*n])
				gm, dm = gy.Data.([]float64)[m], yt.Data.([]float64)[m]
			}
			if !invertMatrix(a, inv, n) {
				return network.Unsupportedf("the gradient of Det at a singular matrix")
			}
			f := gm * dm
			switch d := gx.Data.(type) {
			case []float32:
				out := d[m*n*n : (m+1)*n*n]
				for i := range n {
					for j := range n {
						out[i*n+j] = float32(f * inv[j*n+i])
					}
				}
			case []float64:
				out := d[m*n*n : (m+1)*n*n]
				for i := range n {
					for j := range n {
						out[i*n+j] = f * inv[j*n+i]
					}
				}
			}
		}
		return g.add(x, gx)
	})
}

// invertMatrix writes the inverse of the n x n row-major matrix a (which it
// overwrites) into inv, by Gauss-Jordan elimination with partial pivoting;
// false when a pivot is zero (a is singular).
func invertMatrix(a, inv []float64, n int) bool {
	clear(inv)
	for i := range n {
		inv[i*n+i] = 1
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r*n+c]) > math.Abs(a[p*n+c]) {
				p = r
			}
		}
		if a[p*n+c] == 0 {
			return false
		}
		if p != c {
			for j := range n {
				a[c*n+j], a[p*n+j] = a[p*n+j], a[c*n+j]
				inv[c*n+j], inv[p*n+j] = inv[p*n+j], inv[c*n+j]
			}
		}
		s := 1 / a[c*n+c]
		for j := range n {
			a[c*n+j] *= s
			inv[c*n+j] *= s
		}
		for r := range n {
			if r == c {
				continue
			}
			f := a[r*n+c]
			if f == 0 {
				continue
			}
			for j := range n {
				a[r*n+j] -= f * a[c*n+j]
				inv[r*n+j] -= f * inv[c*n+j]
			}
		}
	}
	return true
}
