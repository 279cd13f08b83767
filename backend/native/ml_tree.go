package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Tree ensembles: TreeEnsembleClassifier and TreeEnsembleRegressor
// (versions 1, 3 and 5) here, TreeEnsemble (version 5) in
// ml_tree_ensemble.go. Both attribute layouts compile once, when the node
// is built, into a treeForest: flat arrays of nodes and leaves that a row
// walks with no maps or pointers.
//
// Version 5 of the classifier and the regressor is deprecated in favour of
// TreeEnsemble (ONNX's checker refuses a model that uses it, and ONNX
// Runtime has no kernel for it), but its schema is version 3's unchanged
// and ONNX's reference implementation runs it as version 3: so does this.

// Comparison modes of the branch nodes, numbered as TreeEnsemble's
// nodes_modes.
const (
	treeLEQ uint8 = iota
	treeLT
	treeGTE
	treeGT
	treeEQ
	treeNEQ
	treeMember
)

// treeNode is a branch. A child is a node index, or ^l for leaf l.
type treeNode struct {
	value   float64 // the threshold
	feature int32
	mode    uint8
	nanTrue bool     // a NaN feature takes the true branch
	child   [2]int32 // false, true
	setLo   int32    // a BRANCH_MEMBER node's set: members[setLo:setHi], sorted
	setHi   int32
}

// treeForest is a compiled ensemble.
type treeForest struct {
	nodes      []treeNode
	roots      []int32 // per tree: its root node, or ^l for a tree that is leaf l
	leafLo     []int32 // leaf l's weights are at [leafLo[l], leafLo[l+1])
	wTarget    []int32
	wValue     []float64
	members    []float64
	maxFeature int  // the largest feature a branch reads; -1 if none
	allLEQ     bool // every branch is BRANCH_LEQ
}

// leaf walks one tree from ref down to its leaf for the features x. A NaN
// feature compares as IEEE 754 says (false, but true for BRANCH_NEQ), as in
// ONNX Runtime and TreeEnsemble's reference; the older operators' reference
// sends it to the false branch whatever the mode.
func (f *treeForest) leaf(ref int32, x []float64) int32 {
	for ref >= 0 {
		n := &f.nodes[ref]
		v := x[n.feature]
		var t bool
		switch n.mode {
		case treeLEQ:
			t = v <= n.value
		case treeLT:
			t = v < n.value
		case treeGTE:
			t = v >= n.value
		case treeGT:
			t = v > n.value
		case treeEQ:
			t = v == n.value
		case treeNEQ:
			t = v != n.value
		case treeMember:
			_, t = slices.BinarySearch(f.members[n.setLo:n.setHi], v)
		}
		if n.nanTrue && v != v {
			t = true
		}
		if t {
			ref = n.child[1]
		} else {
			ref = n.child[0]
		}
	}
	return ^ref
}

// treeAggregate is TreeEnsemble's aggregate_function, numbered as there.
type treeAggregate uint8

const (
	treeAverage treeAggregate = iota
	treeSum
	treeMin
	treeMax
)

func treeAggregateOf(s string) (treeAggregate, error) {
	switch s {
	case "AVERAGE":
		return treeAverage, nil
	case "SUM":
		return treeSum, nil
	case "MIN":
		return treeMin, nil
	case "MAX":
		return treeMax, nil
	}
	return 0, fmt.Errorf("aggregate_function %q is not AVERAGE, SUM, MIN or MAX", s)
}

// treeBlock is the number of rows that walk a tree one after the other:
// the tree's nodes stay in cache from one row to the next (ONNX Runtime
// blocks its rows likewise).
const treeBlock = 128

