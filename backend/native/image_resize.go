package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Resize (versions 10, 11, 13, 18, 19) and Upsample (1, 7, 9, 10).
//
// Every axis is resized on its own: an output coordinate x along an axis is
// mapped to a coordinate of the input by the coordinate transformation mode
// (resizeCoord.original), and the output value is a weighted sum of input
// values near it along that axis. Linear and cubic interpolation (with or
// without antialiasing) are separable, so the kernel interpolates one axis
// at a time, each pass turning [outer, in, inner] into [outer, out, inner]
// with a precomputed table of taps (input index, weight) per output
// coordinate. Nearest is a pure gather of one input element per output
// element and works for every element type.
//
// The taps follow ONNX's definition exactly: the ratio r = x - floor(x) is
// taken in (0, 1] (an integral x counts as r = 1 from the left neighbour),
// the n taps are the n nearest indexes of the input padded by n/2 edge
// values on each side, and indexes outside the input read the edge value
// (or get weight 0 and the rest renormalized when exclude_outside is set).

// resizeInterp is Resize's mode.
type resizeInterp int

const (
	resizeNearest resizeInterp = iota
	resizeLinear
	resizeCubic
)

// resizeCoord is a coordinate_transformation_mode.
type resizeCoord int

const (
	resizeHalfPixel resizeCoord = iota
	resizeHalfPixelSymmetric
	resizePytorchHalfPixel
	resizeAlignCorners
	resizeAsymmetric
	resizeTFHalfPixelForNN
	resizeTFCropAndResize
)

var resizeCoordNames = map[string]resizeCoord{
	"half_pixel":           resizeHalfPixel,
	"half_pixel_symmetric": resizeHalfPixelSymmetric,
	"pytorch_half_pixel":   resizePytorchHalfPixel,
	"align_corners":        resizeAlignCorners,
	"asymmetric":           resizeAsymmetric,
	"tf_half_pixel_for_nn": resizeTFHalfPixelForNN,
	"tf_crop_and_resize":   resizeTFCropAndResize,
}

// resizeRounding is a nearest_mode; resizeSimple is the rule of Resize 10
// and Upsample (floor when upsampling, ceil when downsampling an axis).
type resizeRounding int

const (
	resizeRoundPreferFloor resizeRounding = iota
	resizeRoundPreferCeil
	resizeFloor
	resizeCeil
	resizeSimple
)

var resizeRoundingNames = map[string]resizeRounding{
	"round_prefer_floor": resizeRoundPreferFloor,
	"round_prefer_ceil":  resizeRoundPreferCeil,
	"floor":              resizeFloor,
	"ceil":               resizeCeil,
}

// resizeKeepAspect is keep_aspect_ratio_policy.
type resizeKeepAspect int

const (
	resizeStretch resizeKeepAspect = iota
	resizeNotLarger
	resizeNotSmaller
)

// resizeMaxElements bounds the output a Resize may allocate, so that a
// hostile scale or size is an error rather than an out-of-memory crash.
const resizeMaxElements = 1 << 29

// original maps output coordinate j of an axis of input length in, output
// length out and scale to the input's coordinate system. outF = scale*in is
// the unrounded output length, which ONNX's definition uses where it says
// length_resized; r0, r1 are the axis's roi (tf_crop_and_resize). outside
// reports a coordinate that tf_crop_and_resize fills with the
// extrapolation value.
func (m resizeCoord) original(j int, scale float64, in, out int, r0, r1 float64) (x float64, outside bool) {
	xr := float64(j)
	outF := scale * float64(in)
	switch m {
	case resizeHalfPixel:
		return (xr+0.5)/scale - 0.5, false
	case resizeHalfPixelSymmetric:
		adjustment := float64(out) / outF
		center := float64(in) / 2
		return center*(1-adjustment) + (xr+0.5)/scale - 0.5, false
	case resizePytorchHalfPixel:
		if out <= 1 {
			return 0, false
		}
		return (xr+0.5)/scale - 0.5, false
	case resizeAlignCorners:
		if outF == 1 {
			return 0, false
		}
		return xr * float64(in-1) / (outF - 1), false
	case resizeAsymmetric:
		return xr / scale, false
	case resizeTFHalfPixelForNN:
		return (xr + 0.5) / scale, false
	case resizeTFCropAndResize:
		if outF == 1 {
			x = (r1 - r0) * float64(in-1) / 2
		} else {
			x = xr * (r1 - r0) * float64(in-1) / (outF - 1)
		}
		x += r0 * float64(in-1)
		return x, x < 0 || x > float64(in-1)
	}
	return math.NaN(), false
}

