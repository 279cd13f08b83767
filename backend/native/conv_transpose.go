package native

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/conv"
	"github.com/deep500/deep500-go/backend/native/internal/gemm"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// ConvTranspose is the adjoint of Conv: per (image, group), the GEMM
// W_g^T [M/g*prod(k), C/g] x X_g [C/g, prod(in)] gives one column per input
// position, and col2im adds each column into the output window it came
// from (conv_geometry.go).

type convTransposeKernel struct {
	attrs         convWindowAttrs
	kernelShape   []int64
	outputShape   []int64
	outputPadding []int64
	group         int64
	threads       int

	out outputBuffer
	buf convBuffers
}

// transposeGeometry returns the col2im geometry: its "in" is the output
// image, its "out" the input positions.
func (k *convTransposeKernel) transposeGeometry(in, kernel []int) (*convGeom, error) {
	n := len(in)
	g := &convGeom{Out: in, Kernel: kernel, In: make([]int, n), PadBegin: make([]int, n), PadEnd: make([]int, n)}
	var err error
	if g.Strides, err = positiveOr("strides", k.attrs.strides, n, 1); err != nil {
		return nil, err
	}
	if g.Dilations, err = positiveOr("dilations", k.attrs.dilations, n, 1); err != nil {
		return nil, err
	}
	outPad := make([]int, n)
	if len(k.outputPadding) != 0 {
		if len(k.outputPadding) != n {
			return nil, fmt.Errorf("output_padding %v has %d entries, want %d", k.outputPadding, len(k.outputPadding), n)
		}
		for i, p := range k.outputPadding {
			if p < 0 || p > convMaxElements {
				return nil, fmt.Errorf("output_padding %v must be non-negative", k.outputPadding)
			}
			outPad[i] = int(p)
		}
	}
	full := make([]int, n) // output size without padding
	for i := range n {
		if kernel[i] < 1 {
			return nil, fmt.Errorf("kernel size %v must be positive", kernel)
		}
		ek := (kernel[i]-1)*g.Dilations[i] + 1
		full[i] = g.Strides[i]*(in[i]-1) + outPad[i] + ek
		if in[i] == 0 {
			full[i] = 0
		}
		if full[i] > convMaxElements {
			return nil, fmt.Errorf("output size %d in spatial dimension %d is too large", full[i], i)
		}
	}
	autoPad := k.attrs.autoPad
	var target []int64
	switch {
	case len(k.outputShape) != 0:
		target = k.outputShape
		if len(target) == n+2 {
			target = target[2:]
		}
		if len(target) != n {
			return nil, fmt.Errorf("output_shape %v has %d entries, want %d", k.outputShape, len(k.outputShape), n)
		}
	case autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER":
		target = make([]int64, n)
		for i := range n {
			target[i] = int64(in[i]) * int64(g.Strides[i])
		}
	}
	if target != nil {
		for i := range n {
			if target[i] < 0 || target[i] > convMaxElements {
				return nil, fmt.Errorf("output_shape %v is out of range", target)
			}
			total := full[i] - int(target[i])
			// Floor division, so that a negative total (an output larger
			// than the full one) adds the extra positions at the end.
			small := total / 2
			if total < 0 && total%2 != 0 {
				small--
			}
			big := total - small
			if autoPad == "SAME_UPPER" {
				g.PadBegin[i], g.PadEnd[i] = small, big
			} else {
				g.PadBegin[i], g.PadEnd[i] = big, small
			}
			g.In[i] = int(target[i])
		}
		return g, nil
	}
	if autoPad != "VALID" && len(k.attrs.pads) != 0 {
		if len(k.attrs.pads) != 2*n {
			return nil, fmt.Errorf("pads %v has %d entries, want %d", k.attrs.pads, len(k.attrs.pads), 2*n)
		}
		for i := range n {
			b, e := k.attrs.pads[i], k.attrs.pads[i+n]
			if b < 0 || e < 0 || b > convMaxElements || e > convMaxElements {
				return nil, fmt.Errorf("pads %v must be non-negative", k.attrs.pads)
			}
			g.PadBegin[i], g.PadEnd[i] = int(b), int(e)
		}
	}
	for i := range n {
		g.In[i] = full[i] - g.PadBegin[i] - g.PadEnd[i]
		if g.In[i] < 0 {
			return nil, fmt.Errorf("pads %v leave a negative output size in spatial dimension %d", k.attrs.pads, i)
		}
	}
	return g, nil
}

