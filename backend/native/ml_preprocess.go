package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// The ai.onnx.ml feature preprocessing operators: Normalizer, Scaler,
// Imputer, Binarizer, ArrayFeatureExtractor and FeatureVectorizer. Their
// inputs are the numeric types the schemas allow (float, double, int64,
// int32; ArrayFeatureExtractor also strings), laid out as [N, F] or [F].

// preprocValues widens a float, double, int64 or int32 tensor to float64,
// the numeric types of the ml preprocessing schemas.
func preprocValues(t *onnx.Tensor, what string) ([]float64, error) {
	switch t.Data.(type) {
	case []float32, []float64, []int64, []int32:
	default:
		return nil, fmt.Errorf("%s is tensor(%v); want float, double, int64 or int32", what, t.Type)
	}
	out := make([]float64, t.Len())
	float64sInto(out, t.Data)
	return out, nil
}

// preprocRows reads a [N, F] or [F] shape (the latter one row) as N rows of
// F features.
func preprocRows(shape []int, what string) (n, f int, err error) {
	switch len(shape) {
	case 1:
		return 1, shape[0], nil
	case 2:
		return shape[0], shape[1], nil
	}
	return 0, 0, fmt.Errorf("%s has shape %v; want [N, F] or [F]", what, shape)
}

// featureCount returns the size of the last axis, which holds the
// features of the operators that accept an input of any rank 1 or more.
func featureCount(shape []int, what string) (int, error) {
	if len(shape) == 0 {
		return 0, fmt.Errorf("%s is a scalar; want a tensor whose last axis holds the features", what)
	}
	return shape[len(shape)-1], nil
}

