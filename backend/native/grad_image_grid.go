package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rule of GridSample (versions 16, 20, 22), nearest and linear
// modes; cubic returns Unsupportedf.
//
// Each output point reads, per spatial axis, one (nearest) or two (linear)
// pixels at the denormalized, clamped or reflected coordinate, exactly as
// gridSampleKernel.axisTaps: X receives dy times the product of the
// per-axis weights at every tap; the grid receives, for linear mode,
// Σ_c dy_c Σ_taps X_c[tap] · ∂w/∂x_i · ∂x_i/∂g_i, where ∂w/∂x is ∓1 for the
// two linear taps, ∂x/∂g the denormalization scale times the padding's
// slope (0 where border padding clamped, ±1 where reflection folded).
// Nearest sampling is piecewise constant: the grid gets zero.

type gradGridSampleKernel struct {
	fwd         gridSampleKernel
	x, grid, y  int
	sx, sg      gradScratch
	offs, dslop []int
	ws, dws     []float64
	valid       []bool
}

func (gb *gradBuilder) VisitGridSample(op *ops.GridSample) error {
	fwd, err := gridSampleKernelOf(op, gb.e.threads)
	if err != nil {
		return err
	}
	if fwd.mode == gridCubic {
		return network.Unsupportedf("gradients of GridSample in mode %q", op.Mode)
	}
	k := &gradGridSampleKernel{fwd: fwd}
	k.x, k.grid, k.y = gb.slot(op.In.X), gb.slot(op.In.Grid), gb.slot(op.Out.Y)
	return gb.set(k.run)
}

// gradGridAxis computes one axis's taps at denormalized coordinate x:
// index (times stride), weight, weight derivative with respect to x, and
// whether the pixel exists (false: zeros padding outside); slope is
// ∂(the coordinate used)/∂x.
func (k *gradGridSampleKernel) gradGridAxis(x float64, d, stride int, offs []int, ws, dws []float64, valid []bool) (n int, slope float64) {
	f := &k.fwd
	lo, hi := -0.5, float64(d)-0.5
	if f.alignCorners {
		lo, hi = 0, float64(d-1)
	}
	if f.mode == gridNearest {
		// As the forward (axisTaps) rounds, at every rank.
		x = math.RoundToEven(x)
	}
	slope = 1
	if x < lo || x > hi {
		switch f.padding {
		case gridBorder:
			x = max(0, min(x, float64(d-1)))
			slope = 0
		case gridReflection:
			span := hi - lo
			if span <= 0 {
				slope = 0
			} else {
				var dist float64
				if x < lo {
					dist = lo - x
				} else {
					dist = x - hi
				}
				if math.Mod(math.Floor(dist/span), 2) == 0 {
					slope = -1
				}
			}
			x = gridReflect(x, lo, hi)
		}
	}
	pixel := func(j, i int, w, dw float64) {
		ok := true
		switch f.padding {
		case gridZeros:
			ok = i >= 0 && i < d
		case gridBorder:
			i = max(0, min(i, d-1))
		case gridReflection:
			i = int(gridReflect(float64(i), lo, hi))
			i = max(0, min(i, d-1))
		}
		if !ok {
			i, w, dw = 0, 0, 0
		}
		offs[j], ws[j], dws[j], valid[j] = i*stride, w, dw, ok
	}
	if f.mode == gridNearest {
		pixel(0, int(x), 1, 0)
		return 1, 0
	}
	x0 := math.Floor(x)
	t := x - x0
	i := int(x0)
	pixel(0, i, 1-t, -1)
	pixel(1, i+1, t, 1)
	return 2, slope
}

