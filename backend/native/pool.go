package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// MaxPool, AveragePool and LpPool share one sliding-window loop: for every
// (image, channel) plane and output position, the window's valid input
// positions (inside the input; padding never contributes, except to the
// divisor of AveragePool with count_include_pad) are visited once. Planes
// are spread over goroutines.

type poolMode int

const (
	poolMax poolMode = iota
	poolAvg
	poolLp
)

func (m poolMode) String() string { return [...]string{"MaxPool", "AveragePool", "LpPool"}[m] }

// poolKernel computes one pooling node.
type poolKernel struct {
	mode         poolMode
	attrs        convWindowAttrs
	kernelShape  []int64
	countPad     bool  // AveragePool count_include_pad
	p            int64 // LpPool
	storageOrder int64 // MaxPool indices: 0 row-major, 1 column-major
	wantIndices  bool
	intsAllowed  bool // MaxPool from version 12: int8, uint8
	threads      int

	out, idx     outputBuffer
	wideX, wideY float32Scratch
	// The plan and output shape of the last input shape, planIn.
	planIn   []int
	lastPlan *poolPlan
	outShape []int
	task     any // pool2D's parallel task (taskOf)
}

// poolPlan is the geometry of one call, with the per-dimension tables the
// window loop needs.
type poolPlan struct {
	g        *convGeom
	planes   int
	inStride []int
	// count_include_pad divisor limits: positions in [-padBegin, in+padEnd)
	countPad bool
	// fast is the 1-D/2-D fast path's geometry (pool2D), computed on first
	// use; fastOK says whether that path applies.
	fast              poolFast2D
	fastReady, fastOK bool
}

func (k *poolKernel) plan(x *onnx.Tensor) (*poolPlan, []int, error) {
	if len(x.Shape) < 3 {
		return nil, nil, fmt.Errorf("input X has shape %v; want [N, C, D1, ...] with at least one spatial dimension", x.Shape)
	}
	in := x.Shape[2:]
	if len(k.kernelShape) != len(in) {
		return nil, nil, fmt.Errorf("kernel_shape %v has %d entries for %d spatial dimensions of X %v", k.kernelShape, len(k.kernelShape), len(in), x.Shape)
	}
	kernel := make([]int, len(in))
	for i, v := range k.kernelShape {
		if v < 1 || v > convMaxElements {
			return nil, nil, fmt.Errorf("kernel_shape %v must be positive", k.kernelShape)
		}
		kernel[i] = int(v)
	}
	g, err := k.attrs.geometry(in, kernel)
	if err != nil {
		return nil, nil, err
	}
	planes := x.Shape[0] * x.Shape[1]
	if err := checkConvOutput(g, planes); err != nil {
		return nil, nil, err
	}
	shape := append([]int{x.Shape[0], x.Shape[1]}, g.Out...)
	return &poolPlan{g: g, planes: planes, inStride: rowMajorStrides(in), countPad: k.countPad}, shape, nil
}

func (k *poolKernel) compute(x *onnx.Tensor) (*onnx.Tensor, *onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, nil, err
	}
	if k.lastPlan == nil || !sameShape(k.planIn, x.Shape) {
		pl, shape, err := k.plan(x)
		if err != nil {
			k.lastPlan = nil
			return nil, nil, err
		}
		k.lastPlan, k.outShape, k.planIn = pl, shape, append(k.planIn[:0], x.Shape...)
	}
	pl, shape := k.lastPlan, k.outShape
	out := k.out.tensor(x.Type, shape)
	var idx []int64
	if k.wantIndices {
		it := k.idx.tensor(onnx.Int64, shape)
		idx = it.Data.([]int64)
	}
	switch xd := x.Data.(type) {
	case []float32:
		poolRun(k, pl, out.Data.([]float32), xd, idx)
	case []float64:
		poolRun(k, pl, out.Data.([]float64), xd, idx)
	case []onnx.F16, []onnx.BF16:
		wx, _ := widenToFloat32(k.wideX.get(x.Len()), x.Data)
		wy := k.wideY.get(out.Len())
		poolRun(k, pl, wy, wx, idx)
		if err := narrowFromFloat32(out.Data, wy); err != nil {
			return nil, nil, err
		}
	case []int8:
		if !k.intsAllowed {
			return nil, nil, network.Unsupportedf("%v of %v tensors", k.mode, x.Type)
		}
		poolMaxRun(k, pl, out.Data.([]int8), xd, idx)
	case []uint8:
		if !k.intsAllowed {
			return nil, nil, network.Unsupportedf("%v of %v tensors", k.mode, x.Type)
		}
		poolMaxRun(k, pl, out.Data.([]uint8), xd, idx)
	default:
		return nil, nil, network.Unsupportedf("%v of %v tensors", k.mode, x.Type)
	}
	if k.wantIndices {
		return out, k.idx.t, nil
	}
	return out, nil, nil
}

