package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/conv"
	"github.com/deep500/deep500-go/backend/native/internal/gemm"
	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// DeformConv (versions 19 and 22) is a convolution whose kernel positions
// are displaced per output position by learned offsets: kernel position k
// of output position o samples the input at
//
//	o*stride - pad_begin + k*dilation + offset[n, og, k, :, o]
//
// by (multi)linear interpolation, input positions outside the image
// counting as zero, and the sample is weighted by mask[n, og, k, o] (1 when
// the mask is omitted). Input channels are split into offset_group groups,
// each with its own offsets and mask. The samples form a column matrix
// like im2col's, so the product with the filters runs on the same GEMM as
// Conv (conv.go); the window geometry is Conv's (conv_geometry.go).
//
// Offsets are [N, offset_group*prod(k)*nd, out...] with the nd coordinates
// (in spatial-dimension order) innermost; the mask is
// [N, offset_group*prod(k), out...].

// deformMaxDims bounds the spatial rank: interpolation reads 2^nd corners.
const deformMaxDims = 6

// deformTable holds, for one image, the interpolation corners of every
// (offset group, kernel position, output position): corners entries each,
// an input offset (-1 for none) and a weight that includes the mask.
type deformTable[T floatElem] struct {
	idx []int
	wt  []T
}

func (t *deformTable[T]) resize(n int) {
	if cap(t.idx) < n {
		t.idx = make([]int, n)
		t.wt = make([]T, n)
	}
	t.idx, t.wt = t.idx[:n], t.wt[:n]
}

// deformShapes are the sizes of one DeformConv call.
type deformShapes struct {
	*convShapes
	offsetGroups int
	nd, corners  int
}

// deformFill computes the interpolation table of image ni from its offsets
// and mask (nil for none).
func deformFill[T floatElem](tab *deformTable[T], off, mask []T, s *deformShapes, ni, threads int) {
	g := s.geom
	nd, ks, os, cr := s.nd, g.KernelSize(), g.OutSize(), s.corners
	tab.resize(s.offsetGroups * ks * os * cr)
	inStride := rowMajorStrides(g.In)
	offImg := off[ni*s.offsetGroups*ks*nd*os:]
	var maskImg []T
	if mask != nil {
		maskImg = mask[ni*s.offsetGroups*ks*os:]
	}
	rows := s.offsetGroups * ks
	par.For(rows, threads, max(1, par.Grain/max(os*cr, 1)), func(lo, hi int) {
		kpos := make([]int, nd)
		opos := make([]int, nd)
		base := make([]int, nd)
		frac := make([]float64, nd)
		for r := lo; r < hi; r++ {
			kidx := r % ks
			for d, rem := nd-1, kidx; d >= 0; d-- {
				kpos[d] = rem % g.Kernel[d]
				rem /= g.Kernel[d]
			}
			clear(opos)
			for p := range os {
				w := 1.0
				if maskImg != nil {
					w = float64(maskImg[r*os+p])
				}
				inside := true
				for d := range nd {
					pos := float64(opos[d]*g.Strides[d]-g.PadBegin[d]+kpos[d]*g.Dilations[d]) +
						float64(offImg[(r*nd+d)*os+p])
					// Both neighbours lie outside (this also catches NaN).
					if !(pos > -1 && pos < float64(g.In[d])) {
						inside = false
						break
					}
					f := math.Floor(pos)
					base[d], frac[d] = int(f), pos-f
				}
				e := ((r * os) + p) * cr
				for c := range cr {
					idx, cw := 0, w
					if !inside {
						idx = -1
					}
					for d := 0; d < nd && idx >= 0; d++ {
						i := base[d]
						if c>>(nd-1-d)&1 == 1 {
							i++
							cw *= frac[d]
						} else {
							cw *= 1 - frac[d]
						}
						if i < 0 || i >= g.In[d] {
							idx = -1
							break
						}
						idx += i * inStride[d]
					}
					if idx < 0 || cw == 0 {
						tab.idx[e+c], tab.wt[e+c] = -1, 0
						continue
					}
					tab.idx[e+c], tab.wt[e+c] = idx, T(cw)
				}
				for d := nd - 1; d >= 0; d-- {
					opos[d]++
					if opos[d] < g.Out[d] {
						break
					}
					opos[d] = 0
				}
			}
		}
	})
}