// nearestIndex rounds an input coordinate to the index nearest mode picks,
// clamped into [0, in).
func (m resizeRounding) nearestIndex(x float64, in int, downsampling bool) int {
	f := math.Floor(x)
	r := x - f
	var i float64
	switch {
	case r == 0:
		i = f
	case m == resizeRoundPreferFloor:
		i = f
		if r > 0.5 {
			i++
		}
	case m == resizeRoundPreferCeil:
		i = f
		if r >= 0.5 {
			i++
		}
	case m == resizeFloor:
		i = f
	case m == resizeCeil:
		i = f + 1
	case m == resizeSimple:
		i = f
		if downsampling {
			i++
		}
	}
	return int(max(0, min(i, float64(in-1))))
}

// resizeKernel is a compiled Resize or Upsample node.
type resizeKernel struct {
	op             string // "Resize" or "Upsample", for messages
	interp         resizeInterp
	coord          resizeCoord
	rounding       resizeRounding
	cubicA         float64
	excludeOutside bool
	antialias      bool
	extrapolation  float64
	axes           []int64 // nil: every axis
	keepAspect     resizeKeepAspect
	threads        int

	out    outputBuffer
	wideIn float32Scratch
	bufA32 float32Scratch
	bufB32 float32Scratch
	bufA64 resizeBuf64
	bufB64 resizeBuf64
}

// resizeAxis is the plan of one axis: output length, and either the
// nearest input index per output coordinate or n taps per coordinate.
type resizeAxis struct {
	in, out  int
	n        int       // taps per coordinate; 0 for nearest
	idx      []int     // nearest: [out]; taps: [out*n]
	w        []float64 // tap weights [out*n]
	outside  []bool    // coordinates set to the extrapolation value; nil if none
	identity bool      // the axis maps every coordinate onto itself
}

