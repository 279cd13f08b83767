package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rules of MaxPool, AveragePool, LpPool and their global forms.
//
// The windows are those of the forward (poolKernel.plan: the same
// geometry under auto_pad, ceil_mode, dilations and pads), walked in the
// same order:
//   - MaxPool sends each output's gradient to the input position of its
//     window's maximum, the first one on ties (the forward's rule, so the
//     gradient matches the Indices output);
//   - AveragePool spreads it evenly over the window's input positions,
//     divided by the forward's divisor (with count_include_pad, padding
//     positions count but receive nothing);
//   - LpPool uses dy/dx = sign(x) |x|^(p-1) / y^(p-1) (zero where y is 0).
//
// Planes (image, channel) are spread over par's goroutines; each range's
// window walker is allocated before the ranges are handed out.

// gradPoolParallel runs body(chunk, lo, hi) over [0, n) in chunks
// contiguous ranges (chunks from par.Chunks, split as par.For splits),
// chunk numbering the range so that each has its own walker. The ranges
// go to par's waiting goroutines, so a call starts none.
func gradPoolParallel(n, chunks int, body func(chunk, lo, hi int)) {
	if chunks <= 1 {
		if n > 0 {
			body(0, 0, n)
		}
		return
	}
	par.Spread(chunks, &gradPoolRanges{n: n, chunks: chunks, body: body})
}

// gradPoolRanges is gradPoolParallel's work for par.Spread: part w is
// range w of n items in chunks.
type gradPoolRanges struct {
	n, chunks int
	body      func(chunk, lo, hi int)
}

func (r *gradPoolRanges) Work(w int) { r.body(w, w*r.n/r.chunks, (w+1)*r.n/r.chunks) }

// gradPoolWalker lists the input positions of one output position's
// window: poolWindow.visit into a reusable slice.
type gradPoolWalker struct {
	poolWindow
	offs []int // the window's input offsets inside the plane, in order
}

func (w *gradPoolWalker) reset(pl *poolPlan) {
	n := len(pl.g.In)
	w.pl = pl
	if cap(w.start) < n {
		w.start, w.pos, w.opos = make([]int, n), make([]int, n), make([]int, n)
	}
	w.start, w.pos, w.opos = w.start[:n], w.pos[:n], w.opos[:n]
	if ks := pl.g.KernelSize(); cap(w.offs) < ks {
		w.offs = make([]int, 0, ks)
	}
	clear(w.opos)
}

// window fills w.offs for the current output position and returns the
// forward's divisor for average pooling.
func (w *gradPoolWalker) window() int {
	w.offs = w.offs[:0]
	return w.visit(func(off int) { w.offs = append(w.offs, off) })
}

// gradPoolKernel is the backward kernel of MaxPool, AveragePool or LpPool.
type gradPoolKernel struct {
	fwd     poolKernel
	x, y    int
	threads int

	lastX   []int
	pl      *poolPlan
	walkers []gradPoolWalker
	sx      gradScratch
	task2D  any // gradPool2D's *gradPool2DTask of the element type last run
}

func (gb *gradBuilder) poolGrad(k *gradPoolKernel, in, out string) error {
	if err := checkAutoPad(k.fwd.attrs.autoPad); err != nil {
		return err
	}
	if len(k.fwd.kernelShape) == 0 {
		return fmt.Errorf("%v: attribute kernel_shape is required", k.fwd.mode)
	}
	k.x, k.y, k.threads = gb.slot(in), gb.slot(out), gb.e.threads
	return gb.set(k.run)
}

func (gb *gradBuilder) VisitMaxPool(op *ops.MaxPool) error {
	k := &gradPoolKernel{fwd: poolKernel{
		mode:        poolMax,
		attrs:       convWindowAttrs{op: "MaxPool", autoPad: op.AutoPad, strides: op.Strides, dilations: op.Dilations, pads: op.Pads, ceil: op.CeilMode != 0},
		kernelShape: slices.Clone(op.KernelShape),
	}}
	return gb.poolGrad(k, op.In.X, op.Out.Y)
}

func (gb *gradBuilder) VisitAveragePool(op *ops.AveragePool) error {
	k := &gradPoolKernel{fwd: poolKernel{
		mode:        poolAvg,
		attrs:       convWindowAttrs{op: "AveragePool", autoPad: op.AutoPad, strides: op.Strides, dilations: op.Dilations, pads: op.Pads, ceil: op.CeilMode != 0},
		kernelShape: slices.Clone(op.KernelShape),
		countPad:    op.CountIncludePad != 0,
	}}
	return gb.poolGrad(k, op.In.X, op.Out.Y)
}

