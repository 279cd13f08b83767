package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// treeV5 is TreeEnsemble's attribute layout: nodes_* lists of the branch
// nodes only, whose children are positions in those lists or, where
// nodes_trueleafs/nodes_falseleafs say so, in the leaf_* lists; each tree
// named by the position of its root.
type treeV5 struct {
	featureIDs, trueIDs, falseIDs, trueLeafs, falseLeafs, missingTrue []int64
	modes                                                             []int64
	splits, membership                                                []float64
	leafTargets                                                       []int64
	leafWeights                                                       []float64
	roots                                                             []int64
	nTargets                                                          int
}

func (a *treeV5) compile() (*treeForest, error) {
	n := len(a.featureIDs)
	for _, l := range []struct {
		name string
		n    int
	}{
		{"nodes_splits", len(a.splits)}, {"nodes_modes", len(a.modes)}, {"nodes_truenodeids", len(a.trueIDs)},
		{"nodes_falsenodeids", len(a.falseIDs)}, {"nodes_trueleafs", len(a.trueLeafs)}, {"nodes_falseleafs", len(a.falseLeafs)},
	} {
		if l.n != n {
			return nil, fmt.Errorf("%s has %d values; nodes_featureids has %d", l.name, l.n, n)
		}
	}
	if len(a.missingTrue) > n {
		return nil, fmt.Errorf("nodes_missing_value_tracks_true has %d values; nodes_featureids has %d", len(a.missingTrue), n)
	}
	if len(a.leafWeights) != len(a.leafTargets) {
		return nil, fmt.Errorf("leaf_weights has %d values; leaf_targetids has %d", len(a.leafWeights), len(a.leafTargets))
	}
	nLeaves := len(a.leafTargets)
	f := &treeForest{
		nodes:   make([]treeNode, n),
		leafLo:  make([]int32, nLeaves+1),
		wTarget: make([]int32, nLeaves),
		wValue:  a.leafWeights,
	}
	for l, t := range a.leafTargets {
		if t < 0 || t >= int64(a.nTargets) {
			return nil, fmt.Errorf("leaf_targetids has %d; want 0 to %d", t, a.nTargets-1)
		}
		f.leafLo[l+1] = int32(l + 1)
		f.wTarget[l] = int32(t)
	}
	child := func(i int, id, leaf int64) (int32, error) {
		if leaf != 0 {
			if id < 0 || id >= int64(nLeaves) {
				return 0, fmt.Errorf("node %d has leaf child %d; there are %d leaves", i, id, nLeaves)
			}
			return ^int32(id), nil
		}
		if id < 0 || id >= int64(n) {
			return 0, fmt.Errorf("node %d has child node %d; there are %d nodes", i, id, n)
		}
		return int32(id), nil
	}
	// The members of the sets of the BRANCH_MEMBER nodes follow each other
	// in membership_values in the order of those nodes, each set ended by
	// a NaN.
	next := 0
	for i := range n {
		nd := &f.nodes[i]
		if a.modes[i] < int64(treeLEQ) || a.modes[i] > int64(treeMember) {
			return nil, fmt.Errorf("nodes_modes[%d] is %d; want 0 (BRANCH_LEQ) to 6 (BRANCH_MEMBER)", i, a.modes[i])
		}
		loneLeaf := a.trueLeafs[i] != 0 && a.falseLeafs[i] != 0 && a.trueIDs[i] == a.falseIDs[i]
		switch {
		case loneLeaf:
			// Both branches are one leaf: the feature is never read.
		case a.featureIDs[i] < 0 || a.featureIDs[i] > math.MaxInt32:
			return nil, fmt.Errorf("node %d reads feature %d", i, a.featureIDs[i])
		default:
			nd.feature = int32(a.featureIDs[i])
		}
		nd.mode = uint8(a.modes[i])
		nd.value = a.splits[i]
		nd.nanTrue = i < len(a.missingTrue) && a.missingTrue[i] == 1
		var err error
		if nd.child[0], err = child(i, a.falseIDs[i], a.falseLeafs[i]); err != nil {
			return nil, err
		}
		if nd.child[1], err = child(i, a.trueIDs[i], a.trueLeafs[i]); err != nil {
			return nil, err
		}
		if nd.mode != treeMember {
			continue
		}
		if next >= len(a.membership) {
			return nil, fmt.Errorf("node %d is a BRANCH_MEMBER node but membership_values has no set left for it", i)
		}
		lo := len(f.members)
		for ; next < len(a.membership) && !math.IsNaN(a.membership[next]); next++ {
			f.members = append(f.members, a.membership[next])
		}
		next++ // the NaN
		slices.Sort(f.members[lo:])
		nd.setLo, nd.setHi = int32(lo), int32(len(f.members))
	}
	for _, r := range a.roots {
		if r < 0 || r >= int64(n) {
			return nil, fmt.Errorf("tree_roots has %d; there are %d nodes", r, n)
		}
		// A tree that is a single leaf is a node whose two branches are
		// that leaf: its feature need not exist.
		if a.trueLeafs[r] != 0 && a.falseLeafs[r] != 0 && a.trueIDs[r] == a.falseIDs[r] {
			f.roots = append(f.roots, f.nodes[r].child[1])
			continue
		}
		f.roots = append(f.roots, int32(r))
	}
	if err := f.finish(); err != nil {
		return nil, err
	}
	// finish counted every node's feature, a lone leaf's included.
	f.maxFeature = -1
	reach := make([]bool, n)
	stack := []int32{}
	for _, r := range f.roots {
		if r >= 0 && !reach[r] {
			reach[r] = true
			stack = append(stack, r)
		}
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		f.maxFeature = max(f.maxFeature, int(f.nodes[i].feature))
		for _, c := range f.nodes[i].child {
			if c >= 0 && !reach[c] {
				reach[c] = true
				stack = append(stack, c)
			}
		}
	}
	return f, nil
}

