package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rule of RoiAlign (versions 10, 16, 22) for X and rois
// (batch_indices are integers). The sampling points are the forward's
// (roiAlignRun): in avg mode each bin's gradient, divided by the sample
// count, goes to the four corners of every sample by their bilinear
// weights; in max mode it goes to the one corner term the forward picked —
// the first sample with the largest value, and within it the first of its
// largest weighted corner terms.
//
// The rois receive the gradient of the sampling positions: a sample's
// y = start_h + (ph + (iy+0.5)/grid_h) · roi_h / out_h moves with y1 by
// scale·(1 − a) and with y2 by scale·a (a the fraction in brackets over
// out_h; when output_half_pixel enlarged the region to one pixel, with y1
// only), and its bilinear weights move with y as ±(1 − lx), ±lx (zero
// where the forward clamped the point). The adaptive sampling grid,
// ceil(bin size), is piecewise constant.

type gradRoiAlignKernel struct {
	fwd          roiAlignKernel
	x, rois, bi  int
	y            int
	samples      []roiSample
	derivs       []gradRoiDeriv
	sr           gradScratch
	sx           gradScratch
	roiF, biVals []float64
}

// gradRoiDeriv is the derivative of a sample's four weights with respect
// to its y and x, and of y and x with respect to the region's corners.
type gradRoiDeriv struct {
	wy, wx         [4]float64
	y1, y2, x1, x2 float64 // ∂y/∂roi[1], ∂y/∂roi[3], ∂x/∂roi[0], ∂x/∂roi[2]
}

// gradRoiBilinear is the derivative of roiBilinear's weights at (y, x).
func gradRoiBilinear(y, x float64, h, w int) (wy, wx [4]float64) {
	if y < -1 || y > float64(h) || x < -1 || x > float64(w) {
		return
	}
	dy, dx := 1.0, 1.0
	if y < 0 {
		y, dy = 0, 0
	}
	if x < 0 {
		x, dx = 0, 0
	}
	yLow, xLow := int(y), int(x)
	if yLow >= h-1 {
		yLow, y, dy = h-1, float64(h-1), 0
	}
	if xLow >= w-1 {
		xLow, x, dx = w-1, float64(w-1), 0
	}
	ly, lx := y-float64(yLow), x-float64(xLow)
	hy, hx := 1-ly, 1-lx
	wy = [4]float64{-hx * dy, -lx * dy, hx * dy, lx * dy}
	wx = [4]float64{-hy * dx, hy * dx, -ly * dx, ly * dx}
	return
}

func (gb *gradBuilder) VisitRoiAlign(op *ops.RoiAlign) error {
	fwd, err := roiAlignKernelOf(op, gb.e.threads)
	if err != nil {
		return err
	}
	k := &gradRoiAlignKernel{fwd: *fwd}
	k.x, k.rois, k.bi, k.y = gb.slot(op.In.X), gb.slot(op.In.Rois), gb.slot(op.In.BatchIndices), gb.slot(op.Out.Y)
	return gb.set(k.run)
}

// gradRoiFloats reads a numeric tensor as float64 into buf.
func gradRoiFloats(buf []float64, v onnx.Value, what string) ([]float64, error) {
	t, ok := v.(*onnx.Tensor)
	if !ok || t == nil {
		return nil, fmt.Errorf("%s is %s, not a tensor", what, onnx.DescribeValue(v))
	}
	buf = buf[:0]
	switch d := t.Data.(type) {
	case []float32:
		for _, e := range d {
			buf = append(buf, float64(e))
		}
	case []float64:
		buf = append(buf, d...)
	case []int64:
		for _, e := range d {
			buf = append(buf, float64(e))
		}
	case []int32:
		for _, e := range d {
			buf = append(buf, float64(e))
		}
	default:
		return nil, fmt.Errorf("%s of type %v", what, t.Type)
	}
	return buf, nil
}

