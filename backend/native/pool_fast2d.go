package native

import (
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/par"
)

// One- and two-dimensional MaxPool and AveragePool without the general N-D window
// walk: per output row and column the valid kernel range is computed once,
// so the inner loops only read pixels inside the image, with no bounds
// test and no call per element. Large windows (dilated pooling over big
// images) spend nearly all their time here. Work is split over
// (plane, output row) pairs, so a single image still uses every core.
// In float32 rows the whole windows go first to the vector kernels of
// package pool (poolRowKernel, pool_rows.go), with the same results.

// poolAxis is the valid kernel range of one output coordinate along one
// spatial axis: kernel taps [lo, hi) fall inside the input, pad of them
// inside the padded extent (for count_include_pad).
type poolAxis struct{ lo, hi, start, pad int }

// poolAxisTable computes the ranges of every output coordinate of axis d.
func poolAxisTable(g *convGeom, d int) []poolAxis {
	t := make([]poolAxis, g.Out[d])
	in, k, s, dil, pb, pe := g.In[d], g.Kernel[d], g.Strides[d], g.Dilations[d], g.PadBegin[d], g.PadEnd[d]
	for o := range t {
		start := o*s - pb
		a := poolAxis{start: start}
		for j := range k {
			i := start + j*dil
			if i >= 0 && i < in {
				if a.hi == 0 {
					a.lo = j
				}
				a.hi = j + 1
			}
			if i >= -pb && i < in+pe {
				a.pad++
			}
		}
		t[o] = a
	}
	return t
}

// as2D views a 1-D window geometry as 2-D with a leading axis of size 1,
// so 1-D pooling takes the same fast path.
func as2D(g *convGeom) *convGeom {
	return &convGeom{
		In: []int{1, g.In[0]}, Kernel: []int{1, g.Kernel[0]}, Out: []int{1, g.Out[0]},
		Strides: []int{1, g.Strides[0]}, Dilations: []int{1, g.Dilations[0]},
		PadBegin: []int{0, g.PadBegin[0]}, PadEnd: []int{0, g.PadEnd[0]},
	}
}

// poolFast2D is the geometry of the 1-D and 2-D pooling fast paths
// (forward and backward): the window tables of both axes and the sizes.
type poolFast2D struct {
	g                    *convGeom // 2-D (a 1-D geometry gets a leading axis of 1)
	rows, cols           []poolAxis
	H, W, OH, OW, dh, dw int
}

// newPoolFast2D reports whether the fast paths apply to a pooling of that
// mode over g (MaxPool or AveragePool in 1 or 2 dimensions) and returns
// their geometry.
func newPoolFast2D(mode poolMode, g *convGeom) (poolFast2D, bool) {
	if mode != poolMax && mode != poolAvg {
		return poolFast2D{}, false
	}
	switch len(g.In) {
	case 1:
		g = as2D(g)
	case 2:
	default:
		return poolFast2D{}, false
	}
	return poolFast2D{g: g, rows: poolAxisTable(g, 0), cols: poolAxisTable(g, 1),
		H: g.In[0], W: g.In[1], OH: g.Out[0], OW: g.Out[1], dh: g.Dilations[0], dw: g.Dilations[1]}, true
}

// pool2D reports whether the fast path applies (1-D or 2-D MaxPool or
// AveragePool) and runs it. The window tables are computed on the plan's
// first use and kept with it.
func pool2D[T float32 | float64 | int8 | uint8](k *poolKernel, pl *poolPlan, y, x []T, idx []int64) bool {
	if !pl.fastReady {
		pl.fast, pl.fastOK = newPoolFast2D(k.mode, pl.g)
		pl.fastReady = true
	}
	if !pl.fastOK {
		return false
	}
	f := &pl.fast
	work := pl.planes * f.OH
	grain := max(1, par.Grain/max(1, f.OW*f.g.KernelSize()))
	chunks := par.Chunks(work, k.threads, grain)
	if chunks == 1 {
		pool2DRange(k, pl, y, x, idx, 0, work)
		return true
	}
	// The kernel's task, so that the parallel path allocates nothing.
	task := taskOf[pool2DTask[T]](&k.task)
	*task = pool2DTask[T]{k: k, pl: pl, y: y, x: x, idx: idx, work: work, chunks: chunks}
	par.Spread(chunks, task)
	*task = pool2DTask[T]{} // hold no tensors between runs
	return true
}

// pool2DTask is pool2D's parallel work: worker w takes the w-th of chunks
// equal runs of the (plane, output row) tasks.
type pool2DTask[T float32 | float64 | int8 | uint8] struct {
	k            *poolKernel
	pl           *poolPlan
	y, x         []T
	idx          []int64
	work, chunks int
}

