package native

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// Convolutions on the direct 3×3 kernels give what the general path
// (im2col and the GEMM) and the definition give: batch 1 and 3, odd
// sizes and channel counts (a last block of fewer than 8 outputs), pads
// 0 and 1, with and without bias, a fused residual and activation, on
// one and two threads. One kernel runs the input sizes in turn, so its
// padded scratch is reused across layouts and batches.
func TestConvDirect3x3MatchesGeneralPath(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	cases := []struct {
		c, m     int
		pads     []int64
		strides  []int64
		bias     bool
		residual bool
		act      *fusedActivation
	}{
		{16, 16, []int64{1, 1, 1, 1}, nil, true, false, nil},
		{3, 13, []int64{1, 1, 1, 1}, nil, false, false, nil},
		{7, 20, []int64{0, 0, 0, 0}, nil, true, true, &fusedActivation{clamp: true, lo: 0, hi: math.Inf(1)}},
		{5, 9, []int64{1, 0, 0, 1}, nil, true, true, nil},
		{16, 32, []int64{1, 1, 1, 1}, []int64{2, 2}, true, true, &fusedActivation{clamp: true, lo: 0, hi: math.Inf(1)}},
		{3, 11, []int64{0, 1, 1, 0}, []int64{2, 2}, false, false, nil},
		{2, 8, []int64{0, 1, 1, 0}, nil, false, false, rowActivation(func(row []float32) {
			for i, v := range row {
				row[i] = v * v
			}
		}, nil)},
	}
	sizes := [][3]int{{1, 9, 9}, {3, 8, 8}, {1, 17, 37}, {1, 3, 3}, {3, 1, 16}, {1, 32, 32}}
	for i, tc := range cases {
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%d/threads=%d", i, threads), func(t *testing.T) {
				attrs := convWindowAttrs{op: "Conv", pads: tc.pads, strides: tc.strides}
				fast := &convKernel{attrs: attrs, group: 1, threads: threads}
				general := &convKernel{attrs: attrs, group: 1, threads: threads}
				w := convRandTensor(r, tc.m, tc.c, 3, 3)
				var b *onnx.Tensor
				var bd []float32
				if tc.bias {
					b = convRandTensor(r, tc.m)
					bd = b.Float32s()
				}
				ran := 0
				for _, sz := range sizes {
					xShape := []int{sz[0], tc.c, sz[1], sz[2]}
					g, err := attrs.geometry(xShape[2:], []int{3, 3})
					if err != nil || g.Out[0] < 1 || g.Out[1] < 1 {
						continue
					}
					ran++
					x := convRandTensor(r, xShape...)
					var res *onnx.Tensor
					if tc.residual {
						res = convRandTensor(r, append([]int{sz[0], tc.m}, g.Out...)...)
					}
					got, ok, err := fast.computeFused(x, w, b, res, tc.act)
					if err != nil || !ok {
						t.Fatal(ok, err)
					}
					convDirect3x3On = false
					want, _, err := general.computeFused(x, w, b, res, tc.act)
					convDirect3x3On = true
					if err != nil {
						t.Fatal(err)
					}
					def, _ := naiveConv(x.Float32s(), w.Float32s(), bd, xShape, []int{tc.m, tc.c, 3, 3}, g, 1)
					if res != nil {
						for j, v := range res.Float32s() {
							def[j] += v
						}
					}
					if tc.act != nil {
						ep := epilogueOf[float32](tc.act)
						ep.Apply(def, len(def), 1, len(def))
					}
					for j, v := range want.Float32s() {
						gv := got.Float32s()[j]
						if d := math.Abs(float64(gv - v)); d > 1e-5*(1+math.Abs(float64(v))) {
							t.Fatalf("input %v: element %d: got %v, the general path gives %v", sz, j, gv, v)
						}
						if d := math.Abs(float64(gv - def[j])); d > 1e-4*(1+math.Abs(float64(v))) {
							t.Fatalf("input %v: element %d: got %v, the definition gives %v", sz, j, gv, def[j])
						}
					}
				}
				if ran == 0 {
					t.Fatal("no input size fits the case")
				}
			})
		}
	}
}

// BenchmarkConvResNet3x3Layers times the 3×3 Conv layers of the CIFAR
// ResNets (resnet8, resnet20) and of ResNet-18 at batch 1, stride 1 and 2,
// bias included, on the direct kernels and on the general path (im2col
// or the implicit GEMM), on 1 and 2 threads.
func BenchmarkConvResNet3x3Layers(b *testing.B) {
	layers := []struct{ hw, c, m, s int }{
		{32, 3, 16, 1}, {32, 16, 16, 1}, {16, 32, 32, 1}, {8, 64, 64, 1},
		{32, 16, 32, 2}, {16, 32, 64, 2},
		{56, 64, 64, 1}, {28, 128, 128, 1}, {14, 256, 256, 1}, {7, 512, 512, 1},
		{56, 64, 128, 2}, {28, 128, 256, 2}, {14, 256, 512, 2},
	}
	r := rand.New(rand.NewSource(1))
	for _, ly := range layers {
		attrs := convWindowAttrs{op: "Conv", pads: []int64{1, 1, 1, 1}, strides: []int64{int64(ly.s), int64(ly.s)}}
		x := convRandTensor(r, 1, ly.c, ly.hw, ly.hw)
		w := convRandTensor(r, ly.m, ly.c, 3, 3)
		bias := convRandTensor(r, ly.m)
		out := (ly.hw-1)/ly.s + 1
		flops := 2 * float64(ly.m*ly.c*9*out*out)
		for _, threads := range []int{1, 2} {
			for _, path := range []string{"direct", "general"} {
				b.Run(fmt.Sprintf("%dx%dx%d_to_%d_s%d/threads=%d/%s", ly.hw, ly.hw, ly.c, ly.m, ly.s, threads, path), func(b *testing.B) {
					convDirect3x3On = path == "direct"
					defer func() { convDirect3x3On = true }()
					k := &convKernel{attrs: attrs, group: 1, threads: threads}
					for b.Loop() {
						if _, err := k.compute(x, w, bias); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
				})
			}
		}
	}
}
