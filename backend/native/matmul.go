package native

import (
	"fmt"
	"math"
	"runtime"

	"github.com/deep500/deep500-go/backend/native/internal/gemm"
	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// matmulKernel computes MatMul with numpy's semantics: the last two axes are
// matrices, the leading ones are batch axes that broadcast; a 1-D first
// operand is a row vector and a 1-D second operand a column vector, and the
// added axis is removed from the result.
type matmulKernel struct {
	threads int
	out     outputBuffer
	// plan is planMatMul's answer for the operand shapes planA, planB,
	// kept while the shapes repeat.
	plan         matmulPlan
	planA, planB []int
	planned      bool
	task32       gemmBatchTask[float32]
	task64       gemmBatchTask[float64]
	wideA        float32Scratch
	wideB        float32Scratch
	wideOut      float32Scratch
	// weights packs an operand that is a constant (packed_weights.go).
	weights weightOperands
}

// planFor returns the plan of a product of operands of these shapes,
// planning again only when they differ from the last call's.
func (k *matmulKernel) planFor(aShape, bShape []int) (*matmulPlan, error) {
	if !k.planned || !sameShape(k.planA, aShape) || !sameShape(k.planB, bShape) {
		p, err := planMatMul(aShape, bShape)
		if err != nil {
			k.planned = false
			return nil, err
		}
		k.plan, k.planned = p, true
		k.planA, k.planB = append(k.planA[:0], aShape...), append(k.planB[:0], bShape...)
	}
	return &k.plan, nil
}

// matmulPlan is the geometry of one MatMul call.
type matmulPlan struct {
	m, n, k  int
	outShape []int
	// aOffsets, bOffsets: where each batch's matrices start, in elements.
	aOffsets, bOffsets []int
}

func planMatMul(aShape, bShape []int) (matmulPlan, error) {
	var p matmulPlan
	if len(aShape) == 0 || len(bShape) == 0 {
		return p, fmt.Errorf("MatMul operands must have rank 1 or more, got %v and %v", aShape, bShape)
	}
	a, b := aShape, bShape
	if len(a) == 1 {
		a = []int{1, a[0]}
	}
	if len(b) == 1 {
		b = []int{b[0], 1}
	}
	p.m, p.k = a[len(a)-2], a[len(a)-1]
	if kb := b[len(b)-2]; kb != p.k {
		return p, fmt.Errorf("MatMul shapes %v and %v do not agree (inner dimensions %d and %d)", aShape, bShape, p.k, kb)
	}
	p.n = b[len(b)-1]
	aBatch, bBatch := a[:len(a)-2], b[:len(b)-2]
	batch, err := broadcastShapes(aBatch, bBatch)
	if err != nil {
		return p, fmt.Errorf("MatMul batch dimensions of %v and %v: %w", aShape, bShape, err)
	}
	p.outShape = append([]int{}, batch...)
	if len(aShape) > 1 {
		p.outShape = append(p.outShape, p.m)
	}
	if len(bShape) > 1 {
		p.outShape = append(p.outShape, p.n)
	}
	count := onnx.NumElements(batch)
	p.aOffsets, p.bOffsets = make([]int, 0, count), make([]int, 0, count)
	if count == 0 {
		return p, nil
	}
	aStrides, bStrides := broadcastStrides(aBatch, batch), broadcastStrides(bBatch, batch)
	walk := newStridedWalk(batch, aStrides, bStrides)
	rowLen, sa, sb := walk.rowLen(), walk.rowStride(0), walk.rowStride(1)
	walk.forEachRow(func(_ int, off walkOffsets) {
		for i := range rowLen {
			p.aOffsets = append(p.aOffsets, (off[0]+i*sa)*p.m*p.k)
			p.bOffsets = append(p.bOffsets, (off[1]+i*sb)*p.k*p.n)
		}
	})
	return p, nil
}

func (k *matmulKernel) compute(a, b *onnx.Tensor) (*onnx.Tensor, error) {
	if a.Type != b.Type {
		return nil, fmt.Errorf("operands have different types %v and %v", a.Type, b.Type)
	}
	if err := checkStorage(a); err != nil {
		return nil, err
	}
	p, err := k.planFor(a.Shape, b.Shape)
	if err != nil {
		return nil, err
	}
	out := k.out.tensor(a.Type, p.outShape)
	switch ad := a.Data.(type) {
	case []float32:
		batchedGemmFused(p, ad, b.Data.([]float32), out.Data.([]float32), k.threads, &k.task32, nil, nil, nil, &k.weights)
	case []float64:
		batchedGemmFused(p, ad, b.Data.([]float64), out.Data.([]float64), k.threads, &k.task64, nil, nil, nil, &k.weights)
	case []onnx.F16, []onnx.BF16:
		wa, _ := widenToFloat32(k.wideA.get(a.Len()), a.Data)
		wb, _ := widenToFloat32(k.wideB.get(b.Len()), b.Data)
		wout := k.wideOut.get(out.Len())
		batchedGemm(p, wa, wb, wout, k.threads, &k.task32)
		if err := narrowFromFloat32(out.Data, wout); err != nil {
			return nil, err
		}
	case []int32:
		batchedGemmSimple(*p, ad, b.Data.([]int32), out.Data.([]int32))
	case []int64:
		batchedGemmSimple(*p, ad, b.Data.([]int64), out.Data.([]int64))
	case []uint32:
		batchedGemmSimple(*p, ad, b.Data.([]uint32), out.Data.([]uint32))
	case []uint64:
		batchedGemmSimple(*p, ad, b.Data.([]uint64), out.Data.([]uint64))
	default:
		return nil, network.Unsupportedf("MatMul of %v tensors", a.Type)
	}
	return out, nil
}

// batchedGemm multiplies every batch's matrices. Products with enough
// output tiles to occupy every thread use the parallel GEMM one after the
// other; smaller ones are instead spread over the workers (par.Spread),
// one whole product each, through task: the caller's, kept between runs so
// that handing it to the workers allocates nothing.
func batchedGemm[T floatElem](p *matmulPlan, a, b, c []T, threads int, task *gemmBatchTask[T]) {
	batchedGemmFused(p, a, b, c, threads, task, nil, nil, nil, nil)
}

// batchedGemmFused is batchedGemm ending each product in an epilogue:
// c = act(a·b + colBias + residual), colBias (nil: none) one value per
// column, residual (nil: none) laid out like c, act nil for none. An
// operand that is one matrix (not batched) and a constant of weights (nil:
// none) is multiplied in its packed form.
func batchedGemmFused[T floatElem](p *matmulPlan, a, b, c []T, threads int, task *gemmBatchTask[T], colBias, residual []T, act *fusedActivation, weights *weightOperands) {
	batches := len(p.aOffsets)
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	*task = gemmBatchTask[T]{p: p, a: a, b: b, c: c, colBias: colBias, residual: residual, act: act}
	if weights != nil {
		pa, pb := weightOperandsOf[T](weights)
		if len(a) == p.m*p.k {
			task.packedA = packedOperand(pa, p.m, a, packLayout{left: true, count: 1, rows: p.m, cols: p.k, ld: p.k})
		}
		if len(b) == p.k*p.n {
			task.packedB = packedOperand(pb, p.m, b, packLayout{count: 1, rows: p.k, cols: p.n, ld: p.n})
		}
	}
	tiles := gemm.Tiles(p.m, p.n)
	if batches == 1 || threads == 1 || tiles >= threads {
		for i := range batches {
			task.one(i, threads)
		}
	} else {
		task.workers = min(threads, batches)
		par.Spread(task.workers, task)
	}
	*task = gemmBatchTask[T]{} // hold no tensors between runs
}

// gemmBatchTask is batchedGemmFused's work: the products and their
// epilogue; for par.Spread, worker w multiplies batches w, w+workers, ...
// on one thread each.
type gemmBatchTask[T floatElem] struct {
	p                 *matmulPlan
	a, b, c           []T
	colBias, residual []T
	act               *fusedActivation
	packedA, packedB  *gemm.Packed[T] // an operand that is one constant matrix, packed; or nil
	workers           int
}

func (t *gemmBatchTask[T]) Work(w int) {
	for i := w; i < len(t.p.aOffsets); i += t.workers {
		t.one(i, 1)
	}
}

// one multiplies batch i's matrices on up to threads goroutines.
func (t *gemmBatchTask[T]) one(i, threads int) {
	p := t.p
	var ep *gemm.Epilogue[T]
	epilogue := epilogueOf[T](t.act)
	if t.colBias != nil || t.residual != nil || t.act != nil {
		epilogue.ColBias = t.colBias
		if t.residual != nil {
			epilogue.Residual = t.residual[i*p.m*p.n:]
		}
		ep = &epilogue
	}
	am, bm := gemm.NewMatrix(t.a[p.aOffsets[i]:], p.k, false), gemm.NewMatrix(t.b[p.bOffsets[i]:], p.n, false)
	if t.packedA != nil {
		am = t.packedA.Matrix() // one matrix: every offset is 0
	}
	if t.packedB != nil {
		bm = t.packedB.Matrix()
	}
	gemm.MultiplyFused(p.m, p.n, p.k, 1, am, bm, 0, t.c[i*p.m*p.n:], p.n, threads, ep)
}

// computeFused is compute followed by the epilogue of a fusion: act(a·b +
// addends), where the addends are the other operands of the Adds that
// follow: at most a bias (one value per column, first) and a residual (of
// the output's shape). It reports false, computing nothing, when the
// fused kernel does not apply to these tensors (neither float32 nor
// float64, a vector operand, addends that are not a bias then a
// residual): the caller then runs the nodes one by one.
func (k *matmulKernel) computeFused(a, b *onnx.Tensor, addends []*onnx.Tensor, act *fusedActivation) (*onnx.Tensor, bool, error) {
	if a.Type != onnx.Float && a.Type != onnx.Double || b.Type != a.Type || len(a.Shape) < 2 || len(b.Shape) < 2 {
		return nil, false, nil
	}
	if err := checkStorage(a); err != nil {
		return nil, false, err
	}
	p, err := k.planFor(a.Shape, b.Shape)
	if err != nil {
		return nil, false, err
	}
	var bias, residual *onnx.Tensor
	for i, t := range addends {
		switch {
		case t.Type != a.Type || checkStorage(t) != nil:
			return nil, false, nil
		case i == 0 && len(t.Shape) == 1 && t.Shape[0] == p.n:
			bias = t
		case residual == nil && sameShape(t.Shape, p.outShape) && (bias != nil || len(addends) == 1):
			residual = t
		default:
			return nil, false, nil
		}
	}
	out := k.out.tensor(a.Type, p.outShape)
	switch ad := a.Data.(type) {
	case []float32:
		batchedGemmFused(p, ad, b.Data.([]float32), out.Data.([]float32), k.threads, &k.task32, optionalData[float32](bias), optionalData[float32](residual), act, &k.weights)
	case []float64:
		batchedGemmFused(p, ad, b.Data.([]float64), out.Data.([]float64), k.threads, &k.task64, optionalData[float64](bias), optionalData[float64](residual), act, &k.weights)
	}
	return out, true, nil
}

func batchedGemmSimple[T numeric](p matmulPlan, a, b, c []T) {
	for i := range p.aOffsets {
		gemm.MultiplySimple(p.m, p.n, p.k, 1, a[p.aOffsets[i]:], p.k, false, b[p.bOffsets[i]:], p.n, false, 0, c[i*p.m*p.n:], p.n)
	}
}

// gemmKernel computes Gemm: Y = alpha*op(A)*op(B) + beta*C, with A and B
// 2-D, op a transpose when transA/transB is set, and C (optional from
// version 11) broadcast to [M, N] — from version 7 by numpy's rules, before
// that only when the broadcast attribute allows it.
type gemmKernel struct {
	alpha, beta    float32
	transA, transB bool
	legacyExactC   bool // version < 7 with broadcast = 0: C must be [M, N]
	threads        int
	out            outputBuffer
	shape          [2]int // the output shape, in the kernel so as not to allocate it
	wideA          float32Scratch
	wideB          float32Scratch
	wideOut        float32Scratch
	// weights packs an operand that is a constant (packed_weights.go).
	weights weightOperands
}

func (k *gemmKernel) compute(a, b, c *onnx.Tensor) (*onnx.Tensor, error) {
	return k.computeWith(a, b, c, nil, nil)
}

// computeFused is compute followed by the epilogue of a fusion: act(Gemm +
// residual). It reports false, computing nothing, when the fused kernel
// does not apply to these tensors (neither float32 nor float64, or a
// residual of another type or shape, which the separate Add would
// broadcast): the caller then runs the nodes one by one.
func (k *gemmKernel) computeFused(a, b, c, residual *onnx.Tensor, act *fusedActivation) (*onnx.Tensor, bool, error) {
	if a.Type != onnx.Float && a.Type != onnx.Double {
		return nil, false, nil
	}
	m, n, _, err := k.shapes(a, b, c)
	if err != nil {
		return nil, false, err
	}
	if residual != nil && (residual.Type != a.Type || !sameShape(residual.Shape, []int{m, n}) || checkStorage(residual) != nil) {
		return nil, false, nil
	}
	out, err := k.computeWith(a, b, c, residual, act)
	return out, err == nil, err
}

// shapes checks Gemm's operands and returns the product's sizes.
func (k *gemmKernel) shapes(a, b, c *onnx.Tensor) (m, n, ka int, err error) {
	if a.Type != b.Type || (c != nil && c.Type != a.Type) {
		return 0, 0, 0, fmt.Errorf("operands have different types")
	}
	if err := checkStorage(a); err != nil {
		return 0, 0, 0, err
	}
	if len(a.Shape) != 2 || len(b.Shape) != 2 {
		return 0, 0, 0, fmt.Errorf("Gemm operands must be 2-D, got %v and %v", a.Shape, b.Shape)
	}
	m, ka = a.Shape[0], a.Shape[1]
	if k.transA {
		m, ka = ka, m
	}
	kb, n := b.Shape[0], b.Shape[1]
	if k.transB {
		kb, n = n, kb
	}
	if ka != kb {
		return 0, 0, 0, fmt.Errorf("Gemm shapes %v and %v (transA=%v, transB=%v) do not agree: inner dimensions %d and %d",
			a.Shape, b.Shape, k.transA, k.transB, ka, kb)
	}
	return m, n, ka, nil
}

// computeWith computes Gemm, then adds residual (nil: none, else float32
// or float64 of the output's shape) and applies act (nil: none). A C that
// is one value per column with beta 1 (a layer's bias) is added in the
// GEMM's epilogue instead of filling the output first.
func (k *gemmKernel) computeWith(a, b, c, residual *onnx.Tensor, act *fusedActivation) (*onnx.Tensor, error) {
	m, n, ka, err := k.shapes(a, b, c)
	if err != nil {
		return nil, err
	}
	k.shape = [2]int{m, n}
	outShape := k.shape[:]
	out := k.out.tensor(a.Type, outShape)
	beta := k.beta
	var colBias *onnx.Tensor
	switch {
	case c == nil:
		beta = 0
	case beta == 1 && !k.legacyExactC && (a.Type == onnx.Float || a.Type == onnx.Double) && c.Len() == n &&
		(len(c.Shape) == 1 || len(c.Shape) == 2 && c.Shape[0] == 1):
		colBias, beta = c, 0
	default:
		if err := k.fillWithC(out, c, outShape); err != nil {
			return nil, err
		}
	}
	lda, ldb := a.Shape[1], b.Shape[1]
	if a.Type.IsInteger() && (k.alpha != float32(math.Trunc(float64(k.alpha))) || beta != float32(math.Trunc(float64(beta)))) {
		// ONNX's reference scales in floating point and casts back; the
		// integer loop would truncate alpha and beta first and differ.
		return nil, network.Unsupportedf("Gemm of %v with fractional alpha %v or beta %v", a.Type, k.alpha, beta)
	}
	switch ad := a.Data.(type) {
	case []float32:
		ep, ok := gemmEpilogue[float32](colBias, residual, act)
		am, bm := gemmOperands(k, m, n, ka, ad, lda, b.Data.([]float32), ldb)
		gemm.MultiplyFused(m, n, ka, k.alpha, am, bm, beta, out.Data.([]float32), n, k.threads, orNil(&ep, ok))
	case []float64:
		ep, ok := gemmEpilogue[float64](colBias, residual, act)
		am, bm := gemmOperands(k, m, n, ka, ad, lda, b.Data.([]float64), ldb)
		gemm.MultiplyFused(m, n, ka, float64(k.alpha), am, bm, float64(beta), out.Data.([]float64), n, k.threads, orNil(&ep, ok))
	case []onnx.F16, []onnx.BF16:
		wa, _ := widenToFloat32(k.wideA.get(a.Len()), a.Data)
		wb, _ := widenToFloat32(k.wideB.get(b.Len()), b.Data)
		wout := k.wideOut.get(out.Len())
		if beta != 0 {
			widenToFloat32(wout, out.Data)
		}
		gemm.Multiply(m, n, ka, k.alpha, gemm.NewMatrix(wa, lda, k.transA), gemm.NewMatrix(wb, ldb, k.transB), beta, wout, n, k.threads)
		if err := narrowFromFloat32(out.Data, wout); err != nil {
			return nil, err
		}
	case []int32:
		gemm.MultiplySimple(m, n, ka, int32(k.alpha), ad, lda, k.transA, b.Data.([]int32), ldb, k.transB, int32(beta), out.Data.([]int32), n)
	case []int64:
		gemm.MultiplySimple(m, n, ka, int64(k.alpha), ad, lda, k.transA, b.Data.([]int64), ldb, k.transB, int64(beta), out.Data.([]int64), n)
	case []uint32:
		gemm.MultiplySimple(m, n, ka, uint32(k.alpha), ad, lda, k.transA, b.Data.([]uint32), ldb, k.transB, uint32(beta), out.Data.([]uint32), n)
	case []uint64:
		gemm.MultiplySimple(m, n, ka, uint64(k.alpha), ad, lda, k.transA, b.Data.([]uint64), ldb, k.transB, uint64(beta), out.Data.([]uint64), n)
	default:
		return nil, network.Unsupportedf("Gemm of %v tensors", a.Type)
	}
	return out, nil
}

// gemmOperands returns the operands of Gemm k's m x n x ka product, a
// (leading dimension lda) and b (ldb), each in its packed form when it is
// a constant.
func gemmOperands[T floatElem](k *gemmKernel, m, n, ka int, a []T, lda int, b []T, ldb int) (gemm.Matrix[T], gemm.Matrix[T]) {
	am, bm := gemm.NewMatrix(a, lda, k.transA), gemm.NewMatrix(b, ldb, k.transB)
	pa, pb := weightOperandsOf[T](&k.weights)
	if packed := packedOperand(pa, m, a, packLayout{left: true, count: 1, rows: m, cols: ka, ld: lda, trans: k.transA}); packed != nil {
		am = packed.Matrix()
	}
	if packed := packedOperand(pb, m, b, packLayout{count: 1, rows: ka, cols: n, ld: ldb, trans: k.transB}); packed != nil {
		bm = packed.Matrix()
	}
	return am, bm
}

// gemmEpilogue is the epilogue of a Gemm: its column bias, the residual
// and the activation (each nil when absent), and whether it has any step.
func gemmEpilogue[T floatElem](colBias, residual *onnx.Tensor, act *fusedActivation) (gemm.Epilogue[T], bool) {
	ep := epilogueOf[T](act)
	ep.ColBias, ep.Residual = optionalData[T](colBias), optionalData[T](residual)
	return ep, colBias != nil || residual != nil || act != nil
}

// orNil returns &ep when ok, else nil.
func orNil[T floatElem](ep *gemm.Epilogue[T], ok bool) *gemm.Epilogue[T] {
	if !ok {
		return nil
	}
	return ep
}

// fillWithC copies C, broadcast to [M, N], into the output, which the GEMM
// then scales by beta and accumulates into.
func (k *gemmKernel) fillWithC(out, c *onnx.Tensor, outShape []int) error {
	if k.legacyExactC && (len(c.Shape) != 2 || c.Shape[0] != outShape[0] || c.Shape[1] != outShape[1]) {
		return fmt.Errorf("C has shape %v, but broadcast is 0 so it must be %v", c.Shape, outShape)
	}
	// Fixed arrays: the output is 2-D, and C must broadcast to it.
	var fullInline, outStrides, cStrides [2]int
	full, err := broadcastShapesInto(fullInline[:0], c.Shape, outShape)
	if err != nil || len(full) != 2 || full[0] != outShape[0] || full[1] != outShape[1] {
		return fmt.Errorf("C of shape %v does not broadcast to the output shape %v", c.Shape, outShape)
	}
	outStrides = [2]int{outShape[1], 1}
	fillBroadcastStrides(cStrides[:], c.Shape, outShape)
	return stridedCopy(out.Data, stridedView{0, outStrides[:]}, c.Data, stridedView{0, cStrides[:]}, outShape)
}

// VisitMatMul compiles MatMul.
func (b *builder) VisitMatMul(op *ops.MatMul) error {
	x, err := b.input(op.In.A)
	if err != nil {
		return err
	}
	y, err := b.input(op.In.B)
	if err != nil {
		return err
	}
	out := b.output(op.Out.Y)
	k := &matmulKernel{threads: b.e.threads, weights: newWeightOperands(b, op.In.A, op.In.B)}
	return b.emit(binaryTensorKernel(x, y, out, k.compute))
}

// VisitGemm compiles Gemm. C is required before version 11; before
// version 7 it broadcasts only when the broadcast attribute is 1.
func (b *builder) VisitGemm(op *ops.Gemm) error {
	x, err := b.input(op.In.A)
	if err != nil {
		return err
	}
	y, err := b.input(op.In.B)
	if err != nil {
		return err
	}
	since := op.SinceVersion()
	c, err := b.optionalInput(op.In.C)
	if err != nil {
		return err
	}
	if since < 11 && !c.present() && !b.probing {
		return fmt.Errorf("input C is required before version 11")
	}
	for _, flag := range []struct {
		name  string
		value int64
	}{{"transA", op.TransA}, {"transB", op.TransB}, {"broadcast", op.Broadcast}} {
		if flag.value != 0 && flag.value != 1 {
			return fmt.Errorf("attribute %s must be 0 or 1, got %d", flag.name, flag.value)
		}
	}
	out := b.output(op.Out.Y)
	k := b.newGemmKernel(op)
	return b.emit(tensorsKernel([]valueRef{x, y, c}, out, func(ts []*onnx.Tensor) (*onnx.Tensor, error) {
		return k.compute(ts[0], ts[1], ts[2])
	}))
}

// newGemmKernel makes the kernel of a Gemm node from its attributes.
func (b *builder) newGemmKernel(op *ops.Gemm) *gemmKernel {
	return &gemmKernel{
		alpha: op.Alpha, beta: op.Beta,
		transA: op.TransA == 1, transB: op.TransB == 1,
		legacyExactC: op.SinceVersion() < 7 && op.Broadcast == 0,
		threads:      b.e.threads,
		weights:      newWeightOperands(b, op.In.A, op.In.B),
	}
}
