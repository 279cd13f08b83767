package native

import (
	"fmt"
	"math"
	"strings"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// svmKernel is the kernel of SVMClassifier and SVMRegressor with its
// kernel_params: gamma, coef0, degree.
type svmKernel struct {
	kind                 string // LINEAR, POLY, RBF, SIGMOID
	gamma, coef0, degree float64
}

func svmKernelOf(kind string, params []float32) (svmKernel, error) {
	k := svmKernel{kind: strings.ToUpper(kind)}
	switch k.kind {
	case "LINEAR", "POLY", "RBF", "SIGMOID":
	default:
		return k, fmt.Errorf("kernel_type %q is not LINEAR, POLY, RBF or SIGMOID", kind)
	}
	switch {
	case len(params) >= 3:
		k.gamma, k.coef0, k.degree = float64(params[0]), float64(params[1]), float64(params[2])
	case len(params) > 0:
		return k, fmt.Errorf("kernel_params has %d values; want gamma, coef0 and degree", len(params))
	}
	return k, nil
}

// eval is K(x, v).
func (k svmKernel) eval(x, v []float64) float64 {
	if k.kind == "RBF" {
		s := 0.0
		for i, a := range x {
			d := a - v[i]
			s += d * d
		}
		return math.Exp(-k.gamma * s)
	}
	s := 0.0
	for i, a := range x {
		s += a * v[i]
	}
	switch k.kind {
	case "POLY":
		return math.Pow(k.gamma*s+k.coef0, k.degree)
	case "SIGMOID":
		return math.Tanh(k.gamma*s + k.coef0)
	}
	return s
}

// svmRowsPerChunk is the least number of rows worth a goroutine when a
// row costs about work multiply-adds.
func svmRowsPerChunk(work int) int { return max(1, (1<<15)/max(1, work)) }

// svmRegressor: Σ coefficients[j]·K(x, support_vectors[j]) + rho[0] with
// n_supports support vectors, else (liblinear) coefficients·x + rho[0];
// one_class maps the result to +1 (positive) or -1. The post_transform
// applies last (ONNX Runtime ignores it; ONNX's reference refuses it).
type svmRegressor struct {
	kernel    svmKernel
	nSupports int
	sv, coef  []float64
	rho       float64
	oneClass  bool
	transform mlTransform
	threads   int
	rows, res []float64
	out       outputBuffer
}

func (k *svmRegressor) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	rows, n, f, err := mlRows(x, &k.rows, false, mlNumericInputs...)
	if err != nil {
		return nil, err
	}
	if k.nSupports > 0 {
		if len(k.sv) != k.nSupports*f || len(k.coef) < k.nSupports {
			return nil, fmt.Errorf("%d support vectors of %d features need %d support_vectors and %d coefficients; have %d and %d",
				k.nSupports, f, k.nSupports*f, k.nSupports, len(k.sv), len(k.coef))
		}
	} else if len(k.coef) != f {
		return nil, fmt.Errorf("coefficients has %d values; input X has %d features", len(k.coef), f)
	}
	res := scratchOf(&k.res, n)
	par.For(n, k.threads, svmRowsPerChunk(max(1, k.nSupports)*f), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr := rows[r*f : (r+1)*f]
			s := k.rho
			if k.nSupports > 0 {
				for j := range k.nSupports {
					s += k.coef[j] * k.kernel.eval(xr, k.sv[j*f:(j+1)*f])
				}
			} else {
				for i, v := range xr {
					s += v * k.coef[i]
				}
			}
			if k.oneClass && s > 0 {
				s = 1
			} else if k.oneClass {
				s = -1
			}
			res[r] = s
			k.transform.apply(res[r : r+1])
		}
	})
	return mlFloat32Tensor(&k.out, res, n, 1), nil
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_SVMRegressor.html
func (b *builder) VisitSVMRegressor(op *ops.SVMRegressor) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &svmRegressor{
		nSupports: int(op.NSupports), sv: mlFloat64s(op.SupportVectors), coef: mlFloat64s(op.Coefficients),
		oneClass: op.OneClass != 0, threads: b.e.threads,
	}
	if op.NSupports < 0 || op.NSupports > 1<<31 {
		return fmt.Errorf("n_supports is %d", op.NSupports)
	}
	if len(op.Rho) == 0 {
		return fmt.Errorf("SVMRegressor needs rho")
	}
	k.rho = float64(op.Rho[0])
	if k.nSupports > 0 {
		if k.kernel, err = svmKernelOf(op.KernelType, op.KernelParams); err != nil {
			return err
		}
	}
	if k.transform, err = mlTransformOf(op.PostTransform); err != nil {
		return err
	}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// svmClassifier follows libsvm's one-vs-one scheme as ONNX Runtime runs
