package gorgonia

import (
	"fmt"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/ops"
)

// maxGatherIndices bounds the slice-and-concatenate mapping of Gather.
const maxGatherIndices = 1024

// VisitGather maps Gather with constant indices onto slices of one
// element along the axis, concatenated: Gorgonia's ByIndices selects wrong
// elements along axes other than 0 and its gradient can panic.
func (b *builder) VisitGather(op *ops.Gather) error {
	c, err := b.constant(op.In.Indices)
	if err != nil {
		return err
	}
	idx, err := int64sOf(c)
	if err != nil {
		return fmt.Errorf("indices %q: %w", op.In.Indices, err)
	}
	xv, xn, err := b.getFloat(op.In.Data)
	if err != nil {
		return err
	}
	ax, err := axesOf([]int64{op.Axis}, len(xv.shape))
	if err != nil {
		return err
	}
	a := ax[0]
	dim := int64(xv.shape[a])
	if len(idx) == 0 || len(idx) > maxGatherIndices {
		return network.Unsupportedf("Gather of %d indices (the slice mapping takes 1 to %d)", len(idx), maxGatherIndices)
	}
	var parts []*G.Node
	one := slices.Clone(xv.shape)
	one[a] = 1
	for i, v := range idx {
		if v < 0 {
			v += dim
		}
		if v < 0 || v >= dim {
			return fmt.Errorf("index %d out of range for axis %d of size %d", idx[i], a, dim)
		}
		p, err := sliceAxis(xn, xv.shape, a, int(v), int(v)+1)
		if err != nil {
			return err
		}
		parts = append(parts, p)
	}
	y := parts[0]
	if len(parts) > 1 {
		if y, err = G.Concat(a, parts...); err != nil {
			return err
		}
	}
	shape := append(append(slices.Clone(xv.shape[:a]), c.Shape...), xv.shape[a+1:]...)
	if y, err = reshape(y, gshape(shape)); err != nil {
		return err
	}
	return b.set(op.Out.Output, y, shape, xv.typ)
}

// sliceAxis returns x[start:end] along axis a, keeping every axis (a part
// of size 1 included).
func sliceAxis(x *G.Node, shape []int, a, start, end int) (*G.Node, error) {
	sl := make([]tensor.Slice, len(shape))
	sl[a] = G.S(start, end)
	part := slices.Clone(shape)
	part[a] = end - start
	return sliceTo(x, shape, sl, part)
}

// sliceTo applies Gorgonia's Slice and settles the result in the given
// shape. The input gets a leading axis of size 1 first, which no slice
// touches: Gorgonia drops the axes sliced to one element, and a result
// with no axis left would be a scalar node.
func sliceTo(x *G.Node, shape []int, sl []tensor.Slice, part []int) (*G.Node, error) {
	m, err := reshape(x, append([]int{1}, shape...))
	if err != nil {
		return nil, err
	}
	y, err := G.Slice(m, append([]tensor.Slice{nil}, sl...)...)
	if err != nil {
		return nil, err
	}
	return settle(y, gshape(part))
}

// VisitSplit slices the input along the axis into the outputs.
func (b *builder) VisitSplit(op *ops.Split) error {
	var sizes []int64
	switch {
	case op.SinceVersion() < 13:
		sizes = op.Split
		if op.SinceVersion() < 2 && op.In.Split != "" {
			return network.Unsupportedf("Split (version 1) with sizes as an input")
		}
	default:
		var err error
		if sizes, err = b.optionalInt64s(op.In.Split); err != nil {
			return err
		}
	}
	xv, xn, err := b.getNode(op.In.Input)
	if err != nil {
		return err
	}
	axis := int64(0)
	if op.Axis != nil {
		axis = *op.Axis
	}
	ax, err := axesOf([]int64{axis}, len(xv.shape))
	if err != nil {
		return err
	}
	a := ax[0]
	dim := xv.shape[a]
	n := len(op.Out.Outputs)
	if len(sizes) == 0 {
		if op.NumOutputs != nil && int(*op.NumOutputs) != n {
			return fmt.Errorf("num_outputs %d for %d outputs", *op.NumOutputs, n)
		}
		if dim%n != 0 {
			return network.Unsupportedf("Split of %d into %d unequal parts without sizes", dim, n)
		}
		for range n {
			sizes = append(sizes, int64(dim/n))
		}
	}
	if len(sizes) != n {
		return fmt.Errorf("%d split sizes for %d outputs", len(sizes), n)
	}
	total := int64(0)
	for _, s := range sizes {
		if s <= 0 {
			return network.Unsupportedf("Split with an empty part")
		}
		total += s
	}
	if total != int64(dim) {
		return fmt.Errorf("split sizes %v do not add up to %d", sizes, dim)
	}
	start := 0
	for i, out := range op.Out.Outputs {
		end := start + int(sizes[i])
		shape := slices.Clone(xv.shape)
		shape[a] = end - start
		var y *G.Node
		if end-start == dim {
			y = xn
		} else {
			if y, err = sliceAxis(xn, xv.shape, a, start, end); err != nil {
				return err
			}
		}
		if err := b.set(out, y, shape, xv.typ); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// permuteBlocks is reshape, transpose, reshape: the shape of DepthToSpace
// and SpaceToDepth.
func (b *builder) permuteBlocks(x, y string, mid func(s []int) ([]int, []int, []int, error)) error {
	xv, xn, err := b.getNode(x)
	if err != nil {
		return err
	}
	if len(xv.shape) != 4 {
		return fmt.Errorf("input of shape %v, want [N, C, H, W]", xv.shape)
	}
	s6, perm, out, err := mid(xv.shape)
	if err != nil {
		return err
	}
	m, err := reshape(xn, s6)
	if err != nil {
		return err
	}
	if m, err = G.Transpose(m, perm...); err != nil {
		return err
	}
	if m, err = reshape(m, out); err != nil {
		return err
	}
	return b.set(y, m, out, xv.typ)
}

func (b *builder) VisitDepthToSpace(op *ops.DepthToSpace) error {
	bs := int(op.Blocksize)
	return b.permuteBlocks(op.In.Input, op.Out.Output, func(s []int) ([]int, []int, []int, error) {
		n, c, h, w := s[0], s[1], s[2], s[3]
		if bs <= 0 || c%(bs*bs) != 0 {
			return nil, nil, nil, fmt.Errorf("blocksize %d for %d channels", bs, c)
		}
		out := []int{n, c / (bs * bs), h * bs, w * bs}
		if op.Mode == "CRD" {
			return []int{n, c / (bs * bs), bs, bs, h, w}, []int{0, 1, 4, 2, 5, 3}, out, nil
		}
		return []int{n, bs, bs, c / (bs * bs), h, w}, []int{0, 3, 4, 1, 5, 2}, out, nil
	})
}

func (b *builder) VisitSpaceToDepth(op *ops.SpaceToDepth) error {
	if op.Mode != "" && op.Mode != "DCR" {
		return network.Unsupportedf("SpaceToDepth mode %q", op.Mode)
	}
	bs := int(op.Blocksize)
	return b.permuteBlocks(op.In.Input, op.Out.Output, func(s []int) ([]int, []int, []int, error) {
		n, c, h, w := s[0], s[1], s[2], s[3]
		if bs <= 0 || h%bs != 0 || w%bs != 0 {
			return nil, nil, nil, fmt.Errorf("blocksize %d for %d×%d", bs, h, w)
		}
		return []int{n, c, h / bs, bs, w / bs, bs}, []int{0, 3, 5, 1, 2, 4}, []int{n, c * bs * bs, h / bs, w / bs}, nil
	})
}
