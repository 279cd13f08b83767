package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rule of MaxRoiPool (versions 1 and 22) for X (rois are
// non-differentiable): each bin's gradient goes to the position of its
// maximum, the first one on ties, in the bins of the forward
// (maxRoiPoolKernel: rounded, scaled region corners); an empty bin sends
// nothing.
type gradMaxRoiPoolKernel struct {
	fwd     maxRoiPoolKernel
	x, r, y int
	sx      gradScratch
	rs      []float64
}

func (gb *gradBuilder) VisitMaxRoiPool(op *ops.MaxRoiPool) error {
	if len(op.PooledShape) != 2 || op.PooledShape[0] < 1 || op.PooledShape[1] < 1 || op.PooledShape[0] > 1<<20 || op.PooledShape[1] > 1<<20 {
		return fmt.Errorf("MaxRoiPool: pooled_shape %v must be two positive sizes", op.PooledShape)
	}
	k := &gradMaxRoiPoolKernel{fwd: maxRoiPoolKernel{pooled: [2]int{int(op.PooledShape[0]), int(op.PooledShape[1])}, scale: float64(op.SpatialScale)}}
	k.x, k.r, k.y = gb.slot(op.In.X), gb.slot(op.In.Rois), gb.slot(op.Out.Y)
	return gb.set(k.run)
}

func (k *gradMaxRoiPoolKernel) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil || !g.wants(k.x) {
		return nil
	}
	x, err := floatTensor(slots[k.x], "input X")
	if err != nil {
		return err
	}
	if k.rs, err = gradRoiFloats(k.rs, slots[k.r], "rois"); err != nil {
		return err
	}
	num := len(k.rs) / 5
	ph, pw := k.fwd.pooled[0], k.fwd.pooled[1]
	if len(x.Shape) != 4 || len(k.rs) != 5*num || gy.Type != x.Type || gy.Len() != num*x.Shape[1]*ph*pw {
		return fmt.Errorf("MaxRoiPool gradient: X %v, rois of %d values, output gradient %v", x.Shape, len(k.rs), gy.Shape)
	}
	dx := k.sx.zeros(x.Type, x.Shape)
	switch d := dx.Data.(type) {
	case []float32:
		err = gradMaxRoiPool(k, d, x.Data.([]float32), gy.Data.([]float32), x.Shape, num)
	case []float64:
		err = gradMaxRoiPool(k, d, x.Data.([]float64), gy.Data.([]float64), x.Shape, num)
	}
	if err != nil {
		return err
	}
	return g.add(k.x, dx)
}

func gradMaxRoiPool[T floatElem](k *gradMaxRoiPoolKernel, dx, xs, dy []T, shape []int, num int) error {
	n, c, h, w := shape[0], shape[1], shape[2], shape[3]
	ph, pw := k.fwd.pooled[0], k.fwd.pooled[1]
	scale := k.fwd.scale
	for r := range num {
		roi := k.rs[r*5 : r*5+5]
		bi := int(roi[0])
		if roi[0] < 0 || bi >= n {
			return fmt.Errorf("roi %d has batch index %v outside [0, %d)", r, roi[0], n)
		}
		x1, y1 := int(math.Round(roi[1]*scale)), int(math.Round(roi[2]*scale))
		x2, y2 := int(math.Round(roi[3]*scale)), int(math.Round(roi[4]*scale))
		rh, rw := max(y2-y1+1, 1), max(x2-x1+1, 1)
		bh, bw := float64(rh)/float64(ph), float64(rw)/float64(pw)
		for ch := range c {
			plane := xs[(bi*c+ch)*h*w : (bi*c+ch+1)*h*w]
			dp := dx[(bi*c+ch)*h*w : (bi*c+ch+1)*h*w]
			gyo := dy[(r*c+ch)*ph*pw : (r*c+ch+1)*ph*pw]
			for i := range ph {
				hs := min(max(int(math.Floor(float64(i)*bh))+y1, 0), h)
				he := min(max(int(math.Ceil(float64(i+1)*bh))+y1, 0), h)
				for j := range pw {
					ws := min(max(int(math.Floor(float64(j)*bw))+x1, 0), w)
					we := min(max(int(math.Ceil(float64(j+1)*bw))+x1, 0), w)
					if he <= hs || we <= ws {
						continue
					}
					best, at := T(0), -1
					for yy := hs; yy < he; yy++ {
						for xx := ws; xx < we; xx++ {
							if v := plane[yy*w+xx]; at < 0 || v > best {
								best, at = v, yy*w+xx
							}
						}
					}
					dp[at] += gyo[i*pw+j]
				}
			}
		}
	}
	return nil
}