// poolWindow iterates the valid input positions of one output position.
type poolWindow struct {
	pl    *poolPlan
	start []int // first input coordinate of the window (may be negative)
	pos   []int // odometer over the kernel
	opos  []int // output position
}

func newPoolWindow(pl *poolPlan) *poolWindow {
	n := len(pl.g.In)
	return &poolWindow{pl: pl, start: make([]int, n), pos: make([]int, n), opos: make([]int, n)}
}

// visit calls fn(flat input offset within the plane, spatial coordinates)
// for each window element inside the input, and returns the divisor for
// average pooling: the count of visited elements, or with countPad, the
// count of window elements inside the padded extent.
func (w *poolWindow) visit(fn func(off int)) int {
	g := w.pl.g
	n := len(g.In)
	for d := range n {
		w.start[d] = w.opos[d]*g.Strides[d] - g.PadBegin[d]
		w.pos[d] = 0
	}
	visited, padded := 0, 0
	for {
		inside, insidePad, off := true, true, 0
		for d := range n {
			i := w.start[d] + w.pos[d]*g.Dilations[d]
			if i < 0 || i >= g.In[d] {
				inside = false
				if i < -g.PadBegin[d] || i >= g.In[d]+g.PadEnd[d] {
					insidePad = false
				}
			} else {
				off += i * w.pl.inStride[d]
			}
		}
		if inside {
			fn(off)
			visited++
		}
		if insidePad {
			padded++
		}
		d := n - 1
		for ; d >= 0; d-- {
			w.pos[d]++
			if w.pos[d] < g.Kernel[d] {
				break
			}
			w.pos[d] = 0
		}
		if d < 0 {
			break
		}
	}
	if w.pl.countPad {
		return padded
	}
	return visited
}

// next advances the output position; false after the last one.
func (w *poolWindow) next() bool {
	g := w.pl.g
	for d := len(g.Out) - 1; d >= 0; d-- {
		w.opos[d]++
		if w.opos[d] < g.Out[d] {
			return true
		}
		w.opos[d] = 0
	}
	return false
}

// poolIndex converts a flat row-major spatial offset into the MaxPool
// index of the storage order, including the plane offset.
func (pl *poolPlan) poolIndex(plane, off int, colMajor bool) int64 {
	inSz := pl.g.InSize()
	if !colMajor {
		return int64(plane*inSz + off)
	}
	// Column-major: the first spatial dimension varies fastest.
	idx, step := 0, 1
	for d := range pl.g.In {
		c := off / pl.inStride[d] % pl.g.In[d]
		idx += c * step
		step *= pl.g.In[d]
	}
	return int64(plane*inSz + idx)
}

// poolRun pools floating-point data by the kernel's mode.
func poolRun[T floatElem](k *poolKernel, pl *poolPlan, y, x []T, idx []int64) {
	if pool2D(k, pl, y, x, idx) {
		return
	}
	if k.mode == poolMax {
		poolMaxRun(k, pl, y, x, idx)
		return
	}
	inSz, outSz := pl.g.InSize(), pl.g.OutSize()
	p := float64(k.p)
	par.For(pl.planes, k.threads, max(1, par.Grain/max(1, outSz*pl.g.KernelSize())), func(lo, hi int) {
		w := newPoolWindow(pl)
		for plane := lo; plane < hi; plane++ {
			src := x[plane*inSz : (plane+1)*inSz]
			dst := y[plane*outSz : (plane+1)*outSz]
			clear(w.opos)
			for o := 0; ; o++ {
				var sum float64
				var cnt int
				if k.mode == poolAvg {
					cnt = w.visit(func(off int) { sum += float64(src[off]) })
					if cnt > 0 {
						sum /= float64(cnt)
					} else {
						sum = math.NaN()
					}
				} else {
					switch p {
					case 1:
						w.visit(func(off int) { sum += math.Abs(float64(src[off])) })
					case 2:
						w.visit(func(off int) { v := float64(src[off]); sum += v * v })
						sum = math.Sqrt(sum)
					default:
						w.visit(func(off int) { sum += math.Pow(math.Abs(float64(src[off])), p) })
						sum = math.Pow(sum, 1/p)
					}
				}
				dst[o] = T(sum)
				if !w.next() {
					break
				}
			}
		}
	})
}