func (k *gradRoiAlignKernel) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil || !(g.wants(k.x) || g.wants(k.rois)) {
		return nil
	}
	x, err := floatTensor(slots[k.x], "input X")
	if err != nil {
		return err
	}
	if k.roiF, err = gradRoiFloats(k.roiF, slots[k.rois], "rois"); err != nil {
		return err
	}
	if k.biVals, err = gradRoiFloats(k.biVals, slots[k.bi], "batch_indices"); err != nil {
		return err
	}
	numRois := len(k.biVals)
	if len(x.Shape) != 4 || len(k.roiF) != 4*numRois || gy.Type != x.Type ||
		gy.Len() != numRois*x.Shape[1]*k.fwd.outH*k.fwd.outW {
		return fmt.Errorf("RoiAlign gradient: X %v, %d rois, output gradient %v", x.Shape, numRois, gy.Shape)
	}
	for i, b := range k.biVals {
		if b < 0 || int(b) >= x.Shape[0] {
			return fmt.Errorf("batch_indices[%d] = %v is out of range", i, b)
		}
	}
	dx := k.sx.zeros(x.Type, x.Shape)
	var dr *onnx.Tensor
	if g.wants(k.rois) {
		rt, err := floatTensor(slots[k.rois], "rois")
		if err != nil {
			return err
		}
		if rt.Type != x.Type {
			return fmt.Errorf("RoiAlign gradient: rois of %v for X of %v", rt.Type, x.Type)
		}
		dr = k.sr.zeros(rt.Type, rt.Shape)
	}
	switch d := dx.Data.(type) {
	case []float32:
		var drd []float32
		if dr != nil {
			drd = dr.Data.([]float32)
		}
		err = gradRoiAlignRun(k, d, drd, x.Data.([]float32), gy.Data.([]float32), x.Shape)
	case []float64:
		var drd []float64
		if dr != nil {
			drd = dr.Data.([]float64)
		}
		err = gradRoiAlignRun(k, d, drd, x.Data.([]float64), gy.Data.([]float64), x.Shape)
	}
	if err != nil {
		return err
	}
	if err := g.add(k.x, dx); err != nil {
		return err
	}
	return g.add(k.rois, dr)
}

func gradRoiAlignRun[T floatElem](gk *gradRoiAlignKernel, dx, dr, src, dy []T, shape []int) error {
	k := &gk.fwd
	c, h, w := shape[1], shape[2], shape[3]
	plane := h * w
	bins := k.outH * k.outW
	for n, bf := range gk.biVals {
		offset := 0.0
		if k.halfPixel {
			offset = 0.5
		}
		roi := gk.roiF[n*4 : n*4+4]
		startW, startH := roi[0]*k.spatialScale-offset, roi[1]*k.spatialScale-offset
		endW, endH := roi[2]*k.spatialScale-offset, roi[3]*k.spatialScale-offset
		roiW, roiH := endW-startW, endH-startH
		freeW, freeH := 1.0, 1.0 // whether roi_w, roi_h move with the corners
		if !k.halfPixel {
			if roiW < 1 {
				freeW = 0
			}
			if roiH < 1 {
				freeH = 0
			}
			roiW, roiH = max(roiW, 1), max(roiH, 1)
		}
		binH, binW := roiH/float64(k.outH), roiW/float64(k.outW)
		gridH, gridW := k.samplingRatio, k.samplingRatio
		if k.samplingRatio <= 0 {
			gh, gw := math.Ceil(roiH/float64(k.outH)), math.Ceil(roiW/float64(k.outW))
			if math.IsNaN(gh) || math.IsNaN(gw) || gh*gw*float64(bins) > roiMaxSamples {
				return fmt.Errorf("region %d %v needs too many sampling points", n, roi)
			}
			gridH, gridW = int(max(gh, 0)), int(max(gw, 0))
		}
		count := float64(max(gridH*gridW, 1))
		samples, derivs := gk.samples[:0], gk.derivs[:0]
		for ph := range k.outH {
			for pw := range k.outW {
				for iy := range gridH {
					y := startH + float64(ph)*binH + (float64(iy)+0.5)*binH/float64(gridH)
					ay := (float64(ph) + (float64(iy)+0.5)/float64(gridH)) / float64(k.outH) * freeH
					for ix := range gridW {
						x := startW + float64(pw)*binW + (float64(ix)+0.5)*binW/float64(gridW)
						samples = append(samples, roiBilinear(y, x, h, w))
						if dr != nil {
							ax := (float64(pw) + (float64(ix)+0.5)/float64(gridW)) / float64(k.outW) * freeW
							d := gradRoiDeriv{y1: k.spatialScale * (1 - ay), y2: k.spatialScale * ay,
								x1: k.spatialScale * (1 - ax), x2: k.spatialScale * ax}
							d.wy, d.wx = gradRoiBilinear(y, x, h, w)
							derivs = append(derivs, d)
						}
					}
				}
			}
		}
		gk.samples, gk.derivs = samples, derivs
		perBin := gridH * gridW
		if perBin == 0 {
			continue
		}
		b := int(bf)
		if dr != nil {
			gradRoiAlignRois(k, dr[n*4:n*4+4], src[b*c*plane:(b+1)*c*plane], dy[n*c*bins:(n+1)*c*bins], samples, derivs, c, plane, perBin, count)
		}
		grain := max(1, par.Grain/max(1, len(samples)*4))
		if par.Chunks(c, k.threads, grain) <= 1 {
			gradRoiAlignChannels(k, dx, src, dy, samples, n, b, c, plane, perBin, count, 0, c)
			continue
		}
		par.For(c, k.threads, grain, func(lo, hi int) {
			gradRoiAlignChannels(k, dx, src, dy, samples, n, b, c, plane, perBin, count, lo, hi)
		})
	}
	return nil
}

