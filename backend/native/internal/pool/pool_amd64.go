//go:build amd64 && !purego

package pool

import "golang.org/x/sys/cpu"

// archImpls lists the assembly implementations this processor (and the
// operating system's saved state) runs, best first.
func archImpls() []Impl {
	var list []Impl
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX2 {
		list = append(list, Impl{Name: "avx512", MaxWindows: maxWindowsAVX512, AvgWindows: avgWindowsAVX512, Vectorised: vectorisedAVX})
	}
	if cpu.X86.HasAVX2 {
		list = append(list, Impl{Name: "avx2", MaxWindows: maxWindowsAVX2, AvgWindows: avgWindowsAVX2, Vectorised: vectorisedAVX})
	}
	return list
}

// The kernels of pool_amd64.s take a row of at least one vector of
// outputs (8 for AVX2, 16 for AVX-512) at column stride 1 or 2; shorter
// rows go to the narrower kernels, other strides to the portable loops.

// vectorisedAVX: both implementations run rows of 8 to 15 outputs in the
// AVX2 kernels.
func vectorisedAVX(n, sw int) bool { return n >= 8 && sw <= 2 }

func maxWindowsAVX512(dst, src []float32, stride, rows, kw, sw int) bool {
	n := len(dst)
	if n < 16 || sw > 2 {
		return maxWindowsAVX2(dst, src, stride, rows, kw, sw)
	}
	src = src[:windowSpan(n, stride, rows, kw, sw)]
	if sw == 1 {
		return !maxS1AVX512(&dst[0], &src[0], n, stride, rows, kw)
	}
	return !maxS2AVX512(&dst[0], &src[0], n, stride, rows, kw)
}

func maxWindowsAVX2(dst, src []float32, stride, rows, kw, sw int) bool {
	n := len(dst)
	if n < 8 || sw > 2 {
		return maxWindowsPortable(dst, src, stride, rows, kw, sw)
	}
	src = src[:windowSpan(n, stride, rows, kw, sw)]
	if sw == 1 {
		return !maxS1AVX2(&dst[0], &src[0], n, stride, rows, kw)
	}
	return !maxS2AVX2(&dst[0], &src[0], n, stride, rows, kw)
}

func avgWindowsAVX512(dst, src []float32, stride, rows, kw, sw int, divisor float64) {
	n := len(dst)
	if n < 16 || sw > 2 {
		avgWindowsAVX2(dst, src, stride, rows, kw, sw, divisor)
		return
	}
	src = src[:windowSpan(n, stride, rows, kw, sw)]
	if sw == 1 {
		avgS1AVX512(&dst[0], &src[0], n, stride, rows, kw, divisor)
	} else {
		avgS2AVX512(&dst[0], &src[0], n, stride, rows, kw, divisor)
	}
}

func avgWindowsAVX2(dst, src []float32, stride, rows, kw, sw int, divisor float64) {
	n := len(dst)
	if n < 8 || sw > 2 {
		avgWindowsPortable(dst, src, stride, rows, kw, sw, divisor)
		return
	}
	src = src[:windowSpan(n, stride, rows, kw, sw)]
	if sw == 1 {
		avgS1AVX2(&dst[0], &src[0], n, stride, rows, kw, divisor)
	} else {
		avgS2AVX2(&dst[0], &src[0], n, stride, rows, kw, divisor)
	}
}
