package native

import (
	"fmt"

	"github.com/deep500/deep500-go/backend/native/internal/fft"
	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Signal tensors hold a real signal as a trailing dimension of 1 and a
// complex one as a trailing dimension of 2 (real, imaginary). The kernels
// widen the input to float64 once (float64Data), transform complex128
// lines with a cached FFT plan (signal_fft.go), and narrow the result once
// to the input's type (storeFloat64s).

// signalScalarInt reads a scalar (or one-element) integer input.
func signalScalarInt(t *onnx.Tensor, what string) (int64, error) {
	v, err := intsOf(t)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("%s must be a scalar, got shape %v", what, t.Shape)
	}
	return v[0], nil
}

// signalMaxLength bounds transform lengths, so that a hostile dft_length
// or frame_length cannot make a kernel allocate without limit.
const signalMaxLength = 1 << 28

// dftKernel computes DFT along one axis of a [..., 1|2] tensor.
type dftKernel struct {
	inverse  bool
	onesided bool
	threads  int
	plans    fft.Cache
	wide     []float64
	res      []float64
	out      outputBuffer
}

// compute transforms x along axis (a dimension of x, the trailing complex
// dimension excluded) with transform length n (0: the axis' length).
func (k *dftKernel) compute(x *onnx.Tensor, axis int64, n int64) (*onnx.Tensor, error) {
	r := len(x.Shape)
	if r < 2 {
		return nil, fmt.Errorf("input has shape %v; DFT needs [..., signal, 1 or 2]", x.Shape)
	}
	c := x.Shape[r-1]
	if c != 1 && c != 2 {
		return nil, fmt.Errorf("input has shape %v: the last dimension must be 1 (real) or 2 (complex)", x.Shape)
	}
	a := axis
	if a < 0 {
		a += int64(r)
	}
	if a < 0 || a > int64(r-2) {
		return nil, fmt.Errorf("axis %d is out of range for input shape %v (the last dimension is the complex one)", axis, x.Shape)
	}
	ax := int(a)
	length := x.Shape[ax]
	irfft := k.inverse && k.onesided
	if n == 0 {
		n = int64(length)
		if irfft {
			// The one-sided input holds n/2+1 bins of an even-length signal.
			n = 2 * (int64(length) - 1)
			if n < 1 {
				return nil, fmt.Errorf("input has %d frequency bins on axis %d; an inverse one-sided DFT needs 2 or more, or a dft_length", length, axis)
			}
		}
	}
	if n < 1 || n > signalMaxLength {
		return nil, fmt.Errorf("dft_length %d is not in [1, %d]", n, signalMaxLength)
	}
	outLen, outC := int(n), 2
	switch {
	case irfft:
		outC = 1 // a real signal
	case k.onesided:
		outLen = int(n)/2 + 1
	}
	shape := append([]int{}, x.Shape...)
	shape[ax], shape[r-1] = outLen, outC
	if onnx.NumElements(shape) > 1<<31 {
		return nil, fmt.Errorf("output shape %v is too large", shape)
	}
	in, err := float64Data(x, &k.wide)
	if err != nil {
		return nil, err
	}
	out := k.out.tensor(x.Type, shape)
	if cap(k.res) < out.Len() {
		k.res = make([]float64, out.Len())
	}
	res := k.res[:out.Len()]
	outer := onnx.NumElements(x.Shape[:ax])
	inner := onnx.NumElements(x.Shape[ax+1 : r-1])
	plan := k.plans.Plan(int(n), k.inverse)
	used := min(length, int(n))
	scale := 1.0
	if k.inverse {
		scale = 1 / float64(n)
	}
	lines := outer * inner
	par.For(lines, k.threads, max(1, 4096/int(n)), func(lo, hi int) {
		buf := make([]complex128, n)
		scratch := make([]complex128, plan.ScratchLen())
		for line := lo; line < hi; line++ {
			o, i := line/inner, line%inner
			at := func(j int) complex128 {
				p := ((o*length+j)*inner + i) * c
				if c == 2 {
					return complex(in[p], in[p+1])
				}
				return complex(in[p], 0)
			}
			if irfft {
				// Rebuild the full spectrum from bins 0..n/2 (the input's
				// first bins, zero past its end) by conjugate symmetry.
				// The imaginary parts of bin 0 and, for even n, bin n/2
				// only reach the imaginary part of the result, which is
				// dropped, as a real inverse transform ignores them.
				for j := range int(n) {
					b := j
					if j > int(n)/2 {
						b = int(n) - j
					}
					v := complex128(0)
					if b < length {
						v = at(b)
					}
					if b != j {
						v = complex(real(v), -imag(v))
					}
					buf[j] = v
				}
				plan.Transform(buf, scratch)
				for j := range outLen {
					res[(o*outLen+j)*inner+i] = real(buf[j]) * scale
				}
				continue
			}
			for j := range used {
				buf[j] = at(j)
			}
			clear(buf[used:])
			plan.Transform(buf, scratch)
			for j := range outLen {
				q := ((o*outLen+j)*inner + i) * 2
				res[q] = real(buf[j]) * scale
				res[q+1] = imag(buf[j]) * scale
			}
		}
	})
	storeFloat64s(out, res)
	return out, nil
}

