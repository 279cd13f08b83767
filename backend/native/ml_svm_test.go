package native

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// Inputs and models of ONNX Runtime's SVM tests
// (onnxruntime/test/providers/cpu/ml/svmclassifier_test.cc,
// svmregressor_test.cc), whose expected values follow.
var (
	mlSVMRows = []float32{1, 0, 0.4, 3, 44, -3, 12, 12.9, -312, 23, 11.3, -222, 23, 11.3, -222, 23, 3311.3, -222, 23, 11.3, -222, 43, 413.3, -114}
	mlSVMDual = floatsAttr("coefficients", 1.14360327, 1.95968249, -1.175683, -1.92760275, -1.32575698, -1.32575698,
		0.66332785, 0.66242913, 0.53120854, 0.53510444, -1.06631298, -1.06631298, 0.66332785, 0.66242913, 0.53120854, 0.53510444, 1, -1)
	mlSVMVectors = floatsAttr("support_vectors", 0, 0.5, 32, 2, 2.9, -32, 1, 1.5, 1, 3, 13.3, -11, 12, 12.9, -312, 43, 413.3, -114)
	mlSVMRho6    = floatsAttr("rho", 0.5279583, 0.32605162, 0.32605162, 0.06663721, 0.06663721, 0)
	mlSVMParams  = floatsAttr("kernel_params", 0.001, 0, 3)
)

