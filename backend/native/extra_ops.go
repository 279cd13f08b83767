package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Small operators of recent opsets that belong to no family: CumProd (26),
// BitCast (26) and SwiGLU (28).

// VisitCumProd compiles CumProd: CumSum's kernel with products
// (reduce_cumsum.go).
func (b *builder) VisitCumProd(op *ops.CumProd) error {
	return b.cumScan(op.In.X, op.In.Axis, op.Out.Y, op.Exclusive, op.Reverse, true)
}

// ---- SwiGLU ----

// swigluKernel computes SwiGLU: Y = A * sigmoid(alpha*A) * B for A and B of
// the same shape (no broadcasting). Float16 and bfloat16 are computed in
// float32 and rounded once.
type swigluKernel struct {
	alpha   float64
	threads int
	out     outputBuffer
	wa, wb  float32Scratch
	wy      float32Scratch
}

func (k *swigluKernel) compute(a, b *onnx.Tensor) (*onnx.Tensor, error) {
	if a.Type != b.Type {
		return nil, fmt.Errorf("SwiGLU: A is %v but B is %v", a.Type, b.Type)
	}
	if !slices.Equal(a.Shape, b.Shape) {
		return nil, fmt.Errorf("SwiGLU: A has shape %v but B has shape %v; they must be equal", a.Shape, b.Shape)
	}
	out := k.out.tensor(a.Type, a.Shape)
	switch ad := a.Data.(type) {
	case []float32:
		extraSwiGLU(out.Data.([]float32), ad, b.Data.([]float32), k.alpha, k.threads)
	case []float64:
		extraSwiGLU(out.Data.([]float64), ad, b.Data.([]float64), k.alpha, k.threads)
	case []onnx.F16, []onnx.BF16:
		n := a.Len()
		wa, _ := widenToFloat32(k.wa.get(n), a.Data)
		wb, _ := widenToFloat32(k.wb.get(n), b.Data)
		wy := k.wy.get(n)
		extraSwiGLU(wy, wa, wb, k.alpha, k.threads)
		if err := narrowFromFloat32(out.Data, wy); err != nil {
			return nil, err
		}
	default:
		return nil, network.Unsupportedf("SwiGLU of %v tensors", a.Type)
	}
	return out, nil
}

func extraSwiGLU[T floatElem](dst, a, b []T, alpha float64, threads int) {
	par.For(len(dst), threads, par.Grain/8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := float64(a[i])
			dst[i] = T(x * sigmoid(alpha*x) * float64(b[i]))
		}
	})
}

// VisitSwiGLU compiles SwiGLU (version 28).
func (b *builder) VisitSwiGLU(op *ops.SwiGLU) error {
	a, err := b.input(op.In.A)
	if err != nil {
		return err
	}
	bb, err := b.input(op.In.B)
	if err != nil {
		return err
	}
	y := b.output(op.Out.Y)
	k := &swigluKernel{alpha: float64(op.Alpha), threads: b.e.threads}
	return b.emit(func(slots []onnx.Value) error {
		at, err := a.tensor(slots)
		if err != nil {
			return err
		}
		bt, err := bb.tensor(slots)
		if err != nil {
			return err
		}
		res, err := k.compute(at, bt)
		if err != nil {
			return err
		}
		y.set(slots, res)
		return nil
	})
}

// ---- BitCast ----

// extraBitWidth is the width in bits of one element of t as BitCast sees
// it, or 0 for a type it cannot reinterpret (string).
func extraBitWidth(t onnx.DataType) int {
	switch t {
	case onnx.Int2, onnx.Uint2:
		return 2
	case onnx.Int4, onnx.Uint4, onnx.Float4E2M1:
		return 4
	case onnx.Int8, onnx.Uint8, onnx.Bool, onnx.Float8E4M3FN, onnx.Float8E4M3FNUZ,
		onnx.Float8E5M2, onnx.Float8E5M2FNUZ, onnx.Float8E8M0:
		return 8
	case onnx.Int16, onnx.Uint16, onnx.Float16, onnx.BFloat16:
		return 16
	case onnx.Int32, onnx.Uint32, onnx.Float:
		return 32
	case onnx.Int64, onnx.Uint64, onnx.Double, onnx.Complex64:
		return 64
	case onnx.Complex128:
		return 128
	}
	return 0
}

// bitCastKernel computes BitCast: every element's bit pattern (little
// endian for complex64, whose real part is the low half) read as type to.
// Types up to 64 bits go through a uint64 per element; complex128 can only
// be cast to itself.
type bitCastKernel struct {
	to   onnx.DataType
	out  outputBuffer
	bits []uint64
}

func (k *bitCastKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	w := extraBitWidth(x.Type)
	if w == 0 {
		return nil, network.Unsupportedf("BitCast of %v tensors", x.Type)
	}
	if err := x.Check(); err != nil {
		return nil, fmt.Errorf("BitCast: %w", err)
	}
	if tw := extraBitWidth(k.to); tw != w {
		return nil, fmt.Errorf("BitCast: %v is %d bits wide but %v is %d; the widths must be equal", x.Type, w, k.to, tw)
	}
	out := k.out.tensor(k.to, x.Shape)
	if w == 128 {
		onnx.CopySlice(out.Data, x.Data)
		return out, nil
	}
	n := x.Len()
	if cap(k.bits) < n {
		k.bits = make([]uint64, n)
	}
	bits := k.bits[:n]
	if err := extraToBits(bits, x); err != nil {
		return nil, err
	}
	extraFromBits(out, bits)
	return out, nil
}

