package vec

// Impl is one implementation of the vector kernels: a name (for tests and
// benchmarks) and one function per kernel, with the semantics of the
// package-level function of the same name.
type Impl struct {
	Name       string
	Clip       func(y, x []float32, lo, hi float32)
	ScaleShift func(y, x []float32, a, b float32)
	BiasClip   func(y, x []float32, b, lo, hi float32)
	ReluGrad   func(dx, dy, x []float32)
	Axpy       func(a float32, x, y []float32)
	Dot        func(x, y []float32) float32

	// The element-wise transcendental and piecewise activations
	// (activation.go).
	Exp         func(y, x []float32)
	Sigmoid     func(y, x []float32)
	Tanh        func(y, x []float32)
	Erf         func(y, x []float32)
	GeluErf     func(y, x []float32)
	GeluTanh    func(y, x []float32)
	HardSwish   func(y, x []float32)
	HardSigmoid func(y, x []float32, alpha, beta float32)

	// The row reductions and maps of Softmax and LayerNormalization
	// (rows.go).
	Max                  func(x []float32) float32
	Sum                  func(x []float32) float32
	SumSquaredDeviations func(x []float32, m float32) float32
	ExpSum               func(y, x []float32, m float32) float32
	NormAffine           func(y, x, scale, bias []float32, mean, inv float32)

	// The passes of a normalisation's backward (normgrad.go).
	DotCentered func(dy, x []float32, m float32) (sum, dot float32)
	Affine2     func(y, a, b []float32, p, q, r float32)
}

// portable is the implementation in plain Go, which runs everywhere and
// is the reference the others are tested against.
var portable = Impl{
	Name:       "portable",
	Clip:       clipPortable,
	ScaleShift: scaleShiftPortable,
	BiasClip:   biasClipPortable,
	ReluGrad:   reluGradPortable,
	Axpy:       axpyPortable,
	Dot:        dotPortable,

	Exp:         expPortable,
	Sigmoid:     sigmoidPortable,
	Tanh:        tanhPortable,
	Erf:         erfPortable,
	GeluErf:     geluErfPortable,
	GeluTanh:    geluTanhPortable,
	HardSwish:   hardSwishPortable,
	HardSigmoid: hardSigmoidPortable,

	Max:                  maxPortable,
	Sum:                  sumPortable,
	SumSquaredDeviations: sumSquaredDeviationsPortable,
	ExpSum:               expSumPortable,
	NormAffine:           normAffinePortable,

	DotCentered: dotCenteredPortable,
	Affine2:     affine2Portable,
}

// impls is the dispatch table: the implementations this machine runs,
// best first, the portable one last. It is filled once, at init, from the
// CPU's features (archImpls, per architecture); a new instruction set is
// one more entry there.
var impls = append(archImpls(), portable)

// active is the implementation the package-level kernels run.
var active = impls[0]

// Implementations returns every implementation this machine can run, the
// one in use first and the portable one last.
func Implementations() []Impl { return append([]Impl(nil), impls...) }
