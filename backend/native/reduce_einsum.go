package native

import (
	"fmt"
	"slices"
	"strings"

	"github.com/deep500/deep500-go/backend/native/internal/gemm"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Einsum is evaluated by contracting the operands pairwise from the left.
// Labels are small integers: letters 'A'..'Z' are 0..25 and 'a'..'z' are
// 26..51 (so sorting labels sorts the letters as implicit mode wants), and
// the dimensions an ellipsis stands for get labels from einsumEllipsis on,
// aligned at the right as numpy broadcasting aligns them.
//
// Each pairwise step first sums away the labels that only one operand has
// and nothing later needs, and takes diagonals of repeated labels; then
// float32/float64 operands are packed into [batch, m, k] and [batch, k, n]
// and multiplied with the blocked GEMM, while other types use a direct
// strided loop. A last single-operand step orders (and sums) the labels as
// the output asks.

const (
	einsumLetters  = 52
	einsumEllipsis = 100 // first label of ellipsis dimensions
	einsumDots     = -1  // marks the ellipsis in a parsed term
)

// einsumEquation is a parsed equation: one term per input and the output
// term (nil in implicit mode).
type einsumEquation struct {
	inputs   [][]int
	output   []int
	explicit bool
}

func parseEinsumTerm(s string) ([]int, error) {
	var term []int
	dots := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			term = append(term, int(c-'A'))
		case c >= 'a' && c <= 'z':
			term = append(term, 26+int(c-'a'))
		case c == '.':
			if dots || !strings.HasPrefix(s[i:], "...") {
				return nil, fmt.Errorf("misplaced '.' in term %q", s)
			}
			dots = true
			term = append(term, einsumDots)
			i += 2
		default:
			return nil, fmt.Errorf("invalid character %q in term %q", c, s)
		}
	}
	return term, nil
}

func parseEinsum(eq string) (*einsumEquation, error) {
	eq = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, eq)
	lhs, rhs, explicit := strings.Cut(eq, "->")
	e := &einsumEquation{explicit: explicit}
	for _, t := range strings.Split(lhs, ",") {
		term, err := parseEinsumTerm(t)
		if err != nil {
			return nil, fmt.Errorf("einsum equation %q: %w", eq, err)
		}
		e.inputs = append(e.inputs, term)
	}
	if explicit {
		term, err := parseEinsumTerm(rhs)
		if err != nil {
			return nil, fmt.Errorf("einsum equation %q: %w", eq, err)
		}
		seen := map[int]bool{}
		for _, l := range term {
			if seen[l] {
				return nil, fmt.Errorf("einsum equation %q: output repeats a label", eq)
			}
			seen[l] = true
		}
		e.output = term
	}
	return e, nil
}

// einsumOperand is a tensor's data with a label per dimension.
type einsumOperand[T numeric] struct {
	data   []T
	shape  []int
	labels []int
}

// resolve expands ellipses for the given input shapes and returns the
// label list of each input, the output labels and the size of every label.
func (e *einsumEquation) resolve(shapes [][]int) (inLabels [][]int, out []int, sizes map[int]int, err error) {
	if len(shapes) != len(e.inputs) {
		return nil, nil, nil, fmt.Errorf("einsum equation has %d input terms for %d inputs", len(e.inputs), len(shapes))
	}
	ell := make([]int, len(shapes))
	maxE := 0
	for i, term := range e.inputs {
		letters := 0
		hasDots := false
		for _, l := range term {
			if l == einsumDots {
				hasDots = true
			} else {
				letters++
			}
		}
		r := len(shapes[i])
		if (!hasDots && r != letters) || (hasDots && r < letters) {
			return nil, nil, nil, fmt.Errorf("einsum input %d has shape %v, which its term of %d labels does not match", i, shapes[i], letters)
		}
		ell[i] = r - letters
		maxE = max(maxE, ell[i])
	}
	sizes = map[int]int{}
	count := map[int]int{}
	for i, term := range e.inputs {
		var labels []int
		for _, l := range term {
			if l == einsumDots {
				for t := range ell[i] {
					labels = append(labels, einsumEllipsis+maxE-ell[i]+t)
				}
				continue
			}
			labels = append(labels, l)
		}
		for d, l := range labels {
			size := shapes[i][d]
			count[l]++
			old, ok := sizes[l]
			switch {
			case !ok || old == size:
				sizes[l] = size
			case l >= einsumEllipsis && old == 1:
				sizes[l] = size
			case l >= einsumEllipsis && size == 1:
			default:
				return nil, nil, nil, fmt.Errorf("einsum label %s has sizes %d and %d", einsumLabelName(l), old, size)
			}
		}
		inLabels = append(inLabels, labels)
	}
	if e.explicit {
		for _, l := range e.output {
			if l == einsumDots {
				for t := range maxE {
					out = append(out, einsumEllipsis+t)
				}
				continue
			}
			if _, ok := sizes[l]; !ok {
				return nil, nil, nil, fmt.Errorf("einsum output label %s is not in any input", einsumLabelName(l))
			}
			out = append(out, l)
		}
	} else {
		for t := range maxE {
			out = append(out, einsumEllipsis+t)
		}
		for l := range einsumLetters {
			if count[l] == 1 {
				out = append(out, l)
			}
		}
	}
	return inLabels, out, sizes, nil
}

