package autodiff

import (
	"slices"
	"strings"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

func init() {
	register(einsumGrad, "Einsum")
}

// einsumEllipsis marks "..." in a parsed term.
const einsumEllipsis = '.'

// einsumTerm parses one term of an equation into its labels, "..." as
// einsumEllipsis.
func einsumTerm(s string) ([]byte, bool) {
	var t []byte
	dots := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			t = append(t, c)
		case c == '.' && !dots && strings.HasPrefix(s[i:], "..."):
			dots = true
			t = append(t, einsumEllipsis)
			i += 2
		default:
			return nil, false
		}
	}
	return t, true
}

// einsumGrad: Y = einsum(X₀, X₁, ...), a sum over the labels not in the
// output of products of the operands, so
//
//	dXᵢ = einsum(dY, X_j (j ≠ i) → term of Xᵢ),
//
// the equation with dY's labels in the output's place and Xᵢ's term as
// the output. The ellipsis is spelled out with unused letters; a label
// that only Xᵢ has (summed over in the forward) is left out of the
// gradient's einsum and broadcast back after; a dim Xᵢ had broadcast
// (size 1) is summed over by leaving it out too, and a size-1 dim of
// another operand is squeezed away. A label repeated in Xᵢ's term (a
// diagonal) gets a fresh letter per repeat tied to the first by an
// identity matrix operand, which puts the gradient on the diagonal.
func einsumGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.Einsum)
	eq := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, op.Equation)
	lhs, rhs, explicit := strings.Cut(eq, "->")
	var terms [][]byte
	for _, s := range strings.Split(lhs, ",") {
		t, ok := einsumTerm(s)
		if !ok {
			b.fail("Einsum: cannot read the equation %q", op.Equation)
			return nil
		}
		terms = append(terms, t)
	}
	if len(terms) != len(n.Inputs) {
		b.fail("Einsum: %d terms for %d inputs", len(terms), len(n.Inputs))
		return nil
	}
	if b.opset < 12 {
		b.fail("the gradient of Einsum needs ai.onnx opset 12")
		return nil
	}
	used := map[byte]bool{}
	for _, c := range []byte(eq) {
		used[c] = true
	}
	fresh := func() byte {
		for _, c := range []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			if !used[c] {
				used[c] = true
				return c
			}
		}
		b.fail("Einsum: no letters left to spell out the equation %q", op.Equation)
		return 'a'
	}
	// Spell out the ellipsis: right-aligned letters E[maxE-k:] for an
	// operand whose ellipsis covers k dims.
	shapes := make([][]int64, len(terms))
	maxE := 0
	ell := make([]int, len(terms))
	for i, t := range terms {
		shapes[i] = b.shapeOf(n.Inputs[i])
		letters := len(t)
		if slices.Contains(t, einsumEllipsis) {
			letters--
			ell[i] = len(shapes[i]) - letters
		}
		if len(shapes[i]) != letters+ell[i] || ell[i] < 0 {
			b.fail("Einsum: input %d of shape %v for the term %q", i, shapes[i], t)
			return nil
		}
		maxE = max(maxE, ell[i])
	}
	if b.err != nil {
		return nil
	}
	eLetters := make([]byte, maxE)
	for i := range eLetters {
		eLetters[i] = fresh()
	}
	expand := func(t []byte, k int) []byte {
		var out []byte
		for _, c := range t {
			if c == einsumEllipsis {
				out = append(out, eLetters[maxE-k:]...)
			} else {
				out = append(out, c)
			}
		}
		return out
	}
	labels := make([][]byte, len(terms))
	count := map[byte]int{}
	size := map[byte]int64{}
	for i, t := range terms {
		labels[i] = expand(t, ell[i])
		for d, c := range labels[i] {
			count[c]++
			if s, ok := size[c]; !ok || s == 1 {
				size[c] = shapes[i][d]
			}
		}
	}
	var out []byte
	if explicit {
		t, ok := einsumTerm(rhs)
		if !ok {
			b.fail("Einsum: cannot read the equation %q", op.Equation)
			return nil
		}
		out = expand(t, maxE)
	} else {
		out = slices.Clone(eLetters)
		for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") {
			if count[c] == 1 && !slices.Contains(eLetters, c) {
				out = append(out, c)
			}
		}
	}
	g := dy[0]
	res := make([]string, len(terms))
	for i := range terms {
		if need[i] {
			res[i] = b.einsumOperandGrad(n, g, out, labels, shapes, size, i, fresh)
		}
	}
	return res
}

