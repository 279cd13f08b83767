package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward of Resize and Upsample: the transpose of the interpolation.
// The forward is a chain of per-axis linear maps (resizePass, from the last
// axis to the first) followed by writing the extrapolation value outside
// the roi; the backward zeroes the gradient where the extrapolation value
// was written and runs the transposed passes in the opposite order, each
// adding w·gradient to the taps an output coordinate read. Nearest mode is
// the same with one tap of weight 1, so every mode (nearest, linear,
// cubic, antialiased, exclude_outside) is covered by the same walk. roi,
// scales and sizes are not differentiated.

type gradResizeKernel struct {
	k                        *resizeKernel
	x, roi, scales, sizes, y int
	fixed                    []float64 // Upsample 1 and 7: the scales attribute
	upsample                 bool
	plan                     []resizeAxis
	planIn, planOut          []int
	planKey                  []float64
	sa, sb, sx               gradScratch
}

func (gb *gradBuilder) VisitResize(op *ops.Resize) error {
	k, err := resizeKernelOf(op, gb.e.threads)
	if err != nil {
		return err
	}
	gk := &gradResizeKernel{k: k, x: gb.slot(op.In.X), roi: gb.slot(op.In.Roi), scales: gb.slot(op.In.Scales), sizes: gb.slot(op.In.Sizes), y: gb.slot(op.Out.Y)}
	return gb.set(gk.run)
}

func (gb *gradBuilder) VisitUpsample(op *ops.Upsample) error {
	v := op.SinceVersion()
	k, err := upsampleKernelOf(op, gb.e.threads)
	if err != nil {
		return err
	}
	gk := &gradResizeKernel{k: k, x: gb.slot(op.In.X), roi: -1, scales: -1, sizes: -1, y: gb.slot(op.Out.Y), upsample: true}
	switch {
	case v < 7:
		gk.fixed = []float64{1, 1, float64(op.HeightScale), float64(op.WidthScale)}
	case v < 9:
		for _, s := range op.Scales {
			gk.fixed = append(gk.fixed, float64(s))
		}
	default:
		gk.scales = gb.slot(op.In.Scales)
	}
	return gb.set(gk.run)
}

// optional returns an optional input's tensor (nil when omitted or empty).
func (gk *gradResizeKernel) optional(slots []onnx.Value, slot int) (*onnx.Tensor, error) {
	if slot < 0 {
		return nil, nil
	}
	t, ok := slots[slot].(*onnx.Tensor)
	if !ok || t == nil {
		return nil, fmt.Errorf("input is %s, not a tensor", onnx.DescribeValue(slots[slot]))
	}
	return t, nil
}

// planFor returns the per-axis taps of the forward run, recomputed only
// when the shapes, scales, sizes or roi change.
func (gk *gradResizeKernel) planFor(slots []onnx.Value, x *onnx.Tensor, outShape []int) ([]resizeAxis, error) {
	var roiV, scalesV, sizesV []float64
	haveSizes := false
	if gk.upsample {
		scalesV = gk.fixed
		if gk.scales >= 0 {
			st, err := gk.optional(slots, gk.scales)
			if err != nil {
				return nil, err
			}
			if scalesV, err = float64sOf(st); err != nil {
				return nil, err
			}
		}
	} else {
		rt, err := gk.optional(slots, gk.roi)
		if err != nil {
			return nil, err
		}
		st, err := gk.optional(slots, gk.scales)
		if err != nil {
			return nil, err
		}
		zt, err := gk.optional(slots, gk.sizes)
		if err != nil {
			return nil, err
		}
		switch {
		case zt != nil && zt.Len() > 0:
			s, err := intsOf(zt)
			if err != nil {
				return nil, err
			}
			sizesV = make([]float64, len(s))
			for i, v := range s {
				sizesV[i] = float64(v)
			}
			haveSizes = true
		case st != nil && st.Len() > 0:
			if scalesV, err = float64sOf(st); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("Resize needs scales or sizes")
		}
		if rt != nil && gk.k.coord == resizeTFCropAndResize {
			if roiV, err = float64sOf(rt); err != nil {
				return nil, err
			}
		}
	}
	key := slices.Concat(roiV, []float64{-1}, scalesV, []float64{-1}, sizesV)
	if gk.plan != nil && slices.Equal(gk.planIn, x.Shape) && slices.Equal(gk.planOut, outShape) && slices.Equal(gk.planKey, key) {
		return gk.plan, nil
	}
	shape, sc, r0, r1, err := gk.k.resizeGeometry(x.Shape, roiV, scalesV, sizesV, haveSizes)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(shape, outShape) {
		return nil, fmt.Errorf("gradient of shape %v for a resized shape %v", outShape, shape)
	}
	plan := make([]resizeAxis, len(x.Shape))
	for a := range plan {
		plan[a] = gk.k.planAxis(x.Shape[a], shape[a], sc[a], r0[a], r1[a])
	}
	gk.plan, gk.planIn, gk.planOut, gk.planKey = plan, slices.Clone(x.Shape), slices.Clone(outShape), key
	return plan, nil
}

