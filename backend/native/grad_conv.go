package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/conv"
	"github.com/deep500/deep500-go/backend/native/internal/gemm"
	"github.com/deep500/deep500-go/backend/native/internal/vec"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rules of Conv and ConvTranspose.
//
// Conv computes, per (image, group), Y_g = W_g · im2col(X_g) (+ b). Its
// backward is
//
//	dW_g += dY_g · im2col(X_g)ᵀ         (summed over the images)
//	dX_g  = col2im(W_gᵀ · dY_g)
//	dB[m] = Σ over images and output positions of dY[·, m, ·]
//
// ConvTranspose computes Y_g = col2im(W_gᵀ · X_g) (+ b), whose adjoint is
//
//	dX_g  = W_g · im2col(dY_g)
//	dW_g += X_g · im2col(dY_g)ᵀ
//
// with the forward's own geometry (checkConvShapes, transposeGeometry) and
// rearrangements (conv.Im2col, conv.Col2im), so every attribute (strides,
// pads, auto_pad, dilations, group, output_shape, output_padding) is
// handled as the forward handles it. Groups are spread over goroutines
// (each group owns its slices of dX and dW, the images of a group are
// summed in order); the column buffers of every worker are allocated
// before any goroutine starts.

// gradConvBufs is one worker's column buffers.
type gradConvBufs[T floatElem] struct{ cols, dcols []T }

// gradConvState is a Conv backward's storage, kept across steps: each
// worker's column buffers, and each chunk of images' partial weight
// gradient.
type gradConvState[T floatElem] struct {
	workers  []gradConvBufs[T]
	partials [][]T
	items    gradConvItems[T]
	runner   convItemRunner
}

// gradConvWorkers returns n workers' buffers of cols and dcols elements,
// growing them outside any goroutine.
func gradConvWorkers[T floatElem](bufs *[]gradConvBufs[T], n, cols, dcols int) []gradConvBufs[T] {
	for len(*bufs) < n {
		*bufs = append(*bufs, gradConvBufs[T]{})
	}
	ws := (*bufs)[:n]
	for i := range ws {
		if cap(ws[i].cols) < cols {
			ws[i].cols = make([]T, cols)
		}
		if cap(ws[i].dcols) < dcols {
			ws[i].dcols = make([]T, dcols)
		}
		ws[i].cols, ws[i].dcols = ws[i].cols[:cols], ws[i].dcols[:dcols]
	}
	return ws
}

// prepare sizes the buffers of n workers and chunks partials of dwLen
// elements, outside any goroutine.
func (st *gradConvState[T]) prepare(n, cols, dcols, chunks, dwLen int) {
	gradConvWorkers(&st.workers, n, cols, dcols)
	for len(st.partials) < chunks {
		st.partials = append(st.partials, nil)
	}
	for i := range st.partials[:chunks] {
		if cap(st.partials[i]) < dwLen {
			st.partials[i] = make([]T, dwLen)
		}
		st.partials[i] = st.partials[i][:dwLen]
	}
}

// gradConvKernel is the backward kernel of a Conv or ConvTranspose node.
type gradConvKernel struct {
	transpose  bool
	fwd        convKernel          // Conv: attributes and geometry
	fwdT       convTransposeKernel // ConvTranspose: attributes and geometry
	x, w, b, y int
	threads    int

	// The geometry of the last shapes seen, reused while they stay.
	lastX, lastW []int
	shapes       *convShapes

	sx, sw, sb gradScratch
	st32       gradConvState[float32]
	st64       gradConvState[float64]

	// The input gradient of a 3×3 convolution of stride 1 as the forward
	// convolution of dY by the flipped, transposed filters (on the
	// direct kernels): its shapes for the last geometry, the filters and
	// the direct kernels' scratch.
	dxShapes *convShapes
	dxGeom   *convGeom
	dxDirect bool // dxShapes run on the direct kernels
	wT       []float32
	dxScr    convScratch[float32]
}