// accumulate aggregates, for each row r of rows [lo, hi) of nf features,
// the weights of the leaves it reaches into acc[(r-lo)*nt:] (nt targets),
// marking in has the targets some leaf weighed. acc and has start zeroed.
// AVERAGE sums here; the division is the caller's.
func (f *treeForest) accumulate(rows []float64, nf, lo, hi int, agg treeAggregate, acc []float64, has []bool, nt int) {
	for _, root := range f.roots {
		for r := lo; r < hi; r++ {
			var l int32
			if f.allLEQ {
				l = f.leafLEQ(root, rows[r*nf:(r+1)*nf])
			} else {
				l = f.leaf(root, rows[r*nf:(r+1)*nf])
			}
			a, h := acc[(r-lo)*nt:(r-lo+1)*nt], has[(r-lo)*nt:(r-lo+1)*nt]
			for w := f.leafLo[l]; w < f.leafLo[l+1]; w++ {
				t, v := f.wTarget[w], f.wValue[w]
				switch {
				case !h[t]:
					a[t] = v
				case agg == treeMin:
					a[t] = min(a[t], v)
				case agg == treeMax:
					a[t] = max(a[t], v)
				default:
					a[t] += v
				}
				h[t] = true
			}
		}
	}
}

// leafLEQ is leaf for a forest whose branches are all BRANCH_LEQ, the
// mode of most converters' output.
func (f *treeForest) leafLEQ(ref int32, x []float64) int32 {
	for ref >= 0 {
		n := &f.nodes[ref]
		v := x[n.feature]
		if v <= n.value || (n.nanTrue && v != v) {
			ref = n.child[1]
		} else {
			ref = n.child[0]
		}
	}
	return ^ref
}

// checkFeatures checks that rows of f features hold every feature a branch
// reads.
func (f *treeForest) checkFeatures(features int) error {
	if f.maxFeature >= features {
		return fmt.Errorf("a tree node reads feature %d but input X has %d features", f.maxFeature, features)
	}
	return nil
}

// rowsPerChunk is the least number of rows worth a goroutine for a
// forest: a row costs about a walk per tree.
func (f *treeForest) rowsPerChunk() int {
	return max(1, 4096/max(1, len(f.roots)))
}

// finish validates the compiled forest: every child is in range and no
// walk can loop. It also sets maxFeature.
func (f *treeForest) finish() error {
	nLeaves := int32(len(f.leafLo) - 1)
	nNodes := int32(len(f.nodes))
	f.maxFeature = -1
	f.allLEQ = true
	for i := range f.nodes {
		n := &f.nodes[i]
		f.allLEQ = f.allLEQ && n.mode == treeLEQ
		for _, c := range n.child {
			if c >= nNodes || (c < 0 && ^c >= nLeaves) {
				return fmt.Errorf("tree node %d has a child out of range", i)
			}
		}
		if n.feature < 0 {
			return fmt.Errorf("tree node %d reads feature %d", i, n.feature)
		}
		f.maxFeature = max(f.maxFeature, int(n.feature))
	}
	for _, r := range f.roots {
		if r >= nNodes || (r < 0 && ^r >= nLeaves) {
			return fmt.Errorf("a tree root is out of range")
		}
	}
	// Depth-first over the branches from every root: a branch met again
	// while its own subtree is being visited closes a cycle.
	const (
		unseen = iota
		open
		done
	)
	state := make([]uint8, len(f.nodes))
	type frame struct {
		node int32
		next int
	}
	var stack []frame
	for _, r := range f.roots {
		if r < 0 || state[r] == done {
			continue
		}
		stack = append(stack[:0], frame{r, 0})
		state[r] = open
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == 2 {
				state[top.node] = done
				stack = stack[:len(stack)-1]
				continue
			}
			c := f.nodes[top.node].child[top.next]
			top.next++
			if c < 0 {
				continue
			}
			switch state[c] {
			case open:
				return fmt.Errorf("the trees have a cycle through node %d", c)
			case unseen:
				state[c] = open
				stack = append(stack, frame{c, 0})
			}
		}
	}
	return nil
}

// treeLegacy is the attribute layout of TreeEnsembleClassifier and
// TreeEnsembleRegressor: parallel nodes_* lists keyed by (tree id, node
// id), and parallel lists of leaf weights keyed the same way.
type treeLegacy struct {
	treeIDs, nodeIDs, featureIDs, trueIDs, falseIDs []int64
	modes                                           []string
	values                                          []float64
	missingTrue                                     []int64
	wTree, wNode, wTarget                           []int64
	wValue                                          []float64
	nTargets                                        int
	targetAttr                                      string // "class_ids" or "target_ids", for messages
}

