package conv

// DepthwiseImpl is one implementation of the depthwise kernels: a name
// (for tests and benchmarks), the kernel of each size and stride it has,
// and the split of a row into its even and odd elements.
type DepthwiseImpl struct {
	Name string
	// Plane returns the kernel that computes an output plane of a k×k
	// depthwise convolution of stride s from the padded layout, or nil.
	Plane func(k, s int) DepthwisePlaneFunc
	// Deinterleave sets even[i] = src[2i] and odd[i] = src[2i+1] for
	// every element of src; it may set the elements after those, up to
	// index roundUp(len(src), 2·depthwiseVector)/2, to zero (whole
	// vectors), and even and odd must have room for them.
	Deinterleave func(even, odd, src []float32)
}

// DepthwisePlaneFunc computes y (oh×ow, row-major) from a padded layout
// src: y = min(max(bias + Σ taps, lo), hi), the taps added in row-major
// kernel order; NaN passes the clamp.
type DepthwisePlaneFunc func(l *DepthwiseLayout, y, src, w []float32, bias, lo, hi float32)

// depthwisePortable runs the kernel in plain Go everywhere; it is the
// reference the others are tested against.
var depthwisePortable = DepthwiseImpl{
	Name:         "portable",
	Plane:        func(k, s int) DepthwisePlaneFunc { return depthwisePlanePortable },
	Deinterleave: deinterleavePortable,
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