// extraToBits writes each element's bit pattern into bits.
func extraToBits(bits []uint64, x *onnx.Tensor) error {
	switch d := x.Data.(type) {
	case []int8:
		mask := uint64(0xFF)
		switch x.Type {
		case onnx.Int4:
			mask = 0xF
		case onnx.Int2:
			mask = 0x3
		}
		for i, v := range d {
			bits[i] = uint64(uint8(v)) & mask
		}
	case []uint8:
		mask := uint64(0xFF)
		switch x.Type {
		case onnx.Uint4:
			mask = 0xF
		case onnx.Uint2:
			mask = 0x3
		}
		for i, v := range d {
			bits[i] = uint64(v) & mask
		}
	case []bool:
		for i, v := range d {
			bits[i] = 0
			if v {
				bits[i] = 1
			}
		}
	case []onnx.F4E2M1:
		extraBitsOf(bits, d, 0xF)
	case []onnx.F8E4M3FN:
		extraBitsOf(bits, d, 0xFF)
	case []onnx.F8E4M3FNUZ:
		extraBitsOf(bits, d, 0xFF)
	case []onnx.F8E5M2:
		extraBitsOf(bits, d, 0xFF)
	case []onnx.F8E5M2FNUZ:
		extraBitsOf(bits, d, 0xFF)
	case []onnx.F8E8M0:
		extraBitsOf(bits, d, 0xFF)
	case []int16:
		for i, v := range d {
			bits[i] = uint64(uint16(v))
		}
	case []uint16:
		extraBitsOf(bits, d, 0xFFFF)
	case []onnx.F16:
		extraBitsOf(bits, d, 0xFFFF)
	case []onnx.BF16:
		extraBitsOf(bits, d, 0xFFFF)
	case []int32:
		for i, v := range d {
			bits[i] = uint64(uint32(v))
		}
	case []uint32:
		extraBitsOf(bits, d, math.MaxUint32)
	case []float32:
		for i, v := range d {
			bits[i] = uint64(math.Float32bits(v))
		}
	case []int64:
		for i, v := range d {
			bits[i] = uint64(v)
		}
	case []uint64:
		copy(bits, d)
	case []float64:
		for i, v := range d {
			bits[i] = math.Float64bits(v)
		}
	case []complex64:
		for i, v := range d {
			bits[i] = uint64(math.Float32bits(real(v))) | uint64(math.Float32bits(imag(v)))<<32
		}
	default:
		return network.Unsupportedf("BitCast of %v tensors", x.Type)
	}
	return nil
}

// extraBitsOf copies unsigned bit patterns, masked to their width.
func extraBitsOf[T ~uint8 | ~uint16 | ~uint32](bits []uint64, src []T, mask uint64) {
	for i, v := range src {
		bits[i] = uint64(v) & mask
	}
}

// extraFromBits reads bits as elements of out's type. Sub-byte signed
// integers are sign-extended from their width; a bool is true when its
// byte is non-zero.
func extraFromBits(out *onnx.Tensor, bits []uint64) {
	switch d := out.Data.(type) {
	case []int8:
		shift := 0
		switch out.Type {
		case onnx.Int4:
			shift = 4
		case onnx.Int2:
			shift = 6
		}
		for i, b := range bits {
			d[i] = int8(uint8(b)<<shift) >> shift
		}
	case []uint8:
		for i, b := range bits {
			d[i] = uint8(b)
		}
	case []bool:
		for i, b := range bits {
			d[i] = b != 0
		}
	case []onnx.F4E2M1:
		extraSetBits(d, bits)
	case []onnx.F8E4M3FN:
		extraSetBits(d, bits)
	case []onnx.F8E4M3FNUZ:
		extraSetBits(d, bits)
	case []onnx.F8E5M2:
		extraSetBits(d, bits)
	case []onnx.F8E5M2FNUZ:
		extraSetBits(d, bits)
	case []onnx.F8E8M0:
		extraSetBits(d, bits)
	case []int16:
		for i, b := range bits {
			d[i] = int16(uint16(b))
		}
	case []uint16:
		extraSetBits(d, bits)
	case []onnx.F16:
		extraSetBits(d, bits)
	case []onnx.BF16:
		extraSetBits(d, bits)
	case []int32:
		for i, b := range bits {
			d[i] = int32(uint32(b))
		}
	case []uint32:
		extraSetBits(d, bits)
	case []float32:
		for i, b := range bits {
			d[i] = math.Float32frombits(uint32(b))
		}
	case []int64:
		for i, b := range bits {
			d[i] = int64(b)
		}
	case []uint64:
		copy(d, bits)
	case []float64:
		for i, b := range bits {
			d[i] = math.Float64frombits(b)
		}
	case []complex64:
		for i, b := range bits {
			d[i] = complex(math.Float32frombits(uint32(b)), math.Float32frombits(uint32(b>>32)))
		}
	}
}

func extraSetBits[T ~uint8 | ~uint16 | ~uint32](dst []T, bits []uint64) {
	for i, b := range bits {
		dst[i] = T(b)
	}
}

// VisitBitCast compiles BitCast (version 26).
func (b *builder) VisitBitCast(op *ops.BitCast) error {
	x, err := b.input(op.In.Input)
	if err != nil {
		return err
	}
	to := onnx.DataType(op.To)
	if op.To != int64(to) || !to.Valid() || to == onnx.String {
		return fmt.Errorf("BitCast: 'to' %d is not a non-string ONNX data type", op.To)
	}
	if extraBitWidth(to) == 0 || onnx.MakeSlice(to, 0) == nil {
		return network.Unsupportedf("BitCast to %v", to)
	}
	y := b.output(op.Out.Output)
	k := &bitCastKernel{to: to}
	return b.emit(unaryTensorKernel(x, y, k.compute))
}