func (gb *gradBuilder) VisitLpPool(op *ops.LpPool) error {
	if op.P < 1 {
		return network.Unsupportedf("LpPool with p = %d", op.P)
	}
	k := &gradPoolKernel{fwd: poolKernel{
		mode:        poolLp,
		attrs:       convWindowAttrs{op: "LpPool", autoPad: op.AutoPad, strides: op.Strides, dilations: op.Dilations, pads: op.Pads, ceil: op.CeilMode != 0},
		kernelShape: slices.Clone(op.KernelShape),
		p:           op.P,
	}}
	return gb.poolGrad(k, op.In.X, op.Out.Y)
}

func (k *gradPoolKernel) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil || !g.wants(k.x) {
		return nil
	}
	x, err := floatTensor(slots[k.x], "input X")
	if err != nil {
		return err
	}
	if gy.Type != x.Type {
		return fmt.Errorf("output gradient of type %v for an input of type %v", gy.Type, x.Type)
	}
	if k.pl == nil || !slices.Equal(k.lastX, x.Shape) {
		pl, _, err := k.fwd.plan(x)
		if err != nil {
			return err
		}
		k.pl, k.lastX = pl, append(k.lastX[:0], x.Shape...)
	}
	pl := k.pl
	if gy.Len() != pl.planes*pl.g.OutSize() {
		return fmt.Errorf("output gradient of shape %v for %d planes of %v", gy.Shape, pl.planes, pl.g.Out)
	}
	var y *onnx.Tensor
	if k.fwd.mode == poolLp {
		if y, err = floatTensor(slots[k.y], "output Y"); err != nil {
			return err
		}
	}
	chunks := par.Chunks(pl.planes, k.threads, max(1, par.Grain/max(1, pl.g.OutSize()*pl.g.KernelSize())))
	for len(k.walkers) < chunks {
		k.walkers = append(k.walkers, gradPoolWalker{})
	}
	for i := range chunks {
		k.walkers[i].reset(pl)
	}
	dx := k.sx.zeros(x.Type, x.Shape)
	switch d := dx.Data.(type) {
	case []float32:
		var yd []float32
		if y != nil {
			yd = y.Data.([]float32)
		}
		gradPoolBackward(k, chunks, d, x.Data.([]float32), yd, gy.Data.([]float32))
	case []float64:
		var yd []float64
		if y != nil {
			yd = y.Data.([]float64)
		}
		gradPoolBackward(k, chunks, d, x.Data.([]float64), yd, gy.Data.([]float64))
	}
	return g.add(k.x, dx)
}

func gradPoolBackward[T floatElem](k *gradPoolKernel, chunks int, dx, x, y, dy []T) {
	if gradPool2D(k, chunks, dx, x, dy) {
		return
	}
	pl := k.pl
	inSz, outSz := pl.g.InSize(), pl.g.OutSize()
	mode, p := k.fwd.mode, k.fwd.p
	gradPoolParallel(pl.planes, chunks, func(chunk, lo, hi int) {
		w := &k.walkers[chunk]
		for plane := lo; plane < hi; plane++ {
			src, dst := x[plane*inSz:(plane+1)*inSz], dx[plane*inSz:(plane+1)*inSz]
			gy := dy[plane*outSz : (plane+1)*outSz]
			var out []T
			if y != nil {
				out = y[plane*outSz : (plane+1)*outSz]
			}
			clear(w.opos)
			for o := 0; ; o++ {
				cnt := w.window()
				switch mode {
				case poolMax:
					best, bestOff := T(0), -1
					for _, off := range w.offs {
						v := src[off]
						if bestOff < 0 || v > best || (v != v && best == best) {
							best, bestOff = v, off
						}
					}
					if bestOff >= 0 {
						dst[bestOff] += gy[o]
					}
				case poolAvg:
					if cnt > 0 {
						v := gy[o] / T(cnt)
						for _, off := range w.offs {
							dst[off] += v
						}
					}
				case poolLp:
					gradLpWindow(dst, src, w.offs, gy[o], out[o], p)
				}
				if !w.next() {
					break
				}
			}
		}
	})
}

// gradLpWindow adds the gradient of y = (Σ|x|^p)^(1/p) over the window
// positions offs, scaled by gy.
func gradLpWindow[T floatElem](dst, src []T, offs []int, gy, y T, p int64) {
	if y == 0 && p > 1 {
		return // a minimum of the norm: zero subgradient
	}
	switch p {
	case 1:
		for _, off := range offs {
			if v := src[off]; v > 0 {
				dst[off] += gy
			} else if v < 0 {
				dst[off] -= gy
			}
		}
	case 2:
		s := gy / y
		for _, off := range offs {
			dst[off] += s * src[off]
		}
	default:
		pf := float64(p)
		s := float64(gy) / math.Pow(float64(y), pf-1)
		for _, off := range offs {
			v := float64(src[off])
			dst[off] += T(s * math.Copysign(math.Pow(math.Abs(v), pf-1), v))
		}
	}
}

// gradGlobalPoolKernel is the backward kernel of GlobalAveragePool,
// GlobalMaxPool and GlobalLpPool: every (image, channel) plane is one
// window.
type gradGlobalPoolKernel struct {
	mode    poolMode
	p       int64
	x, y    int
	threads int
	sx      gradScratch
}