// compile builds the forest. Trees come in the order of their first node,
// and a tree's root is its first node in the lists, as in ONNX Runtime and
// ONNX's reference implementation. Weights given to a branch node are
// ignored (older converters wrote some), as ONNX Runtime does.
func (a *treeLegacy) compile() (*treeForest, error) {
	n := len(a.treeIDs)
	for _, l := range []struct {
		name string
		n    int
	}{
		{"nodes_nodeids", len(a.nodeIDs)}, {"nodes_featureids", len(a.featureIDs)}, {"nodes_modes", len(a.modes)},
		{"nodes_values", len(a.values)}, {"nodes_truenodeids", len(a.trueIDs)}, {"nodes_falsenodeids", len(a.falseIDs)},
	} {
		if l.n != n {
			return nil, fmt.Errorf("%s has %d values; nodes_treeids has %d", l.name, l.n, n)
		}
	}
	if len(a.missingTrue) > n {
		return nil, fmt.Errorf("nodes_missing_value_tracks_true has %d values; nodes_treeids has %d", len(a.missingTrue), n)
	}
	if len(a.wNode) != len(a.wTree) || len(a.wTarget) != len(a.wTree) || len(a.wValue) != len(a.wTree) {
		return nil, fmt.Errorf("the leaf weight lists (tree ids, node ids, %s, weights) have %d, %d, %d and %d values",
			a.targetAttr, len(a.wTree), len(a.wNode), len(a.wTarget), len(a.wValue))
	}
	type key struct{ tree, node int64 }
	index := make(map[key]int, n)
	ref := make([]int32, n) // node i's compiled reference
	f := &treeForest{leafLo: []int32{0}}
	var isLeaf []bool
	for i := range n {
		k := key{a.treeIDs[i], a.nodeIDs[i]}
		if _, dup := index[k]; dup {
			return nil, fmt.Errorf("node %d of tree %d is listed twice", k.node, k.tree)
		}
		index[k] = i
		if a.modes[i] == "LEAF" {
			isLeaf = append(isLeaf, true)
			continue
		}
		var mode uint8
		switch a.modes[i] {
		case "BRANCH_LEQ":
			mode = treeLEQ
		case "BRANCH_LT":
			mode = treeLT
		case "BRANCH_GTE":
			mode = treeGTE
		case "BRANCH_GT":
			mode = treeGT
		case "BRANCH_EQ":
			mode = treeEQ
		case "BRANCH_NEQ":
			mode = treeNEQ
		default:
			return nil, fmt.Errorf("node %d of tree %d has mode %q; want LEAF or BRANCH_LEQ, _LT, _GTE, _GT, _EQ, _NEQ", k.node, k.tree, a.modes[i])
		}
		if a.featureIDs[i] < 0 || a.featureIDs[i] > math.MaxInt32 {
			return nil, fmt.Errorf("node %d of tree %d reads feature %d", k.node, k.tree, a.featureIDs[i])
		}
		ref[i] = int32(len(f.nodes))
		f.nodes = append(f.nodes, treeNode{
			value: a.values[i], feature: int32(a.featureIDs[i]), mode: mode,
			nanTrue: i < len(a.missingTrue) && a.missingTrue[i] == 1,
		})
		isLeaf = append(isLeaf, false)
	}
	// Number the leaves, and point to them as ^leaf.
	leafOf := make([]int32, n)
	nLeaves := int32(0)
	for i := range n {
		if isLeaf[i] {
			leafOf[i] = nLeaves
			ref[i] = ^nLeaves
			nLeaves++
		}
	}
	for i := range n {
		if isLeaf[i] {
			continue
		}
		node := &f.nodes[ref[i]]
		for side, id := range []int64{a.falseIDs[i], a.trueIDs[i]} {
			j, ok := index[key{a.treeIDs[i], id}]
			if !ok {
				return nil, fmt.Errorf("node %d of tree %d has child %d, which is not a node of that tree", a.nodeIDs[i], a.treeIDs[i], id)
			}
			node.child[side] = ref[j]
		}
	}
	// Leaf weights, grouped by leaf in their order in the lists.
	counts := make([]int32, nLeaves+1)
	wLeaf := make([]int32, len(a.wTree))
	for w := range a.wTree {
		j, ok := index[key{a.wTree[w], a.wNode[w]}]
		if !ok {
			return nil, fmt.Errorf("a weight is for node %d of tree %d, which is not listed", a.wNode[w], a.wTree[w])
		}
		if t := a.wTarget[w]; t < 0 || t >= int64(a.nTargets) {
			return nil, fmt.Errorf("%s has %d; want 0 to %d", a.targetAttr, t, a.nTargets-1)
		}
		wLeaf[w] = -1
		if isLeaf[j] {
			wLeaf[w] = leafOf[j]
			counts[leafOf[j]+1]++
		}
	}
	f.leafLo = make([]int32, nLeaves+1)
	for l := range nLeaves {
		f.leafLo[l+1] = f.leafLo[l] + counts[l+1]
	}
	total := f.leafLo[nLeaves]
	f.wTarget = make([]int32, total)
	f.wValue = make([]float64, total)
	fill := slices.Clone(f.leafLo[:nLeaves])
	for w, l := range wLeaf {
		if l < 0 {
			continue
		}
		f.wTarget[fill[l]] = int32(a.wTarget[w])
		f.wValue[fill[l]] = a.wValue[w]
		fill[l]++
	}
	seen := map[int64]bool{}
	for i := range n {
		if !seen[a.treeIDs[i]] {
			seen[a.treeIDs[i]] = true
			f.roots = append(f.roots, ref[i])
		}
	}
	if err := f.finish(); err != nil {
		return nil, err
	}
	return f, nil
}

