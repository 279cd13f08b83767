package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// epilogueReference applies ep to C element by element, in the documented
// order, in plain Go: what the fused product must equal exactly (the
// product itself is the same computation fused or not).
func epilogueReference[T Float](ep *Epilogue[T], c []T, ldc, m, n int) {
	for i := range m {
		for j := range n {
			v := c[i*ldc+j]
			if ep.RowBias != nil {
				v += ep.RowBias[i]
			}
			if ep.ColBias != nil {
				v += ep.ColBias[j]
			}
			if ep.Residual != nil {
				v += ep.Residual[i*ldc+j]
			}
			if ep.Clamp {
				if v < ep.Lo {
					v = ep.Lo
				}
				if v > ep.Hi {
					v = ep.Hi
				}
			}
			c[i*ldc+j] = v
		}
		if ep.Rows != nil {
			ep.Rows(c[i*ldc : i*ldc+n])
		}
	}
}

// sameBits reports whether a and b are the same number: equal, or both NaN.
func sameBits[T Float](a, b T) bool { return a == b || a != a && b != b }

// epilogueCases are the epilogues the tests run: each step alone and all
// together, with NaNs in the residual (which the clamp must keep).
func epilogueCases[T Float](r *rand.Rand, m, n, ldc int) map[string]*Epilogue[T] {
	rowBias, colBias, residual := make([]T, m), make([]T, n), make([]T, m*ldc)
	for i := range rowBias {
		rowBias[i] = T(r.Float64()*2 - 1)
	}
	for i := range colBias {
		colBias[i] = T(r.Float64()*2 - 1)
	}
	for i := range residual {
		residual[i] = T(r.Float64()*2 - 1)
		if i%37 == 5 {
			residual[i] = T(math.NaN())
		}
	}
	double := func(row []T) {
		for j := range row {
			row[j] = 2*row[j] - 0.25
		}
	}
	return map[string]*Epilogue[T]{
		"row bias":                      {RowBias: rowBias},
		"column bias":                   {ColBias: colBias},
		"residual":                      {Residual: residual},
		"relu":                          {Clamp: true, Lo: 0, Hi: T(math.Inf(1))},
		"relu6 after bias and residual": {RowBias: rowBias, Residual: residual, Clamp: true, Lo: 0, Hi: 6},
		"relu6 after bias":              {RowBias: rowBias, Clamp: true, Lo: 0, Hi: 6},
		"clamp after bias, then rows":   {RowBias: rowBias, Clamp: true, Lo: -0.5, Hi: 0.5, Rows: double},
		"everything":                    {RowBias: rowBias, ColBias: colBias, Residual: residual, Clamp: true, Lo: -0.5, Hi: 0.5, Rows: double},
	}
}

// A fused product equals the plain product followed by the epilogue, for
// every implementation, on the blocked path (tiles of several sizes, one
// and two threads), the few-rows path, with beta 0 and 1, and for both
// element types.
func TestMultiplyFusedEqualsProductThenEpilogue(t *testing.T) {
	for _, impl := range Implementations() {
		t.Run(impl.Name+"/float32", func(t *testing.T) { checkMultiplyFused[float32](t, &impl) })
		t.Run(impl.Name+"/float64", func(t *testing.T) { checkMultiplyFused[float64](t, &impl) })
	}
}

func checkMultiplyFused[T Float](t *testing.T, im *Impl) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][3]int{{1, 7, 5}, {3, 40, 9}, {6, 16, 9}, {17, 9, 300}, {130, 300, 70}, {200, 513, 20}} {
		m, n, k := sz[0], sz[1], sz[2]
		ldc := n + 3 // a leading dimension past the row, which the epilogue must not touch
		a, b := make([]T, m*k), make([]T, k*n)
		for i := range a {
			a[i] = T(r.Float64()*2 - 1)
		}
		for i := range b {
			b[i] = T(r.Float64()*2 - 1)
		}
		start := make([]T, m*ldc)
		for i := range start {
			start[i] = T(r.Float64())
		}
		for name, ep := range epilogueCases[T](r, m, n, ldc) {
			for _, beta := range []T{0, 1} {
				for _, threads := range []int{1, 2} {
					want := append([]T(nil), start...)
					multiply(im, m, n, k, 1, NewMatrix(a, k, false), NewMatrix(b, n, false), beta, want, ldc, threads)
					epilogueReference(ep, want, ldc, m, n)
					got := append([]T(nil), start...)
					multiplyFused(im, m, n, k, 1, NewMatrix(a, k, false), NewMatrix(b, n, false), beta, got, ldc, threads, ep)
					for i := range want {
						if !sameBits(got[i], want[i]) {
							t.Fatalf("%dx%dx%d %s, beta %v, %d threads: element %d is %v, want %v", m, n, k, name, beta, threads, i, got[i], want[i])
						}
					}

					gotImplicit := append([]T(nil), start...)
					writeB := func(dst []T, p0, j0, kc, nc int) {
						for p := range kc {
							copy(dst[p*nc:(p+1)*nc], b[(p0+p)*n+j0:])
						}
					}
					multiplyImplicitBFused(im, m, n, k, 1, NewMatrix(a, k, false), writeB, beta, gotImplicit, ldc, threads, ep)
					wantImplicit := append([]T(nil), start...)
					multiplyImplicitB(im, m, n, k, 1, NewMatrix(a, k, false), writeB, beta, wantImplicit, ldc, threads)
					epilogueReference(ep, wantImplicit, ldc, m, n)
					for i := range wantImplicit {
						if !sameBits(gotImplicit[i], wantImplicit[i]) {
							t.Fatalf("implicit B %dx%dx%d %s, beta %v: element %d is %v, want %v", m, n, k, name, beta, i, gotImplicit[i], wantImplicit[i])
						}
					}
				}
			}
		}
	}
}

// A product without multiply-adds (k 0) still runs its epilogue: C is the
// bias, clamped.
func TestMultiplyFusedWithoutProduct(t *testing.T) {
	c := []float32{9, 9, 9, 9}
	ep := &Epilogue[float32]{RowBias: []float32{-1, 3}, ColBias: []float32{0.5, 4}, Clamp: true, Lo: 0, Hi: 6}
	MultiplyFused(2, 2, 0, 1, NewMatrix[float32](nil, 0, false), NewMatrix[float32](nil, 2, false), 0, c, 2, 1, ep)
	want := []float32{0, 3, 3.5, 6} // max(0, -1+0.5), -1+4, 3+0.5, min(6, 3+4)
	for i := range want {
		if c[i] != want[i] {
			t.Fatalf("C = %v, want %v", c, want)
		}
	}
}

// Clamping keeps NaN and −0 as vec.Clip does; an exact +Inf bound lets
// +Inf through.
func TestEpilogueClampSpecialValues(t *testing.T) {
	inf := float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	row := []float32{float32(math.NaN()), negZero, -inf, inf, -3, 7}
	ep := &Epilogue[float32]{Clamp: true, Lo: 0, Hi: inf}
	ep.Apply(row, len(row), 1, len(row))
	if row[0] == row[0] {
		t.Errorf("NaN became %v", row[0])
	}
	if row[1] != 0 || !math.Signbit(float64(row[1])) {
		t.Errorf("−0 became %v", row[1])
	}
	if want := []float32{0, inf, 0, 7}; row[2] != want[0] || row[3] != want[1] || row[4] != want[2] || row[5] != want[3] {
		t.Errorf("got %v, want [NaN -0 %v]", row, want)
	}
}
