package native

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/deep500/deep500-go/backend/native/internal/conv"
	"github.com/deep500/deep500-go/backend/native/internal/gemm"
	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Conv runs as one GEMM per (image, group): the input is rearranged into
// columns (im2col, conv_geometry.go) and multiplied by the group's filters,
// W[M/g, C/g*prod(k)] x col[C/g*prod(k), prod(out)], straight into the
// output. A 1x1 kernel with unit strides and no padding skips im2col (the
// input already is the column matrix). Large products use every core
// inside the GEMM; many small ones (depthwise convolutions, small images in
// a batch) are spread over goroutines whole instead. Depthwise 3×3 and 5×5
// windows of float32 skip both for the kernels of conv_depthwise.go.

// convShapes are the sizes of one Conv call, checked against each other.
type convShapes struct {
	n, c, m, group int
	geom           *convGeom

	// The depthwise kernels' layout and plane kernel for these shapes
	// and the implementation dwImpl (nil: not made yet), made by
	// convDepthwise on first use.
	dwImpl   *conv.DepthwiseImpl
	dwLayout conv.DepthwiseLayout
	dwOK     bool
	dwKernel conv.DepthwisePlaneFunc
}

// checkConvShapes validates X [N, C, D...] and W [M, C/group, k...] (or,
// for ConvTranspose, W [C, M/group, k...] with transpose set) against the
// attributes, and computes the window geometry.
func checkConvShapes(attrs *convWindowAttrs, kernelShape []int64, group int64, xShape, wShape []int, transpose bool) (*convShapes, error) {
	if len(xShape) < 3 {
		return nil, fmt.Errorf("input X has shape %v; want [N, C, D1, ...] with at least one spatial dimension", xShape)
	}
	if len(wShape) != len(xShape) {
		return nil, fmt.Errorf("weight W has shape %v; want rank %d like X %v", wShape, len(xShape), xShape)
	}
	if group < 1 || group > convMaxElements {
		return nil, fmt.Errorf("group %d must be positive", group)
	}
	g := int(group)
	kernel := wShape[2:]
	if len(kernelShape) != 0 {
		if len(kernelShape) != len(kernel) {
			return nil, fmt.Errorf("kernel_shape %v does not match weight shape %v", kernelShape, wShape)
		}
		for i, k := range kernelShape {
			if int64(kernel[i]) != k {
				return nil, fmt.Errorf("kernel_shape %v does not match weight shape %v", kernelShape, wShape)
			}
		}
	}
	s := &convShapes{n: xShape[0], c: xShape[1], group: g}
	if transpose {
		if wShape[0] != s.c {
			return nil, fmt.Errorf("weight W %v: first dimension must equal the %d input channels", wShape, s.c)
		}
		s.m = wShape[1] * g
	} else {
		s.m = wShape[0]
		if wShape[1]*g != s.c {
			return nil, fmt.Errorf("weight W %v: %d channels per group x group %d != %d input channels", wShape, wShape[1], g, s.c)
		}
		if s.m%g != 0 {
			return nil, fmt.Errorf("%d output channels are not divisible by group %d", s.m, g)
		}
	}
	if s.c%g != 0 {
		return nil, fmt.Errorf("%d input channels are not divisible by group %d", s.c, g)
	}
	if !transpose {
		var err error
		if s.geom, err = attrs.geometry(xShape[2:], kernel); err != nil {
			return nil, err
		}
		if err := checkConvOutput(s.geom, s.n*s.m); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// convScratch holds the column buffers of each worker, and the tasks that
// spread a convolution's items over workers, kept across runs so that a
// warm convolution allocates nothing.
type convScratch[T any] struct {
	cols [][]T
	// tasks holds the *convTasks[T] of float convolutions (taskOf).
	tasks any
}

// convTasks is the part of a float convolution's scratch that integer
// convolutions do not use.
type convTasks[T floatElem] struct {
	// writers are each worker's im2col block writers for the implicit
	// GEMM, whose write functions are made once (a closure per item
	// would be allocated per item).
	writers []*convBlockWriter[T]
	items   convItemRunner
	gemmT   convGemmItems[T]
	dw      convDepthwiseItems
	direct  convDirect3x3Items
	im2col  conv.Im2colTask[T]
}

// reserve makes room for workers' buffers before goroutines start, so
// that get never grows the list while another worker reads it.
func (s *convScratch[T]) reserve(workers int) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	for len(s.cols) < workers {
		s.cols = append(s.cols, nil)
	}
}

// convTasksOf returns sc's float tasks.
func convTasksOf[T floatElem](sc *convScratch[T]) *convTasks[T] {
	return taskOf[convTasks[T]](&sc.tasks)
}

// get returns worker's buffer of n elements. It grows the list of buffers
// when needed, which is only safe before workers run in parallel: callers
// that spread work over goroutines call reserve first.
func (s *convScratch[T]) get(worker, n int) []T {
	for len(s.cols) <= worker {
		s.cols = append(s.cols, nil)
	}
	if cap(s.cols[worker]) < n {
		s.cols[worker] = make([]T, n)
	}
	return s.cols[worker][:n]
}

// convBlockWriter writes the im2col blocks of one input for the implicit
// GEMM; write is its method value, made once with the writer.
type convBlockWriter[T floatElem] struct {
	x     []T
	g     *convGeom
	write gemm.BlockWriter[T]
}

func (w *convBlockWriter[T]) writeBlock(dst []T, p0, j0, kc, nc int) {
	conv.Im2colBlock2D(dst, w.x, w.g, p0, j0, kc, nc)
}

// convImplicitMin is the size of an im2col matrix (elements) from which a
// 2-D convolution writes it a GEMM tile's block at a time instead of whole
// (2 MB of float32: past the L2 cache of common x86 cores). A variable, so that
// tests can send small convolutions either way.
var convImplicitMin = 1 << 19

// convItemTask computes item i of a convolution on worker's scratch with
// inner threads.
type convItemTask interface {
	runItem(i, worker, inner int)
}

// convItemFunc adapts a function to convItemTask (for the callers that
// are not on the inference path, where building one per run is fine).
type convItemFunc func(i, worker, inner int)

func (f convItemFunc) runItem(i, worker, inner int) { f(i, worker, inner) }

// convItemRunner is the par.Task of convRunTask: workers take items from a
// shared counter.
type convItemRunner struct {
	task        convItemTask
	items, step int
	next        atomic.Int64
}

// Work takes step items at a time: the planes of a depthwise layer are
// hundreds of small items, and taking them one by one had the workers
// contend for the counter's cache line (7% of the processor time of
// MobileNetV2 at batch 1 on two threads, on the instruction after the
// atomic add).
func (r *convItemRunner) Work(worker int) {
	for {
		lo := int(r.next.Add(int64(r.step))) - r.step
		if lo >= r.items {
			return
		}
		for i := lo; i < min(lo+r.step, r.items); i++ {
			r.task.runItem(i, worker, 1)
		}
	}
}

// convRunItems is convRunTask for a function, with a runner of its own.
func convRunItems(items, work, threads int, item func(i, worker, inner int)) {
	convRunTask(items, work, threads, convItemFunc(item), new(convItemRunner))
}

// convRunTask runs t.runItem(i, worker, threadsInside) for i in [0,
// items): sequentially with every thread inside each item when the items
// are big, or spread over up to threads workers (one thread each, through
// runner) when they are small.
func convRunTask(items, work, threads int, t convItemTask, runner *convItemRunner) {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	workers := convWorkers(items, work, threads)
	if workers == 1 {
		for i := range items {
			t.runItem(i, 0, threads)
		}
		return
	}
	// Eight takes per worker keep the ends of uneven items balanced.
	runner.task, runner.items, runner.step = t, items, max(1, items/(8*workers))
	runner.next.Store(0)
	par.Spread(workers, runner)
	runner.task = nil
}

// convInnerMin is the work of one item (multiply-adds) from which
// convRunTask runs the items one after another with every thread inside
// each (the GEMM splits its tiles); below it, whole items are spread over
// the threads, which needs no split of the product.
const convInnerMin = 1 << 24

// convWorkers is the number of workers convRunTask spreads items over
// (1: it runs them in order, with threads inside each).
func convWorkers(items, work, threads int) int {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if items <= 1 || threads == 1 || work >= convInnerMin {
		return 1
	}
	return min(threads, items)
}

// convForward computes y = conv(x, w) + b for float32 or float64 data
// (b may be nil). y is [N, M, out...].
func convForward[T floatElem](y, x, w, b []T, s *convShapes, sc *convScratch[T], threads int) {
	convForwardFused(y, x, w, b, s, sc, threads, nil, nil, nil)
}

// convForwardFused is convForward ending in a fused epilogue: y =
// act(conv(x, w) + b + residual), where residual (nil: none) has y's shape
// and act (nil: none) is the activation. The bias, the residual and the
// activation are applied by the GEMM to each tile of the output as it is
// finished (gemm.Epilogue), by the depthwise kernels to each plane
// (conv_depthwise.go), or, on the other thin paths, to each (image, group)
// block of rows right after it is computed: either way while it is in
// cache, and without the pass that filled the output with the bias first.
// When w is a constant weight, pw (nil: none) keeps its packed form, which
// the GEMMs read instead of packing w at every product.
func convForwardFused[T floatElem](y, x, w, b []T, s *convShapes, sc *convScratch[T], threads int, residual []T, act *fusedActivation, pw *packedWeight[T]) {
	if convDepthwise(y, x, w, b, s, sc, threads, residual, act) ||
		convDirect3x3(y, x, w, b, s, sc, threads, residual, act, pw) {
		return
	}
	g := s.geom
	cg, mg := s.c/s.group, s.m/s.group
	ks, outSz := g.KernelSize(), g.OutSize()
	kc := cg * ks
	direct := g.Direct()
	// A 2-D convolution wide enough for the blocked GEMM, whose im2col
	// matrix would not stay in cache, writes only the block each GEMM
	// tile reads (conv.Im2colBlock2D), which stays in cache. Below the
	// size, writing the whole matrix is cheaper: it is copied in longer
	// runs. Measured, runs interleaved: a 56×56, 64-channel 3×3
	// convolution takes 2.24–2.40 ms by blocks against 2.80–2.87 ms
	// whole; ResNet-18 at batch 1 on one thread 85 against 104 ms; and
	// LeNet and ResNet-8, whose matrices are below the size, 5–7% longer
	// by blocks.
	implicit := !direct && len(g.In) == 2 && mg > gemm.FewRowsMax && kc*outSz >= convImplicitMin
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	sc.reserve(threads)
	ts := convTasksOf(sc)
	if !direct && !implicit {
		// Every worker's buffer is made here, before the items run, so
		// that a warm run allocates none whichever workers take items.
		for wk := range convWorkers(s.n*s.group, mg*outSz*kc, threads) {
			sc.get(wk, kc*outSz)
		}
	}
	if implicit {
		for len(ts.writers) < threads {
			w := &convBlockWriter[T]{}
			w.write = w.writeBlock
			ts.writers = append(ts.writers, w)
		}
	}
	var packedW []gemm.Packed[T]
	if pw != nil && mg > gemm.FewRowsMax {
		// Each group's filters, packed at the first run (on this
		// goroutine, before any item runs) and kept for the next. Groups
		// of fewer filters are left as they are: float32's few-rows path
		// never packs them, and the others barely do.
		packedW = pw.matrices(w, packLayout{left: true, count: s.group, rows: mg, cols: kc, ld: kc})
	}
	t := &ts.gemmT
	*t = convGemmItems[T]{y: y, x: x, w: w, b: b, residual: residual, s: s, sc: sc, ts: ts, act: act, packedW: packedW,
		cg: cg, mg: mg, kc: kc, outSz: outSz, direct: direct, implicit: implicit}
	convRunTask(s.n*s.group, mg*outSz*kc, threads, t, &ts.items)
	*t = convGemmItems[T]{} // hold no tensors between runs
}

// convGemmItems is the work of convForwardFused: item i is the product
// of image i/group, group i%group.
type convGemmItems[T floatElem] struct {
	y, x, w, b, residual []T
	s                    *convShapes
	sc                   *convScratch[T]
	ts                   *convTasks[T]
	act                  *fusedActivation
	packedW              []gemm.Packed[T] // each group's filters packed, or nil
	cg, mg, kc, outSz    int
	direct, implicit     bool
}

func (t *convGemmItems[T]) runItem(i, worker, inner int) {
	s, g, sc, ts := t.s, t.s.geom, t.sc, t.ts
	cg, mg, kc, outSz, inSz := t.cg, t.mg, t.kc, t.outSz, t.s.geom.InSize()
	ni, gi := i/s.group, i%s.group
	xg := t.x[(ni*s.c+gi*cg)*inSz : (ni*s.c+(gi+1)*cg)*inSz]
	yg := t.y[(ni*s.m+gi*mg)*outSz : (ni*s.m+(gi+1)*mg)*outSz]
	wg := t.w[gi*mg*kc : (gi+1)*mg*kc]
	var ep *gemm.Epilogue[T]
	if t.b != nil || t.residual != nil || t.act != nil {
		// The GEMM copies the epilogue into its jobs, so this one stays
		// on the stack.
		epv := epilogueOf[T](t.act)
		if t.b != nil {
			epv.RowBias = t.b[gi*mg : (gi+1)*mg]
		}
		if t.residual != nil {
			epv.Residual = t.residual[(ni*s.m+gi*mg)*outSz : (ni*s.m+(gi+1)*mg)*outSz]
		}
		ep = &epv
	}
	wm := gemm.NewMatrix(wg, kc, false)
	if t.packedW != nil {
		wm = t.packedW[gi].Matrix()
	}
	if mg <= 2 && !t.direct {
		// Too thin for a GEMM (depthwise convolutions): no im2col.
		conv.DirectThin(yg, wg, xg, cg, mg, g, true)
		ep.Apply(yg, outSz, mg, outSz)
		return
	}
	if t.implicit {
		wr := ts.writers[worker]
		wr.x, wr.g = xg, g
		gemm.MultiplyImplicitBFused(mg, outSz, kc, 1, wm, wr.write, 0, yg, outSz, inner, ep)
		wr.x, wr.g = nil, nil
		return
	}
	cols := xg
	if !t.direct {
		cols = sc.get(worker, kc*outSz)
		if inner > 1 {
			// Only worker 0 runs items with threads inside.
			ts.im2col.Run(cols, xg, cg, g, inner)
		} else {
			conv.Im2col(cols, xg, cg, g, 1)
		}
	}
	if mg <= 2 {
		// A GEMM this thin (depthwise convolutions) is all packing:
		// add the scaled column rows straight into the output rows.
		conv.ThinProduct(yg, wg, cols, mg, kc, outSz, true)
		ep.Apply(yg, outSz, mg, outSz)
		return
	}
	gemm.MultiplyFused(mg, outSz, kc, 1, wm, gemm.NewMatrix(cols, outSz, false), 0, yg, outSz, inner, ep)
}

// convBuffers is the scratch of Conv and ConvTranspose, which run the same
// way: one typed forward function per float type, float16 and bfloat16
// widened to float32 and narrowed back.
type convBuffers struct {
	s32                        convScratch[float32]
	s64                        convScratch[float64]
	wideX, wideW, wideB, wideY float32Scratch
}

// convForwardFunc is the shape of convForward and convTransposeForward.
type convForwardFunc[T floatElem] func(y, x, w, b []T, s *convShapes, sc *convScratch[T], threads int)

// run computes out from x, w and the optional b with f32 or f64, chosen by
// x's element type (the caller has checked that the types agree); op
// names the operator in the error for another type.
func (c *convBuffers) run(op string, out, x, w, b *onnx.Tensor, s *convShapes, threads int, f32 convForwardFunc[float32], f64 convForwardFunc[float64]) error {
	switch xd := x.Data.(type) {
	case []float32:
		var bd []float32
		if b != nil {
			bd = b.Data.([]float32)
		}
		f32(out.Data.([]float32), xd, w.Data.([]float32), bd, s, &c.s32, threads)
	case []float64:
		var bd []float64
		if b != nil {
			bd = b.Data.([]float64)
		}
		f64(out.Data.([]float64), xd, w.Data.([]float64), bd, s, &c.s64, threads)
	case []onnx.F16, []onnx.BF16:
		wx, _ := widenToFloat32(c.wideX.get(x.Len()), x.Data)
		ww, _ := widenToFloat32(c.wideW.get(w.Len()), w.Data)
		var wb []float32
		if b != nil {
			wb, _ = widenToFloat32(c.wideB.get(b.Len()), b.Data)
		}
		wy := c.wideY.get(out.Len())
		f32(wy, wx, ww, wb, s, &c.s32, threads)
		return narrowFromFloat32(out.Data, wy)
	default:
		return network.Unsupportedf("%s of %v tensors", op, x.Type)
	}
	return nil
}

// convKernel computes a Conv node.
type convKernel struct {
	attrs       convWindowAttrs
	kernelShape []int64
	group       int64
	threads     int

	out  outputBuffer
	buf  convBuffers
	plan convPlan

	// The packed forms of a constant W (packed_weights.go), per element
	// type; nil when W is not a constant of an optimized network.
	packed32 *packedWeight[float32]
	packed64 *packedWeight[float64]
}

// convPlan is a Conv kernel's checked shapes for the input shapes of its
// last run, kept so that a run on the same shapes computes no geometry
// (and allocates none). Inputs of other shapes replace it.
type convPlan struct {
	valid          bool
	xShape, wShape []int
	shapes         convShapes
	outShape       []int // [N, M, out...]
}

func (k *convKernel) compute(x, w, b *onnx.Tensor) (*onnx.Tensor, error) {
	s, err := k.check(x, w, b)
	if err != nil {
		return nil, err
	}
	out := k.out.tensor(x.Type, k.plan.outShape)
	switch xd := x.Data.(type) {
	case []float32:
		convForwardFused(out.Data.([]float32), xd, w.Data.([]float32), optionalData[float32](b), s, &k.buf.s32, k.threads, nil, nil, k.packed32)
	case []float64:
		convForwardFused(out.Data.([]float64), xd, w.Data.([]float64), optionalData[float64](b), s, &k.buf.s64, k.threads, nil, nil, k.packed64)
	default:
		if err := k.buf.run("Conv", out, x, w, b, s, k.threads, convForward[float32], convForward[float64]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// check validates a Conv's inputs and returns its geometry.
func (k *convKernel) check(x, w, b *onnx.Tensor) (*convShapes, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	if w.Type != x.Type || (b != nil && b.Type != x.Type) {
		return nil, fmt.Errorf("inputs have different types: X %v, W %v", x.Type, w.Type)
	}
	p := &k.plan
	if !p.valid || !sameShape(p.xShape, x.Shape) || !sameShape(p.wShape, w.Shape) {
		p.valid = false
		// The geometry keeps slices of the shapes: the plan's copies,
		// which no caller changes.
		p.xShape, p.wShape = append(p.xShape[:0], x.Shape...), append(p.wShape[:0], w.Shape...)
		s, err := checkConvShapes(&k.attrs, k.kernelShape, k.group, p.xShape, p.wShape, false)
		if err != nil {
			return nil, err
		}
		if s.geom.KernelSize()*(s.c/s.group) > convMaxElements/max(1, s.geom.OutSize()) {
			return nil, fmt.Errorf("column buffer for kernel %v over output %v is too large", s.geom.Kernel, s.geom.Out)
		}
		p.shapes = *s
		p.outShape = append(append(p.outShape[:0], s.n, s.m), s.geom.Out...)
		p.valid = true
	}
	s := &p.shapes
	if b != nil && (len(b.Shape) != 1 || b.Shape[0] != s.m) {
		return nil, fmt.Errorf("bias B has shape %v; want [%d]", b.Shape, s.m)
	}
	return s, nil
}

// computeFused is compute followed by the epilogue of a fusion: act(conv +
// residual). It reports false, computing nothing, when the fused kernel
// does not apply to these tensors (neither float32 nor float64, or a
// residual of another type or shape, which the separate Add would
// broadcast): the caller then runs the nodes one by one.
func (k *convKernel) computeFused(x, w, b, residual *onnx.Tensor, act *fusedActivation) (*onnx.Tensor, bool, error) {
	if x.Type != onnx.Float && x.Type != onnx.Double {
		return nil, false, nil
	}
	s, err := k.check(x, w, b)
	if err != nil {
		return nil, false, err
	}
	shape := k.plan.outShape
	if residual != nil && (residual.Type != x.Type || !sameShape(residual.Shape, shape) || checkStorage(residual) != nil) {
		return nil, false, nil
	}
	out := k.out.tensor(x.Type, shape)
	switch xd := x.Data.(type) {
	case []float32:
		convForwardFused(out.Data.([]float32), xd, w.Data.([]float32), optionalData[float32](b), s, &k.buf.s32, k.threads, optionalData[float32](residual), act, k.packed32)
	case []float64:
		convForwardFused(out.Data.([]float64), xd, w.Data.([]float64), optionalData[float64](b), s, &k.buf.s64, k.threads, optionalData[float64](residual), act, k.packed64)
	}
	return out, true, nil
}

// VisitConv compiles Conv (versions 1, 11, 22 share their semantics).
func (b *builder) VisitConv(op *ops.Conv) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	w, err := b.input(op.In.W)
	if err != nil {
		return err
	}
	bias, err := b.optionalInput(op.In.B)
	if err != nil {
		return err
	}
	y := b.output(op.Out.Y)
	k, err := b.newConvKernel(op)
	if err != nil {
		return err
	}
	return b.emit(tensorsKernel([]valueRef{x, w, bias}, y, func(ts []*onnx.Tensor) (*onnx.Tensor, error) {
		return k.compute(ts[0], ts[1], ts[2])
	}))
}

// newConvKernel makes the kernel of a Conv node from its attributes.
func (b *builder) newConvKernel(op *ops.Conv) (*convKernel, error) {
	k := &convKernel{
		attrs:       convWindowAttrs{op: "Conv", autoPad: op.AutoPad, strides: op.Strides, dilations: op.Dilations, pads: op.Pads},
		kernelShape: slices.Clone(op.KernelShape),
		group:       op.Group,
		threads:     b.e.threads,
		packed32:    newPackedWeight[float32](b, op.In.W),
		packed64:    newPackedWeight[float64](b, op.In.W),
	}
	return k, checkAutoPad(k.attrs.autoPad)
}

// checkAutoPad rejects an auto_pad value ONNX does not define.
func checkAutoPad(s string) error {
	switch s {
	case "", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID":
		return nil
	}
	return network.Unsupportedf("auto_pad %q", s)
}
