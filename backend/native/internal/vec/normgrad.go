package vec

// The two passes of a normalisation's backward (BatchNormalization in
// training mode) over one run of a channel: the sums the input gradient
// depends on, and the affine map that writes it.

// DotCentered returns Σdy[i] and Σdy[i]·(x[i]-m) over i < len(x) (dy at
// least as long). The vector kernels add in lanes: the rounding differs
// from the portable (float64) sums as Sum's does.
func DotCentered(dy, x []float32, m float32) (sum, dot float32) { return active.DotCentered(dy, x, m) }

// Affine2 writes y[i] = p·a[i] + q·b[i] + r for i < len(a) (y and b at
// least as long).
func Affine2(y, a, b []float32, p, q, r float32) { active.Affine2(y, a, b, p, q, r) }

func dotCenteredPortable(dy, x []float32, m float32) (sum, dot float32) {
	dy = dy[:len(x)]
	var s, d float64
	for i, v := range x {
		g := float64(dy[i])
		s += g
		d += g * (float64(v) - float64(m))
	}
	return float32(s), float32(d)
}

func affine2Portable(y, a, b []float32, p, q, r float32) {
	y, b = y[:len(a)], b[:len(a)]
	for i, v := range a {
		y[i] = p*v + q*b[i] + r
	}
}
