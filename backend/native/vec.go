package native

// The portable loops of the float32 vector kernels (vec_amd64.go runs
// their multiples of 8 in assembly, and these for the rest).

func clipTail(y, x []float32, lo, hi float32) {
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

func scaleShiftTail(y, x []float32, a, b float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = v*a + b
	}
}

func reluGradTail(dx, dy, x []float32) {
	dx, dy = dx[:len(x)], dy[:len(x)]
	for i, v := range x {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
}
