package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// GridSample (versions 16, 20, 22) and AffineGrid (20).
// https://onnx.ai/onnx/operators/onnx__GridSample.html
//
// GridSample reads X [N, C, D1..Dr] at the points of grid [N, O1..Ok, r],
// whose last axis holds normalized coordinates in [-1, 1] in reverse axis
// order (x for the last spatial axis first). A coordinate is denormalized
// to the axis's pixel space (align_corners: -1 and 1 are the centres of the
// corner pixels; otherwise their outer edges), rounded in nearest mode,
// and, when it falls outside the axis's borders, clamped (border padding)
// or reflected (reflection padding). The value is then interpolated from
// the neighbouring pixels — 1 (nearest), 2 (linear) or 4 (cubic, Keys with
// a = -0.75) per axis — where a pixel outside the input reads 0 (zeros),
// the edge (border) or its reflection (reflection). For each output point
// the product of the per-axis taps is computed once and applied to every
// channel.

type gridMode int

const (
	gridNearest gridMode = iota
	gridLinear
	gridCubic
)

type gridPadding int

const (
	gridZeros gridPadding = iota
	gridBorder
	gridReflection
)

// gridSampleKernel is a compiled GridSample node.
type gridSampleKernel struct {
	mode         gridMode
	padding      gridPadding
	alignCorners bool
	spatialRank  int // 2 before version 20; 0: any
	threads      int
	out          outputBuffer
	wide         float32Scratch
	res          float32Scratch
}

// gridDenormalize maps a normalized coordinate to pixel space.
func (k *gridSampleKernel) gridDenormalize(g float64, length int, f32 bool) float64 {
	if f32 {
		// The grid is float32: compute as float32 does, so that rounding
		// in nearest mode sees the same values.
		gf, l := float32(g), float32(length)
		if k.alignCorners {
			return float64(float32(float32(gf+1)/2) * float32(l-1))
		}
		return float64(float32(float32(float32(gf+1)*l)-1) / 2)
	}
	if k.alignCorners {
		return (g + 1) / 2 * float64(length-1)
	}
	return ((g+1)*float64(length) - 1) / 2
}

// gridReflect folds x into [lo, hi] by reflecting at the borders.
func gridReflect(x, lo, hi float64) float64 {
	span := hi - lo
	if span <= 0 {
		return lo
	}
	switch {
	case x < lo:
		d := lo - x
		n := math.Floor(d / span)
		r := d - n*span
		if math.Mod(n, 2) == 0 {
			return lo + r
		}
		return hi - r
	case x > hi:
		d := x - hi
		n := math.Floor(d / span)
		r := d - n*span
		if math.Mod(n, 2) == 0 {
			return hi - r
		}
		return lo + r
	}
	return x
}

// gridTap is one input pixel of an output point: its offset in the
// spatial block and its weight.
type gridTap struct {
	off int
	w   float64
}

// axisTaps computes the taps of one axis of length d and stride stride at
// coordinate x, appending to dst.
// Nearest rounds half to even for every spatial rank, as ONNX's reference
// and its volumetric test cases do (PyTorch's 3-D sampler rounds halves
// away from zero instead).
func (k *gridSampleKernel) axisTaps(dst []gridTap, x float64, d, stride int) []gridTap {
	lo, hi := -0.5, float64(d)-0.5
	if k.alignCorners {
		lo, hi = 0, float64(d-1)
	}
	if k.mode == gridNearest {
		x = math.RoundToEven(x)
	}
	if x < lo || x > hi {
		switch k.padding {
		case gridBorder:
			x = max(0, min(x, float64(d-1)))
		case gridReflection:
			x = gridReflect(x, lo, hi)
		}
	}
	// pixel returns the tap of integer index i under the padding mode.
	pixel := func(i int, w float64) gridTap {
		switch k.padding {
		case gridZeros:
			if i < 0 || i >= d {
				return gridTap{0, 0}
			}
		case gridBorder:
			i = max(0, min(i, d-1))
		case gridReflection:
			i = int(gridReflect(float64(i), lo, hi))
			i = max(0, min(i, d-1))
		}
		return gridTap{i * stride, w}
	}
	switch k.mode {
	case gridNearest:
		return append(dst, pixel(int(x), 1))
	case gridLinear:
		x0 := math.Floor(x)
		t := x - x0
		i := int(x0)
		return append(dst, pixel(i, 1-t), pixel(i+1, t))
	}
	x0 := math.Floor(x)
	t := x - x0
	i := int(x0)
	const a = -0.75
	keys := func(s float64) float64 {
		s = math.Abs(s)
		if s <= 1 {
			return ((a+2)*s-(a+3))*s*s + 1
		}
		if s < 2 {
			return ((a*s-5*a)*s+8*a)*s - 4*a
		}
		return 0
	}
	return append(dst, pixel(i-1, keys(t+1)), pixel(i, keys(t)), pixel(i+1, keys(1-t)), pixel(i+2, keys(2-t)))
}

