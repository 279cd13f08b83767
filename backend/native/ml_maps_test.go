package native

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/onnx"
)

// mlValueRun builds a one-node model of the ai.onnx.ml operator opType at the
// ml opset given, feeds the values (tensors, maps, ...) and returns the
// node's single output.
func mlValueRun(t *testing.T, opset int64, opType string, attrs []*onnx.Attribute, inputs ...onnx.Value) (onnx.Value, error) {
	t.Helper()
	var names []string
	var vis []*onnx.ValueInfo
	feeds := map[string]onnx.Value{}
	for i, in := range inputs {
		n := "I" + string(rune('0'+i))
		names = append(names, n)
		vis = append(vis, &onnx.ValueInfo{Name: n})
		feeds[n] = in
	}
	node := &onnx.Node{OpType: opType, Domain: "ai.onnx.ml", Inputs: names, Outputs: []string{"O"}, Attributes: attrs, Opset: opset}
	since, ctor, ok := onnx.LookupOperator("ai.onnx.ml", opType, opset)
	if !ok {
		t.Fatalf("no operator ai.onnx.ml.%s at opset %d", opType, opset)
	}
	op, err := ctor(node, since)
	if err != nil {
		return nil, err
	}
	node.Op = op
	m := testModel([]*onnx.Node{node}, vis, []*onnx.ValueInfo{{Name: "O"}})
	m.Opsets = map[string]int64{"": 17, "ai.onnx.ml": opset}
	net, err := New(m, backend.Options{})
	if err != nil {
		return nil, err
	}
	res, err := net.Inference(feeds)
	if err != nil {
		return nil, err
	}
	return res["O"], nil
}

// mlTensorRun is mlValueRun for an operator whose output is a tensor.
func mlTensorRun(t *testing.T, opset int64, opType string, attrs []*onnx.Attribute, inputs ...onnx.Value) (*onnx.Tensor, error) {
	t.Helper()
	v, err := mlValueRun(t, opset, opType, attrs, inputs...)
	if err != nil {
		return nil, err
	}
	out, ok := v.(*onnx.Tensor)
	if !ok {
		t.Fatalf("%s returned %s, want a tensor", opType, onnx.DescribeValue(v))
	}
	return out, nil
}

// mlWantTensor requires got to equal want under the conformance rule (exact
// for integers and strings, NaN equal to NaN).
func mlWantTensor(t *testing.T, what string, got onnx.Value, err error, want *onnx.Tensor) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if d := metrics.Compare(got, want, metrics.Tolerance{RTol: 1e-6, ATol: 1e-7}); !d.Equal() {
		t.Fatalf("%s: %s\ngot  %v\nwant %v", what, d.Mismatch, got, want)
	}
}

// mlWantError requires an error whose text contains every fragment.
func mlWantError(t *testing.T, what string, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Fatalf("%s: error %q does not say %q", what, err, f)
		}
	}
}

func mlAttrTensor(name string, v *onnx.Tensor) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrTensor, Tensor: v}
}

// mlScalarSeq holds one scalar tensor per value: a map's values.
func mlScalarSeq[T onnx.Element](vals ...T) *onnx.Sequence {
	s := &onnx.Sequence{}
	for _, v := range vals {
		s.Values = append(s.Values, onnx.Scalar(v))
	}
	if len(vals) > 0 {
		s.Elem = &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: s.Values[0].(*onnx.Tensor).Type, HasShape: true}
	}
	return s
}

func mlStringMap[V onnx.Element](keys []string, vals ...V) *onnx.Map {
	return &onnx.Map{Keys: onnx.FromSlice(keys, len(keys)), Values: mlScalarSeq(vals...)}
}

func mlIntMap[V onnx.Element](keys []int64, vals ...V) *onnx.Map {
	return &onnx.Map{Keys: onnx.FromSlice(keys, len(keys)), Values: mlScalarSeq(vals...)}
}