func (t *pool2DTask[T]) Work(w int) {
	pool2DRange(t.k, t.pl, t.y, t.x, t.idx, w*t.work/t.chunks, (w+1)*t.work/t.chunks)
}

// pool2DRange runs pool2D's (plane, output row) tasks [lo, hi).
func pool2DRange[T float32 | float64 | int8 | uint8](k *poolKernel, pl *poolPlan, y, x []T, idx []int64, lo, hi int) {
	f := &pl.fast
	rows, cols := f.rows, f.cols
	H, W, OH, OW, dh, dw := f.H, f.W, f.OH, f.OW, f.dh, f.dw
	colMajor := k.storageOrder == 1
	// Made here, not outside, so that it stays on this goroutine's stack.
	vec := newPoolRowKernel(k.mode, *f, pl.countPad, x, y, idx)
	for task := lo; task < hi; task++ {
		plane, oh := task/OH, task%OH
		src := x[plane*H*W : (plane+1)*H*W]
		dst := y[plane*OH*OW+oh*OW : plane*OH*OW+(oh+1)*OW]
		r := rows[oh]
		// The vector kernels did columns [skipLo, skipHi) when they
		// applied; the scalar loop below does the rest.
		skipLo, skipHi := OW, OW
		if vec.row(plane, oh) {
			skipLo, skipHi = vec.colLo, vec.colHi
		}
		for ow := 0; ow < OW; ow++ {
			if ow == skipLo {
				if ow = skipHi; ow >= OW {
					break
				}
			}
			c := cols[ow]
			if k.mode == poolMax && r.hi-r.lo == 2 && c.hi-c.lo == 2 && dh == 1 && dw == 1 {
				// A whole 2×2 window (LeNet's and most CNNs' pooling):
				// four fixed compares, first maximum kept as below; a
				// window holding a NaN takes the general loop.
				if best, bestOff, ok := max2x2(src, (r.start+r.lo)*W+c.start+c.lo, W); ok {
					dst[ow] = best
					if idx != nil {
						idx[plane*OH*OW+oh*OW+ow] = poolIndex(plane, H, W, bestOff, colMajor)
					}
					continue
				}
			}
			if k.mode == poolMax {
				best, bestOff, found := T(0), -1, false
				for kh := r.lo; kh < r.hi; kh++ {
					row := (r.start + kh*dh) * W
					for kw := c.lo; kw < c.hi; kw++ {
						off := row + c.start + kw*dw
						v := src[off]
						if !found || v > best || (v != v && best == best) {
							best, bestOff, found = v, off, true
						}
					}
				}
				dst[ow] = best
				if idx != nil {
					i := plane*OH*OW + oh*OW + ow
					if bestOff < 0 {
						idx[i] = -1
					} else {
						idx[i] = poolIndex(plane, H, W, bestOff, colMajor)
					}
				}
				continue
			}
			var sum float64
			for kh := r.lo; kh < r.hi; kh++ {
				row := (r.start + kh*dh) * W
				for kw := c.lo; kw < c.hi; kw++ {
					sum += float64(src[row+c.start+kw*dw])
				}
			}
			cnt := (r.hi - r.lo) * (c.hi - c.lo)
			if r.hi <= r.lo || c.hi <= c.lo {
				cnt = 0
			}
			if pl.countPad {
				cnt = r.pad * c.pad
			}
			if cnt > 0 {
				dst[ow] = T(sum / float64(cnt))
			} else {
				dst[ow] = T(math.NaN())
			}
		}
	}
}

// poolIndex is MaxPool's Indices value of the element at offset off of
// plane (of H×W): its flat position in the input, with the plane's
// elements counted column by column when colMajor (storage_order 1).
func poolIndex(plane, H, W, off int, colMajor bool) int64 {
	if colMajor {
		return int64(plane*H*W + (off%W)*H + off/W)
	}
	return int64(plane*H*W + off)
}

// max2x2 is the first maximum of the 2×2 window whose top-left element is
// src[o] (rows W apart) and its offset, in four fixed compares; ok is
// false when the window holds a NaN, which the general loops handle.
func max2x2[T float32 | float64 | int8 | uint8](src []T, o, W int) (best T, off int, ok bool) {
	v0, v1, v2, v3 := src[o], src[o+1], src[o+W], src[o+W+1]
	if v0 != v0 || v1 != v1 || v2 != v2 || v3 != v3 {
		return 0, 0, false
	}
	best, off = v0, o
	if v1 > best {
		best, off = v1, o+1
	}
	if v2 > best {
		best, off = v2, o+W
	}
	if v3 > best {
		best, off = v3, o+W+1
	}
	return best, off, true
}
