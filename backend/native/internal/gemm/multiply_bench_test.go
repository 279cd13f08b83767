package gemm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"
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

// BenchmarkMultiplyConvShapes times float32 products of the shapes the
// convolutions of small networks at batch 1 run (M output channels, N
// output positions, K input channels times the window; B row-major, as
// the im2col matrix or a pointwise convolution's input is), on one
// thread, with every implementation; those whose kernel reads B in place
// also run with it packed ("/packed"), for comparison.
func BenchmarkMultiplyConvShapes(b *testing.B) {
	shapes := [][3]int{
		{16, 1024, 144},  // ResNet-8, 16 channels 32×32, 3×3
		{64, 64, 576},    // ResNet-8, 64 channels 8×8, 3×3
		{16, 3025, 64},   // SqueezeNet squeeze 1×1, 55×55
		{64, 3025, 16},   // SqueezeNet expand 1×1, 55×55
		{64, 3025, 144},  // SqueezeNet expand 3×3, 55×55
		{64, 12321, 27},  // SqueezeNet first layer, 111×111
		{1000, 169, 512}, // SqueezeNet classifier 1×1, 13×13
		{576, 49, 96},    // MobileNet-v3 pointwise, 7×7
		{96, 196, 576},   // MobileNet-v3 pointwise, 14×14
		{144, 1, 576},    // MobileNet-v3 squeeze-excitation 1×1, 1×1
		{96, 784, 576},   // MobileNet-like pointwise, 28×28
		{256, 3136, 256}, // a deep 1×1 layer, 56×56
		{1024, 1024, 1024},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, impl := range Implementations() {
		variants := []Impl{impl}
		if impl.Float32.RunInPlace != nil {
			packed := impl
			packed.Name += "/packed"
			packed.Float32.RunInPlace = nil
			variants = append(variants, packed)
		}
		for _, sz := range shapes {
			m, n, k := sz[0], sz[1], sz[2]
			x, y := toF32(randomSlice(r, m*k)), toF32(randomSlice(r, k*n))
			c := make([]float32, m*n)
			for _, im := range variants {
				b.Run(fmt.Sprintf("%dx%dx%d/%s", m, n, k, im.Name), func(b *testing.B) {
					for b.Loop() {
						multiply(&im, m, n, k, 1, NewMatrix(x, k, false), NewMatrix(y, n, false), 0, c, n, 1)
					}
					b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// BenchmarkPackPanelsB times packing a tile's block of a row-major B
// (kcSlice × ncTile, leading dimension 1000, as a stored B wider than a
// tile) into panels of every kernel's width, float32 and float64: what
// the kernels that cannot read B in place pay per tile and K slice.
func BenchmarkPackPanelsB(b *testing.B) {
	const ld = 1000
	for _, nr := range []int{4, 8, 16, 32, 64} {
		b.Run(fmt.Sprintf("float32/nr=%d", nr), func(b *testing.B) { benchmarkPackPanelsB[float32](b, ld, nr) })
		b.Run(fmt.Sprintf("float64/nr=%d", nr), func(b *testing.B) { benchmarkPackPanelsB[float64](b, ld, nr) })
	}
}

func benchmarkPackPanelsB[T Float](b *testing.B, ld, nr int) {
	src := make([]T, kcSlice*ld)
	for i := range src {
		src[i] = T(i % 13)
	}
	dst := make([]T, roundUp(ncTile, nr)*kcSlice)
	for b.Loop() {
		packPanelsB(&portable, dst, NewMatrix(src, ld, false), 0, 3, kcSlice, ncTile, nr)
	}
	b.SetBytes(int64(kcSlice * ncTile * int(unsafe.Sizeof(src[0]))))
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
