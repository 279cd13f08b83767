package native

import (
	"runtime"

	"github.com/deep500/deep500-go/backend/native/internal/conv"
)

// convDirect3x3On lets tests and benchmarks send the convolutions the
// direct 3×3 kernels cover through the general path, to compare the two.
var convDirect3x3On = true

// convDirect3x3 runs a float32 convolution of a 3×3 kernel, stride 1,
// dilation 1, one group and padding of at most 1 on package conv's direct
// kernels (conv.Direct3x3Layout) when they are faster than im2col and the
// GEMM for its shapes (convDirect3x3Wins), and reports whether it did.
// Each image's input is first copied once into its padded layout (items:
// the planes of the images); then each (image, block of 8 output
// channels) is an item: the block's weights repacked into the worker's
// scratch (or taken from pw), one kernel call
// over the whole image into the worker's output block, copied out and
// finished by the epilogue (bias, residual, activation) while in cache.
//
// With pw (nil: none), the weight is a constant whose repacked blocks are
// kept between runs (packedWeight.directWeights) instead of repacked by
// every item.
func convDirect3x3[T floatElem](y, x, w, b []T, s *convShapes, sc *convScratch[T], threads int, residual []T, act *fusedActivation, pw *packedWeight[T]) bool {
	y32, ok := any(y).([]float32)
	if !ok {
		return false
	}
	im, l, ok := convDirect3x3Applies(s)
	if !ok {
		return false
	}
	sc32 := any(sc).(*convScratch[float32])
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	sc32.reserve(threads)
	ts := convTasksOf(sc32)
	t := &ts.direct
	need := s.n * l.InputSize()
	if t.layout != l || len(t.padded) < need {
		// Pad writes only the input's positions: the borders and the
		// slack of a new layout start from a cleared buffer and stay
		// zero while the layout lasts.
		if cap(t.padded) < need {
			t.padded = make([]float32, need)
		} else {
			t.padded = t.padded[:need]
			clear(t.padded)
		}
		t.layout = l
	}
	blocks := (s.m + conv.Direct3x3Block - 1) / conv.Direct3x3Block
	for wk := range convWorkers(s.n*blocks, 0, threads) {
		sc32.get(wk, l.OutputSize()+l.WeightsSize()) // made before the items run
	}
	t.im, t.s, t.sc, t.blocks = im, s, sc32, blocks
	t.y, t.x, t.w = y32, any(x).([]float32), any(w).([]float32)
	t.b, _ = any(b).([]float32)
	t.residual, _ = any(residual).([]float32)
	t.act = act
	t.weights = nil
	switch {
	case pw != nil:
		t.weights = pw.directWeights(t.w, &l, s.m, blocks)
	case s.n > 1:
		// Every image's items use every block: pack the blocks once here
		// rather than once per item, n times over (a training step's
		// forward and input-gradient convolutions, whose weights change
		// every step, have no packed form to keep).
		size := blocks * l.WeightsSize()
		if cap(t.packed) < size {
			t.packed = make([]float32, size)
		}
		for blk := range blocks {
			l.PackWeights(t.packed[blk*l.WeightsSize():(blk+1)*l.WeightsSize()], t.w, s.m, blk*conv.Direct3x3Block)
		}
		t.weights = t.packed[:size]
	}
	// The planes are padded in one contiguous run per thread, not plane
	// by plane: see padChunks.
	t.padding, t.padChunks = true, min(s.n*s.c, threads)
	convRunTask(t.padChunks, 0, threads, t, &ts.items)
	t.padding = false
	convRunTask(s.n*blocks, 0, threads, t, &ts.items)
	*t = convDirect3x3Items{layout: t.layout, padded: t.padded, packed: t.packed} // hold no tensors between runs
	return true
}

// convDirect3x3Applies reports whether a float32 convolution of shapes s
// runs on the direct kernels, and with which kernel and layout.
func convDirect3x3Applies(s *convShapes) (*conv.Direct3x3Impl, conv.Direct3x3Layout, bool) {
	if !convDirect3x3On || s.group != 1 {
		return nil, conv.Direct3x3Layout{}, false
	}
	im := conv.Direct3x3Active()
	l, ok := conv.NewDirect3x3Layout(s.geom, s.c)
	return im, l, ok && convDirect3x3Wins(im, &l)
}

// directWeights returns the constant weight w (m output channels, layout
// l) repacked for the direct kernels, blocks blocks of l.WeightsSize one
// after the other: repacked only when w, its version or the layout
// changed since the last run, like the GEMM's packed form (matrices).
func (p *packedWeight[T]) directWeights(w []float32, l *conv.Direct3x3Layout, m, blocks int) []float32 {
	v := p.src.version()
	size := blocks * l.WeightsSize()
	if p.directValid && p.directVersion == v && p.directFirst == &w[0] && p.directSize == len(w) && len(p.direct) == size {
		return p.direct
	}
	if cap(p.direct) < size {
		p.direct = make([]float32, size)
	}
	p.direct = p.direct[:size]
	for blk := range blocks {
		l.PackWeights(p.direct[blk*l.WeightsSize():(blk+1)*l.WeightsSize()], w, m, blk*conv.Direct3x3Block)
	}
	p.directValid, p.directVersion, p.directFirst, p.directSize = true, v, &w[0], len(w)
	return p.direct
}