// treeFloats returns the values of an attribute given as a list of floats
// or, from version 3, as a tensor (of doubles) in its *_as_tensor twin;
// asTensor reports the latter.
func treeFloats(name string, list []float32, tensor *onnx.Tensor) (v []float64, asTensor bool, err error) {
	if tensor != nil {
		if len(list) > 0 {
			return nil, false, fmt.Errorf("%s and %s_as_tensor are both set", name, name)
		}
		v, err = float64sOf(tensor)
		if err != nil {
			return nil, false, fmt.Errorf("%s_as_tensor: %w", name, err)
		}
		return v, true, nil
	}
	v = make([]float64, len(list))
	for i, x := range list {
		v[i] = float64(x)
	}
	return v, false, nil
}

// treeUnscored is what a MIN or MAX aggregate gives a target no leaf
// weighed: the largest (MIN) or lowest (MAX) value of the output type, as
// in ONNX's reference implementation.
func treeUnscored(agg treeAggregate, out onnx.DataType) float64 {
	big := math.MaxFloat32
	switch out {
	case onnx.Double:
		big = math.MaxFloat64
	case onnx.Float16:
		big = 65504
	}
	switch agg {
	case treeMin:
		return big
	case treeMax:
		return -big
	}
	return 0
}

// treeRegressor runs TreeEnsembleRegressor and TreeEnsemble: per target,
// the aggregate of the weights of the leaves a row reaches (AVERAGE
// divides the sum by the number of trees), plus the base value, then the
// post_transform over the row of targets.
type treeRegressor struct {
	forest     *treeForest
	nTargets   int
	agg        treeAggregate
	base       []float64 // nil or one per target
	transform  mlTransform
	narrowInts bool
	inputs     []onnx.DataType
	outType    onnx.DataType // Undefined: the input's type
	threads    int
	rows, res  []float64
	out        outputBuffer
}

