package metrics

import (
	"fmt"
	"math"
	"math/cmplx"
	"strconv"

	"github.com/deep500/deep500-go/onnx"
)

// Tolerance bounds how far a floating-point result may be from the
// expected one: |got-want| <= ATol + RTol*|want|, as numpy's
// assert_allclose.
type Tolerance struct {
	RTol, ATol float64
}

// ONNXTolerance is what ONNX's backend test runner uses for its node and
// model tests.
var ONNXTolerance = Tolerance{RTol: 1e-3, ATol: 1e-7}

// CrossBackendTolerance is how close two backends' outputs must be to
// count as the same: looser than ONNXTolerance's atol, because two correct
// float32 backends sum in different orders and near-zero outputs then
// differ by more than 1e-7. Comparisons of whole networks' outputs scale
// its absolute part to the output's magnitude (ScaledTo).
var CrossBackendTolerance = Tolerance{RTol: 1e-3, ATol: 1e-5}

// ScaledTo returns t with its absolute tolerance multiplied by the largest
// finite |element| of want, a float32 or float64 tensor, when that exceeds
// 1 (t itself otherwise). Two correct float32 backends that sum in
// different orders leave on every element an error in proportion to the
// magnitude of what was summed, not of the element: a logit near 0 among
// logits in the hundreds (mnasnet0_5 under InitHe) differs by 1e-4 or
// more, which an absolute 1e-5 rejects although it is 1e-6 of the
// output's scale.
func (t Tolerance) ScaledTo(want onnx.Value) Tolerance {
	w, ok := want.(*onnx.Tensor)
	if !ok {
		return t
	}
	scale := 1.0
	note := func(v float64) {
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			scale = math.Max(scale, math.Abs(v))
		}
	}
	switch d := w.Data.(type) {
	case []float32:
		for _, v := range d {
			note(float64(v))
		}
	case []float64:
		for _, v := range d {
			note(v)
		}
	}
	t.ATol *= scale
	return t
}

// Diff is the outcome of comparing a result with the expected value.
type Diff struct {
	// Mismatch says what differs; empty when the values agree.
	Mismatch string
	// MaxAbs and MaxRel are the largest absolute and relative errors over
	// floating-point and complex elements whose values are finite on both
	// sides (relative errors only where the expected value is not zero).
	// Both are 0 when there were no such elements.
	MaxAbs, MaxRel float64
}

// Equal reports whether the values agreed.
func (d Diff) Equal() bool { return d.Mismatch == "" }

// Compare compares got with want as ONNX's backend test runner does:
// data types and shapes must agree; floating-point elements (reduced
// precision ones converted to float64) must satisfy tol, with NaN equal to
// NaN and infinities equal only to themselves; integers, booleans and
// strings must be equal. Sequences are compared element by element,
// optionals by presence and then value, maps by their keys and the value of
// each key, sparse tensors as the dense tensors they stand for.
func Compare(got, want onnx.Value, tol Tolerance) Diff {
	c := comparer{tol: tol}
	msg := c.value(got, want)
	return Diff{Mismatch: msg, MaxAbs: c.maxAbs, MaxRel: c.maxRel}
}

type comparer struct {
	tol            Tolerance
	maxAbs, maxRel float64
}

