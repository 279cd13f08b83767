package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rule of LRN (versions 1 and 13). With
// S_c = bias + alpha/size · Σ_{c' ∈ W(c)} x_{c'}² and y_c = x_c S_c^-β,
//
//	dx_j = dy_j S_j^-β − 2β·alpha/size · x_j · Σ_{c : j ∈ W(c)} dy_c x_c S_c^(-β-1)
//
// where j ∈ W(c) ⇔ c ∈ [j − after, j + before] (the forward's window
// reversed). A first pass stores t_c = dy_c x_c S_c^(-β-1) and the direct
// term; a second adds the window sums of t.
type gradLRNKernel struct {
	fwd     lrnKernel
	x, y    int
	sx, st  gradScratch
	threads int
}

func (gb *gradBuilder) VisitLRN(op *ops.LRN) error {
	if op.Size < 1 || op.Size > convMaxElements {
		return fmt.Errorf("LRN: size %d must be positive", op.Size)
	}
	k := &gradLRNKernel{fwd: lrnKernel{alpha: float64(op.Alpha), beta: float64(op.Beta), bias: float64(op.Bias), size: int(op.Size)}}
	k.x, k.y, k.threads = gb.slot(op.In.X), gb.slot(op.Out.Y), gb.e.threads
	return gb.set(k.run)
}

func (k *gradLRNKernel) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil || !g.wants(k.x) {
		return nil
	}
	x, err := floatTensor(slots[k.x], "input X")
	if err != nil {
		return err
	}
	if gy.Type != x.Type || !sameShape(gy.Shape, x.Shape) || len(x.Shape) < 2 {
		return fmt.Errorf("LRN gradient: output gradient tensor(%v)%v for X tensor(%v)%v", gy.Type, gy.Shape, x.Type, x.Shape)
	}
	n, c, inner := x.Shape[0], x.Shape[1], onnx.NumElements(x.Shape[2:])
	dx := k.sx.zeros(x.Type, x.Shape)
	t := k.st.zeros(x.Type, x.Shape)
	switch d := dx.Data.(type) {
	case []float32:
		gradLRN(k, d, t.Data.([]float32), x.Data.([]float32), gy.Data.([]float32), n, c, inner)
	case []float64:
		gradLRN(k, d, t.Data.([]float64), x.Data.([]float64), gy.Data.([]float64), n, c, inner)
	}
	return g.add(k.x, dx)
}

func gradLRN[T floatElem](k *gradLRNKernel, dx, t, x, dy []T, n, c, inner int) {
	grain := max(1, par.Grain/max(inner*k.fwd.size, 1))
	if par.Chunks(n*c, k.threads, grain) <= 1 {
		// One chunk: no goroutines, and no closure to allocate.
		gradLRNDirect(k, dx, t, x, dy, c, inner, 0, n*c)
		gradLRNWindows(k, dx, t, x, c, inner, 0, n*c)
		return
	}
	par.For(n*c, k.threads, grain, func(lo, hi int) { gradLRNDirect(k, dx, t, x, dy, c, inner, lo, hi) })
	par.For(n*c, k.threads, grain, func(lo, hi int) { gradLRNWindows(k, dx, t, x, c, inner, lo, hi) })
}

// gradLRNDirect computes, for planes [lo, hi), the direct term dy S^-β
// into dx and t = dy x S^(-β-1).
func gradLRNDirect[T floatElem](k *gradLRNKernel, dx, t, x, dy []T, c, inner, lo, hi int) {
	f := &k.fwd
	before, after := (f.size-1)/2, f.size-1-(f.size-1)/2
	coef := f.alpha / float64(f.size)
	for p := lo; p < hi; p++ {
		img, ch := p/c, p%c
		c0, c1 := max(0, ch-before), min(c-1, ch+after)
		for i := range inner {
			var sq float64
			for cc := c0; cc <= c1; cc++ {
				v := float64(x[(img*c+cc)*inner+i])
				sq += v * v
			}
			idx := p*inner + i
			s := f.bias + coef*sq
			sb := math.Pow(s, -f.beta)
			dx[idx] = T(float64(dy[idx]) * sb)
			t[idx] = T(float64(dy[idx]) * float64(x[idx]) * sb / s)
		}
	}
}

// gradLRNWindows adds, for planes [lo, hi), the window sums of t.
func gradLRNWindows[T floatElem](k *gradLRNKernel, dx, t, x []T, c, inner, lo, hi int) {
	f := &k.fwd
	before, after := (f.size-1)/2, f.size-1-(f.size-1)/2
	coef := f.alpha / float64(f.size)
	for p := lo; p < hi; p++ {
		img, j := p/c, p%c
		c0, c1 := max(0, j-after), min(c-1, j+before)
		for i := range inner {
			var acc float64
			for cc := c0; cc <= c1; cc++ {
				acc += float64(t[(img*c+cc)*inner+i])
			}
			idx := p*inner + i
			dx[idx] += T(-2 * f.beta * coef * float64(x[idx]) * acc)
		}
	}
}