// gradRoiAlignRois adds one region's gradient to dr (its four corners)
// from the sample derivatives; p is the region's image, gy its output
// gradient [C, bins].
func gradRoiAlignRois[T floatElem](k *roiAlignKernel, dr, p, gy []T, samples []roiSample, derivs []gradRoiDeriv, c, plane, perBin int, count float64) {
	bins := k.outH * k.outW
	var g0, g1, g2, g3 float64
	// add accumulates gv times sample i's corner terms js (all four or one).
	add := func(img []T, gv float64, i, jLo, jHi int) {
		s, d := &samples[i], &derivs[i]
		var vy, vx float64
		for j := jLo; j < jHi; j++ {
			v := float64(img[s.pos[j]])
			vy += d.wy[j] * v
			vx += d.wx[j] * v
		}
		vy, vx = vy*gv, vx*gv
		g1 += vy * d.y1
		g3 += vy * d.y2
		g0 += vx * d.x1
		g2 += vx * d.x2
	}
	for ch := range c {
		img := p[ch*plane : (ch+1)*plane]
		for bin := range bins {
			gv := float64(gy[ch*bins+bin])
			lo := bin * perBin
			if !k.maxMode {
				for i := lo; i < lo+perBin; i++ {
					add(img, gv/count, i, 0, 4)
				}
				continue
			}
			v, bestS, bestJ := 0.0, -1, 0
			for i := lo; i < lo+perBin; i++ {
				s := &samples[i]
				mj, m := 0, s.w[0]*float64(img[s.pos[0]])
				for j := 1; j < 4; j++ {
					if t := s.w[j] * float64(img[s.pos[j]]); t > m {
						mj, m = j, t
					}
				}
				if i == lo || m > v {
					v, bestS, bestJ = m, i, mj
				}
			}
			add(img, gv, bestS, bestJ, bestJ+1)
		}
	}
	dr[0] += T(g0)
	dr[1] += T(g1)
	dr[2] += T(g2)
	dr[3] += T(g3)
}

// gradRoiAlignChannels sends region n's output gradient of channels
// [lo, hi) to dx (image b).
func gradRoiAlignChannels[T floatElem](k *roiAlignKernel, dx, src, dy []T, samples []roiSample, n, b, c, plane, perBin int, count float64, lo, hi int) {
	bins := k.outH * k.outW
	for ch := lo; ch < hi; ch++ {
		p := src[(b*c+ch)*plane : (b*c+ch+1)*plane]
		dp := dx[(b*c+ch)*plane : (b*c+ch+1)*plane]
		gyo := dy[(n*c+ch)*bins : (n*c+ch+1)*bins]
		for bin, gv := range gyo {
			ss := samples[bin*perBin : (bin+1)*perBin]
			if k.maxMode {
				v, bestS, bestJ := 0.0, -1, 0
				for i, s := range ss {
					mj, m := 0, s.w[0]*float64(p[s.pos[0]])
					for j := 1; j < 4; j++ {
						if t := s.w[j] * float64(p[s.pos[j]]); t > m {
							mj, m = j, t
						}
					}
					if i == 0 || m > v {
						v, bestS, bestJ = m, i, mj
					}
				}
				s := ss[bestS]
				dp[s.pos[bestJ]] += T(s.w[bestJ] * float64(gv))
				continue
			}
			gc := float64(gv) / count
			for _, s := range ss {
				for j := range 4 {
					dp[s.pos[j]] += T(s.w[j] * gc)
				}
			}
		}
	}
}