func (k *treeRegressor) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	rows, n, nf, err := mlRows(x, &k.rows, k.narrowInts, k.inputs...)
	if err != nil {
		return nil, err
	}
	if err := k.forest.checkFeatures(nf); err != nil {
		return nil, err
	}
	outType := k.outType
	if outType == onnx.Undefined {
		outType = x.Type
	}
	nt := k.nTargets
	res := scratchOf(&k.res, n*nt)
	unscored := treeUnscored(k.agg, outType)
	trees := float64(len(k.forest.roots))
	par.For(n, k.threads, k.forest.rowsPerChunk(), func(lo, hi int) {
		has := make([]bool, min(hi-lo, treeBlock)*nt)
		for b := lo; b < hi; b += treeBlock {
			e := min(hi, b+treeBlock)
			clear(res[b*nt : e*nt])
			clear(has)
			k.forest.accumulate(rows, nf, b, e, k.agg, res[b*nt:e*nt], has, nt)
			for r := b; r < e; r++ {
				acc, h := res[r*nt:(r+1)*nt], has[(r-b)*nt:(r-b+1)*nt]
				for t := range acc {
					switch {
					case !h[t]:
						acc[t] = unscored
					case k.agg == treeAverage:
						acc[t] /= trees
					}
					if k.base != nil {
						acc[t] += k.base[t]
					}
				}
				k.transform.apply(acc)
			}
		}
	})
	y := k.out.tensor(outType, []int{n, nt})
	if !storeFloat64s(y, res) {
		return nil, fmt.Errorf("output type %v is not a float type", outType)
	}
	return y, nil
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsembleRegressor.html
func (b *builder) VisitTreeEnsembleRegressor(op *ops.TreeEnsembleRegressor) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &treeRegressor{inputs: mlNumericInputs, outType: onnx.Float, threads: b.e.threads}
	if k.agg, err = treeAggregateOf(op.AggregateFunction); err != nil {
		return err
	}
	if k.transform, err = mlTransformOf(op.PostTransform); err != nil {
		return err
	}
	a := treeLegacy{
		treeIDs: op.NodesTreeids, nodeIDs: op.NodesNodeids, featureIDs: op.NodesFeatureids,
		trueIDs: op.NodesTruenodeids, falseIDs: op.NodesFalsenodeids, modes: op.NodesModes,
		missingTrue: op.NodesMissingValueTracksTrue,
		wTree:       op.TargetTreeids, wNode: op.TargetNodeids, wTarget: op.TargetIds, targetAttr: "target_ids",
	}
	var thresholdsDouble bool
	if a.values, thresholdsDouble, err = treeFloats("nodes_values", op.NodesValues, op.NodesValuesAsTensor); err != nil {
		return err
	}
	k.narrowInts = !thresholdsDouble
	if a.wValue, _, err = treeFloats("target_weights", op.TargetWeights, op.TargetWeightsAsTensor); err != nil {
		return err
	}
	base, _, err := treeFloats("base_values", op.BaseValues, op.BaseValuesAsTensor)
	if err != nil {
		return err
	}
	if op.NTargets != nil {
		k.nTargets = int(*op.NTargets)
	} else {
		// n_targets is optional: count the targets the weights name.
		for _, t := range op.TargetIds {
			k.nTargets = max(k.nTargets, int(min(t, math.MaxInt32))+1)
		}
	}
	if k.nTargets < 1 {
		return fmt.Errorf("n_targets is %d; want 1 or more", k.nTargets)
	}
	a.nTargets = k.nTargets
	switch len(base) {
	case 0:
	case k.nTargets:
		k.base = base
	default:
		return fmt.Errorf("base_values has %d values; want one per target (%d)", len(base), k.nTargets)
	}
	if k.forest, err = a.compile(); err != nil {
		return err
	}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// treeClassifier runs TreeEnsembleClassifier: per class, the sum of the
// weights of the leaves a row reaches plus the base value; the label is
// the top class of the scores, except that a model of one score column
// (the binary case) follows ONNX Runtime's conventions, which converters
// (sklearn-onnx, onnxmltools) write models for and ONNX's reference
// implementation mirrors in the common cases. Where Runtime leaves an
// output undefined, contradicts the definition or is plainly wrong, the
// choices are noted at finishRow.
type treeClassifier struct {
	forest      *treeForest
	labels      mlLabels
	nClasses    int
	base        []float64
	transform   mlTransform
	binary      bool // two classes and every weight for one class id
	allPositive bool // no weight is negative
	narrowInts  bool
	threads     int
	rows, res   []float64
	picks       []int
	yBuf, zBuf  outputBuffer
}

