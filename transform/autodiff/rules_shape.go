package autodiff

import (
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Rules of the operators that move elements without changing them:
// reshapes, transposes, broadcasts, tilings, casts and the space/depth
// rearrangements. Each gradient moves dY back the way the forward moved
// X (summing where the forward copied an element more than once).

func init() {
	register(identityGrad, "Identity")
	register(reshapeGrad, "Reshape", "Flatten", "Squeeze", "Unsqueeze")
	register(transposeGrad, "Transpose")
	register(expandGrad, "Expand")
	register(tileGrad, "Tile")
	register(castGrad, "Cast", "CastLike")
	register(depthToSpaceGrad, "DepthToSpace")
	register(spaceToDepthGrad, "SpaceToDepth")
}

// identityGrad: Y = X, dX = dY.
func identityGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	return []string{dy[0]}
}

// reshapeGrad: Reshape, Flatten, Squeeze and Unsqueeze (every version:
// whether the shape or the axes are attributes or inputs does not matter)
// keep the elements in order, so dX = dY reshaped to X's shape. The
// shape and axes inputs get no gradient.
func reshapeGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	if !need[0] {
		return nil
	}
	return []string{b.reshapeLike(dy[0], n.Inputs[0])}
}

// transposeGrad: Y = transpose(X, p) (p reversed by default), so
// dX = transpose(dY, p⁻¹).
func transposeGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.Transpose)
	rank := len(b.shapeOf(n.Inputs[0]))
	perm := op.Perm
	if len(perm) == 0 {
		perm = make([]int64, rank)
		for i := range perm {
			perm[i] = int64(rank - 1 - i)
		}
	}
	if len(perm) != rank {
		b.fail("Transpose: perm %v for an input of rank %d", perm, rank)
		return nil
	}
	inv := make([]int64, rank)
	for i, p := range perm {
		if p < 0 {
			p += int64(rank)
		}
		inv[p] = int64(i)
	}
	return []string{b.transpose(dy[0], inv...)}
}

// expandGrad: Y = X broadcast to a shape, so dX = dY summed over the axes
// the broadcast added or stretched. The shape input gets no gradient.
func expandGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	if !need[0] {
		return nil
	}
	return []string{b.unbroadcast(dy[0], n.Inputs[0])}
}

// tileGrad: Y = X repeated rᵢ times along each axis i, so dX is the sum
// of the tiles: dY seen as [r₀, d₀, r₁, d₁, ...] summed over the rᵢ axes.
// The repeats are read off the shapes (Tile-1's tiles and axis inputs and
// Tile-6's repeats alike); a free dim takes its repeat from the input.
func tileGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	if !need[0] {
		return nil
	}
	x, g := n.Inputs[0], dy[0]
	xs, gs := b.shapeOf(x), b.shapeOf(g)
	if b.err != nil {
		return nil
	}
	if len(xs) != len(gs) {
		b.fail("Tile: output of rank %d for an input of rank %d", len(gs), len(xs))
		return nil
	}
	reps, ok := tileRepeats(b, n, xs, gs)
	if !ok {
		return nil
	}
	var split, axes []int64
	free := 0
	for i, d := range xs {
		if d < 0 {
			free++
		}
		if reps[i] == 1 {
			split = append(split, d)
			continue
		}
		axes = append(axes, int64(len(split)))
		split = append(split, reps[i], d)
	}
	if len(axes) == 0 {
		return []string{g}
	}
	if free > 1 {
		b.fail("Tile: %d dims of %v are free: the gradient cannot be reshaped", free, xs)
		return nil
	}
	r := b.reshape(g, split...)
	s := b.reduceSum(r, axes, false)
	return []string{b.reshapeLike(s, x)}
}