func (k *gradGridSampleKernel) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil || !(g.wants(k.x) || g.wants(k.grid)) {
		return nil
	}
	x, err := floatTensor(slots[k.x], "input X")
	if err != nil {
		return err
	}
	grid, err := floatTensor(slots[k.grid], "input grid")
	if err != nil {
		return err
	}
	if gy.Type != x.Type || grid.Type != x.Type {
		return network.Unsupportedf("gradients of GridSample with X of %v, grid of %v", x.Type, grid.Type)
	}
	rank := len(x.Shape)
	r := rank - 2
	if r < 1 || len(grid.Shape) != rank || grid.Shape[rank-1] != r || grid.Shape[0] != x.Shape[0] {
		return fmt.Errorf("GridSample gradient: X of shape %v, grid of shape %v", x.Shape, grid.Shape)
	}
	points := onnx.NumElements(grid.Shape[1 : rank-1])
	if gy.Len() != x.Shape[0]*x.Shape[1]*points {
		return fmt.Errorf("GridSample gradient: output gradient of shape %v", gy.Shape)
	}
	if cap(k.offs) < 2*r {
		k.offs, k.dslop = make([]int, 2*r), make([]int, r)
		k.ws, k.dws, k.valid = make([]float64, 2*r+r), make([]float64, 2*r), make([]bool, 2*r)
	}
	dx := k.sx.zeros(x.Type, x.Shape)
	dg := k.sg.zeros(grid.Type, grid.Shape)
	switch d := dx.Data.(type) {
	case []float32:
		gradGridSampleRun(k, d, dg.Data.([]float32), x.Data.([]float32), grid.Data.([]float32), gy.Data.([]float32), x.Shape, points)
	case []float64:
		gradGridSampleRun(k, d, dg.Data.([]float64), x.Data.([]float64), grid.Data.([]float64), gy.Data.([]float64), x.Shape, points)
	}
	if err := g.add(k.x, dx); err != nil {
		return err
	}
	return g.add(k.grid, dg)
}

func gradGridSampleRun[T floatElem](k *gradGridSampleKernel, dx, dg, x, grid, dy []T, shape []int, points int) {
	n, c := shape[0], shape[1]
	spatial := shape[2:]
	r := len(spatial)
	var strideBuf [8]int
	strides := rowMajorStridesInto(intsOfLen(strideBuf[:], r), spatial)
	inBlock := onnx.NumElements(spatial)
	_, f32 := any(grid).([]float32)
	offs, ws, dws, valid := k.offs, k.ws[:2*r], k.dws, k.valid
	scale, cnt := k.ws[2*r:3*r], k.dslop
	for b := range n {
		for p := range points {
			np := b*points + p
			coords := grid[np*r : (np+1)*r]
			for i := range r {
				l := spatial[i]
				xi := k.fwd.gridDenormalize(float64(coords[r-1-i]), l, f32)
				var sc float64
				if k.fwd.alignCorners {
					sc = float64(l-1) / 2
				} else {
					sc = float64(l) / 2
				}
				m, slope := k.gradGridAxis(xi, l, strides[i], offs[2*i:], ws[2*i:], dws[2*i:], valid[2*i:])
				cnt[i] = m
				scale[i] = sc * slope
			}
			// Walk the taps: a mixed-radix counter over the axes.
			total := 1
			for i := range r {
				total *= cnt[i]
			}
			for combo := range total {
				off, w := 0, 1.0
				rem := combo
				ok := true
				for i := r - 1; i >= 0; i-- {
					j := 2*i + rem%cnt[i]
					rem /= cnt[i]
					off += offs[j]
					w *= ws[j]
					ok = ok && valid[j]
				}
				if !ok {
					continue
				}
				for ch := range c {
					base := (b*c + ch) * inBlock
					gyv := dy[(b*c+ch)*points+p]
					dx[base+off] += T(w) * gyv
				}
				if k.fwd.mode != gridLinear {
					continue
				}
				// ∂w/∂x_a for each axis a: the other axes' weights times
				// this axis's derivative.
				var xdot float64
				for ch := range c {
					base := (b*c + ch) * inBlock
					xdot += float64(x[base+off]) * float64(dy[(b*c+ch)*points+p])
				}
				for a := range r {
					if scale[a] == 0 {
						continue
					}
					dw := 1.0
					rem := combo
					for i := r - 1; i >= 0; i-- {
						j := 2*i + rem%cnt[i]
						rem /= cnt[i]
						if i == a {
							dw *= dws[j]
						} else {
							dw *= ws[j]
						}
					}
					dg[np*r+r-1-a] += T(dw * scale[a] * xdot)
				}
			}
		}
	}
}

// gridSampleGridInput reports whether input i of op is GridSample's grid:
// ONNX marks it non-differentiable, but the sampling is differentiable in
// it (spatial transformers train through it), so the engine asks for its
// gradient like for the RNN state inputs.
func gridSampleGridInput(op ops.Op, i int) bool {
	return i == 1 && op.Domain() == "" && op.OpType() == "GridSample"
}
