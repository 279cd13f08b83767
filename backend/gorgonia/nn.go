package gorgonia

import (
	"fmt"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// VisitMatMul maps numpy matmul for the cases Gorgonia's Mul and
// BatchedMatMul express: matrix·matrix, vector·matrix, matrix·vector,
// stacks of matrices with equal leading dimensions, and a stack times one
// matrix.
func (b *builder) VisitMatMul(op *ops.MatMul) error {
	av, an, err := b.getFloat(op.In.A)
	if err != nil {
		return err
	}
	bv, bn, err := b.getFloat(op.In.B)
	if err != nil {
		return err
	}
	if av.typ != bv.typ {
		return fmt.Errorf("MatMul of %v and %v", av.typ, bv.typ)
	}
	res, shape, err := matmul(an, bn, av.shape, bv.shape)
	if err != nil {
		return err
	}
	return b.set(op.Out.Y, res, shape, av.typ)
}

func matmul(an, bn *G.Node, as, bs []int) (*G.Node, []int, error) {
	ra, rb := len(as), len(bs)
	switch {
	case ra == 0 || rb == 0:
		return nil, nil, fmt.Errorf("MatMul of a scalar")
	case ra <= 2 && rb <= 2:
		if as[ra-1] != bs[max(rb-2, 0)] {
			return nil, nil, fmt.Errorf("MatMul of shapes %v and %v", as, bs)
		}
		res, err := G.Mul(an, bn)
		if err != nil {
			return nil, nil, err
		}
		var shape []int
		if ra == 2 {
			shape = append(shape, as[0])
		}
		if rb == 2 {
			shape = append(shape, bs[1])
		}
		if len(shape) == 0 {
			return nil, nil, network.Unsupportedf("MatMul of two vectors (a rank-0 result)")
		}
		return res, shape, nil
	case ra > 2 && rb == 2:
		m, k := onnx.NumElements(as[:ra-1]), as[ra-1]
		if k != bs[0] {
			return nil, nil, fmt.Errorf("MatMul of shapes %v and %v", as, bs)
		}
		a2, err := reshape(an, tensor.Shape{m, k})
		if err != nil {
			return nil, nil, err
		}
		res, err := G.Mul(a2, bn)
		if err != nil {
			return nil, nil, err
		}
		shape := append(slices.Clone(as[:ra-1]), bs[1])
		res, err = reshape(res, shape)
		return res, shape, err
	case ra > 2 && ra == rb && slices.Equal(as[:ra-2], bs[:rb-2]):
		batch := onnx.NumElements(as[:ra-2])
		m, k, n := as[ra-2], as[ra-1], bs[rb-1]
		if k != bs[rb-2] {
			return nil, nil, fmt.Errorf("MatMul of shapes %v and %v", as, bs)
		}
		a3, err := reshape(an, tensor.Shape{batch, m, k})
		if err != nil {
			return nil, nil, err
		}
		b3, err := reshape(bn, tensor.Shape{batch, k, n})
		if err != nil {
			return nil, nil, err
		}
		res, err := G.BatchedMatMul(a3, b3)
		if err != nil {
			return nil, nil, err
		}
		shape := append(slices.Clone(as[:ra-1]), n)
		res, err = reshape(res, shape)
		return res, shape, err
	}
	return nil, nil, network.Unsupportedf("MatMul of shapes %v and %v (broadcast batch dimensions)", as, bs)
}

// VisitGemm is α·A'·B' + β·C with C broadcast to the result.
func (b *builder) VisitGemm(op *ops.Gemm) error {
	av, an, err := b.getFloat(op.In.A)
	if err != nil {
		return err
	}
	bv, bn, err := b.getFloat(op.In.B)
	if err != nil {
		return err
	}
	if len(av.shape) != 2 || len(bv.shape) != 2 {
		return fmt.Errorf("Gemm needs matrices, got shapes %v and %v", av.shape, bv.shape)
	}
	m, k := av.shape[0], av.shape[1]
	if op.TransA != 0 {
		if an, err = G.Transpose(an, 1, 0); err != nil {
			return err
		}
		m, k = k, m
	}
	k2, n := bv.shape[0], bv.shape[1]
	if op.TransB != 0 {
		if bn, err = G.Transpose(bn, 1, 0); err != nil {
			return err
		}
		k2, n = n, k2
	}
	if k != k2 {
		return fmt.Errorf("Gemm of shapes %v and %v (transA %d, transB %d)", av.shape, bv.shape, op.TransA, op.TransB)
	}
	res, err := G.Mul(an, bn)
	if err != nil {
		return err
	}
	if op.Alpha != 1 {
		if res, err = scale(res, av.typ, float64(op.Alpha)); err != nil {
			return err
		}
	}
	shape := []int{m, n}
	if op.In.C != "" && op.Beta != 0 {
		cv, err := b.get(op.In.C)
		if err != nil {
			return err
		}
		cn, err := b.nodeOf(cv)
		if err != nil {
			return err
		}
		if op.Beta != 1 {
			if cn, err = scale(cn, cv.typ, float64(op.Beta)); err != nil {
				return err
			}
		}
		rv := &val{n: res, shape: shape, typ: av.typ}
		xn, yn, lp, rp, out, err := b.broadcast(rv, &val{n: cn, shape: cv.shape, typ: cv.typ})
		if err != nil {
			return err
		}
		if !slices.Equal(out, shape) {
			return fmt.Errorf("Gemm's C of shape %v does not broadcast to %v", cv.shape, shape)
		}
		if res, err = G.BroadcastAdd(xn, yn, lp, rp); err != nil {
			return err
		}
		if res, err = finish(res, shape); err != nil {
			return err
		}
	}
	return b.set(op.Out.Y, res, shape, av.typ)
}

// spatial is the geometry of a 2-D window operator after checks: kernel,
// symmetric pads, strides and dilations, for H and W.
type spatial struct {
	kernel, pad, stride, dilation [2]int
	oneD                          bool // the input was 1-D ([N, C, L]), lifted to H = 1
}

// geometry reads and checks the window attributes for Gorgonia, which
// pads each spatial dimension symmetrically and works in 2-D.
func geometry(opName string, xShape []int, kernel, pads, strides, dilations []int64, autoPad string) (spatial, error) {
	var s spatial
	nsp := len(xShape) - 2
	if nsp != 1 && nsp != 2 {
		return s, network.Unsupportedf("%s with %d spatial dimensions (Gorgonia has 2-D windows)", opName, nsp)
	}
	if len(kernel) != nsp {
		return s, fmt.Errorf("%s: kernel_shape %v for %d spatial dimensions", opName, kernel, nsp)
	}
	get := func(list []int64, i, def int) int {
		if len(list) == 0 {
			return def
		}
		return int(list[i])
	}
	if len(pads) != 0 && len(pads) != 2*nsp || len(strides) != 0 && len(strides) != nsp || len(dilations) != 0 && len(dilations) != nsp {
		return s, fmt.Errorf("%s: pads %v, strides %v or dilations %v do not fit %d spatial dimensions", opName, pads, strides, dilations, nsp)
	}
	off := 2 - nsp
	s.kernel, s.stride, s.dilation = [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}
	s.oneD = nsp == 1
	for i := range nsp {
		s.kernel[off+i] = int(kernel[i])
		s.stride[off+i] = get(strides, i, 1)
		s.dilation[off+i] = get(dilations, i, 1)
		begin, end := get(pads, i, 0), get(pads, i+nsp, 0)
		switch autoPad {
		case "NOTSET", "":
		case "VALID":
			begin, end = 0, 0
		case "SAME_UPPER", "SAME_LOWER":
			in := xShape[2+i]
			st := s.stride[off+i]
			out := (in + st - 1) / st
			total := max(0, (out-1)*st+(s.kernel[off+i]-1)*s.dilation[off+i]+1-in)
			begin, end = total/2, total-total/2
			if autoPad == "SAME_LOWER" {
				begin, end = end, begin
			}
		default:
			return s, fmt.Errorf("%s: unknown auto_pad %q", opName, autoPad)
		}
		if begin != end {
			return s, network.Unsupportedf("%s with asymmetric pads (%d before, %d after): Gorgonia pads symmetrically", opName, begin, end)
		}
		if begin < 0 || s.kernel[off+i] <= 0 || s.stride[off+i] <= 0 || s.dilation[off+i] <= 0 {
			return s, fmt.Errorf("%s: invalid kernel %v, pads %v, strides %v or dilations %v", opName, kernel, pads, strides, dilations)
		}
		s.pad[off+i] = begin
	}
	return s, nil
}

// outSize is the output extent of a window along dimension i (floor mode).
func (s spatial) outSize(in, i int) int {
	return (in+2*s.pad[i]-s.dilation[i]*(s.kernel[i]-1)-1)/s.stride[i] + 1
}

// to4D lifts a 1-D input [N, C, L] to [N, C, 1, L].
func (s spatial) to4D(x *G.Node, shape []int) (*G.Node, []int, error) {
	if !s.oneD {
		return x, shape, nil
	}
	s4 := []int{shape[0], shape[1], 1, shape[2]}
	y, err := reshape(x, s4)
	return y, s4, err
}

// from4D undoes to4D on an output.
func (s spatial) from4D(y *G.Node, shape4 []int) (*G.Node, []int, error) {
	if !s.oneD {
		return y, shape4, nil
	}
	s3 := []int{shape4[0], shape4[1], shape4[3]}
	z, err := reshape(y, s3)
	return z, s3, err
}

func ints(xs []int64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}

// VisitConv maps 1-D and 2-D convolutions without groups onto Gorgonia's
// Conv2d (im2col and a matrix product).
func (b *builder) VisitConv(op *ops.Conv) error {
	if op.Group != 1 {
		return network.Unsupportedf("Conv with group %d (Gorgonia's Conv2d has no groups)", op.Group)
	}
	xv, xn, err := b.getFloat(op.In.X)
	if err != nil {
		return err
	}
	wv, wn, err := b.getFloat(op.In.W)
	if err != nil {
		return err
	}
	if len(wv.shape) != len(xv.shape) || len(xv.shape) < 3 {
		return fmt.Errorf("Conv of X %v with W %v", xv.shape, wv.shape)
	}
	kernel := op.KernelShape
	if len(kernel) == 0 {
		for _, d := range wv.shape[2:] {
			kernel = append(kernel, int64(d))
		}
	}
	s, err := geometry("Conv", xv.shape, kernel, op.Pads, op.Strides, op.Dilations, op.AutoPad)
	if err != nil {
		return err
	}
	if wv.shape[1] != xv.shape[1] {
		return fmt.Errorf("Conv: W %v has %d input channels, X %v has %d", wv.shape, wv.shape[1], xv.shape, xv.shape[1])
	}
	x4, xs4, err := s.to4D(xn, xv.shape)
	if err != nil {
		return err
	}
	w4, ws4, err := s.to4D(wn, wv.shape)
	if err != nil {
		return err
	}
	oh, ow := s.outSize(xs4[2], 0), s.outSize(xs4[3], 1)
	if oh <= 0 || ow <= 0 {
		return fmt.Errorf("Conv: the window does not fit the input %v", xv.shape)
	}
	y, err := G.Conv2d(x4, w4, tensor.Shape{ws4[2], ws4[3]}, s.pad[:], s.stride[:], s.dilation[:])
	if err != nil {
		return err
	}
	shape4 := []int{xs4[0], ws4[0], oh, ow}
	if op.In.B != "" {
		bv, bn, err := b.getFloat(op.In.B)
		if err != nil {
			return err
		}
		if len(bv.shape) != 1 || bv.shape[0] != ws4[0] {
			return fmt.Errorf("Conv: bias of shape %v for %d output channels", bv.shape, ws4[0])
		}
		b4, err := reshape(bn, tensor.Shape{1, ws4[0], 1, 1})
		if err != nil {
			return err
		}
		sum, err := b.bop(G.BroadcastAdd, &val{n: y, shape: shape4, typ: xv.typ}, &val{n: b4, shape: []int{1, ws4[0], 1, 1}, typ: xv.typ})
		if err != nil {
			return err
		}
		y = sum.n
	}
	y, shape, err := s.from4D(y, shape4)
	if err != nil {
		return err
	}
	return b.set(op.Out.Y, y, shape, xv.typ)
}

// poolChecks rejects what neither pooling mapping does.
func poolChecks(opName string, ceil int64, storage int64) error {
	if ceil != 0 {
		return network.Unsupportedf("%s with ceil_mode", opName)
	}
	if storage != 0 {
		return network.Unsupportedf("%s with column-major storage_order", opName)
	}
	return nil
}

// VisitMaxPool maps onto Gorgonia's MaxPool2D (padding never wins the
// max there, as in ONNX); dilations and the Indices output are not
// expressible.
func (b *builder) VisitMaxPool(op *ops.MaxPool) error {
	if err := poolChecks("MaxPool", op.CeilMode, op.StorageOrder); err != nil {
		return err
	}
	if op.Out.Indices != "" {
		return network.Unsupportedf("MaxPool's Indices output")
	}
	for _, d := range op.Dilations {
		if d != 1 {
			return network.Unsupportedf("MaxPool with dilations %v", op.Dilations)
		}
	}
	xv, xn, err := b.getFloat(op.In.X)
	if err != nil {
		return err
	}
	s, err := geometry("MaxPool", xv.shape, op.KernelShape, op.Pads, op.Strides, nil, op.AutoPad)
	if err != nil {
		return err
	}
	x4, xs4, err := s.to4D(xn, xv.shape)
	if err != nil {
		return err
	}
	oh, ow := s.outSize(xs4[2], 0), s.outSize(xs4[3], 1)
	if oh <= 0 || ow <= 0 {
		return fmt.Errorf("MaxPool: the window does not fit the input %v", xv.shape)
	}
	for i := range 2 {
		if s.pad[i] >= s.kernel[i] {
			return network.Unsupportedf("MaxPool with pads %v not smaller than the kernel %v", s.pad, s.kernel)
		}
	}
	y, err := G.MaxPool2D(x4, tensor.Shape{s.kernel[0], s.kernel[1]}, s.pad[:], s.stride[:])
	if err != nil {
		return err
	}
	y, shape, err := s.from4D(y, []int{xs4[0], xs4[1], oh, ow})
	if err != nil {
		return err
	}
	return b.set(op.Out.Y, y, shape, xv.typ)
}

// VisitAveragePool is composed from Im2Col and Mean (Gorgonia's own
// AveragePool2D divides by the input width, not the window size): each
// channel becomes an image of one channel, its windows are laid out by
// Im2Col, and averaged. With padding and count_include_pad 0 the window
// sums are divided by the number of real elements in each window.
func (b *builder) VisitAveragePool(op *ops.AveragePool) error {
	if err := poolChecks("AveragePool", op.CeilMode, 0); err != nil {
		return err
	}
	xv, xn, err := b.getFloat(op.In.X)
	if err != nil {
		return err
	}
	s, err := geometry("AveragePool", xv.shape, op.KernelShape, op.Pads, op.Strides, op.Dilations, op.AutoPad)
	if err != nil {
		return err
	}
	x4, xs4, err := s.to4D(xn, xv.shape)
	if err != nil {
		return err
	}
	n, c, h, w := xs4[0], xs4[1], xs4[2], xs4[3]
	oh, ow := s.outSize(h, 0), s.outSize(w, 1)
	if oh <= 0 || ow <= 0 {
		return fmt.Errorf("AveragePool: the window does not fit the input %v", xv.shape)
	}
	flat, err := reshape(x4, tensor.Shape{n * c, 1, h, w})
	if err != nil {
		return err
	}
	cols, err := G.Im2Col(flat, tensor.Shape{s.kernel[0], s.kernel[1]}, tensor.Shape{s.pad[0], s.pad[1]},
		tensor.Shape{s.stride[0], s.stride[1]}, tensor.Shape{s.dilation[0], s.dilation[1]})
	if err != nil {
		return err
	}
	var y *G.Node
	padded := s.pad[0] > 0 || s.pad[1] > 0
	if !padded || op.CountIncludePad != 0 {
		if y, err = G.Mean(cols, 3); err != nil {
			return err
		}
	} else {
		sum, err := G.Sum(cols, 3)
		if err != nil {
			return err
		}
		counts := make([]float64, oh*ow)
		for i := range oh {
			for j := range ow {
				hc, wc := 0, 0
				for k := range s.kernel[0] {
					if r := i*s.stride[0] - s.pad[0] + k*s.dilation[0]; r >= 0 && r < h {
						hc++
					}
				}
				for k := range s.kernel[1] {
					if q := j*s.stride[1] - s.pad[1] + k*s.dilation[1]; q >= 0 && q < w {
						wc++
					}
				}
				counts[i*ow+j] = float64(hc * wc)
			}
		}
		ct := &onnx.Tensor{Type: xv.typ, Shape: []int{1, oh, ow}}
		if xv.typ == onnx.Double {
			ct.Data = counts
		} else {
			f := make([]float32, len(counts))
			for i, x := range counts {
				f[i] = float32(x)
			}
			ct.Data = f
		}
		cn, err := b.nodeOf(&val{c: ct, shape: ct.Shape, typ: ct.Type})
		if err != nil {
			return err
		}
		var rp []byte
		if n*c != 1 {
			rp = []byte{0}
		}
		if y, err = G.BroadcastHadamardDiv(sum, cn, nil, rp); err != nil {
			return err
		}
	}
	if y, err = reshape(y, tensor.Shape{n, c, oh, ow}); err != nil {
		return err
	}
	y, shape, err := s.from4D(y, []int{n, c, oh, ow})
	if err != nil {
		return err
	}
	return b.set(op.Out.Y, y, shape, xv.typ)
}

// globalPool reduces every spatial axis, keeping them as size 1.
func (b *builder) globalPool(x, y string, f func(*G.Node, ...int) (*G.Node, error)) error {
	xv, xn, err := b.getFloat(x)
	if err != nil {
		return err
	}
	if len(xv.shape) < 3 {
		return fmt.Errorf("global pooling of shape %v", xv.shape)
	}
	var axes []int
	for i := 2; i < len(xv.shape); i++ {
		axes = append(axes, i)
	}
	r, err := reduceAxes(xn, xv.shape, axes, f)
	if err != nil {
		return err
	}
	shape := []int{xv.shape[0], xv.shape[1]}
	for range axes {
		shape = append(shape, 1)
	}
	if r, err = reshape(r, shape); err != nil {
		return err
	}
	return b.set(y, r, shape, xv.typ)
}

func (b *builder) VisitGlobalAveragePool(op *ops.GlobalAveragePool) error {
	return b.globalPool(op.In.X, op.Out.Y, G.Mean)
}
func (b *builder) VisitGlobalMaxPool(op *ops.GlobalMaxPool) error {
	return b.globalPool(op.In.X, op.Out.Y, G.Max)
}

// VisitBatchNormalization is the inference form,
// scale·(x − mean)/√(var + ε) + B, per channel (axis 1).
func (b *builder) VisitBatchNormalization(op *ops.BatchNormalization) error {
	v := op.SinceVersion()
	switch {
	case v < 7 && op.IsTest == 0:
		return network.Unsupportedf("BatchNormalization (version %d) in training mode", v)
	case v < 9 && op.Spatial == 0:
		return network.Unsupportedf("BatchNormalization with spatial 0")
	case op.TrainingMode != 0:
		return network.Unsupportedf("BatchNormalization in training mode")
	}
	meanName, varName := op.In.InputMean, op.In.InputVar
	if v < 14 {
		meanName, varName = op.In.Mean, op.In.Var
	}
	for _, o := range []string{op.Out.RunningMean, op.Out.RunningVar, op.Out.Mean, op.Out.Var, op.Out.SavedMean, op.Out.SavedVar} {
		if o != "" {
			return network.Unsupportedf("BatchNormalization's training outputs")
		}
	}
	xv, xn, err := b.getFloat(op.In.X)
	if err != nil {
		return err
	}
	if len(xv.shape) < 2 {
		return fmt.Errorf("BatchNormalization of shape %v", xv.shape)
	}
	c := xv.shape[1]
	bshape := make([]int, len(xv.shape))
	for i := range bshape {
		bshape[i] = 1
	}
	bshape[1] = c
	per := func(name string) (*G.Node, error) {
		pv, pn, err := b.getFloat(name)
		if err != nil {
			return nil, err
		}
		if len(pv.shape) != 1 || pv.shape[0] != c || pv.typ != xv.typ {
			return nil, fmt.Errorf("BatchNormalization: %q is %v%v, want %v[%d]", name, pv.typ, pv.shape, xv.typ, c)
		}
		return reshape(pn, bshape)
	}
	scaleN, err := per(op.In.Scale)
	if err != nil {
		return err
	}
	biasN, err := per(op.In.B)
	if err != nil {
		return err
	}
	meanN, err := per(meanName)
	if err != nil {
		return err
	}
	varN, err := per(varName)
	if err != nil {
		return err
	}
	// inv = scale / sqrt(var + eps), per channel.
	den, err := shift(varN, xv.typ, float64(op.Epsilon))
	if err != nil {
		return err
	}
	if den, err = G.Sqrt(den); err != nil {
		return err
	}
	inv, err := G.HadamardDiv(scaleN, den)
	if err != nil {
		return err
	}
	pv := func(n *G.Node) *val { return &val{n: n, shape: bshape, typ: xv.typ} }
	y, err := b.bop(G.BroadcastSub, &val{n: xn, shape: xv.shape, typ: xv.typ}, pv(meanN))
	if err != nil {
		return err
	}
	if y, err = b.bop(G.BroadcastHadamardProd, y, pv(inv)); err != nil {
		return err
	}
	if y, err = b.bop(G.BroadcastAdd, y, pv(biasN)); err != nil {
		return err
	}
	return b.set(op.Out.Y, y.n, xv.shape, xv.typ)
}

// softmaxLike maps Softmax and LogSoftmax. Before version 13 the input is
// coerced to 2-D at axis and normalized over the trailing block; from 13
// the normalization runs along the one axis (moved last by a transpose).
// Either way Gorgonia's op runs on a matrix along its last axis.
func (b *builder) softmaxLike(x, y string, axis int64, version int, isLog bool) error {
	xv, xn, err := b.getFloat(x)
	if err != nil {
		return err
	}
	r := len(xv.shape)
	if r == 0 {
		return network.Unsupportedf("softmax of a rank-0 tensor")
	}
	a := int(axis)
	if a < 0 {
		a += r
	}
	if a < 0 || a >= r {
		return fmt.Errorf("axis %d out of range for shape %v", axis, xv.shape)
	}
	f := G.SoftMax
	if isLog {
		f = G.LogSoftMax
	}
	if version < 13 || a == r-1 {
		outer, inner := onnx.NumElements(xv.shape[:a]), onnx.NumElements(xv.shape[a:])
		m, err := reshape(xn, tensor.Shape{outer, inner})
		if err != nil {
			return err
		}
		s, err := f(m, 1)
		if err != nil {
			return err
		}
		if s, err = reshape(s, gshape(xv.shape)); err != nil {
			return err
		}
		return b.set(y, s, xv.shape, xv.typ)
	}
	perm := make([]int, 0, r)
	for i := range r {
		if i != a {
			perm = append(perm, i)
		}
	}
	perm = append(perm, a)
	t, err := G.Transpose(xn, perm...)
	if err != nil {
		return err
	}
	tshape := make([]int, r)
	for i, p := range perm {
		tshape[i] = xv.shape[p]
	}
	m, err := reshape(t, tensor.Shape{onnx.NumElements(tshape[:r-1]), tshape[r-1]})
	if err != nil {
		return err
	}
	s, err := f(m, 1)
	if err != nil {
		return err
	}
	if s, err = reshape(s, tshape); err != nil {
		return err
	}
	inv := make([]int, r)
	for i, p := range perm {
		inv[p] = i
	}
	if s, err = G.Transpose(s, inv...); err != nil {
		return err
	}
	return b.set(y, s, xv.shape, xv.typ)
}

func (b *builder) VisitSoftmax(op *ops.Softmax) error {
	return b.softmaxLike(op.In.Input, op.Out.Output, op.Axis, op.SinceVersion(), false)
}
func (b *builder) VisitLogSoftmax(op *ops.LogSoftmax) error {
	return b.softmaxLike(op.In.Input, op.Out.Output, op.Axis, op.SinceVersion(), true)
}
