package native

import (
	"math"
	"runtime"

	"github.com/deep500/deep500-go/backend/native/internal/conv"
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
	l, ok := conv.NewDepthwiseLayout(s.geom)
	if !ok {
		return false
	}
	x32, w32, sc32 := any(x).([]float32), any(w).([]float32), any(sc).(*convScratch[float32])
	b32, _ := any(b).([]float32)
	mg := s.m / s.group
	inSz, outSz, ks := l.H*l.W, l.OH*l.OW, l.K*l.K
	im := conv.DepthwiseActive()
	kernel := l.DepthwiseKernel(im)
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	sc32.reserve(threads)
	// A worker clears its scratch once (the padding), then each Load
	// writes only the input's positions.
	prepared := make([]bool, threads)
	lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
	after := epilogueOf[float32](act)
	if after.Clamp && residual == nil {
		lo, hi, after.Clamp = after.Lo, after.Hi, false
	}
	r32, _ := any(residual).([]float32)
	finish := after.Clamp || after.Rows != nil || r32 != nil
	convRunItems(s.n*s.c, 0, threads, func(i, worker, _ int) {
		src := sc32.get(worker, l.ScratchSize())
		if !prepared[worker] {
			l.Prepare(src)
			prepared[worker] = true
		}
		l.Load(im, src, x32[i*inSz:(i+1)*inSz])
		ni, ci := i/s.c, i%s.c
		for r := range mg {
			oc := ci*mg + r
			var bias float32
			if b32 != nil {
				bias = b32[oc]
			}
			plane := y32[(ni*s.m+oc)*outSz : (ni*s.m+oc+1)*outSz]
			kernel(&l, plane, src, w32[oc*ks:(oc+1)*ks], bias, lo, hi)
			if finish {
				ep := after
				if r32 != nil {
					ep.Residual = r32[(ni*s.m+oc)*outSz : (ni*s.m+oc+1)*outSz]
				}
				ep.Apply(plane, outSz, 1, outSz)
			}
		}
	})
	return true
}