func (gb *gradBuilder) VisitConv(op *ops.Conv) error {
	if err := checkAutoPad(op.AutoPad); err != nil {
		return err
	}
	k := &gradConvKernel{
		fwd: convKernel{
			attrs:       convWindowAttrs{op: "Conv", autoPad: op.AutoPad, strides: op.Strides, dilations: op.Dilations, pads: op.Pads},
			kernelShape: slices.Clone(op.KernelShape),
			group:       op.Group,
		},
		x: gb.slot(op.In.X), w: gb.slot(op.In.W), b: gb.slot(op.In.B), y: gb.slot(op.Out.Y), threads: gb.e.threads,
	}
	return gb.set(k.run)
}

func (gb *gradBuilder) VisitConvTranspose(op *ops.ConvTranspose) error {
	if err := checkAutoPad(op.AutoPad); err != nil {
		return err
	}
	k := &gradConvKernel{
		transpose: true,
		fwdT: convTransposeKernel{
			attrs:         convWindowAttrs{op: "ConvTranspose", autoPad: op.AutoPad, strides: op.Strides, dilations: op.Dilations, pads: op.Pads},
			kernelShape:   slices.Clone(op.KernelShape),
			outputShape:   slices.Clone(op.OutputShape),
			outputPadding: slices.Clone(op.OutputPadding),
			group:         op.Group,
		},
		x: gb.slot(op.In.X), w: gb.slot(op.In.W), b: gb.slot(op.In.B), y: gb.slot(op.Out.Y), threads: gb.e.threads,
	}
	return gb.set(k.run)
}

// geometry returns the shapes of the forward call, recomputed only when
// the input or weight shape changes.
func (k *gradConvKernel) geometry(x, w *onnx.Tensor) (*convShapes, error) {
	if k.shapes != nil && slices.Equal(k.lastX, x.Shape) && slices.Equal(k.lastW, w.Shape) {
		return k.shapes, nil
	}
	var s *convShapes
	var err error
	if k.transpose {
		if s, err = checkConvShapes(&k.fwdT.attrs, k.fwdT.kernelShape, k.fwdT.group, x.Shape, w.Shape, true); err != nil {
			return nil, err
		}
		if s.geom, err = k.fwdT.transposeGeometry(x.Shape[2:], w.Shape[2:]); err != nil {
			return nil, err
		}
	} else if s, err = checkConvShapes(&k.fwd.attrs, k.fwd.kernelShape, k.fwd.group, x.Shape, w.Shape, false); err != nil {
		return nil, err
	}
	k.shapes = s
	k.lastX = append(k.lastX[:0], x.Shape...)
	k.lastW = append(k.lastW[:0], w.Shape...)
	return s, nil
}

func (k *gradConvKernel) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil {
		return nil
	}
	x, err := floatTensor(slots[k.x], "input X")
	if err != nil {
		return err
	}
	w, err := floatTensor(slots[k.w], "weight W")
	if err != nil {
		return err
	}
	if w.Type != x.Type || gy.Type != x.Type {
		return fmt.Errorf("inputs have different types: X %v, W %v, dY %v", x.Type, w.Type, gy.Type)
	}
	s, err := k.geometry(x, w)
	if err != nil {
		return err
	}
	// The output's spatial size: Conv's geometry "out", ConvTranspose's "in".
	outSp := s.geom.OutSize()
	if k.transpose {
		outSp = s.geom.InSize()
	}
	if gy.Len() != s.n*s.m*outSp {
		return fmt.Errorf("output gradient of shape %v for an output of %d x %d x %d elements", gy.Shape, s.n, s.m, outSp)
	}
	// Both are written whole: dX overwritten, dW the sum of its partials
	// (a ConvTranspose's dW is accumulated, so it starts from zeros).
	var dx, dw *onnx.Tensor
	if g.wants(k.x) {
		dx = g.dest(k.x, &k.sx, x.Type, x.Shape)
	}
	if g.wants(k.w) {
		if k.transpose {
			dw = k.sw.zeros(w.Type, w.Shape)
		} else {
			dw = g.dest(k.w, &k.sw, w.Type, w.Shape)
		}
	}
	if dx != nil || dw != nil {
		switch xd := x.Data.(type) {
		case []float32:
			k.backward32(s, dx, dw, xd, w.Data.([]float32), gy.Data.([]float32))
		case []float64:
			k.backward64(s, dx, dw, xd, w.Data.([]float64), gy.Data.([]float64))
		}
	}
	if err := g.add(k.x, dx); err != nil {
		return err
	}
	if err := g.add(k.w, dw); err != nil {
		return err
	}
	if k.b >= 0 && g.wants(k.b) {
		bt, err := floatTensor(slots[k.b], "bias B")
		if err != nil {
			return err
		}
		if bt.Type != x.Type || bt.Len() != s.m {
			return fmt.Errorf("bias B is tensor(%v)%v; want [%d] of %v", bt.Type, bt.Shape, s.m, x.Type)
		}
		db := k.sb.zeros(bt.Type, bt.Shape)
		switch d := db.Data.(type) {
		case []float32:
			gradConvBias(d, gy.Data.([]float32), s.n, s.m, outSp)
		case []float64:
			gradConvBias(d, gy.Data.([]float64), s.n, s.m, outSp)
		}
		return g.add(k.b, db)
	}
	return nil
}

