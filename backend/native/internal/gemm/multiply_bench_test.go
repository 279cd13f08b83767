package gemm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// BenchmarkMultiply1024 is the done-criterion of the kernels: a 1024³
// float32 and float64 product on one thread, with every implementation.
// It reports GFLOP/s over wall-clock time and cpu-GFLOP/s over the
// thread's processor time, and of-peak: cpu-GFLOP/s as a fraction of the
// FMA peak measured the same way in the same run (fmaPeakGFLOPS, the
// widest loop; float64's peak is half float32's). On a machine shared
// with other work, the processor-time figures are the stable ones.
func BenchmarkMultiply1024(b *testing.B) {
	const n = 1024
	const flops = 2 * n * n * n
	peak := fmaPeakGFLOPS()
	r := rand.New(rand.NewPCG(3, 4))
	x64, y64 := randomSlice(r, n*n), randomSlice(r, n*n)
	x32, y32 := toF32(x64), toF32(y64)
	run := func(b *testing.B, peak float64, product func()) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpu0, _ := threadCPUTime()
		for b.Loop() {
			product()
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		cpu1, ok := threadCPUTime()
		if !ok || peak == 0 {
			return
		}
		cpuGFLOPS := flops * float64(b.N) / (cpu1 - cpu0).Seconds() / 1e9
		b.ReportMetric(cpuGFLOPS, "cpu-GFLOP/s")
		b.ReportMetric(peak, "peak-GFLOP/s")
		b.ReportMetric(cpuGFLOPS/peak, "of-peak")
	}
	for _, impl := range Implementations() {
		b.Run(fmt.Sprintf("%s/float32", impl.Name), func(b *testing.B) {
			c := make([]float32, n*n)
			run(b, peak, func() {
				multiply(&impl, n, n, n, 1, NewMatrix(x32, n, false), NewMatrix(y32, n, false), 0, c, n, 1)
			})
		})
		b.Run(fmt.Sprintf("%s/float64", impl.Name), func(b *testing.B) {
			c := make([]float64, n*n)
			run(b, peak/2, func() {
				multiply(&impl, n, n, n, 1, NewMatrix(x64, n, false), NewMatrix(y64, n, false), 0, c, n, 1)
			})
		})
	}
}

// BenchmarkMultiplyPackedA multiplies the filters of convolution layers
// of batch-1 CNNs (m filters, k = channels × window, n output positions)
// by their column matrix on one thread, with A packed at every product
// (unpacked) or once beforehand (packed), as a network's constant weights
// are.
func BenchmarkMultiplyPackedA(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, sz := range [][3]int{{16, 1024, 144}, {64, 3136, 576}, {128, 784, 1152}, {512, 49, 4608}} {
		m, n, k := sz[0], sz[1], sz[2]
		a, x := toF32(randomSlice(r, m*k)), toF32(randomSlice(r, k*n))
		c := make([]float32, m*n)
		var packed Packed[float32]
		packed.PackA(m, k, NewMatrix(a, k, false))
		for _, pack := range []bool{false, true} {
			name := fmt.Sprintf("%dx%dx%d/unpacked", m, n, k)
			am := NewMatrix(a, k, false)
			if pack {
				name = fmt.Sprintf("%dx%dx%d/packed", m, n, k)
				am = packed.Matrix()
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					Multiply(m, n, k, 1, am, NewMatrix(x, n, false), 0, c, n, 1)
				}
			})
		}
	}
}
