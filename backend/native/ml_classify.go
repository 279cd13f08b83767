package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/onnx"
)

// What the ai.onnx.ml classifiers and regressors (trees, SVMs, linear
// models) share: the post_transform applied to a row of scores, the class
// labels of the Y output, and the reading of the X input as float64 rows.

// mlTransform is a post_transform. Its values are TreeEnsemble's integer
// encoding of the attribute.
type mlTransform uint8

const (
	mlNone mlTransform = iota
	mlSoftmax
	mlLogistic
	mlSoftmaxZero
	mlProbit
)

// mlTransformOf parses the string post_transform of the older operators.
func mlTransformOf(s string) (mlTransform, error) {
	switch s {
	case "NONE", "":
		return mlNone, nil
	case "SOFTMAX":
		return mlSoftmax, nil
	case "LOGISTIC":
		return mlLogistic, nil
	case "SOFTMAX_ZERO":
		return mlSoftmaxZero, nil
	case "PROBIT":
		return mlProbit, nil
	}
	return 0, fmt.Errorf("post_transform %q is not NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT", s)
}

// mlTransformOfInt reads TreeEnsemble's integer post_transform.
func mlTransformOfInt(v int64) (mlTransform, error) {
	if v < 0 || v > int64(mlProbit) {
		return 0, fmt.Errorf("post_transform %d is not 0 (NONE), 1 (SOFTMAX), 2 (LOGISTIC), 3 (SOFTMAX_ZERO) or 4 (PROBIT)", v)
	}
	return mlTransform(v), nil
}

// apply transforms one row of scores in place.
func (t mlTransform) apply(v []float64) {
	switch t {
	case mlSoftmax:
		mlSoftmaxRow(v)
	case mlLogistic:
		for i, x := range v {
			v[i] = mlSigmoid(x)
		}
	case mlSoftmaxZero:
		mlSoftmaxZeroRow(v)
	case mlProbit:
		for i, x := range v {
			v[i] = mlProbitOf(x)
		}
	}
}

// mlSigmoid is the logistic function, computed on -|x| so that exp never
// overflows.
func mlSigmoid(x float64) float64 {
	e := math.Exp(-math.Abs(x))
	if x < 0 {
		return e / (1 + e)
	}
	return 1 / (1 + e)
}

func mlSoftmaxRow(v []float64) {
	if len(v) == 0 {
		return
	}
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	s := 0.0
	for i, x := range v {
		v[i] = math.Exp(x - m)
		s += v[i]
	}
	for i := range v {
		v[i] /= s
	}
}

// mlSoftmaxZeroRow is the softmax of the non-zero scores: a score within
// 1e-7 of zero stays (about) zero instead of weighing exp(0). A row of
// zeros becomes 0.5 everywhere, as in ONNX's reference implementation.
func mlSoftmaxZeroRow(v []float64) {
	if len(v) == 0 {
		return
	}
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	expNegMax := math.Exp(-m)
	s := 0.0
	for i, x := range v {
		if x > 1e-7 || x < -1e-7 {
			v[i] = math.Exp(x - m)
		} else {
			v[i] = x * expNegMax
		}
		s += v[i]
	}
	if s == 0 {
		for i := range v {
			v[i] = 0.5
		}
		return
	}
	for i := range v {
		v[i] /= s
	}
}

// mlProbitOf is the probit function sqrt(2)·erfinv(2p-1) with the closed
// form approximation of erfinv (Winitzki's, a = 0.147) that ONNX Runtime
// and ONNX's reference implementation both compute: the exact inverse would
// differ from them by up to about 1e-3 relative.
func mlProbitOf(p float64) float64 {
	x := 2*p - 1
	sgn := 1.0
	if x < 0 {
		sgn = -1
	}
	w := math.Log((1 - x) * (1 + x))
	const a = 0.147
	v := 2/(math.Pi*a) + 0.5*w
	return math.Sqrt2 * sgn * math.Sqrt(-v+math.Sqrt(v*v-w/a))
}

// mlArgmax is the index of the highest score, the first on ties; a NaN
// counts as the highest (numpy's argmax, which ONNX's reference uses).
func mlArgmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x != x {
			return i
		}
		if x > v[best] {
			best = i
		}
	}
	return best
}

// mlLabels are a classifier's class labels: strings or int64s (Y is a
// tensor of that type), or none (Y holds class indices as int64).
type mlLabels struct {
	ints    []int64
	strs    []string
	strings bool
}

