package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// bitsOf returns v's bits, so that results compare bit for bit (NaN
// payloads and the sign of zeros included).
func bitsOf[T Float](v T) uint64 {
	if f, ok := any(v).(float32); ok {
		return uint64(math.Float32bits(f))
	}
	return math.Float64bits(any(v).(float64))
}

// packedCase is one product of the packed-operand tests.
type packedCase struct {
	m, n, k        int
	transA, transB bool
	beta           float64
	threads        int
	epilogue       bool
}

func (pc packedCase) String() string {
	return fmt.Sprintf("%dx%dx%d/tA=%v/tB=%v/beta=%v/threads=%d/epilogue=%v", pc.m, pc.n, pc.k, pc.transA, pc.transB, pc.beta, pc.threads, pc.epilogue)
}

// packedCases covers the edges of the packed layout: m and n not
// multiples of any kernel's panel width, k below, at and past kcSlice
// (and not a multiple of it), products of several tiles in each
// dimension, beta 0 and 1, one and two threads (the last sizes are above
// ParallelMin, so two threads do run), with and without an epilogue.
func packedCases() []packedCase {
	sizes := [][3]int{{5, 7, 3}, {7, 17, 2}, {13, 70, 255}, {6, 64, 256}, {25, 33, 257}, {97, 129, 300}, {193, 530, 513}, {100, 600, 70}}
	var cases []packedCase
	i := 0
	for _, sz := range sizes {
		for _, beta := range []float64{0, 1} {
			for _, threads := range []int{1, 2} {
				i++
				cases = append(cases, packedCase{m: sz[0], n: sz[1], k: sz[2], transA: i%2 == 1, transB: i%3 == 1, beta: beta, threads: threads, epilogue: i%4 < 2})
			}
		}
	}
	return cases
}

// A product with a packed A, a packed B or both gives the unpacked
// product bit for bit, with every implementation this machine runs, for
// float32 and float64, with specials (NaN, ±Inf, −0) in A.
func TestPackedOperandsMatchUnpacked(t *testing.T) {
	for _, impl := range Implementations() {
		t.Run(impl.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(21, 22))
			for _, pc := range packedCases() {
				t.Run(pc.String(), func(t *testing.T) {
					checkPacked[float32](t, r, &impl, pc)
					checkPacked[float64](t, r, &impl, pc)
				})
			}
		})
	}
}

// randomOperand returns size random values in [-1, 1) with, when
// specials is set, a NaN, infinities and a negative zero among them.
func randomOperand[T Float](r *rand.Rand, size int, specials bool) []T {
	s := make([]T, size)
	for i := range s {
		s[i] = T(r.Float64()*2 - 1)
	}
	if specials && size >= 8 {
		s[r.IntN(size)] = T(math.NaN())
		s[r.IntN(size)] = T(math.Inf(1))
		s[r.IntN(size)] = T(math.Inf(-1))
		s[r.IntN(size)] = T(math.Copysign(0, -1))
	}
	return s
}

func checkPacked[T Float](t *testing.T, r *rand.Rand, im *Impl, pc packedCase) {
	t.Helper()
	m, n, k := pc.m, pc.n, pc.k
	a, b, c := randomOperand[T](r, m*k, true), randomOperand[T](r, k*n, false), randomOperand[T](r, m*n, false)
	lda, ldb := k, n
	if pc.transA {
		lda = m
	}
	if pc.transB {
		ldb = k
	}
	am, bm := NewMatrix(a, lda, pc.transA), NewMatrix(b, ldb, pc.transB)
	var ep *Epilogue[T]
	if pc.epilogue {
		ep = &Epilogue[T]{RowBias: randomOperand[T](r, m, false), ColBias: randomOperand[T](r, n, false), Clamp: true, Lo: -0.5, Hi: 2}
	}
	alpha, beta := T(0.75), T(pc.beta)
	want := append([]T(nil), c...)
	multiplyFused(im, m, n, k, alpha, am, bm, beta, want, n, pc.threads, ep)

	var pa, pb Packed[T]
	pa.packA(im, m, k, am)
	pb.packB(im, k, n, bm)
	// The source is then overwritten: the products below can only match
	// by reading the packed panels.
	a2, b2 := append([]T(nil), a...), append([]T(nil), b...)
	pa.packA(im, m, k, NewMatrix(a2, lda, pc.transA))
	pb.packB(im, k, n, NewMatrix(b2, ldb, pc.transB))
	clear(a2)
	clear(b2)
	for _, operands := range []struct {
		name string
		a, b Matrix[T]
	}{{"packed A", pa.Matrix(), bm}, {"packed B", am, pb.Matrix()}, {"both packed", pa.Matrix(), pb.Matrix()}} {
		got := append([]T(nil), c...)
		multiplyFused(im, m, n, k, alpha, operands.a, operands.b, beta, got, n, pc.threads, ep)
		compareBits(t, operands.name, got, want)
	}

	// The implicit-B product (a convolution's) with a packed A.
	writeB := func(dst []T, p0, j0, kc, nc int) {
		for p := range kc {
			for j := range nc {
				dst[p*nc+j] = bm.data[(p0+p)*bm.rowStep+(j0+j)*bm.colStep]
			}
		}
	}
	wantImplicit, got := append([]T(nil), c...), append([]T(nil), c...)
	multiplyImplicitBFused(im, m, n, k, alpha, am, writeB, beta, wantImplicit, n, pc.threads, ep)
	multiplyImplicitBFused(im, m, n, k, alpha, pa.Matrix(), writeB, beta, got, n, pc.threads, ep)
	compareBits(t, "implicit B, packed A", got, wantImplicit)
}

