//go:build amd64

package native

// sclipKernel and sscaleShiftKernel are the AVX kernels of clipF32 and
// scaleShiftF32 over n elements, n a multiple of 8.
//
//go:noescape
func sclipKernel(n int, lo, hi float32, x, y *float32)

//go:noescape
func sscaleShiftKernel(n int, a, b float32, x, y *float32)

// sreluGradKernel is the AVX kernel of reluGradF32 over n elements, n a
// multiple of 8.
//
//go:noescape
func sreluGradKernel(n int, x, dy, dx *float32)

// clipF32 writes y[i] = min(max(x[i], lo), hi), a NaN staying NaN.
func clipF32(y, x []float32, lo, hi float32) {
	y = y[:len(x)]
	m := 0
	if useAsmKernels {
		if m = len(x) &^ 7; m > 0 {
			sclipKernel(m, lo, hi, &x[0], &y[0])
		}
	}
	clipTail(y[m:], x[m:], lo, hi)
}

// scaleShiftF32 writes y[i] = x[i]*a + b.
func scaleShiftF32(y, x []float32, a, b float32) {
	y = y[:len(x)]
	m := 0
	if useAsmKernels {
		if m = len(x) &^ 7; m > 0 {
			sscaleShiftKernel(m, a, b, &x[0], &y[0])
		}
	}
	scaleShiftTail(y[m:], x[m:], a, b)
}

// reluGradF32 writes dx[i] = dy[i] where x[i] > 0, else 0: Relu's
// backward pass.
func reluGradF32(dx, dy, x []float32) {
	n := len(x)
	dx, dy = dx[:n], dy[:n]
	m := 0
	if useAsmKernels {
		if m = n &^ 7; m > 0 {
			sreluGradKernel(m, &x[0], &dy[0], &dx[0])
		}
	}
	reluGradTail(dx[m:], dy[m:], x[m:])
}