// finishRow turns a row's class sums (acc, with has marking the classes
// some leaf weighed) into its scores z and its label pick.
//
// More than two classes: the base values are added (a base value counts as
// a score), the post_transform runs over the row, and the label is the
// class of the highest score of Z, the first on ties: the "top class" of
// the definition, and what ONNX's reference computes (Runtime picks among
// the classes some leaf weighed, which differs when those all score below
// an unweighed class's 0).
//
// Two classes: with every weight for one class id (binary), the label is
// the positive class when its score passes 0.5 (all weights positive) or 0
// (otherwise), Runtime's convention for a model of one score column. The
// positive class's score is class 1's when some leaf weighed it, else
// class 0's (0 when no leaf weighed either). When class 1 has no score
// (and there are fewer than two base values), Z holds two scores derived
// from class 0's: [1-s, s] (binary, all weights positive), the LOGISTIC of
// [-s, s] (with that post_transform), or [-s, s]; the other
// post_transforms do not apply (Runtime's convention). Otherwise Z is the
// post_transform of the two class scores, each with its base value (the
// base value alone for a class no leaf weighed, as Runtime's Z has it too
// when class 1 is unweighed). Without the binary property (weights for both
// class ids) the label is the top class of Z, as with more classes:
// Runtime instead returns a raw 1 or 0 (not a class label) by the sign of
// the positive score, which can name the class Z scores lower.
//
// This differs from Runtime where its output is undefined or
// inconsistent: a PROBIT row with one score gives [-p, p] for p the probit
// of s, and a row with one score, one base value and no binary property
// [s, 0] (Runtime leaves Z[1] unwritten in both); two base values with
// class 1 scored are added to their own classes (Runtime adds class 0's sum
// to class 1's base).
//
// One class: Z is the sum plus the base value (PROBIT alone applies) and
// the label is a raw 1 when it is positive, else 0.
func (k *treeClassifier) finishRow(acc []float64, has []bool, z []float64) int {
	val := func(c int) float64 {
		if has[c] {
			return acc[c]
		}
		return 0
	}
	switch {
	case k.nClasses > 2:
		for c, b := range k.base {
			if has[c] {
				acc[c] += b
			} else {
				acc[c], has[c] = b, true
			}
		}
		for c := range z {
			z[c] = val(c)
		}
		k.transform.apply(z)
		return mlArgmax(z)
	case k.nClasses == 1:
		s := val(0)
		if len(k.base) > 0 {
			s += k.base[0]
		}
		z[0] = s
		if k.transform == mlProbit {
			z[0] = mlProbitOf(s)
		}
		if s > 0 {
			return mlPickPositive
		}
		return mlPickNegative
	}
	derive := -1 // how one score becomes two: 0 or 1 [1-s, s], 2 or 3 [-s, s]
	single := false
	// The class scores with their base values, added whether or not a leaf
	// weighed the class (an unweighed class scores its base value).
	s0, s1 := val(0), val(1)
	switch len(k.base) {
	case 2:
		s0 += k.base[0]
		s1 += k.base[1]
	case 1:
		s0 += k.base[0]
		single = !has[1]
	default:
		derive = 3
		single = !has[1]
	}
	// The positive class's score: class 1's when a leaf weighed it, else
	// class 0's when one weighed that, else 0 (Runtime's pos_weight).
	pos := 0.0
	switch {
	case has[1]:
		pos = s1
	case has[0]:
		pos = s0
	}
	pick := 0
	switch {
	case k.binary && k.allPositive:
		derive = 1
		if pos > 0.5 {
			derive, pick = 0, 1
		}
	case k.binary:
		derive = 3
		if pos > 0 {
			derive, pick = 2, 1
		}
	}
	k.twoScores(z, s0, s1, single, derive)
	if !k.binary {
		return mlArgmax(z)
	}
	return pick
}

// twoScores writes Z of a two-class row from its class scores s0 and s1:
// their post_transform, or (single) two scores derived from s0 as
// finishRow describes.
func (k *treeClassifier) twoScores(z []float64, s0, s1 float64, single bool, derive int) {
	if !single {
		z[0], z[1] = s0, s1
		k.transform.apply(z)
		return
	}
	s := s0
	switch {
	case k.transform == mlProbit:
		p := mlProbitOf(s)
		z[0], z[1] = -p, p
	case derive == 0 || derive == 1:
		z[0], z[1] = 1-s, s
	case derive >= 2 && k.transform == mlLogistic:
		z[0], z[1] = mlSigmoid(-s), mlSigmoid(s)
	case derive >= 2:
		z[0], z[1] = -s, s
	default:
		z[0], z[1] = s, 0
	}
}

