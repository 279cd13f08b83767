package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// RoiAlign (versions 10, 16, 22).
//
// Each region of interest [x1, y1, x2, y2] (scaled by spatial_scale, and
// shifted by -0.5 under the half_pixel transformation of version 16) is
// split into output_height x output_width bins; each bin is sampled on a
// regular grid of sampling_ratio x sampling_ratio points (adaptive,
// ceil(bin size), when it is 0) by bilinear interpolation, and the samples
// are averaged (avg) or maxed (max). Under output_half_pixel (the only
// behaviour of version 10) regions smaller than one pixel are enlarged to
// one pixel. A sample more than one pixel outside the feature map
// contributes 0; one within a pixel of the border reads the border. In max
// mode a sample's value is the largest of its four weighted corner terms,
// as ONNX's definition (after ONNX Runtime) computes it.

// roiMaxSamples bounds the sampling points of one region, so that a
// hostile region or sampling_ratio is an error rather than a huge table.
const roiMaxSamples = 1 << 26

type roiAlignKernel struct {
	maxMode       bool
	halfPixel     bool
	outH, outW    int
	samplingRatio int
	spatialScale  float64
	threads       int
	out           outputBuffer
	wide          float32Scratch
	res           float32Scratch
}

// roiSample is one bilinear sampling point: four offsets in an H*W plane
// and their weights.
type roiSample struct {
	pos [4]int
	w   [4]float64
}