// deformForward computes y = deform_conv(x, w, offsets, mask) + b.
func deformForward[T floatElem](y, x, w, b, off, mask []T, s *deformShapes, tab *deformTable[T], sc *convScratch[T], threads int) {
	g := s.geom
	cg, mg := s.c/s.group, s.m/s.group
	ks, inSz, outSz, cr := g.KernelSize(), g.InSize(), g.OutSize(), s.corners
	kc := cg * ks
	perOG := s.c / s.offsetGroups
	sc.reserve(threads)
	for ni := range s.n {
		deformFill(tab, off, mask, s, ni, threads)
		convRunItems(s.group, mg*outSz*kc, threads, func(gi, worker, inner int) {
			cols := sc.get(worker, kc*outSz)
			par.For(kc, inner, max(1, par.Grain/max(outSz*cr, 1)), func(lo, hi int) {
				for r := lo; r < hi; r++ {
					cl, kidx := r/ks, r%ks
					c := gi*cg + cl
					plane := x[(ni*s.c+c)*inSz : (ni*s.c+c+1)*inSz]
					e0 := ((c/perOG)*ks + kidx) * outSz * cr
					row := cols[r*outSz : (r+1)*outSz]
					for p := range row {
						var v T
						e := e0 + p*cr
						for q := range cr {
							if i := tab.idx[e+q]; i >= 0 {
								v += tab.wt[e+q] * plane[i]
							}
						}
						row[p] = v
					}
				}
			})
			yg := y[(ni*s.m+gi*mg)*outSz : (ni*s.m+(gi+1)*mg)*outSz]
			wg := w[gi*mg*kc : (gi+1)*mg*kc]
			var beta T
			if b != nil {
				beta = 1
				for r := range mg {
					row := yg[r*outSz : (r+1)*outSz]
					v := b[gi*mg+r]
					for j := range row {
						row[j] = v
					}
				}
			}
			if mg <= 2 {
				conv.ThinProduct(yg, wg, cols, mg, kc, outSz, b == nil)
				return
			}
			gemm.Multiply(mg, outSz, kc, 1, gemm.NewMatrix(wg, kc, false), gemm.NewMatrix(cols, outSz, false), beta, yg, outSz, inner)
		})
	}
}

// deformConvKernel computes a DeformConv node.
type deformConvKernel struct {
	attrs        convWindowAttrs
	kernelShape  []int64
	group        int64
	offsetGroups int64
	threads      int

	out   outputBuffer
	s32   convScratch[float32]
	s64   convScratch[float64]
	t32   deformTable[float32]
	t64   deformTable[float64]
	wide  [5]float32Scratch
	wideY float32Scratch
}

// shapes checks the inputs against each other and the attributes.
func (k *deformConvKernel) shapes(x, w, off, b, mask *onnx.Tensor) (*deformShapes, error) {
	cs, err := checkConvShapes(&k.attrs, k.kernelShape, k.group, x.Shape, w.Shape, false)
	if err != nil {
		return nil, err
	}
	g := cs.geom
	s := &deformShapes{convShapes: cs, nd: len(g.In)}
	if s.nd > deformMaxDims {
		return nil, network.Unsupportedf("DeformConv with %d spatial dimensions (at most %d)", s.nd, deformMaxDims)
	}
	s.corners = 1 << s.nd
	if k.offsetGroups < 1 || k.offsetGroups > int64(s.c) || int64(s.c)%k.offsetGroups != 0 {
		return nil, fmt.Errorf("offset_group %d must be positive and divide the %d input channels", k.offsetGroups, s.c)
	}
	s.offsetGroups = int(k.offsetGroups)
	ks := g.KernelSize()
	want := append([]int{s.n, s.offsetGroups * ks * s.nd}, g.Out...)
	if !slices.Equal(off.Shape, want) {
		return nil, fmt.Errorf("offset has shape %v; want %v (N, offset_group*prod(kernel)*%d, output spatial sizes)", off.Shape, want, s.nd)
	}
	if mask != nil {
		want[1] = s.offsetGroups * ks
		if !slices.Equal(mask.Shape, want) {
			return nil, fmt.Errorf("mask has shape %v; want %v (N, offset_group*prod(kernel), output spatial sizes)", mask.Shape, want)
		}
	}
	if b != nil && (len(b.Shape) != 1 || b.Shape[0] != s.m) {
		return nil, fmt.Errorf("bias B has shape %v; want [%d]", b.Shape, s.m)
	}
	if ks*(s.c/s.group) > convMaxElements/max(1, g.OutSize()) ||
		s.offsetGroups*ks*s.corners > convMaxElements/max(1, g.OutSize()) {
		return nil, fmt.Errorf("sampling buffers for kernel %v over output %v are too large", g.Kernel, g.Out)
	}
	return s, nil
}

