package conv

// DepthwiseImpl is one implementation of the depthwise kernels: a name
// (for tests and benchmarks), the kernel of each size and stride it has,
// and the row copies that fill the padded layout.
type DepthwiseImpl struct {
	Name string
	// Plane returns the kernel that computes an output plane of a k×k
	// depthwise convolution of stride s from the padded layout, or nil.
	Plane func(k, s int) DepthwisePlaneFunc
	// CopyRows copies rows rows of n elements from src to dst, the rows
	// srcStride and dstStride elements apart; nothing else is written.
	CopyRows func(dst []float32, dstStride int, src []float32, srcStride, rows, n int)
	// DeinterleaveRows sets even[r·dstStride+i] = src[r·srcStride+2i]
	// and odd[r·dstStride+i] = src[r·srcStride+2i+1] for the n elements
	// of each of rows rows of src; in each row it may set the elements
	// after those, up to index roundUp(n, 2·depthwiseVector)/2, to zero
	// (whole vectors), and even and odd must have room for them.
	DeinterleaveRows func(even, odd []float32, dstStride int, src []float32, srcStride, rows, n int)
}

// DepthwisePlaneFunc computes y (oh×ow, row-major) from a padded layout
// src: y = min(max(bias + Σ taps, lo), hi); NaN passes the clamp. The
// portable kernel adds the taps in row-major kernel order, the assembly
// ones in that order or, for a lone vector, in partial sums.
type DepthwisePlaneFunc func(l *DepthwiseLayout, y, src, w []float32, bias, lo, hi float32)

// depthwisePortable runs the kernel in plain Go everywhere; it is the
// reference the others are tested against.
var depthwisePortable = DepthwiseImpl{
	Name:             "portable",
	Plane:            func(k, s int) DepthwisePlaneFunc { return depthwisePlanePortable },
	CopyRows:         copyRowsPortable,
	DeinterleaveRows: deinterleaveRowsPortable,
}

// depthwiseImpls is the dispatch table: the implementations this machine
// runs, best first, the portable one last, filled once from the CPU's
// features (depthwiseArchImpls).
var depthwiseImpls = append(depthwiseArchImpls(), depthwisePortable)

// DepthwiseImplementations returns every depthwise implementation this
// machine runs, the one in use first and the portable one last.
func DepthwiseImplementations() []DepthwiseImpl {
	return append([]DepthwiseImpl(nil), depthwiseImpls...)
}

// DepthwiseActive returns the depthwise implementation in use.
func DepthwiseActive() *DepthwiseImpl { return &depthwiseImpls[0] }