func (k *treeClassifier) run(x *onnx.Tensor) (y, z *onnx.Tensor, err error) {
	rows, n, nf, err := mlRows(x, &k.rows, k.narrowInts, mlNumericInputs...)
	if err != nil {
		return nil, nil, err
	}
	if err := k.forest.checkFeatures(nf); err != nil {
		return nil, nil, err
	}
	nc := k.nClasses
	w := max(nc, 2)
	if nc == 1 {
		w = 1
	}
	res, picks := scratchOf(&k.res, n*w), scratchOf(&k.picks, n)
	par.For(n, k.threads, k.forest.rowsPerChunk(), func(lo, hi int) {
		acc := make([]float64, min(hi-lo, treeBlock)*nc)
		has := make([]bool, len(acc))
		for b := lo; b < hi; b += treeBlock {
			e := min(hi, b+treeBlock)
			clear(acc)
			clear(has)
			k.forest.accumulate(rows, nf, b, e, treeSum, acc, has, nc)
			for r := b; r < e; r++ {
				i := (r - b) * nc
				picks[r] = k.finishRow(acc[i:i+nc], has[i:i+nc], res[r*w:(r+1)*w])
			}
		}
	})
	return k.labels.tensor(&k.yBuf, picks), mlFloat32Tensor(&k.zBuf, res, n, w), nil
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsembleClassifier.html
func (b *builder) VisitTreeEnsembleClassifier(op *ops.TreeEnsembleClassifier) error {
	xr, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &treeClassifier{labels: mlLabelsOf(op.ClasslabelsInt64s, op.ClasslabelsStrings), threads: b.e.threads}
	k.nClasses = k.labels.count()
	switch {
	case k.nClasses == 0:
		return fmt.Errorf("TreeEnsembleClassifier needs classlabels_int64s or classlabels_strings")
	case k.nClasses == 1 && k.labels.strings:
		return fmt.Errorf("one string class label: the label of a single-class ensemble is a raw 1 or 0, which only integer labels can hold")
	}
	if k.transform, err = mlTransformOf(op.PostTransform); err != nil {
		return err
	}
	a := treeLegacy{
		treeIDs: op.NodesTreeids, nodeIDs: op.NodesNodeids, featureIDs: op.NodesFeatureids,
		trueIDs: op.NodesTruenodeids, falseIDs: op.NodesFalsenodeids, modes: op.NodesModes,
		missingTrue: op.NodesMissingValueTracksTrue, nTargets: k.nClasses,
		wTree: op.ClassTreeids, wNode: op.ClassNodeids, wTarget: op.ClassIds, targetAttr: "class_ids",
	}
	var thresholdsDouble bool
	if a.values, thresholdsDouble, err = treeFloats("nodes_values", op.NodesValues, op.NodesValuesAsTensor); err != nil {
		return err
	}
	k.narrowInts = !thresholdsDouble
	if a.wValue, _, err = treeFloats("class_weights", op.ClassWeights, op.ClassWeightsAsTensor); err != nil {
		return err
	}
	if k.base, _, err = treeFloats("base_values", op.BaseValues, op.BaseValuesAsTensor); err != nil {
		return err
	}
	switch {
	case len(k.base) == 0, len(k.base) == k.nClasses:
	case len(k.base) == 1 && k.nClasses == 2: // ONNX Runtime adds it to class 0
	default:
		return fmt.Errorf("base_values has %d values; want one per class (%d)", len(k.base), k.nClasses)
	}
	ids := map[int64]bool{}
	k.allPositive = true
	for i, id := range op.ClassIds {
		ids[id] = true
		if i < len(a.wValue) && a.wValue[i] < 0 {
			k.allPositive = false
		}
	}
	k.binary = k.nClasses == 2 && len(ids) == 1
	if k.forest, err = a.compile(); err != nil {
		return err
	}
	return b.emit(classifierKernel(xr, b.output(op.Out.Y), b.output(op.Out.Z), k.run))
}
