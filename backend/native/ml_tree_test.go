package native

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// mlOrtForest is the three-tree forest of ONNX Runtime's
// TreeEnsembleClassifier tests (onnxruntime/test/providers/cpu/ml/
// tree_ensembler_classifier_test.cc), with the given class weights, and
// the eight rows of three features those tests feed it.
func mlOrtForest(classIDs []int64, weights []float32, more ...*onnx.Attribute) ([]*onnx.Attribute, *onnx.Tensor) {
	leq, leaf := "BRANCH_LEQ", "LEAF"
	attrs := []*onnx.Attribute{
		intsAttr("nodes_truenodeids", 1, -1, 3, -1, -1, 1, -1, 3, 4, -1, -1, -1, 1, 2, -1, 4, -1, -1, -1),
		intsAttr("nodes_falsenodeids", 2, -1, 4, -1, -1, 2, -1, 6, 5, -1, -1, -1, 6, 3, -1, 5, -1, -1, -1),
		intsAttr("nodes_treeids", 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2),
		intsAttr("nodes_nodeids", 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6),
		intsAttr("nodes_featureids", 2, -2, 0, -2, -2, 0, -2, 2, 1, -2, -2, -2, 0, 2, -2, 1, -2, -2, -2),
		floatsAttr("nodes_values", -172, -2, 2.5, -2, -2, 1.5, -2, -62.5, 213.09999084, -2, -2, -2, 27.5, -172, -2, 8.10000038, -2, -2, -2),
		stringsAttr("nodes_modes", leq, leaf, leq, leaf, leaf, leq, leaf, leq, leq, leaf, leaf, leaf, leq, leq, leaf, leq, leaf, leaf, leaf),
		intsAttr("class_treeids", 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2),
		intsAttr("class_nodeids", 1, 3, 4, 1, 4, 5, 6, 2, 4, 5, 6),
		intsAttr("class_ids", classIDs...),
		floatsAttr("class_weights", weights...),
	}
	x := onnx.FromSlice([]float32{1, 0, 0.4, 3, 44, -3, 12, 12.9, -312, 23, 11.3, -222, 23, 11.3, -222, 23, 3311.3, -222, 23, 11.3, -222, 43, 413.3, -114}, 8, 3)
	return append(attrs, more...), x
}

// The expected values of ONNX Runtime's TreeEnsembleClassifier tests, at
// every version of the operator.
func TestMLTreeClassifierRuntimeCases(t *testing.T) {
	for _, v := range []int64{1, 3, 5} {
		// Four classes.
		attrs, x := mlOrtForest([]int64{2, 0, 1, 0, 2, 3, 1, 2, 0, 1, 3}, []float32{1, 4, 1, 2, 1, 1, 2, 1, 1, 1, 3},
			intsAttr("classlabels_int64s", 0, 1, 2, 3))
		out := mlRun(t, v, "TreeEnsembleClassifier", attrs, 2, x)
		mlInts(t, "multiclass Y", out[0], 0, 1, 2, 2, 2, 2, 2, 3)
		mlNear(t, "multiclass Z", out[1], []int{8, 4}, []float64{7, 0, 0, 0, 0, 4, 0, 0, 0, 0, 3, 0, 0, 0, 3, 0,
			0, 0, 3, 0, 0, 0, 2, 1, 0, 0, 3, 0, 0, 1, 0, 4}, 1e-6)

		// Two string labels, every weight for class 0 and of both signs:
		// Z is [-s, s] and the label is the second when s > 0.
		mixed := []float32{-1, 4, -1, 2, -1, 1, -2, 1, -1, 2, -3}
		attrs, x = mlOrtForest(make([]int64, 11), mixed, stringsAttr("classlabels_strings", "label0", "label1"))
		out = mlRun(t, v, "TreeEnsembleClassifier", attrs, 2, x)
		mlStrings(t, "binary Y", out[0], "label1", "label0", "label0", "label0", "label0", "label1", "label0", "label0")
		mlNear(t, "binary Z", out[1], []int{8, 2}, []float64{-5, 5, 1, -1, 1, -1, 1, -1, 1, -1, -1, 1, 1, -1, 3, -3}, 1e-6)

		// One class label: Z is the score alone, Y a raw 1 or 0.
		attrs, x = mlOrtForest(make([]int64, 11), mixed, intsAttr("classlabels_int64s", 1))
		out = mlRun(t, v, "TreeEnsembleClassifier", attrs, 2, x)
		mlInts(t, "one class Y", out[0], 1, 0, 0, 0, 0, 1, 0, 0)
		mlNear(t, "one class Z", out[1], []int{8, 1}, []float64{5, -1, -1, -1, -1, 1, -1, -3}, 1e-6)
	}
}

