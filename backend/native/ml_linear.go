package native

import (
	"fmt"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// mlLinearScores computes the n×c scores X·Wᵀ + b of rows of f features
// for c rows of coefficients w (b may be nil) into dst.
func mlLinearScores(dst, rows []float64, n, f int, w, b []float64, c int) {
	for r := range n {
		x := rows[r*f : (r+1)*f]
		for j := range c {
			wj := w[j*f : (j+1)*f]
			s := 0.0
			for i, v := range x {
				s += v * wj[i]
			}
			if b != nil {
				s += b[j]
			}
			dst[r*c+j] = s
		}
	}
}

func mlFloat64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// linearRegressor: Y = X·Wᵀ + b, [N, targets], then the post_transform
// over each row (ONNX Runtime applies only PROBIT to a single target).
type linearRegressor struct {
	coef, intercepts []float64
	targets          int
	transform        mlTransform
	rows, res        []float64
	out              outputBuffer
}

func (k *linearRegressor) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	rows, n, f, err := mlRows(x, &k.rows, false, mlNumericInputs...)
	if err != nil {
		return nil, err
	}
	if len(k.coef) != k.targets*f {
		return nil, fmt.Errorf("coefficients has %d values; want targets (%d) × features (%d)", len(k.coef), k.targets, f)
	}
	res := scratchOf(&k.res, n*k.targets)
	mlLinearScores(res, rows, n, f, k.coef, k.intercepts, k.targets)
	for r := range n {
		k.transform.apply(res[r*k.targets : (r+1)*k.targets])
	}
	return mlFloat32Tensor(&k.out, res, n, k.targets), nil
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_LinearRegressor.html
func (b *builder) VisitLinearRegressor(op *ops.LinearRegressor) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &linearRegressor{coef: mlFloat64s(op.Coefficients), targets: int(op.Targets)}
	if op.Targets < 1 || op.Targets > 1<<31 {
		return fmt.Errorf("targets is %d; want 1 or more", op.Targets)
	}
	switch len(op.Intercepts) {
	case 0:
	case k.targets:
		k.intercepts = mlFloat64s(op.Intercepts)
	default:
		return fmt.Errorf("intercepts has %d values; want one per target (%d)", len(op.Intercepts), k.targets)
	}
	if k.transform, err = mlTransformOf(op.PostTransform); err != nil {
		return err
	}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// linearClassifier: scores X·Wᵀ + b, one column per row of coefficients,
// labelled as ONNX Runtime does. Several columns: the label is the class
// of the highest score, Z the post_transform of the scores. One column
// (one row of coefficients) scores the positive class: the label is the
// second class label when the score is positive, else the first (a raw 1
// or 0 unless there are two labels); with two labels Z is [1-s, s] (with
// PROBIT [-p, p] for p the probit of s, where Runtime leaves Z[1]
// unwritten), else Z is s alone and only PROBIT applies.
type linearClassifier struct {
	coef, intercepts []float64
	labels           mlLabels
	transform        mlTransform
	rows, scores     []float64
	picks            []int
	yBuf, zBuf       outputBuffer
}

func (k *linearClassifier) run(x *onnx.Tensor) (y, z *onnx.Tensor, err error) {
	rows, n, f, err := mlRows(x, &k.rows, false, mlNumericInputs...)
	if err != nil {
		return nil, nil, err
	}
	c := len(k.intercepts)
	if c == 0 {
		if f == 0 || len(k.coef)%f != 0 {
			return nil, nil, fmt.Errorf("coefficients has %d values, not a multiple of the %d features", len(k.coef), f)
		}
		c = len(k.coef) / f
	}
	if c == 0 || len(k.coef) != c*f {
		return nil, nil, fmt.Errorf("coefficients has %d values; want classes (%d) × features (%d)", len(k.coef), c, f)
	}
	nl := k.labels.count()
	if c > 1 && nl > 0 && nl < c {
		return nil, nil, fmt.Errorf("the coefficients score %d classes but there are %d class labels", c, nl)
	}
	if cap(k.scores) < 3*n*c { // room for two derived columns after one of scores
		k.scores = make([]float64, 3*n*c)
	}
	if cap(k.picks) < n {
		k.picks = make([]int, n)
	}
	scores, picks := k.scores[:n*c], k.picks[:n]
	var intercepts []float64
	if len(k.intercepts) > 0 {
		intercepts = k.intercepts
	}
	mlLinearScores(scores, rows, n, f, k.coef, intercepts, c)
	if c > 1 {
		for r := range n {
			row := scores[r*c : (r+1)*c]
			best := 0
			for j, s := range row {
				if s > row[best] {
					best = j
				}
			}
			picks[r] = best
			k.transform.apply(row)
		}
		return k.labels.tensor(&k.yBuf, picks), mlFloat32Tensor(&k.zBuf, scores, n, c), nil
	}
	two := nl == 2
	for r, s := range scores {
		switch {
		case s > 0 && two:
			picks[r] = 1
		case s > 0:
			picks[r] = mlPickPositive
		case two:
			picks[r] = 0
		default:
			picks[r] = mlPickNegative
		}
	}
	if !two {
		if k.transform == mlProbit {
			for r, s := range scores {
				scores[r] = mlProbitOf(s)
			}
		}
		return k.labels.tensor(&k.yBuf, picks), mlFloat32Tensor(&k.zBuf, scores, n, 1), nil
	}
	z2 := k.scores[n : 3*n]
	for r, s := range scores {
		if k.transform == mlProbit {
			p := mlProbitOf(s)
			z2[2*r], z2[2*r+1] = -p, p
		} else {
			z2[2*r], z2[2*r+1] = 1-s, s
		}
	}
	return k.labels.tensor(&k.yBuf, picks), mlFloat32Tensor(&k.zBuf, z2, n, 2), nil
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_LinearClassifier.html
func (b *builder) VisitLinearClassifier(op *ops.LinearClassifier) error {
	xr, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &linearClassifier{
		coef:       mlFloat64s(op.Coefficients),
		intercepts: mlFloat64s(op.Intercepts),
		labels:     mlLabelsOf(op.ClasslabelsInts, op.ClasslabelsStrings),
	}
	if k.transform, err = mlTransformOf(op.PostTransform); err != nil {
		return err
	}
	return b.emit(classifierKernel(xr, b.output(op.Out.Y), b.output(op.Out.Z), k.run))
}