// v5Floats reads a tensor attribute as float64 values (nil when unset).
func v5Floats(name string, t *onnx.Tensor) ([]float64, error) {
	if t == nil {
		return nil, nil
	}
	v, err := float64sOf(t)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsemble.html
//
// The output has the input's type. post_transform applies to each row of
// targets (ONNX's reference implementation ignores it; ONNX Runtime
// applies only PROBIT to a single target).
func (b *builder) VisitTreeEnsemble(op *ops.TreeEnsemble) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &treeRegressor{inputs: []onnx.DataType{onnx.Float, onnx.Double, onnx.Float16}, threads: b.e.threads}
	if op.AggregateFunction < int64(treeAverage) || op.AggregateFunction > int64(treeMax) {
		return fmt.Errorf("aggregate_function %d is not 0 (AVERAGE), 1 (SUM), 2 (MIN) or 3 (MAX)", op.AggregateFunction)
	}
	k.agg = treeAggregate(op.AggregateFunction)
	if k.transform, err = mlTransformOfInt(op.PostTransform); err != nil {
		return err
	}
	a := treeV5{
		featureIDs: op.NodesFeatureids, trueIDs: op.NodesTruenodeids, falseIDs: op.NodesFalsenodeids,
		trueLeafs: op.NodesTrueleafs, falseLeafs: op.NodesFalseleafs, missingTrue: op.NodesMissingValueTracksTrue,
		leafTargets: op.LeafTargetids, roots: op.TreeRoots,
	}
	if op.NodesModes != nil {
		if a.modes, err = intsOf(op.NodesModes); err != nil {
			return fmt.Errorf("nodes_modes: %w", err)
		}
	}
	if a.splits, err = v5Floats("nodes_splits", op.NodesSplits); err != nil {
		return err
	}
	if a.membership, err = v5Floats("membership_values", op.MembershipValues); err != nil {
		return err
	}
	if a.leafWeights, err = v5Floats("leaf_weights", op.LeafWeights); err != nil {
		return err
	}
	if op.NTargets != nil {
		a.nTargets = int(min(*op.NTargets, math.MaxInt32))
	} else {
		// n_targets is optional: count the targets the leaves name.
		for _, t := range op.LeafTargetids {
			a.nTargets = max(a.nTargets, int(min(t, math.MaxInt32))+1)
		}
	}
	if a.nTargets < 1 {
		return fmt.Errorf("n_targets is %d; want 1 or more", a.nTargets)
	}
	k.nTargets = a.nTargets
	if k.forest, err = a.compile(); err != nil {
		return err
	}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}
