package native

import "github.com/deep500/deep500-go/backend/native/internal/par"

// gradPool2D is the backward pass of 1-D and 2-D MaxPool and AveragePool,
// the counterpart of pool2D: each window is read from the per-axis tables
// of poolAxisTable instead of being listed position by position by the
// N-D walker. It picks the same maximum as the walker (the first in
// row-major window order, NaN winning) and divides averages by the same
// count. It reports whether it applied.
func gradPool2D[T floatElem](k *gradPoolKernel, chunks int, dx, x, dy []T) bool {
	pl := k.pl
	if !pl.fastReady {
		pl.fast, pl.fastOK = newPoolFast2D(k.fwd.mode, pl.g)
		pl.fastReady = true
	}
	if !pl.fastOK {
		return false
	}
	t := taskOf[gradPool2DTask[T]](&k.task2D)
	*t = gradPool2DTask[T]{k: k, dx: dx, x: x, dy: dy, chunks: max(chunks, 1)}
	par.Spread(t.chunks, t)  // one chunk runs here
	*t = gradPool2DTask[T]{} // hold no tensors between runs
	return true
}

// gradPool2DTask is gradPool2D's work: part w of chunks runs of planes,
// kept by the kernel so that handing it to the workers allocates nothing.
type gradPool2DTask[T floatElem] struct {
	k         *gradPoolKernel
	dx, x, dy []T
	chunks    int
}

func (t *gradPool2DTask[T]) Work(w int) {
	n := t.k.pl.planes
	t.planes(w*n/t.chunks, (w+1)*n/t.chunks)
}

// planes is the backward pass of planes [lo, hi).
func (t *gradPool2DTask[T]) planes(lo, hi int) {
	pl, mode := t.k.pl, t.k.fwd.mode
	f := &pl.fast
	x, dx, dy := t.x, t.dx, t.dy
	rows, cols := f.rows, f.cols
	H, W, OH, OW, dh, dw := f.H, f.W, f.OH, f.OW, f.dh, f.dw
	for plane := lo; plane < hi; plane++ {
		src, dst := x[plane*H*W:(plane+1)*H*W], dx[plane*H*W:(plane+1)*H*W]
		gy := dy[plane*OH*OW : (plane+1)*OH*OW]
		for oh := range OH {
			r := rows[oh]
			for ow := range OW {
				c := cols[ow]
				grad := gy[oh*OW+ow]
				if mode == poolMax && r.hi-r.lo == 2 && c.hi-c.lo == 2 && dh == 1 && dw == 1 {
					if _, off, ok := max2x2(src, (r.start+r.lo)*W+c.start+c.lo, W); ok {
						dst[off] += grad
						continue
					}
				}
				if mode == poolMax {
					best, bestOff := T(0), -1
					for kh := r.lo; kh < r.hi; kh++ {
						row := (r.start+kh*dh)*W + c.start
						for kw := c.lo; kw < c.hi; kw++ {
							off := row + kw*dw
							if v := src[off]; bestOff < 0 || v > best || (v != v && best == best) {
								best, bestOff = v, off
							}
						}
					}
					if bestOff >= 0 {
						dst[bestOff] += grad
					}
					continue
				}
				cnt := 0
				if r.hi > r.lo && c.hi > c.lo {
					cnt = (r.hi - r.lo) * (c.hi - c.lo)
				}
				if pl.countPad {
					cnt = r.pad * c.pad
				}
				if cnt == 0 {
					continue
				}
				share := grad / T(cnt)
				for kh := r.lo; kh < r.hi; kh++ {
					row := (r.start+kh*dh)*W + c.start
					for kw := c.lo; kw < c.hi; kw++ {
						dst[row+kw*dw] += share
					}
				}
			}
		}
	}
}
