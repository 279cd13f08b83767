package native

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// BenchmarkPoolLayers times the 2-D pooling layers of the presets at batch
// 1 on one thread (as the executor runs them, through poolKernel.compute),
// and two AveragePools for the average kernels. Besides the wall time it
// reports the process's CPU time per call (cpu-ns/op), steadier when other
// jobs share the machine.
func BenchmarkPoolLayers(b *testing.B) {
	for _, c := range []struct {
		name               string
		mode               poolMode
		c, h, w, k, s, pad int
		ceil               bool
	}{
		{"shufflenet_v2_x0_5/max3s2p1/24x112x112", poolMax, 24, 112, 112, 3, 2, 1, false},
		{"resnet18/max3s2p1/64x112x112", poolMax, 64, 112, 112, 3, 2, 1, false},
		{"squeezenet1_1/max3s2ceil/64x111x111", poolMax, 64, 111, 111, 3, 2, 0, true},
		{"squeezenet1_1/max3s2ceil/128x55x55", poolMax, 128, 55, 55, 3, 2, 0, true},
		{"squeezenet1_1/max3s2ceil/256x27x27", poolMax, 256, 27, 27, 3, 2, 0, true},
		{"lenet/max2s2/6x28x28", poolMax, 6, 28, 28, 2, 2, 0, false},
		{"lenet/max2s2/16x10x10", poolMax, 16, 10, 10, 2, 2, 0, false},
		{"avg3s1p1/64x56x56", poolAvg, 64, 56, 56, 3, 1, 1, false},
		{"avg2s2/128x56x56", poolAvg, 128, 56, 56, 2, 2, 0, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := int64(c.pad)
			k := &poolKernel{mode: c.mode, kernelShape: []int64{int64(c.k), int64(c.k)}, threads: 1,
				attrs: convWindowAttrs{op: c.mode.String(), strides: []int64{int64(c.s), int64(c.s)}, pads: []int64{p, p, p, p}, ceil: c.ceil}}
			x := onnx.NewTensor(onnx.Float, 1, c.c, c.h, c.w)
			for i := range x.Float32s() {
				x.Float32s()[i] = float32(math.Sin(float64(i)))
			}
			cpu0, cpuOK := processCPUTime()
			for b.Loop() {
				if _, _, err := k.compute(x); err != nil {
					b.Fatal(err)
				}
			}
			if cpu1, _ := processCPUTime(); cpuOK {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
