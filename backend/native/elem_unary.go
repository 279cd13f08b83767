package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/backend/native/internal/vec"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Elementwise functions of one tensor: the unary math operators (Abs ...
// Erf), the parameterised activations (LeakyRelu ... Swish), IsNaN, IsInf,
// Not and BitwiseNot. A float function is evaluated in float64 and rounded
// to the tensor's type once (float16 and bfloat16 through float32), but
// for float32 tensors of the functions with a vector kernel (Exp, Erf,
// Gelu, HardSigmoid, HardSwish; unaryKernel.f32).

// unaryNative names the functions computed in the element type itself, so
// that integers keep every bit (float64 holds only 53).
type unaryNative int

const (
	nativeNone unaryNative = iota
	nativeAbs
	nativeNeg
	nativeSign
)

// unaryKernel applies one elementwise function.
type unaryKernel struct {
	name string
	f    func(float64) float64 // the function on real numbers
	// f32, when set, is the vector kernel (internal/vec) float32 tensors
	// run instead of f: within a few ulp of f (its doc comment states the
	// bound), without a call per element.
	f32     func(y, x []float32)
	native  unaryNative // computed natively on every numeric type instead
	ints    bool        // integer inputs allowed (through f, when native is none)
	threads int
	out     outputBuffer
	wide    elemWide
	vecTask vectorTask // vectorRun's parallel work
}

func (k *unaryKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	out := k.out.tensor(x.Type, x.Shape)
	switch xd := x.Data.(type) {
	case []float32:
		if k.f32 != nil {
			vectorRun(k.threads, k.f32, out.Data.([]float32), xd, &k.vecTask)
			break
		}
		unaryRun(k, out.Data.([]float32), xd)
	case []float64:
		unaryRun(k, out.Data.([]float64), xd)
	case []onnx.F16, []onnx.BF16:
		w, wout := k.wide.widen([]*onnx.Tensor{x}, out.Len())
		unaryRun(k, wout, w[0])
		if err := narrowFromFloat32(out.Data, wout); err != nil {
			return nil, err
		}
	default:
		if !k.ints {
			return nil, elemUnsupported(k.name, x.Type)
		}
		switch xd := x.Data.(type) {
		case []int8:
			unaryRun(k, out.Data.([]int8), xd)
		case []int16:
			unaryRun(k, out.Data.([]int16), xd)
		case []int32:
			unaryRun(k, out.Data.([]int32), xd)
		case []int64:
			unaryRun(k, out.Data.([]int64), xd)
		case []uint8:
			unaryRun(k, out.Data.([]uint8), xd)
		case []uint16:
			unaryRun(k, out.Data.([]uint16), xd)
		case []uint32:
			unaryRun(k, out.Data.([]uint32), xd)
		case []uint64:
			unaryRun(k, out.Data.([]uint64), xd)
		default:
			return nil, elemUnsupported(k.name, x.Type)
		}
	}
	return out, nil
}

func unaryRun[T numeric](k *unaryKernel, dst, src []T) {
	switch k.native {
	case nativeAbs:
		elemMap(k.threads, dst, src, func(v T) T {
			if v < 0 {
				return -v
			}
			return v + 0 // -0 becomes +0
		})
	case nativeNeg:
		elemMap(k.threads, dst, src, func(v T) T { return -v })
	case nativeSign:
		elemMap(k.threads, dst, src, func(v T) T {
			switch {
			case v > 0:
				return 1
			case v < 0:
				var one T = 1
				return -one
			case v == 0:
				return 0
			}
			return v // NaN
		})
	default:
		f := k.f
		elemMap(k.threads, dst, src, func(v T) T { return T(f(float64(v))) })
	}
}

// vectorRun applies a vector kernel, large tensors split over goroutines
// (in chunks big enough to pay for one: the kernels take well under a
// nanosecond per element).
// task, held by the kernel, is handed to the workers on the parallel
// path, so that the call allocates nothing.
func vectorRun(threads int, f func(y, x []float32), dst, src []float32, task *vectorTask) {
	dst = dst[:len(src)]
	chunks := par.Chunks(len(src), threads, par.Grain/2)
	if chunks <= 1 {
		f(dst, src)
		return
	}
	*task = vectorTask{f: f, dst: dst, src: src, chunks: chunks}
	par.Spread(chunks, task)
	*task = vectorTask{} // hold no tensors between runs
}

// vectorTask is vectorRun's work: worker w runs f on chunk w of chunks.
type vectorTask struct {
	f        func(y, x []float32)
	dst, src []float32
	chunks   int
}

func (t *vectorTask) Work(w int) {
	n := len(t.src)
	lo, hi := w*n/t.chunks, (w+1)*n/t.chunks
	t.f(t.dst[lo:hi], t.src[lo:hi])
}