// checkPerFeature checks that a per-feature attribute has one value for
// every feature or a single one for all; none counts as "not given".
func checkPerFeature(n, features int, attr string) error {
	if n == 0 || n == 1 || n == features {
		return nil
	}
	return fmt.Errorf("%s has %d values; want 1 or one per feature (%d)", attr, n, features)
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_Normalizer.html
//
// Each row is divided by its maximum (MAX), the sum of its absolute values
// (L1) or its Euclidean norm (L2), and a row whose divisor is zero is left
// as it is: the definition's formulas, which ONNX Runtime implements. (The
// ONNX Python reference divides MAX rows by the largest magnitude instead;
// the two agree on rows whose largest magnitude is their maximum.)
type normalizerKernel struct{ norm string }

func (k *normalizerKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	rows, f, err := preprocRows(x.Shape, "input")
	if err != nil {
		return nil, err
	}
	v, err := preprocValues(x, "input")
	if err != nil {
		return nil, err
	}
	out := onnx.NewTensor(onnx.Float, x.Shape...)
	y := out.Float32s()
	for r := range rows {
		row := v[r*f : (r+1)*f]
		var div float64
		switch k.norm {
		case "MAX":
			div = math.Inf(-1)
			for _, e := range row {
				div = math.Max(div, e)
			}
		case "L1":
			for _, e := range row {
				div += math.Abs(e)
			}
		case "L2":
			for _, e := range row {
				div += e * e
			}
			div = math.Sqrt(div)
		}
		if div == 0 || f == 0 {
			div = 1
		}
		for i, e := range row {
			y[r*f+i] = float32(e / div)
		}
	}
	return out, nil
}

// VisitNormalizer compiles Normalizer.
func (b *builder) VisitNormalizer(op *ops.Normalizer) error {
	switch op.Norm {
	case "MAX", "L1", "L2":
	default:
		return fmt.Errorf("norm %q is not MAX, L1 or L2", op.Norm)
	}
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &normalizerKernel{norm: op.Norm}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_Scaler.html
//
// y = (x - offset) * scale along the last axis, as float. Either list may
// have one value per feature or one for all; an omitted one leaves the
// values unshifted (offset) or unscaled (scale).
type scalerKernel struct{ offset, scale []float32 }

// featureValue returns entry i of a per-feature list, its only entry, or
// none when the list is empty.
func featureValue(list []float32, i int, none float32) float32 {
	switch len(list) {
	case 0:
		return none
	case 1:
		return list[0]
	}
	return list[i]
}

func (k *scalerKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	f, err := featureCount(x.Shape, "input")
	if err != nil {
		return nil, err
	}
	if err := checkPerFeature(len(k.offset), f, "offset"); err != nil {
		return nil, err
	}
	if err := checkPerFeature(len(k.scale), f, "scale"); err != nil {
		return nil, err
	}
	out := onnx.NewTensor(onnx.Float, x.Shape...)
	y := out.Float32s()
	if f == 0 {
		return out, nil
	}
	if d, ok := x.Data.([]float32); ok {
		// float input is computed in float, as ONNX Runtime does.
		for i, e := range d {
			j := i % f
			y[i] = (e - featureValue(k.offset, j, 0)) * featureValue(k.scale, j, 1)
		}
		return out, nil
	}
	v, err := preprocValues(x, "input")
	if err != nil {
		return nil, err
	}
	for i, e := range v {
		j := i % f
		y[i] = float32((e - float64(featureValue(k.offset, j, 0))) * float64(featureValue(k.scale, j, 1)))
	}
	return out, nil
}

// VisitScaler compiles Scaler.
func (b *builder) VisitScaler(op *ops.Scaler) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &scalerKernel{offset: op.Offset, scale: op.Scale}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_Imputer.html
//
// Elements equal to the replaced value (NaN matching NaN) take the imputed
// value of their feature (last axis). Float inputs use the float
// attributes and integer inputs the int64 ones; when only the other kind
// is given it is used, converted, as the ONNX reference does.
type imputerKernel struct {
	floats []float32
	ints   []int64
	replF  float32
	replI  int64
}

func (k *imputerKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	f, err := featureCount(x.Shape, "input")
	if err != nil {
		return nil, err
	}
	var useInts bool
	switch x.Data.(type) {
	case []float32, []float64:
		useInts = len(k.floats) == 0
	case []int64, []int32:
		useInts = len(k.ints) > 0 || len(k.floats) == 0
	default:
		return nil, fmt.Errorf("input is tensor(%v); want float, double, int64 or int32", x.Type)
	}
	n, attr := len(k.floats), "imputed_value_floats"
	if useInts {
		n, attr = len(k.ints), "imputed_value_int64s"
	}
	if n == 0 {
		return nil, fmt.Errorf("neither imputed_value_floats nor imputed_value_int64s is given")
	}
	if n != 1 && n != f {
		return nil, fmt.Errorf("%s has %d values; want 1 or one per feature (%d)", attr, n, f)
	}
	col := func(i int) int {
		if n == 1 {
			return 0
		}
		return i % f
	}
	out := &onnx.Tensor{Type: x.Type, Shape: append([]int(nil), x.Shape...)}
	switch d := x.Data.(type) {
	case []float32:
		out.Data = imputeFloats(d, col, k.floatValues(useInts), k.replacedFloat(useInts))
	case []float64:
		out.Data = imputeFloats(d, col, k.floatValues(useInts), k.replacedFloat(useInts))
	case []int64:
		vals, err := k.intValues(useInts, math.MinInt64, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		out.Data = imputeInts(d, col, vals, k.replaced(useInts))
	case []int32:
		vals, err := k.intValues(useInts, math.MinInt32, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		out.Data = imputeInts(d, col, vals, k.replaced(useInts))
	}
	return out, nil
}

// floatValues are the imputed values for a float input.
func (k *imputerKernel) floatValues(useInts bool) []float64 {
	if useInts {
		out := make([]float64, len(k.ints))
		for i, v := range k.ints {
			out[i] = float64(v)
		}
		return out
	}
	out := make([]float64, len(k.floats))
	for i, v := range k.floats {
		out[i] = float64(v)
	}
	return out
}

// intValues are the imputed values for an integer input whose type holds
// lo..hi; float values are truncated, as a C cast does.
func (k *imputerKernel) intValues(useInts bool, lo, hi int64) ([]int64, error) {
	if useInts {
		for _, v := range k.ints {
			if v < lo || v > hi {
				return nil, fmt.Errorf("imputed value %d does not fit the input's type", v)
			}
		}
		return k.ints, nil
	}
	out := make([]int64, len(k.floats))
	for i, v := range k.floats {
		t := math.Trunc(float64(v))
		if math.IsNaN(t) || t < float64(lo) || t > float64(hi) {
			return nil, fmt.Errorf("imputed value %v does not fit the input's type", v)
		}
		out[i] = int64(t)
	}
	return out, nil
}

// replacedFloat is the value float elements are compared with (NaN
// matching NaN).
func (k *imputerKernel) replacedFloat(useInts bool) float64 {
	if useInts {
		return float64(k.replI)
	}
	return float64(k.replF)
}

// replaced reports whether integer element e is to be replaced.
func (k *imputerKernel) replaced(useInts bool) func(int64) bool {
	if useInts {
		return func(e int64) bool { return e == k.replI }
	}
	r := float64(k.replF)
	return func(e int64) bool { return float64(e) == r }
}

func imputeFloats[T float32 | float64](d []T, col func(int) int, imputed []float64, repl float64) []T {
	nan := math.IsNaN(repl)
	y := make([]T, len(d))
	for i, e := range d {
		y[i] = e
		if v := float64(e); v == repl || (nan && math.IsNaN(v)) {
			y[i] = T(imputed[col(i)])
		}
	}
	return y
}

func imputeInts[T int64 | int32](d []T, col func(int) int, imputed []int64, replaced func(int64) bool) []T {
	y := make([]T, len(d))
	for i, e := range d {
		y[i] = e
		if replaced(int64(e)) {
			y[i] = T(imputed[col(i)])
		}
	}
	return y
}

// VisitImputer compiles Imputer.
func (b *builder) VisitImputer(op *ops.Imputer) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &imputerKernel{floats: op.ImputedValueFloats, ints: op.ImputedValueInt64s,
		replF: op.ReplacedValueFloat, replI: op.ReplacedValueInt64}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_Binarizer.html
//
// 1 where x > threshold, else 0 (NaN included), in the input's type.
type binarizerKernel struct{ threshold float64 }

func (k *binarizerKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	out := &onnx.Tensor{Type: x.Type, Shape: append([]int(nil), x.Shape...)}
	switch d := x.Data.(type) {
	case []float32:
		out.Data = binarize(d, k.threshold)
	case []float64:
		out.Data = binarize(d, k.threshold)
	case []int64:
		out.Data = binarize(d, k.threshold)
	case []int32:
		out.Data = binarize(d, k.threshold)
	default:
		return nil, fmt.Errorf("input is tensor(%v); want float, double, int64 or int32", x.Type)
	}
	return out, nil
}

func binarize[T float32 | float64 | int64 | int32](d []T, threshold float64) []T {
	y := make([]T, len(d))
	for i, e := range d {
		if float64(e) > threshold {
			y[i] = 1
		}
	}
	return y
}

// VisitBinarizer compiles Binarizer.
func (b *builder) VisitBinarizer(op *ops.Binarizer) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &binarizerKernel{threshold: float64(op.Threshold)}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_ArrayFeatureExtractor.html
//
// Z[..., j] = X[..., Y[j]] for the indices in Y (any shape, read flat). A
// 1-D X gives a [1, len(Y)] result, as ONNX Runtime and the reference do.
func arrayFeatureExtract(x, y *onnx.Tensor) (*onnx.Tensor, error) {
	f, err := featureCount(x.Shape, "X")
	if err != nil {
		return nil, err
	}
	idx, err := intsOf(y)
	if err != nil {
		return nil, fmt.Errorf("indices Y: %w", err)
	}
	cols := make([]int, len(idx))
	for j, v := range idx {
		if v < 0 || v >= int64(f) {
			return nil, fmt.Errorf("index Y[%d] = %d is out of range for %d features", j, v, f)
		}
		cols[j] = int(v)
	}
	shape := append([]int(nil), x.Shape...)
	shape[len(shape)-1] = len(cols)
	if len(x.Shape) == 1 {
		shape = []int{1, len(cols)}
	}
	rows := 1
	for _, d := range x.Shape[:len(x.Shape)-1] {
		rows *= d
	}
	out := &onnx.Tensor{Type: x.Type, Shape: shape}
	switch d := x.Data.(type) {
	case []float32:
		out.Data = gatherColumns(d, rows, f, cols)
	case []float64:
		out.Data = gatherColumns(d, rows, f, cols)
	case []int64:
		out.Data = gatherColumns(d, rows, f, cols)
	case []int32:
		out.Data = gatherColumns(d, rows, f, cols)
	case []string:
		out.Data = gatherColumns(d, rows, f, cols)
	default:
		return nil, fmt.Errorf("X is tensor(%v); want float, double, int64, int32 or string", x.Type)
	}
	return out, nil
}

// gatherColumns picks columns cols of each of the rows of src ([rows, f]).
func gatherColumns[T any](src []T, rows, f int, cols []int) []T {
	out := make([]T, 0, rows*len(cols))
	for r := range rows {
		row := src[r*f : (r+1)*f]
		for _, c := range cols {
			out = append(out, row[c])
		}
	}
	return out
}

// VisitArrayFeatureExtractor compiles ArrayFeatureExtractor.
func (b *builder) VisitArrayFeatureExtractor(op *ops.ArrayFeatureExtractor) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	y, err := b.input(op.In.Y)
	if err != nil {
		return err
	}
	return b.emit(binaryTensorKernel(x, y, b.output(op.Out.Z), arrayFeatureExtract))
}

// https://onnx.ai/onnx/operators/onnx_aionnxml_FeatureVectorizer.html
//
// The inputs' rows are concatenated into [N, sum(inputdimensions)] floats.
// An input is [N, ...] (its features the product of the other axes) or [C]
// (one row); each is cut or zero-padded to its entry of inputdimensions,
// which defaults to the input's own feature count.
type featureVectorizer struct{ dims []int64 }

func (k *featureVectorizer) compute(ts []*onnx.Tensor) (*onnx.Tensor, error) {
	if len(k.dims) > 0 && len(k.dims) != len(ts) {
		return nil, fmt.Errorf("inputdimensions has %d entries for %d inputs", len(k.dims), len(ts))
	}
	n := -1
	widths := make([]int, len(ts))
	total := 0
	for i, t := range ts {
		if len(t.Shape) == 0 {
			return nil, fmt.Errorf("input %d is a scalar; want [N, C] or [C]", i)
		}
		rows, cols := 1, t.Shape[0]
		if len(t.Shape) > 1 {
			rows, cols = t.Shape[0], onnx.NumElements(t.Shape[1:])
		}
		if n >= 0 && rows != n {
			return nil, fmt.Errorf("input %d has %d rows, input 0 has %d", i, rows, n)
		}
		n = rows
		widths[i] = cols
		if len(k.dims) > 0 {
			if k.dims[i] < 0 {
				return nil, fmt.Errorf("inputdimensions[%d] = %d is negative", i, k.dims[i])
			}
			widths[i] = int(k.dims[i])
		}
		total += widths[i]
	}
	out := onnx.NewTensor(onnx.Float, n, total)
	y := out.Float32s()
	off := 0
	for i, t := range ts {
		v, err := preprocValues(t, fmt.Sprintf("input %d", i))
		if err != nil {
			return nil, err
		}
		cols := onnx.NumElements(t.Shape[1:])
		if len(t.Shape) == 1 {
			cols = t.Shape[0]
		}
		w := min(cols, widths[i])
		for r := range n {
			for c := range w {
				y[r*total+off+c] = float32(v[r*cols+c])
			}
		}
		off += widths[i]
	}
	return out, nil
}

// VisitFeatureVectorizer compiles FeatureVectorizer.
func (b *builder) VisitFeatureVectorizer(op *ops.FeatureVectorizer) error {
	xs, err := b.inputs(op.In.X)
	if err != nil {
		return err
	}
	if len(xs) == 0 && !b.probing {
		return fmt.Errorf("FeatureVectorizer needs at least one input")
	}
	k := &featureVectorizer{dims: op.Inputdimensions}
	return b.emit(tensorsKernel(xs, b.output(op.Out.Y), k.compute))
}