func TestMLSVMClassifierRuntimeCases(t *testing.T) {
	x8 := onnx.FromSlice(mlSVMRows, 8, 3)
	x5 := onnx.FromSlice(mlSVMRows[:15], 5, 3)
	four := intsAttr("classlabels_ints", 0, 1, 2, 3)

	// One-vs-one with RBF: Z holds the six pairwise scores.
	out := mlRun(t, 1, "SVMClassifier", []*onnx.Attribute{stringAttr("kernel_type", "RBF"), mlSVMDual, mlSVMVectors,
		intsAttr("vectors_per_class", 2, 2, 1, 1), mlSVMRho6, mlSVMParams, four}, 2, x8)
	mlInts(t, "SVC Y", out[0], 1, 1, 2, 0, 0, 0, 0, 3)
	mlNear(t, "SVC Z", out[1], []int{8, 6}, []float64{
		-0.956958294, 0.799815655, 0.799815655, 0.988598406, 0.988598406, 0,
		-0.159782529, 0.407864451, 0.407864451, 0.347750872, 0.347750872, 0,
		0.527958274, -0.999705434, 0.326051623, -0.999675810, 0.0666372105, 1.00000000,
		0.527958274, 0.325695992, 0.326051623, 0.0663511604, 0.0666372105, 0.000268258271,
		0.527958274, 0.325695992, 0.326051623, 0.0663511604, 0.0666372105, 0.000268258271,
		0.527958274, 0.326051623, 0.326051623, 0.0666372105, 0.0666372105, 0,
		0.527958274, 0.325695992, 0.326051623, 0.0663511604, 0.0666372105, 0.000268258271,
		0.527958274, 0.326051623, -0.999705434, 0.0666372105, -0.999675810, -1.00000000}, 1e-5)

	// The same with Platt scaling: Z holds coupled class probabilities,
	// the label still comes from the votes.
	out = mlRun(t, 1, "SVMClassifier", []*onnx.Attribute{stringAttr("kernel_type", "RBF"), mlSVMDual, mlSVMVectors,
		intsAttr("vectors_per_class", 2, 2, 1, 1), mlSVMRho6, mlSVMParams, four,
		floatsAttr("prob_a", -3.8214362, 1.82177748, 1.82177748, 7.17655643, 7.17655643, 0.69314718),
		floatsAttr("prob_b", -1.72839673e+00, -1.12863030e+00, -1.12863030e+00, -6.48340925e+00, -6.48340925e+00, 2.39189538e-16)}, 2, x5)
	mlInts(t, "probabilities Y", out[0], 1, 1, 2, 0, 0)
	mlNear(t, "probabilities Z", out[1], []int{5, 4}, []float64{
		0.13766955, 0.21030431, 0.32596754, 0.3260586,
		0.45939931, 0.26975416, 0.13539588, 0.13545066,
		0.71045899, 0.07858939, 0.05400437, 0.15694726,
		0.58274772, 0.10203105, 0.15755227, 0.15766896,
		0.58274772, 0.10203105, 0.15755227, 0.15766896}, 1e-4)

	// liblinear mode: no support vectors, one row of coefficients per
	// class, rho[0] added to each.
	out = mlRun(t, 1, "SVMClassifier", []*onnx.Attribute{stringAttr("kernel_type", "LINEAR"),
		floatsAttr("coefficients", -1.55181212e-01, 2.42698956e-01, 7.01893432e-03, 4.07614474e-01, -3.24927823e-02, 2.79897536e-04,
			-1.95771302e-01, -3.52437368e-01, -2.15973096e-02, -4.38190277e-01, 4.56869105e-02, -1.29375499e-02),
		floatsAttr("rho", -0.07489691, -0.1764396, -0.21167431, -0.51619097), mlSVMParams, four}, 2, x8)
	mlInts(t, "liblinear Y", out[0], 1, 0, 1, 1, 1, 0, 1, 0)
	mlNear(t, "liblinear Z", out[1], []int{8, 4}, []float64{
		-0.227270544, 0.332829535, -0.279307127, -0.518262208,
		10.1172562, -0.282575697, -16.1046638, 0.659568906,
		-0.996162534, 4.30999184, -0.232234091, -0.707304120,
		-2.45976996, 8.87092972, -3.76557732, -6.76487541,
		-2.45976996, 8.87092972, -3.76557732, -6.76487541,
		798.446777, -98.3552551, -1166.80896, 144.001923,
		-2.45976996, 8.87092972, -3.76557732, -6.76487541,
		92.7596283, 3.99134970, -151.693329, 1.44020212}, 1e-5)

	// Two classes: one score s, Z = [-s, s], and the first class wins
	// when s > 0. Float and double inputs agree.
	binary := []*onnx.Attribute{stringAttr("kernel_type", "RBF"), mlSVMDual, mlSVMVectors, intsAttr("vectors_per_class", 3, 3),
		floatsAttr("rho", 0.5279583), mlSVMParams, intsAttr("classlabels_ints", 0, 1)}
	// (Runtime's case gives the coefficients of the four-class model, of
	// which two classes use the first row.)
	wantZ := []float64{0.95695829391479492, -0.95695829391479492, 0.1597825288772583, -0.1597825288772583,
		0.797798752784729, -0.797798752784729, -0.52760261297225952, 0.52760261297225952, -0.52760261297225952, 0.52760261297225952}
	x5d := make([]float64, 15)
	for i, v := range mlSVMRows[:15] {
		x5d[i] = float64(v)
	}
	for _, x := range []*onnx.Tensor{x5, onnx.FromSlice(x5d, 5, 3)} {
		out = mlRun(t, 1, "SVMClassifier", binary, 2, x)
		mlInts(t, "binary Y", out[0], 1, 1, 1, 0, 0)
		mlNear(t, "binary Z", out[1], []int{5, 2}, wantZ, 1e-5)
	}

	// Two classes, LINEAR kernel over support vectors.
	out = mlRun(t, 1, "SVMClassifier", []*onnx.Attribute{stringAttr("kernel_type", "LINEAR"),
		floatsAttr("coefficients", 0.766398549079895, 0.0871576070785522, 0.110420741140842, -0.963976919651031),
		floatsAttr("support_vectors", 4.80000019073486, 3.40000009536743, 1.89999997615814, 5, 3, 1.60000002384186,
			4.5, 2.29999995231628, 1.29999995231628, 5.09999990463257, 2.5, 3),
		floatsAttr("rho", 2.23510527610779), floatsAttr("kernel_params", 0.122462183237076, 0, 3),
		intsAttr("vectors_per_class", 3, 1), intsAttr("classlabels_ints", 0, 1)}, 2,
		onnx.FromSlice([]float32{5.1, 3.5, 1.4, 4.9, 3, 1.4, 4.7, 3.2, 1.3, 4.6, 3.1, 1.5, 5, 3.6, 1.4}, 5, 3))
	mlInts(t, "linear kernel Y", out[0], 0, 0, 0, 0, 0)
	mlNear(t, "linear kernel Z", out[1], []int{5, 2}, []float64{-1.5556798, 1.5556798, -1.2610321, 1.2610321,
		-1.5795376, 1.5795376, -1.3083477, 1.3083477, -1.6572928, 1.6572928}, 1e-5)
}

