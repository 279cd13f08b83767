package metrics

import (
	"math"
	"strings"

	"github.com/deep500/deep500-go/onnx"
)

// Rules of difftest's generator for the ai.onnx.ml operators: small
// random models (tree ensembles, support vector machines, linear models)
// and the parameters of the encoders and transforms, shaped as
// sklearn-onnx writes them.

func init() {
	ml := func(op string) string { return "ai.onnx.ml." + op }
	addRules(map[string]opRule{
		ml("ArrayFeatureExtractor"): {gen: genArrayFeatureExtractor},
		ml("Binarizer"):             {gen: genBinarizer},
		ml("CastMap"):               {gen: genCastMap},
		ml("CategoryMapper"):        {gen: genCategoryMapper, types: differ("T1", "T2")},
		ml("DictVectorizer"):        {gen: genDictVectorizer, types: dictVectorizerTypes},
		ml("FeatureVectorizer"):     {gen: genFeatureVectorizer},
		ml("Imputer"):               {gen: genImputer},
		ml("LabelEncoder"): {gen: genLabelEncoder, typesAt: func(since int, t map[string]string) bool {
			return since > 1 || t["T1"] != t["T2"] // version 1 maps strings to int64 and back
		}},
		ml("LinearClassifier"):       {gen: genLinearClassifier},
		ml("LinearRegressor"):        {gen: genLinearRegressor},
		ml("Normalizer"):             {gen: genNormalizer},
		ml("OneHotEncoder"):          {gen: genOneHotEncoder},
		ml("Scaler"):                 {gen: genScaler},
		ml("SVMClassifier"):          {gen: genSVMClassifier},
		ml("SVMRegressor"):           {gen: genSVMRegressor},
		ml("TreeEnsembleClassifier"): {gen: genTreeClassifier},
		ml("TreeEnsembleRegressor"):  {gen: genTreeRegressor},
		ml("TreeEnsemble"):           {gen: genTreeEnsemble},
		ml("ZipMap"):                 {gen: genZipMap},
	})
}

func differ(a, b string) func(map[string]string) bool {
	return func(t map[string]string) bool { return t[a] != t[b] }
}

// features draws the [N, F] input of a model: values on a grid of halves
// (ties with thresholds on the same grid), whole numbers for integer
// types.
func (g *gen) features(dt onnx.DataType, n, f int) *onnx.Tensor {
	if dt.IsFloat() {
		return g.grid(dt, -2, 2, 0.5, n, f)
	}
	return g.randIn(dt, -3, 3, n, f)
}

func (g *gen) floatsIn(n int, lo, hi, step float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = roundTo(g.uniform(lo, hi), step)
	}
	return out
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_ArrayFeatureExtractor.html
func genArrayFeatureExtractor(g *gen) error {
	dt := g.T("T")
	shape := g.dims(g.between(1, 3), 1, 4)
	c := shape[len(shape)-1]
	g.in(0, g.rand(dt, shape...))
	k := g.between(1, 4)
	idx := make([]int64, k)
	for i := range idx {
		idx[i] = int64(g.intn(c))
	}
	g.in(1, i64s(idx...))
	return nil
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_Binarizer.html
func genBinarizer(g *gen) error {
	dt := g.T("T")
	g.in(0, g.features(dt, g.between(1, 3), g.between(1, 4)))
	g.maybeFloat("threshold", pick(g, 0, 0.5, -1))
	return nil
}

// mapOf makes a map with keys of type kt and one scalar value per key.
func mapOf(keys, values *onnx.Tensor) *onnx.Map {
	s := &onnx.Sequence{Elem: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: values.Type}}
	for i := range keys.Len() {
		v := onnx.NewTensor(values.Type)
		_ = onnx.CopyElement(v, 0, values, i) // v has values' type
		s.Values = append(s.Values, v)
	}
	return &onnx.Map{Keys: keys, Values: s}
}

func mapType(kt, vt onnx.DataType) *onnx.TypeInfo {
	return &onnx.TypeInfo{Kind: onnx.MapKind, Elem: kt, Inner: elemType(vt)}
}