// resizeGeometry resolves the output shape and the per-axis scales and roi
// of one run from the scales or sizes and roi inputs. scales and sizes are
// over k.axes (every axis when nil); an empty tensor counts as absent.
func (k *resizeKernel) resizeGeometry(shape []int, roi, scales, sizes []float64, haveSizes bool) (outShape []int, sc, r0, r1 []float64, err error) {
	rank := len(shape)
	axes := make([]int, rank)
	for i := range axes {
		axes[i] = i
	}
	if k.axes != nil {
		if axes, err = normalizeAxes(k.axes, rank); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	outShape = append([]int{}, shape...)
	sc = make([]float64, rank)
	for i := range sc {
		sc[i] = 1
	}
	if haveSizes {
		if len(sizes) != len(axes) {
			return nil, nil, nil, nil, fmt.Errorf("sizes has %d values for %d axes of input shape %v", len(sizes), len(axes), shape)
		}
		for i, a := range axes {
			if sizes[i] < 0 || sizes[i] > resizeMaxElements {
				return nil, nil, nil, nil, fmt.Errorf("sizes[%d] = %v is not a valid length", i, sizes[i])
			}
			if shape[a] == 0 && sizes[i] != 0 {
				return nil, nil, nil, nil, fmt.Errorf("cannot resize axis %d of length 0 to %v", a, sizes[i])
			}
			outShape[a] = int(sizes[i])
			if shape[a] > 0 {
				sc[a] = sizes[i] / float64(shape[a])
			}
		}
		if k.keepAspect != resizeStretch && len(axes) > 0 {
			s := sc[axes[0]]
			for _, a := range axes[1:] {
				if k.keepAspect == resizeNotLarger {
					s = min(s, sc[a])
				} else {
					s = max(s, sc[a])
				}
			}
			for _, a := range axes {
				sc[a] = s
				outShape[a] = int(s*float64(shape[a]) + 0.5)
			}
		}
	} else {
		if len(scales) != len(axes) {
			return nil, nil, nil, nil, fmt.Errorf("scales has %d values for %d axes of input shape %v", len(scales), len(axes), shape)
		}
		for i, a := range axes {
			s := scales[i]
			if !(s > 0) || math.IsInf(s, 0) {
				return nil, nil, nil, nil, fmt.Errorf("scales[%d] = %v must be a positive finite number", i, s)
			}
			n := s * float64(shape[a])
			if n > resizeMaxElements {
				return nil, nil, nil, nil, fmt.Errorf("scale %v makes axis %d of length %d too long", s, a, shape[a])
			}
			sc[a], outShape[a] = s, int(n)
		}
	}
	total := 1
	for _, d := range outShape {
		if d != 0 && total > resizeMaxElements/d {
			return nil, nil, nil, nil, fmt.Errorf("output shape %v is too large", outShape)
		}
		total *= d
	}
	r0, r1 = make([]float64, rank), make([]float64, rank)
	for i := range r1 {
		r1[i] = 1
	}
	if k.coord == resizeTFCropAndResize {
		if len(roi) != 2*len(axes) {
			return nil, nil, nil, nil, fmt.Errorf("tf_crop_and_resize needs a roi of %d values, got %d", 2*len(axes), len(roi))
		}
		for i, a := range axes {
			r0[a], r1[a] = roi[i], roi[len(axes)+i]
		}
	}
	return outShape, sc, r0, r1, nil
}

// planAxis computes the taps of one axis.
func (k *resizeKernel) planAxis(in, out int, scale, r0, r1 float64) resizeAxis {
	ax := resizeAxis{in: in, out: out, identity: in == out}
	if k.interp == resizeNearest {
		ax.idx = make([]int, out)
		for j := range out {
			x, outside := k.coord.original(j, scale, in, out, r0, r1)
			if outside {
				if ax.outside == nil {
					ax.outside = make([]bool, out)
				}
				ax.outside[j] = true
				ax.identity = false
			}
			ax.idx[j] = k.rounding.nearestIndex(x, in, scale < 1)
			if ax.idx[j] != j {
				ax.identity = false
			}
		}
		return ax
	}
	// The filter's support: offsets start..start+n-1 from floor(x).
	start, s := 0, 1.0
	switch {
	case k.interp == resizeCubic:
		start = -1
	}
	if k.antialias && scale < 1 {
		s = scale
		if k.interp == resizeCubic {
			start = int(math.Floor(-2/s) + 1)
		} else {
			start = int(math.Floor(-1/s) + 1)
		}
	}
	n := 2 - 2*start
	pad := n / 2
	ax.n = n
	ax.idx = make([]int, out*n)
	ax.w = make([]float64, out*n)
	for j := range out {
		x, outside := k.coord.original(j, scale, in, out, r0, r1)
		if outside {
			if ax.outside == nil {
				ax.outside = make([]bool, out)
			}
			ax.outside[j] = true
		}
		x0 := math.Floor(x)
		r := x - x0
		if r == 0 {
			x0, r = x0-1, 1
		}
		// The window of n nearest indexes in the padded input [-pad, in+pad).
		lo := max(x0+float64(start), float64(-pad))
		lo = min(lo, float64(in+pad-n))
		idx, w := ax.idx[j*n:(j+1)*n], ax.w[j*n:(j+1)*n]
		sum := 0.0
		for t := range n {
			d := (float64(start+t) - r) * s
			w[t] = k.filter(math.Abs(d))
			sum += w[t]
			idx[t] = int(lo) + t
		}
		if k.excludeOutside {
			sum = 0
			for t := range n {
				if idx[t] < 0 || idx[t] >= in {
					w[t] = 0
				}
				sum += w[t]
			}
		}
		if k.antialias || k.excludeOutside {
			for t := range w {
				w[t] /= sum
			}
		}
		for t := range n {
			idx[t] = max(0, min(idx[t], in-1))
			if w[t] != 0 && (idx[t] != j || w[t] != 1) {
				ax.identity = false
			}
		}
		if outside {
			ax.identity = false
		}
	}
	return ax
}

// filter is the interpolation kernel at distance d >= 0.
func (k *resizeKernel) filter(d float64) float64 {
	if k.interp == resizeLinear {
		return max(0, 1-d)
	}
	a := k.cubicA
	switch {
	case d <= 1:
		return ((a+2)*d-(a+3))*d*d + 1
	case d < 2:
		return ((a*d-5*a)*d+8*a)*d - 4*a
	}
	return 0
}

// compute resizes x. roi, scales and sizes are the optional inputs (nil
// when omitted); for Upsample and Resize 10 scales is always given.
func (k *resizeKernel) compute(x *onnx.Tensor, roi, scales, sizes *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	var roiV, scalesV, sizesV []float64
	var err error
	haveSizes := sizes != nil && sizes.Len() > 0
	haveScales := scales != nil && scales.Len() > 0
	switch {
	case haveSizes && haveScales:
		return nil, fmt.Errorf("only one of scales and sizes may be given")
	case haveSizes:
		s, err := intsOf(sizes)
		if err != nil {
			return nil, fmt.Errorf("sizes: %w", err)
		}
		sizesV = make([]float64, len(s))
		for i, v := range s {
			sizesV[i] = float64(v)
		}
	case haveScales:
		if scalesV, err = float64sOf(scales); err != nil {
			return nil, fmt.Errorf("scales: %w", err)
		}
	default:
		return nil, fmt.Errorf("%s needs scales or sizes", k.op)
	}
	if roi != nil && k.coord == resizeTFCropAndResize {
		if roiV, err = float64sOf(roi); err != nil {
			return nil, fmt.Errorf("roi: %w", err)
		}
	}
	outShape, sc, r0, r1, err := k.resizeGeometry(x.Shape, roiV, scalesV, sizesV, haveSizes)
	if err != nil {
		return nil, err
	}
	plan := make([]resizeAxis, len(x.Shape))
	for a := range plan {
		plan[a] = k.planAxis(x.Shape[a], outShape[a], sc[a], r0[a], r1[a])
	}
	out := k.out.tensor(x.Type, outShape)
	if out.Len() == 0 {
		return out, nil
	}
	if k.interp == resizeNearest {
		return out, k.gather(out, x, plan)
	}
	switch src := x.Data.(type) {
	case []float32:
		k.separable32(out.Data.([]float32), src, x.Shape, plan)
	case []float64:
		k.separable64(out.Data.([]float64), src, x.Shape, plan)
	case []onnx.F16, []onnx.BF16:
		in, _ := widenToFloat32(k.wideIn.get(x.Len()), src)
		res := make([]float32, out.Len())
		k.separable32(res, in, x.Shape, plan)
		if err := narrowFromFloat32(out.Data, res); err != nil {
			return nil, err
		}
	case []int8, []int16, []int32, []int64, []uint8, []uint16, []uint32, []uint64:
		in, err := float64sOf(x)
		if err != nil {
			return nil, err
		}
		res := make([]float64, out.Len())
		k.separable64(res, in, x.Shape, plan)
		resizeNarrowInts(out.Data, res)
	default:
		return nil, network.Unsupportedf("%s of %v tensors in mode %v", k.op, x.Type, k.interp)
	}
	return out, nil
}

func (m resizeInterp) String() string { return [...]string{"nearest", "linear", "cubic"}[m] }

// resizeNarrowInts stores interpolated values into an integer slice,
// truncating toward zero and saturating at the type's range.
func resizeNarrowInts(dst any, src []float64) {
	switch d := dst.(type) {
	case []int8:
		resizeToInt(d, src, math.MinInt8, math.MaxInt8)
	case []int16:
		resizeToInt(d, src, math.MinInt16, math.MaxInt16)
	case []int32:
		resizeToInt(d, src, math.MinInt32, math.MaxInt32)
	case []int64:
		resizeToInt(d, src, math.MinInt64, math.MaxInt64)
	case []uint8:
		resizeToInt(d, src, 0, math.MaxUint8)
	case []uint16:
		resizeToInt(d, src, 0, math.MaxUint16)
	case []uint32:
		resizeToInt(d, src, 0, math.MaxUint32)
	case []uint64:
		resizeToInt[uint64](d, src, 0, math.MaxUint64)
	}
}

func resizeToInt[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](dst []T, src []float64, lo, hi T) {
	// float64(hi) of int64 and uint64 rounds up to 2^63 and 2^64, the
	// first values that do not fit, so >= still saturates correctly.
	flo, fhi := float64(lo), float64(hi)
	for i, v := range src {
		v = math.Trunc(v)
		switch {
		case v != v:
			dst[i] = 0
		case v <= flo:
			dst[i] = lo
		case v >= fhi:
			dst[i] = hi
		default:
			dst[i] = T(v)
		}
	}
}

func (k *resizeKernel) separable32(dst, src []float32, shape []int, plan []resizeAxis) {
	resizeSeparable(dst, src, shape, plan, &k.bufA32, &k.bufB32, float32(k.extrapolation), k.threads)
}

func (k *resizeKernel) separable64(dst, src []float64, shape []int, plan []resizeAxis) {
	resizeSeparable(dst, src, shape, plan, &k.bufA64, &k.bufB64, k.extrapolation, k.threads)
}

// resizeBuf64 is a reusable float64 buffer (the float64 twin of
// float32Scratch).
type resizeBuf64 []float64

func (s *resizeBuf64) get(n int) []float64 {
	if cap(*s) < n {
		*s = make([]float64, n)
	}
	*s = (*s)[:n]
	return *s
}

type resizeScratch[W float32 | float64] interface{ get(n int) []W }

// resizeSeparable interpolates src (of the given shape) into dst one axis
// at a time, from the last axis to the first, skipping identity axes, and
// then writes the extrapolation value where any axis was outside the roi.
func resizeSeparable[W float32 | float64, S resizeScratch[W]](dst, src []W, shape []int, plan []resizeAxis, bufA, bufB S, extrapolation W, threads int) {
	cur := append([]int{}, shape...)
	var todo []int
	for a := len(plan) - 1; a >= 0; a-- {
		if !plan[a].identity {
			todo = append(todo, a)
		}
	}
	data := src
	for i, a := range todo {
		inner := onnx.NumElements(cur[a+1:])
		outer := onnx.NumElements(cur[:a])
		cur[a] = plan[a].out
		var next []W
		switch {
		case i == len(todo)-1:
			next = dst
		case i%2 == 0:
			next = bufA.get(onnx.NumElements(cur))
		default:
			next = bufB.get(onnx.NumElements(cur))
		}
		resizePass(next, data, outer, plan[a].in, inner, &plan[a], threads)
		data = next
	}
	if len(todo) == 0 {
		copy(dst, src)
	}
	for a := range plan {
		if plan[a].outside == nil {
			continue
		}
		inner, outer, n := onnx.NumElements(cur[a+1:]), onnx.NumElements(cur[:a]), cur[a]
		for o := range outer {
			for j, out := range plan[a].outside {
				if out {
					row := dst[(o*n+j)*inner : (o*n+j+1)*inner]
					for e := range row {
						row[e] = extrapolation
					}
				}
			}
		}
	}
}

// resizePass interpolates [outer, inLen, inner] into [outer, ax.out,
// inner] along the middle axis with the axis's taps.
func resizePass[W float32 | float64](dst, src []W, outer, inLen, inner int, ax *resizeAxis, threads int) {
	n, outLen := ax.n, ax.out
	rows := outer * outLen
	par.For(rows, threads, max(1, par.Grain/max(1, inner*n)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			o, j := r/outLen, r%outLen
			base := o * inLen * inner
			taps, ws := ax.idx[j*n:(j+1)*n], ax.w[j*n:(j+1)*n]
			if inner == 1 {
				var s W
				for t, i := range taps {
					s += W(ws[t]) * src[base+i]
				}
				dst[r] = s
				continue
			}
			d := dst[r*inner : (r+1)*inner]
			first := true
			for t, i := range taps {
				w := W(ws[t])
				if w == 0 {
					continue
				}
				s := src[base+i*inner : base+(i+1)*inner]
				if first {
					for e := range d {
						d[e] = w * s[e]
					}
					first = false
					continue
				}
				for e := range d {
					d[e] += w * s[e]
				}
			}
			if first {
				clear(d)
			}
		}
	})
}

