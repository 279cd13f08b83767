package native

import (
	"math"
	"runtime"

	"github.com/deep500/deep500-go/backend/native/internal/conv"
	"github.com/deep500/deep500-go/backend/native/internal/gemm"
)

// convDepthwiseOn lets tests send depthwise convolutions through the
// general path, to compare the two.
var convDepthwiseOn = true

// convDepthwise runs a float32 convolution whose groups each hold one
// input channel (depthwise, with mg = M/C output channels per group: a
// channel multiplier) on package conv's depthwise kernels when they
// cover the window (2-D, 3×3 or 5×5, stride 1 or 2, dilation 1), and
// reports whether it did. Each (image, channel) input plane is one item:
// copied once into the worker's padded scratch, then read by the kernel
// of each of its mg outputs, bias included. A fused clamp (Relu, Relu6)
// is the kernels' own when no residual comes between it and the bias;
// otherwise their clamp is open (±Inf) and the rest of the epilogue (the
// residual, the clamp, another activation) runs over each output plane
// right after the kernel wrote it.
func convDepthwise[T floatElem](y, x, w, b []T, s *convShapes, sc *convScratch[T], threads int, residual []T, act *fusedActivation) bool {
	y32, ok := any(y).([]float32)
	if !ok || !convDepthwiseOn || s.group != s.c {
		return false
	}
	im := conv.DepthwiseActive()
	if s.dwImpl != im {
		// The layout and kernel depend only on the shapes (and the
		// implementation, which tests switch): made once per shape, as
		// the kernel function is allocated.
		s.dwLayout, s.dwOK = conv.NewDepthwiseLayout(s.geom)
		s.dwKernel, s.dwImpl = nil, im
		if s.dwOK {
			s.dwKernel = s.dwLayout.DepthwiseKernel(im)
		}
	}
	if !s.dwOK {
		return false
	}
	sc32 := any(sc).(*convScratch[float32])
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	sc32.reserve(threads)
	ts := convTasksOf(sc32)
	t := &ts.dw
	*t = convDepthwiseItems{l: &s.dwLayout, im: im, kernel: s.dwKernel, s: s, sc: sc32, prepared: t.prepared,
		y: y32, x: any(x).([]float32), w: any(w).([]float32), mg: s.m / s.group}
	t.b, _ = any(b).([]float32)
	t.residual, _ = any(residual).([]float32)
	// A worker clears its scratch once (the padding), then each Load
	// writes only the input's positions.
	t.prepared = append(t.prepared[:0], make([]bool, threads)...)
	for wk := range convWorkers(s.n*s.c, 0, threads) {
		sc32.get(wk, s.dwLayout.ScratchSize()) // made before the items run
	}
	t.lo, t.hi = float32(math.Inf(-1)), float32(math.Inf(1))
	t.after = epilogueOf[float32](act)
	if t.after.Clamp && residual == nil {
		t.lo, t.hi, t.after.Clamp = t.after.Lo, t.after.Hi, false
	}
	t.finish = t.after.Clamp || t.after.Rows != nil || t.residual != nil
	convRunTask(s.n*s.c, 0, threads, t, &ts.items)
	*t = convDepthwiseItems{prepared: t.prepared} // hold no tensors between runs
	return true
}

// convDepthwiseItems is the work of convDepthwise: item i is the input
// plane of image i/C, channel i%C, and its mg output planes.
type convDepthwiseItems struct {
	l        *conv.DepthwiseLayout
	im       *conv.DepthwiseImpl
	kernel   conv.DepthwisePlaneFunc
	s        *convShapes
	sc       *convScratch[float32]
	prepared []bool // per worker: its scratch's padding is cleared

	y, x, w, b, residual []float32
	mg                   int
	lo, hi               float32
	after                gemm.Epilogue[float32]
	finish               bool
}

func (t *convDepthwiseItems) runItem(i, worker, _ int) {
	l, s := t.l, t.s
	inSz, outSz, ks := l.H*l.W, l.OH*l.OW, l.K*l.K
	src := t.sc.get(worker, l.ScratchSize())
	if !t.prepared[worker] {
		l.Prepare(src)
		t.prepared[worker] = true
	}
	l.Load(t.im, src, t.x[i*inSz:(i+1)*inSz])
	ni, ci := i/s.c, i%s.c
	for r := range t.mg {
		oc := ci*t.mg + r
		var bias float32
		if t.b != nil {
			bias = t.b[oc]
		}
		plane := t.y[(ni*s.m+oc)*outSz : (ni*s.m+oc+1)*outSz]
		t.kernel(l, plane, src, t.w[oc*ks:(oc+1)*ks], bias, t.lo, t.hi)
		if t.finish {
			ep := t.after
			if t.residual != nil {
				ep.Residual = t.residual[(ni*s.m+oc)*outSz : (ni*s.m+oc+1)*outSz]
			}
			ep.Apply(plane, outSz, 1, outSz)
		}
	}
}