// value returns "" when got matches want, or what differs.
func (c *comparer) value(got, want onnx.Value) string {
	// ONNX's Python runner represents an optional as the value or None, so
	// a backend that returns the bare value (or nothing) for an optional
	// output is compared with what the optional holds.
	if w, ok := want.(*onnx.Optional); ok {
		if g, ok := got.(*onnx.Optional); ok {
			got = g.Value
		}
		switch {
		case w.Value == nil && isNone(got):
			return ""
		case w.Value == nil:
			return fmt.Sprintf("got %s, want an empty optional", onnx.DescribeValue(got))
		case isNone(got):
			return fmt.Sprintf("got an empty optional, want %s", onnx.DescribeValue(w.Value))
		}
		return c.value(got, w.Value)
	}
	if g, ok := got.(*onnx.Optional); ok {
		if g.Value == nil {
			return fmt.Sprintf("got an empty optional, want %s", onnx.DescribeValue(want))
		}
		got = g.Value
	}
	if isNone(got) {
		return fmt.Sprintf("got no value, want %s", onnx.DescribeValue(want))
	}

	switch w := want.(type) {
	case *onnx.Tensor:
		g, ok := got.(*onnx.Tensor)
		if !ok {
			if s, isSparse := got.(*onnx.SparseTensor); isSparse {
				d, err := s.Dense()
				if err != nil {
					return "malformed sparse result: " + err.Error()
				}
				g, ok = d, true
			}
		}
		if !ok {
			return fmt.Sprintf("got %s, want %s", onnx.DescribeValue(got), onnx.DescribeValue(want))
		}
		return c.tensor(g, w)
	case *onnx.SparseTensor:
		wd, err := w.Dense()
		if err != nil {
			return "malformed expected sparse tensor: " + err.Error()
		}
		g, ok := got.(*onnx.SparseTensor)
		if !ok {
			if t, isDense := got.(*onnx.Tensor); isDense {
				return c.tensor(t, wd)
			}
			return fmt.Sprintf("got %s, want %s", onnx.DescribeValue(got), onnx.DescribeValue(want))
		}
		gd, err := g.Dense()
		if err != nil {
			return "malformed sparse result: " + err.Error()
		}
		return c.tensor(gd, wd)
	case *onnx.Sequence:
		g, ok := got.(*onnx.Sequence)
		if !ok {
			return fmt.Sprintf("got %s, want %s", onnx.DescribeValue(got), onnx.DescribeValue(want))
		}
		if len(g.Values) != len(w.Values) {
			return fmt.Sprintf("sequence of %d elements, want %d", len(g.Values), len(w.Values))
		}
		for i := range w.Values {
			if msg := c.value(g.Values[i], w.Values[i]); msg != "" {
				return fmt.Sprintf("sequence element %d: %s", i, msg)
			}
		}
		return ""
	case *onnx.Map:
		g, ok := got.(*onnx.Map)
		if !ok {
			return fmt.Sprintf("got %s, want %s", onnx.DescribeValue(got), onnx.DescribeValue(want))
		}
		return c.mapValue(g, w)
	case nil:
		return fmt.Sprintf("got %s, want no value", onnx.DescribeValue(got))
	}
	return fmt.Sprintf("cannot compare expected value of type %T", want)
}

// isNone reports whether v holds nothing (nil, a nil pointer, or an empty
// optional).
func isNone(v onnx.Value) bool {
	switch x := v.(type) {
	case nil:
		return true
	case *onnx.Tensor:
		return x == nil
	case *onnx.SparseTensor:
		return x == nil
	case *onnx.Sequence:
		return x == nil
	case *onnx.Map:
		return x == nil
	case *onnx.Optional:
		return x == nil || x.Value == nil
	}
	return false
}

// mapValue compares two maps by key, so the order the keys are stored in
// does not matter.
func (c *comparer) mapValue(got, want *onnx.Map) string {
	if got.Keys == nil || want.Keys == nil || got.Values == nil || want.Values == nil {
		return "malformed map (keys or values missing)"
	}
	if got.Keys.Type != want.Keys.Type {
		return fmt.Sprintf("map key type %v, want %v", got.Keys.Type, want.Keys.Type)
	}
	gn, wn := got.Keys.Len(), want.Keys.Len()
	if gn != len(got.Values.Values) || wn != len(want.Values.Values) {
		return "malformed map (number of keys and values differ)"
	}
	if gn != wn {
		return fmt.Sprintf("map of %d keys, want %d", gn, wn)
	}
	index := make(map[string]int, gn)
	for i := range gn {
		index[elementString(got.Keys, i)] = i
	}
	for j := range wn {
		k := elementString(want.Keys, j)
		i, ok := index[k]
		if !ok {
			return fmt.Sprintf("map lacks key %s", k)
		}
		if msg := c.value(got.Values.Values[i], want.Values.Values[j]); msg != "" {
			return fmt.Sprintf("map key %s: %s", k, msg)
		}
	}
	return ""
}

