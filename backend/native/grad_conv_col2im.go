package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/conv"
	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// VisitCol2Im: Col2Im is the adjoint of im2col, so its gradient is the
// im2col of the output's gradient. image_shape and block_shape get none.
func (gb *gradBuilder) VisitCol2Im(op *ops.Col2Im) error {
	x, imgIn, blkIn, y := gb.slot(op.In.Input), gb.slot(op.In.ImageShape), gb.slot(op.In.BlockShape), gb.slot(op.Out.Output)
	attrs := convWindowAttrs{op: "Col2Im", strides: slices.Clone(op.Strides), dilations: slices.Clone(op.Dilations), pads: slices.Clone(op.Pads)}
	threads := gb.e.threads
	var scratch gradScratch
	var geom *convGeom
	var walker *conv.Walker
	var lastImg, lastBlk []int64
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy, xt, ok, err := gradShapeIO(slots, g, x, y)
		if !ok {
			return err
		}
		img, err := slotInt64s(slots, imgIn, "image_shape")
		if err != nil {
			return err
		}
		blk, err := slotInt64s(slots, blkIn, "block_shape")
		if err != nil {
			return err
		}
		if len(img) == 0 || len(img) != len(blk) || len(xt.Shape) != 3 {
			return fmt.Errorf("Col2Im gradient: image_shape %v, block_shape %v, input %v", img, blk, xt.Shape)
		}
		if geom == nil || !slices.Equal(img, lastImg) || !slices.Equal(blk, lastBlk) {
			in, kernel := make([]int, len(img)), make([]int, len(blk))
			for i := range img {
				in[i], kernel[i] = int(img[i]), int(blk[i])
			}
			gm, err := attrs.geometry(in, kernel)
			if err != nil {
				return err
			}
			geom, walker = gm, conv.NewWalker(gm)
			lastImg, lastBlk = slices.Clone(img), slices.Clone(blk)
		}
		n, ks := xt.Shape[0], geom.KernelSize()
		c := xt.Shape[1] / ks
		imgSize, cols := c*geom.InSize(), c*ks*geom.OutSize()
		if gy.Len() != n*imgSize || xt.Len() != n*cols {
			return fmt.Errorf("Col2Im gradient of shape %v for an input of %v", gy.Shape, xt.Shape)
		}
		gx := scratch.buf.tensor(xt.Type, xt.Shape)
		switch d := gx.Data.(type) {
		case []float32:
			im2colImages(d, gy.Data.([]float32), n, c, geom, walker, threads)
		case []float64:
			im2colImages(d, gy.Data.([]float64), n, c, geom, walker, threads)
		}
		return g.add(x, gx)
	})
}

// im2colImages writes the columns of the n images of img (c channels each)
// into col; small problems run serially on the kernel's walker, which
// allocates nothing.
func im2colImages[T floatElem](col, img []T, n, c int, g *convGeom, w *conv.Walker, threads int) {
	ks, os, is := g.KernelSize(), g.OutSize(), g.InSize()
	imgSize, cols := c*is, c*ks*os
	for i := range n {
		dst, src := col[i*cols:(i+1)*cols], img[i*imgSize:(i+1)*imgSize]
		if threads > 1 && cols >= par.Grain {
			conv.Im2col(dst, src, c, g, threads)
			continue
		}
		for r := range c * ks {
			ch, kidx := r/ks, r%ks
			conv.Im2colRow(w, dst[r*os:(r+1)*os], src[ch*is:(ch+1)*is], kidx)
		}
	}
}
