package pool

import "math"

// Impl is one implementation of the row kernels: a name (for tests and
// benchmarks) and one function per kernel, with the semantics of the
// package-level function of the same name.
type Impl struct {
	Name       string
	MaxWindows func(dst, src []float32, stride, rows, kw, sw int) (ok bool)
	AvgWindows func(dst, src []float32, stride, rows, kw, sw int, divisor float64)
	// Vectorised reports whether rows of n outputs at column stride sw
	// run vector code (else they run the portable loops).
	Vectorised func(n, sw int) bool
}

// impls is the dispatch table: the implementations this machine runs,
// best first, the portable one last, chosen once from the CPU's features.
var impls = append(archImpls(), portable)

// active is the implementation the package-level kernels run.
var active = impls[0]

// Implementations returns every implementation this machine can run, the
// one in use first and the portable one last.
func Implementations() []Impl { return append([]Impl(nil), impls...) }

// Vectorised reports whether the kernels run vector code on rows of n
// outputs at column stride sw; when not, a caller with a scalar loop of
// its own tuned for small windows may as well keep it.
func Vectorised(n, sw int) bool { return active.Vectorised(n, sw) }

// MaxWindows sets dst[o], for every o < len(dst), to the first maximum in
// row-major order of the window src[r*stride + o*sw + j], r < rows, j < kw
// (rows >= 1, kw >= 1, sw >= 1; src must hold every such element). It
// reports false, leaving dst unspecified, when the window might hold a
// NaN: then the caller's scalar loop, which keeps the first NaN, decides.
func MaxWindows(dst, src []float32, stride, rows, kw, sw int) (ok bool) {
	return active.MaxWindows(dst, src, stride, rows, kw, sw)
}

// AvgWindows sets dst[o], for every o < len(dst), to the sum in float64,
// in row-major order, of the window src[r*stride + o*sw + j], r < rows,
// j < kw, divided by divisor and rounded to float32.
func AvgWindows(dst, src []float32, stride, rows, kw, sw int, divisor float64) {
	active.AvgWindows(dst, src, stride, rows, kw, sw, divisor)
}

// windowSpan is the number of elements of src a call over n outputs
// reads: through the last element of the last window.
func windowSpan(n, stride, rows, kw, sw int) int {
	return (rows-1)*stride + (n-1)*sw + kw
}

// portable is the implementation in plain Go, which runs everywhere and
// serves any stride and the rows too short for the vector kernels.
var portable = Impl{Name: "portable", MaxWindows: maxWindowsPortable, AvgWindows: avgWindowsPortable,
	Vectorised: func(n, sw int) bool { return false }}

func maxWindowsPortable(dst, src []float32, stride, rows, kw, sw int) bool {
	if len(dst) == 0 {
		return true
	}
	src = src[:windowSpan(len(dst), stride, rows, kw, sw)]
	for o := range dst {
		best := float32(math.Inf(-1))
		for r := range rows {
			row := src[r*stride+o*sw : r*stride+o*sw+kw]
			for _, v := range row {
				if v != v {
					return false
				}
				if v > best {
					best = v
				}
			}
		}
		dst[o] = best
	}
	return true
}

func avgWindowsPortable(dst, src []float32, stride, rows, kw, sw int, divisor float64) {
	if len(dst) == 0 {
		return
	}
	src = src[:windowSpan(len(dst), stride, rows, kw, sw)]
	for o := range dst {
		var sum float64
		for r := range rows {
			for _, v := range src[r*stride+o*sw : r*stride+o*sw+kw] {
				sum += float64(v)
			}
		}
		dst[o] = float32(sum / divisor)
	}
}