func einsumLabelName(l int) string {
	switch {
	case l < 26:
		return string(rune('A' + l))
	case l < einsumLetters:
		return string(rune('a' + l - 26))
	}
	return fmt.Sprintf("...[%d]", l-einsumEllipsis)
}

// einsumGeneric computes out[outLabels] = sum over the other labels of the
// product of the operands, by walking every index: the general fallback,
// and the step that takes diagonals, sums private labels and transposes.
func einsumGeneric[T numeric](operands []einsumOperand[T], outLabels []int, sizes map[int]int) einsumOperand[T] {
	inOut := map[int]bool{}
	for _, l := range outLabels {
		inOut[l] = true
	}
	var contracted []int
	for _, op := range operands {
		for _, l := range op.labels {
			if !inOut[l] && !slices.Contains(contracted, l) {
				contracted = append(contracted, l)
			}
		}
	}
	all := append(slices.Clone(outLabels), contracted...)
	dims := make([]int, len(all))
	for i, l := range all {
		dims[i] = sizes[l]
	}
	// strides[k][i]: operand k's step along label all[i] (0 when absent or
	// broadcast; summed for a repeated label, which walks the diagonal).
	strides := make([][]int, len(operands))
	for k, op := range operands {
		rm := rowMajorStrides(op.shape)
		strides[k] = make([]int, len(all))
		for d, l := range op.labels {
			if op.shape[d] == 1 && sizes[l] != 1 {
				continue
			}
			strides[k][slices.Index(all, l)] += rm[d]
		}
	}
	nOut := len(outLabels)
	outShape := dims[:nOut:nOut]
	res := einsumOperand[T]{data: make([]T, onnx.NumElements(outShape)), shape: slices.Clone(outShape), labels: slices.Clone(outLabels)}
	inner := onnx.NumElements(dims[nOut:])
	if len(res.data) == 0 || inner == 0 {
		return res
	}
	cDims := dims[nOut:]
	offs := make([]int, len(operands))
	counter := make([]int, len(cDims))
	for o := range res.data {
		// Offsets of output element o.
		rem := o
		for k := range offs {
			offs[k] = 0
		}
		for d := nOut - 1; d >= 0; d-- {
			i := rem % dims[d]
			rem /= dims[d]
			for k := range offs {
				offs[k] += i * strides[k][d]
			}
		}
		clear(counter)
		var sum T
		for range inner {
			p := T(1)
			for k, op := range operands {
				p *= op.data[offs[k]]
			}
			sum += p
			for d := len(cDims) - 1; d >= 0; d-- {
				counter[d]++
				for k := range offs {
					offs[k] += strides[k][nOut+d]
				}
				if counter[d] < cDims[d] {
					break
				}
				for k := range offs {
					offs[k] -= strides[k][nOut+d] * cDims[d]
				}
				counter[d] = 0
			}
		}
		res.data[o] = sum
	}
	return res
}