func (k *convTransposeKernel) compute(x, w, b *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	if w.Type != x.Type || (b != nil && b.Type != x.Type) {
		return nil, fmt.Errorf("inputs have different types: X %v, W %v", x.Type, w.Type)
	}
	s, err := checkConvShapes(&k.attrs, k.kernelShape, k.group, x.Shape, w.Shape, true)
	if err != nil {
		return nil, err
	}
	if s.geom, err = k.transposeGeometry(x.Shape[2:], w.Shape[2:]); err != nil {
		return nil, err
	}
	g := s.geom
	// Output [N, M, image...]: the geometry's "in".
	lead := s.n * s.m
	for _, d := range g.In {
		if d != 0 && lead > convMaxElements/d {
			return nil, fmt.Errorf("output of %d x %v elements is too large", s.n*s.m, g.In)
		}
		lead *= d
	}
	if b != nil && (len(b.Shape) != 1 || b.Shape[0] != s.m) {
		return nil, fmt.Errorf("bias B has shape %v; want [%d]", b.Shape, s.m)
	}
	mg := s.m / s.group
	if mg*g.KernelSize() > convMaxElements/max(1, g.OutSize()) {
		return nil, fmt.Errorf("column buffer for kernel %v over input %v is too large", g.Kernel, g.Out)
	}
	shape := append([]int{s.n, s.m}, g.In...)
	out := k.out.tensor(x.Type, shape)
	if err := k.buf.run("ConvTranspose", out, x, w, b, s, k.threads, convTransposeForward[float32], convTransposeForward[float64]); err != nil {
		return nil, err
	}
	return out, nil
}

// convTransposeForward computes y = convtranspose(x, w) + b; s.geom is the
// col2im geometry (image = output, columns = input positions).
func convTransposeForward[T floatElem](y, x, w, b []T, s *convShapes, sc *convScratch[T], threads int) {
	g := s.geom
	cg, mg := s.c/s.group, s.m/s.group
	ks, inSz, outSz := g.KernelSize(), g.OutSize(), g.InSize() // input positions, output image size
	rows := mg * ks
	col := sc.get(0, rows*inSz)
	for ni := range s.n {
		for gi := range s.group {
			xg := x[(ni*s.c+gi*cg)*inSz : (ni*s.c+(gi+1)*cg)*inSz]
			yg := y[(ni*s.m+gi*mg)*outSz : (ni*s.m+(gi+1)*mg)*outSz]
			wg := w[gi*cg*rows : (gi+1)*cg*rows]
			if b != nil {
				for r := range mg {
					row := yg[r*outSz : (r+1)*outSz]
					v := b[gi*mg+r]
					for j := range row {
						row[j] = v
					}
				}
			} else {
				clear(yg)
			}
			gemm.Multiply(rows, inSz, cg, 1, gemm.NewMatrix(wg, rows, true), gemm.NewMatrix(xg, inSz, false), 0, col, inSz, threads)
			conv.Col2im(yg, col, mg, g, threads)
		}
	}
}

// VisitConvTranspose compiles ConvTranspose (versions 1, 11, 22 share
// their semantics).
func (b *builder) VisitConvTranspose(op *ops.ConvTranspose) error {
	if err := checkAutoPad(op.AutoPad); err != nil {
		return err
	}
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	w, err := b.input(op.In.W)
	if err != nil {
		return err
	}
	bias, err := b.optionalInput(op.In.B)
	if err != nil {
		return err
	}
	y := b.output(op.Out.Y)
	k := &convTransposeKernel{
		attrs:         convWindowAttrs{op: "ConvTranspose", autoPad: op.AutoPad, strides: op.Strides, dilations: op.Dilations, pads: op.Pads},
		kernelShape:   slices.Clone(op.KernelShape),
		outputShape:   slices.Clone(op.OutputShape),
		outputPadding: slices.Clone(op.OutputPadding),
		group:         op.Group,
		threads:       b.e.threads,
	}
	return b.emit(tensorsKernel([]valueRef{x, w, bias}, y, func(ts []*onnx.Tensor) (*onnx.Tensor, error) {
		return k.compute(ts[0], ts[1], ts[2])
	}))
}
