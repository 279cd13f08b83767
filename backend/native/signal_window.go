package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// signalWindowKind is one of the generalized cosine windows
//
//	w[j] = a0 - a1 cos(2 pi j / N) + a2 cos(4 pi j / N),  j in [0, size)
//
// with N = size when periodic and size-1 when symmetric.
type signalWindowKind struct {
	name string
	// at is w[j] for the given N, in float64 with the operations in the
	// order ONNX's reference uses, so that the values are the same to the
	// last bit: an integer output_datatype truncates them, and the peak of
	// a window must be exactly 1 there, not 0.9999999999999999.
	at func(j, n float64) float64
}

var (
	// https://onnx.ai/onnx/operators/onnx__HannWindow.html: sin²(πj/N).
	signalHann = signalWindowKind{"HannWindow", func(j, n float64) float64 {
		s := math.Sin(j * math.Pi / n)
		return s * s
	}}
	// https://onnx.ai/onnx/operators/onnx__HammingWindow.html: a0 = 25/46
	// and a1 = 1 - a0, so that a0 + a1 is exactly 1.
	signalHamming = signalWindowKind{"HammingWindow", func(j, n float64) float64 {
		a0 := 25.0 / 46 // a variable: 1 - a0 is then rounded as a float64 subtraction
		return a0 - float64(math.Cos(j*math.Pi*2/n)*(1-a0))
	}}
	// https://onnx.ai/onnx/operators/onnx__BlackmanWindow.html. The
	// conversions round each product, so that no platform fuses them into
	// the additions.
	signalBlackman = signalWindowKind{"BlackmanWindow", func(j, n float64) float64 {
		y := float64(math.Cos(j*(math.Pi*2)/n) * -0.5)
		y += float64(math.Cos(j*(math.Pi*4)/n) * 0.08)
		return y + 0.42
	}}
)

// values returns the window of the given size. A symmetric window of size
// 1 divides 0 by 0, as the definition does, and is NaN.
func (w signalWindowKind) values(size int, periodic bool) []float64 {
	v := make([]float64, size)
	den := float64(size)
	if !periodic {
		den = float64(size - 1)
	}
	for j := range v {
		v[j] = w.at(float64(j), den)
	}
	return v
}

// signalOutputType checks an output_datatype attribute against the real
// number types tensorFromFloat64s writes.
func signalOutputType(op string, dt int64) (onnx.DataType, error) {
	t := onnx.DataType(dt)
	switch t {
	case onnx.Float, onnx.Double, onnx.Float16, onnx.BFloat16,
		onnx.Int8, onnx.Int16, onnx.Int32, onnx.Int64,
		onnx.Uint8, onnx.Uint16, onnx.Uint32, onnx.Uint64:
		return t, nil
	}
	return 0, network.Unsupportedf("%s with output_datatype %d (%v)", op, dt, t)
}

// signalMaxWindow bounds window and matrix sizes.
const signalMaxWindow = 1 << 28

func (b *builder) window(kind signalWindowKind, sizeName, outName string, periodic, outputDatatype int64) error {
	size, err := b.input(sizeName)
	if err != nil {
		return err
	}
	dt, err := signalOutputType(kind.name, outputDatatype)
	if err != nil {
		return err
	}
	var out outputBuffer
	return b.emit(unaryTensorKernel(size, b.output(outName), func(t *onnx.Tensor) (*onnx.Tensor, error) {
		n, err := signalScalarInt(t, "size")
		if err != nil {
			return nil, err
		}
		if n < 0 || n > signalMaxWindow {
			return nil, fmt.Errorf("size %d is not in [0, %d]", n, signalMaxWindow)
		}
		v := kind.values(int(n), periodic != 0)
		res, err := tensorFromFloat64s(dt, []int{int(n)}, v)
		if err != nil {
			return nil, err
		}
		o := out.tensor(dt, res.Shape)
		onnx.CopySlice(o.Data, res.Data)
		return o, nil
	}))
}

// VisitHannWindow compiles HannWindow.
func (b *builder) VisitHannWindow(op *ops.HannWindow) error {
	return b.window(signalHann, op.In.Size, op.Out.Output, op.Periodic, op.OutputDatatype)
}

// VisitHammingWindow compiles HammingWindow.
func (b *builder) VisitHammingWindow(op *ops.HammingWindow) error {
	return b.window(signalHamming, op.In.Size, op.Out.Output, op.Periodic, op.OutputDatatype)
}