// poolMaxRun is MaxPool for any ordered element type, with optional
// indices (the first position of the maximum wins).
func poolMaxRun[T float32 | float64 | int8 | uint8](k *poolKernel, pl *poolPlan, y, x []T, idx []int64) {
	if pool2D(k, pl, y, x, idx) {
		return
	}
	inSz, outSz := pl.g.InSize(), pl.g.OutSize()
	colMajor := k.storageOrder == 1
	par.For(pl.planes, k.threads, max(1, par.Grain/max(1, outSz*pl.g.KernelSize())), func(lo, hi int) {
		w := newPoolWindow(pl)
		for plane := lo; plane < hi; plane++ {
			src := x[plane*inSz : (plane+1)*inSz]
			dst := y[plane*outSz : (plane+1)*outSz]
			clear(w.opos)
			for o := 0; ; o++ {
				best, bestOff, found := T(0), -1, false
				w.visit(func(off int) {
					v := src[off]
					if !found || v > best || (v != v && best == best) {
						best, bestOff, found = v, off, true
					}
				})
				dst[o] = best
				if idx != nil {
					if bestOff < 0 {
						idx[plane*outSz+o] = -1
					} else {
						idx[plane*outSz+o] = pl.poolIndex(plane, bestOff, colMajor)
					}
				}
				if !w.next() {
					break
				}
			}
		}
	})
}

// pool compiles one pooling node with a single input and one or two
// outputs.
func (b *builder) pool(k *poolKernel, in, out, indices string) error {
	if err := checkAutoPad(k.attrs.autoPad); err != nil {
		return err
	}
	if len(k.kernelShape) == 0 {
		return fmt.Errorf("%v: attribute kernel_shape is required", k.mode)
	}
	x, err := b.input(in)
	if err != nil {
		return err
	}
	y, ind := b.output(out), b.output(indices)
	k.wantIndices = ind.present()
	k.threads = b.e.threads
	return b.emit(func(slots []onnx.Value) error {
		xt, err := x.tensor(slots)
		if err != nil {
			return err
		}
		yt, it, err := k.compute(xt)
		if err != nil {
			return err
		}
		y.set(slots, yt)
		if it != nil {
			ind.set(slots, it)
		}
		return nil
	})
}

// VisitMaxPool compiles MaxPool: version 8 adds the Indices output and
// storage_order, 10 ceil_mode and dilations, 12 int8/uint8 data.
func (b *builder) VisitMaxPool(op *ops.MaxPool) error {
	if op.StorageOrder != 0 && op.StorageOrder != 1 {
		return fmt.Errorf("MaxPool: storage_order %d must be 0 or 1", op.StorageOrder)
	}
	k := &poolKernel{
		mode:         poolMax,
		attrs:        convWindowAttrs{op: "MaxPool", autoPad: op.AutoPad, strides: op.Strides, dilations: op.Dilations, pads: op.Pads, ceil: op.CeilMode != 0},
		kernelShape:  slices.Clone(op.KernelShape),
		storageOrder: op.StorageOrder,
		intsAllowed:  op.SinceVersion() >= 12,
	}
	return b.pool(k, op.In.X, op.Out.Y, op.Out.Indices)
}

// VisitAveragePool compiles AveragePool: version 7 adds
// count_include_pad, 10 ceil_mode, 19 dilations.
func (b *builder) VisitAveragePool(op *ops.AveragePool) error {
	k := &poolKernel{
		mode:        poolAvg,
		attrs:       convWindowAttrs{op: "AveragePool", autoPad: op.AutoPad, strides: op.Strides, dilations: op.Dilations, pads: op.Pads, ceil: op.CeilMode != 0},
		kernelShape: slices.Clone(op.KernelShape),
		countPad:    op.CountIncludePad != 0,
	}
	return b.pool(k, op.In.X, op.Out.Y, "")
}

// VisitLpPool compiles LpPool: p was a float before version 2 (read as an
// integer by the typed operator), 18 adds ceil_mode and dilations.
func (b *builder) VisitLpPool(op *ops.LpPool) error {
	if op.P < 1 {
		return network.Unsupportedf("LpPool with p = %d", op.P)
	}
	k := &poolKernel{
		mode:        poolLp,
		attrs:       convWindowAttrs{op: "LpPool", autoPad: op.AutoPad, strides: op.Strides, dilations: op.Dilations, pads: op.Pads, ceil: op.CeilMode != 0},
		kernelShape: slices.Clone(op.KernelShape),
		p:           op.P,
	}
	return b.pool(k, op.In.X, op.Out.Y, "")
}
