package native

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// stringsOf returns a tensor's strings, or an error naming its type.
func stringsOf(t *onnx.Tensor, what string) ([]string, error) {
	s, ok := t.Data.([]string)
	if !ok {
		return nil, fmt.Errorf("%s is tensor(%v), not tensor(string)", what, t.Type)
	}
	return s, nil
}

// stringNormalizer removes stopwords from a [C] or [1, C] string tensor and
// then changes the case of what is left (version 10).
type stringNormalizer struct {
	action        string // "NONE", "LOWER", "UPPER"
	caseSensitive bool
	special       unicode.SpecialCase // the locale's casing rules; nil for Unicode's defaults
	stopwords     map[string]bool     // folded with fold when not case-sensitive
}

// stringLocaleCasing maps a locale to its casing rules: Unicode's default
// mapping, with the Turkish and Azeri dotted and dotless i.
func stringLocaleCasing(locale string) (unicode.SpecialCase, error) {
	lang := strings.ToLower(locale)
	if i := strings.IndexAny(lang, "_-.@"); i >= 0 {
		lang = lang[:i]
	}
	switch lang {
	case "tr", "az":
		return unicode.TurkishCase, nil
	case "lt":
		// Lithuanian keeps a dot above i with accents when lowering: not
		// implemented, rather than answering with the default mapping.
		return nil, network.Unsupportedf("StringNormalizer with locale %q", locale)
	}
	return nil, nil
}

func (k *stringNormalizer) lower(s string) string {
	if k.special != nil {
		return strings.ToLowerSpecial(k.special, s)
	}
	return strings.ToLower(s)
}

func (k *stringNormalizer) upper(s string) string {
	if k.special != nil {
		return strings.ToUpperSpecial(k.special, s)
	}
	return strings.ToUpper(s)
}

// fold is the key of a word for case-insensitive stopword matching.
func (k *stringNormalizer) fold(s string) string {
	if k.caseSensitive {
		return s
	}
	return k.lower(k.upper(s))
}

func (k *stringNormalizer) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	in, err := stringsOf(x, "input")
	if err != nil {
		return nil, err
	}
	switch {
	case len(x.Shape) == 1:
	case len(x.Shape) == 2 && x.Shape[0] == 1:
	default:
		return nil, fmt.Errorf("input has shape %v; StringNormalizer takes [C] or [1, C]", x.Shape)
	}
	out := make([]string, 0, len(in))
	for _, s := range in {
		if len(k.stopwords) > 0 && k.stopwords[k.fold(s)] {
			continue
		}
		switch k.action {
		case "LOWER":
			s = k.lower(s)
		case "UPPER":
			s = k.upper(s)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		out = append(out, "") // everything was removed: one empty string
	}
	shape := []int{len(out)}
	if len(x.Shape) == 2 {
		shape = []int{1, len(out)}
	}
	return onnx.FromSlice(out, shape...), nil
}

// VisitStringNormalizer compiles StringNormalizer.
func (b *builder) VisitStringNormalizer(op *ops.StringNormalizer) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &stringNormalizer{action: op.CaseChangeAction, caseSensitive: op.IsCaseSensitive != 0}
	switch k.action {
	case "NONE", "LOWER", "UPPER":
	default:
		return fmt.Errorf("case_change_action %q is not NONE, LOWER or UPPER", op.CaseChangeAction)
	}
	if op.Locale != nil {
		if k.special, err = stringLocaleCasing(*op.Locale); err != nil {
			return err
		}
	}
	k.stopwords = map[string]bool{}
	for _, w := range op.Stopwords {
		k.stopwords[k.fold(w)] = true
	}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// stringConcat concatenates two string tensors elementwise with numpy
// broadcasting (StringConcat, version 20).
type stringConcat struct{ out outputBuffer }

func (k *stringConcat) compute(x, y *onnx.Tensor) (*onnx.Tensor, error) {
	xs, err := stringsOf(x, "X")
	if err != nil {
		return nil, err
	}
	ys, err := stringsOf(y, "Y")
	if err != nil {
		return nil, err
	}
	shape, err := broadcastShapes(x.Shape, y.Shape)
	if err != nil {
		return nil, err
	}
	out := k.out.tensor(onnx.String, shape)
	z := out.Data.([]string)
	if len(z) == 0 {
		return out, nil
	}
	w := newStridedWalk(shape, broadcastStrides(x.Shape, shape), broadcastStrides(y.Shape, shape))
	n, sx, sy := w.rowLen(), w.rowStride(0), w.rowStride(1)
	w.forEachRow(func(row int, off walkOffsets) {
		dst := z[row*n : (row+1)*n]
		for i := range dst {
			dst[i] = xs[off[0]+i*sx] + ys[off[1]+i*sy]
		}
	})
	return out, nil
}