func TestMLDictVectorizer(t *testing.T) {
	// The definition's example: vocabulary [a, c, b, z] and {a: 4, c: 8}.
	vocab := []*onnx.Attribute{stringsAttr("string_vocabulary", "a", "c", "b", "z")}
	got, err := mlValueRun(t, 1, "DictVectorizer", vocab, mlStringMap([]string{"c", "a"}, int64(8), 4))
	mlWantTensor(t, "string->int64", got, err, onnx.FromSlice([]int64{4, 8, 0, 0}, 1, 4))
	got, err = mlValueRun(t, 1, "DictVectorizer", vocab, mlStringMap([]string{"a", "c", "q"}, float32(4.5), -8, 99))
	mlWantTensor(t, "string->float, a key outside the vocabulary", got, err, onnx.FromSlice([]float32{4.5, -8, 0, 0}, 1, 4))
	got, err = mlValueRun(t, 1, "DictVectorizer", vocab, mlStringMap([]string{"z"}, 2.5))
	mlWantTensor(t, "string->double", got, err, onnx.FromSlice([]float64{0, 0, 0, 2.5}, 1, 4))

	ivocab := []*onnx.Attribute{intsAttr("int64_vocabulary", 3, 1, 3)}
	got, err = mlValueRun(t, 1, "DictVectorizer", ivocab, mlIntMap([]int64{1, 2}, "x", "y"))
	mlWantTensor(t, "int64->string, repeated vocabulary", got, err, onnx.FromSlice([]string{"", "x", ""}, 1, 3))
	got, err = mlValueRun(t, 1, "DictVectorizer", ivocab, mlIntMap([]int64{3, 1}, float32(0.5), 7))
	mlWantTensor(t, "int64->float", got, err, onnx.FromSlice([]float32{0.5, 7, 0.5}, 1, 3))
	got, err = mlValueRun(t, 1, "DictVectorizer", ivocab, mlIntMap([]int64{3}, 1.25))
	mlWantTensor(t, "int64->double", got, err, onnx.FromSlice([]float64{1.25, 0, 1.25}, 1, 3))

	_, err = mlValueRun(t, 1, "DictVectorizer", ivocab, mlStringMap([]string{"a"}, float32(1)))
	mlWantError(t, "string keys with an int64 vocabulary", err, "int64_vocabulary")
	_, err = mlValueRun(t, 1, "DictVectorizer", vocab, onnx.FromSlice([]float32{1}, 1))
	mlWantError(t, "a tensor input", err, "not a map")
	_, err = mlValueRun(t, 1, "DictVectorizer", nil, mlStringMap([]string{"a"}, float32(1)))
	mlWantError(t, "no vocabulary", err, "neither string_vocabulary nor int64_vocabulary")
}

func TestMLCastMap(t *testing.T) {
	fm := mlIntMap([]int64{3, 1, 0}, float32(1.5), 2.25, -1)
	cast := func(to, form string, maxMap int64) []*onnx.Attribute {
		return []*onnx.Attribute{stringAttr("cast_to", to), stringAttr("map_form", form), intAttr("max_map", maxMap)}
	}
	got, err := mlValueRun(t, 1, "CastMap", nil, fm)
	mlWantTensor(t, "defaults: TO_FLOAT, DENSE, in key order", got, err, onnx.FromSlice([]float32{-1, 2.25, 1.5}, 1, 3))
	got, err = mlValueRun(t, 1, "CastMap", cast("TO_INT64", "DENSE", 1), fm)
	mlWantTensor(t, "float->int64 truncates", got, err, onnx.FromSlice([]int64{-1, 2, 1}, 1, 3))
	got, err = mlValueRun(t, 1, "CastMap", cast("TO_STRING", "DENSE", 1), fm)
	mlWantTensor(t, "float->string as %f", got, err, onnx.FromSlice([]string{"-1.000000", "2.250000", "1.500000"}, 1, 3))
	got, err = mlValueRun(t, 1, "CastMap", cast("TO_FLOAT", "SPARSE", 5), fm)
	mlWantTensor(t, "SPARSE pads with 0", got, err, onnx.FromSlice([]float32{-1, 2.25, 0, 1.5, 0}, 1, 5))

	sm := mlIntMap([]int64{2, 0}, "7.5x", " 3")
	got, err = mlValueRun(t, 1, "CastMap", cast("TO_FLOAT", "SPARSE", 3), sm)
	mlWantTensor(t, "string->float reads the leading number", got, err, onnx.FromSlice([]float32{3, 0, 7.5}, 1, 3))
	got, err = mlValueRun(t, 1, "CastMap", cast("TO_INT64", "DENSE", 1), sm)
	mlWantTensor(t, "string->int64 reads the leading integer", got, err, onnx.FromSlice([]int64{3, 7}, 1, 2))
	got, err = mlValueRun(t, 1, "CastMap", cast("TO_STRING", "SPARSE", 4), sm)
	mlWantTensor(t, "string->string, SPARSE", got, err, onnx.FromSlice([]string{" 3", "0.f", "7.5x", "0.f"}, 1, 4))

	_, err = mlValueRun(t, 1, "CastMap", cast("TO_FLOAT", "SPARSE", 3), fm)
	mlWantError(t, "a key beyond max_map", err, "map key 3", "max_map=3")
	_, err = mlValueRun(t, 1, "CastMap", cast("TO_FLOAT", "SPARSE", 3), mlIntMap([]int64{-1}, float32(1)))
	mlWantError(t, "a negative key", err, "map key -1")
	_, err = mlValueRun(t, 1, "CastMap", cast("TO_INT64", "DENSE", 1), mlIntMap([]int64{0}, "x1"))
	mlWantError(t, "no number", err, `"x1"`)
	_, err = mlValueRun(t, 1, "CastMap", cast("TO_INT64", "DENSE", 1), mlIntMap([]int64{0}, float32(math.NaN())))
	mlWantError(t, "NaN to int64", err, "does not fit int64")
	_, err = mlValueRun(t, 1, "CastMap", cast("TO_DOUBLE", "DENSE", 1), fm)
	mlWantError(t, "an unknown cast_to", err, "TO_DOUBLE")
	_, err = mlValueRun(t, 1, "CastMap", cast("TO_FLOAT", "PACKED", 1), fm)
	mlWantError(t, "an unknown map_form", err, "PACKED")
	_, err = mlValueRun(t, 1, "CastMap", nil, mlStringMap([]string{"a"}, float32(1)))
	mlWantError(t, "string keys", err, "want int64")
}