// unaryNode compiles a unary kernel reading in and writing out.
func (b *builder) unaryNode(k *unaryKernel, in, out string) error {
	x, err := b.input(in)
	if err != nil {
		return err
	}
	k.threads = b.e.threads
	return b.emit(unaryTensorKernel(x, b.output(out), k.compute))
}

// unaryFloat compiles a float-only function.
func (b *builder) unaryFloat(name string, f func(float64) float64, in, out string) error {
	return b.unaryNode(&unaryKernel{name: name, f: f}, in, out)
}

// unaryFloatVec compiles a float-only function with a float32 vector
// kernel.
func (b *builder) unaryFloatVec(name string, f func(float64) float64, f32 func(y, x []float32), in, out string) error {
	return b.unaryNode(&unaryKernel{name: name, f: f, f32: f32}, in, out)
}

// VisitAbs compiles Abs.
func (b *builder) VisitAbs(op *ops.Abs) error {
	return b.unaryNode(&unaryKernel{name: "Abs", native: nativeAbs, ints: true}, op.In.X, op.Out.Y)
}

// VisitNeg compiles Neg.
func (b *builder) VisitNeg(op *ops.Neg) error {
	return b.unaryNode(&unaryKernel{name: "Neg", native: nativeNeg, ints: true}, op.In.X, op.Out.Y)
}

// VisitSign compiles Sign.
func (b *builder) VisitSign(op *ops.Sign) error {
	return b.unaryNode(&unaryKernel{name: "Sign", native: nativeSign, ints: true}, op.In.Input, op.Out.Output)
}

// VisitExp compiles Exp.
func (b *builder) VisitExp(op *ops.Exp) error {
	return b.unaryFloatVec("Exp", math.Exp, vec.Exp, op.In.Input, op.Out.Output)
}

// VisitLog compiles Log.
func (b *builder) VisitLog(op *ops.Log) error {
	return b.unaryFloat("Log", math.Log, op.In.Input, op.Out.Output)
}

// VisitSqrt compiles Sqrt.
func (b *builder) VisitSqrt(op *ops.Sqrt) error {
	return b.unaryFloat("Sqrt", math.Sqrt, op.In.X, op.Out.Y)
}

// VisitReciprocal compiles Reciprocal.
func (b *builder) VisitReciprocal(op *ops.Reciprocal) error {
	return b.unaryFloat("Reciprocal", func(v float64) float64 { return 1 / v }, op.In.X, op.Out.Y)
}

// VisitFloor compiles Floor.
func (b *builder) VisitFloor(op *ops.Floor) error {
	return b.unaryFloat("Floor", math.Floor, op.In.X, op.Out.Y)
}

// VisitCeil compiles Ceil.
func (b *builder) VisitCeil(op *ops.Ceil) error {
	return b.unaryFloat("Ceil", math.Ceil, op.In.X, op.Out.Y)
}

// VisitRound compiles Round: to nearest, halves to even.
func (b *builder) VisitRound(op *ops.Round) error {
	return b.unaryFloat("Round", math.RoundToEven, op.In.X, op.Out.Y)
}

// VisitSin compiles Sin.
func (b *builder) VisitSin(op *ops.Sin) error {
	return b.unaryFloat("Sin", math.Sin, op.In.Input, op.Out.Output)
}

// VisitCos compiles Cos.
func (b *builder) VisitCos(op *ops.Cos) error {
	return b.unaryFloat("Cos", math.Cos, op.In.Input, op.Out.Output)
}

// VisitTan compiles Tan.
func (b *builder) VisitTan(op *ops.Tan) error {
	return b.unaryFloat("Tan", math.Tan, op.In.Input, op.Out.Output)
}

// VisitAsin compiles Asin.
func (b *builder) VisitAsin(op *ops.Asin) error {
	return b.unaryFloat("Asin", math.Asin, op.In.Input, op.Out.Output)
}

// VisitAcos compiles Acos.
func (b *builder) VisitAcos(op *ops.Acos) error {
	return b.unaryFloat("Acos", math.Acos, op.In.Input, op.Out.Output)
}

// VisitAtan compiles Atan.
func (b *builder) VisitAtan(op *ops.Atan) error {
	return b.unaryFloat("Atan", math.Atan, op.In.Input, op.Out.Output)
}

// VisitSinh compiles Sinh.
func (b *builder) VisitSinh(op *ops.Sinh) error {
	return b.unaryFloat("Sinh", math.Sinh, op.In.Input, op.Out.Output)
}

// VisitCosh compiles Cosh.
func (b *builder) VisitCosh(op *ops.Cosh) error {
	return b.unaryFloat("Cosh", math.Cosh, op.In.Input, op.Out.Output)
}

// VisitAsinh compiles Asinh.
func (b *builder) VisitAsinh(op *ops.Asinh) error {
	return b.unaryFloat("Asinh", math.Asinh, op.In.Input, op.Out.Output)
}