// VisitStringConcat compiles StringConcat.
func (b *builder) VisitStringConcat(op *ops.StringConcat) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	y, err := b.input(op.In.Y)
	if err != nil {
		return err
	}
	k := &stringConcat{}
	z := b.output(op.Out.Z)
	return b.emit(binaryTensorKernel(x, y, z, k.compute))
}

// stringSplit splits every string of a tensor (StringSplit, version 20).
// Without a delimiter (or with an empty one) runs of whitespace separate
// the parts and leading and trailing whitespace is dropped, so an empty or
// blank string has no part; with a delimiter every occurrence separates
// two parts, which may be empty. At most maxSplit splits are made from the
// left (negative: no limit), the rest of the string being the last part.
type stringSplit struct {
	delimiter string
	maxSplit  int
}

// split returns the parts of s.
func (k *stringSplit) split(s string) []string {
	if k.delimiter != "" {
		if k.maxSplit < 0 {
			return strings.Split(s, k.delimiter)
		}
		return strings.SplitN(s, k.delimiter, k.maxSplit+1)
	}
	if k.maxSplit < 0 {
		return strings.FieldsFunc(s, unicode.IsSpace)
	}
	var parts []string
	rest := strings.TrimLeftFunc(s, unicode.IsSpace)
	for rest != "" {
		if len(parts) == k.maxSplit {
			parts = append(parts, rest) // the remainder keeps its trailing whitespace
			break
		}
		end := strings.IndexFunc(rest, unicode.IsSpace)
		if end < 0 {
			parts = append(parts, rest)
			break
		}
		parts = append(parts, rest[:end])
		rest = strings.TrimLeftFunc(rest[end:], unicode.IsSpace)
	}
	return parts
}

// compute returns Y, the parts padded with "" to the largest count along a
// new last dimension, and Z, the count of parts of each string.
func (k *stringSplit) compute(x *onnx.Tensor) (*onnx.Tensor, *onnx.Tensor, error) {
	in, err := stringsOf(x, "input")
	if err != nil {
		return nil, nil, err
	}
	parts := make([][]string, len(in))
	widest := 0
	counts := make([]int64, len(in))
	for i, s := range in {
		parts[i] = k.split(s)
		counts[i] = int64(len(parts[i]))
		widest = max(widest, len(parts[i]))
	}
	yShape := append(append([]int{}, x.Shape...), widest)
	y := make([]string, len(in)*widest)
	for i, p := range parts {
		copy(y[i*widest:], p)
	}
	return onnx.FromSlice(y, yShape...), onnx.FromSlice(counts, x.Shape...), nil
}

// VisitStringSplit compiles StringSplit.
func (b *builder) VisitStringSplit(op *ops.StringSplit) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &stringSplit{maxSplit: -1}
	if op.Delimiter != nil {
		k.delimiter = *op.Delimiter
	}
	if op.Maxsplit != nil && *op.Maxsplit >= 0 {
		k.maxSplit = int(min(*op.Maxsplit, 1<<31))
	}
	y, z := b.output(op.Out.Y), b.output(op.Out.Z)
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		parts, counts, err := k.compute(t)
		if err != nil {
			return err
		}
		y.set(slots, parts)
		z.set(slots, counts)
		return nil
	})
}

// VisitRegexFullMatch compiles RegexFullMatch (version 20): whether each
// string matches the RE2 pattern as a whole. Go's regexp implements RE2's
// syntax and semantics, so the pattern is used as is, anchored at both
// ends.
func (b *builder) VisitRegexFullMatch(op *ops.RegexFullMatch) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	if op.Pattern == nil {
		if b.probing {
			return nil
		}
		return fmt.Errorf("RegexFullMatch needs the pattern attribute")
	}
	re, err := regexp.Compile(`^(?:` + *op.Pattern + `)$`)
	if err != nil {
		return fmt.Errorf("pattern %q: %w", *op.Pattern, err)
	}
	var out outputBuffer
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), func(t *onnx.Tensor) (*onnx.Tensor, error) {
		in, err := stringsOf(t, "input")
		if err != nil {
			return nil, err
		}
		o := out.tensor(onnx.Bool, t.Shape)
		res := o.Data.([]bool)
		for i, s := range in {
			res[i] = re.MatchString(s)
		}
		return o, nil
	}))
}