func TestMLCastMapTextConversions(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float32
		ok   bool
	}{
		{"1.5", 1.5, true}, {"  -2e1abc", -20, true}, {"1e", 1, true}, {"inf", float32(math.Inf(1)), true},
		{"abc", 0, false}, {"", 0, false}, {"1e999", 0, false},
	} {
		got, err := parseLeadingFloat(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("parseLeadingFloat(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"42", 42, true}, {"\t-7.9", -7, true}, {"+3x", 3, true}, {"-", 0, false}, {"99999999999999999999", 0, false},
	} {
		got, err := parseLeadingInt(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("parseLeadingInt(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
	for v, want := range map[float64]string{0.1: "0.100000", -3: "-3.000000", math.Inf(-1): "-inf", math.NaN(): "nan", 1e7: "10000000.000000"} {
		if got := formatCFloat(v); got != want {
			t.Errorf("formatCFloat(%v) = %q, want %q", v, got, want)
		}
	}
}

// zipMapWant builds the expected sequence of maps: one per row, the labels
// to the row's values.
func zipMapWant[K onnx.Element](labels []K, rows ...[]float32) *onnx.Sequence {
	s := &onnx.Sequence{}
	for _, r := range rows {
		s.Values = append(s.Values, &onnx.Map{Keys: onnx.FromSlice(labels, len(labels)), Values: mlScalarSeq(r...)})
	}
	return s
}

func TestMLZipMap(t *testing.T) {
	x := onnx.FromSlice([]float32{0.25, 0.75, 0.5, 0.5, 1, 0}, 3, 2)
	got, err := mlValueRun(t, 1, "ZipMap", []*onnx.Attribute{intsAttr("classlabels_int64s", 10, 20)}, x)
	mlWantValue(t, "int64 labels", got, err, zipMapWant([]int64{10, 20}, []float32{0.25, 0.75}, []float32{0.5, 0.5}, []float32{1, 0}))
	got, err = mlValueRun(t, 1, "ZipMap", []*onnx.Attribute{stringsAttr("classlabels_strings", "no", "yes")}, x)
	mlWantValue(t, "string labels", got, err, zipMapWant([]string{"no", "yes"}, []float32{0.25, 0.75}, []float32{0.5, 0.5}, []float32{1, 0}))
	got, err = mlValueRun(t, 1, "ZipMap", []*onnx.Attribute{stringsAttr("classlabels_strings", "a", "b", "c")}, onnx.FromSlice([]float32{1, 2, 3}, 3))
	mlWantValue(t, "a [C] input is one row", got, err, zipMapWant([]string{"a", "b", "c"}, []float32{1, 2, 3}))
	got, err = mlValueRun(t, 1, "ZipMap", []*onnx.Attribute{intsAttr("classlabels_int64s", 1, 2, 1)}, onnx.FromSlice([]float32{5, 6, 7}, 1, 3))
	mlWantValue(t, "a repeated label takes the later column", got, err, zipMapWant([]int64{1, 2}, []float32{7, 6}))

	// The sequence and its maps carry ONNX's types, so they encode as a
	// SequenceProto of MapProtos.
	seq := got.(*onnx.Sequence)
	if seq.Elem == nil || seq.Elem.String() != "map(int64, tensor(float))" {
		t.Errorf("sequence element type %v, want map(int64, tensor(float))", seq.Elem)
	}

	_, err = mlValueRun(t, 1, "ZipMap", []*onnx.Attribute{intsAttr("classlabels_int64s", 10, 20, 30)}, x)
	mlWantError(t, "too few columns", err, "2 columns for 3 class labels")
	_, err = mlValueRun(t, 1, "ZipMap", []*onnx.Attribute{intsAttr("classlabels_int64s", 10)}, onnx.FromSlice([]float32{1}, 1, 1, 1))
	mlWantError(t, "a 3-D input", err, "[N, F] or [F]")
	_, err = mlValueRun(t, 1, "ZipMap", []*onnx.Attribute{intsAttr("classlabels_int64s", 10)}, onnx.FromSlice([]float64{1}, 1, 1))
	mlWantError(t, "a double input", err, "want float")
	_, err = mlValueRun(t, 1, "ZipMap", []*onnx.Attribute{intsAttr("classlabels_int64s", 1), stringsAttr("classlabels_strings", "a")}, x)
	mlWantError(t, "both label lists", err, "both classlabels_strings and classlabels_int64s")
	_, err = mlValueRun(t, 1, "ZipMap", nil, x)
	mlWantError(t, "no labels", err, "neither classlabels_strings nor classlabels_int64s")
}

// mlWantValue is mlWantTensor for any value (here sequences of maps).
func mlWantValue(t *testing.T, what string, got onnx.Value, err error, want onnx.Value) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if d := metrics.Compare(got, want, metrics.ONNXTolerance); !d.Equal() {
		t.Fatalf("%s: %s", what, d.Mismatch)
	}
}

// A ZipMap output survives the trip through ONNX's value format (what
// conformance reads expected outputs from) and compares equal to itself
// there, whatever the key order, under the conformance rule; a changed
// value or key does not.
func TestMLZipMapRoundTripsThroughTheComparison(t *testing.T) {
	x := onnx.FromSlice([]float32{0.1, 0.2, 0.7, 0.6, 0.3, 0.1}, 2, 3)
	for _, attr := range []*onnx.Attribute{
		intsAttr("classlabels_int64s", 7, 3, 5),
		stringsAttr("classlabels_strings", "cat", "dog", "eel"),
	} {
		got, err := mlValueRun(t, 1, "ZipMap", []*onnx.Attribute{attr}, x)
		if err != nil {
			t.Fatal(err)
		}
		data, err := onnx.EncodeValue("Z", got)
		if err != nil {
			t.Fatalf("%s: encoding: %v", attr.Name, err)
		}
		seq := got.(*onnx.Sequence)
		_, back, err := onnx.DecodeValue(data, &onnx.TypeInfo{Kind: onnx.SequenceKind, Inner: seq.Elem}, "")
		if err != nil {
			t.Fatalf("%s: decoding: %v", attr.Name, err)
		}
		if d := metrics.Compare(got, back, metrics.ONNXTolerance); !d.Equal() {
			t.Fatalf("%s: the decoded output differs: %s", attr.Name, d.Mismatch)
		}
		// The same maps with their keys in reverse order, values split
		// into scalars as the onnxruntime backend converts ONNX Runtime's
		// maps, are equal too.
		rev := &onnx.Sequence{}
		for _, v := range seq.Values {
			m := v.(*onnx.Map)
			keys := m.Keys.Clone()
			switch k := keys.Data.(type) {
			case []int64:
				slices.Reverse(k)
			case []string:
				slices.Reverse(k)
			}
			vals := slices.Clone(m.Values.Values)
			slices.Reverse(vals)
			rev.Values = append(rev.Values, &onnx.Map{Keys: keys, Values: &onnx.Sequence{Values: vals}})
		}
		if d := metrics.Compare(back, rev, metrics.ONNXTolerance); !d.Equal() {
			t.Fatalf("%s: reordered keys compare unequal: %s", attr.Name, d.Mismatch)
		}
		// A value off by 1% is a mismatch, and so is a missing key.
		m0 := rev.Values[0].(*onnx.Map)
		m0.Values.Values[0] = onnx.Scalar(m0.Values.Values[0].(*onnx.Tensor).Float32s()[0] * 1.01)
		if d := metrics.Compare(back, rev, metrics.ONNXTolerance); d.Equal() || !strings.Contains(d.Mismatch, "map key") {
			t.Fatalf("%s: a changed value compares %q", attr.Name, d.Mismatch)
		}
		short := &onnx.Sequence{Values: slices.Clone(seq.Values)}
		m1 := short.Values[1].(*onnx.Map)
		first := &onnx.Tensor{Type: m1.Keys.Type, Shape: []int{1}, Data: onnx.MakeSlice(m1.Keys.Type, 1)}
		onnx.CopySlice(first.Data, m1.Keys.Data)
		short.Values[1] = &onnx.Map{Keys: first, Values: &onnx.Sequence{Values: m1.Values.Values[:1]}}
		if d := metrics.Compare(back, short, metrics.ONNXTolerance); d.Equal() || !strings.Contains(d.Mismatch, "map of 3 keys, want 1") {
			t.Fatalf("%s: a map with fewer keys compares %q", attr.Name, d.Mismatch)
		}
	}
}
