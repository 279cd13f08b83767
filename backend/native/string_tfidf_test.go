package native

import (
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// weights[k] scales the k-th n-gram of the pool, whose output position is
// ngram_indexes[k] (https://onnx.ai/onnx/operators/onnx__TfIdfVectorizer.html:
// "the i-th element in weights is the weight of the i-th n-gram in pool").
// The cases are ones difftest drew; the expected values are worked out by
// hand from that definition (and are what ONNX Runtime returns).
func TestTfIdfVectorizerWeightsFollowThePoolOrder(t *testing.T) {
	attrs := func(mode string, minN, maxN, skip int64, counts, indexes []int64, weights []float32) []*onnx.Attribute {
		return []*onnx.Attribute{
			stringAttr("mode", mode), intAttr("min_gram_length", minN), intAttr("max_gram_length", maxN),
			intAttr("max_skip_count", skip), intsAttr("ngram_counts", counts...), intsAttr("ngram_indexes", indexes...),
			floatsAttr("weights", weights...),
		}
	}
	cases := []struct {
		name  string
		attrs []*onnx.Attribute
		x     *onnx.Tensor
		want  []float32
	}{
		{
			// Unigrams 3 1 2 4 (n-grams 0-3) at outputs 1 3 0 4, each seen once.
			name: "int64 TFIDF",
			attrs: append(attrs("TFIDF", 1, 2, 1, []int64{0, 4}, []int64{1, 3, 0, 4, 2, 6, 5},
				[]float32{1.25, 1.5, 1, 1.75, 1, 0.5, 0.75}), intsAttr("pool_int64s", 3, 1, 2, 4, 4, 1, 4, 4, 5, 1)),
			x:    onnx.FromSlice([]int64{1, 3, 4, 2}, 4),
			want: []float32{1, 1.25, 0, 1.5, 1.75, 0, 0},
		},
		{
			// Row 0: 1 twice (×0.75 at output 1), 5 (×1.5 at 0), 3 (×1.75 at
			// 4), 4 (×1 at 2), bigram "5 1" at skips 0 and 1 (2 × 1.5 at 3).
			name: "int32 TFIDF batch",
			attrs: append(attrs("TFIDF", 1, 2, 1, []int64{0, 4}, []int64{1, 0, 4, 2, 3},
				[]float32{0.75, 1.5, 1.75, 1, 1.5}), intsAttr("pool_int64s", 1, 5, 3, 4, 5, 1)),
			x:    onnx.FromSlice([]int32{5, 1, 1, 4, 3, 5, 2, 1, 2, 1}, 2, 5),
			want: []float32{1.5, 1.5, 1, 3, 1.75, 1.5, 1.5, 0, 1.5, 0},
		},
		{
			// "b" is n-gram 0 (output 2, weight 0.5), "a" n-gram 1 (output 0, 1.25).
			name: "string TFIDF",
			attrs: append(attrs("TFIDF", 1, 1, 0, []int64{0, 3}, []int64{2, 0, 1}, []float32{0.5, 1.25, 1.5}),
				stringsAttr("pool_strings", "b", "a", "e")),
			x:    onnx.FromSlice([]string{"b", "c", "a", "c", "d", "c"}, 6),
			want: []float32{1.25, 0, 0.5},
		},
		{
			// Only the unigram "c" (n-gram 0, output 2, weight 1) occurs.
			name: "string IDF",
			attrs: append(attrs("IDF", 1, 2, 2, []int64{0, 1}, []int64{2, 0, 1}, []float32{1, 0.75, 1.25}),
				stringsAttr("pool_strings", "c", "a", "d", "b", "a")),
			x:    onnx.FromSlice([]string{"b", "c", "e"}, 3),
			want: []float32{0, 0, 1},
		},
		{
			// IDF truncates the count: "a" twice gives its weight once.
			name: "string IDF repeated",
			attrs: append(attrs("IDF", 1, 1, 0, []int64{0, 2}, []int64{1, 0}, []float32{3, 5}),
				stringsAttr("pool_strings", "a", "b")),
			x:    onnx.FromSlice([]string{"a", "a", "c"}, 3),
			want: []float32{0, 3},
		},
	}
	for _, c := range cases {
		out, err := runNode1(t, 9, "TfIdfVectorizer", c.attrs, c.x)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(out.Float32s(), c.want) {
			t.Errorf("%s: got %v, want %v", c.name, out.Float32s(), c.want)
		}
	}
	// Fewer weights than pool n-grams is an error.
	bad := append(attrs("TFIDF", 1, 1, 0, []int64{0}, []int64{0, 1}, []float32{1}), stringsAttr("pool_strings", "a", "b"))
	if _, err := runNode1(t, 9, "TfIdfVectorizer", bad, onnx.FromSlice([]string{"a"}, 1)); err == nil {
		t.Error("1 weight for 2 n-grams: expected an error")
	}
}
