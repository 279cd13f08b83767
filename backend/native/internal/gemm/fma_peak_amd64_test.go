//go:build amd64 && !purego

package gemm

import (
	"runtime"
	"testing"

	"golang.org/x/sys/cpu"
)

// fmaPeakLoop is one of fma_peak_amd64.s's loops and the floating-point
// operations one of its iterations does.
type fmaPeakLoop struct {
	name      string
	available bool
	flopsIter float64
	run       func(n int)
}

// fmaPeakLoops lists the loops, the widest first.
func fmaPeakLoops() []fmaPeakLoop {
	return []fmaPeakLoop{
		{"avx512", cpu.X86.HasAVX512F, 24 * 16 * 2, fmaPeakAVX512},
		{"avx2", cpu.X86.HasAVX2 && cpu.X86.HasFMA, 12 * 8 * 2, fmaPeakAVX2},
	}
}

// BenchmarkFMAPeak measures the float32 FMA throughput of one core, the
// ceiling of any GEMM on it, with 512-bit and 256-bit vectors: GFLOP/s
// over the wall-clock time, and cpu-GFLOP/s over the processor time of
// the benchmark's thread (which a shared machine lowers less).
func BenchmarkFMAPeak(b *testing.B) {
	for _, loop := range fmaPeakLoops() {
		b.Run(loop.name, func(b *testing.B) {
			if !loop.available {
				b.Skip("not supported by this processor")
			}
			const iterations = 1 << 16
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0, _ := threadCPUTime()
			for b.Loop() {
				loop.run(iterations)
			}
			flops := loop.flopsIter * iterations * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			if cpu1, ok := threadCPUTime(); ok {
				b.ReportMetric(flops/(cpu1-cpu0).Seconds()/1e9, "cpu-GFLOP/s")
			}
		})
	}
}

// fmaPeakGFLOPS measures the float32 FMA peak of one core with the widest
// loop this processor runs: the best of several runs of a few
// milliseconds, over the thread's processor time where it is known (so
// that sharing the core lowers it little), else over wall-clock time. It
// returns 0 when no loop runs here.
func fmaPeakGFLOPS() float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, loop := range fmaPeakLoops() {
		if !loop.available {
			continue
		}
		const iterations = 1 << 18
		best := 0.0
		for range 8 {
			elapsed := measure(func() { loop.run(iterations) })
			best = max(best, loop.flopsIter*iterations/elapsed.Seconds()/1e9)
		}
		return best
	}
	return 0
}
