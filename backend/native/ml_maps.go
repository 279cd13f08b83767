package native

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// The ai.onnx.ml operators on maps: DictVectorizer and CastMap read an
// onnx.Map (1-D keys, one scalar tensor per key), ZipMap writes a sequence
// of them, one per row, in the form ONNX Runtime's maps convert to.

// mapInput returns the map an input holds.
func mapInput(r valueRef, slots []onnx.Value) (*onnx.Map, error) {
	m, ok := slots[r.slot].(*onnx.Map)
	if !ok || m == nil {
		return nil, fmt.Errorf("input %q is %s, not a map", r.name, onnx.DescribeValue(slots[r.slot]))
	}
	if m.Keys == nil || m.Values == nil {
		return nil, fmt.Errorf("input %q is a map without keys or values", r.name)
	}
	if len(m.Keys.Shape) > 1 || m.Keys.Len() != len(m.Values.Values) {
		return nil, fmt.Errorf("input %q is a map of %d keys (shape %v) and %d values", r.name, m.Keys.Len(), m.Keys.Shape, len(m.Values.Values))
	}
	return m, nil
}

// mapToTensorKernel is unaryTensorKernel for the operators that read a
// map and write a tensor.
func mapToTensorKernel(x, y valueRef, compute func(*onnx.Map) (*onnx.Tensor, error)) kernel {
	return func(slots []onnx.Value) error {
		m, err := mapInput(x, slots)
		if err != nil {
			return err
		}
		out, err := compute(m)
		if err != nil {
			return err
		}
		y.set(slots, out)
		return nil
	}
}

// mapIntKeys returns a map's integer keys as int64.
func mapIntKeys(m *onnx.Map) ([]int64, bool) {
	if m.Keys.Type == onnx.String {
		return nil, false
	}
	k, err := intsOf(m.Keys)
	return k, err == nil
}

