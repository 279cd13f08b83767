package vec

import "math"

// The element-wise activations package native's float32 operators call.
// Each runs the implementation the dispatch table chose at init over
// len(x) elements (y at least as long; y may be x). The error bounds are
// those of the vector implementations against the float64 math package,
// measured by TestActivationAccuracy over every 4099th float32 and a
// dense sweep of the interesting range; the portable implementation
// rounds a float64 evaluation and is within half an ulp and a hair.
// Every kernel returns NaN for NaN.

// Error bounds, in float32 ulps of the exact result (plus an absolute
// term where stated), asserted by the tests.
const (
	expULPs         = 1
	sigmoidULPs     = 2.5
	tanhULPs        = 2
	erfULPs         = 2
	geluErfULPs     = 3
	geluErfAbs      = 5e-8
	geluTanhULPs    = 3
	hardSwishULPs   = 2.5
	hardSigmoidULPs = 0.5001
)

// geluTanhGrowth is the part of GeluTanh's bound that grows in the
// negative tail: 2.5 ulp per unit of -z, z = 2√(2/π)(x+0.044715x³).
func geluTanhGrowth(x float64) float64 {
	z := 2 * math.Sqrt(2/math.Pi) * (x + 0.044715*x*x*x)
	return 2.5 * max(0, -z)
}

// Exp writes y[i] = e^x[i], within 1 ulp (0.94 measured). +Inf past
// 88.7228, 0 below -103.97, the subnormal results in between rounded as
// float32 rounds them.
func Exp(y, x []float32) { active.Exp(y, x) }

// Sigmoid writes y[i] = 1/(1+e^-x[i]), within 2.5 ulp (2.12 measured):
// exactly 1 where float32 rounds it to 1 (x > 16.6), and keeping its
// relative accuracy in the negative tail down to the subnormals (0 below
// -103.97).
func Sigmoid(y, x []float32) { active.Sigmoid(y, x) }

// Tanh writes y[i] = tanh(x[i]), within 2 ulp (1.5 measured): exactly ±1
// where float32 rounds it so (|x| > 9.01), odd (tanh(-0) = -0).
func Tanh(y, x []float32) { active.Tanh(y, x) }

// Erf writes y[i] = erf(x[i]), within 2 ulp (1.81 measured): exactly ±1
// where float32 rounds it so, odd.
func Erf(y, x []float32) { active.Erf(y, x) }

// GeluErf writes ONNX Gelu with approximate="none": y = x/2·(1+erf(x/√2)).
// The negative tail is computed from erfc, not as 1 + erf, so it keeps
// its relative accuracy down to x = -5.66, past which the result (below
// 4.4e-8 in magnitude) is 0. Within 3 ulp + 5e-8 (2.64 ulp measured; the
// 5e-8 is that cut).
func GeluErf(y, x []float32) { active.GeluErf(y, x) }

// GeluTanh writes ONNX Gelu with approximate="tanh":
// y = x/2·(1+tanh(√(2/π)(x+0.044715x³))), computed as x·sigmoid(2z) so
// that the negative tail does not cancel. Within 3 ulp for x >= 0; for x
// < 0 the float32 rounding of z (relative 2^-24) moves sigmoid by up to
// |z|·2^-24 relative, so the bound is 3 + 2.5·|z| ulp, z =
// 2√(2/π)(x+0.044715x³) (geluTanhGrowth; 2.84 of the 3 measured, scaled).
func GeluTanh(y, x []float32) { active.GeluTanh(y, x) }

// HardSwish writes ONNX HardSwish: y = x·max(0, min(1, x/6 + 1/2)),
// evaluated as x·clamp((x+3)·(1/6)) so that the sum is exact near -3.
// Exactly 0 for x <= -3 and x for x >= 3; within 2.5 ulp (2.34
// measured) between.
func HardSwish(y, x []float32) { active.HardSwish(y, x) }

// HardSigmoid writes ONNX HardSigmoid: y = max(0, min(1, alpha·x+beta)),
// the affine part fused (one rounding) where the implementation has FMA:
// correctly rounded in the vector kernels, within 0.5001 ulp in the
// portable one (float64, then float32: a double rounding).
func HardSigmoid(y, x []float32, alpha, beta float32) { active.HardSigmoid(y, x, alpha, beta) }
