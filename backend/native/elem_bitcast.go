package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// https://onnx.ai/onnx/operators/onnx__BitCast.html

// bitCastWidth is the width in bits of one element of t as BitCast sees
// it, or 0 for a type it cannot reinterpret (string).
func bitCastWidth(t onnx.DataType) int {
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
	w := bitCastWidth(x.Type)
	if w == 0 {
		return nil, network.Unsupportedf("BitCast of %v tensors", x.Type)
	}
	if err := x.Check(); err != nil {
		return nil, fmt.Errorf("BitCast: %w", err)
	}
	if tw := bitCastWidth(k.to); tw != w {
		return nil, fmt.Errorf("BitCast: %v is %d bits wide but %v is %d; the widths must be equal", x.Type, w, k.to, tw)
	}
	out := k.out.tensor(k.to, x.Shape)
	if w == 128 {
		onnx.CopySlice(out.Data, x.Data)
		return out, nil
	}
	n := x.Len()
	bits := scratchOf(&k.bits, n)
	if err := bitCastLoad(bits, x); err != nil {
		return nil, err
	}
	bitCastStore(out, bits)
	return out, nil
}

// bitCastLoad writes each element's bit pattern into bits.
func bitCastLoad(bits []uint64, x *onnx.Tensor) error {
	mask := uint64(1)<<bitCastWidth(x.Type) - 1 // all ones for 64 bits
	switch d := x.Data.(type) {
	case []int8:
		bitCastLoadInts(bits, d, mask)
	case []uint8:
		bitCastLoadInts(bits, d, mask)
	case []bool:
		for i, v := range d {
			bits[i] = 0
			if v {
				bits[i] = 1
			}
		}
	case []onnx.F4E2M1:
		bitCastLoadInts(bits, d, mask)
	case []onnx.F8E4M3FN:
		bitCastLoadInts(bits, d, mask)
	case []onnx.F8E4M3FNUZ:
		bitCastLoadInts(bits, d, mask)
	case []onnx.F8E5M2:
		bitCastLoadInts(bits, d, mask)
	case []onnx.F8E5M2FNUZ:
		bitCastLoadInts(bits, d, mask)
	case []onnx.F8E8M0:
		bitCastLoadInts(bits, d, mask)
	case []int16:
		bitCastLoadInts(bits, d, mask)
	case []uint16:
		bitCastLoadInts(bits, d, mask)
	case []onnx.F16:
		bitCastLoadInts(bits, d, mask)
	case []onnx.BF16:
		bitCastLoadInts(bits, d, mask)
	case []int32:
		bitCastLoadInts(bits, d, mask)
	case []uint32:
		bitCastLoadInts(bits, d, mask)
	case []float32:
		for i, v := range d {
			bits[i] = uint64(math.Float32bits(v))
		}
	case []int64:
		bitCastLoadInts(bits, d, mask)
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

// bitCastInt is the integer types (and the float types stored as their
// bit patterns) BitCast moves as integers.
type bitCastInt interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// bitCastLoadInts copies integer bit patterns, masked to the type's width
// (which drops a signed value's sign extension).
func bitCastLoadInts[T bitCastInt](bits []uint64, src []T, mask uint64) {
	for i, v := range src {
		bits[i] = uint64(v) & mask
	}
}

// bitCastStore reads bits as elements of out's type. Sub-byte signed
// integers are sign-extended from their width; a bool is true when its
// byte is non-zero.
func bitCastStore(out *onnx.Tensor, bits []uint64) {
	switch d := out.Data.(type) {
	case []int8:
		shift := 8 - bitCastWidth(out.Type)
		for i, b := range bits {
			d[i] = int8(uint8(b)<<shift) >> shift
		}
	case []uint8:
		bitCastStoreInts(d, bits)
	case []bool:
		for i, b := range bits {
			d[i] = b != 0
		}
	case []onnx.F4E2M1:
		bitCastStoreInts(d, bits)
	case []onnx.F8E4M3FN:
		bitCastStoreInts(d, bits)
	case []onnx.F8E4M3FNUZ:
		bitCastStoreInts(d, bits)
	case []onnx.F8E5M2:
		bitCastStoreInts(d, bits)
	case []onnx.F8E5M2FNUZ:
		bitCastStoreInts(d, bits)
	case []onnx.F8E8M0:
		bitCastStoreInts(d, bits)
	case []int16:
		bitCastStoreInts(d, bits)
	case []uint16:
		bitCastStoreInts(d, bits)
	case []onnx.F16:
		bitCastStoreInts(d, bits)
	case []onnx.BF16:
		bitCastStoreInts(d, bits)
	case []int32:
		bitCastStoreInts(d, bits)
	case []uint32:
		bitCastStoreInts(d, bits)
	case []float32:
		for i, b := range bits {
			d[i] = math.Float32frombits(uint32(b))
		}
	case []int64:
		bitCastStoreInts(d, bits)
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

// bitCastStoreInts sets each element of dst to the low bits of its
// pattern.
func bitCastStoreInts[T bitCastInt](dst []T, bits []uint64) {
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
	if bitCastWidth(to) == 0 || onnx.MakeSlice(to, 0) == nil {
		return network.Unsupportedf("BitCast to %v", to)
	}
	y := b.output(op.Out.Output)
	k := &bitCastKernel{to: to}
	return b.emit(unaryTensorKernel(x, y, k.compute))
}