// convDirect3x3Wins reports whether the direct kernel im computes a
// convolution of layout l faster than im2col and
// the GEMM. Only the AVX-512 kernel does; the portable one (axpys) is
// there for correctness on other processors and never is. It loses its
// lead when the flat run is four vectors or fewer (7×7 outputs), where
// each block's weights are read from cache for few outputs. Measured at
// batch 1 on one thread (BenchmarkConvResNet3x3Layers, medians of 5
// interleaved runs on a shared machine, direct/general time): CIFAR
// layers 32×32×3→16 0.45, 32×32×16→16 0.51, 16×16×32→32 0.64, 8×8×64→64
// 0.76, stride 2 32×32×16→32 0.59, 16×16×32→64 0.94; ResNet-18 56×56×64
// 0.63, 28×28×128 0.58, 14×14×256 0.78, stride 2 56×56×64→128 0.77,
// 28×28×128→256 0.72; but 7×7×512 0.97–1.01 and stride 2 14×14×256→512
// 1.02–1.06 (both a run of 4 vectors, 49 outputs), on one and two
// threads. Four vectors that are all outputs (8×8 in the flat layout) do
// win: 8×8×64→64 took 41 µs on the flat layout's 4 vectors against 51 on
// the pitched one's 5 (the kernel alone, 8 blocks).
func convDirect3x3Wins(im *conv.Direct3x3Impl, l *conv.Direct3x3Layout) bool {
	return im.Name == "avx512" && (l.Run > 4*16 || l.OH*l.OW >= 4*16)
}

// convDirect3x3Items is the work of convDirect3x3: with padding set,
// item i pads the i-th of padChunks runs of the N·C planes; otherwise
// item i computes image i/blocks, output channels from 8·(i%blocks).
type convDirect3x3Items struct {
	layout conv.Direct3x3Layout
	padded []float32 // the padded inputs, one InputSize per image
	packed []float32 // every block's weights packed by this run, for a weight with no packedWeight

	im      *conv.Direct3x3Impl
	s       *convShapes
	sc      *convScratch[float32]
	blocks  int
	padding bool
	// padChunks is the number of padding items: each pads a contiguous
	// run of the N·C planes. One item per plane had the threads take
	// turns at the item counter's cache line and write the neighbouring
	// ends of planes that share a line; on this virtual machine a cache
	// line goes from one core to the other and back in 50–100 ns most of
	// the time, but for stretches of tens of seconds in 360–460 ns, and
	// then those hand-overs cost more than the copies.
	padChunks            int
	weights              []float32 // every block's repacked weights, or nil: each item repacks its own
	y, x, w, b, residual []float32
	act                  *fusedActivation
}

func (t *convDirect3x3Items) runItem(i, worker, _ int) {
	l, s := &t.layout, t.s
	inSz, outSz := l.H*l.W, l.OH*l.OW
	if t.padding {
		// Planes [lo, hi) of the N·C, image by image.
		planes := s.n * s.c
		lo, hi := i*planes/t.padChunks, (i+1)*planes/t.padChunks
		for ni := lo / s.c; ni*s.c < hi; ni++ {
			c0, c1 := max(lo-ni*s.c, 0), min(hi-ni*s.c, s.c)
			l.PadChannels(t.padded[ni*l.InputSize():(ni+1)*l.InputSize()], t.x[ni*s.c*inSz:(ni+1)*s.c*inSz], c0, c1)
		}
		return
	}
	ni, blk := i/t.blocks, i%t.blocks
	co := blk * conv.Direct3x3Block
	rows := min(conv.Direct3x3Block, s.m-co)
	buf := t.sc.get(worker, l.OutputSize()+l.WeightsSize())
	out, packed := buf[:l.OutputSize()], buf[l.OutputSize():]
	if t.weights != nil {
		packed = t.weights[blk*l.WeightsSize() : (blk+1)*l.WeightsSize()]
	} else {
		l.PackWeights(packed, t.w, s.m, co)
	}
	t.im.Block(l, out, t.padded[ni*l.InputSize():(ni+1)*l.InputSize()], packed)
	yb := t.y[(ni*s.m+co)*outSz : (ni*s.m+co+rows)*outSz]
	l.Unpitch(yb, out, rows)
	if t.b == nil && t.residual == nil && t.act == nil {
		return
	}
	ep := epilogueOf[float32](t.act)
	if t.b != nil {
		ep.RowBias = t.b[co : co+rows]
	}
	if t.residual != nil {
		ep.Residual = t.residual[(ni*s.m+co)*outSz : (ni*s.m+co+rows)*outSz]
	}
	ep.Apply(yb, outSz, rows, outSz)
}