func (k *gradConvKernel) backward32(s *convShapes, dx, dw *onnx.Tensor, x, w, gy []float32) {
	var dxd, dwd []float32
	if dx != nil {
		dxd = dx.Data.([]float32)
	}
	if dw != nil {
		dwd = dw.Data.([]float32)
	}
	if k.transpose {
		gradConvTransposeBackward(dxd, dwd, x, w, gy, s, &k.st32.workers, k.threads)
		return
	}
	if dxd != nil && k.inputGradDirect(dxd, w, gy, s) {
		dxd = nil
	}
	gradConvBackward(dxd, dwd, x, w, gy, s, &k.st32, k.threads)
}

// inputGradDirect computes dX of a float32 convolution as the forward
// convolution of dY by W flipped in space with its two channel axes
// swapped, padded by kernel-1-pad, when that convolution runs on the
// direct 3×3 kernels (a 3×3 kernel, unit strides and dilations, one
// group): no column matrix and no col2im. It reports whether it did.
func (k *gradConvKernel) inputGradDirect(dx, w, dy []float32, s *convShapes) bool {
	g := s.geom
	if s.group != 1 || len(g.In) != 2 {
		return false
	}
	for i := range 2 {
		if g.Kernel[i] != 3 || g.Strides[i] != 1 || g.Dilations[i] != 1 || g.PadBegin[i] > 2 || g.PadEnd[i] > 2 {
			return false
		}
	}
	if k.dxGeom != g {
		tg := &convGeom{In: g.Out, Kernel: g.Kernel, Out: g.In, Strides: g.Strides, Dilations: g.Dilations,
			PadBegin: []int{2 - g.PadBegin[0], 2 - g.PadBegin[1]}, PadEnd: []int{2 - g.PadEnd[0], 2 - g.PadEnd[1]}}
		k.dxShapes, k.dxGeom = &convShapes{n: s.n, c: s.m, m: s.c, group: 1, geom: tg}, g
		_, _, k.dxDirect = convDirect3x3Applies(k.dxShapes)
	}
	if !k.dxDirect {
		return false // the transposed filters would be made for nothing
	}
	// wT[c][m][ky][kx] = w[m][c][2-ky][2-kx]
	if cap(k.wT) < len(w) {
		k.wT = make([]float32, len(w))
	}
	wT := k.wT[:len(w)]
	for m := range s.m {
		for c := range s.c {
			src, dst := w[(m*s.c+c)*9:(m*s.c+c+1)*9], wT[(c*s.m+m)*9:(c*s.m+m+1)*9]
			for j := range 9 {
				dst[j] = src[8-j]
			}
		}
	}
	return convDirect3x3(dx, dy, wT, nil, k.dxShapes, &k.dxScr, k.threads, nil, nil, nil)
}

