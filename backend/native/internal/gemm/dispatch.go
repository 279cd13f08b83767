package gemm

// MicroKernel is a micro-kernel and the block of C it computes.
type MicroKernel[T Float] struct {
	Mr, Nr int // rows and columns of the block
	// Run adds alpha times the product of a packed panel of A (Mr rows)
	// and one of B (Nr columns) over kc steps to the rows x cols valid
	// part of the block of C at c (leading dimension ldc), or stores it
	// there when overwrite is set. kc is at least 1: gemmTiled never
	// slices an empty K (gemmWithoutProduct handles k = 0).
	Run func(kc int, alpha T, pa, pb, c []T, ldc, rows, cols int, overwrite bool)
	// RunInPlace, when not nil, is Run with B read where it is stored
	// instead of from a packed panel: the first cols (at most Nr)
	// columns at b of a row-major B whose rows are ldb apart, the
	// columns past them not read. The blocked product then packs no B.
	RunInPlace func(kc int, alpha T, pa, b []T, ldb int, c []T, ldc, rows, cols int, overwrite bool)
}

// RowKernels are the vector kernels of the few-rows path (gemmFewRows).
type RowKernels[T Float] struct {
	Axpy func(a T, x, y []T) // y += a·x over len(x)
	Dot  func(x, y []T) T    // Σ x·y over len(x)
}

// Impl is one implementation of the product's inner loops. Tile sizes are
// multiples of every kernel's Mr (mcTile) and Nr (ncTile).
type Impl struct {
	Name    string
	Float32 MicroKernel[float32]
	Float64 MicroKernel[float64]
	// FewRows32 are the float32 kernels of products of at most
	// FewRowsMax rows; with a nil Axpy such products go through the
	// blocked path (as they do for float64).
	FewRows32 RowKernels[float32]
	// TransposePanel8, when not nil, fills lanes [0, 8) of the rows
	// [0, kc) of a float32 panel width floats wide from 8 contiguous
	// columns of src (ld apart) and returns how many rows it filled (a
	// multiple of 8); packing a transposed B does the rest element by
	// element.
	TransposePanel8 func(panel, src []float32, ld, kc, width int) int
}

// portable is the implementation in plain Go, which runs everywhere and
// is the reference the others are tested against: a 4x4 micro-kernel
// whose 16 sums the compiler keeps in registers.
var portable = Impl{
	Name:    "portable",
	Float32: MicroKernel[float32]{Mr: 4, Nr: 4, Run: microKernel4x4[float32]},
	Float64: MicroKernel[float64]{Mr: 4, Nr: 4, Run: microKernel4x4[float64]},
}

// impls is the dispatch table: the implementations this machine runs,
// best first, the portable one last. It is filled once, at init, from the
// CPU's features (archImpls, per architecture); a new instruction set is
// one more entry there.
var impls = append(archImpls(), portable)

// active is the implementation Multiply and the other exported functions
// run.
var active = &impls[0]

// Implementations returns every implementation this machine can run, the
// one in use first and the portable one last.
func Implementations() []Impl { return append([]Impl(nil), impls...) }

// kernelFor returns im's micro-kernel for T. It goes through pointers,
// which an interface holds without copying them to the heap (it runs on
// every product).
func kernelFor[T Float](im *Impl) MicroKernel[T] {
	if k, ok := any(&im.Float32).(*MicroKernel[T]); ok {
		return *k
	}
	return *any(&im.Float64).(*MicroKernel[T])
}

// rowKernels returns im's few-rows kernels for T, if it has them.
func rowKernels[T Float](im *Impl) (*RowKernels[T], bool) {
	k, ok := any(&im.FewRows32).(*RowKernels[T])
	if !ok || k.Axpy == nil {
		return nil, false
	}
	return k, true
}