// gather is nearest-mode Resize for every element type.
func (k *resizeKernel) gather(out, x *onnx.Tensor, plan []resizeAxis) error {
	var ext any
	for _, ax := range plan {
		if ax.outside != nil {
			t, err := tensorFromFloat64s(x.Type, []int{1}, []float64{k.extrapolation})
			if err != nil {
				return err
			}
			ext = t.Data
			break
		}
	}
	switch d := out.Data.(type) {
	case []float32:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []float64:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []onnx.F16:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []onnx.BF16:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []int8:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []int16:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []int32:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []int64:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []uint8:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []uint16:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []uint32:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []uint64:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []bool:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []string:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []complex64:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	case []complex128:
		return resizeGather(d, x.Data, ext, x.Shape, plan, k.threads)
	}
	return network.Unsupportedf("%s of %v tensors", k.op, x.Type)
}

func resizeGather[T any](dst []T, srcAny, extAny any, inShape []int, plan []resizeAxis, threads int) error {
	src, ok := srcAny.([]T)
	if !ok {
		return fmt.Errorf("cannot gather %T into %T", srcAny, dst)
	}
	rank := len(plan)
	if rank == 0 {
		dst[0] = src[0]
		return nil
	}
	var ext T
	if e, ok := extAny.([]T); ok && len(e) > 0 {
		ext = e[0]
	}
	strides := rowMajorStrides(inShape)
	// offs[a][j] is the input offset contributed by output coordinate j.
	offs := make([][]int, rank)
	for a := range plan {
		offs[a] = make([]int, plan[a].out)
		for j, i := range plan[a].idx {
			offs[a][j] = i * strides[a]
		}
	}
	last := plan[rank-1]
	rowLen := last.out
	rows := len(dst) / rowLen
	par.For(rows, threads, max(1, par.Grain/rowLen), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			base, outside, rem := 0, false, r
			for a := rank - 2; a >= 0; a-- {
				j := rem % plan[a].out
				rem /= plan[a].out
				base += offs[a][j]
				if plan[a].outside != nil && plan[a].outside[j] {
					outside = true
				}
			}
			d := dst[r*rowLen : (r+1)*rowLen]
			if outside {
				for e := range d {
					d[e] = ext
				}
				continue
			}
			s := src[base:]
			for j, off := range offs[rank-1] {
				d[j] = s[off]
			}
			if last.outside != nil {
				for j, o := range last.outside {
					if o {
						d[j] = ext
					}
				}
			}
		}
	})
	return nil
}