// ONNX Runtime's TreeEnsembleClassifierBinaryProbabilities: two classes,
// weights for both, LOGISTIC. A row whose leaves weigh class 1 keeps two
// scores; one whose leaves weigh only class 0 has one score s and gives
// [σ(-s), σ(s)].
func TestMLTreeClassifierBinaryProbabilities(t *testing.T) {
	attrs, x := mlOrtForest([]int64{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, []float32{-1, 4, -1, 2, -1, 1, -2, 1, -1, 2, -3},
		intsAttr("classlabels_int64s", 0, 1), stringAttr("post_transform", "LOGISTIC"))
	// Runtime's case lists (tree 1, node 3), a branch, for the second
	// weight: a weight on a branch is ignored.
	attrs[7] = intsAttr("class_treeids", 0, 1, 0, 1, 1, 1, 1, 2, 2, 2, 2)
	out := mlRun(t, 3, "TreeEnsembleClassifier", attrs, 2, x)
	mlInts(t, "Y", out[0], 1, 1, 0, 0, 0, 1, 0, 0)
	mlNear(t, "Z", out[1], []int{8, 2}, []float64{
		0.2689414, 0.73105859, 0.04742586, 0.88079702, 0.73105859, 0.26894140, 0.73105859, 0.26894140,
		0.73105859, 0.26894140, 0.26894140, 0.73105859, 0.73105859, 0.26894140, 0.5, 0.04742586}, 1e-6)
}

// mlStump is a one-split tree: feature 0 <= 0.5 goes to leaf 1, else to
// leaf 2; both leaves weigh class 0.
func mlStump(w1, w2 float32, more ...*onnx.Attribute) []*onnx.Attribute {
	return append([]*onnx.Attribute{
		intsAttr("nodes_treeids", 0, 0, 0), intsAttr("nodes_nodeids", 0, 1, 2), intsAttr("nodes_featureids", 0, 0, 0),
		stringsAttr("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF"), floatsAttr("nodes_values", 0.5, 0, 0),
		intsAttr("nodes_truenodeids", 1, 0, 0), intsAttr("nodes_falsenodeids", 2, 0, 0),
		intsAttr("class_treeids", 0, 0), intsAttr("class_nodeids", 1, 2), intsAttr("class_ids", 0, 0),
		floatsAttr("class_weights", w1, w2),
	}, more...)
}

// The binary conventions converters rely on, hand-computed.
func TestMLTreeClassifierBinaryConventions(t *testing.T) {
	x := onnx.FromSlice([]float32{0, 1}, 2, 1)
	// sklearn-onnx's binary forests: the probability of the second class
	// at each leaf, for class id 0. Label: that probability > 0.5; Z:
	// [1-p, p], whatever the post_transform but PROBIT.
	for _, pt := range []string{"NONE", "LOGISTIC", "SOFTMAX"} {
		out := mlRun(t, 1, "TreeEnsembleClassifier", mlStump(0.8, 0.25, intsAttr("classlabels_int64s", 10, 20), stringAttr("post_transform", pt)), 2, x)
		mlInts(t, pt+" Y", out[0], 20, 10)
		mlNear(t, pt+" Z", out[1], []int{2, 2}, []float64{0.2, 0.8, 0.75, 0.25}, 1e-6)
	}
	// PROBIT of the one score: [-p, p].
	out := mlRun(t, 1, "TreeEnsembleClassifier", mlStump(0.8, 0.25, intsAttr("classlabels_int64s", 10, 20), stringAttr("post_transform", "PROBIT")), 2, x)
	p8, p25 := mlProbitOf(0.8), mlProbitOf(0.25)
	mlNear(t, "PROBIT Z", out[1], []int{2, 2}, []float64{-p8, p8, -p25, p25}, 1e-6)
	// Gradient boosting (LightGBM, sklearn): margins of both signs and a
	// base value, LOGISTIC: Z = [σ(-s), σ(s)], label s > 0.
	out = mlRun(t, 3, "TreeEnsembleClassifier", mlStump(-1.5, 2, stringsAttr("classlabels_strings", "no", "yes"),
		stringAttr("post_transform", "LOGISTIC"), floatsAttr("base_values", 0.25)), 2, x)
	mlStrings(t, "margin Y", out[0], "no", "yes")
	mlNear(t, "margin Z", out[1], []int{2, 2}, []float64{mlSig(1.25), mlSig(-1.25), mlSig(-2.25), mlSig(2.25)}, 1e-6)
	// The same margins with NONE: [-s, s].
	out = mlRun(t, 5, "TreeEnsembleClassifier", mlStump(-1.5, 2, stringsAttr("classlabels_strings", "no", "yes")), 2, x)
	mlNear(t, "margin NONE Z", out[1], []int{2, 2}, []float64{1.5, -1.5, -2, 2}, 1e-6)
}

// Multiclass base values and post_transforms, hand-computed from the sums
// of the Runtime forest's first two rows: [7 0 0 0] and [0 4 0 0].
func TestMLTreeClassifierTransforms(t *testing.T) {
	ids, w := []int64{2, 0, 1, 0, 2, 3, 1, 2, 0, 1, 3}, []float32{1, 4, 1, 2, 1, 1, 2, 1, 1, 1, 3}
	softmax := func(v ...float64) []float64 {
		s := 0.0
		for _, x := range v {
			s += math.Exp(x)
		}
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = math.Exp(x) / s
		}
		return out
	}
	// Base values are added to every class; SOFTMAX over the row.
	attrs, x := mlOrtForest(ids, w, stringsAttr("classlabels_strings", "a", "b", "c", "d"),
		floatsAttr("base_values", 0.5, -0.5, 1, 0), stringAttr("post_transform", "SOFTMAX"))
	out := mlRun(t, 1, "TreeEnsembleClassifier", attrs, 2, x)
	mlStrings(t, "softmax Y", out[0], "a", "b", "c", "c", "c", "c", "c", "d")
	want := append(softmax(7.5, -0.5, 1, 0), softmax(0.5, 3.5, 1, 0)...)
	mlNear(t, "softmax Z", &onnx.Tensor{Type: onnx.Float, Shape: []int{2, 4}, Data: out[1].Float32s()[:8]}, []int{2, 4}, want, 1e-6)

	// The same base values as a double tensor (version 3 and later).
	attrs, x = mlOrtForest(ids, w, intsAttr("classlabels_int64s", 5, 6, 7, 8),
		mlTensorAttr("base_values_as_tensor", onnx.FromSlice([]float64{0.5, -0.5, 1, 0}, 4)), stringAttr("post_transform", "SOFTMAX"))
	out = mlRun(t, 3, "TreeEnsembleClassifier", attrs, 2, x)
	mlInts(t, "as_tensor Y", out[0], 5, 6, 7, 7, 7, 7, 7, 8)
	mlNear(t, "as_tensor Z", &onnx.Tensor{Type: onnx.Float, Shape: []int{2, 4}, Data: out[1].Float32s()[:8]}, []int{2, 4}, want, 1e-6)

	// SOFTMAX_ZERO keeps zero scores at zero.
	attrs, x = mlOrtForest(ids, w, intsAttr("classlabels_int64s", 0, 1, 2, 3), stringAttr("post_transform", "SOFTMAX_ZERO"))
	out = mlRun(t, 1, "TreeEnsembleClassifier", attrs, 2, x)
	mlNear(t, "softmax_zero Z", &onnx.Tensor{Type: onnx.Float, Shape: []int{2, 4}, Data: out[1].Float32s()[:8]}, []int{2, 4},
		[]float64{1, 0, 0, 0, 0, 1, 0, 0}, 1e-6)

	// LOGISTIC on each class score.
	attrs, x = mlOrtForest(ids, w, intsAttr("classlabels_int64s", 0, 1, 2, 3), stringAttr("post_transform", "LOGISTIC"))
	out = mlRun(t, 1, "TreeEnsembleClassifier", attrs, 2, x)
	mlNear(t, "logistic Z", &onnx.Tensor{Type: onnx.Float, Shape: []int{2, 4}, Data: out[1].Float32s()[:8]}, []int{2, 4},
		[]float64{mlSig(7), 0.5, 0.5, 0.5, 0.5, mlSig(4), 0.5, 0.5}, 1e-6)
}

