package vec

import "math"

// The row kernels of Softmax, LogSoftmax and LayerNormalization: a
// reduction (max, sum, sum of squared deviations), a map with a sum
// (exp(x-m)) and the normalising affine map, each dispatched, and the
// three row operations built from them as methods of Impl, so that the
// tests run them on every implementation.

// Max returns the largest element of x, -Inf for an empty x. When x holds
// a NaN the result is unspecified: the vector lanes keep one operand of
// each comparison, so it may be NaN, or a finite value that is not even
// the largest of the others. Callers that must propagate NaN do so
// downstream, as Softmax and LogSoftmax do through their sums.
func Max(x []float32) float32 { return active.Max(x) }

// Sum returns the sum of x. The vector implementations add in lanes, so
// the rounding differs from the portable (float64) sum within
// 2^-24·(len(x)/lanes + 4)·sum|x|.
func Sum(x []float32) float32 { return active.Sum(x) }

// SumSquaredDeviations returns the sum of (x[i]-m)², each term fused.
func SumSquaredDeviations(x []float32, m float32) float32 { return active.SumSquaredDeviations(x, m) }

// ExpSum writes y[i] = exp(x[i]-m) and returns their sum. The vector
// kernels take Exp of the float32 difference, whose rounding adds up to
// |x[i]-m| ulp to Exp's bound.
func ExpSum(y, x []float32, m float32) float32 { return active.ExpSum(y, x, m) }

// NormAffine writes y[i] = (x[i]-mean)·inv·scale[i] + bias[i]; scale and
// bias must be as long as x.
func NormAffine(y, x, scale, bias []float32, mean, inv float32) {
	active.NormAffine(y, x, scale, bias, mean, inv)
}

// Softmax writes y = exp(x - max x) / sum exp(x - max x) over the row x
// with the implementation chosen at init (see Impl.Softmax).
func Softmax(y, x []float32) { active.Softmax(y, x) }

// LogSoftmax writes y = x - max x - log(sum exp(x - max x)), y not
// overlapping x (see Impl.LogSoftmax).
func LogSoftmax(y, x []float32) { active.LogSoftmax(y, x) }

// LayerNorm normalizes the row x into y (see Impl.LayerNorm).
func LayerNorm(y, x, scale, bias []float32, eps float32) (mean, invStd float32) {
	return active.LayerNorm(y, x, scale, bias, eps)
}

// Softmax writes the softmax of the row x into y (y may be x): a max, the
// exponentials of the differences and their sum, and a scale by the
// reciprocal. Element i is within softmaxULPs + |x[i]-max| + len(x)/64
// ulp of the exact value: the float32 difference x[i]-max carries a
// relative rounding of 2^-24, which exp turns into |x[i]-max|·2^-24
// relative, and the float32 sum in lanes adds roundings that grow with
// the row (TestSoftmaxAccuracy; 3.75 of the 4 constant ulps measured). A NaN
// or +Inf in the row makes every element NaN, as in float64.
func (m *Impl) Softmax(y, x []float32) {
	if len(x) == 0 {
		return
	}
	y = y[:len(x)]
	s := m.ExpSum(y, x, m.Max(x))
	m.ScaleShift(y, y, 1/s, 0)
}

// LogSoftmax writes x[i] - max - log(sum exp(x - max)) into y, within
// logSoftmaxAbs·(1+|y[i]|) (absolute, since the result crosses zero;
// TestSoftmaxAccuracy, 1.44e-7 measured). y must not overlap x: it holds the exponentials
// while they are summed.
func (m *Impl) LogSoftmax(y, x []float32) {
	if len(x) == 0 {
		return
	}
	y = y[:len(x)]
	mx := m.Max(x)
	s := m.ExpSum(y, x, mx)
	// x - max first (exact where x is near max), then the log of the sum:
	// subtracting their float32 total instead would cancel.
	m.ScaleShift(y, x, 1, -mx)
	m.ScaleShift(y, y, 1, float32(-math.Log(float64(s))))
}

// LayerNorm writes (x[i]-mean)/sqrt(var+eps)·scale[i] + bias[i] into y
// and returns the row's mean and 1/sqrt(var+eps); scale and bias must be
// as long as x. The mean and the (two-pass) variance are summed in
// float32 lanes. Element i is within layerNormAbs·(|scale[i]|·(max(1,
// |x[i]-mean|·invStd) + |mean|·invStd) + |bias[i]|) of the float64
// computation (TestLayerNormAccuracy, 1.54e-7 measured): the |mean| term
// is the float32 rounding of the mean, which shifts every difference
// x[i]-mean.
func (m *Impl) LayerNorm(y, x, scale, bias []float32, eps float32) (mean, invStd float32) {
	n := len(x)
	if n == 0 {
		return 0, float32(1 / math.Sqrt(float64(eps)))
	}
	mean = m.Sum(x) / float32(n)
	v := m.SumSquaredDeviations(x, mean) / float32(n)
	invStd = float32(1 / math.Sqrt(float64(v)+float64(eps)))
	m.NormAffine(y, x, scale, bias, mean, invStd)
	return mean, invStd
}

// Bounds of the row operations, asserted by the tests.
const (
	softmaxULPs   = 4
	logSoftmaxAbs = 4e-7
	layerNormAbs  = 4e-7
)