// resizeKernelOf configures the kernel of a Resize node from the
// attributes of its version (shared by the forward and the gradient).
func resizeKernelOf(op *ops.Resize, threads int) (*resizeKernel, error) {
	v := op.SinceVersion()
	k := &resizeKernel{op: "Resize", threads: threads, cubicA: float64(op.CubicCoeffA),
		excludeOutside: op.ExcludeOutside != 0, antialias: op.Antialias != 0,
		extrapolation: float64(op.ExtrapolationValue), axes: op.Axes}
	switch op.Mode {
	case "nearest":
		k.interp = resizeNearest
	case "linear":
		k.interp = resizeLinear
	case "cubic":
		if v < 11 {
			return nil, fmt.Errorf("Resize %d has no cubic mode", v)
		}
		k.interp = resizeCubic
	default:
		return nil, fmt.Errorf("unknown Resize mode %q", op.Mode)
	}
	if v < 11 {
		// Resize 10 is Upsample 9 that may also downsample.
		k.coord, k.rounding = resizeAsymmetric, resizeSimple
	} else {
		c, ok := resizeCoordNames[op.CoordinateTransformationMode]
		if !ok || (c == resizeHalfPixelSymmetric && v < 19) {
			return nil, fmt.Errorf("unknown coordinate_transformation_mode %q for Resize %d", op.CoordinateTransformationMode, v)
		}
		k.coord = c
		r, ok := resizeRoundingNames[op.NearestMode]
		if !ok {
			return nil, fmt.Errorf("unknown nearest_mode %q", op.NearestMode)
		}
		k.rounding = r
	}
	if op.ExcludeOutside != 0 && op.ExcludeOutside != 1 {
		return nil, fmt.Errorf("exclude_outside must be 0 or 1, got %d", op.ExcludeOutside)
	}
	if op.Antialias != 0 && op.Antialias != 1 {
		return nil, fmt.Errorf("antialias must be 0 or 1, got %d", op.Antialias)
	}
	switch op.KeepAspectRatioPolicy {
	case "", "stretch":
	case "not_larger":
		k.keepAspect = resizeNotLarger
	case "not_smaller":
		k.keepAspect = resizeNotSmaller
	default:
		return nil, fmt.Errorf("unknown keep_aspect_ratio_policy %q", op.KeepAspectRatioPolicy)
	}
	return k, nil
}