func (k *gridSampleKernel) compute(x, grid *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	rank := len(x.Shape)
	r := rank - 2
	if r < 1 || (k.spatialRank > 0 && r != k.spatialRank) {
		if k.spatialRank > 0 {
			return nil, fmt.Errorf("input X has shape %v; GridSample before version 20 needs a 4-D [N, C, H, W] input", x.Shape)
		}
		return nil, fmt.Errorf("input X has shape %v; GridSample needs [N, C, spatial...] with at least one spatial axis", x.Shape)
	}
	if len(grid.Shape) != rank || grid.Shape[0] != x.Shape[0] || grid.Shape[rank-1] != r {
		return nil, fmt.Errorf("grid has shape %v; want [%d, ..., %d] of rank %d for input shape %v", grid.Shape, x.Shape[0], r, rank, x.Shape)
	}
	g, err := float64sOf(grid)
	if err != nil {
		return nil, fmt.Errorf("grid: %w", err)
	}
	_, f32 := grid.Data.([]float32)
	outShape := append([]int{x.Shape[0], x.Shape[1]}, grid.Shape[1:rank-1]...)
	out := k.out.tensor(x.Type, outShape)
	if out.Len() == 0 {
		return out, nil
	}
	for _, d := range x.Shape[2:] {
		if d == 0 {
			return nil, fmt.Errorf("cannot sample an input of shape %v", x.Shape)
		}
	}
	switch src := x.Data.(type) {
	case []float32:
		gridSampleRun(k, out.Data.([]float32), src, x.Shape, g, f32, outShape)
	case []float64:
		gridSampleRun(k, out.Data.([]float64), src, x.Shape, g, f32, outShape)
	case []onnx.F16, []onnx.BF16:
		in, _ := widenToFloat32(k.wide.get(x.Len()), src)
		res := k.res.get(out.Len())
		gridSampleRun(k, res, in, x.Shape, g, f32, outShape)
		if err := narrowFromFloat32(out.Data, res); err != nil {
			return nil, err
		}
	case []int8, []int16, []int32, []int64, []uint8, []uint16, []uint32, []uint64:
		in, err := float64sOf(x)
		if err != nil {
			return nil, err
		}
		res := make([]float64, out.Len())
		gridSampleRun(k, res, in, x.Shape, g, f32, outShape)
		resizeNarrowInts(out.Data, res)
	default:
		return nil, network.Unsupportedf("GridSample of %v tensors", x.Type)
	}
	return out, nil
}

// gridSampleRun samples src into dst ([N, C, O...]) at the points of g.
func gridSampleRun[W float32 | float64](k *gridSampleKernel, dst, src []W, inShape []int, g []float64, f32 bool, outShape []int) {
	n, c := inShape[0], inShape[1]
	spatial := inShape[2:]
	r := len(spatial)
	strides := rowMajorStrides(spatial)
	inBlock := onnx.NumElements(spatial)
	points := onnx.NumElements(outShape[2:])
	par.For(n*points, k.threads, max(1, par.Grain/max(1, 4*c)), func(lo, hi int) {
		var taps, axis []gridTap
		for np := lo; np < hi; np++ {
			b, p := np/points, np%points
			coords := g[np*r : (np+1)*r]
			taps = append(taps[:0], gridTap{0, 1})
			for i := range r {
				x := k.gridDenormalize(coords[r-1-i], spatial[i], f32)
				axis = k.axisTaps(axis[:0], x, spatial[i], strides[i])
				// Cross the taps so far with this axis's taps.
				m := len(taps)
				for _, at := range axis[1:] {
					for _, t := range taps[:m] {
						taps = append(taps, gridTap{t.off + at.off, t.w * at.w})
					}
				}
				for j := range m {
					taps[j] = gridTap{taps[j].off + axis[0].off, taps[j].w * axis[0].w}
				}
			}
			for ch := range c {
				s := src[(b*c+ch)*inBlock : (b*c+ch+1)*inBlock]
				var v W
				for _, t := range taps {
					if t.w != 0 {
						v += W(t.w) * s[t.off]
					}
				}
				dst[(b*c+ch)*points+p] = v
			}
		}
	})
}

