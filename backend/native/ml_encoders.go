package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// The ai.onnx.ml encoders: OneHotEncoder, LabelEncoder (versions 1, 2 and
// 4) and CategoryMapper. Lookups are hash maps built once at compile time.

// https://onnx.ai/onnx/operators/onnx_aionnxml_OneHotEncoder.html
//
// Y has X's shape plus a last axis of one entry per category, 1 at the
// category of the element. Numeric inputs are truncated to integers and
// looked up in cats_int64s, strings in cats_strings. A value that is no
// category gives a row of zeros, or an error when zeros is 0. A category
// listed twice keeps its position but only the last one is ever set, as
// in ONNX Runtime.
type oneHotEncoder struct {
	ints  map[int64]int
	strs  map[string]int
	width int
	zeros bool
}

func newOneHotEncoder(op *ops.OneHotEncoder) (*oneHotEncoder, error) {
	k := &oneHotEncoder{zeros: op.Zeros != 0}
	switch {
	case len(op.CatsInt64s) > 0 && len(op.CatsStrings) > 0:
		return nil, fmt.Errorf("both cats_int64s and cats_strings are given; want one")
	case len(op.CatsInt64s) > 0:
		k.ints, k.width = make(map[int64]int, len(op.CatsInt64s)), len(op.CatsInt64s)
		for i, c := range op.CatsInt64s {
			k.ints[c] = i
		}
	case len(op.CatsStrings) > 0:
		k.strs, k.width = make(map[string]int, len(op.CatsStrings)), len(op.CatsStrings)
		for i, c := range op.CatsStrings {
			k.strs[c] = i
		}
	default:
		return nil, fmt.Errorf("neither cats_int64s nor cats_strings is given")
	}
	return k, nil
}

func (k *oneHotEncoder) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	n := x.Len()
	pos := make([]int, n) // category of each element, -1 for none
	switch d := x.Data.(type) {
	case []string:
		if k.strs == nil {
			return nil, fmt.Errorf("input is tensor(string) but the categories are cats_int64s")
		}
		for i, v := range d {
			if j, ok := k.strs[v]; ok {
				pos[i] = j
			} else {
				pos[i] = -1
			}
		}
	case []int64, []int32, []float32, []float64:
		if k.ints == nil {
			return nil, fmt.Errorf("input is tensor(%v) but the categories are cats_strings", x.Type)
		}
		v := make([]float64, n)
		var iv []int64
		if d, ok := x.Data.([]int64); ok {
			iv = d // exact, beyond float64's integers
		} else {
			float64sInto(v, x.Data)
		}
		for i := range n {
			c, ok := int64(0), true
			if iv != nil {
				c = iv[i]
			} else if t := math.Trunc(v[i]); t >= math.MinInt64 && t < math.MaxInt64 {
				c = int64(t)
			} else {
				ok = false // NaN or beyond int64: no category
			}
			j, found := k.ints[c]
			if !ok || !found {
				j = -1
			}
			pos[i] = j
		}
	default:
		return nil, fmt.Errorf("input is tensor(%v); want string, int64, int32, float or double", x.Type)
	}
	out := onnx.NewTensor(onnx.Float, append(append([]int(nil), x.Shape...), k.width)...)
	y := out.Float32s()
	for i, j := range pos {
		if j < 0 {
			if !k.zeros {
				return nil, fmt.Errorf("element %d (%s) is not one of the categories and zeros is 0", i, mlElementText(x, i))
			}
			continue
		}
		y[i*k.width+j] = 1
	}
	return out, nil
}

// mlElementText formats element i of a tensor for a message.
func mlElementText(t *onnx.Tensor, i int) string {
	switch d := t.Data.(type) {
	case []string:
		return fmt.Sprintf("%q", d[i])
	case []float32:
		return fmt.Sprint(d[i])
	case []float64:
		return fmt.Sprint(d[i])
	case []int64:
		return fmt.Sprint(d[i])
	case []int32:
		return fmt.Sprint(d[i])
	case []int16:
		return fmt.Sprint(d[i])
	}
	return "?"
}

