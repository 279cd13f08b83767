package main

import "math"

// poly is a polynomial approximation the kernels evaluate in float32:
// p(t) = sum coef[k]·s^k with s = t·mul + add, the interval the fit
// covers mapped onto [-1, 1]. When the interval is centred on zero the
// map is folded into the coefficients (mul = 1, add = 0) and the kernels
// skip it.
type poly struct {
	mul, add float64
	coef     []float64
}

// chebyshevFit interpolates f at the degree+1 Chebyshev nodes of [lo, hi],
// which gives nearly the minimax error (within a small factor) without a
// Remez iteration. The coefficients are computed here, in float64, each
// time the generator runs, so that the assembly carries no unexplained
// constants; Go's float64 arithmetic is deterministic, so the output is
// reproducible byte for byte.
func chebyshevFit(f func(float64) float64, lo, hi float64, degree int) poly {
	n := degree + 1
	c, h := (hi+lo)/2, (hi-lo)/2
	// Solve the Vandermonde system in s = (t - c)/h on the nodes.
	a := make([][]float64, n)
	for i := range a {
		s := math.Cos(math.Pi * (float64(i) + 0.5) / float64(n))
		row := make([]float64, n+1)
		p := 1.0
		for k := 0; k < n; k++ {
			row[k] = p
			p *= s
		}
		row[n] = f(c + h*s)
		a[i] = row
	}
	coef := solve(a)
	if c == 0 {
		// s = t/h: fold 1/h^k into the coefficients.
		for k := range coef {
			coef[k] /= math.Pow(h, float64(k))
		}
		return poly{mul: 1, add: 0, coef: coef}
	}
	return poly{mul: 1 / h, add: -c / h, coef: coef}
}

// solve runs Gaussian elimination with partial pivoting on the augmented
// matrix a and returns the solution.
func solve(a [][]float64) []float64 {
	n := len(a)
	for col := 0; col < n; col++ {
		best := col
		for r := col + 1; r < n; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[best][col]) {
				best = r
			}
		}
		a[col], a[best] = a[best], a[col]
		for r := col + 1; r < n; r++ {
			m := a[r][col] / a[col][col]
			for k := col; k <= n; k++ {
				a[r][k] -= m * a[col][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := a[r][n]
		for k := r + 1; k < n; k++ {
			s -= a[r][k] * x[k]
		}
		x[r] = s / a[r][r]
	}
	return x
}

// The fits the kernels use. Each removes the leading terms it can take
// exactly, so that the polynomial only corrects a slowly varying factor.
var (
	// exp(r) = 1 + r + r²·q(r) on the reduced range |r| <= ln2/2.
	expFit = chebyshevFit(func(r float64) float64 {
		if math.Abs(r) < 1e-4 {
			return 0.5 + r/6 + r*r/24
		}
		return (math.Exp(r) - 1 - r) / (r * r)
	}, -math.Ln2/2, math.Ln2/2, 5)

	// tanh(a) = a + a³·q(a²) for a < tanhSmall, where (1-e)/(1+e) with
	// e = exp(-2a) would lose digits to cancellation.
	tanhFit = chebyshevFit(func(t float64) float64 {
		a := math.Sqrt(t)
		if a < 1e-3 {
			return -1.0/3 + 2*t/15 - 17*t*t/315
		}
		return (math.Tanh(a) - a) / (a * t)
	}, 0, tanhSmall*tanhSmall, 7)

	// erf(a) = a·q(a²) for a < 1.
	erfSmallFit = chebyshevFit(func(t float64) float64 {
		a := math.Sqrt(t)
		if a < 1e-4 {
			return 2 / math.SqrtPi * (1 - t/3)
		}
		return math.Erf(a) / a
	}, 0, 1, 8)

	// erfc(a) = exp(g(a)) for 1 <= a <= erfBig: g is smooth (about -a²
	// minus a slowly growing log), so a polynomial in a fits it well.
	erfcLogFit = chebyshevFit(func(a float64) float64 {
		return math.Log(math.Erfc(a))
	}, 1, erfBig, 10)
)

const (
	// tanhSmall is where tanh switches from its odd polynomial to the
	// exponential form: below it 1 - exp(-2a) cancels more than a bit.
	tanhSmall = 0.625
	// erfBig bounds the erfc fit: past it erfc(a) < 1.6e-8, so float32
	// erf rounds to ±1 and Gelu's tail is below 5e-8 in absolute terms.
	erfBig = 4.0
)
