//go:build amd64 && !purego

package vec

import "golang.org/x/sys/cpu"

// archImpls lists the assembly implementations this processor (and the
// operating system's saved state) runs, best first.
func archImpls() []Impl {
	var list []Impl
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		list = append(list, avx2)
	}
	return list
}

// avx2 runs the multiples of 8 elements in the AVX2/FMA kernels of
// vec_amd64.s and the rest in the portable loops.
var avx2 = Impl{
	Name:       "avx2",
	Clip:       clipAVX2,
	ScaleShift: scaleShiftAVX2,
	ReluGrad:   reluGradAVX2,
	Axpy:       axpyAVX2,
	Dot:        dotAVX2,
}

// The kernels of vec_amd64.s, over n elements, n a multiple of 8.
//
//go:noescape
func sclipKernel(n int, lo, hi float32, x, y *float32)

//go:noescape
func sscaleShiftKernel(n int, a, b float32, x, y *float32)

//go:noescape
func sreluGradKernel(n int, x, dy, dx *float32)

//go:noescape
func saxpyKernel(n int, a float32, x, y *float32)

//go:noescape
func sdotKernel(n int, x, y *float32) float32

func clipAVX2(y, x []float32, lo, hi float32) {
	y = y[:len(x)]
	m := len(x) &^ 7
	if m > 0 {
		sclipKernel(m, lo, hi, &x[0], &y[0])
	}
	clipPortable(y[m:], x[m:], lo, hi)
}

func scaleShiftAVX2(y, x []float32, a, b float32) {
	y = y[:len(x)]
	m := len(x) &^ 7
	if m > 0 {
		sscaleShiftKernel(m, a, b, &x[0], &y[0])
	}
	scaleShiftPortable(y[m:], x[m:], a, b)
}

func reluGradAVX2(dx, dy, x []float32) {
	n := len(x)
	dx, dy = dx[:n], dy[:n]
	m := n &^ 7
	if m > 0 {
		sreluGradKernel(m, &x[0], &dy[0], &dx[0])
	}
	reluGradPortable(dx[m:], dy[m:], x[m:])
}

func axpyAVX2(a float32, x, y []float32) {
	n := len(x)
	y = y[:n]
	if m := n &^ 7; m > 0 {
		saxpyKernel(m, a, &x[0], &y[0])
	}
	for i := n &^ 7; i < n; i++ {
		y[i] += a * x[i]
	}
}

func dotAVX2(x, y []float32) float32 {
	n := len(x)
	y = y[:n]
	var s float32
	if m := n &^ 7; m > 0 {
		s = sdotKernel(m, &x[0], &y[0])
	}
	for i := n &^ 7; i < n; i++ {
		s += x[i] * y[i]
	}
	return s
}