// VisitDFT compiles DFT: version 17 takes the axis as an attribute
// (default 1), version 20 as an optional scalar input (default -2, the
// last signal axis). Both define inverse=1 with onesided=1 as the inverse
// real transform: one-sided complex bins in, a real signal of dft_length
// (default 2*(bins-1)) out.
// https://onnx.ai/onnx/operators/onnx__DFT.html
func (b *builder) VisitDFT(op *ops.DFT) error {
	x, err := b.input(op.In.Input)
	if err != nil {
		return err
	}
	dftLen, err := b.optionalInput(op.In.DftLength)
	if err != nil {
		return err
	}
	axisIn, err := b.optionalInput(op.In.Axis)
	if err != nil {
		return err
	}
	axis := op.Axis
	if op.SinceVersion() >= 20 {
		axis = -2
	}
	k := &dftKernel{inverse: op.Inverse != 0, onesided: op.Onesided != 0, threads: b.e.threads}
	y := b.output(op.Out.Output)
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		var n int64
		if lt, err := dftLen.optionalTensor(slots); err != nil {
			return err
		} else if lt != nil {
			if n, err = signalScalarInt(lt, "dft_length"); err != nil {
				return err
			}
			if n < 1 {
				return fmt.Errorf("dft_length %d must be positive", n)
			}
		}
		a := axis
		if at, err := axisIn.optionalTensor(slots); err != nil {
			return err
		} else if at != nil {
			if a, err = signalScalarInt(at, "axis"); err != nil {
				return err
			}
		}
		out, err := k.compute(t, a, n)
		if err != nil {
			return err
		}
		y.set(slots, out)
		return nil
	})
}

// stftKernel computes STFT of [batch, length, 1|2] signals.
type stftKernel struct {
	onesided bool
	threads  int
	plans    fft.Cache
	wide     []float64
	wideWin  []float64
	res      []float64
	out      outputBuffer
}

// compute frames the signal with the given step and frame length (0: the
// window's length), multiplies each frame by the window (nil: none) and
// transforms it.
func (k *stftKernel) compute(x *onnx.Tensor, step, frameLen int64, window *onnx.Tensor) (*onnx.Tensor, error) {
	if len(x.Shape) != 3 || (x.Shape[2] != 1 && x.Shape[2] != 2) {
		return nil, fmt.Errorf("signal has shape %v; STFT needs [batch, length, 1 or 2]", x.Shape)
	}
	batch, length, c := x.Shape[0], x.Shape[1], x.Shape[2]
	var win []float64
	if window != nil {
		if len(window.Shape) != 1 {
			return nil, fmt.Errorf("window has shape %v; it must be 1-D", window.Shape)
		}
		if frameLen != 0 && int64(window.Shape[0]) != frameLen {
			return nil, fmt.Errorf("window length %d differs from frame_length %d", window.Shape[0], frameLen)
		}
		frameLen = int64(window.Shape[0])
		var err error
		if win, err = float64Data(window, &k.wideWin); err != nil {
			return nil, err
		}
	}
	if frameLen == 0 {
		return nil, fmt.Errorf("STFT needs a window or a frame_length")
	}
	if frameLen < 1 || frameLen > int64(length) {
		return nil, fmt.Errorf("frame length %d is not in [1, signal length %d]", frameLen, length)
	}
	if step < 1 {
		return nil, fmt.Errorf("frame_step %d must be positive", step)
	}
	n := int(frameLen)
	frames := (length-n)/int(step) + 1
	outLen := n
	if k.onesided {
		outLen = n/2 + 1
	}
	shape := []int{batch, frames, outLen, 2}
	in, err := float64Data(x, &k.wide)
	if err != nil {
		return nil, err
	}
	out := k.out.tensor(x.Type, shape)
	if cap(k.res) < out.Len() {
		k.res = make([]float64, out.Len())
	}
	res := k.res[:out.Len()]
	plan := k.plans.Plan(n, false)
	par.For(batch*frames, k.threads, max(1, 4096/n), func(lo, hi int) {
		buf := make([]complex128, n)
		scratch := make([]complex128, plan.ScratchLen())
		for line := lo; line < hi; line++ {
			bi, f := line/frames, line%frames
			start := f * int(step)
			for j := range n {
				p := (bi*length + start + j) * c
				v := complex(in[p], 0)
				if c == 2 {
					v = complex(in[p], in[p+1])
				}
				if win != nil {
					v *= complex(win[j], 0)
				}
				buf[j] = v
			}
			plan.Transform(buf, scratch)
			q := line * outLen * 2
			for j := range outLen {
				res[q+2*j] = real(buf[j])
				res[q+2*j+1] = imag(buf[j])
			}
		}
	})
	storeFloat64s(out, res)
	return out, nil
}

// VisitSTFT compiles STFT.
func (b *builder) VisitSTFT(op *ops.STFT) error {
	x, err := b.input(op.In.Signal)
	if err != nil {
		return err
	}
	stepIn, err := b.input(op.In.FrameStep)
	if err != nil {
		return err
	}
	winIn, err := b.optionalInput(op.In.Window)
	if err != nil {
		return err
	}
	lenIn, err := b.optionalInput(op.In.FrameLength)
	if err != nil {
		return err
	}
	k := &stftKernel{onesided: op.Onesided != 0, threads: b.e.threads}
	y := b.output(op.Out.Output)
	return b.emit(func(slots []onnx.Value) error {
		t, err := x.tensor(slots)
		if err != nil {
			return err
		}
		st, err := stepIn.tensor(slots)
		if err != nil {
			return err
		}
		step, err := signalScalarInt(st, "frame_step")
		if err != nil {
			return err
		}
		win, err := winIn.optionalTensor(slots)
		if err != nil {
			return err
		}
		var frameLen int64
		if lt, err := lenIn.optionalTensor(slots); err != nil {
			return err
		} else if lt != nil {
			if frameLen, err = signalScalarInt(lt, "frame_length"); err != nil {
				return err
			}
			if frameLen < 1 {
				return fmt.Errorf("frame_length %d must be positive", frameLen)
			}
		}
		out, err := k.compute(t, step, frameLen, win)
		if err != nil {
			return err
		}
		y.set(slots, out)
		return nil
	})
}