func compareBits[T Float](t *testing.T, what string, got, want []T) {
	t.Helper()
	for i := range want {
		if bitsOf(got[i]) != bitsOf(want[i]) {
			t.Fatalf("%T %s: element %d got %v, unpacked %v", got[0], what, i, got[i], want[i])
		}
	}
}

// The packed layout holds, for any tile whose first row (column) is a
// multiple of the panel width, what packPanelsA (PackPanelsB) writes for
// its block: whatever the tile sizes, the blocked product reads the same
// panels packed or not.
func TestPackedBlocksMatchPanelPacking(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, impl := range Implementations() {
		kern := kernelFor[float32](&impl)
		const m, n, k = 50, 83, 600
		a, b := randomOperand[float32](r, m*k, false), randomOperand[float32](r, k*n, false)
		var pa, pb Packed[float32]
		pa.packA(&impl, m, k, NewMatrix(a, k, false))
		pb.packB(&impl, k, n, NewMatrix(b, k, true))
		for p0 := 0; p0 < k; p0 += kcSlice {
			kc := min(kcSlice, k-p0)
			for i0 := 0; i0 < m; i0 += kern.Mr {
				for _, mc := range []int{kern.Mr, 2 * kern.Mr, m - i0} {
					mc = min(mc, m-i0)
					want := make([]float32, roundUp(mc, kern.Mr)*kc)
					packPanelsA(want, NewMatrix(a, k, false), i0, p0, mc, kc, kern.Mr)
					compareBits(t, fmt.Sprintf("%s A block (%d, %d) of %d rows", impl.Name, i0, p0, mc), pa.block(i0, p0, kc, mc), want)
				}
			}
			for j0 := 0; j0 < n; j0 += kern.Nr {
				nc := min(3*kern.Nr, n-j0)
				want := make([]float32, roundUp(nc, kern.Nr)*kc)
				packPanelsB(&impl, want, NewMatrix(b, k, true), p0, j0, kc, nc, kern.Nr)
				compareBits(t, fmt.Sprintf("%s B block (%d, %d) of %d columns", impl.Name, p0, j0, nc), pb.block(j0, p0, kc, nc), want)
			}
		}
	}
}

// A packed operand used where it does not fit (another product size, the
// other side, or a kernel of another shape) is read as given, not from
// its panels: the product is still right.
func TestPackedOperandThatDoesNotFitIsReadAsGiven(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	const m, n, k = 20, 30, 40
	a, b := randomOperand[float64](r, m*k, false), randomOperand[float64](r, k*n, false)
	want := make([]float64, m*n)
	multiply(&portable, m, n, k, 1, NewMatrix(a, k, false), NewMatrix(b, n, false), 0, want, n, 1)
	for _, impl := range Implementations() {
		var pa Packed[float64]
		pa.packA(&impl, m, k, NewMatrix(a, k, false))
		got := make([]float64, m*n)
		multiply(&portable, m, n, k, 1, pa.Matrix(), NewMatrix(b, n, false), 0, got, n, 1)
		compareBits(t, impl.Name+" A packed for it, run by the portable kernel", got, want)

		// The first 10 rows of A, with its packed form of 20 rows.
		got = make([]float64, m*n)
		multiply(&portable, m/2, n, k, 1, pa.Matrix(), NewMatrix(b, n, false), 0, got, n, 1)
		compareBits(t, impl.Name+" half of a packed A", got[:m/2*n], want[:m/2*n])
	}
	// A packed as the left operand, passed as the right one (a square
	// product would fit the sizes of either).
	var pa Packed[float64]
	sq := randomOperand[float64](r, k*k, false)
	pa.packA(&portable, k, k, NewMatrix(sq, k, false))
	want, got := make([]float64, k*k), make([]float64, k*k)
	multiply(&portable, k, k, k, 1, NewMatrix(sq, k, false), NewMatrix(sq, k, false), 0, want, k, 1)
	multiply(&portable, k, k, k, 1, NewMatrix(sq, k, false), pa.Matrix(), 0, got, k, 1)
	compareBits(t, "A packed, passed as B", got, want)
}

// Packing again into the same Packed reuses its buffer, and a warm
// product with packed operands allocates nothing, on one thread or two.
func TestPackedOperandAllocatesNothingWarm(t *testing.T) {
	const m, n, k = 192, 512, 64
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(i%7) - 3
	}
	for i := range b {
		b[i] = float32(i%5) * 0.5
	}
	var pa, pb Packed[float32]
	pa.PackA(m, k, NewMatrix(a, k, false))
	pb.PackB(k, n, NewMatrix(b, n, false))
	c := make([]float32, m*n)
	for _, threads := range []int{1, 2} {
		run := func() {
			pa.PackA(m, k, NewMatrix(a, k, false))
			Multiply(m, n, k, 1, pa.Matrix(), pb.Matrix(), 0, c, n, threads)
		}
		run()
		if allocs := testing.AllocsPerRun(10, run); allocs != 0 {
			t.Fatalf("threads=%d: packing again and multiplying allocates %v times per call, want 0", threads, allocs)
		}
	}
}