// mlRegForest is a two-tree, two-target regressor:
//
//	tree 0: x0 <= 1 ? leaf (t0 1, t1 10) : (x1 < 0 ? leaf (t0 2) : leaf (t1 20))
//	tree 1: x0 >= 5 ? leaf (t0 4) : leaf (t0 8, t1 40)
func mlRegForest(more ...*onnx.Attribute) []*onnx.Attribute {
	return append([]*onnx.Attribute{
		intsAttr("nodes_treeids", 0, 0, 0, 0, 0, 1, 1, 1), intsAttr("nodes_nodeids", 0, 1, 2, 3, 4, 0, 1, 2),
		intsAttr("nodes_featureids", 0, 0, 1, 0, 0, 0, 0, 0),
		stringsAttr("nodes_modes", "BRANCH_LEQ", "LEAF", "BRANCH_LT", "LEAF", "LEAF", "BRANCH_GTE", "LEAF", "LEAF"),
		floatsAttr("nodes_values", 1, 0, 0, 0, 0, 5, 0, 0),
		intsAttr("nodes_truenodeids", 1, 0, 3, 0, 0, 1, 0, 0), intsAttr("nodes_falsenodeids", 2, 0, 4, 0, 0, 2, 0, 0),
		intsAttr("target_treeids", 0, 0, 0, 0, 1, 1, 1), intsAttr("target_nodeids", 1, 1, 3, 4, 1, 2, 2),
		intsAttr("target_ids", 0, 1, 0, 1, 0, 0, 1), floatsAttr("target_weights", 1, 10, 2, 20, 4, 8, 40),
		intAttr("n_targets", 2),
	}, more...)
}

