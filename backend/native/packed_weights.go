package native

import "github.com/deep500/deep500-go/backend/native/internal/gemm"

// Pre-packed weights: the weights of a Conv, Gemm or MatMul are constants
// of the network, yet the GEMM packs them into its micro-kernel's panels
// at every product (7–12% of a batch-1 inference of the small CNNs). In a
// network built for inference (backend.Options.Optimize), such a kernel
// packs its constant weight once, at its first run, into a gemm.Packed it
// keeps, and multiplies with that form afterwards.
//
// Only optimized networks do it: a network that trains updates its
// parameters in place, and would pack them again after every step. A
// weight can still change in an optimized network, through Feed (or
// UpdateParams, on one without fusions); the executor then bumps the
// slot's version (executor.changed), and the kernel packs again at its
// next run.
//
// Measured on the shared 2-core AMD EPYC (Zen 4), batch 1, one thread,
// Optimize on, as the processor time of the inference's thread (median of
// six interleaved runs of 20 inferences each), before → after: resnet8
// 0.61 → 0.57 ms, resnet20 1.93 → 1.76, mobilenet_v3_small 4.82 → 3.97,
// squeezenet1_1 12.5 → 11.4, resnet18 57.4 → 52.3 (7–18% less).

// constantWeight is the slot of a weight operand that is a constant of an
// optimized network, whose version says when it last changed.
type constantWeight struct {
	e    *executor
	slot int
}

// constantWeight returns the weight operand name as a constantWeight when
// the network is optimized and name is one of its constants (not a graph
// input, which every run may feed); nil otherwise, and the kernel packs
// the operand at every product as before.
func (b *builder) constantWeight(name string) *constantWeight {
	if !b.e.optimized || name == "" {
		return nil
	}
	if _, ok := b.e.constant(name); !ok {
		return nil
	}
	return &constantWeight{e: b.e, slot: b.e.slotOf[name]}
}

// version is the number of times the weight was replaced or handed out
// for changing in place.
func (w *constantWeight) version() uint64 {
	if w.slot < len(w.e.versions) {
		return w.e.versions[w.slot]
	}
	return 0
}

// changed records that the value in slot was replaced or may be changed
// in place, so that kernels holding a packed copy of it pack it again.
func (e *executor) changed(slot int) {
	for len(e.versions) <= slot {
		e.versions = append(e.versions, 0)
	}
	e.versions[slot]++
}

// packLayout says how a weight tensor is read as one or more matrices
// (a convolution's groups): count matrices of rows x cols, one after the
// other, each with leading dimension ld, transposed when trans is set;
// the left operand of the product when left is set, else the right.
type packLayout struct {
	left                  bool
	count, rows, cols, ld int
	trans                 bool
}

// packedWeight is the packed form of a constant weight of one element
// type, and what it was packed from.
type packedWeight[T floatElem] struct {
	src  *constantWeight
	mats []gemm.Packed[T]

	valid   bool
	version uint64
	first   *T // the weight's data when packed: its first element and length
	size    int
	layout  packLayout

	// direct is the weight repacked for the direct 3×3 kernels
	// (convDirect3x3), valid like mats but for its own layout.
	direct        []float32
	directValid   bool
	directVersion uint64
	directFirst   *float32
	directSize    int
}

// newPackedWeight returns the packed form for a weight operand name, or
// nil when it is not a constant of an optimized network.
func newPackedWeight[T floatElem](b *builder, name string) *packedWeight[T] {
	src := b.constantWeight(name)
	if src == nil {
		return nil
	}
	return &packedWeight[T]{src: src}
}

// matrices returns w's matrices, laid out as l says, in their packed
// form: packed again when w or its layout differs from what was packed
// (the first run, a Feed of the weight, other shapes), else as they are.
// Packing allocates only when the buffers must grow.
func (p *packedWeight[T]) matrices(w []T, l packLayout) []gemm.Packed[T] {
	if len(w) == 0 {
		return nil
	}
	v := p.src.version()
	if p.valid && p.version == v && p.first == &w[0] && p.size == len(w) && p.layout == l {
		return p.mats
	}
	p.valid = false
	for len(p.mats) < l.count {
		p.mats = append(p.mats, gemm.Packed[T]{})
	}
	step := l.rows * l.cols
	for g := range l.count {
		m := gemm.NewMatrix(w[g*step:(g+1)*step], l.ld, l.trans)
		if l.left {
			p.mats[g].PackA(l.rows, l.cols, m)
		} else {
			p.mats[g].PackB(l.rows, l.cols, m)
		}
	}
	p.valid, p.version, p.first, p.size, p.layout = true, v, &w[0], len(w), l
	return p.mats[:l.count]
}

// weightOperands holds the packed forms of the operands of a Gemm or
// MatMul that are constants (nil for the others), per element type.
type weightOperands struct {
	a32, b32 *packedWeight[float32]
	a64, b64 *packedWeight[float64]
}

// newWeightOperands returns the packed forms for the operands a and b of
// a product.
func newWeightOperands(b *builder, a, bName string) weightOperands {
	return weightOperands{
		a32: newPackedWeight[float32](b, a), b32: newPackedWeight[float32](b, bName),
		a64: newPackedWeight[float64](b, a), b64: newPackedWeight[float64](b, bName),
	}
}

// weightOperandsOf returns w's packed forms of element type T.
func weightOperandsOf[T floatElem](w *weightOperands) (a, b *packedWeight[T]) {
	if pa, ok := any(w.a32).(*packedWeight[T]); ok {
		return pa, any(w.b32).(*packedWeight[T])
	}
	return any(w.a64).(*packedWeight[T]), any(w.b64).(*packedWeight[T])
}

// packedOperand returns the matrix of the left (or right) operand of an
// m x n x k product as packed by pw, or nil when there is none to use:
// pw is nil (the operand is not a constant), or the product has so few
// rows that the GEMM reads its operands as given (gemm.FewRowsMax), in
// which case packing a copy would only cost memory.
func packedOperand[T floatElem](pw *packedWeight[T], m int, w []T, l packLayout) *gemm.Packed[T] {
	if pw == nil || m <= gemm.FewRowsMax {
		return nil
	}
	if mats := pw.matrices(w, l); mats != nil {
		return &mats[0]
	}
	return nil
}
