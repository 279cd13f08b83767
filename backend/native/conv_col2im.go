package native

import (
	"fmt"

	"github.com/deep500/deep500-go/backend/native/internal/conv"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// col2imKernel computes Col2Im (version 18): input [N, C*prod(block), L]
// holds, for each of the L block positions of a sliding window over an
// image of image_shape, the block's values; they are summed back into the
// image [N, C, image...] (the adjoint of im2col, conv_geometry.go).
type col2imKernel struct {
	attrs   convWindowAttrs
	threads int
	out     outputBuffer
	wideX   float32Scratch
	wideY   float32Scratch
}

func (k *col2imKernel) compute(x, imageShape, blockShape *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	img, err := intsOf(imageShape)
	if err != nil {
		return nil, fmt.Errorf("image_shape: %w", err)
	}
	blk, err := intsOf(blockShape)
	if err != nil {
		return nil, fmt.Errorf("block_shape: %w", err)
	}
	if len(img) == 0 || len(img) != len(blk) {
		return nil, fmt.Errorf("image_shape %v and block_shape %v must have the same, non-zero length", img, blk)
	}
	if len(x.Shape) != 3 {
		return nil, fmt.Errorf("input has shape %v; want [N, C*prod(block_shape), L]", x.Shape)
	}
	in, kernel := make([]int, len(img)), make([]int, len(blk))
	for i := range img {
		if img[i] < 1 || img[i] > convMaxElements || blk[i] < 1 || blk[i] > convMaxElements {
			return nil, fmt.Errorf("image_shape %v and block_shape %v must be positive", img, blk)
		}
		in[i], kernel[i] = int(img[i]), int(blk[i])
	}
	g, err := k.attrs.geometry(in, kernel)
	if err != nil {
		return nil, err
	}
	ks := g.KernelSize()
	n := x.Shape[0]
	if x.Shape[1]%ks != 0 {
		return nil, fmt.Errorf("input dimension 1 (%d) is not a multiple of prod(block_shape) = %d", x.Shape[1], ks)
	}
	c := x.Shape[1] / ks
	if x.Shape[2] != g.OutSize() {
		return nil, fmt.Errorf("input has %d block positions; image_shape %v, block_shape %v, pads, strides and dilations give %d", x.Shape[2], img, blk, g.OutSize())
	}
	if n*c > convMaxElements/max(g.InSize(), 1) {
		return nil, fmt.Errorf("output of %d x %d x %v is too large", n, c, in)
	}
	shape := append([]int{n, c}, in...)
	out := k.out.tensor(x.Type, shape)
	switch xd := x.Data.(type) {
	case []float32:
		col2imBatch(out.Data.([]float32), xd, n, c, g, k.threads)
	case []float64:
		col2imBatch(out.Data.([]float64), xd, n, c, g, k.threads)
	case []int32:
		col2imBatch(out.Data.([]int32), xd, n, c, g, k.threads)
	case []int64:
		col2imBatch(out.Data.([]int64), xd, n, c, g, k.threads)
	case []onnx.F16, []onnx.BF16:
		wx, _ := widenToFloat32(k.wideX.get(x.Len()), x.Data)
		wy := k.wideY.get(out.Len())
		col2imBatch(wy, wx, n, c, g, k.threads)
		if err := narrowFromFloat32(out.Data, wy); err != nil {
			return nil, err
		}
	default:
		return nil, network.Unsupportedf("Col2Im of %v tensors", x.Type)
	}
	return out, nil
}

func col2imBatch[T numeric](y, x []T, n, c int, g *convGeom, threads int) {
	clear(y)
	img, cols := c*g.InSize(), c*g.KernelSize()*g.OutSize()
	for i := range n {
		conv.Col2im(y[i*img:(i+1)*img], x[i*cols:(i+1)*cols], c, g, threads)
	}
}

// VisitCol2Im compiles Col2Im (version 18).
func (b *builder) VisitCol2Im(op *ops.Col2Im) error {
	refs, err := b.inputRefs(3, op.In.Input, op.In.ImageShape, op.In.BlockShape)
	if err != nil {
		return err
	}
	k := &col2imKernel{attrs: convWindowAttrs{op: "Col2Im", strides: op.Strides, dilations: op.Dilations, pads: op.Pads}, threads: b.e.threads}
	y := b.output(op.Out.Output)
	return b.emit(tensorsKernel(refs, y, func(ts []*onnx.Tensor) (*onnx.Tensor, error) {
		return k.compute(ts[0], ts[1], ts[2])
	}))
}