// Hand-computed: three classes of one support vector each, SIGMOID and
// POLY kernels, string labels.
func TestMLSVMClassifierKernels(t *testing.T) {
	// Support vectors a=(1,0), b=(0,1), c=(1,1); x = (2, 1).
	// dot: a 2, b 1, c 3. Coefficients: row 0 = [1, 1, 1] (for pairs
	// (0,1) class 0's vector, (0,2) class 0's, and (1,2) class 1's),
	// row 1 = [-1, -1, -1].
	attrs := func(kind string, params ...float32) []*onnx.Attribute {
		return []*onnx.Attribute{stringAttr("kernel_type", kind), floatsAttr("kernel_params", params...),
			floatsAttr("coefficients", 1, 1, 1, -1, -1, -1), floatsAttr("support_vectors", 1, 0, 0, 1, 1, 1),
			intsAttr("vectors_per_class", 1, 1, 1), floatsAttr("rho", 0.1, 0.2, 0.3), stringsAttr("classlabels_strings", "a", "b", "c")}
	}
	x := onnx.FromSlice([]float32{2, 1}, 1, 2)
	// Pair (i, j) scores rho + coef[j-1][i]·K(x, v_i) + coef[i][j]·K(x, v_j):
	// (0,1): 0.1 + 1·Ka + 1·Kb; (0,2): 0.2 + (-1)·Ka + 1·Kc; (1,2): 0.3 - Kb - Kc.
	for _, c := range []struct {
		kind   string
		params []float32
		k      func(dot float64) float64
	}{
		{"SIGMOID", []float32{0.5, -1, 0}, func(d float64) float64 { return math.Tanh(0.5*d - 1) }},
		{"POLY", []float32{0.5, 1, 2}, func(d float64) float64 { return math.Pow(0.5*d+1, 2) }},
		{"linear", []float32{9, 9, 9}, func(d float64) float64 { return d }},
	} {
		ka, kb, kc := c.k(2), c.k(1), c.k(3)
		s := []float64{0.1 + ka + kb, 0.2 - ka + kc, 0.3 - kb - kc}
		votes := [3]int{}
		for p, pair := range [][2]int{{0, 1}, {0, 2}, {1, 2}} {
			if s[p] > 0 {
				votes[pair[0]]++
			} else {
				votes[pair[1]]++
			}
		}
		best := 0
		for i := range votes {
			if votes[i] > votes[best] {
				best = i
			}
		}
		out := mlRun(t, 1, "SVMClassifier", attrs(c.kind, c.params...), 2, x)
		mlStrings(t, c.kind+" Y", out[0], []string{"a", "b", "c"}[best])
		mlNear(t, c.kind+" Z", out[1], []int{1, 3}, s, 1e-6)
	}
}