// VisitBlackmanWindow compiles BlackmanWindow.
func (b *builder) VisitBlackmanWindow(op *ops.BlackmanWindow) error {
	return b.window(signalBlackman, op.In.Size, op.Out.Output, op.Periodic, op.OutputDatatype)
}

// melWeightMatrix computes the [dftLength/2+1, numMelBins] matrix of
// triangular filters on the mel scale mel(f) = 2595 log10(1 + f/700).
// The num_mel_bins+2 band edges are spaced evenly in mel from
// lower_edge_hertz, by (mel(upper) - mel(lower)) / (num_mel_bins+2), and
// mapped to spectrogram bins as floor((dft_length+1) f / sample_rate).
// Filter i rises linearly from edge i to 1 at edge i+1 and falls to 0 at
// edge i+2; a filter whose rising side is empty is 1 at its centre.
func melWeightMatrix(numMel, dftLength, sampleRate int64, lower, upper float64) ([]float64, []int, error) {
	if numMel < 1 || dftLength < 1 || sampleRate < 1 {
		return nil, nil, fmt.Errorf("num_mel_bins %d, dft_length %d and sample_rate %d must be positive", numMel, dftLength, sampleRate)
	}
	bins := dftLength/2 + 1
	if numMel*bins > signalMaxWindow {
		return nil, nil, fmt.Errorf("a [%d, %d] mel weight matrix is too large", bins, numMel)
	}
	if lower < 0 || upper < lower || math.IsNaN(upper) {
		return nil, nil, fmt.Errorf("the band [%v, %v] Hz is not a range of non-negative frequencies", lower, upper)
	}
	mel := func(f float64) float64 { return 2595 * math.Log10(1+f/700) }
	lowMel, highMel := mel(lower), mel(upper)
	edges := make([]int64, numMel+2)
	step := (highMel - lowMel) / float64(numMel+2)
	for i := range edges {
		m := float64(i)*step + lowMel
		hz := 700 * (math.Pow(10, m/2595) - 1)
		edges[i] = int64(math.Floor(float64(dftLength+1) * hz / float64(sampleRate)))
	}
	out := make([]float64, bins*numMel)
	set := func(j, i int64, v float64) {
		if j >= 0 && j < bins {
			out[j*numMel+i] = v
		}
	}
	for i := range numMel {
		lo, mid, hi := edges[i], edges[i+1], edges[i+2]
		if mid == lo {
			set(mid, i, 1)
		} else {
			for j := lo; j <= mid; j++ {
				set(j, i, float64(j-lo)/float64(mid-lo))
			}
		}
		if hi > mid {
			for j := mid; j < hi; j++ {
				set(j, i, float64(hi-j)/float64(hi-mid))
			}
		}
	}
	return out, []int{int(bins), int(numMel)}, nil
}

// VisitMelWeightMatrix compiles MelWeightMatrix.
func (b *builder) VisitMelWeightMatrix(op *ops.MelWeightMatrix) error {
	names := []string{op.In.NumMelBins, op.In.DftLength, op.In.SampleRate, op.In.LowerEdgeHertz, op.In.UpperEdgeHertz}
	in, err := b.inputs(names)
	if err != nil {
		return err
	}
	dt, err := signalOutputType("MelWeightMatrix", op.OutputDatatype)
	if err != nil {
		return err
	}
	y := b.output(op.Out.Output)
	var out outputBuffer
	return b.emit(func(slots []onnx.Value) error {
		var ints [3]int64
		for i, what := range []string{"num_mel_bins", "dft_length", "sample_rate"} {
			t, err := in[i].tensor(slots)
			if err != nil {
				return err
			}
			if ints[i], err = signalScalarInt(t, what); err != nil {
				return err
			}
		}
		var hz [2]float64
		for i, what := range []string{"lower_edge_hertz", "upper_edge_hertz"} {
			t, err := in[3+i].tensor(slots)
			if err != nil {
				return err
			}
			v, err := float64sOf(t)
			if err != nil {
				return err
			}
			if len(v) != 1 {
				return fmt.Errorf("%s must be a scalar, got shape %v", what, t.Shape)
			}
			hz[i] = v[0]
		}
		v, shape, err := melWeightMatrix(ints[0], ints[1], ints[2], hz[0], hz[1])
		if err != nil {
			return err
		}
		res, err := tensorFromFloat64s(dt, shape, v)
		if err != nil {
			return err
		}
		o := out.tensor(dt, shape)
		onnx.CopySlice(o.Data, res.Data)
		y.set(slots, o)
		return nil
	})
}
