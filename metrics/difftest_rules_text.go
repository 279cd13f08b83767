package metrics

import (
	"github.com/deep500/deep500-go/onnx"
)

// Rules of difftest's generator for the string operators and
// TfIdfVectorizer.

func init() {
	broadcastOps["StringConcat"] = true
	addRules(map[string]opRule{
		"StringNormalizer": {gen: genStringNormalizer},
		"StringSplit":      {gen: genStringSplit},
		"RegexFullMatch":   {gen: genRegexFullMatch},
		"TfIdfVectorizer":  {gen: genTfIdf},
	})
}

func stringTensor(vals []string, shape ...int) *onnx.Tensor {
	return &onnx.Tensor{Type: onnx.String, Shape: shape, Data: vals}
}

// words draws n strings from the vocabulary.
func (g *gen) words(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = pick(g, vocabulary...)
	}
	return out
}

// genStringNormalizer: [C] or [1, C], stop words from the vocabulary,
// each case change. https://onnx.ai/onnx/operators/onnx__StringNormalizer.html
func genStringNormalizer(g *gen) error {
	c := g.between(1, 5)
	if g.coin() {
		g.in(0, stringTensor(g.words(c), c))
	} else {
		g.in(0, stringTensor(g.words(c), 1, c))
	}
	if g.coin() {
		g.attrStrings("stopwords", g.words(g.between(1, 3))...)
	}
	if g.coin() {
		g.attrString("case_change_action", pick(g, "NONE", "LOWER", "UPPER"))
	}
	g.maybeInt("is_case_sensitive", int64(g.intn(2)))
	return nil
}

// splitSamples have runs of the delimiters tried, leading and trailing
// ones, and none.
var splitSamples = []string{"a b c", "  lead and trail  ", "x,y,,z", "one", "", "a  b", "k,v", "tab\tsep", "1, 2, 3"}

// genStringSplit: https://onnx.ai/onnx/operators/onnx__StringSplit.html
func genStringSplit(g *gen) error {
	shape := g.dims(g.between(0, 2), 1, 3)
	vals := make([]string, onnx.NumElements(shape))
	for i := range vals {
		vals[i] = pick(g, splitSamples...)
	}
	g.in(0, stringTensor(vals, shape...))
	if g.coin() {
		g.attrString("delimiter", pick(g, " ", ",", ", "))
	}
	if g.coin() {
		g.attrInt("maxsplit", int64(g.between(1, 2)))
	}
	return nil
}

// regexPatterns are RE2 patterns with classes, repetition, alternation
// and anchors that a full match must respect.
var regexPatterns = []string{`[a-z]+`, `a.*`, `\d+`, `[A-Z][a-z]*`, `(foo|bar) ?\w*`, `.*o.*`, `\w+ \w+`, `x?y?`}

// genRegexFullMatch: https://onnx.ai/onnx/operators/onnx__RegexFullMatch.html
func genRegexFullMatch(g *gen) error {
	shape := g.dims(g.between(0, 2), 1, 4)
	g.in(0, stringTensor(g.words(onnx.NumElements(shape)), shape...))
	g.attrString("pattern", pick(g, regexPatterns...))
	return nil
}

// genTfIdf: a pool of unigrams and bigrams over a small alphabet that the
// input draws from, each mode, skips, weights.
// https://onnx.ai/onnx/operators/onnx__TfIdfVectorizer.html
func genTfIdf(g *gen) error {
	dt := g.T("T")
	alphabet := []string{"a", "b", "c", "d", "e"}
	uni := g.r.Perm(len(alphabet))[:g.between(1, 4)]
	bigrams := g.between(0, 3)
	maxGram := 1
	if bigrams > 0 {
		maxGram = 2
	}
	var poolInts []int64
	var poolStrings []string
	add := func(k int) {
		poolInts = append(poolInts, int64(k+1))
		poolStrings = append(poolStrings, alphabet[k])
	}
	for _, k := range uni {
		add(k)
	}
	seen := map[[2]int]bool{}
	for len(seen) < bigrams {
		p := [2]int{g.intn(len(alphabet)), g.intn(len(alphabet))}
		if !seen[p] {
			seen[p] = true
			add(p[0])
			add(p[1])
		}
	}
	n := len(uni) + bigrams
	indexes := toInt64s(g.r.Perm(n))
	g.attrInts("ngram_counts", 0, int64(len(uni)))
	g.attrInts("ngram_indexes", indexes...)
	if dt == onnx.String {
		g.attrStrings("pool_strings", poolStrings...)
	} else {
		g.attrInts("pool_int64s", poolInts...)
	}
	mode := pick(g, "TF", "IDF", "TFIDF")
	g.attrString("mode", mode)
	if mode != "TF" || g.coin() {
		w := make([]float64, n)
		for i := range w {
			w[i] = roundTo(g.uniform(0.5, 2), 0.25)
		}
		g.attrFloats("weights", w...)
	}
	g.attrInt("min_gram_length", int64(g.between(1, maxGram)))
	g.attrInt("max_gram_length", int64(maxGram))
	g.attrInt("max_skip_count", int64(g.between(0, 2)))
	shape := pick(g, []int{g.between(1, 8)}, []int{g.between(1, 3), g.between(1, 6)})
	m := onnx.NumElements(shape)
	if dt == onnx.String {
		vals := make([]string, m)
		for i := range vals {
			vals[i] = pick(g, alphabet...)
		}
		g.in(0, stringTensor(vals, shape...))
		return nil
	}
	vals := make([]int64, m)
	for i := range vals {
		vals[i] = int64(g.between(1, len(alphabet)))
	}
	g.in(0, ints(dt, vals, shape...))
	return nil
}