// einsumPrepare sums away the labels of op that are not in keep and takes
// the diagonals of repeated labels, so that op's labels are distinct and
// all kept. It returns op unchanged when there is nothing to do.
func einsumPrepare[T numeric](op einsumOperand[T], keep func(int) bool, sizes map[int]int) einsumOperand[T] {
	var labels []int
	changed := false
	for _, l := range op.labels {
		switch {
		case !keep(l) || slices.Contains(labels, l):
			changed = true
		default:
			labels = append(labels, l)
		}
	}
	if !changed {
		return op
	}
	return einsumGeneric([]einsumOperand[T]{op}, labels, sizes)
}

// einsumPairGemm contracts two operands with distinct labels, where every
// label of each is either in the other or needed, with the blocked GEMM.
// The result's labels are batch, then a's own, then b's own.
func einsumPairGemm[T floatElem](a, b einsumOperand[T], needed func(int) bool, sizes map[int]int, threads int) einsumOperand[T] {
	var batch, m, n, k []int
	for _, l := range a.labels {
		switch {
		case slices.Contains(b.labels, l) && needed(l):
			batch = append(batch, l)
		case slices.Contains(b.labels, l):
			k = append(k, l)
		default:
			m = append(m, l)
		}
	}
	for _, l := range b.labels {
		if !slices.Contains(a.labels, l) {
			n = append(n, l)
		}
	}
	size := func(ls []int) int {
		p := 1
		for _, l := range ls {
			p *= sizes[l]
		}
		return p
	}
	B, M, N, K := size(batch), size(m), size(n), size(k)
	pack := func(op einsumOperand[T], order []int) []T {
		shape := make([]int, len(order))
		src := make([]int, len(order))
		rm := rowMajorStrides(op.shape)
		for i, l := range order {
			shape[i] = sizes[l]
			d := slices.Index(op.labels, l)
			if op.shape[d] != 1 || sizes[l] == 1 {
				src[i] = rm[d]
			}
		}
		dst := make([]T, onnx.NumElements(shape))
		_ = stridedCopy(dst, stridedView{0, rowMajorStrides(shape)}, op.data, stridedView{0, src}, shape)
		return dst
	}
	pa := pack(a, slices.Concat(batch, m, k))
	pb := pack(b, slices.Concat(batch, k, n))
	labels := slices.Concat(batch, m, n)
	shape := make([]int, len(labels))
	for i, l := range labels {
		shape[i] = sizes[l]
	}
	c := make([]T, B*M*N)
	for bi := range B {
		gemm.Multiply(M, N, K, 1, gemm.NewMatrix(pa[bi*M*K:], K, false), gemm.NewMatrix(pb[bi*K*N:], N, false), 0, c[bi*M*N:], N, threads)
	}
	return einsumOperand[T]{data: c, shape: shape, labels: labels}
}

// einsumRun evaluates the equation on typed operands.
func einsumRun[T numeric](operands []einsumOperand[T], out []int, sizes map[int]int, threads int) einsumOperand[T] {
	inOut := func(l int) bool { return slices.Contains(out, l) }
	cur := operands[0]
	for i := 1; i < len(operands); i++ {
		later := operands[i+1:]
		usedLater := func(l int) bool {
			for _, op := range later {
				if slices.Contains(op.labels, l) {
					return true
				}
			}
			return false
		}
		needed := func(l int) bool { return inOut(l) || usedLater(l) }
		next := operands[i]
		cur = einsumPrepare(cur, func(l int) bool { return needed(l) || slices.Contains(next.labels, l) }, sizes)
		next = einsumPrepare(next, func(l int) bool { return needed(l) || slices.Contains(cur.labels, l) }, sizes)
		switch a := any(cur).(type) {
		case einsumOperand[float32]:
			cur = any(einsumPairGemm(a, any(next).(einsumOperand[float32]), needed, sizes, threads)).(einsumOperand[T])
		case einsumOperand[float64]:
			cur = any(einsumPairGemm(a, any(next).(einsumOperand[float64]), needed, sizes, threads)).(einsumOperand[T])
		default:
			var keep []int
			for _, l := range slices.Concat(cur.labels, next.labels) {
				if needed(l) && !slices.Contains(keep, l) {
					keep = append(keep, l)
				}
			}
			cur = einsumGeneric([]einsumOperand[T]{cur, next}, keep, sizes)
		}
	}
	if !slices.Equal(cur.labels, out) {
		cur = einsumGeneric([]einsumOperand[T]{cur}, out, sizes)
	}
	return cur
}