// genCastMap: int64 keys (some beyond the map's size, which the dense
// form drops or pads to max_map) to float or string values.
// https://onnx.ai/onnx/operators/onnx_aionnxml_CastMap.html
func genCastMap(g *gen) error {
	in := g.types["T1"]
	out := g.T("T2")
	n := g.between(1, 5)
	keys := toInt64s(g.r.Perm(8)[:n])
	vt := in.Inner.Elem
	vals := g.grid(onnx.Float, 0, 6, 0.5, n)
	if vt == onnx.String {
		s := make([]string, n)
		for i, v := range floatsOf(vals) {
			s[i] = formatNumber(v)
		}
		vals = stringTensor(s, n)
	}
	g.valueIn(0, mapOf(i64s(keys...), vals), mapType(onnx.Int64, vt))
	to := map[onnx.DataType]string{onnx.Float: "TO_FLOAT", onnx.String: "TO_STRING", onnx.Int64: "TO_INT64"}[out]
	if to != "TO_FLOAT" || g.coin() {
		g.attrString("cast_to", to)
	}
	if g.coin() {
		g.attrString("map_form", "SPARSE")
		g.attrInt("max_map", int64(g.between(1, 9)))
	}
	return nil
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_CategoryMapper.html
func genCategoryMapper(g *gen) error {
	n := g.between(1, 4)
	cats := g.r.Perm(len(vocabulary))[:n]
	strs := make([]string, n)
	ids := make([]int64, n)
	for i, c := range cats {
		strs[i] = vocabulary[c]
		ids[i] = int64(c * 3)
	}
	g.attrStrings("cats_strings", strs...)
	g.attrInts("cats_int64s", ids...)
	shape := g.dims(g.between(1, 2), 1, 4)
	if g.T("T1") == onnx.String {
		g.in(0, stringTensor(g.words(onnx.NumElements(shape)), shape...))
		g.maybeInt("default_int64", -7)
		return nil
	}
	vals := make([]int64, onnx.NumElements(shape))
	for i := range vals {
		vals[i] = int64(g.intn(len(vocabulary)) * 3)
	}
	g.in(0, ints(onnx.Int64, vals, shape...))
	if g.coin() {
		g.attrString("default_string", "none")
	}
	return nil
}

// dictVectorizerTypes: the output holds the map's values.
func dictVectorizerTypes(t map[string]string) bool {
	m, err := onnx.ParseTypeString(t["T1"])
	return err == nil && "tensor("+m.Inner.Elem.String()+")" == t["T2"]
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_DictVectorizer.html
func genDictVectorizer(g *gen) error {
	m := g.types["T1"]
	kt, vt := m.Elem, m.Inner.Elem
	vocab := g.between(1, 5)
	n := g.between(1, vocab)
	pos := g.r.Perm(vocab)[:n]
	var keys *onnx.Tensor
	if kt == onnx.String {
		words := []string{"a", "b", "c", "d", "e"}
		g.attrStrings("string_vocabulary", words[:vocab]...)
		ks := make([]string, n)
		for i, p := range pos {
			ks[i] = words[p]
		}
		keys = stringTensor(ks, n)
	} else {
		voc := make([]int64, vocab)
		for i := range voc {
			voc[i] = int64(10 + i*7)
		}
		g.attrInts("int64_vocabulary", voc...)
		ks := make([]int64, n)
		for i, p := range pos {
			ks[i] = voc[p]
		}
		keys = i64s(ks...)
	}
	vals := g.rand(vt, n)
	if vt == onnx.String {
		vals = stringTensor(g.words(n), n)
	}
	g.valueIn(0, mapOf(keys, vals), mapType(kt, vt))
	return nil
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_FeatureVectorizer.html
func genFeatureVectorizer(g *gen) error {
	dt := g.T("T1")
	n := g.between(1, 3)
	var dims []int64
	for i := range g.between(1, 3) {
		d := g.between(1, 3)
		g.in(i, g.rand(dt, n, d))
		// a declared size shorter or longer than the input truncates or pads
		dims = append(dims, int64(max(1, d+g.between(-1, 1))))
	}
	g.attrInts("inputdimensions", dims...)
	return nil
}

// genImputer: NaN (or a sentinel value) replaced by one value or one per
// column. https://onnx.ai/onnx/operators/onnx_aionnxml_Imputer.html
func genImputer(g *gen) error {
	dt := g.T("T")
	n, c := g.between(1, 3), g.between(1, 4)
	x := g.features(dt, n, c)
	k := pick(g, 1, c)
	if dt.IsFloat() {
		nan := g.coin()
		sentinel := -1.0
		for i := range x.Len() {
			if g.chance(0.3) {
				if nan {
					setFloat(x, i, math.NaN())
				} else {
					setFloat(x, i, sentinel)
				}
			}
		}
		g.attrFloats("imputed_value_floats", g.floatsIn(k, -2, 2, 0.25)...)
		if nan {
			g.attrFloat("replaced_value_float", math.NaN())
		} else {
			g.attrFloat("replaced_value_float", sentinel)
		}
	} else {
		iv := make([]int64, k)
		for i := range iv {
			iv[i] = int64(g.between(-5, 5))
		}
		g.attrInts("imputed_value_int64s", iv...)
		g.attrInt("replaced_value_int64", int64(g.between(-3, 3)))
	}
	g.in(0, x)
	return nil
}

// labelValues draws n distinct keys or values of type dt.
func (g *gen) labelValues(dt onnx.DataType, n int) *onnx.Tensor {
	perm := g.r.Perm(10)[:n]
	vals := make([]float64, n)
	for i, p := range perm {
		vals[i] = float64(p) - 3
		if dt.IsFloat() {
			vals[i] = vals[i] / 2
		}
	}
	if dt == onnx.String {
		s := make([]string, n)
		for i, p := range perm {
			s[i] = vocabulary[p]
		}
		return stringTensor(s, n)
	}
	return tensorOf(dt, vals, n)
}

// setLabelAttr sets the keys_ or values_ attribute of t's type, as a
// tensor attribute when asTensor (version 4).
func (g *gen) setLabelAttr(prefix string, t *onnx.Tensor, asTensor bool) error {
	if asTensor {
		return g.attrTensor(prefix+"_tensor", t)
	}
	switch t.Type {
	case onnx.String:
		g.attrStrings(prefix+"_strings", t.Data.([]string)...)
	case onnx.Int64:
		g.attrInts(prefix+"_int64s", t.Data.([]int64)...)
	case onnx.Float:
		g.attrFloats(prefix+"_floats", floatsOf(t)...)
	default:
		return g.attrTensor(prefix+"_tensor", t)
	}
	return nil
}

// genLabelEncoder: https://onnx.ai/onnx/operators/onnx_aionnxml_LabelEncoder.html
func genLabelEncoder(g *gen) error {
	t1, t2 := g.T("T1"), g.T("T2")
	n := g.between(1, 5)
	keys := g.labelValues(t1, n)
	shape := g.dims(g.between(1, 2), 1, 4)
	// inputs mostly among the keys, some not (the default)
	all := g.labelValues(t1, 10)
	x := onnx.NewTensor(t1, shape...)
	for i := range x.Len() {
		src := keys
		j := g.intn(n)
		if g.chance(0.25) {
			src, j = all, g.intn(10)
		}
		_ = onnx.CopyElement(x, i, src, j) // keys and all are of type t1
	}
	g.in(0, x)
	if g.since == 1 {
		if t1 == t2 {
			return cannot("LabelEncoder 1 maps between strings and int64")
		}
		classes := keys
		if t1 != onnx.String {
			classes = g.labelValues(onnx.String, n)
			vals := make([]int64, x.Len())
			for i := range vals {
				vals[i] = int64(g.between(-1, n))
			}
			g.in(0, ints(onnx.Int64, vals, shape...))
		}
		g.attrStrings("classes_strings", classes.Data.([]string)...)
		if t1 == onnx.String {
			g.maybeInt("default_int64", -9)
		} else if g.coin() {
			g.attrString("default_string", "unknown")
		}
		return nil
	}
	values := g.labelValues(t2, n)
	asTensor := g.since >= 4 && g.coin()
	if err := g.setLabelAttr("keys", keys, asTensor); err != nil {
		return err
	}
	if err := g.setLabelAttr("values", values, asTensor); err != nil {
		return err
	}
	if g.coin() {
		switch {
		case g.since >= 4 && (asTensor || (t2 != onnx.String && t2 != onnx.Int64 && t2 != onnx.Float)):
			d := g.labelValues(t2, 1)
			d.Shape = []int{1}
			return g.attrTensor("default_tensor", d)
		case t2 == onnx.String:
			g.attrString("default_string", "unknown")
		case t2 == onnx.Int64:
			g.attrInt("default_int64", -9)
		case t2 == onnx.Float:
			g.attrFloat("default_float", 7.5)
		}
	}
	return nil
}

// classLabels sets c class labels of the output type T2 (int64 or
// string) under the attribute names the operator uses.
func (g *gen) classLabels(c int, ints, strs string) {
	if g.T("T2") == onnx.String {
		labels := make([]string, c)
		for i := range labels {
			labels[i] = "class" + string(rune('A'+i))
		}
		g.attrStrings(strs, labels...)
		return
	}
	labels := make([]int64, c)
	for i := range labels {
		labels[i] = int64(i*2 + 1)
	}
	g.attrInts(ints, labels...)
}

var postTransforms = []string{"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO"}

// genLinearClassifier: one score per class, or one for a binary model
// (two labels), each post-transform.
// https://onnx.ai/onnx/operators/onnx_aionnxml_LinearClassifier.html
func genLinearClassifier(g *gen) error {
	n, f := g.between(1, 4), g.between(1, 4)
	c := g.between(2, 4)
	scores := c
	if c == 2 && g.coin() {
		scores = 1 // binary: the score of the positive class
	}
	g.in(0, g.features(g.T("T1"), n, f))
	g.attrFloats("coefficients", g.floatsIn(scores*f, -1, 1, 0.125)...)
	if g.chance(0.9) {
		g.attrFloats("intercepts", g.floatsIn(scores, -1, 1, 0.125)...)
	}
	g.classLabels(c, "classlabels_ints", "classlabels_strings")
	if g.coin() {
		g.attrString("post_transform", pick(g, postTransforms...))
	}
	g.maybeInt("multi_class", int64(g.intn(2)))
	return nil
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_LinearRegressor.html
func genLinearRegressor(g *gen) error {
	n, f, t := g.between(1, 4), g.between(1, 4), g.between(1, 3)
	g.in(0, g.features(g.T("T"), n, f))
	g.attrFloats("coefficients", g.floatsIn(t*f, -1, 1, 0.125)...)
	if g.coin() {
		g.attrFloats("intercepts", g.floatsIn(t, -1, 1, 0.125)...)
	}
	if t != 1 || g.coin() {
		g.attrInt("targets", int64(t))
	}
	return nil
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_Normalizer.html
func genNormalizer(g *gen) error {
	dt := g.T("T")
	x := g.features(dt, g.between(1, 3), g.between(1, 4))
	if g.coin() {
		x.Shape = []int{x.Len()}
	}
	g.in(0, x)
	g.attrString("norm", pick(g, "MAX", "L1", "L2"))
	return nil
}

// genOneHotEncoder: unknown categories give zero rows with zeros=1.
// https://onnx.ai/onnx/operators/onnx_aionnxml_OneHotEncoder.html
func genOneHotEncoder(g *gen) error {
	dt := g.T("T")
	shape := g.dims(g.between(1, 2), 1, 4)
	n := g.between(1, 4)
	zeros := g.coin()
	if !zeros {
		g.attrInt("zeros", 0)
	} else {
		g.maybeInt("zeros", 1)
	}
	if dt == onnx.String {
		cats := g.r.Perm(len(vocabulary))[:n]
		strs := make([]string, n)
		for i, c := range cats {
			strs[i] = vocabulary[c]
		}
		g.attrStrings("cats_strings", strs...)
		x := make([]string, onnx.NumElements(shape))
		for i := range x {
			x[i] = strs[g.intn(n)]
			if zeros && g.chance(0.2) {
				x[i] = "unseen"
			}
		}
		g.in(0, stringTensor(x, shape...))
		return nil
	}
	cats := toInt64s(g.r.Perm(6)[:n])
	g.attrInts("cats_int64s", cats...)
	x := make([]float64, onnx.NumElements(shape))
	for i := range x {
		x[i] = float64(cats[g.intn(n)])
		if zeros && g.chance(0.2) {
			x[i] = 9
		}
	}
	g.in(0, tensorOf(dt, x, shape...))
	return nil
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_Scaler.html
func genScaler(g *gen) error {
	n, c := g.between(1, 3), g.between(1, 4)
	g.in(0, g.features(g.T("T"), n, c))
	k := pick(g, 1, c)
	g.attrFloats("scale", g.floatsIn(k, 0.25, 2, 0.125)...)
	g.attrFloats("offset", g.floatsIn(k, -1, 1, 0.125)...) // ONNX Runtime requires it
	return nil
}

// kernel draws an SVM kernel and its parameters [gamma, coef0, degree].
func (g *gen) kernel() {
	k := pick(g, "LINEAR", "POLY", "RBF", "SIGMOID")
	if k != "LINEAR" || g.coin() {
		g.attrString("kernel_type", k)
	}
	// sklearn-onnx always writes the parameters, and ONNX Runtime
	// requires them.
	g.attrFloats("kernel_params", pick(g, 0.5, 0.25), pick(g, 0.0, 0.5), float64(pick(g, 2, 3)))
}

// genSVMClassifier: a one-against-one model of 2 or 3 classes with their
// support vectors, with the probability parameters at times, or a linear
// model (no support vectors).
// https://onnx.ai/onnx/operators/onnx_aionnxml_SVMClassifier.html
func genSVMClassifier(g *gen) error {
	n, f := g.between(1, 4), g.between(1, 3)
	c := g.between(2, 3)
	g.in(0, g.features(g.T("T1"), n, f))
	g.classLabels(c, "classlabels_ints", "classlabels_strings")
	g.kernel()
	if g.chance(0.25) {
		// linear SVC: one row of coefficients and a rho per class
		g.attrFloats("coefficients", g.floatsIn(c*f, -1, 1, 0.125)...)
		g.attrFloats("rho", g.floatsIn(c, -0.5, 0.5, 0.125)...)
		return nil
	}
	per := make([]int64, c)
	total := 0
	for i := range per {
		per[i] = int64(g.between(1, 2))
		total += int(per[i])
	}
	g.attrInts("vectors_per_class", per...)
	g.attrFloats("support_vectors", g.floatsIn(total*f, -2, 2, 0.25)...)
	g.attrFloats("coefficients", g.floatsIn((c-1)*total, -1, 1, 0.125)...)
	pairs := c * (c - 1) / 2
	g.attrFloats("rho", g.floatsIn(pairs, -0.5, 0.5, 0.125)...)
	if g.coin() {
		g.attrFloats("prob_a", g.floatsIn(pairs, -2, -0.5, 0.125)...)
		g.attrFloats("prob_b", g.floatsIn(pairs, -0.5, 0.5, 0.125)...)
	}
	if g.chance(0.3) {
		g.attrString("post_transform", pick(g, postTransforms...))
	}
	return nil
}

// genSVMRegressor: https://onnx.ai/onnx/operators/onnx_aionnxml_SVMRegressor.html
func genSVMRegressor(g *gen) error {
	n, f, s := g.between(1, 4), g.between(1, 3), g.between(1, 3)
	g.in(0, g.features(g.T("T"), n, f))
	g.kernel()
	g.attrInt("n_supports", int64(s))
	g.attrFloats("support_vectors", g.floatsIn(s*f, -2, 2, 0.25)...)
	g.attrFloats("coefficients", g.floatsIn(s, -1, 1, 0.125)...)
	g.attrFloats("rho", roundTo(g.uniform(-0.5, 0.5), 0.125))
	if g.chance(0.25) {
		g.attrInt("one_class", 1)
	}
	return nil
}

// treeNode is a node of a random tree: a branch comparing one feature
// with a threshold, or a leaf with weights for some targets or classes.
type treeNode struct {
	leaf          bool
	feature       int
	mode          int // 0 LEQ, 1 LT, 2 GTE, 3 GT, 4 EQ, 5 NEQ, 6 MEMBER
	value         float64
	members       []float64
	missingTrue   bool
	left, right   int // indices of the true and false children
	targets       []int
	weights       []float64
	hitrate       float64
	indexInLeaves int
}

// treeModes are the branch modes of versions 1 and 3 by mode number.
var treeModes = []string{"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_MEMBER"}

// randomTree draws a tree of depth at most depth over f features, its
// nodes in preorder; leaves carry weights for k of the targets.
func (g *gen) randomTree(depth, f, targets int, member bool) []treeNode {
	var nodes []treeNode
	var grow func(d int) int
	grow = func(d int) int {
		i := len(nodes)
		nodes = append(nodes, treeNode{hitrate: 1})
		if d == 0 || (d < depth && g.chance(0.3)) {
			nodes[i].leaf = true
			k := g.between(1, targets)
			for _, t := range g.r.Perm(targets)[:k] {
				nodes[i].targets = append(nodes[i].targets, t)
				nodes[i].weights = append(nodes[i].weights, roundTo(g.uniform(-2, 2), 0.125))
			}
			return i
		}
		nd := treeNode{feature: g.intn(f), value: roundTo(g.uniform(-2, 2), 0.5), missingTrue: g.chance(0.3), hitrate: 1}
		nd.mode = g.intn(6)
		if member && g.chance(0.2) {
			nd.mode = 6
			// whole numbers: ONNX Runtime takes no others
			nd.members = []float64{float64(g.between(-2, 2)), float64(g.between(-2, 2))}
		}
		nodes[i] = nd
		l := grow(d - 1)
		r := grow(d - 1)
		nodes[i].left, nodes[i].right = l, r
		return i
	}
	grow(depth)
	return nodes
}

// withNaN puts NaN into some elements of a float input (missing values).
func (g *gen) withNaN(x *onnx.Tensor) *onnx.Tensor {
	if x.Type.IsFloat() && g.coin() {
		for i := range x.Len() {
			if g.chance(0.15) {
				setFloat(x, i, math.NaN())
			}
		}
	}
	return x
}

// treeAttrs sets the attributes of versions 1 and 3 (with the
// *_as_tensor forms at times in version 3): the nodes_* ones and the
// leaves' (tree, node, target, weight) rows as leaf_treeids,
// leaf_nodeids, leaf_ids and leaf_weights, leaf being "class" or "target".
func (g *gen) treeAttrs(trees [][]treeNode, leaf string) {
	var treeIDs, nodeIDs, targetIDs []int64
	var weights []float64
	var tids, nids, fids, tru, fal, miss []int64
	var modes []string
	var values, hit []float64
	anyMissing := false
	for t, nodes := range trees {
		for i, nd := range nodes {
			tids = append(tids, int64(t))
			nids = append(nids, int64(i))
			hit = append(hit, nd.hitrate)
			if nd.leaf {
				modes = append(modes, "LEAF")
				fids, values, tru, fal, miss = append(fids, 0), append(values, 0), append(tru, 0), append(fal, 0), append(miss, 0)
				for j, target := range nd.targets {
					treeIDs = append(treeIDs, int64(t))
					nodeIDs = append(nodeIDs, int64(i))
					targetIDs = append(targetIDs, int64(target))
					weights = append(weights, nd.weights[j])
				}
				continue
			}
			modes = append(modes, treeModes[nd.mode])
			fids = append(fids, int64(nd.feature))
			values = append(values, nd.value)
			tru, fal = append(tru, int64(nd.left)), append(fal, int64(nd.right))
			m := int64(0)
			if nd.missingTrue {
				m, anyMissing = 1, true
			}
			miss = append(miss, m)
		}
	}
	g.attrInts("nodes_treeids", tids...)
	g.attrInts("nodes_nodeids", nids...)
	g.attrInts("nodes_featureids", fids...)
	g.attrStrings("nodes_modes", modes...)
	g.attrInts("nodes_truenodeids", tru...)
	g.attrInts("nodes_falsenodeids", fal...)
	g.weightsAttr("nodes_values", values)
	if anyMissing {
		g.attrInts("nodes_missing_value_tracks_true", miss...)
	}
	if g.chance(0.2) {
		g.attrFloats("nodes_hitrates", hit...)
	}
	g.attrInts(leaf+"_treeids", treeIDs...)
	g.attrInts(leaf+"_nodeids", nodeIDs...)
	g.attrInts(leaf+"_ids", targetIDs...)
	g.weightsAttr(leaf+"_weights", weights)
}

// weightsAttr sets the float attribute name to v, or at times in version
// 3 its name_as_tensor form.
func (g *gen) weightsAttr(name string, v []float64) {
	if g.since >= 3 && g.coin() {
		_ = g.attrTensor(name+"_as_tensor", tensorOf(g.thresholdType(), v, len(v)))
	} else {
		g.attrFloats(name, v...)
	}
}

// thresholdType is the element type of version 3's *_as_tensor
// attributes: double for a double input, as sklearn-onnx writes them,
// float otherwise.
func (g *gen) thresholdType() onnx.DataType {
	if g.inT(0) == onnx.Double {
		return onnx.Double
	}
	return onnx.Float
}

// forest draws 1 to 3 trees.
func (g *gen) forest(f, targets int, member bool) [][]treeNode {
	trees := make([][]treeNode, g.between(1, 3))
	for i := range trees {
		trees[i] = g.randomTree(g.between(1, 3), f, targets, member)
	}
	return trees
}

// genTreeClassifier: a forest voting for 2 to 4 classes, or a binary
// model that scores one class, with base values and each post-transform.
// https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsembleClassifier.html
func genTreeClassifier(g *gen) error {
	n, f := g.between(1, 4), g.between(1, 3)
	c := g.between(2, 4)
	scored := c
	if c == 2 && g.coin() {
		scored = 1
	}
	g.in(0, g.withNaN(g.features(g.T("T1"), n, f)))
	g.treeAttrs(g.forest(f, scored, false), "class")
	g.classLabels(c, "classlabels_int64s", "classlabels_strings")
	if g.coin() {
		g.attrFloats("base_values", g.floatsIn(scored, -1, 1, 0.125)...)
	}
	if g.coin() {
		g.attrString("post_transform", pick(g, postTransforms...))
	}
	return nil
}

// genTreeRegressor: https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsembleRegressor.html
func genTreeRegressor(g *gen) error {
	n, f, t := g.between(1, 4), g.between(1, 3), g.between(1, 3)
	g.in(0, g.withNaN(g.features(g.T("T"), n, f)))
	g.treeAttrs(g.forest(f, t, false), "target")
	g.attrInt("n_targets", int64(t))
	if g.coin() {
		g.attrString("aggregate_function", pick(g, "SUM", "AVERAGE", "MIN", "MAX"))
	}
	if g.coin() {
		g.attrFloats("base_values", g.floatsIn(t, -1, 1, 0.125)...)
	}
	return nil
}

// genTreeEnsemble: version 5's layout: branch nodes and leaves in
// separate arrays, set membership, modes and splits as tensors.
// https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsemble.html
func genTreeEnsemble(g *gen) error {
	dt := g.T("T")
	n, f, t := g.between(1, 4), g.between(1, 3), g.between(1, 3)
	g.in(0, g.withNaN(g.features(dt, n, f)))
	trees := g.forest(f, t, true)
	var roots, fids, tru, trueLeaf, fal, falseLeaf, miss, leafTargets []int64
	var modes []int64
	var splits, members, leafWeights []float64
	anyMember, anyMissing := false, false
	for _, nodes := range trees {
		if nodes[0].leaf {
			continue // a root must be a branch in this layout
		}
		// Number branches and leaves of this tree in the global arrays.
		branchAt, leafAt := map[int]int{}, map[int]int{}
		for i, nd := range nodes {
			if nd.leaf {
				leafAt[i] = len(leafTargets) + len(leafAt)
			} else {
				branchAt[i] = len(fids) + len(branchAt)
			}
		}
		roots = append(roots, int64(branchAt[0]))
		for i, nd := range nodes {
			if nd.leaf {
				continue
			}
			_ = i
			fids = append(fids, int64(nd.feature))
			modes = append(modes, int64(nd.mode))
			splits = append(splits, nd.value)
			if nd.mode == 6 {
				anyMember = true
				members = append(members, nd.members...)
				members = append(members, math.NaN())
			}
			m := int64(0)
			if nd.missingTrue {
				m, anyMissing = 1, true
			}
			miss = append(miss, m)
			for _, side := range []struct {
				child     int
				ids, leaf *[]int64
			}{{nd.left, &tru, &trueLeaf}, {nd.right, &fal, &falseLeaf}} {
				if nodes[side.child].leaf {
					*side.ids = append(*side.ids, int64(leafAt[side.child]))
					*side.leaf = append(*side.leaf, 1)
				} else {
					*side.ids = append(*side.ids, int64(branchAt[side.child]))
					*side.leaf = append(*side.leaf, 0)
				}
			}
		}
		// One leaf row per leaf: its first target.
		for i, nd := range nodes {
			if nd.leaf {
				_ = i
				leafTargets = append(leafTargets, int64(nd.targets[0]))
				leafWeights = append(leafWeights, nd.weights[0])
			}
		}
	}
	if len(roots) == 0 {
		return cannot("every tree drawn was a single leaf")
	}
	g.attrInts("tree_roots", roots...)
	g.attrInts("nodes_featureids", fids...)
	if err := g.attrTensor("nodes_modes", ints(onnx.Uint8, modes)); err != nil {
		return err
	}
	if err := g.attrTensor("nodes_splits", tensorOf(dt, splits, len(splits))); err != nil {
		return err
	}
	g.attrInts("nodes_truenodeids", tru...)
	g.attrInts("nodes_trueleafs", trueLeaf...)
	g.attrInts("nodes_falsenodeids", fal...)
	g.attrInts("nodes_falseleafs", falseLeaf...)
	g.attrInts("leaf_targetids", leafTargets...)
	if err := g.attrTensor("leaf_weights", tensorOf(dt, leafWeights, len(leafWeights))); err != nil {
		return err
	}
	g.attrInt("n_targets", int64(t))
	if anyMember {
		if err := g.attrTensor("membership_values", tensorOf(dt, members, len(members))); err != nil {
			return err
		}
	}
	if anyMissing {
		g.attrInts("nodes_missing_value_tracks_true", miss...)
	}
	if g.coin() {
		g.attrInt("aggregate_function", int64(g.intn(4)))
	}
	if g.coin() {
		g.attrInt("post_transform", int64(g.intn(4)))
	}
	return nil
}

// genZipMap: https://onnx.ai/onnx/operators/onnx_aionnxml_ZipMap.html
func genZipMap(g *gen) error {
	n, c := g.between(1, 3), g.between(1, 4)
	g.in(0, g.randIn(onnx.Float, 0, 1, n, c))
	if strings.Contains(g.typeStr["T"], "string") {
		labels := make([]string, c)
		for i := range labels {
			labels[i] = "class" + string(rune('A'+i))
		}
		g.attrStrings("classlabels_strings", labels...)
	} else {
		labels := make([]int64, c)
		for i := range labels {
			labels[i] = int64(i * 10)
		}
		g.attrInts("classlabels_int64s", labels...)
	}
	return nil
}