// VisitResize compiles Resize with the inputs and attributes of its
// version.
func (b *builder) VisitResize(op *ops.Resize) error {
	k, err := resizeKernelOf(op, b.e.threads)
	if err != nil {
		return err
	}
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	roi, err := b.optionalInput(op.In.Roi)
	if err != nil {
		return err
	}
	scales, err := b.optionalInput(op.In.Scales)
	if err != nil {
		return err
	}
	sizes, err := b.optionalInput(op.In.Sizes)
	if err != nil {
		return err
	}
	y := b.output(op.Out.Y)
	return b.emit(tensorsKernel([]valueRef{x, roi, scales, sizes}, y, func(ts []*onnx.Tensor) (*onnx.Tensor, error) {
		return k.compute(ts[0], ts[1], ts[2], ts[3])
	}))
}

// upsampleKernelOf configures the kernel of an Upsample node from its
// mode (shared by the forward and the gradient).
func upsampleKernelOf(op *ops.Upsample, threads int) (*resizeKernel, error) {
	v := op.SinceVersion()
	k := &resizeKernel{op: "Upsample", threads: threads, coord: resizeAsymmetric, rounding: resizeSimple}
	switch {
	case op.Mode == "nearest":
		k.interp = resizeNearest
	case op.Mode == "linear" && v >= 7, op.Mode == "bilinear" && v < 7:
		k.interp = resizeLinear
	default:
		return nil, fmt.Errorf("unknown Upsample %d mode %q", v, op.Mode)
	}
	return k, nil
}