// it. With support vectors (vectors_per_class), each pair of classes i < j
// scores rho + Σ coef·K over the support vectors of both classes, and the
// score votes for i when positive, else for j; the label is the class with
// the most votes (the first on a tie). Z holds those pairwise scores after
// the post_transform; with prob_a/prob_b it holds instead the class
// probabilities coupled from the Platt-scaled pairwise ones (libsvm's
// multiclass_probability). Two classes without probabilities give one
// score s and Z = [-s, s] (NONE) or [1-s, s] (another post_transform, not
// applied: Runtime's convention; with PROBIT [-p, p] for p the probit of
// s, where Runtime leaves Z[1] unwritten).
//
// Without support vectors (liblinear), each class scores coefficients·x +
// rho[0]; the label is the highest score's class, except that two classes
// without probabilities take the second label when the top score is at
// least 0.5 (all coefficients non-negative) or positive.
type svmClassifier struct {
	kernel       svmKernel
	labels       mlLabels
	classes      int
	perClass     []int // support vectors per class
	start        []int // index of each class's first support vector
	vectors      int
	sv, coef     []float64
	rho          []float64
	probA, probB []float64
	allPositive  bool
	transform    mlTransform
	threads      int
	rows, res    []float64
	picks        []int
	yBuf, zBuf   outputBuffer
}

// width is the number of columns of Z.
func (k *svmClassifier) width() int {
	switch {
	case k.vectors == 0 || len(k.probA) > 0:
		return k.classes
	case k.classes == 2:
		return 2
	}
	return k.classes * (k.classes - 1) / 2
}

func (k *svmClassifier) run(x *onnx.Tensor) (y, z *onnx.Tensor, err error) {
	rows, n, f, err := mlRows(x, &k.rows, false, mlNumericInputs...)
	if err != nil {
		return nil, nil, err
	}
	c := k.classes
	if k.vectors > 0 {
		if len(k.sv) != k.vectors*f {
			return nil, nil, fmt.Errorf("support_vectors has %d values; want %d vectors × %d features", len(k.sv), k.vectors, f)
		}
	} else if len(k.coef) != c*f {
		return nil, nil, fmt.Errorf("coefficients has %d values; want classes (%d) × features (%d)", len(k.coef), c, f)
	}
	w := k.width()
	res, picks := scratchOf(&k.res, n*w), scratchOf(&k.picks, n)
	work := max(k.vectors, c) * f
	par.For(n, k.threads, svmRowsPerChunk(work), func(lo, hi int) {
		var kern, pair, votes, r2 []float64
		if k.vectors > 0 {
			kern = make([]float64, k.vectors)
			pair = make([]float64, c*(c-1)/2)
			votes = make([]float64, c)
			r2 = make([]float64, c*c)
		}
		for r := lo; r < hi; r++ {
			xr := rows[r*f : (r+1)*f]
			zr := res[r*w : (r+1)*w]
			if k.vectors == 0 {
				picks[r] = k.linearRow(xr, zr)
				continue
			}
			for j := range kern {
				kern[j] = k.kernel.eval(xr, k.sv[j*f:(j+1)*f])
			}
			clear(votes)
			k.pairScores(kern, pair, votes)
			best := 0
			for i, v := range votes {
				if v > votes[best] {
					best = i
				}
			}
			picks[r] = best
			switch {
			case len(k.probA) > 0:
				k.probabilities(pair, r2, zr)
				k.transform.apply(zr)
			case c == 2:
				s := pair[0]
				switch k.transform {
				case mlNone:
					zr[0], zr[1] = -s, s
				case mlProbit:
					p := mlProbitOf(s)
					zr[0], zr[1] = -p, p
				default:
					zr[0], zr[1] = 1-s, s
				}
			default:
				copy(zr, pair)
				k.transform.apply(zr)
			}
		}
	})
	return k.labels.tensor(&k.yBuf, picks), mlFloat32Tensor(&k.zBuf, res, n, w), nil
}

// linearRow scores one row in liblinear mode into z and picks its label.
func (k *svmClassifier) linearRow(x, z []float64) int {
	f := len(x)
	best := 0
	for c := range z {
		s := k.rho[0]
		for i, v := range x {
			s += v * k.coef[c*f+i]
		}
		z[c] = s
		if s > z[best] {
			best = c
		}
	}
	top := z[best]
	if len(z) == 2 && len(k.probA) == 0 && ((k.allPositive && top >= 0.5) || (!k.allPositive && top > 0)) {
		best = 1
	}
	if len(z) > 1 {
		k.transform.apply(z)
	} else if k.transform == mlProbit {
		z[0] = mlProbitOf(z[0])
	}
	return best
}

// pairScores computes the one-vs-one scores of the kernel values kern and
// counts their votes. The coefficients are a (classes-1) × vectors matrix:
// for the pair (i, j) the support vectors of class i weigh with row j-1,
// those of class j with row i.
func (k *svmClassifier) pairScores(kern, pair, votes []float64) {
	v := k.vectors
	p := 0
	for i := 0; i < k.classes; i++ {
		for j := i + 1; j < k.classes; j++ {
			s := k.rho[p]
			for m := range k.perClass[i] {
				s += k.coef[(j-1)*v+k.start[i]+m] * kern[k.start[i]+m]
			}
			for m := range k.perClass[j] {
				s += k.coef[i*v+k.start[j]+m] * kern[k.start[j]+m]
			}
			pair[p] = s
			if s > 0 {
				votes[i]++
			} else {
				votes[j]++
			}
			p++
		}
	}
}