func TestMLSVMRegressorRuntimeCases(t *testing.T) {
	x8 := onnx.FromSlice(mlSVMRows, 8, 3)
	out := mlRun(t, 1, "SVMRegressor", []*onnx.Attribute{stringAttr("kernel_type", "RBF"),
		floatsAttr("coefficients", -1.54236563, 0.53485162, -1.5170623, 0.69771864, 1.82685767),
		floatsAttr("support_vectors", 0, 0.5, 32, 1, 1.5, 1, 2, 2.9, -32, 12, 12.9, -312, 43, 413.3, -114),
		floatsAttr("rho", 1.96292297), mlSVMParams, intAttr("n_supports", 5)}, 1, x8)
	mlNear(t, "RBF", out[0], []int{8, 1}, []float64{1.40283655, 1.86065906, 2.66064161, 1.96311014, 1.96311014, 1.96292297, 1.96311014, 3.78978065}, 1e-5)

	out = mlRun(t, 1, "SVMRegressor", []*onnx.Attribute{stringAttr("kernel_type", "RBF"),
		floatsAttr("coefficients", -1.7902966, 1.05962596, -1.54324389, -0.43658884, 0.79025169, 1.92025169),
		floatsAttr("support_vectors", 0, 0.5, 32, 1, 1.5, 1, 2, 2.9, -32, 3, 13.3, -11, 12, 12.9, -312, 43, 413.3, -114),
		floatsAttr("rho", 1.96923464), mlSVMParams, intAttr("n_supports", 6)}, 1, x8)
	mlNear(t, "nu RBF", out[0], []int{8, 1}, []float64{1.51230766, 1.77893206, 2.75948633, 1.96944663, 1.96944663, 1.96923464, 1.96944663, 3.88948633}, 1e-5)

	xp := onnx.FromSlice([]float32{1, 0, 0.4, 3, 44, -3, 12, 12.9, 112, 23, 11.3, -222, 23, 11.3, -222, 23, 3311.3, -222, 23, 11.3, -222, 43, 413.3, -114}, 8, 3)
	out = mlRun(t, 1, "SVMRegressor", []*onnx.Attribute{stringAttr("kernel_type", "POLY"),
		floatsAttr("coefficients", -2.74322388e+01, 5.81893108e+01, -1.00000000e+02, 6.91693781e+01, 7.62161261e-02, -2.66618042e-03),
		floatsAttr("support_vectors", 0, 0.5, 32, 1, 1.5, 1, 2, 2.9, -32, 3, 13.3, -11, 12, 12.9, -312, 43, 413.3, -114),
		floatsAttr("rho", 1.5004596), mlSVMParams, intAttr("n_supports", 6)}, 1, xp)
	mlNear(t, "POLY", out[0], []int{8, 1}, []float64{1.50041862e+00, 3.49624789e-01, -1.36680453e+02, -2.28659315e+02,
		-2.28659315e+02, -6.09640827e+05, -2.28659315e+02, 3.89055458e+00}, 1e-2)

	linear := []*onnx.Attribute{stringAttr("kernel_type", "LINEAR"), floatsAttr("coefficients", 0.28290501, -0.0266512, 0.01674867),
		floatsAttr("rho", 1.24032312), mlSVMParams, intAttr("n_supports", 0)}
	wantLinear := []float64{1.52992759, 0.8661395, -0.93420165, 3.72777548, 3.72777548, -84.22117216, 3.72777548, 0.48095091}
	out = mlRun(t, 1, "SVMRegressor", linear, 1, x8)
	mlNear(t, "linear", out[0], []int{8, 1}, wantLinear, 1e-5)

	// one_class gives the sign; post_transform applies to the result.
	out = mlRun(t, 1, "SVMRegressor", append(linear, intAttr("one_class", 1)), 1, x8)
	mlNear(t, "one_class", out[0], []int{8, 1}, []float64{1, 1, -1, 1, 1, -1, 1, 1}, 0)
	out = mlRun(t, 1, "SVMRegressor", append(linear, stringAttr("post_transform", "LOGISTIC")), 1, x8)
	sig := make([]float64, 8)
	for i, v := range wantLinear {
		sig[i] = mlSig(v)
	}
	mlNear(t, "LOGISTIC", out[0], []int{8, 1}, sig, 1e-5)
}