func (gk *gradResizeKernel) run(slots []onnx.Value, g *gradState) error {
	gy, xt, ok, err := gradShapeIO(slots, g, gk.x, gk.y)
	if !ok {
		return err
	}
	plan, err := gk.planFor(slots, xt, gy.Shape)
	if err != nil {
		return err
	}
	gx := gk.sx.buf.tensor(xt.Type, xt.Shape)
	switch d := gx.Data.(type) {
	case []float32:
		gradResizeTyped(gk, d, gy, plan)
	case []float64:
		gradResizeTyped(gk, d, gy, plan)
	}
	return g.add(gk.x, gx)
}

// gradResizeTyped computes the input's gradient into gx.
func gradResizeTyped[T floatElem](gk *gradResizeKernel, gx []T, gy *onnx.Tensor, plan []resizeAxis) {
	cur := slices.Clone(gy.Shape)
	g := gk.sa.buf.tensor(gy.Type, cur).Data.([]T)
	copy(g, gy.Data.([]T))
	// The extrapolation value does not depend on the input.
	for a := range plan {
		if plan[a].outside == nil {
			continue
		}
		inner, outer, n := onnx.NumElements(cur[a+1:]), onnx.NumElements(cur[:a]), cur[a]
		for o := range outer {
			for j, out := range plan[a].outside {
				if out {
					clear(g[(o*n+j)*inner : (o*n+j+1)*inner])
				}
			}
		}
	}
	// The forward resized the axes from the last to the first; undo them
	// from the first to the last.
	var todo []int
	for a := range plan {
		if !plan[a].identity {
			todo = append(todo, a)
		}
	}
	if len(todo) == 0 {
		copy(gx, g)
		return
	}
	for i, a := range todo {
		inner, outer := onnx.NumElements(cur[a+1:]), onnx.NumElements(cur[:a])
		cur[a] = plan[a].in
		var next []T
		switch {
		case i == len(todo)-1:
			next = gx
		case i%2 == 0:
			next = gk.sb.buf.tensor(gy.Type, cur).Data.([]T)
		default:
			next = gk.sa.buf.tensor(gy.Type, cur).Data.([]T)
		}
		clear(next)
		gradResizePass(next, g, outer, plan[a].in, inner, &plan[a])
		g = next
	}
}

// gradResizePass is the transpose of resizePass: [outer, ax.out, inner]
// gradients are added into [outer, inLen, inner] at the taps.
func gradResizePass[T floatElem](dst, src []T, outer, inLen, inner int, ax *resizeAxis) {
	n, outLen := ax.n, ax.out
	for o := range outer {
		base := o * inLen * inner
		for j := range outLen {
			s := src[(o*outLen+j)*inner : (o*outLen+j+1)*inner]
			if n == 0 { // nearest
				i := ax.idx[j]
				addInto(dst[base+i*inner:base+(i+1)*inner], s)
				continue
			}
			for t, i := range ax.idx[j*n : (j+1)*n] {
				w := T(ax.w[j*n+t])
				if w == 0 {
					continue
				}
				d := dst[base+i*inner : base+(i+1)*inner]
				for e := range d {
					d[e] += w * s[e]
				}
			}
		}
	}
}