func (k *roiAlignKernel) compute(x, rois, batchIdx *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	if len(x.Shape) != 4 {
		return nil, fmt.Errorf("input X must be [N, C, H, W], got shape %v", x.Shape)
	}
	if len(rois.Shape) != 2 || rois.Shape[1] != 4 {
		return nil, fmt.Errorf("rois must be [num_rois, 4], got shape %v", rois.Shape)
	}
	numRois := rois.Shape[0]
	if len(batchIdx.Shape) != 1 || batchIdx.Shape[0] != numRois {
		return nil, fmt.Errorf("batch_indices must be [%d], got shape %v", numRois, batchIdx.Shape)
	}
	bi, err := intsOf(batchIdx)
	if err != nil {
		return nil, fmt.Errorf("batch_indices: %w", err)
	}
	for i, b := range bi {
		if b < 0 || b >= int64(x.Shape[0]) {
			return nil, fmt.Errorf("batch_indices[%d] = %d is out of range for a batch of %d", i, b, x.Shape[0])
		}
	}
	r, err := float64sOf(rois)
	if err != nil {
		return nil, fmt.Errorf("rois: %w", err)
	}
	out := k.out.tensor(x.Type, []int{numRois, x.Shape[1], k.outH, k.outW})
	if out.Len() == 0 {
		return out, nil
	}
	if x.Shape[2] == 0 || x.Shape[3] == 0 {
		return nil, fmt.Errorf("cannot pool an input of shape %v", x.Shape)
	}
	switch src := x.Data.(type) {
	case []float32:
		err = roiAlignRun(k, out.Data.([]float32), src, x.Shape, r, bi)
	case []float64:
		err = roiAlignRun(k, out.Data.([]float64), src, x.Shape, r, bi)
	case []onnx.F16, []onnx.BF16:
		in, _ := widenToFloat32(k.wide.get(x.Len()), src)
		res := k.res.get(out.Len())
		if err = roiAlignRun(k, res, in, x.Shape, r, bi); err == nil {
			err = narrowFromFloat32(out.Data, res)
		}
	default:
		return nil, network.Unsupportedf("RoiAlign of %v tensors", x.Type)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// roiAlignRun pools every region of src ([N, C, H, W]) into dst.
func roiAlignRun[W float32 | float64](k *roiAlignKernel, dst, src []W, shape []int, rois []float64, bi []int64) error {
	c, h, w := shape[1], shape[2], shape[3]
	plane := h * w
	var samples []roiSample
	for n := range bi {
		offset := 0.0
		if k.halfPixel {
			offset = 0.5
		}
		roi := rois[n*4 : n*4+4]
		startW, startH := roi[0]*k.spatialScale-offset, roi[1]*k.spatialScale-offset
		endW, endH := roi[2]*k.spatialScale-offset, roi[3]*k.spatialScale-offset
		roiW, roiH := endW-startW, endH-startH
		if !k.halfPixel {
			roiW, roiH = max(roiW, 1), max(roiH, 1)
		}
		binH, binW := roiH/float64(k.outH), roiW/float64(k.outW)
		gridH, gridW := k.samplingRatio, k.samplingRatio
		if k.samplingRatio <= 0 {
			gh, gw := math.Ceil(roiH/float64(k.outH)), math.Ceil(roiW/float64(k.outW))
			if math.IsNaN(gh) || math.IsNaN(gw) || gh*gw*float64(k.outH*k.outW) > roiMaxSamples {
				return fmt.Errorf("region %d %v needs too many sampling points", n, roi)
			}
			gridH, gridW = int(max(gh, 0)), int(max(gw, 0))
		}
		count := float64(max(gridH*gridW, 1))
		// Precompute the samples of every bin; they are shared by all channels.
		samples = samples[:0]
		for ph := range k.outH {
			for pw := range k.outW {
				for iy := range gridH {
					y := startH + float64(ph)*binH + (float64(iy)+0.5)*binH/float64(gridH)
					for ix := range gridW {
						x := startW + float64(pw)*binW + (float64(ix)+0.5)*binW/float64(gridW)
						samples = append(samples, roiBilinear(y, x, h, w))
					}
				}
			}
		}
		perBin := gridH * gridW
		b := int(bi[n])
		par.For(c, k.threads, max(1, par.Grain/max(1, len(samples)*4)), func(lo, hi int) {
			for ch := lo; ch < hi; ch++ {
				p := src[(b*c+ch)*plane : (b*c+ch+1)*plane]
				o := dst[(n*c+ch)*k.outH*k.outW : (n*c+ch+1)*k.outH*k.outW]
				for bin := range o {
					ss := samples[bin*perBin : (bin+1)*perBin]
					if k.maxMode {
						v := 0.0
						for i, s := range ss {
							m := max(s.w[0]*float64(p[s.pos[0]]), s.w[1]*float64(p[s.pos[1]]),
								s.w[2]*float64(p[s.pos[2]]), s.w[3]*float64(p[s.pos[3]]))
							if i == 0 || m > v {
								v = m
							}
						}
						o[bin] = W(v)
						continue
					}
					sum := 0.0
					for _, s := range ss {
						sum += s.w[0]*float64(p[s.pos[0]]) + s.w[1]*float64(p[s.pos[1]]) +
							s.w[2]*float64(p[s.pos[2]]) + s.w[3]*float64(p[s.pos[3]])
					}
					o[bin] = W(sum / count)
				}
			}
		})
	}
	return nil
}

// roiBilinear is the sampling point at (y, x) of an h x w plane.
func roiBilinear(y, x float64, h, w int) roiSample {
	if y < -1 || y > float64(h) || x < -1 || x > float64(w) {
		return roiSample{}
	}
	y, x = max(y, 0), max(x, 0)
	yLow, xLow := int(y), int(x)
	yHigh, xHigh := yLow+1, xLow+1
	if yLow >= h-1 {
		yLow, yHigh, y = h-1, h-1, float64(h-1)
	}
	if xLow >= w-1 {
		xLow, xHigh, x = w-1, w-1, float64(w-1)
	}
	ly, lx := y-float64(yLow), x-float64(xLow)
	hy, hx := 1-ly, 1-lx
	return roiSample{
		pos: [4]int{yLow*w + xLow, yLow*w + xHigh, yHigh*w + xLow, yHigh*w + xHigh},
		w:   [4]float64{hy * hx, hy * lx, ly * hx, ly * lx},
	}
}

// roiAlignKernelOf configures the kernel of a RoiAlign node from the
// attributes of its version (shared by the forward and the gradient).
func roiAlignKernelOf(op *ops.RoiAlign, threads int) (*roiAlignKernel, error) {
	k := &roiAlignKernel{outH: int(op.OutputHeight), outW: int(op.OutputWidth),
		samplingRatio: int(op.SamplingRatio), spatialScale: float64(op.SpatialScale), threads: threads}
	switch op.Mode {
	case "avg":
	case "max":
		k.maxMode = true
	default:
		return nil, fmt.Errorf("unknown RoiAlign mode %q", op.Mode)
	}
	if op.SinceVersion() >= 16 {
		switch op.CoordinateTransformationMode {
		case "half_pixel":
			k.halfPixel = true
		case "output_half_pixel":
		default:
			return nil, fmt.Errorf("unknown coordinate_transformation_mode %q", op.CoordinateTransformationMode)
		}
	}
	if op.OutputHeight < 1 || op.OutputWidth < 1 || op.OutputHeight > roiMaxSamples || op.OutputWidth > roiMaxSamples/op.OutputHeight {
		return nil, fmt.Errorf("output_height %d and output_width %d must be positive and affordable", op.OutputHeight, op.OutputWidth)
	}
	if op.SamplingRatio < 0 || op.SamplingRatio > roiMaxSamples ||
		op.SamplingRatio*op.SamplingRatio > roiMaxSamples/(op.OutputHeight*op.OutputWidth) {
		return nil, fmt.Errorf("sampling_ratio %d must be 0 (adaptive) or a small positive number", op.SamplingRatio)
	}
	return k, nil
}

// VisitRoiAlign compiles RoiAlign; version 16 added
// coordinate_transformation_mode (default half_pixel), version 10 behaves
// as output_half_pixel.
func (b *builder) VisitRoiAlign(op *ops.RoiAlign) error {
	k, err := roiAlignKernelOf(op, b.e.threads)
	if err != nil {
		return err
	}
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	rois, err := b.input(op.In.Rois)
	if err != nil {
		return err
	}
	bi, err := b.input(op.In.BatchIndices)
	if err != nil {
		return err
	}
	y := b.output(op.Out.Y)
	return b.emit(tensorsKernel([]valueRef{x, rois, bi}, y, func(ts []*onnx.Tensor) (*onnx.Tensor, error) {
		return k.compute(ts[0], ts[1], ts[2])
	}))
}