// VisitUpsample compiles Upsample: scales from the height_scale and
// width_scale attributes of a 4-D input (version 1), the scales attribute
// (version 7) or the scales input (versions 9 and 10). Coordinates are
// asymmetric (x / scale); nearest takes the floor.
func (b *builder) VisitUpsample(op *ops.Upsample) error {
	v := op.SinceVersion()
	k, err := upsampleKernelOf(op, b.e.threads)
	if err != nil {
		return err
	}
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	var fixed []float64
	switch {
	case v < 7:
		if op.HeightScale < 1 || op.WidthScale < 1 {
			return fmt.Errorf("height_scale %v and width_scale %v must be at least 1", op.HeightScale, op.WidthScale)
		}
		fixed = []float64{1, 1, float64(op.HeightScale), float64(op.WidthScale)}
	case v < 9:
		if len(op.Scales) == 0 && !b.probing {
			return fmt.Errorf("Upsample %d needs the scales attribute", v)
		}
		for _, s := range op.Scales {
			fixed = append(fixed, float64(s))
		}
	}
	scales, err := b.optionalInput(op.In.Scales)
	if err != nil {
		return err
	}
	if v >= 9 && !scales.present() && !b.probing {
		return fmt.Errorf("Upsample %d needs the scales input", v)
	}
	y := b.output(op.Out.Y)
	return b.emit(func(slots []onnx.Value) error {
		xt, err := x.tensor(slots)
		if err != nil {
			return err
		}
		s := fixed
		if v >= 9 {
			st, err := scales.tensor(slots)
			if err != nil {
				return err
			}
			if s, err = float64sOf(st); err != nil {
				return fmt.Errorf("scales: %w", err)
			}
		}
		if v < 7 && len(xt.Shape) != 4 {
			return fmt.Errorf("Upsample %d needs a 4-D input, got shape %v", v, xt.Shape)
		}
		for i, f := range s {
			if !(f >= 1) {
				return fmt.Errorf("scales[%d] = %v must be at least 1", i, f)
			}
		}
		out, err := k.compute(xt, nil, onnx.FromSlice(s, len(s)), nil)
		if err != nil {
			return err
		}
		y.set(slots, out)
		return nil
	})
}
