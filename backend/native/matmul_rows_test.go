package native

import (
	"math"
	"math/rand/v2"
	"testing"
)

// MatMul's products through vec.MulAdd, on one thread and split into
// bands of rows on several, with a bias, a residual and a Relu as the
// fused epilogue, match the definition; the bands give the same bits as
// one thread (each row is computed by the same kernel). Without vector
// kernels (purego) the same products check the blocked GEMM's path.
func TestMatMulRowBandsMatchDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	relu := &fusedActivation{clamp: true, lo: 0, hi: math.Inf(1)}
	for _, shape := range [][3]int{{64, 40, 24}, {37, 9, 5}, {256, 64, 256}, {3, 70, 2}} {
		m, n, k := shape[0], shape[1], shape[2]
		a, b := make([]float32, m*k), make([]float32, k*n)
		bias, residual := make([]float32, n), make([]float32, m*n)
		for _, x := range [][]float32{a, b, bias, residual} {
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
		}
		p := &matmulPlan{m: m, n: n, k: k, aOffsets: []int{0}, bOffsets: []int{0}}
		var one []float32
		for _, threads := range []int{1, 2, 3} {
			c := make([]float32, m*n)
			var task gemmBatchTask[float32]
			batchedGemmFused(p, a, b, c, threads, &task, bias, residual, relu, nil)
			for i := range m {
				for j := range n {
					want := 0.0
					for q := range k {
						want += float64(a[i*k+q]) * float64(b[q*n+j])
					}
					want = max(0, want+float64(bias[j])+float64(residual[i*n+j]))
					if got := float64(c[i*n+j]); math.Abs(got-want) > 1e-4*(1+math.Abs(want)) {
						t.Fatalf("%v on %d threads: c[%d,%d] = %v, want %v", shape, threads, i, j, got, want)
					}
				}
			}
			if one == nil {
				one = c
				continue
			}
			for i := range c {
				if c[i] != one[i] {
					t.Fatalf("%v: %d threads give c[%d] = %v, one thread %v", shape, threads, i, c[i], one[i])
				}
			}
		}
	}
}