// VisitAcosh compiles Acosh.
func (b *builder) VisitAcosh(op *ops.Acosh) error {
	return b.unaryFloat("Acosh", math.Acosh, op.In.Input, op.Out.Output)
}

// VisitAtanh compiles Atanh.
func (b *builder) VisitAtanh(op *ops.Atanh) error {
	return b.unaryFloat("Atanh", math.Atanh, op.In.Input, op.Out.Output)
}

// VisitErf compiles Erf (every numeric type; integers through float64).
func (b *builder) VisitErf(op *ops.Erf) error {
	return b.unaryNode(&unaryKernel{name: "Erf", f: math.Erf, f32: vec.Erf, ints: true}, op.In.Input, op.Out.Output)
}

// ---- activations with parameters ----

// softplus is log(1 + e^x) without overflow.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// VisitLeakyRelu compiles LeakyRelu.
func (b *builder) VisitLeakyRelu(op *ops.LeakyRelu) error {
	a := float64(op.Alpha)
	return b.unaryFloat("LeakyRelu", func(x float64) float64 {
		if x < 0 {
			return a * x
		}
		return x
	}, op.In.X, op.Out.Y)
}

// VisitElu compiles Elu.
func (b *builder) VisitElu(op *ops.Elu) error {
	a := float64(op.Alpha)
	return b.unaryFloat("Elu", func(x float64) float64 {
		if x < 0 {
			return a * math.Expm1(x)
		}
		return x
	}, op.In.X, op.Out.Y)
}

// VisitSelu compiles Selu.
func (b *builder) VisitSelu(op *ops.Selu) error {
	a, g := float64(op.Alpha), float64(op.Gamma)
	return b.unaryFloat("Selu", func(x float64) float64 {
		if x <= 0 {
			return g * a * math.Expm1(x)
		}
		return g * x
	}, op.In.X, op.Out.Y)
}

// VisitCelu compiles Celu: max(0, x) + min(0, alpha*(exp(x/alpha) - 1)).
func (b *builder) VisitCelu(op *ops.Celu) error {
	a := float64(op.Alpha)
	if a == 0 && !b.probing {
		return fmt.Errorf("Celu alpha must not be 0")
	}
	return b.unaryFloat("Celu", func(x float64) float64 {
		if x > 0 {
			return x
		}
		return a * math.Expm1(x/a)
	}, op.In.X, op.Out.Y)
}

// VisitThresholdedRelu compiles ThresholdedRelu.
func (b *builder) VisitThresholdedRelu(op *ops.ThresholdedRelu) error {
	a := float64(op.Alpha)
	return b.unaryFloat("ThresholdedRelu", func(x float64) float64 {
		if x > a {
			return x
		}
		return 0
	}, op.In.X, op.Out.Y)
}

// VisitHardSigmoid compiles HardSigmoid.
func (b *builder) VisitHardSigmoid(op *ops.HardSigmoid) error {
	a, be := float64(op.Alpha), float64(op.Beta)
	return b.unaryFloatVec("HardSigmoid", func(x float64) float64 {
		return max(0, min(1, a*x+be))
	}, func(y, x []float32) { vec.HardSigmoid(y, x, op.Alpha, op.Beta) }, op.In.X, op.Out.Y)
}

// VisitHardSwish compiles HardSwish: x * max(0, min(1, x/6 + 1/2)).
func (b *builder) VisitHardSwish(op *ops.HardSwish) error {
	return b.unaryFloatVec("HardSwish", func(x float64) float64 {
		return x * max(0, min(1, x/6+0.5))
	}, vec.HardSwish, op.In.X, op.Out.Y)
}

// VisitSoftplus compiles Softplus.
func (b *builder) VisitSoftplus(op *ops.Softplus) error {
	return b.unaryFloat("Softplus", softplus, op.In.X, op.Out.Y)
}

// VisitSoftsign compiles Softsign.
func (b *builder) VisitSoftsign(op *ops.Softsign) error {
	return b.unaryFloat("Softsign", func(x float64) float64 { return x / (1 + math.Abs(x)) }, op.In.Input, op.Out.Output)
}

// VisitGelu compiles Gelu with the exact (erf) or tanh approximation.
func (b *builder) VisitGelu(op *ops.Gelu) error {
	switch op.Approximate {
	case "none":
		return b.unaryFloatVec("Gelu", func(x float64) float64 {
			return 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
		}, vec.GeluErf, op.In.X, op.Out.Y)
	case "tanh":
		c := math.Sqrt(2 / math.Pi)
		return b.unaryFloatVec("Gelu", func(x float64) float64 {
			return 0.5 * x * (1 + math.Tanh(c*(x+0.044715*x*x*x)))
		}, vec.GeluTanh, op.In.X, op.Out.Y)
	}
	return fmt.Errorf("Gelu approximate must be none or tanh, got %q", op.Approximate)
}