// VisitOneHotEncoder compiles OneHotEncoder.
func (b *builder) VisitOneHotEncoder(op *ops.OneHotEncoder) error {
	k, err := newOneHotEncoder(op)
	if err != nil {
		return err
	}
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_LabelEncoder.html
//
// labelEncoder maps each element through keys → values, and elements that
// are no key to the default. The keys index a hash map of one kind
// (strings, integers, or floats by a bit key); values and the default are
// a 1-D tensor and a one-element tensor of the output type. A key given
// twice maps to its last value (version 4's rule; the reference does the
// same for version 2).
type labelEncoder struct {
	keyType onnx.DataType
	strs    map[string]int
	ints    map[int64]int
	floats  map[uint64]int
	// floatKey makes the map key of a float: version 2 compares bit
	// patterns, version 4 matches every NaN and treats -0 as 0.
	floatKey func(float64) uint64
	values   *onnx.Tensor
	def      *onnx.Tensor
}

func floatBitsKey(v float64) uint64 { return math.Float64bits(v) }

// canonicalFloatKey is the key of version 4's lookup: numbers by value,
// every NaN alike.
func canonicalFloatKey(v float64) uint64 {
	switch {
	case math.IsNaN(v):
		return 0x7ff8000000000001
	case v == 0:
		return 0
	}
	return math.Float64bits(v)
}

// setKeys indexes the keys (a 1-D tensor of the input's type).
func (k *labelEncoder) setKeys(keys *onnx.Tensor) error {
	k.keyType = keys.Type
	switch d := keys.Data.(type) {
	case []string:
		k.strs = make(map[string]int, len(d))
		for i, v := range d {
			k.strs[v] = i
		}
	case []int64, []int32, []int16:
		iv, _ := intsOf(keys)
		k.ints = make(map[int64]int, len(iv))
		for i, v := range iv {
			k.ints[v] = i
		}
	case []float32, []float64:
		v := make([]float64, keys.Len())
		float64sInto(v, keys.Data)
		k.floats = make(map[uint64]int, len(v))
		for i, x := range v {
			k.floats[k.floatKey(x)] = i
		}
	default:
		return fmt.Errorf("keys of type %v; want string, int64, int32, int16, float or double", keys.Type)
	}
	return nil
}

// lookup returns the index into values of every element of x, -1 for the
// default.
func (k *labelEncoder) lookup(x *onnx.Tensor) ([]int, error) {
	if x.Type != k.keyType {
		return nil, fmt.Errorf("input is tensor(%v) but the keys are %v", x.Type, k.keyType)
	}
	pos := make([]int, x.Len())
	find := func(i, j int, ok bool) {
		if !ok {
			j = -1
		}
		pos[i] = j
	}
	switch d := x.Data.(type) {
	case []string:
		for i, v := range d {
			j, ok := k.strs[v]
			find(i, j, ok)
		}
	case []int64, []int32, []int16:
		iv, _ := intsOf(x)
		for i, v := range iv {
			j, ok := k.ints[v]
			find(i, j, ok)
		}
	case []float32:
		for i, v := range d {
			j, ok := k.floats[k.floatKey(float64(v))]
			find(i, j, ok)
		}
	case []float64:
		for i, v := range d {
			j, ok := k.floats[k.floatKey(v)]
			find(i, j, ok)
		}
	}
	return pos, nil
}

func (k *labelEncoder) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	pos, err := k.lookup(x)
	if err != nil {
		return nil, err
	}
	return gatherOrDefault(k.values, k.def, pos, x.Shape)
}

// gatherOrDefault builds a tensor of shape whose element i is
// values[pos[i]], or def's only element where pos[i] < 0.
func gatherOrDefault(values, def *onnx.Tensor, pos []int, shape []int) (*onnx.Tensor, error) {
	out := &onnx.Tensor{Type: values.Type, Shape: append([]int(nil), shape...)}
	switch v := values.Data.(type) {
	case []string:
		out.Data = pickOrDefault(v, def.Data.([]string)[0], pos)
	case []int64:
		out.Data = pickOrDefault(v, def.Data.([]int64)[0], pos)
	case []int32:
		out.Data = pickOrDefault(v, def.Data.([]int32)[0], pos)
	case []int16:
		out.Data = pickOrDefault(v, def.Data.([]int16)[0], pos)
	case []float32:
		out.Data = pickOrDefault(v, def.Data.([]float32)[0], pos)
	case []float64:
		out.Data = pickOrDefault(v, def.Data.([]float64)[0], pos)
	default:
		return nil, fmt.Errorf("values of type %v", values.Type)
	}
	return out, nil
}

func pickOrDefault[T any](values []T, def T, pos []int) []T {
	out := make([]T, len(pos))
	for i, j := range pos {
		if j < 0 {
			out[i] = def
		} else {
			out[i] = values[j]
		}
	}
	return out
}

// VisitLabelEncoder compiles LabelEncoder versions 1, 2 and 4.
func (b *builder) VisitLabelEncoder(op *ops.LabelEncoder) error {
	var run func(*onnx.Tensor) (*onnx.Tensor, error)
	switch since := op.SinceVersion(); since {
	case 1:
		// Version 1 is a CategoryMapper whose strings pair with their
		// index in classes_strings.
		index := make([]int64, len(op.ClassesStrings))
		for i := range index {
			index[i] = int64(i)
		}
		run = newCategoryMapper(op.ClassesStrings, index, op.DefaultInt64, op.DefaultString).compute
	case 2, 4:
		k, err := newLabelEncoder(op, since)
		if err != nil {
			return err
		}
		run = k.compute
	default:
		return fmt.Errorf("LabelEncoder version %d", since)
	}
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), run))
}