// einsumOperandGrad is the gradient of operand i (see einsumGrad).
func (b *builder) einsumOperandGrad(n *onnx.Node, g string, out []byte, labels [][]byte, shapes [][]int64,
	size map[byte]int64, i int, fresh func() byte) string {
	broadcast := func(j, d int) bool { return shapes[j][d] == 1 && size[labels[j][d]] != 1 }
	var ins []string
	var terms [][]byte
	have := map[byte]bool{}
	if len(out) > 0 {
		ins, terms = append(ins, g), append(terms, out)
		for _, c := range out {
			have[c] = true
		}
	}
	for j := range labels {
		if j == i {
			continue
		}
		var sq []int64
		var t []byte
		for d, c := range labels[j] {
			if broadcast(j, d) {
				sq = append(sq, int64(d))
				continue
			}
			t = append(t, c)
			have[c] = true
		}
		ins, terms = append(ins, b.squeeze(n.Inputs[j], sq...)), append(terms, t)
	}
	// Operand i's labels as the output, a fresh letter for each repeat
	// (tied to the first by an identity matrix); dims i broadcast and
	// labels no input has are left out.
	x := n.Inputs[i]
	xl := labels[i]
	letters := make([]byte, len(xl)) // 0: a dim operand i broadcast
	seen := map[byte]bool{}
	for d, c := range xl {
		if broadcast(i, d) {
			if slices.Index(xl, c) != d {
				b.fail("Einsum: a repeated label of size 1 in operand %d", i)
				return ""
			}
			continue
		}
		if seen[c] {
			nd := size[c]
			if nd < 0 {
				b.fail("Einsum: the diagonal of operand %d is along a free dim", i)
				return ""
			}
			f := fresh()
			ins, terms = append(ins, b.einsumEye(nd, b.typeOf(x))), append(terms, []byte{c, f})
			have[c], have[f] = true, true
			letters[d] = f
			continue
		}
		seen[c] = true
		letters[d] = c
	}
	var target []byte
	kept := make([]bool, len(xl))
	for d, c := range letters {
		if c != 0 && have[c] {
			target = append(target, c)
			kept[d] = true
		}
	}
	var r string
	switch {
	case len(ins) == 0:
		r = g
	case len(ins) == 1 && string(terms[0]) == string(target):
		r = ins[0]
	default:
		parts := make([]string, len(terms))
		for k, t := range terms {
			parts[k] = string(t)
		}
		r = b.op("Einsum", ins, attrString("equation", strings.Join(parts, ",")+"->"+string(target)))
	}
	if len(out) == 0 && len(ins) > 0 {
		// dY is a scalar: it was left out of the einsum.
		r = b.mul(r, g)
	}
	var axes []int64
	stretch := false
	for d, k := range kept {
		if !k {
			axes = append(axes, int64(d))
			stretch = stretch || !broadcast(i, d)
		}
	}
	r = b.unsqueeze(r, axes...)
	if stretch {
		r = b.op("Expand", []string{r, b.shapeValue(x)})
	}
	return r
}

// einsumEye is the d×d identity matrix of type dt.
func (b *builder) einsumEye(d int64, dt onnx.DataType) string {
	vals := make([]float64, d*d)
	for k := range d {
		vals[k*d+k] = 1
	}
	t := floatTensor(dt, vals)
	if t == nil {
		b.fail("no identity matrix of type %v can be made", dt)
		return ""
	}
	t.Shape = []int{int(d), int(d)}
	return b.op("Constant", nil, attrTensor("value", t))
}