// Rows of mlRegForest: [0 0] reaches (1, 10) and (8, 40); [2 -1] (2) and
// (8, 40); [6 -1] (2) and (4), no weight for target 1; [6 7] (20) and (4).
var mlRegRows = onnx.FromSlice([]float32{0, 0, 2, -1, 6, -1, 6, 7}, 4, 2)

func TestMLTreeRegressorAggregates(t *testing.T) {
	big := float64(math.MaxFloat32)
	for _, v := range []int64{1, 3, 5} {
		for _, c := range []struct {
			agg  string
			want []float64
		}{
			{"SUM", []float64{9, 50, 10, 40, 6, 0, 4, 20}},
			{"AVERAGE", []float64{4.5, 25, 5, 20, 3, 0, 2, 10}},
			// A target no leaf weighs: the extreme of float32, as ONNX's
			// reference implementation gives.
			{"MIN", []float64{1, 10, 2, 40, 2, big, 4, 20}},
			{"MAX", []float64{8, 40, 8, 40, 4, -big, 4, 20}},
		} {
			out := mlRun(t, v, "TreeEnsembleRegressor", mlRegForest(stringAttr("aggregate_function", c.agg)), 1, mlRegRows)
			mlNear(t, c.agg, out[0], []int{4, 2}, c.want, 1e-6)
		}
		// Base values are added after the aggregate, to every target.
		out := mlRun(t, v, "TreeEnsembleRegressor", mlRegForest(stringAttr("aggregate_function", "AVERAGE"), floatsAttr("base_values", 0.5, -1)), 1, mlRegRows)
		mlNear(t, "AVERAGE + base", out[0], []int{4, 2}, []float64{5, 24, 5.5, 19, 3.5, -1, 2.5, 9}, 1e-6)
		// post_transform over the row of targets.
		out = mlRun(t, v, "TreeEnsembleRegressor", mlRegForest(floatsAttr("base_values", -9, -50), stringAttr("post_transform", "LOGISTIC")), 1, mlRegRows)
		mlNear(t, "LOGISTIC", out[0], []int{4, 2}, []float64{0.5, 0.5, mlSig(1), mlSig(-10), mlSig(-3), mlSig(-50), mlSig(-5), mlSig(-30)}, 1e-6)
		out = mlRun(t, v, "TreeEnsembleRegressor", mlRegForest(floatsAttr("base_values", 0, -40), stringAttr("post_transform", "SOFTMAX")), 1, mlRegRows)
		s := func(a, b float64) []float64 { return []float64{1 / (1 + math.Exp(b-a)), 1 / (1 + math.Exp(a-b))} }
		want := append(append(append(s(9, 10), s(10, 0)...), s(6, -40)...), s(4, -20)...)
		mlNear(t, "SOFTMAX", out[0], []int{4, 2}, want, 1e-6)
	}
}

