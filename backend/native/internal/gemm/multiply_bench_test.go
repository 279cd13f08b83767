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
