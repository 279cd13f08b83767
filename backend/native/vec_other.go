//go:build !amd64

package native

// clipF32 writes y[i] = min(max(x[i], lo), hi), a NaN staying NaN.
func clipF32(y, x []float32, lo, hi float32) { clipTail(y, x, lo, hi) }

// scaleShiftF32 writes y[i] = x[i]*a + b.
func scaleShiftF32(y, x []float32, a, b float32) { scaleShiftTail(y, x, a, b) }

// reluGradF32 writes dx[i] = dy[i] where x[i] > 0, else 0: Relu's
// backward pass.
func reluGradF32(dx, dy, x []float32) { reluGradTail(dx, dy, x) }
