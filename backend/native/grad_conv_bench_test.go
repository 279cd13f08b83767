package native

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// BenchmarkConvBackwardLayers times the backward pass alone (dX and dW)
// of the CIFAR ResNets' convolutions at batch 64, on one and two threads.
func BenchmarkConvBackwardLayers(b *testing.B) {
	layers := []struct {
		c, m, hw, k, stride, pad int
	}{
		{16, 16, 32, 3, 1, 1},
		{32, 32, 16, 3, 1, 1},
		{64, 64, 8, 3, 1, 1},
		{16, 32, 32, 3, 2, 1},
		{16, 32, 32, 1, 2, 0},
	}
	for _, l := range layers {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%dx%dx%d-%d-k%ds%d/threads=%d", l.hw, l.hw, l.c, l.m, l.k, l.stride, threads), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				const n = 64
				x := randFloat32s(r, n, l.c, l.hw, l.hw)
				w := randFloat32s(r, l.m, l.c, l.k, l.k)
				st, pd := int64(l.stride), int64(l.pad)
				k := &gradConvKernel{fwd: convKernel{
					attrs:       convWindowAttrs{op: "Conv", strides: []int64{st, st}, pads: []int64{pd, pd, pd, pd}},
					kernelShape: []int64{int64(l.k), int64(l.k)}, group: 1,
				}, threads: threads}
				s, err := k.geometry(x, w)
				if err != nil {
					b.Fatal(err)
				}
				gy := randFloat32s(r, append([]int{n, l.m}, s.geom.Out...)...)
				dx, dw := onnx.NewTensor(onnx.Float, x.Shape...), onnx.NewTensor(onnx.Float, w.Shape...)
				for b.Loop() {
					k.backward32(s, dx, dw, x.Float32s(), w.Float32s(), gy.Float32s())
				}
			})
		}
	}
}