// Each comparison mode on one feature against 2, and NaN: the true branch
// when nodes_missing_value_tracks_true says so, else what the comparison
// gives (false, but true for BRANCH_NEQ).
func TestMLTreeModesAndMissingValues(t *testing.T) {
	modes := []string{"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"}
	var treeIDs, nodeIDs, feats, trues, falses, tracks, wTree, wNode, wTarget []int64
	var allModes []string
	var values, weights []float32
	for i, m := range modes {
		id := int64(i)
		treeIDs = append(treeIDs, id, id, id)
		nodeIDs = append(nodeIDs, 0, 1, 2)
		feats = append(feats, 0, 0, 0)
		allModes = append(allModes, m, "LEAF", "LEAF")
		values = append(values, 2, 0, 0)
		trues = append(trues, 1, 0, 0)
		falses = append(falses, 2, 0, 0)
		track := int64(0)
		if i < 3 {
			track = 1
		}
		tracks = append(tracks, track, 0, 0)
		wTree = append(wTree, id, id)
		wNode = append(wNode, 1, 2)
		wTarget = append(wTarget, id, id)
		weights = append(weights, 1, 100)
	}
	attrs := []*onnx.Attribute{
		intsAttr("nodes_treeids", treeIDs...), intsAttr("nodes_nodeids", nodeIDs...), intsAttr("nodes_featureids", feats...),
		stringsAttr("nodes_modes", allModes...), floatsAttr("nodes_values", values...),
		intsAttr("nodes_truenodeids", trues...), intsAttr("nodes_falsenodeids", falses...),
		intsAttr("nodes_missing_value_tracks_true", tracks...),
		intsAttr("target_treeids", wTree...), intsAttr("target_nodeids", wNode...), intsAttr("target_ids", wTarget...),
		floatsAttr("target_weights", weights...), intAttr("n_targets", 6),
	}
	const T, F = 1, 100
	want := []float64{
		T, T, F, F, F, T, // x = 1: LEQ LT GTE GT EQ NEQ
		T, F, T, F, T, F, // x = 2
		F, F, T, T, F, T, // x = 3
		T, T, T, F, F, T, // NaN: the first three track true
	}
	nan := float32(math.NaN())
	out := mlRun(t, 1, "TreeEnsembleRegressor", attrs, 1, onnx.FromSlice([]float32{1, 2, 3, nan}, 4, 1))
	mlNear(t, "float", out[0], []int{4, 6}, want, 0)
	out = mlRun(t, 3, "TreeEnsembleRegressor", attrs, 1, onnx.FromSlice([]float64{1, 2, 3, math.NaN()}, 4, 1))
	mlNear(t, "double", out[0], []int{4, 6}, want, 0)
	out = mlRun(t, 1, "TreeEnsembleRegressor", attrs, 1, onnx.FromSlice([]int64{1, 2, 3}, 3, 1))
	mlNear(t, "int64", out[0], []int{3, 6}, want[:18], 0)
	out = mlRun(t, 1, "TreeEnsembleRegressor", attrs, 1, onnx.FromSlice([]int32{3}, 1))
	mlNear(t, "int32 [F]", out[0], []int{1, 6}, want[12:18], 0)
}