func (k *gradConvKernel) backward64(s *convShapes, dx, dw *onnx.Tensor, x, w, gy []float64) {
	var dxd, dwd []float64
	if dx != nil {
		dxd = dx.Data.([]float64)
	}
	if dw != nil {
		dwd = dw.Data.([]float64)
	}
	if k.transpose {
		gradConvTransposeBackward(dxd, dwd, x, w, gy, s, &k.st64.workers, k.threads)
	} else {
		gradConvBackward(dxd, dwd, x, w, gy, s, &k.st64, k.threads)
	}
}

// gradConvBias sums dY [n, m, sp] over images and positions into db [m].
func gradConvBias[T floatElem](db, dy []T, n, m, sp int) {
	for i := range n {
		for c := range m {
			var acc T
			for _, v := range dy[(i*m+c)*sp : (i*m+c+1)*sp] {
				acc += v
			}
			db[c] += acc
		}
	}
}

// gradConvChunks is the number of runs of images a Conv backward splits a
// batch of n into: each run sums its images' weight gradients into a
// partial of its own and the partials are added in order, so the result
// does not depend on the number of threads (nor on which worker took
// which run), only on n.
func gradConvChunks(n int) int { return min(n, 8) }

// gradConvBackward computes dX and dW (both overwritten; nil: not wanted)
// of a Conv. The images are split into gradConvChunks runs, spread over
// the workers (each product on one thread); a batch of one runs its
// products on every thread.
func gradConvBackward[T floatElem](dx, dw, x, w, dy []T, s *convShapes, st *gradConvState[T], threads int) {
	if dx == nil && dw == nil {
		return
	}
	g := s.geom
	mg := s.m / s.group
	outSz := g.OutSize()
	kc := s.c / s.group * g.KernelSize()
	direct := g.Direct()
	colLen, dcolLen := 0, 0
	if !direct {
		if dw != nil {
			colLen = kc * outSz
		}
		if dx != nil {
			dcolLen = kc * outSz
		}
	}
	chunks := gradConvChunks(s.n)
	// One image's work decides between spreading the runs and threads
	// inside each product, as for the forward's items.
	work := s.group * mg * outSz * kc
	partials := 0
	if dw != nil {
		partials = chunks
	}
	st.prepare(convWorkers(chunks, work, threads), colLen, dcolLen, partials, len(dw))
	t := &st.items
	*t = gradConvItems[T]{dx: dx, dw: dw, x: x, w: w, dy: dy, s: s, st: st, chunks: chunks, direct: direct}
	convRunTask(chunks, work, threads, t, &st.runner)
	*t = gradConvItems[T]{} // hold no tensors between runs
	if dw == nil {
		return
	}
	if partials == 0 {
		clear(dw) // an empty batch
		return
	}
	copy(dw, st.partials[0])
	for ci := 1; ci < partials; ci++ {
		addInto(dw, st.partials[ci])
	}
}

// gradConvItems is gradConvBackward's work: item ci is the ci-th of
// chunks runs of images, its weight gradient summed into partial ci.
type gradConvItems[T floatElem] struct {
	dx, dw, x, w, dy []T
	s                *convShapes
	st               *gradConvState[T]
	chunks           int
	direct           bool
}

