package gemm

import "github.com/deep500/deep500-go/backend/native/internal/vec"

// Epilogue is what a product does to C after the multiply-adds, tile by
// tile while the tile is still in cache: the bias of a layer, a residual
// input, and an activation, which would otherwise each be a pass over the
// whole output in memory (a convolution's output is the GEMM's C: output
// channels are rows, positions columns; a fully connected layer's output
// features are columns). The steps run in this order, each optional:
//
//	C = C + RowBias[i]        (one value per row)
//	C = C + ColBias[j]        (one value per column)
//	C = C + Residual          (elementwise, laid out like C)
//	C = min(max(C, Lo), Hi)   (when Clamp: Relu is [0, +Inf], Relu6 [0, 6])
//	Rows(C's row)             (any other function, in place)
//
// Each step rounds on its own, as the separate operators would. It is a
// plain struct rather than a per-element function so that the common steps
// run as vector kernels over whole rows; Rows is called once per row
// segment of a tile (at most ncTile elements), never per element.
type Epilogue[T Float] struct {
	RowBias  []T // m values, or nil
	ColBias  []T // n values, or nil
	Residual []T // the m x n values, leading dimension ldc like C; or nil
	Clamp    bool
	Lo, Hi   T // the clamp's bounds; a NaN stays NaN (as vec.Clip)
	// Rows, when not nil, rewrites a finished row segment in place: the
	// activations that are not a clamp (Sigmoid, HardSwish, ...).
	Rows func(row []T)
}

// Apply runs the epilogue over the whole m x n matrix C (leading dimension
// ldc), for callers whose product does not go through Multiply (the thin
// convolutions) and should still end the same way.
func (ep *Epilogue[T]) Apply(c []T, ldc, m, n int) {
	if ep != nil {
		ep.apply(c, ldc, 0, 0, m, n)
	}
}

// apply runs the epilogue over the rows x cols block of C at (i0, j0); c
// and Residual start at element (0, 0).
func (ep *Epilogue[T]) apply(c []T, ldc, i0, j0, rows, cols int) {
	// A row bias then a clamp (a 1x1 convolution and its ReLU6) is one
	// pass of vec.BiasClip for float32, the same bits as the two passes.
	biasClip := ep.RowBias != nil && ep.Clamp && ep.ColBias == nil && ep.Residual == nil
	for i := i0; i < i0+rows; i++ {
		row := c[i*ldc+j0 : i*ldc+j0+cols]
		if r, ok := any(row).([]float32); ok && biasClip {
			vec.BiasClip(r, r, any(ep.RowBias[i]).(float32), any(ep.Lo).(float32), any(ep.Hi).(float32))
			if ep.Rows != nil {
				ep.Rows(row)
			}
			continue
		}
		if ep.RowBias != nil {
			addScalar(row, ep.RowBias[i])
		}
		if ep.ColBias != nil {
			addVector(row, ep.ColBias[j0:j0+cols])
		}
		if ep.Residual != nil {
			addVector(row, ep.Residual[i*ldc+j0:i*ldc+j0+cols])
		}
		if ep.Clamp {
			clamp(row, ep.Lo, ep.Hi)
		}
		if ep.Rows != nil {
			ep.Rows(row)
		}
	}
}

// addScalar adds b to every element of row: for float32 with vec's
// ScaleShift (x·1 + b is exactly x + b, even fused into one rounding).
func addScalar[T Float](row []T, b T) {
	if r, ok := any(row).([]float32); ok {
		vec.ScaleShift(r, r, 1, any(b).(float32))
		return
	}
	for j := range row {
		row[j] += b
	}
}

// addVector adds x to row elementwise: for float32 with vec's Axpy (1·x + y
// is exactly x + y).
func addVector[T Float](row, x []T) {
	if r, ok := any(row).([]float32); ok {
		vec.Axpy(1, any(x).([]float32), r)
		return
	}
	x = x[:len(row)]
	for j := range row {
		row[j] += x[j]
	}
}

// clamp limits row to [lo, hi], keeping NaNs: for float32 with vec's Clip.
func clamp[T Float](row []T, lo, hi T) {
	if r, ok := any(row).([]float32); ok {
		vec.Clip(r, r, any(lo).(float32), any(hi).(float32))
		return
	}
	for j, v := range row {
		if v < lo {
			v = lo
		}
		if v > hi {
			v = hi
		}
		row[j] = v
	}
}