// VisitMish compiles Mish: x * tanh(softplus(x)).
func (b *builder) VisitMish(op *ops.Mish) error {
	return b.unaryFloat("Mish", func(x float64) float64 { return x * math.Tanh(softplus(x)) }, op.In.X, op.Out.Y)
}

// VisitShrink compiles Shrink (every numeric type).
func (b *builder) VisitShrink(op *ops.Shrink) error {
	l, bias := float64(op.Lambd), float64(op.Bias)
	return b.unaryNode(&unaryKernel{name: "Shrink", ints: true, f: func(x float64) float64 {
		switch {
		case x < -l:
			return x + bias
		case x > l:
			return x - bias
		}
		return 0
	}}, op.In.Input, op.Out.Output)
}

// VisitSwish compiles Swish: x * sigmoid(alpha * x).
func (b *builder) VisitSwish(op *ops.Swish) error {
	a := float64(op.Alpha)
	return b.unaryFloat("Swish", func(x float64) float64 { return x * sigmoid(a*x) }, op.In.X, op.Out.Y)
}

// ---- predicates and bit inversions ----

// predKernel maps a float tensor to booleans.
type predKernel struct {
	name    string
	f       func(float64) bool
	threads int
	out     outputBuffer
	wide    elemWide
}

func (k *predKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	out := k.out.tensor(onnx.Bool, x.Shape)
	dst := out.Data.([]bool)
	f := k.f
	switch xd := x.Data.(type) {
	case []float32:
		elemMap(k.threads, dst, xd, func(v float32) bool { return f(float64(v)) })
	case []float64:
		elemMap(k.threads, dst, xd, f)
	case []onnx.F16, []onnx.BF16, []onnx.F8E4M3FN, []onnx.F8E4M3FNUZ, []onnx.F8E5M2, []onnx.F8E5M2FNUZ:
		w, _ := widenToFloat32(k.wide.out.get(x.Len()), xd) // every type of this case widens
		elemMap(k.threads, dst, w, func(v float32) bool { return f(float64(v)) })
	default:
		return nil, elemUnsupported(k.name, x.Type)
	}
	return out, nil
}

// VisitIsNaN compiles IsNaN.
func (b *builder) VisitIsNaN(op *ops.IsNaN) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &predKernel{name: "IsNaN", f: math.IsNaN, threads: b.e.threads}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// VisitIsInf compiles IsInf.
func (b *builder) VisitIsInf(op *ops.IsInf) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	neg, pos := op.DetectNegative != 0, op.DetectPositive != 0
	k := &predKernel{name: "IsInf", threads: b.e.threads, f: func(v float64) bool {
		return neg && math.IsInf(v, -1) || pos && math.IsInf(v, 1)
	}}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}

// VisitNot compiles Not.
func (b *builder) VisitNot(op *ops.Not) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	threads := b.e.threads
	var buf outputBuffer
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), func(t *onnx.Tensor) (*onnx.Tensor, error) {
		d, ok := t.Data.([]bool)
		if !ok {
			return nil, fmt.Errorf("Not needs a boolean tensor, got %v", t.Type)
		}
		out := buf.tensor(onnx.Bool, t.Shape)
		elemMap(threads, out.Data.([]bool), d, func(v bool) bool { return !v })
		return out, nil
	}))
}

// bitNotKernel inverts the bits of integers.
type bitNotKernel struct {
	threads int
	out     outputBuffer
}

func (k *bitNotKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	out := k.out.tensor(x.Type, x.Shape)
	switch xd := x.Data.(type) {
	case []int8:
		bitNot(k.threads, out.Data.([]int8), xd)
	case []int16:
		bitNot(k.threads, out.Data.([]int16), xd)
	case []int32:
		bitNot(k.threads, out.Data.([]int32), xd)
	case []int64:
		bitNot(k.threads, out.Data.([]int64), xd)
	case []uint8:
		bitNot(k.threads, out.Data.([]uint8), xd)
	case []uint16:
		bitNot(k.threads, out.Data.([]uint16), xd)
	case []uint32:
		bitNot(k.threads, out.Data.([]uint32), xd)
	case []uint64:
		bitNot(k.threads, out.Data.([]uint64), xd)
	default:
		return nil, elemUnsupported("BitwiseNot", x.Type)
	}
	return out, nil
}

func bitNot[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](threads int, dst, src []T) {
	elemMap(threads, dst, src, func(v T) T { return ^v })
}

// VisitBitwiseNot compiles BitwiseNot.
func (b *builder) VisitBitwiseNot(op *ops.BitwiseNot) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	k := &bitNotKernel{threads: b.e.threads}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}
