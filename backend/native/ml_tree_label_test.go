package native

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// mlStumpIDs is a one-split tree (feature 0 <= 0.5: leaf 1, else leaf 2)
// whose leaves carry the given (node, class id, weight) votes.
func mlStumpIDs(nodes, ids []int64, weights []float32, more ...*onnx.Attribute) []*onnx.Attribute {
	return append([]*onnx.Attribute{
		intsAttr("nodes_treeids", 0, 0, 0), intsAttr("nodes_nodeids", 0, 1, 2), intsAttr("nodes_featureids", 0, 0, 0),
		stringsAttr("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF"), floatsAttr("nodes_values", 0.5, 0, 0),
		intsAttr("nodes_truenodeids", 1, 0, 0), intsAttr("nodes_falsenodeids", 2, 0, 0),
		intsAttr("class_treeids", make([]int64, len(nodes))...), intsAttr("class_nodeids", nodes...),
		intsAttr("class_ids", ids...), floatsAttr("class_weights", weights...),
	}, more...)
}

// When the leaves vote for both of two classes (no binary property), Y is
// the top class of Z, the class scores with their base values: the
// operator's "top class for each point"
// (https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsembleClassifier.html),
// and ONNX's reference (argmax of the scores). ONNX Runtime returns a raw 1
// or 0 by the sign of class 1's score instead, which is not a class label
// and may name the lower-scored class.
func TestMLTreeClassifierTwoClassesTopClass(t *testing.T) {
	x := onnx.FromSlice([]float32{0, 1}, 2, 1)
	labels := intsAttr("classlabels_int64s", 10, 20)
	// Leaf 1: class 0 2, class 1 1; leaf 2: class 1 0.5.
	votes := func(more ...*onnx.Attribute) []*onnx.Attribute {
		return mlStumpIDs([]int64{1, 1, 2}, []int64{0, 1, 1}, []float32{2, 1, 0.5}, append([]*onnx.Attribute{labels}, more...)...)
	}
	out := mlRun(t, 1, "TreeEnsembleClassifier", votes(), 2, x)
	mlInts(t, "Y", out[0], 10, 20)
	mlNear(t, "Z", out[1], []int{2, 2}, []float64{2, 1, 0, 0.5}, 1e-6)

	// Two base values, one per class, also for a class no leaf weighed:
	// [2+1, 1+0.25] and [0+1, 0.5+0.25].
	out = mlRun(t, 3, "TreeEnsembleClassifier", votes(floatsAttr("base_values", 1, 0.25)), 2, x)
	mlInts(t, "base Y", out[0], 10, 10)
	mlNear(t, "base Z", out[1], []int{2, 2}, []float64{3, 1.25, 1, 0.75}, 1e-6)

	// Class 1 unweighed in row 0, class 0 in row 1, with base values
	// [0.5, 1]: [2.5, 1] and [0.5, 0.5] (a tie goes to the first class).
	out = mlRun(t, 1, "TreeEnsembleClassifier", mlStumpIDs([]int64{1, 2}, []int64{0, 1}, []float32{2, -0.5},
		labels, floatsAttr("base_values", 0.5, 1)), 2, x)
	mlInts(t, "unweighed Y", out[0], 10, 10)
	mlNear(t, "unweighed Z", out[1], []int{2, 2}, []float64{2.5, 1, 0.5, 0.5}, 1e-6)

	// SOFTMAX does not change the order: softmax([2, 1]) still favours class 0.
	out = mlRun(t, 1, "TreeEnsembleClassifier", votes(stringAttr("post_transform", "SOFTMAX")), 2, x)
	mlInts(t, "softmax Y", out[0], 10, 20)
	e := math.Exp(1)
	mlNear(t, "softmax Z", out[1], []int{2, 2}, []float64{e / (e + 1), 1 / (e + 1), 1 / (1 + math.Exp(0.5)), 1 / (1 + math.Exp(-0.5))}, 1e-6)
}

// The case difftest found (seed 5, ai.onnx.ml.TreeEnsembleClassifier-v1/
// int64_int64/case7): labels [1 3], both rows scoring class 0 higher after
// SOFTMAX, so Y is label 1 for both; the old rule (class 1's score
// positive) gave 3.
func TestMLTreeClassifierDifftestCase(t *testing.T) {
	attrs := []*onnx.Attribute{
		intsAttr("class_ids", 0, 1, 0, 1, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1),
		intsAttr("class_nodeids", 3, 3, 4, 4, 6, 6, 7, 8, 8, 1, 2, 1, 1, 2),
		intsAttr("class_treeids", 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 2),
		floatsAttr("class_weights", 1.25, -0.875, -0.75, 1.375, 1.625, 1.75, 1.875, -1.5, 0.125, 0.125, 0, 1, -1.25, 1.25),
		intsAttr("classlabels_int64s", 1, 3),
		intsAttr("nodes_falsenodeids", 8, 5, 4, 0, 0, 7, 0, 0, 0, 2, 0, 0, 2, 0, 0),
		intsAttr("nodes_featureids", 0, 0, 2, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0),
		intsAttr("nodes_missing_value_tracks_true", 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
		stringsAttr("nodes_modes", "BRANCH_LEQ", "BRANCH_LEQ", "BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_NEQ", "LEAF", "LEAF", "LEAF",
			"BRANCH_EQ", "LEAF", "LEAF", "BRANCH_GT", "LEAF", "LEAF"),
		intsAttr("nodes_nodeids", 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 2, 0, 1, 2),
		intsAttr("nodes_treeids", 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2),
		intsAttr("nodes_truenodeids", 1, 2, 3, 0, 0, 6, 0, 0, 0, 1, 0, 0, 1, 0, 0),
		floatsAttr("nodes_values", 2, -1.5, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, -1.5, 0, 0),
		stringAttr("post_transform", "SOFTMAX"),
	}
	x := onnx.FromSlice([]int64{2, 2, -1, 0, -1, 1}, 2, 3)
	out := mlRun(t, 1, "TreeEnsembleClassifier", attrs, 2, x)
	mlInts(t, "Y", out[0], 1, 1)
	// Z is the same in ONNX Runtime; both rows favour class 0.
	mlNear(t, "Z", out[1], []int{2, 2}, []float64{0.5926666, 0.40733343, 0.880797, 0.11920292}, 1e-6)
}

// More than two classes: Y is the top class of Z, counting a class no leaf
// weighed at its score 0 (ONNX Runtime picks among the weighed classes
// only, here the one at -1, which Z scores lowest).
func TestMLTreeClassifierMulticlassUnweighedClass(t *testing.T) {
	x := onnx.FromSlice([]float32{0, 1}, 2, 1)
	for _, pt := range []string{"NONE", "SOFTMAX", "LOGISTIC"} {
		out := mlRun(t, 1, "TreeEnsembleClassifier", mlStumpIDs([]int64{1}, []int64{1}, []float32{-1},
			stringsAttr("classlabels_strings", "a", "b", "c"), stringAttr("post_transform", pt)), 2, x)
		mlStrings(t, pt+" Y", out[0], "a", "a")
	}
	// A weighed class that beats the unweighed ones still wins.
	out := mlRun(t, 1, "TreeEnsembleClassifier", mlStumpIDs([]int64{1, 2}, []int64{2, 1}, []float32{0.5, -2},
		stringsAttr("classlabels_strings", "a", "b", "c")), 2, x)
	mlStrings(t, "Y", out[0], "c", "a")
	mlNear(t, "Z", out[1], []int{2, 3}, []float64{0, 0, 0.5, 0, -2, 0}, 1e-6)
}
