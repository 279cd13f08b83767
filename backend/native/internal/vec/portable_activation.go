package vec

import "math"

// The portable activations and row kernels: each element evaluated with
// the math package in float64 and rounded once to float32, so that they
// are correctly rounded but for the rare double rounding (and the
// functions whose float64 form is itself within an ulp). They are the
// reference the vector implementations are measured against, and what
// runs without assembly.

func expPortable(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = float32(math.Exp(float64(v)))
	}
}

// sigmoid64 is 1/(1+e^-x), evaluated so that neither branch overflows and
// the negative side keeps its relative accuracy.
func sigmoid64(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func sigmoidPortable(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = float32(sigmoid64(float64(v)))
	}
}

func tanhPortable(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = float32(math.Tanh(float64(v)))
	}
}

func erfPortable(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = float32(math.Erf(float64(v)))
	}
}

// geluErf64 is x/2·(1+erf(x/√2)), with 1+erf(u) taken as erfc(-u) so that
// the negative tail does not cancel.
func geluErf64(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }

func geluErfPortable(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = float32(geluErf64(float64(v)))
	}
}

// geluTanh64 is x/2·(1+tanh(√(2/π)(x+0.044715x³))), written with
// 1+tanh(z) = 2·sigmoid(2z) so that the negative tail does not cancel.
func geluTanh64(x float64) float64 {
	return x * sigmoid64(2*math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))
}

func geluTanhPortable(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = float32(geluTanh64(float64(v)))
	}
}

// hardSwish64 is x·min(max(x/6+1/2, 0), 1), ONNX's HardSwish (alpha 1/6,
// beta 1/2); a NaN stays NaN.
func hardSwish64(x float64) float64 { return x * min(max(x/6+0.5, 0), 1) }

func hardSwishPortable(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = float32(hardSwish64(float64(v)))
	}
}

func hardSigmoidPortable(y, x []float32, alpha, beta float32) {
	y = y[:len(x)]
	a, b := float64(alpha), float64(beta)
	for i, v := range x {
		y[i] = float32(min(max(a*float64(v)+b, 0), 1))
	}
}

func maxPortable(x []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	return m
}

func sumPortable(x []float32) float32 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return float32(s)
}

func sumSquaredDeviationsPortable(x []float32, m float32) float32 {
	var s float64
	for _, v := range x {
		d := float64(v) - float64(m)
		s += d * d
	}
	return float32(s)
}

func expSumPortable(y, x []float32, m float32) float32 {
	y = y[:len(x)]
	var s float64
	for i, v := range x {
		e := math.Exp(float64(v) - float64(m))
		s += e
		y[i] = float32(e)
	}
	return float32(s)
}

func normAffinePortable(y, x, scale, bias []float32, mean, inv float32) {
	y, scale, bias = y[:len(x)], scale[:len(x)], bias[:len(x)]
	for i, v := range x {
		y[i] = float32((float64(v)-float64(mean))*float64(inv)*float64(scale[i]) + float64(bias[i]))
	}
}