// probabilities turns the pairwise scores into class probabilities: each
// through its sigmoid 1/(1+exp(A·s+B)) (clipped to [1e-7, 1-1e-7]), then
// coupled by libsvm's iterative method (Wu, Lin and Weng 2004). r is
// classes² scratch.
func (k *svmClassifier) probabilities(pair, r, p []float64) {
	c := k.classes
	idx := 0
	for i := 0; i < c; i++ {
		for j := i + 1; j < c; j++ {
			v := 1 - mlSigmoid(pair[idx]*k.probA[idx]+k.probB[idx])
			v = min(max(v, 1e-7), 1-1e-7)
			r[i*c+j], r[j*c+i] = v, 1-v
			idx++
		}
	}
	svmCoupleProbabilities(c, r, p)
}

// svmCoupleProbabilities solves for the class probabilities p that best
// fit the pairwise ones r (r[i*k+j] estimates P(i | i or j)), as libsvm's
// multiclass_probability does.
func svmCoupleProbabilities(k int, r, p []float64) {
	q := make([]float64, k*k)
	qp := make([]float64, k)
	for t := range k {
		p[t] = 1 / float64(k)
		for j := range k {
			if j == t {
				continue
			}
			q[t*k+t] += r[j*k+t] * r[j*k+t]
			q[t*k+j] = -r[j*k+t] * r[t*k+j]
		}
	}
	eps := 0.005 / float64(k)
	for range max(100, k) {
		pqp := 0.0
		for t := range k {
			qp[t] = 0
			for j := range k {
				qp[t] += q[t*k+j] * p[j]
			}
			pqp += p[t] * qp[t]
		}
		maxErr := 0.0
		for t := range k {
			maxErr = max(maxErr, math.Abs(qp[t]-pqp))
		}
		if maxErr < eps {
			break
		}
		for t := range k {
			diff := (-qp[t] + pqp) / q[t*k+t]
			p[t] += diff
			pqp = (pqp + diff*(diff*q[t*k+t]+2*qp[t])) / (1 + diff) / (1 + diff)
			for j := range k {
				qp[j] = (qp[j] + diff*q[t*k+j]) / (1 + diff)
				p[j] /= 1 + diff
			}
		}
	}
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_SVMClassifier.html
func (b *builder) VisitSVMClassifier(op *ops.SVMClassifier) error {
	xr, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &svmClassifier{
		labels: mlLabelsOf(op.ClasslabelsInts, op.ClasslabelsStrings),
		sv:     mlFloat64s(op.SupportVectors), coef: mlFloat64s(op.Coefficients), rho: mlFloat64s(op.Rho),
		probA: mlFloat64s(op.ProbA), probB: mlFloat64s(op.ProbB), threads: b.e.threads,
	}
	k.classes = k.labels.count()
	if k.classes == 0 {
		return fmt.Errorf("SVMClassifier needs classlabels_ints or classlabels_strings")
	}
	if len(op.ProbA) != len(op.ProbB) {
		return fmt.Errorf("prob_a has %d values and prob_b %d", len(op.ProbA), len(op.ProbB))
	}
	if len(k.rho) == 0 {
		return fmt.Errorf("SVMClassifier needs rho")
	}
	if k.transform, err = mlTransformOf(op.PostTransform); err != nil {
		return err
	}
	k.allPositive = true
	for _, c := range op.Coefficients {
		k.allPositive = k.allPositive && c >= 0
	}
	for _, v := range op.VectorsPerClass {
		if v < 0 || v > 1<<31 {
			return fmt.Errorf("vectors_per_class has %d", v)
		}
		k.start = append(k.start, k.vectors)
		k.perClass = append(k.perClass, int(v))
		k.vectors += int(v)
	}
	if k.vectors > 0 {
		// libsvm mode: support vectors and one-vs-one coefficients.
		pairs := k.classes * (k.classes - 1) / 2
		switch {
		case k.classes < 2:
			return fmt.Errorf("support vectors classify between 2 or more classes; there are %d class labels", k.classes)
		case len(op.VectorsPerClass) != k.classes:
			return fmt.Errorf("vectors_per_class has %d values; want one per class (%d)", len(op.VectorsPerClass), k.classes)
		case len(k.coef) < (k.classes-1)*k.vectors:
			return fmt.Errorf("coefficients has %d values; want (classes-1) × vectors = %d", len(k.coef), (k.classes-1)*k.vectors)
		case len(k.rho) < pairs:
			return fmt.Errorf("rho has %d values; want one per pair of classes (%d)", len(k.rho), pairs)
		case len(k.probA) > 0 && len(k.probA) < pairs:
			return fmt.Errorf("prob_a has %d values; want one per pair of classes (%d)", len(k.probA), pairs)
		}
		if k.kernel, err = svmKernelOf(op.KernelType, op.KernelParams); err != nil {
			return err
		}
	}
	return b.emit(classifierKernel(xr, b.output(op.Out.Y), b.output(op.Out.Z), k.run))
}