// tensor compares two dense tensors.
func (c *comparer) tensor(got, want *onnx.Tensor) string {
	if err := want.Check(); err != nil {
		return "malformed expected tensor: " + err.Error()
	}
	if got.Type != want.Type {
		return fmt.Sprintf("data type %v, want %v", got.Type, want.Type)
	}
	if err := got.Check(); err != nil {
		return "malformed result: " + err.Error()
	}
	if !sameShape(got.Shape, want.Shape) {
		return fmt.Sprintf("shape %v, want %v", got.Shape, want.Shape)
	}
	n := want.Len()
	if n == 0 {
		return ""
	}
	var bad, worst int
	switch {
	case want.Type.IsFloat():
		g, w := floatValues(got), floatValues(want)
		if g == nil || w == nil {
			return fmt.Sprintf("cannot read %v elements", want.Type)
		}
		bad, worst = c.floats(g, w)
	case want.Type.IsComplex():
		g, w := complexValues(got), complexValues(want)
		bad, worst = c.complexes(g, w)
	default:
		bad, worst = exactDiff(got.Data, want.Data)
	}
	if bad == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d elements differ, worst at %v: got %s want %s",
		bad, n, unravel(worst, want.Shape), elementString(got, worst), elementString(want, worst))
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// floats checks got against want elementwise, updates the error maxima and
// returns how many elements are outside the tolerance and the index of the
// worst one: the first NaN or infinity mismatch, or else the element that
// exceeds its tolerance by the most.
func (c *comparer) floats(got, want []float64) (bad, worst int) {
	worstExcess := math.Inf(-1)
	for i, w := range want {
		g := got[i]
		var excess float64
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if math.IsNaN(w) && math.IsNaN(g) {
				continue
			}
			excess = math.Inf(1)
		case math.IsInf(w, 0) || math.IsInf(g, 0):
			if g == w {
				continue
			}
			excess = math.Inf(1)
		default:
			d := math.Abs(g - w)
			c.record(d, math.Abs(w))
			allowed := c.tol.ATol + c.tol.RTol*math.Abs(w)
			if d <= allowed {
				continue
			}
			excess = d - allowed
		}
		bad++
		if excess > worstExcess {
			worst, worstExcess = i, excess
		}
	}
	return bad, worst
}

// complexes is floats for complex elements, with numpy's complex
// semantics: the magnitude of the difference against the magnitude of the
// expected value; an element with a NaN part equals any other such.
func (c *comparer) complexes(got, want []complex128) (bad, worst int) {
	worstExcess := math.Inf(-1)
	for i, w := range want {
		g := got[i]
		var excess float64
		switch {
		case cmplx.IsNaN(w) || cmplx.IsNaN(g):
			if cmplx.IsNaN(w) && cmplx.IsNaN(g) {
				continue
			}
			excess = math.Inf(1)
		case cmplx.IsInf(w) || cmplx.IsInf(g):
			if g == w {
				continue
			}
			excess = math.Inf(1)
		default:
			d := cmplx.Abs(g - w)
			c.record(d, cmplx.Abs(w))
			allowed := c.tol.ATol + c.tol.RTol*cmplx.Abs(w)
			if d <= allowed {
				continue
			}
			excess = d - allowed
		}
		bad++
		if excess > worstExcess {
			worst, worstExcess = i, excess
		}
	}
	return bad, worst
}

// record updates the error maxima with an absolute error d at an expected
// magnitude m.
func (c *comparer) record(d, m float64) {
	if d > c.maxAbs {
		c.maxAbs = d
	}
	if m > 0 && d/m > c.maxRel {
		c.maxRel = d / m
	}
}

// exactDiff counts the elements that differ between two backing slices of
// the same Go type and returns the first that does.
func exactDiff(got, want any) (bad, first int) {
	switch w := want.(type) {
	case []int8:
		g, _ := got.([]int8)
		return countDiff(g, w)
	case []int16:
		g, _ := got.([]int16)
		return countDiff(g, w)
	case []int32:
		g, _ := got.([]int32)
		return countDiff(g, w)
	case []int64:
		g, _ := got.([]int64)
		return countDiff(g, w)
	case []uint8:
		g, _ := got.([]uint8)
		return countDiff(g, w)
	case []uint16:
		g, _ := got.([]uint16)
		return countDiff(g, w)
	case []uint32:
		g, _ := got.([]uint32)
		return countDiff(g, w)
	case []uint64:
		g, _ := got.([]uint64)
		return countDiff(g, w)
	case []bool:
		g, _ := got.([]bool)
		return countDiff(g, w)
	case []string:
		g, _ := got.([]string)
		return countDiff(g, w)
	}
	// Only reached for a type this file does not know; treat every
	// element as different rather than report a silent pass.
	n := onnx.SliceLen(want)
	return n, 0
}

