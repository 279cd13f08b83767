//go:build amd64 && !purego

package vec

import "golang.org/x/sys/cpu"

// archImpls lists the assembly implementations this processor (and the
// operating system's saved state) runs, best first.
func archImpls() []Impl {
	var list []Impl
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return nil
	}
	// The AVX-512 kernels use AVX512F, VPMOVD2M (AVX512DQ) for sign masks
	// and BZHI (BMI2) for their tail masks.
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasBMI2 {
		list = append(list, avx512)
	}
	return append(list, avx2)
}

// avx2 runs the multiples of 8 elements in the AVX2/FMA kernels of
// vec_amd64.s and the rest in the portable loops.
var avx2 = Impl{
	Name:       "avx2",
	Clip:       clipAVX2,
	ScaleShift: scaleShiftAVX2,
	BiasClip:   biasClipAVX2,
	ReluGrad:   reluGradAVX2,
	Axpy:       axpyAVX2,
	Dot:        dotAVX2,

	Exp:         unary(expAVX2),
	Sigmoid:     unary(sigmoidAVX2),
	Tanh:        unary(tanhAVX2),
	Erf:         unary(erfAVX2),
	GeluErf:     unary(geluErfAVX2),
	GeluTanh:    unary(geluTanhAVX2),
	HardSwish:   unary(hardSwishAVX2),
	HardSigmoid: hardSigmoidChecked(hardSigmoidAVX2),

	Max:                  maxAVX2,
	Sum:                  sumAVX2,
	SumSquaredDeviations: sumSquaredDeviationsAVX2,
	ExpSum:               expSumChecked(expSumAVX2),
	NormAffine:           normAffineChecked(normAffineAVX2),

	DotCentered: dotCenteredChecked(dotCenteredAVX2),
	Affine2:     affine2Checked(affine2AVX2),
}

// avx512 runs the activations and row kernels of mathkernels_amd64.s in
// 16 lanes, the tails under k masks; the older kernels (Clip ... Dot) are
// the AVX2 ones.
var avx512 = Impl{
	Name:       "avx512",
	Clip:       clipAVX2,
	ScaleShift: scaleShiftAVX2,
	BiasClip:   biasClipAVX2,
	ReluGrad:   reluGradAVX2,
	Axpy:       axpyAVX2,
	Dot:        dotAVX2,

	Exp:         unary(expAVX512),
	Sigmoid:     unary(sigmoidAVX512),
	Tanh:        unary(tanhAVX512),
	Erf:         unary(erfAVX512),
	GeluErf:     unary(geluErfAVX512),
	GeluTanh:    unary(geluTanhAVX512),
	HardSwish:   unary(hardSwishAVX512),
	HardSigmoid: hardSigmoidChecked(hardSigmoidAVX512),

	Max:                  maxAVX512,
	Sum:                  sumAVX512,
	SumSquaredDeviations: sumSquaredDeviationsAVX512,
	ExpSum:               expSumChecked(expSumAVX512),
	NormAffine:           normAffineChecked(normAffineAVX512),

	DotCentered: dotCenteredChecked(dotCenteredAVX512),
	Affine2:     affine2Checked(affine2AVX512),
}

// The generated kernels (mathkernels_amd64.s) write as many elements as x
// has and trust their other slices to be as long: these wrappers slice
// them to len(x) first, so that a short output panics in Go, as the
// portable loops do, instead of being written past.

func unary(k func(y, x []float32)) func(y, x []float32) {
	return func(y, x []float32) { k(y[:len(x)], x) }
}

func hardSigmoidChecked(k func(y, x []float32, alpha, beta float32)) func(y, x []float32, alpha, beta float32) {
	return func(y, x []float32, alpha, beta float32) { k(y[:len(x)], x, alpha, beta) }
}

func expSumChecked(k func(y, x []float32, m float32) float32) func(y, x []float32, m float32) float32 {
	return func(y, x []float32, m float32) float32 { return k(y[:len(x)], x, m) }
}

func normAffineChecked(k func(y, x, scale, bias []float32, mean, inv float32)) func(y, x, scale, bias []float32, mean, inv float32) {
	return func(y, x, scale, bias []float32, mean, inv float32) {
		n := len(x)
		k(y[:n], x, scale[:n], bias[:n], mean, inv)
	}
}

// The kernels of vec_amd64.s, over n elements, n a multiple of 8.
//
//go:noescape
func sclipKernel(n int, lo, hi float32, x, y *float32)

//go:noescape
func sscaleShiftKernel(n int, a, b float32, x, y *float32)

//go:noescape
func sbiasClipKernel(n int, b, lo, hi float32, x, y *float32)

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

func biasClipAVX2(y, x []float32, b, lo, hi float32) {
	y = y[:len(x)]
	m := len(x) &^ 7
	if m > 0 {
		sbiasClipKernel(m, b, lo, hi, &x[0], &y[0])
	}
	biasClipPortable(y[m:], x[m:], b, lo, hi)
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

func dotCenteredChecked(k func(dy, x []float32, m float32) (float32, float32)) func(dy, x []float32, m float32) (float32, float32) {
	return func(dy, x []float32, m float32) (float32, float32) { return k(dy[:len(x)], x, m) }
}

func affine2Checked(k func(y, a, b []float32, p, q, r float32)) func(y, a, b []float32, p, q, r float32) {
	return func(y, a, b []float32, p, q, r float32) {
		n := len(a)
		k(y[:n], a, b[:n], p, q, r)
	}
}
