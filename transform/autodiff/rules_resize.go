package autodiff

import (
	"slices"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

func init() {
	register(resizeGrad, "Resize", "Upsample")
}

// resizeGrad: every mode of Resize and Upsample (nearest, linear, cubic,
// antialiased, any coordinate transformation) is a chain of per-axis
// linear maps, Y = X ×ₐ Wₐ with Wₐ of shape [outₐ, inₐ] (an output
// position outside tf_crop_and_resize's roi is a constant: a zero row).
// So dX = dY ×ₐ Wₐᵀ, one MatMul per resized axis. Wₐ is not computed by
// the transform but by the engine itself, exactly as its forward does:
// it is the resize along one axis, with axis a's scale (or size) and roi,
// of the inₐ × inₐ identity matrix (extrapolating zeros). An axis whose
// size and scale are both unchanged maps identically and is skipped.
// scales, sizes and roi get no gradient.
func resizeGrad(b *builder, n *onnx.Node, dy []string, need []bool) []string {
	if !need[0] {
		return nil
	}
	x, g := n.Inputs[0], dy[0]
	xs, ys := b.shapeOf(x), b.shapeOf(n.Outputs[0])
	if b.err != nil {
		return nil
	}
	r := len(xs)
	rz := resizeOf(b, n, r)
	if b.err != nil {
		return nil
	}
	cur := g
	for a := range r {
		crop := rz.tfCrop && rz.listed(a)
		if xs[a] == ys[a] && !crop && rz.unitScale(b, a) {
			continue
		}
		if xs[a] < 0 || ys[a] < 0 {
			b.fail("%s: axis %d of %v is free and resized", n.OpType, a, xs)
			return nil
		}
		// W [out, in], or Wᵀ [in, out] for the second-last axis, which
		// then multiplies from the left.
		left := a == r-2
		w := rz.matrix(b, a, xs[a], ys[a], left)
		switch {
		case a == r-1:
			cur = b.op("MatMul", []string{cur, w})
		case left:
			cur = b.op("MatMul", []string{w, cur})
		default:
			perm := make([]int64, 0, r)
			for i := range r {
				if i != a {
					perm = append(perm, int64(i))
				}
			}
			perm = append(perm, int64(a))
			back := make([]int64, r)
			for i, p := range perm {
				back[p] = int64(i)
			}
			cur = b.transpose(b.op("MatMul", []string{b.transpose(cur, perm...), w}), back...)
		}
	}
	return []string{cur}
}

// resizeInfo is what resizeGrad needs of a Resize or Upsample node.
type resizeInfo struct {
	n       *onnx.Node
	since   int
	attrs   []*onnx.Attribute // the interpolation's attributes, kept for W
	axes    []int64           // Resize-18's axes (nil: all)
	scales  string            // the scales input ("": none)
	fixed   []float32         // Upsample-7's scales attribute
	sizes   bool              // the output sizes were given
	roi     string
	tfCrop  bool
	opType  string
	rank    int
	dataTyp onnx.DataType
}

func resizeOf(b *builder, n *onnx.Node, r int) *resizeInfo {
	rz := &resizeInfo{n: n, opType: n.OpType, rank: r, dataTyp: b.typeOf(n.Inputs[0])}
	switch op := n.Op.(type) {
	case *ops.Upsample:
		rz.since = op.SinceVersion()
		rz.attrs = []*onnx.Attribute{attrString("mode", op.Mode)}
		switch {
		case rz.since < 7:
			b.fail("the gradient of Upsample-%d (height_scale and width_scale) is not handled", rz.since)
		case rz.since < 9:
			rz.fixed = op.Scales
		default:
			rz.scales = op.In.Scales
		}
	case *ops.Resize:
		rz.since = op.SinceVersion()
		rz.attrs = []*onnx.Attribute{attrString("mode", op.Mode)}
		if rz.since >= 11 {
			rz.attrs = append(rz.attrs,
				attrString("coordinate_transformation_mode", op.CoordinateTransformationMode),
				attrFloat("cubic_coeff_a", op.CubicCoeffA),
				attrInt("exclude_outside", op.ExcludeOutside),
				attrFloat("extrapolation_value", 0),
				attrString("nearest_mode", op.NearestMode))
			rz.tfCrop = op.CoordinateTransformationMode == "tf_crop_and_resize"
			rz.roi = op.In.Roi
		}
		if rz.since >= 18 {
			rz.attrs = append(rz.attrs, attrInt("antialias", op.Antialias))
			rz.axes = slices.Clone(op.Axes)
			for i, a := range rz.axes {
				if a < 0 {
					rz.axes[i] = a + int64(r)
				}
			}
		}
		rz.scales = op.In.Scales
		if op.In.Sizes != "" && numElements(b.shapeOf(op.In.Sizes)) > 0 {
			rz.sizes, rz.scales = true, ""
			if p := op.KeepAspectRatioPolicy; p != "" && p != "stretch" {
				b.fail("the gradient of Resize with keep_aspect_ratio_policy %q is not handled", p)
			}
		}
		if rz.scales != "" && numElements(b.shapeOf(rz.scales)) == 0 {
			rz.scales = ""
		}
		if rz.scales == "" && !rz.sizes {
			b.fail("Resize: neither scales nor sizes are given")
		}
	}
	return rz
}

// listed reports whether axis a is resized by the node (Resize-18's axes).
func (rz *resizeInfo) listed(a int) bool {
	return rz.axes == nil || slices.Contains(rz.axes, int64(a))
}

// slot is the position of axis a in the scales, sizes and roi lists.
func (rz *resizeInfo) slot(a int) int {
	if rz.axes == nil {
		return a
	}
	return slices.Index(rz.axes, int64(a))
}

// unitScale reports whether axis a is known to be resized by exactly 1
// (sizes given: the scale is out/in).
func (rz *resizeInfo) unitScale(b *builder, a int) bool {
	if !rz.listed(a) || rz.sizes {
		return true
	}
	if rz.fixed != nil {
		return a < len(rz.fixed) && rz.fixed[a] == 1
	}
	v, ok := resizeConstFloats(b, rz.scales)
	return ok && rz.slot(a) < len(v) && v[rz.slot(a)] == 1
}

// resizeConstFloats reads a float tensor fixed in the model (an
// initializer that is not an input, or a Constant's output).
func resizeConstFloats(b *builder, v string) ([]float64, bool) {
	for _, in := range b.g.Inputs {
		if in.Name == v {
			return nil, false
		}
	}
	var t *onnx.Tensor
	for _, in := range b.g.Initializers {
		if in.Name == v {
			t = in.Tensor
		}
	}
	for _, nd := range b.g.Nodes {
		if nd.OpType == "Constant" && nd.Domain == "" && len(nd.Outputs) > 0 && nd.Outputs[0] == v {
			for _, at := range nd.Attributes {
				if at.Name == "value" && at.Tensor != nil {
					t = at.Tensor
				}
			}
		}
	}
	if t == nil {
		return nil, false
	}
	switch d := t.Data.(type) {
	case []float32:
		out := make([]float64, len(d))
		for i, f := range d {
			out[i] = float64(f)
		}
		return out, true
	case []float64:
		return slices.Clone(d), true
	}
	return nil, false
}

// matrix is the node's resize of axis a (in → out) as a matrix: W
// [out, in], or Wᵀ [in, out] when transposed. It resizes the in × in
// identity along its first axis (second, transposed), the other axis
// kept.
func (rz *resizeInfo) matrix(b *builder, a int, in, out int64, transposed bool) string {
	vals := make([]float64, in*in)
	for i := range in {
		vals[i*in+i] = 1
	}
	t := floatTensor(rz.dataTyp, vals)
	if t == nil {
		b.fail("no identity matrix of type %v can be made", rz.dataTyp)
		return ""
	}
	t.Shape = []int{int(in), int(in)}
	eye := b.op("Constant", nil, attrTensor("value", t))
	// The resized axis of the 2-D identity: 0, or 1 when transposed.
	ax := 0
	if transposed {
		ax = 1
	}
	pair := func(v, one string) []string { // [v, one] or [one, v]
		if ax == 0 {
			return []string{v, one}
		}
		return []string{one, v}
	}
	if rz.fixed != nil {
		sc := []float32{1, 1}
		sc[ax] = rz.fixed[a]
		return b.op(rz.opType, []string{eye}, append(slices.Clone(rz.attrs), &onnx.Attribute{Name: "scales", Type: onnx.AttrFloats, Floats: sc})...)
	}
	var scales, sizes, roi string
	if rz.sizes {
		sz := []int64{in, in}
		sz[ax] = out
		sizes = b.ints(sz...)
	} else {
		s := b.op("Gather", []string{rz.scales, b.ints(int64(rz.slot(a)))}, attrInt("axis", 0))
		one := b.op("Constant", nil, attrTensor("value", onnx.FromSlice([]float32{1}, 1)))
		scales = b.op("Concat", pair(s, one), attrInt("axis", 0))
	}
	if rz.tfCrop {
		// [start₀, start₁, end₀, end₁]: axis a's roi, the other axis whole.
		k := int64(rz.slot(a))
		nAxes := int64(rz.rank)
		if rz.axes != nil {
			nAxes = int64(len(rz.axes))
		}
		rt := b.typeOf(rz.roi)
		zero := b.op("Constant", nil, attrTensor("value", resizeVec(rt, 0)))
		one := b.op("Constant", nil, attrTensor("value", resizeVec(rt, 1)))
		st := b.op("Gather", []string{rz.roi, b.ints(k)}, attrInt("axis", 0))
		en := b.op("Gather", []string{rz.roi, b.ints(nAxes + k)}, attrInt("axis", 0))
		roi = b.op("Concat", append(pair(st, zero), pair(en, one)...), attrInt("axis", 0))
	}
	var ins []string
	switch {
	case rz.opType == "Upsample" || rz.since < 11:
		ins = []string{eye, scales}
	case rz.since < 13:
		// Resize-11 takes roi and scales always (empty when unused).
		empty := b.op("Constant", nil, attrTensor("value", onnx.FromSlice([]float32{}, 0)))
		if roi == "" {
			roi = empty
		}
		if scales == "" {
			scales = empty
		}
		ins = []string{eye, roi, scales}
		if sizes != "" {
			ins = append(ins, sizes)
		}
	default:
		ins = []string{eye, roi, scales}
		if sizes != "" {
			ins = append(ins, sizes)
		}
	}
	return b.op(rz.opType, ins, rz.attrs...)
}

// resizeVec is a one-element 1-D tensor of a float type.
func resizeVec(dt onnx.DataType, v float64) *onnx.Tensor {
	t := floatTensor(dt, []float64{v})
	if t != nil {
		t.Shape = []int{1}
	}
	return t
}