func (gb *gradBuilder) globalPoolGrad(k *gradGlobalPoolKernel, in, out string) error {
	k.x, k.y, k.threads = gb.slot(in), gb.slot(out), gb.e.threads
	return gb.set(k.run)
}

func (gb *gradBuilder) VisitGlobalAveragePool(op *ops.GlobalAveragePool) error {
	return gb.globalPoolGrad(&gradGlobalPoolKernel{mode: poolAvg}, op.In.X, op.Out.Y)
}

func (gb *gradBuilder) VisitGlobalMaxPool(op *ops.GlobalMaxPool) error {
	return gb.globalPoolGrad(&gradGlobalPoolKernel{mode: poolMax}, op.In.X, op.Out.Y)
}

func (gb *gradBuilder) VisitGlobalLpPool(op *ops.GlobalLpPool) error {
	if op.P < 1 {
		return network.Unsupportedf("GlobalLpPool with p = %d", op.P)
	}
	return gb.globalPoolGrad(&gradGlobalPoolKernel{mode: poolLp, p: op.P}, op.In.X, op.Out.Y)
}

func (k *gradGlobalPoolKernel) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil || !g.wants(k.x) {
		return nil
	}
	x, err := floatTensor(slots[k.x], "input X")
	if err != nil {
		return err
	}
	if len(x.Shape) < 2 {
		return fmt.Errorf("input X has shape %v; want [N, C, D1, ...]", x.Shape)
	}
	planes := x.Shape[0] * x.Shape[1]
	if gy.Type != x.Type || gy.Len() != planes {
		return fmt.Errorf("output gradient tensor(%v)%v for %d planes of tensor(%v)", gy.Type, gy.Shape, planes, x.Type)
	}
	var y *onnx.Tensor
	if k.mode == poolLp {
		if y, err = floatTensor(slots[k.y], "output Y"); err != nil {
			return err
		}
	}
	inner := onnx.NumElements(x.Shape[2:])
	dx := k.sx.zeros(x.Type, x.Shape)
	switch d := dx.Data.(type) {
	case []float32:
		var yd []float32
		if y != nil {
			yd = y.Data.([]float32)
		}
		gradGlobalPool(k, d, x.Data.([]float32), yd, gy.Data.([]float32), planes, inner)
	case []float64:
		var yd []float64
		if y != nil {
			yd = y.Data.([]float64)
		}
		gradGlobalPool(k, d, x.Data.([]float64), yd, gy.Data.([]float64), planes, inner)
	}
	return g.add(k.x, dx)
}

func gradGlobalPool[T floatElem](k *gradGlobalPoolKernel, dx, x, y, dy []T, planes, inner int) {
	minChunk := max(1, par.Grain/max(inner, 1))
	if par.Chunks(planes, k.threads, minChunk) == 1 {
		gradGlobalPoolPlanes(k, dx, x, y, dy, inner, 0, planes) // no closure to allocate
		return
	}
	par.For(planes, k.threads, minChunk, func(lo, hi int) { gradGlobalPoolPlanes(k, dx, x, y, dy, inner, lo, hi) })
}

// gradGlobalPoolPlanes is gradGlobalPool over planes [lo, hi).
func gradGlobalPoolPlanes[T floatElem](k *gradGlobalPoolKernel, dx, x, y, dy []T, inner, lo, hi int) {
	for pl := lo; pl < hi; pl++ {
		src, dst := x[pl*inner:(pl+1)*inner], dx[pl*inner:(pl+1)*inner]
		if inner == 0 {
			continue
		}
		switch k.mode {
		case poolMax:
			// The forward's choice: the first maximum (a NaN wins).
			m, at := src[0], 0
			for i, v := range src[1:] {
				if v > m || v != v {
					m, at = v, i+1
				}
			}
			dst[at] += dy[pl]
		case poolAvg:
			v := dy[pl] / T(inner)
			for i := range dst {
				dst[i] += v
			}
		case poolLp:
			gradGlobalLp(dst, src, dy[pl], y[pl], k.p)
		}
	}
}

// gradGlobalLp is gradLpWindow over a whole plane.
func gradGlobalLp[T floatElem](dst, src []T, gy, y T, p int64) {
	if y == 0 && p > 1 {
		return
	}
	switch p {
	case 1:
		for i, v := range src {
			if v > 0 {
				dst[i] += gy
			} else if v < 0 {
				dst[i] -= gy
			}
		}
	case 2:
		s := gy / y
		for i, v := range src {
			dst[i] += s * v
		}
	default:
		pf := float64(p)
		s := float64(gy) / math.Pow(float64(y), pf-1)
		for i, v := range src {
			f := float64(v)
			dst[i] += T(s * math.Copysign(math.Pow(math.Abs(f), pf-1), f))
		}
	}
}