// tileRepeats returns Tile's repeat per axis.
func tileRepeats(b *builder, n *onnx.Node, xs, gs []int64) ([]int64, bool) {
	reps := make([]int64, len(xs))
	var given []int64
	for i := range xs {
		if xs[i] >= 0 && gs[i] >= 0 {
			if xs[i] == 0 {
				reps[i] = 1
			} else {
				reps[i] = gs[i] / xs[i]
			}
			continue
		}
		// A free dim: the repeat comes from the inputs.
		if given == nil {
			op := n.Op.(*ops.Tile)
			if op.SinceVersion() >= 6 {
				v, ok := b.intsOf(op.In.Repeats)
				if !ok {
					return nil, false
				}
				given = v
			} else {
				t, ok1 := b.intsOf(op.In.Tiles)
				a, ok2 := b.intsOf(op.In.Axis)
				if !ok1 || !ok2 || len(t) != 1 || len(a) != 1 {
					b.fail("Tile-1: tiles and axis must be known one-element tensors")
					return nil, false
				}
				given = make([]int64, len(xs))
				for j := range given {
					given[j] = 1
				}
				ax := a[0]
				if ax < 0 {
					ax += int64(len(xs))
				}
				given[ax] = t[0]
			}
			if len(given) != len(xs) {
				b.fail("Tile: %d repeats for an input of rank %d", len(given), len(xs))
				return nil, false
			}
		}
		reps[i] = given[i]
	}
	return reps, true
}

// castGrad: Y = cast(X) between floating-point types, so dX = dY cast
// back to X's type. A cast to or from a non-float type passes no
// gradient (the driver never asks for one). CastLike's second input only
// gives the type.
func castGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	x, y := n.Inputs[0], n.Outputs[0]
	if !need[0] || !b.typeOf(x).IsFloat() || !b.typeOf(y).IsFloat() {
		return nil
	}
	if b.typeOf(x) == b.typeOf(y) {
		return []string{dy[0]}
	}
	return []string{b.cast(dy[0], b.typeOf(x))}
}

// depthToSpaceGrad: DepthToSpace is reshape → 6-D transpose → reshape;
// dX is dY taken back through the inverse transpose.
//
//	DCR: X [N, C, H, W] → [N, b, b, C/b², H, W] ·perm(0,3,4,1,5,2)
//	CRD: X [N, C, H, W] → [N, C/b², b, b, H, W] ·perm(0,1,4,2,5,3)
func depthToSpaceGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.DepthToSpace)
	return spaceDepthGrad(b, n, dy[0], op.Blocksize, op.Mode, true)
}

// spaceToDepthGrad: SpaceToDepth is reshape → 6-D transpose → reshape;
// dX is dY taken back through the inverse transpose.
//
//	DCR: X [N, C, H, W] → [N, C, H/b, b, W/b, b] ·perm(0,3,5,1,2,4)
//	CRD: (version 28) the same 6-D view ·perm(0,1,3,5,2,4)
func spaceToDepthGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	op := n.Op.(*ops.SpaceToDepth)
	return spaceDepthGrad(b, n, dy[0], op.Blocksize, op.Mode, false)
}

func spaceDepthGrad(b *builder, n *onnx.Node, g string, bs int64, mode string, toSpace bool) []string {
	x := n.Inputs[0]
	xs := b.shapeOf(x)
	if b.err != nil {
		return nil
	}
	if len(xs) != 4 {
		b.fail("%s: input of rank %d, want 4", n.OpType, len(xs))
		return nil
	}
	crd := false
	switch mode {
	case "", "DCR":
	case "CRD":
		crd = true
	default:
		b.fail("%s: mode %q", n.OpType, mode)
		return nil
	}
	for _, d := range xs[1:] {
		if d < 0 {
			b.fail("%s: the channel and spatial dims of %v must be fixed", n.OpType, xs)
			return nil
		}
	}
	// The batch dim, free or not, stays first: 0 copies it.
	nb, c, h, w := xs[0], xs[1], xs[2], xs[3]
	if nb < 0 {
		nb = 0
	}
	var in6, perm []int64
	if toSpace {
		cc := c / (bs * bs)
		if crd {
			in6, perm = []int64{nb, cc, bs, bs, h, w}, []int64{0, 1, 4, 2, 5, 3}
		} else {
			in6, perm = []int64{nb, bs, bs, cc, h, w}, []int64{0, 3, 4, 1, 5, 2}
		}
	} else {
		in6 = []int64{nb, c, h / bs, bs, w / bs, bs}
		if crd {
			perm = []int64{0, 1, 3, 5, 2, 4}
		} else {
			perm = []int64{0, 3, 5, 1, 2, 4}
		}
	}
	// dY seen with the transposed 6-D shape, transposed back.
	out6 := make([]int64, 6)
	inv := make([]int64, 6)
	for i, p := range perm {
		out6[i] = in6[p]
		inv[p] = int64(i)
	}
	r := b.reshape(g, out6...)
	t := b.transpose(r, inv...)
	return []string{b.reshape(t, 0, c, h, w)}
}
