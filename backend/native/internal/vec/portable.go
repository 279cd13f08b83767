package vec

// The portable loops: the whole of Portable, and the tails (past the last
// multiple of the vector width) of the assembly implementations.

func clipPortable(y, x []float32, lo, hi float32) {
	y = y[:len(x)]
	for i, v := range x {
		if v < lo {
			v = lo
		}
		if v > hi {
			v = hi
		}
		y[i] = v
	}
}

func scaleShiftPortable(y, x []float32, a, b float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = v*a + b
	}
}

func biasClipPortable(y, x []float32, b, lo, hi float32) {
	y = y[:len(x)]
	for i, v := range x {
		v += b
		if v < lo {
			v = lo
		}
		if v > hi {
			v = hi
		}
		y[i] = v
	}
}

func reluGradPortable(dx, dy, x []float32) {
	dx, dy = dx[:len(x)], dy[:len(x)]
	for i, v := range x {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
}

func axpyPortable(a float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

func dotPortable(x, y []float32) float32 {
	y = y[:len(x)]
	var s float32
	for i, v := range x {
		s += v * y[i]
	}
	return s
}