// newLabelEncoder reads the keys, values and default of versions 2 and 4
// (the latter adding keys_tensor, values_tensor and default_tensor).
func newLabelEncoder(op *ops.LabelEncoder, since int) (*labelEncoder, error) {
	k := &labelEncoder{floatKey: floatBitsKey}
	if since >= 4 {
		k.floatKey = canonicalFloatKey
	}
	keys, err := labelEncoderList("keys", since, op.KeysTensor, op.KeysStrings, op.KeysInt64s, op.KeysFloats)
	if err != nil {
		return nil, err
	}
	values, err := labelEncoderList("values", since, op.ValuesTensor, op.ValuesStrings, op.ValuesInt64s, op.ValuesFloats)
	if err != nil {
		return nil, err
	}
	if keys.Len() != values.Len() {
		return nil, fmt.Errorf("%d keys but %d values", keys.Len(), values.Len())
	}
	if err := k.setKeys(keys); err != nil {
		return nil, err
	}
	switch values.Type {
	case onnx.String, onnx.Int64, onnx.Int32, onnx.Int16, onnx.Float, onnx.Double:
	default:
		return nil, fmt.Errorf("values of type %v; want string, int64, int32, int16, float or double", values.Type)
	}
	k.values = values
	k.def, err = labelEncoderDefault(op, since, values.Type)
	return k, err
}

// labelEncoderList returns the one keys_* or values_* attribute that is set, as a
// 1-D tensor. The _tensor attribute exists from version 4.
func labelEncoderList(what string, since int, t *onnx.Tensor, strs []string, ints []int64, floats []float32) (*onnx.Tensor, error) {
	var found []*onnx.Tensor
	if t != nil && since >= 4 {
		flat := *t
		flat.Shape = []int{t.Len()}
		found = append(found, &flat)
	}
	if strs != nil {
		found = append(found, onnx.FromSlice(strs, len(strs)))
	}
	if ints != nil {
		found = append(found, onnx.FromSlice(ints, len(ints)))
	}
	if floats != nil {
		found = append(found, onnx.FromSlice(floats, len(floats)))
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no %s_* attribute is given", what)
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("%d %s_* attributes are given; want one", len(found), what)
}

// labelEncoderDefault is the output for an element that is no key:
// default_tensor (version 4), else the default_* attribute of the value
// type, else -1 for the other integer types.
func labelEncoderDefault(op *ops.LabelEncoder, since int, vt onnx.DataType) (*onnx.Tensor, error) {
	if d := op.DefaultTensor; d != nil && since >= 4 {
		if d.Type != vt || d.Len() != 1 {
			return nil, fmt.Errorf("default_tensor is tensor(%v)%v; want one %v element", d.Type, d.Shape, vt)
		}
		return d, nil
	}
	switch vt {
	case onnx.String:
		return onnx.FromSlice([]string{op.DefaultString}), nil
	case onnx.Int64:
		return onnx.FromSlice([]int64{op.DefaultInt64}), nil
	case onnx.Int32:
		return onnx.FromSlice([]int32{-1}), nil
	case onnx.Int16:
		return onnx.FromSlice([]int16{-1}), nil
	case onnx.Float:
		return onnx.FromSlice([]float32{op.DefaultFloat}), nil
	case onnx.Double:
		return onnx.FromSlice([]float64{float64(op.DefaultFloat)}), nil
	}
	return nil, fmt.Errorf("values of type %v", vt)
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_CategoryMapper.html
//
// Strings map to the int64 paired with them in (cats_strings, cats_int64s)
// and int64s to their string; unknown ones to default_int64 or
// default_string. With a pair listed twice the last one counts, as in
// ONNX Runtime.
type categoryMapper struct {
	toInt  map[string]int64
	toStr  map[int64]string
	defInt int64
	defStr string
}

func (k *categoryMapper) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	switch d := x.Data.(type) {
	case []string:
		return onnx.FromSlice(lookupOrDefault(k.toInt, d, k.defInt), x.Shape...), nil
	case []int64:
		return onnx.FromSlice(lookupOrDefault(k.toStr, d, k.defStr), x.Shape...), nil
	}
	return nil, fmt.Errorf("input is tensor(%v); want string or int64", x.Type)
}

// lookupOrDefault maps each of keys through m, to def where m lacks it.
func lookupOrDefault[K comparable, V any](m map[K]V, keys []K, def V) []V {
	out := make([]V, len(keys))
	for i, key := range keys {
		v, ok := m[key]
		if !ok {
			v = def
		}
		out[i] = v
	}
	return out
}

// VisitCategoryMapper compiles CategoryMapper.
func (b *builder) VisitCategoryMapper(op *ops.CategoryMapper) error {
	if len(op.CatsInt64s) != len(op.CatsStrings) {
		return fmt.Errorf("cats_int64s has %d entries and cats_strings %d; want as many", len(op.CatsInt64s), len(op.CatsStrings))
	}
	k := newCategoryMapper(op.CatsStrings, op.CatsInt64s, op.DefaultInt64, op.DefaultString)
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// newCategoryMapper pairs strs[i] with ints[i] both ways (as many of
// each), the last pair counting where a string or an int64 repeats.
func newCategoryMapper(strs []string, ints []int64, defInt int64, defStr string) *categoryMapper {
	k := &categoryMapper{toInt: make(map[string]int64, len(strs)), toStr: make(map[int64]string, len(ints)),
		defInt: defInt, defStr: defStr}
	for i, s := range strs {
		k.toInt[s] = ints[i]
		k.toStr[ints[i]] = s
	}
	return k
}