// einsumKernel computes one Einsum node.
type einsumKernel struct {
	eq      *einsumEquation
	threads int
}

func (k *einsumKernel) compute(inputs []*onnx.Tensor) (*onnx.Tensor, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("Einsum needs at least one input")
	}
	shapes := make([][]int, len(inputs))
	for i, t := range inputs {
		if err := checkStorage(t); err != nil {
			return nil, err
		}
		if t.Type != inputs[0].Type {
			return nil, fmt.Errorf("einsum input %d has type %v, input 0 has %v", i, t.Type, inputs[0].Type)
		}
		shapes[i] = t.Shape
	}
	labels, out, sizes, err := k.eq.resolve(shapes)
	if err != nil {
		return nil, err
	}
	switch inputs[0].Data.(type) {
	case []float32:
		return einsumTyped[float32](inputs, labels, out, sizes, k.threads)
	case []float64:
		return einsumTyped[float64](inputs, labels, out, sizes, k.threads)
	case []int8:
		return einsumTyped[int8](inputs, labels, out, sizes, k.threads)
	case []int16:
		return einsumTyped[int16](inputs, labels, out, sizes, k.threads)
	case []int32:
		return einsumTyped[int32](inputs, labels, out, sizes, k.threads)
	case []int64:
		return einsumTyped[int64](inputs, labels, out, sizes, k.threads)
	case []uint8:
		return einsumTyped[uint8](inputs, labels, out, sizes, k.threads)
	case []uint16:
		return einsumTyped[uint16](inputs, labels, out, sizes, k.threads)
	case []uint32:
		return einsumTyped[uint32](inputs, labels, out, sizes, k.threads)
	case []uint64:
		return einsumTyped[uint64](inputs, labels, out, sizes, k.threads)
	case []onnx.F16, []onnx.BF16:
		wide := make([]*onnx.Tensor, len(inputs))
		for i, t := range inputs {
			w, _ := widenToFloat32(make([]float32, t.Len()), t.Data)
			wide[i] = &onnx.Tensor{Type: onnx.Float, Shape: t.Shape, Data: w}
		}
		res, err := einsumTyped[float32](wide, labels, out, sizes, k.threads)
		if err != nil {
			return nil, err
		}
		narrow := onnx.NewTensor(inputs[0].Type, res.Shape...)
		return narrow, narrowFromFloat32(narrow.Data, res.Data.([]float32))
	}
	return nil, network.Unsupportedf("Einsum of %v tensors", inputs[0].Type)
}

func einsumTyped[T numeric](inputs []*onnx.Tensor, labels [][]int, out []int, sizes map[int]int, threads int) (*onnx.Tensor, error) {
	operands := make([]einsumOperand[T], len(inputs))
	for i, t := range inputs {
		operands[i] = einsumOperand[T]{data: t.Data.([]T), shape: t.Shape, labels: labels[i]}
	}
	res := einsumRun(operands, out, sizes, threads)
	return &onnx.Tensor{Type: inputs[0].Type, Shape: slices.Clone(res.shape), Data: res.data}, nil
}

// VisitEinsum compiles Einsum.
func (b *builder) VisitEinsum(op *ops.Einsum) error {
	xs, err := b.inputs(op.In.Inputs)
	if err != nil {
		return err
	}
	eq, err := parseEinsum(op.Equation)
	if err != nil {
		if b.probing {
			return nil
		}
		return err
	}
	if !b.probing && len(eq.inputs) != len(xs) {
		return fmt.Errorf("einsum equation %q has %d input terms for %d inputs", op.Equation, len(eq.inputs), len(xs))
	}
	k := &einsumKernel{eq: eq, threads: b.e.threads}
	out := b.output(op.Out.Output)
	return b.emit(func(slots []onnx.Value) error {
		ts := make([]*onnx.Tensor, len(xs))
		for i, x := range xs {
			t, err := x.tensor(slots)
			if err != nil {
				return err
			}
			ts[i] = t
		}
		res, err := k.compute(ts)
		if err != nil {
			return err
		}
		out.set(slots, res)
		return nil
	})
}