// mapValues stacks a map's values, scalar tensors of one type, into a 1-D
// tensor. An empty map takes its value type from the sequence's element
// type.
func mapValues(m *onnx.Map) (*onnx.Tensor, error) {
	vs := m.Values.Values
	if len(vs) == 0 {
		if m.Values.Elem == nil || m.Values.Elem.Kind != onnx.TensorKind || m.Values.Elem.Elem == onnx.Undefined {
			return nil, fmt.Errorf("empty map whose value type is not known")
		}
		return onnx.NewTensor(m.Values.Elem.Elem, 0), nil
	}
	first, ok := vs[0].(*onnx.Tensor)
	if !ok || first == nil {
		return nil, fmt.Errorf("map values are %s, not tensors", onnx.DescribeValue(vs[0]))
	}
	out := onnx.NewTensor(first.Type, len(vs))
	for i, v := range vs {
		t, ok := v.(*onnx.Tensor)
		if !ok || t == nil || t.Type != first.Type || t.Len() != 1 {
			return nil, fmt.Errorf("map value %d is %s; want one %v element like the first", i, onnx.DescribeValue(v), first.Type)
		}
		if err := onnx.CopyElement(out, i, t, 0); err != nil {
			return nil, fmt.Errorf("map value %d: %w", i, err)
		}
	}
	return out, nil
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_DictVectorizer.html
//
// Y is [1, len(vocabulary)] of the map's value type: the value of each
// vocabulary entry, zero (or "") for entries the map lacks. Keys outside
// the vocabulary are ignored, as in ONNX Runtime and the reference.
type dictVectorizer struct {
	strVocab []string
	intVocab []int64
}

func (k *dictVectorizer) compute(m *onnx.Map) (*onnx.Tensor, error) {
	vals, err := mapValues(m)
	if err != nil {
		return nil, err
	}
	switch vals.Type {
	case onnx.Float, onnx.Double, onnx.Int64, onnx.String:
	default:
		return nil, fmt.Errorf("map values are %v; want float, double, int64 or string", vals.Type)
	}
	var pos []int // position in the map of each vocabulary entry, -1 if absent
	if k.strVocab != nil {
		keys, ok := m.Keys.Data.([]string)
		if !ok {
			return nil, fmt.Errorf("map keys are %v but the vocabulary is string_vocabulary", m.Keys.Type)
		}
		pos = keyPositions(keys, k.strVocab)
	} else {
		keys, ok := mapIntKeys(m)
		if !ok {
			return nil, fmt.Errorf("map keys are %v but the vocabulary is int64_vocabulary", m.Keys.Type)
		}
		pos = keyPositions(keys, k.intVocab)
	}
	zero := &onnx.Tensor{Type: vals.Type, Shape: []int{1}, Data: onnx.MakeSlice(vals.Type, 1)}
	return gatherOrDefault(vals, zero, pos, []int{1, len(pos)})
}

// keyPositions is, for each of want, its index among keys (the last one
// where a key repeats), -1 when absent.
func keyPositions[K comparable](keys, want []K) []int {
	at := make(map[K]int, len(keys))
	for i, key := range keys {
		at[key] = i
	}
	pos := make([]int, len(want))
	for j, w := range want {
		if i, ok := at[w]; ok {
			pos[j] = i
		} else {
			pos[j] = -1
		}
	}
	return pos
}

// VisitDictVectorizer compiles DictVectorizer.
func (b *builder) VisitDictVectorizer(op *ops.DictVectorizer) error {
	k := &dictVectorizer{}
	switch {
	case len(op.StringVocabulary) > 0 && len(op.Int64Vocabulary) > 0:
		return fmt.Errorf("both string_vocabulary and int64_vocabulary are given; want one")
	case len(op.StringVocabulary) > 0:
		k.strVocab = op.StringVocabulary
	case len(op.Int64Vocabulary) > 0:
		k.intVocab = op.Int64Vocabulary
	default:
		return fmt.Errorf("neither string_vocabulary nor int64_vocabulary is given")
	}
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	return b.emit(mapToTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_CastMap.html
//
// The map's values in ascending key order, cast to float, int64 or string,
// as a [1, C] tensor: C is the map's size (DENSE) or max_map (SPARSE, where
// key k lands at position k and absent positions are padded). Casts and
// padding follow ONNX Runtime, the operator's one implementation: strings
// parse their leading number as C's strtof/strtoll do, floats print as
// C's "%f", floats truncate to int64, and the string padding is "0.f".
// A SPARSE key outside [0, max_map) is an error, as the definition rules
// such keys out (ONNX Runtime drops those beyond max_map).
type castMap struct {
	to     onnx.DataType
	sparse bool
	maxMap int
}

// castMapStringPad is ONNX Runtime's padding for SPARSE maps cast to string.
const castMapStringPad = "0.f"

func (k *castMap) compute(m *onnx.Map) (*onnx.Tensor, error) {
	keys, ok := mapIntKeys(m)
	if !ok {
		return nil, fmt.Errorf("map keys are %v; want int64", m.Keys.Type)
	}
	vals, err := mapValues(m)
	if err != nil {
		return nil, err
	}
	if vals.Type != onnx.Float && vals.Type != onnx.String {
		return nil, fmt.Errorf("map values are %v; want float or string", vals.Type)
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return keys[order[a]] < keys[order[b]] })
	n := len(keys)
	if k.sparse {
		n = k.maxMap
	}
	out := onnx.NewTensor(k.to, 1, n)
	if k.sparse && k.to == onnx.String {
		s := out.Strings()
		for i := range s {
			s[i] = castMapStringPad
		}
	}
	for j, i := range order {
		at := j
		if k.sparse {
			if keys[i] < 0 || keys[i] >= int64(k.maxMap) {
				return nil, fmt.Errorf("map key %d is outside [0, max_map=%d) of the SPARSE form", keys[i], k.maxMap)
			}
			at = int(keys[i])
		}
		if err := castMapValue(out, at, vals, i); err != nil {
			return nil, fmt.Errorf("map key %d: %w", keys[i], err)
		}
	}
	return out, nil
}

// castMapValue writes element i of vals (float or string) into element at
// of out, converted to out's type.
func castMapValue(out *onnx.Tensor, at int, vals *onnx.Tensor, i int) error {
	switch src := vals.Data.(type) {
	case []float32:
		v := src[i]
		switch dst := out.Data.(type) {
		case []float32:
			dst[at] = v
		case []int64:
			t := math.Trunc(float64(v))
			if math.IsNaN(t) || t < math.MinInt64 || t >= math.MaxInt64 {
				return fmt.Errorf("value %v does not fit int64", v)
			}
			dst[at] = int64(t)
		case []string:
			dst[at] = formatCFloat(float64(v))
		}
	case []string:
		s := src[i]
		switch dst := out.Data.(type) {
		case []float32:
			v, err := parseLeadingFloat(s)
			if err != nil {
				return err
			}
			dst[at] = v
		case []int64:
			v, err := parseLeadingInt(s)
			if err != nil {
				return err
			}
			dst[at] = v
		case []string:
			dst[at] = s
		}
	}
	return nil
}

// formatCFloat formats v as C's printf("%f") does.
func formatCFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		if math.Signbit(v) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}

// cSpace is what C's isspace accepts: strtof and strtoll skip it.
const cSpace = " \t\n\v\f\r"

// parseLeadingFloat reads the longest leading number of s as a float, as
// strtof does after skipping white space; no number, or one out of float's
// range, is an error (std::stof throws).
func parseLeadingFloat(s string) (float32, error) {
	t := strings.TrimLeft(s, cSpace)
	for end := len(t); end > 0; end-- {
		v, err := strconv.ParseFloat(t[:end], 32)
		if err == nil {
			return float32(v), nil
		}
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("%q is out of float's range", s)
		}
	}
	return 0, fmt.Errorf("%q does not start with a number", s)
}