// gridSampleKernelOf configures the kernel of a GridSample node from the
// attributes of its version (shared by the forward and the gradient).
func gridSampleKernelOf(op *ops.GridSample, threads int) (gridSampleKernel, error) {
	v := op.SinceVersion()
	k := gridSampleKernel{alignCorners: op.AlignCorners != 0, threads: threads}
	if v < 20 {
		k.spatialRank = 2
	}
	switch {
	case op.Mode == "nearest":
		k.mode = gridNearest
	case op.Mode == "bilinear" && v < 20, op.Mode == "linear" && v >= 20:
		k.mode = gridLinear
	case op.Mode == "bicubic" && v < 20, op.Mode == "cubic" && v >= 20:
		k.mode = gridCubic
	default:
		return k, fmt.Errorf("unknown GridSample %d mode %q", v, op.Mode)
	}
	switch op.PaddingMode {
	case "zeros":
		k.padding = gridZeros
	case "border":
		k.padding = gridBorder
	case "reflection":
		k.padding = gridReflection
	default:
		return k, fmt.Errorf("unknown padding_mode %q", op.PaddingMode)
	}
	return k, nil
}

// VisitGridSample compiles GridSample; mode names changed in version 20
// (bilinear, bicubic became linear, cubic) and inputs of any spatial rank
// were allowed.
func (b *builder) VisitGridSample(op *ops.GridSample) error {
	k, err := gridSampleKernelOf(op, b.e.threads)
	if err != nil {
		return err
	}
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	grid, err := b.input(op.In.Grid)
	if err != nil {
		return err
	}
	y := b.output(op.Out.Y)
	return b.emit(binaryTensorKernel(x, grid, y, k.compute))
}

// affineGridKernel is a compiled AffineGrid node: grid[n, ..., :] =
// theta[n] @ (x, y[, z], 1) over the normalized pixel centres of size.
type affineGridKernel struct {
	alignCorners bool
}

// affineBase is the normalized coordinate of pixel i of an axis of
// length l.
func (k *affineGridKernel) affineBase(i, l int) float64 {
	if k.alignCorners {
		if l == 1 {
			return -1
		}
		return -1 + float64(i)*(2/float64(l-1))
	}
	step := 2 / float64(l)
	return -1 + step/2 + float64(i)*step
}

func (k *affineGridKernel) compute(theta, size *onnx.Tensor) (*onnx.Tensor, error) {
	sz, err := intsOf(size)
	if err != nil {
		return nil, fmt.Errorf("size: %w", err)
	}
	if len(size.Shape) != 1 || (len(sz) != 4 && len(sz) != 5) {
		return nil, fmt.Errorf("size must be [N, C, H, W] or [N, C, D, H, W], got %v", sz)
	}
	r := len(sz) - 2
	if len(theta.Shape) != 3 || theta.Shape[1] != r || theta.Shape[2] != r+1 || int64(theta.Shape[0]) != sz[0] {
		return nil, fmt.Errorf("theta has shape %v; want [%d, %d, %d] for size %v", theta.Shape, sz[0], r, r+1, sz)
	}
	if sz[0] < 0 || sz[0] > resizeMaxElements {
		return nil, fmt.Errorf("size %v has an invalid batch size", sz)
	}
	spatial := make([]int, r)
	total := sz[0] * int64(r)
	for i, d := range sz[2:] {
		if d <= 0 || d > resizeMaxElements || total > resizeMaxElements/d {
			return nil, fmt.Errorf("size %v is not a valid or affordable shape", sz)
		}
		total *= d
		spatial[i] = int(d)
	}
	th, err := float64sOf(theta)
	if err != nil {
		return nil, fmt.Errorf("theta: %w", err)
	}
	outShape := append(append([]int{int(sz[0])}, spatial...), r)
	points := onnx.NumElements(spatial)
	res := make([]float64, points*r*int(sz[0]))
	base := make([]float64, r+1) // (x, y[, z], 1): the last spatial axis first
	base[r] = 1
	idx := make([]int, r)
	for n := range int(sz[0]) {
		t := th[n*r*(r+1) : (n+1)*r*(r+1)]
		clear(idx)
		for p := range points {
			for i := range r {
				base[r-1-i] = k.affineBase(idx[i], spatial[i])
			}
			o := res[(n*points+p)*r : (n*points+p+1)*r]
			for row := range r {
				s := 0.0
				for col := range r + 1 {
					s += t[row*(r+1)+col] * base[col]
				}
				o[row] = s
			}
			for i := r - 1; i >= 0; i-- {
				idx[i]++
				if idx[i] < spatial[i] {
					break
				}
				idx[i] = 0
			}
		}
	}
	out, err := tensorFromFloat64s(theta.Type, outShape, res)
	if err != nil {
		return nil, network.Unsupportedf("AffineGrid of %v tensors", theta.Type)
	}
	return out, nil
}

// VisitAffineGrid compiles AffineGrid.
func (b *builder) VisitAffineGrid(op *ops.AffineGrid) error {
	k := &affineGridKernel{alignCorners: op.AlignCorners != 0}
	theta, err := b.input(op.In.Theta)
	if err != nil {
		return err
	}
	size, err := b.input(op.In.Size)
	if err != nil {
		return err
	}
	y := b.output(op.Out.Grid)
	return b.emit(binaryTensorKernel(theta, size, y, k.compute))
}