// nodes_values_as_tensor compares in double precision: 0.1000000005 is
// above the double 0.1 but below the float32 0.1 (0.10000000149...).
func TestMLTreeDoubleThresholds(t *testing.T) {
	tree := func(values *onnx.Attribute, weights *onnx.Attribute) []*onnx.Attribute {
		return []*onnx.Attribute{
			intsAttr("nodes_treeids", 0, 0, 0), intsAttr("nodes_nodeids", 0, 1, 2), intsAttr("nodes_featureids", 0, 0, 0),
			stringsAttr("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF"), values,
			intsAttr("nodes_truenodeids", 1, 0, 0), intsAttr("nodes_falsenodeids", 2, 0, 0),
			intsAttr("target_treeids", 0, 0), intsAttr("target_nodeids", 1, 2), intsAttr("target_ids", 0, 0), weights,
			intAttr("n_targets", 1),
		}
	}
	x := onnx.FromSlice([]float64{0.1000000005}, 1, 1)
	dbl := mlTensorAttr("nodes_values_as_tensor", onnx.FromSlice([]float64{0.1, 0, 0}, 3))
	flt := floatsAttr("nodes_values", 0.1, 0, 0)
	out := mlRun(t, 3, "TreeEnsembleRegressor", tree(dbl, mlTensorAttr("target_weights_as_tensor", onnx.FromSlice([]float64{1.5, 2.5}, 2))), 1, x)
	mlNear(t, "double thresholds", out[0], []int{1, 1}, []float64{2.5}, 0)
	out = mlRun(t, 3, "TreeEnsembleRegressor", tree(flt, floatsAttr("target_weights", 1.5, 2.5)), 1, x)
	mlNear(t, "float thresholds", out[0], []int{1, 1}, []float64{1.5}, 0)
	err := mlRunErr(t, 3, "TreeEnsembleRegressor", append(tree(flt, floatsAttr("target_weights", 1.5, 2.5)), dbl), 1, x)
	if !strings.Contains(err.Error(), "nodes_values_as_tensor") {
		t.Errorf("both nodes_values forms: %v", err)
	}
}

func TestMLTreeMalformed(t *testing.T) {
	base := func(trues, falses []int64) []*onnx.Attribute {
		return []*onnx.Attribute{
			intsAttr("nodes_treeids", 0, 0, 0), intsAttr("nodes_nodeids", 0, 1, 2), intsAttr("nodes_featureids", 0, 1, 0),
			stringsAttr("nodes_modes", "BRANCH_LEQ", "BRANCH_LEQ", "LEAF"), floatsAttr("nodes_values", 0, 0, 0),
			intsAttr("nodes_truenodeids", trues...), intsAttr("nodes_falsenodeids", falses...),
			intsAttr("target_treeids", 0), intsAttr("target_nodeids", 2), intsAttr("target_ids", 0), floatsAttr("target_weights", 1),
			intAttr("n_targets", 1),
		}
	}
	x := onnx.FromSlice([]float32{0, 0}, 1, 2)
	for _, c := range []struct {
		trues, falses []int64
		x             *onnx.Tensor
		msg           string
	}{
		{[]int64{1, 0, 0}, []int64{2, 2, 0}, x, "cycle"},
		{[]int64{1, 7, 0}, []int64{2, 2, 0}, x, "child 7"},
		{[]int64{1, 2, 0}, []int64{2, 2, 0}, onnx.FromSlice([]float32{0}, 1, 1), "feature 1"},
	} {
		err := mlRunErr(t, 1, "TreeEnsembleRegressor", base(c.trues, c.falses), 1, c.x)
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("got %v, want an error about %s", err, c.msg)
		}
	}
	err := mlRunErr(t, 1, "TreeEnsembleRegressor", append(base([]int64{1, 2, 0}, []int64{2, 2, 0}), intsAttr("target_ids", 3)), 1, x)
	if !strings.Contains(err.Error(), "target_ids") {
		t.Errorf("target out of range: %v", err)
	}
	err = mlRunErr(t, 1, "TreeEnsembleClassifier", mlStump(1, 2), 2, onnx.FromSlice([]float32{0}, 1, 1))
	if !strings.Contains(err.Error(), "classlabels") {
		t.Errorf("no labels: %v", err)
	}
}

// mlNaiveTree evaluates tree tid of legacy attributes by following ids
// through maps: the plain reading of the definition, against which the
// compiled forest is checked on random ensembles.
func mlNaiveTree(nodes map[[2]int64]int, modes []string, feats, trues, falses []int64, values []float32, tid int64, x []float32) int {
	i := nodes[[2]int64{tid, 0}]
	for modes[i] != "LEAF" {
		v, th := x[feats[i]], values[i]
		var r bool
		switch modes[i] {
		case "BRANCH_LEQ":
			r = v <= th
		case "BRANCH_LT":
			r = v < th
		case "BRANCH_GTE":
			r = v >= th
		case "BRANCH_GT":
			r = v > th
		case "BRANCH_EQ":
			r = v == th
		case "BRANCH_NEQ":
			r = v != th
		}
		next := falses[i]
		if r {
			next = trues[i]
		}
		i = nodes[[2]int64{tid, next}]
	}
	return i
}