// parseLeadingInt reads the leading base-10 integer of s, as strtoll does
// after skipping white space; none, or one beyond int64, is an error.
func parseLeadingInt(s string) (int64, error) {
	t := strings.TrimLeft(s, cSpace)
	end := 0
	if end < len(t) && (t[end] == '+' || t[end] == '-') {
		end++
	}
	digits := end
	for end < len(t) && t[end] >= '0' && t[end] <= '9' {
		end++
	}
	if end == digits {
		return 0, fmt.Errorf("%q does not start with an integer", s)
	}
	v, err := strconv.ParseInt(t[:end], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is out of int64's range", s)
	}
	return v, nil
}

// VisitCastMap compiles CastMap.
func (b *builder) VisitCastMap(op *ops.CastMap) error {
	k := &castMap{}
	switch op.CastTo {
	case "TO_FLOAT":
		k.to = onnx.Float
	case "TO_INT64":
		k.to = onnx.Int64
	case "TO_STRING":
		k.to = onnx.String
	default:
		return fmt.Errorf("cast_to %q is not TO_FLOAT, TO_INT64 or TO_STRING", op.CastTo)
	}
	switch op.MapForm {
	case "DENSE":
	case "SPARSE":
		if op.MaxMap < 0 || op.MaxMap > onnx.MaxDenseElements {
			return fmt.Errorf("max_map %d is out of range for the SPARSE form", op.MaxMap)
		}
		k.sparse, k.maxMap = true, int(op.MaxMap)
	default:
		return fmt.Errorf("map_form %q is not DENSE or SPARSE", op.MapForm)
	}
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	return b.emit(mapToTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_ZipMap.html
//
// Each row of a [N, C] float tensor ([C]: one row) becomes a map from the
// C class labels to the row's values. A label listed twice appears once,
// with the later column's value, as in ONNX Runtime.
type zipMap struct {
	keys    *onnx.Tensor   // the distinct labels, in first-seen order
	columns []int          // the column each distinct label takes its value from
	labels  int            // how many labels were given (the columns X must have)
	mapType *onnx.TypeInfo // the sequence's element type
	valType *onnx.TypeInfo // a map value's type: a float scalar
}

func newZipMap(op *ops.ZipMap) (*zipMap, error) {
	k := &zipMap{valType: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float, HasShape: true}}
	keyType := onnx.String
	switch {
	case len(op.ClasslabelsStrings) > 0 && len(op.ClasslabelsInt64s) > 0:
		return nil, fmt.Errorf("both classlabels_strings and classlabels_int64s are given; want one")
	case len(op.ClasslabelsStrings) > 0:
		var keys []string
		keys, k.columns = distinctLabels(op.ClasslabelsStrings)
		k.keys, k.labels = onnx.FromSlice(keys, len(keys)), len(op.ClasslabelsStrings)
	case len(op.ClasslabelsInt64s) > 0:
		keyType = onnx.Int64
		var keys []int64
		keys, k.columns = distinctLabels(op.ClasslabelsInt64s)
		k.keys, k.labels = onnx.FromSlice(keys, len(keys)), len(op.ClasslabelsInt64s)
	default:
		return nil, fmt.Errorf("neither classlabels_strings nor classlabels_int64s is given")
	}
	k.mapType = &onnx.TypeInfo{Kind: onnx.MapKind, Elem: keyType, Inner: k.valType}
	return k, nil
}

// distinctLabels returns the labels without repeats, in first-seen order,
// and for each the column of its last occurrence, whose value it takes.
func distinctLabels[K comparable](labels []K) (keys []K, columns []int) {
	at := map[K]int{}
	for c, l := range labels {
		if i, ok := at[l]; ok {
			columns[i] = c
			continue
		}
		at[l] = len(keys)
		keys = append(keys, l)
		columns = append(columns, c)
	}
	return keys, columns
}

func (k *zipMap) compute(x *onnx.Tensor) (onnx.Value, error) {
	d, ok := x.Data.([]float32)
	if !ok {
		return nil, fmt.Errorf("input is tensor(%v); want float", x.Type)
	}
	rows, c, err := preprocRows(x.Shape, "input")
	if err != nil {
		return nil, err
	}
	if c != k.labels {
		return nil, fmt.Errorf("input has %d columns for %d class labels", c, k.labels)
	}
	seq := &onnx.Sequence{Elem: k.mapType, Values: make([]onnx.Value, rows)}
	for r := range rows {
		vals := make([]onnx.Value, len(k.columns))
		for i, col := range k.columns {
			vals[i] = onnx.Scalar(d[r*c+col])
		}
		seq.Values[r] = &onnx.Map{Keys: k.keys.Clone(), Values: &onnx.Sequence{Elem: k.valType, Values: vals}}
	}
	return seq, nil
}

// VisitZipMap compiles ZipMap.
func (b *builder) VisitZipMap(op *ops.ZipMap) error {
	k, err := newZipMap(op)
	if err != nil {
		return err
	}
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	z := b.output(op.Out.Z)
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		out, err := k.compute(t)
		if err != nil {
			return err
		}
		z.set(slots, out)
		return nil
	})
}