func (t *gradConvItems[T]) runItem(ci, worker, inner int) {
	s, g := t.s, t.s.geom
	dx, dw, x, w, dy := t.dx, t.dw, t.x, t.w, t.dy
	cg, mg := s.c/s.group, s.m/s.group
	ks, inSz, outSz := g.KernelSize(), g.InSize(), g.OutSize()
	kc := cg * ks
	buf := &t.st.workers[worker]
	var part []T
	if dw != nil {
		part = t.st.partials[ci]
		clear(part)
	}
	for ni := ci * s.n / t.chunks; ni < (ci+1)*s.n/t.chunks; ni++ {
		for gi := range s.group {
			wg := w[gi*mg*kc : (gi+1)*mg*kc]
			xg := x[(ni*s.c+gi*cg)*inSz : (ni*s.c+(gi+1)*cg)*inSz]
			dyg := dy[(ni*s.m+gi*mg)*outSz : (ni*s.m+(gi+1)*mg)*outSz]
			if dw != nil {
				cols := xg
				if !t.direct {
					cols = buf.cols
					conv.Im2col(cols, xg, cg, g, inner)
				}
				// dW_g (mg x kc) += dY_g (mg x outSz) · colsᵀ (outSz x kc).
				// On one thread, float32 takes each element as the dot
				// product of two contiguous rows (vec.MulAddTransB), with
				// nothing packed: the GEMM would transpose the column
				// matrix into its panels, which cost more than the
				// product on these shapes (a 32×32, 16-channel 3×3 layer's
				// dW at batch 64: 10.4 ms through the GEMM, 6.2 ms).
				if d32, ok := any(dyg).([]float32); ok && inner == 1 {
					vec.MulAddTransB(mg, kc, outSz, d32, outSz, any(cols).([]float32), outSz, any(part[gi*mg*kc:]).([]float32), kc)
				} else {
					gemm.Multiply(mg, kc, outSz, 1, gemm.NewMatrix(dyg, outSz, false), gemm.NewMatrix(cols, outSz, true), 1, part[gi*mg*kc:], kc, inner)
				}
			}
			if dx == nil {
				continue
			}
			dxg := dx[(ni*s.c+gi*cg)*inSz : (ni*s.c+(gi+1)*cg)*inSz]
			if t.direct {
				// dX_g (cg x inSz) = W_gᵀ (kc x mg) · dY_g (mg x outSz)
				gemm.Multiply(kc, outSz, mg, 1, gemm.NewMatrix(wg, kc, true), gemm.NewMatrix(dyg, outSz, false), 0, dxg, outSz, inner)
				continue
			}
			gemm.Multiply(kc, outSz, mg, 1, gemm.NewMatrix(wg, kc, true), gemm.NewMatrix(dyg, outSz, false), 0, buf.dcols, outSz, inner)
			clear(dxg)
			conv.Col2im(dxg, buf.dcols, cg, g, inner)
		}
	}
}

// gradConvTransposeBackward computes dX (overwritten; nil: not wanted)
// and dW (accumulated into; nil: not wanted) of a ConvTranspose; s.geom is
// the forward's col2im geometry (its "in" is the output image, its "out"
// the input positions).
func gradConvTransposeBackward[T floatElem](dx, dw, x, w, dy []T, s *convShapes, bufs *[]gradConvBufs[T], threads int) {
	g := s.geom
	cg, mg := s.c/s.group, s.m/s.group
	ks, inSz, outSz := g.KernelSize(), g.OutSize(), g.InSize()
	rows := mg * ks
	work := s.n * cg * rows * inSz
	ws := gradConvWorkers(bufs, convWorkers(s.group, work, threads), rows*inSz, 0)
	convRunItems(s.group, work, threads, func(gi, worker, inner int) {
		col := ws[worker].cols
		wg := w[gi*cg*rows : (gi+1)*cg*rows]
		for ni := range s.n {
			xg := x[(ni*s.c+gi*cg)*inSz : (ni*s.c+(gi+1)*cg)*inSz]
			dyg := dy[(ni*s.m+gi*mg)*outSz : (ni*s.m+(gi+1)*mg)*outSz]
			conv.Im2col(col, dyg, mg, g, inner)
			if dx != nil {
				// dX_g (cg x inSz) = W_g (cg x rows) · col (rows x inSz)
				gemm.Multiply(cg, inSz, rows, 1, gemm.NewMatrix(wg, rows, false), gemm.NewMatrix(col, inSz, false), 0, dx[(ni*s.c+gi*cg)*inSz:], inSz, inner)
			}
			if dw != nil {
				// dW_g (cg x rows) += X_g (cg x inSz) · colᵀ (inSz x rows)
				gemm.Multiply(cg, rows, inSz, 1, gemm.NewMatrix(xg, inSz, false), gemm.NewMatrix(col, inSz, true), 1, dw[gi*cg*rows:], rows, inner)
			}
		}
	})
}