// A large random ensemble over many rows (so that rows spread over
// workers) agrees with the naive walk.
func TestMLTreeRandomEnsemble(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trees, depth, features, targets, rows = 40, 6, 5, 3, 3000
	modeNames := []string{"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"}
	var treeIDs, nodeIDs, feats, trues, falses, wTree, wNode, wTarget []int64
	var modes []string
	var values, weights []float32
	for tr := range int64(trees) {
		// A complete binary tree in breadth-first order, listed in a
		// shuffled order to check that ids, not positions, link nodes.
		n := int64(1)<<(depth+1) - 1
		for _, id := range rng.Perm(int(n)) {
			id := int64(id)
			treeIDs = append(treeIDs, tr)
			nodeIDs = append(nodeIDs, id)
			if id >= n/2 {
				modes = append(modes, "LEAF")
				feats, values, trues, falses = append(feats, 0), append(values, 0), append(trues, 0), append(falses, 0)
				for k := range 1 + rng.IntN(2) {
					wTree, wNode, wTarget = append(wTree, tr), append(wNode, id), append(wTarget, int64((k+rng.IntN(targets))%targets))
					weights = append(weights, float32(rng.IntN(200)-100)/8)
				}
				continue
			}
			m := modeNames[rng.IntN(4)] // EQ and NEQ now and then
			if rng.IntN(10) == 0 {
				m = modeNames[4+rng.IntN(2)]
			}
			modes = append(modes, m)
			feats = append(feats, int64(rng.IntN(features)))
			values = append(values, float32(rng.IntN(9)-4))
			trues, falses = append(trues, 2*id+1), append(falses, 2*id+2)
		}
	}
	x := make([]float32, rows*features)
	for i := range x {
		x[i] = float32(rng.IntN(9) - 4)
	}
	attrs := []*onnx.Attribute{
		intsAttr("nodes_treeids", treeIDs...), intsAttr("nodes_nodeids", nodeIDs...), intsAttr("nodes_featureids", feats...),
		stringsAttr("nodes_modes", modes...), floatsAttr("nodes_values", values...),
		intsAttr("nodes_truenodeids", trues...), intsAttr("nodes_falsenodeids", falses...),
		intsAttr("target_treeids", wTree...), intsAttr("target_nodeids", wNode...), intsAttr("target_ids", wTarget...),
		floatsAttr("target_weights", weights...), intAttr("n_targets", targets),
	}
	// Roots are each tree's first listed node: move node 0 first.
	first := map[int64]int{}
	for i, tid := range treeIDs {
		if _, ok := first[tid]; !ok {
			first[tid] = i
		}
	}
	for i, tid := range treeIDs {
		if nodeIDs[i] == 0 {
			j := first[tid]
			for _, s := range [][]int64{treeIDs, nodeIDs, feats, trues, falses} {
				s[i], s[j] = s[j], s[i]
			}
			modes[i], modes[j] = modes[j], modes[i]
			values[i], values[j] = values[j], values[i]
		}
	}
	out := mlRun(t, 1, "TreeEnsembleRegressor", attrs, 1, onnx.FromSlice(x, rows, features))
	nodes := map[[2]int64]int{}
	for i := range treeIDs {
		nodes[[2]int64{treeIDs[i], nodeIDs[i]}] = i
	}
	leafWeights := map[int][][2]float64{}
	for w := range wTree {
		i := nodes[[2]int64{wTree[w], wNode[w]}]
		leafWeights[i] = append(leafWeights[i], [2]float64{float64(wTarget[w]), float64(weights[w])})
	}
	want := make([]float64, rows*targets)
	for r := range rows {
		for tr := range int64(trees) {
			l := mlNaiveTree(nodes, modes, feats, trues, falses, values, tr, x[r*features:(r+1)*features])
			for _, tw := range leafWeights[l] {
				want[r*targets+int(tw[0])] += tw[1]
			}
		}
	}
	mlNear(t, "random ensemble", out[0], []int{rows, targets}, want, 1e-5)
}