func countDiff[T comparable](got, want []T) (bad, first int) {
	if len(got) != len(want) {
		return len(want), 0
	}
	first = -1
	for i := range want {
		if got[i] != want[i] {
			bad++
			if first < 0 {
				first = i
			}
		}
	}
	if first < 0 {
		first = 0
	}
	return bad, first
}

// floatValues converts the elements of a floating-point tensor to
// float64, or returns nil for another type.
func floatValues(t *onnx.Tensor) []float64 {
	switch d := t.Data.(type) {
	case []float32:
		return convert(d, func(v float32) float64 { return float64(v) })
	case []float64:
		return d
	case []onnx.F16:
		return convert(d, func(v onnx.F16) float64 { return float64(v.Float32()) })
	case []onnx.BF16:
		return convert(d, func(v onnx.BF16) float64 { return float64(v.Float32()) })
	case []onnx.F8E4M3FN:
		return convert(d, func(v onnx.F8E4M3FN) float64 { return float64(v.Float32()) })
	case []onnx.F8E4M3FNUZ:
		return convert(d, func(v onnx.F8E4M3FNUZ) float64 { return float64(v.Float32()) })
	case []onnx.F8E5M2:
		return convert(d, func(v onnx.F8E5M2) float64 { return float64(v.Float32()) })
	case []onnx.F8E5M2FNUZ:
		return convert(d, func(v onnx.F8E5M2FNUZ) float64 { return float64(v.Float32()) })
	case []onnx.F4E2M1:
		return convert(d, func(v onnx.F4E2M1) float64 { return float64(v.Float32()) })
	case []onnx.F8E8M0:
		return convert(d, func(v onnx.F8E8M0) float64 { return float64(v.Float32()) })
	}
	return nil
}

func convert[T any](d []T, f func(T) float64) []float64 {
	out := make([]float64, len(d))
	for i, v := range d {
		out[i] = f(v)
	}
	return out
}

// complexValues converts the elements of a complex tensor to complex128.
func complexValues(t *onnx.Tensor) []complex128 {
	switch d := t.Data.(type) {
	case []complex64:
		out := make([]complex128, len(d))
		for i, v := range d {
			out[i] = complex128(v)
		}
		return out
	case []complex128:
		return d
	}
	return nil
}

// unravel turns a row-major flat index into coordinates of shape.
func unravel(i int, shape []int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = i % shape[d]
			i /= shape[d]
		}
	}
	return idx
}

// elementString formats element i of t for a message: floats with the
// shortest digits that identify them at their own precision, strings
// quoted.
func elementString(t *onnx.Tensor, i int) string {
	if t.Type.IsFloat() {
		v := floatValues(t)[i]
		bits := 32
		if t.Type == onnx.Double {
			bits = 64
		}
		return strconv.FormatFloat(v, 'g', -1, bits)
	}
	switch d := t.Data.(type) {
	case []string:
		s := d[i]
		if len(s) > 60 {
			s = s[:57] + "..."
		}
		return strconv.Quote(s)
	case []complex64:
		return fmt.Sprint(d[i])
	case []complex128:
		return fmt.Sprint(d[i])
	case []int8:
		return strconv.FormatInt(int64(d[i]), 10)
	case []int16:
		return strconv.FormatInt(int64(d[i]), 10)
	case []int32:
		return strconv.FormatInt(int64(d[i]), 10)
	case []int64:
		return strconv.FormatInt(d[i], 10)
	case []uint8:
		return strconv.FormatUint(uint64(d[i]), 10)
	case []uint16:
		return strconv.FormatUint(uint64(d[i]), 10)
	case []uint32:
		return strconv.FormatUint(uint64(d[i]), 10)
	case []uint64:
		return strconv.FormatUint(d[i], 10)
	case []bool:
		return strconv.FormatBool(d[i])
	}
	return "?"
}
