package native

import (
	"math"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// mlV5Tree is the tree of ONNX's test_ai_onnx_ml_tree_ensemble_single_tree
// (onnx/backend/test/case/node/ai_onnx_ml/tree_ensemble.py), optionally
// followed by a copy of it whose leaves weigh 1, 2, 3, 4.
func mlV5Tree(twoTrees bool, more ...*onnx.Attribute) []*onnx.Attribute {
	roots := []int64{0}
	modes := []uint8{0, 0, 0}
	feats := []int64{0, 0, 0}
	splits := []float64{3.14, 1.2, 4.2}
	trueIDs, trueLeafs := []int64{1, 0, 1}, []int64{0, 1, 1}
	falseIDs, falseLeafs := []int64{2, 2, 3}, []int64{0, 1, 1}
	targets, weights := []int64{0, 1, 0, 1}, []float64{5.23, 12.12, -12.23, 7.21}
	if twoTrees {
		roots = append(roots, 3)
		modes = append(modes, modes...)
		feats = append(feats, feats...)
		splits = append(splits, splits...)
		trueIDs = append(trueIDs, 4, 0+4, 1+4)
		trueLeafs = append(trueLeafs, trueLeafs...)
		falseIDs = append(falseIDs, 5, 2+4, 3+4)
		falseLeafs = append(falseLeafs, falseLeafs...)
		targets = append(targets, targets...)
		weights = append(weights, 1, 2, 3, 4)
	}
	return append([]*onnx.Attribute{
		intAttr("n_targets", 2), intsAttr("tree_roots", roots...),
		mlTensorAttr("nodes_modes", onnx.FromSlice(modes, len(modes))), intsAttr("nodes_featureids", feats...),
		mlTensorAttr("nodes_splits", onnx.FromSlice(splits, len(splits))),
		intsAttr("nodes_truenodeids", trueIDs...), intsAttr("nodes_trueleafs", trueLeafs...),
		intsAttr("nodes_falsenodeids", falseIDs...), intsAttr("nodes_falseleafs", falseLeafs...),
		intsAttr("leaf_targetids", targets...), mlTensorAttr("leaf_weights", onnx.FromSlice(weights, len(weights))),
	}, more...)
}

// The two TreeEnsemble cases of ONNX's backend tests, with their expected
// outputs.
func TestMLTreeEnsembleOnnxCases(t *testing.T) {
	x := onnx.FromSlice([]float64{1.2, 3.4, -0.12, 1.66, 4.14, 1.77}, 3, 2)
	out := mlRun(t, 5, "TreeEnsemble", mlV5Tree(false, intAttr("aggregate_function", 1), intAttr("post_transform", 0)), 1, x)
	if out[0].Type != onnx.Double {
		t.Fatalf("output is tensor(%v), want the input's double", out[0].Type)
	}
	mlNear(t, "single_tree", out[0], []int{3, 2}, []float64{5.23, 0, 5.23, 0, 0, 12.12}, 1e-12)

	nan := float32(math.NaN())
	attrs := []*onnx.Attribute{
		intAttr("n_targets", 4), intAttr("aggregate_function", 1),
		mlTensorAttr("membership_values", onnx.FromSlice([]float32{1.2, 3.7, 8, 9, nan, 12, 7, nan}, 8)),
		intAttr("post_transform", 0), intsAttr("tree_roots", 0),
		mlTensorAttr("nodes_modes", onnx.FromSlice([]uint8{0, 6, 6}, 3)), intsAttr("nodes_featureids", 0, 0, 0),
		mlTensorAttr("nodes_splits", onnx.FromSlice([]float32{11, 232344, nan}, 3)),
		intsAttr("nodes_trueleafs", 0, 1, 1), intsAttr("nodes_truenodeids", 1, 0, 1),
		intsAttr("nodes_falseleafs", 1, 0, 1), intsAttr("nodes_falsenodeids", 2, 2, 3),
		intsAttr("leaf_targetids", 0, 1, 2, 3), mlTensorAttr("leaf_weights", onnx.FromSlice([]float32{1, 10, 1000, 100}, 4)),
	}
	xs := onnx.FromSlice([]float32{1.2, 3.4, -0.12, nan, 12, 7}, 6, 1)
	out = mlRun(t, 5, "TreeEnsemble", attrs, 1, xs)
	mlNear(t, "set_membership", out[0], []int{6, 4}, []float64{
		1, 0, 0, 0,
		0, 0, 0, 100,
		0, 0, 0, 100,
		0, 0, 1000, 0,
		0, 0, 1000, 0,
		0, 10, 0, 0}, 0)

	// NaN takes the true branch of a set membership node that tracks
	// missing values true: node 1 (the set {1.2, 3.7, 8, 9}) then gives
	// leaf 0.
	attrs = append(attrs, intsAttr("nodes_missing_value_tracks_true", 0, 1, 0))
	out = mlRun(t, 5, "TreeEnsemble", attrs, 1, onnx.FromSlice([]float32{nan}, 1, 1))
	mlNear(t, "NaN in a set node", out[0], []int{1, 4}, []float64{0, 0, 1000, 0}, 0)
	out = mlRun(t, 5, "TreeEnsemble", append(attrs[:len(attrs)-1], intsAttr("nodes_missing_value_tracks_true", 1, 1, 0)), 1, onnx.FromSlice([]float32{nan}, 1, 1))
	mlNear(t, "NaN tracked at the root", out[0], []int{1, 4}, []float64{1, 0, 0, 0}, 0)
}

// Two trees; rows reach, in tree one and its copy, leaves 0 and 0'
// (target 0: 5.23, 1), 1 and 1' (target 1: 12.12, 2), 3 and 3' (target 1:
// 7.21, 4), 2 and 2' (target 0: -12.23, 3).
func TestMLTreeEnsembleAggregates(t *testing.T) {
	x := onnx.FromSlice([]float64{1.2, 3.4, 4.14, 1.77, 5, 0, 2, 0}, 4, 2)
	big := math.MaxFloat64
	for _, c := range []struct {
		agg  int64
		want []float64
	}{
		{1, []float64{6.23, 0, 0, 14.12, 0, 11.21, -9.23, 0}},
		{0, []float64{3.115, 0, 0, 7.06, 0, 5.605, -4.615, 0}},
		{2, []float64{1, big, big, 2, big, 4, -12.23, big}},
		{3, []float64{5.23, -big, -big, 12.12, -big, 7.21, 3, -big}},
	} {
		out := mlRun(t, 5, "TreeEnsemble", mlV5Tree(true, intAttr("aggregate_function", c.agg)), 1, x)
		mlNear(t, "aggregate", out[0], []int{4, 2}, c.want, 1e-12)
	}
	// post_transform over each row of targets.
	out := mlRun(t, 5, "TreeEnsemble", mlV5Tree(true, intAttr("post_transform", 2)), 1, x)
	mlNear(t, "LOGISTIC", out[0], []int{4, 2}, []float64{mlSig(6.23), 0.5, 0.5, mlSig(14.12), 0.5, mlSig(11.21), mlSig(-9.23), 0.5}, 1e-12)
	out = mlRun(t, 5, "TreeEnsemble", mlV5Tree(true, intAttr("post_transform", 1)), 1, x)
	// The softmax of two scores a, b is [σ(a-b), σ(b-a)].
	mlNear(t, "SOFTMAX", out[0], []int{4, 2}, []float64{mlSig(6.23), mlSig(-6.23), mlSig(-14.12), mlSig(14.12),
		mlSig(-11.21), mlSig(11.21), mlSig(-9.23), mlSig(9.23)}, 1e-12)
}

// A float16 ensemble computes on the float16 values and answers in
// float16; float32 likewise answers in float32.
func TestMLTreeEnsembleTypes(t *testing.T) {
	h := func(v ...float32) []onnx.F16 {
		out := make([]onnx.F16, len(v))
		for i, x := range v {
			out[i] = onnx.F16From(x)
		}
		return out
	}
	attrs := mlV5Tree(false)
	attrs[4] = mlTensorAttr("nodes_splits", onnx.FromSlice(h(3.14, 1.2, 4.2), 3))
	attrs[10] = mlTensorAttr("leaf_weights", onnx.FromSlice(h(5.23, 12.12, -12.23, 7.21), 4))
	out := mlRun(t, 5, "TreeEnsemble", attrs, 1, onnx.FromSlice(h(1.2, 3.4, -0.12, 1.66, 4.14, 1.77), 3, 2))
	if out[0].Type != onnx.Float16 {
		t.Fatalf("output is tensor(%v), want float16", out[0].Type)
	}
	mlNear(t, "float16", out[0], []int{3, 2}, []float64{5.23, 0, 5.23, 0, 0, 12.12}, 1e-3)

	// (The schema has the splits of the input's type: a float32 1.2 is
	// above the double 1.2.)
	attrs = mlV5Tree(false)
	attrs[4] = mlTensorAttr("nodes_splits", onnx.FromSlice([]float32{3.14, 1.2, 4.2}, 3))
	attrs[10] = mlTensorAttr("leaf_weights", onnx.FromSlice([]float32{5.23, 12.12, -12.23, 7.21}, 4))
	out = mlRun(t, 5, "TreeEnsemble", attrs, 1, onnx.FromSlice([]float32{1.2, 3.4, -0.12, 1.66, 4.14, 1.77}, 3, 2))
	if out[0].Type != onnx.Float {
		t.Fatalf("output is tensor(%v), want float", out[0].Type)
	}
	mlNear(t, "float", out[0], []int{3, 2}, []float64{5.23, 0, 5.23, 0, 0, 12.12}, 1e-6)

	if err := mlRunErr(t, 5, "TreeEnsemble", mlV5Tree(false), 1, onnx.FromSlice([]int64{1, 2}, 1, 2)); !strings.Contains(err.Error(), "int64") {
		t.Errorf("int64 input: %v", err)
	}
}

// A tree that is a single leaf: one node whose branches are that leaf
// (ONNX Runtime's TreeEnsembleLeafOnly); its feature is never read.
func TestMLTreeEnsembleLeafOnly(t *testing.T) {
	attrs := []*onnx.Attribute{
		intAttr("n_targets", 1), intsAttr("tree_roots", 0),
		mlTensorAttr("nodes_modes", onnx.FromSlice([]uint8{0}, 1)), intsAttr("nodes_featureids", 7),
		mlTensorAttr("nodes_splits", onnx.FromSlice([]float64{0}, 1)),
		intsAttr("nodes_truenodeids", 0), intsAttr("nodes_trueleafs", 1), intsAttr("nodes_falsenodeids", 0), intsAttr("nodes_falseleafs", 1),
		intsAttr("leaf_targetids", 0), mlTensorAttr("leaf_weights", onnx.FromSlice([]float64{6.23}, 1)),
	}
	out := mlRun(t, 5, "TreeEnsemble", attrs, 1, onnx.FromSlice([]float64{1, 4}, 2, 1))
	mlNear(t, "leaf only", out[0], []int{2, 1}, []float64{6.23, 6.23}, 0)
}

func TestMLTreeEnsembleMalformed(t *testing.T) {
	x := onnx.FromSlice([]float64{1, 2}, 1, 2)
	for _, c := range []struct {
		attr *onnx.Attribute
		msg  string
	}{
		{mlTensorAttr("nodes_modes", onnx.FromSlice([]uint8{0, 7, 0}, 3)), "nodes_modes"},
		{mlTensorAttr("nodes_modes", onnx.FromSlice([]uint8{0, 6, 0}, 3)), "membership_values"},
		{intsAttr("nodes_truenodeids", 1, 9, 1), "leaf child 9"},
		{intsAttr("nodes_falsenodeids", 2, 2, 3, 0), "nodes_falsenodeids"},
		{intsAttr("leaf_targetids", 0, 1, 0, 2), "leaf_targetids"},
		{intsAttr("nodes_falsenodeids", 2, 0, 3), "cycle"},
	} {
		attrs := mlV5Tree(false)
		replaced := false
		for i, a := range attrs {
			if a.Name == c.attr.Name {
				attrs[i], replaced = c.attr, true
			}
		}
		if !replaced {
			t.Fatalf("no attribute %s", c.attr.Name)
		}
		if c.msg == "cycle" { // node 1's false branch back to node 0
			for i, a := range attrs {
				if a.Name == "nodes_falseleafs" {
					attrs[i] = intsAttr("nodes_falseleafs", 0, 0, 1)
				}
			}
		}
		if err := mlRunErr(t, 5, "TreeEnsemble", attrs, 1, x); !strings.Contains(err.Error(), c.msg) {
			t.Errorf("got %v, want an error about %s", err, c.msg)
		}
	}
}