// mlLabelsOf takes the string labels when given, else the integer ones
// (ONNX Runtime's choice when a model sets both).
func mlLabelsOf(ints []int64, strs []string) mlLabels {
	if len(strs) > 0 {
		return mlLabels{strs: strs, strings: true}
	}
	return mlLabels{ints: ints}
}

func (l mlLabels) count() int {
	if l.strings {
		return len(l.strs)
	}
	return len(l.ints)
}

// A row's label is picked as an index into the labels, or as one of the
// two raw binary decisions some classifiers make when their labels do not
// name two classes: 1 or 0 ("1" or "0" for string labels).
const (
	mlPickPositive = -1
	mlPickNegative = -2
)

// tensor builds the Y output of n rows from their picks.
func (l mlLabels) tensor(buf *outputBuffer, picks []int) *onnx.Tensor {
	if l.strings {
		y := buf.tensor(onnx.String, []int{len(picks)})
		d := y.Strings()
		for i, p := range picks {
			switch {
			case p == mlPickPositive:
				d[i] = "1"
			case p == mlPickNegative:
				d[i] = "0"
			case p < len(l.strs):
				d[i] = l.strs[p]
			default:
				d[i] = ""
			}
		}
		return y
	}
	y := buf.tensor(onnx.Int64, []int{len(picks)})
	d := y.Int64s()
	for i, p := range picks {
		switch {
		case p == mlPickPositive:
			d[i] = 1
		case p == mlPickNegative:
			d[i] = 0
		case len(l.ints) == 0:
			d[i] = int64(p)
		case p < len(l.ints):
			d[i] = l.ints[p]
		default:
			d[i] = 0
		}
	}
	return y
}

// classifierKernel is unaryTensorKernel for the classifiers: run maps X
// to the labels (output y) and the scores (output z).
func classifierKernel(x, y, z valueRef, run func(*onnx.Tensor) (labels, scores *onnx.Tensor, err error)) kernel {
	return func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		labels, scores, err := run(t)
		if err != nil {
			return err
		}
		y.set(slots, labels)
		z.set(slots, scores)
		return nil
	}
}

// mlRows reads X, a [N, F] or [F] (one row) tensor, as N rows of F float64
// features in buf (grown as needed). allowed lists the element types the
// operator takes. narrowInts rounds integer features to float32 first: a
// model whose thresholds are float32 compares them as float32 values, as
// ONNX Runtime does.
func mlRows(x *onnx.Tensor, buf *[]float64, narrowInts bool, allowed ...onnx.DataType) (rows []float64, n, f int, err error) {
	ok := false
	for _, t := range allowed {
		ok = ok || x.Type == t
	}
	if !ok {
		return nil, 0, 0, fmt.Errorf("input X is tensor(%v); want one of %v", x.Type, allowed)
	}
	switch len(x.Shape) {
	case 1:
		n, f = 1, x.Shape[0]
	case 2:
		n, f = x.Shape[0], x.Shape[1]
	default:
		return nil, 0, 0, fmt.Errorf("input X has shape %v; want [N, F] or [F]", x.Shape)
	}
	rows = scratchOf(buf, n*f)
	switch d := x.Data.(type) {
	case []int64:
		for i, v := range d {
			rows[i] = float64(v)
			if narrowInts {
				rows[i] = float64(float32(v))
			}
		}
	case []int32:
		for i, v := range d {
			rows[i] = float64(v)
			if narrowInts {
				rows[i] = float64(float32(v))
			}
		}
	default:
		if !float64sInto(rows, x.Data) {
			return nil, 0, 0, fmt.Errorf("input X is tensor(%v), not a tensor of numbers", x.Type)
		}
	}
	return rows, n, f, nil
}

// mlNumericInputs are the X types of the classifiers and regressors other
// than TreeEnsemble.
var mlNumericInputs = []onnx.DataType{onnx.Float, onnx.Double, onnx.Int64, onnx.Int32}

// mlFloat32Tensor stores float64 values as a float32 output of the given
// shape.
func mlFloat32Tensor(buf *outputBuffer, v []float64, shape ...int) *onnx.Tensor {
	t := buf.tensor(onnx.Float, shape)
	d := t.Float32s()
	for i, x := range v {
		d[i] = float32(x)
	}
	return t
}