func (k *deformConvKernel) compute(x, w, off, b, mask *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	for _, t := range []*onnx.Tensor{w, off, b, mask} {
		if t != nil && t.Type != x.Type {
			return nil, fmt.Errorf("inputs have different types: X is %v, another is %v", x.Type, t.Type)
		}
	}
	s, err := k.shapes(x, w, off, b, mask)
	if err != nil {
		return nil, err
	}
	out := k.out.tensor(x.Type, append([]int{s.n, s.m}, s.geom.Out...))
	switch xd := x.Data.(type) {
	case []float32:
		deformForward(out.Data.([]float32), xd, w.Data.([]float32), optionalData[float32](b), off.Data.([]float32),
			optionalData[float32](mask), s, &k.t32, &k.s32, k.threads)
	case []float64:
		deformForward(out.Data.([]float64), xd, w.Data.([]float64), optionalData[float64](b), off.Data.([]float64),
			optionalData[float64](mask), s, &k.t64, &k.s64, k.threads)
	case []onnx.F16, []onnx.BF16:
		in := [5]*onnx.Tensor{x, w, off, b, mask}
		var wide [5][]float32
		for i, t := range in {
			if t != nil {
				wide[i], _ = widenToFloat32(k.wide[i].get(t.Len()), t.Data)
			}
		}
		wy := k.wideY.get(out.Len())
		deformForward(wy, wide[0], wide[1], wide[3], wide[2], wide[4], s, &k.t32, &k.s32, k.threads)
		if err := narrowFromFloat32(out.Data, wy); err != nil {
			return nil, err
		}
	default:
		return nil, network.Unsupportedf("DeformConv of %v tensors", x.Type)
	}
	return out, nil
}

// VisitDeformConv compiles DeformConv (versions 19 and 22 differ only in
// allowing bfloat16).
func (b *builder) VisitDeformConv(op *ops.DeformConv) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	w, err := b.input(op.In.W)
	if err != nil {
		return err
	}
	off, err := b.input(op.In.Offset)
	if err != nil {
		return err
	}
	bias, err := b.optionalInput(op.In.B)
	if err != nil {
		return err
	}
	mask, err := b.optionalInput(op.In.Mask)
	if err != nil {
		return err
	}
	y := b.output(op.Out.Y)
	k := &deformConvKernel{
		attrs:        convWindowAttrs{op: "DeformConv", strides: op.Strides, dilations: op.Dilations, pads: op.Pads},
		kernelShape:  slices.Clone(op.KernelShape),
		group:        op.Group,
		offsetGroups: op.OffsetGroup,
		threads:      b.e.threads,
	}
	return b.emit(func(slots []onnx.Value) error {
		var ts [5]*onnx.Tensor
		for i, r := range []valueRef{x, w, off, bias, mask} {
			t, err := r.optionalTensor(slots)
			if err != nil {
				return err
			}
			ts[i] = t
		}
		res, err := k.compute(ts[0], ts[1], ts[2], ts[3], ts[4])
		if err != nil {
			return err
		}
		y.set(slots, res)
		return nil
	})
}
