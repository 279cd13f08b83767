package autodiff

import (
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

func init() {
	register(matMulGrad, "MatMul")
	register(gemmGrad, "Gemm")
}

// matMulGrad: Y = A B with NumPy's rules (a 1-D operand is promoted to a
// matrix and the added axis removed again; batch axes broadcast), so
// dA = dY Bᵀ and dB = Aᵀ dY, each summed back over the batch axes its
// operand was broadcast along.
func matMulGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	a, c, g := n.Inputs[0], n.Inputs[1], dy[0]
	as, cs, gs := b.shapeOf(a), b.shapeOf(c), b.shapeOf(g)
	if b.err != nil {
		return nil
	}
	// Promote 1-D operands to matrices, and dY with them.
	a2, c2, g2 := a, c, g
	if len(as) == 1 {
		a2 = b.unsqueeze(a, 0)
		b.info[a2] = Info{Type: b.typeOf(a), Shape: []int64{1, as[0]}}
	}
	if len(cs) == 1 {
		c2 = b.unsqueeze(c, 1)
		b.info[c2] = Info{Type: b.typeOf(c), Shape: []int64{cs[0], 1}}
	}
	r := int64(len(gs))
	switch {
	case len(as) == 1 && len(cs) == 1:
		g2 = b.unsqueeze(g, 0, 1)
	case len(as) == 1:
		g2 = b.unsqueeze(g, r-1)
	case len(cs) == 1:
		g2 = b.unsqueeze(g, r)
	}
	if g2 != g {
		b.info[g2] = Info{Type: b.typeOf(g), Shape: matMulShape(b.shapeOf(a2), b.shapeOf(c2))}
	}
	out := make([]string, 2)
	if need[0] {
		da := b.op("MatMul", []string{g2, b.transposeLast2(c2)})
		b.info[da] = Info{Type: b.typeOf(a), Shape: matMulShape(b.shapeOf(g2), swapLast2(b.shapeOf(c2)))}
		out[0] = b.reshapeLike(b.unbroadcast(da, a2), a)
	}
	if need[1] {
		dc := b.op("MatMul", []string{b.transposeLast2(a2), g2})
		b.info[dc] = Info{Type: b.typeOf(c), Shape: matMulShape(swapLast2(b.shapeOf(a2)), b.shapeOf(g2))}
		out[1] = b.reshapeLike(b.unbroadcast(dc, c2), c)
	}
	return out
}

// transposeLast2 swaps the last two axes of x (rank ≥ 2).
func (b *builder) transposeLast2(x string) string {
	r := len(b.shapeOf(x))
	perm := make([]int64, r)
	for i := range perm {
		perm[i] = int64(i)
	}
	perm[r-1], perm[r-2] = perm[r-2], perm[r-1]
	t := b.transpose(x, perm...)
	b.info[t] = Info{Type: b.typeOf(x), Shape: swapLast2(b.shapeOf(x))}
	return t
}

func swapLast2(s []int64) []int64 {
	c := append([]int64{}, s...)
	c[len(c)-1], c[len(c)-2] = c[len(c)-2], c[len(c)-1]
	return c
}

// matMulShape is the shape of the product of operands of rank ≥ 2.
func matMulShape(a, c []int64) []int64 {
	ra, rc := len(a), len(c)
	r := max(ra, rc)
	out := make([]int64, r)
	for i := 0; i < r-2; i++ {
		da, dc := int64(1), int64(1)
		if j := i - (r - ra); j >= 0 {
			da = a[j]
		}
		if j := i - (r - rc); j >= 0 {
			dc = c[j]
		}
		out[i] = max(da, dc)
		if da == -1 || dc == -1 {
			out[i] = -1
		}
	}
	out[r-2], out[r-1] = a[ra-2], c[rc-1]
	return out
}

// gemmGrad: Y = α A' B' + β C with A' = A or Aᵀ, B' = B or Bᵀ:
// dA' = α dY B'ᵀ, dB' = α A'ᵀ dY, dC = β dY summed to C's shape.
func gemmGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.Gemm)
	a, c, g := op.In.A, op.In.B, dy[0]
	dt := b.typeOf(g)
	out := make([]string, len(n.Inputs))
	scaled := g
	if op.Alpha != 1 && (need[0] || need[1]) {
		scaled = b.mul(g, b.scalar(float64(op.Alpha), dt))
		b.setInfo(scaled, g)
	}
	// Gemm-1..6 has a broadcast attribute; later versions broadcast C
	// unidirectionally, which unbroadcast handles too.
	if need[0] {
		// dA' = g B'ᵀ; dA = dA' or its transpose.
		if op.TransA == 0 {
			out[0] = b.gemm(scaled, c, 0, 1-op.TransB)
		} else {
			out[0] = b.gemm(c, scaled, op.TransB, 1)
		}
	}
	if need[1] {
		if op.TransB == 0 {
			out[1] = b.gemm(a, scaled, 1-op.TransA, 0)
		} else {
			out[1] = b.gemm(scaled, a, 1, op.TransA)
		}
	}
	if len(n.Inputs) > 2 && need[2] && op.In.C != "" {
		gc := g
		if op.Beta != 1 {
			gc = b.mul(g, b.scalar(float64(op.Beta), dt))
			b.setInfo(gc, g)
		}
		out[2] = b.unbroadcast(gc, op.In.C)
	}
	return out
}

// gemm is x' y' for x' = x or xᵀ, y' = y or yᵀ. Before opset 11 Gemm
// requires C: a broadcast scalar 0.
func (b *builder) gemm(x, y string, transA, transB int64) string {
	attrs := []*onnx.Attribute{attrInt("transA", transA), attrInt("transB", transB)}
	if b.opset >= 11 {
		return b.op("Gemm", []string{x, y}, attrs...)
	}
	if b.opset < 7 {
		attrs = append(attrs, attrInt("broadcast", 1))
	}
	return b.op("Gemm", []string{x, y, b.scalar(0, b.typeOf(x))}, attrs...)
}
