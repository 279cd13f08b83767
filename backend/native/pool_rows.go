package native

import "github.com/deep500/deep500-go/backend/native/internal/pool"

// poolRowKernel runs the vector kernels of package pool on the part of
// each output row of a float32 2-D MaxPool or AveragePool whose windows
// lie wholly inside the input (every column but those the padding
// overlaps), leaving the rest to pool2D's scalar loop. The kernels give
// the scalar loop's results bit for bit; a MaxPool row whose windows may
// hold a NaN is handed back to the scalar loop whole, which keeps the
// first NaN.
type poolRowKernel struct {
	enabled      bool // row runs the vector kernels
	max          bool
	countPad     bool
	rows, cols   []poolAxis
	H, W, OH, OW int
	x, y         []float32
	kw, sw       int
	colLo, colHi int // output columns with whole windows
}

// newPoolRowKernel prepares the float32 paths of pool2D. They need
// float32 data, MaxPool or AveragePool, no dilation and no Indices output
// (their offsets are the scalar loop's); else the kernel is the zero
// value, which does nothing. The vector kernels also need a run of
// whole-window columns long enough for them.
func newPoolRowKernel[T float32 | float64 | int8 | uint8](mode poolMode, f poolFast2D, countPad bool, x, y []T, idx []int64) poolRowKernel {
	xf, okX := any(x).([]float32)
	yf, okY := any(y).([]float32)
	if !okX || !okY || idx != nil || f.dh != 1 || f.dw != 1 || (mode != poolMax && mode != poolAvg) {
		return poolRowKernel{}
	}
	k := poolRowKernel{max: mode == poolMax, countPad: countPad, rows: f.rows, cols: f.cols,
		H: f.H, W: f.W, OH: f.OH, OW: f.OW, x: xf, y: yf,
		kw: f.g.Kernel[1], sw: f.g.Strides[1], colLo: -1}
	for ow, c := range f.cols {
		if c.lo == 0 && c.hi == k.kw {
			if k.colLo < 0 {
				k.colLo = ow
			}
			k.colHi = ow + 1
		}
	}
	// Rows the kernels would run in portable Go (too short, stride over
	// 2, no vector unit) stay with pool2D's loop, whose 2×2 case is tuned
	// for small windows.
	k.enabled = k.colLo >= 0 && pool.Vectorised(k.colHi-k.colLo, k.sw)
	return k
}

// row computes the whole-window columns [colLo, colHi) of output row oh
// of plane and reports whether it did.
func (k *poolRowKernel) row(plane, oh int) bool {
	if !k.enabled {
		return false
	}
	f := k
	r := f.rows[oh]
	rows := r.hi - r.lo
	if rows <= 0 {
		return false
	}
	src := k.x[plane*f.H*f.W+(r.start+r.lo)*f.W+f.cols[k.colLo].start : (plane+1)*f.H*f.W]
	dst := k.y[plane*f.OH*f.OW+oh*f.OW+k.colLo : plane*f.OH*f.OW+oh*f.OW+k.colHi]
	if k.max {
		return pool.MaxWindows(dst, src, f.W, rows, k.kw, k.sw)
	}
	// A whole-window column has all kw taps inside the input, hence
	// inside the padded extent too.
	cnt := rows * k.kw
	if k.countPad {
		cnt = r.pad * k.kw
	}
	pool.AvgWindows(dst, src, f.W, rows, k.kw, k.sw, float64(cnt))
	return true
}
