package native

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// Depthwise convolutions on the depthwise kernels give what the general
// path and the definition give: batch 2, channel multipliers 1 and 2,
// 3×3 and 5×5, strides 1 and 2, symmetric, asymmetric and SAME pads,
// with and without bias, on one and two threads. One kernel runs input
// sizes in turn, so its scratch is reused across layouts. The tolerance
// is 1e-5 of the terms' scale: the sums are in the same order, but the
// kernels fuse each multiply-add.
func TestConvDepthwiseMatchesGeneralPath(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	cases := []struct {
		c, mult, k int
		attrs      convWindowAttrs
		bias       bool
	}{
		{5, 1, 3, convWindowAttrs{pads: []int64{1, 1, 1, 1}}, true},
		{5, 1, 3, convWindowAttrs{pads: []int64{1, 1, 1, 1}, strides: []int64{2, 2}}, false},
		{4, 2, 3, convWindowAttrs{pads: []int64{0, 1, 2, 0}, strides: []int64{2, 2}}, true},
		{3, 2, 5, convWindowAttrs{pads: []int64{2, 2, 2, 2}}, false},
		{6, 1, 5, convWindowAttrs{autoPad: "SAME_UPPER", strides: []int64{2, 2}}, true},
		{3, 1, 5, convWindowAttrs{pads: []int64{1, 2, 2, 1}}, true},
		// Outside the kernels' cover: the general path runs.
		{4, 1, 3, convWindowAttrs{pads: []int64{2, 2, 2, 2}, dilations: []int64{2, 2}}, true},
	}
	sizes := [][2]int{{9, 9}, {17, 40}, {1, 1}, {12, 7}}
	for i, tc := range cases {
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%d/threads=%d", i, threads), func(t *testing.T) {
				tc.attrs.op = "Conv"
				m := tc.c * tc.mult
				fast := &convKernel{attrs: tc.attrs, group: int64(tc.c), threads: threads}
				general := &convKernel{attrs: tc.attrs, group: int64(tc.c), threads: threads}
				w := convRandTensor(r, m, 1, tc.k, tc.k)
				var b *onnx.Tensor
				var bd []float32
				if tc.bias {
					b = convRandTensor(r, m)
					bd = b.Float32s()
				}
				for _, hw := range sizes {
					xShape := []int{2, tc.c, hw[0], hw[1]}
					g, err := tc.attrs.geometry(xShape[2:], []int{tc.k, tc.k})
					if err != nil || g.Out[0] < 1 || g.Out[1] < 1 {
						continue
					}
					x := convRandTensor(r, xShape...)
					got, err := fast.compute(x, w, b)
					if err != nil {
						t.Fatal(err)
					}
					convDepthwiseOn = false
					want, err := general.compute(x, w, b)
					convDepthwiseOn = true
					if err != nil {
						t.Fatal(err)
					}
					def, _ := naiveConv(x.Float32s(), w.Float32s(), bd, xShape, []int{m, 1, tc.k, tc.k}, g, tc.c)
					for j, v := range want.Float32s() {
						gv := got.Float32s()[j]
						if d := math.Abs(float64(gv - v)); d > 1e-5*(1+math.Abs(float64(v))) {
							t.Fatalf("input %v: element %d: got %v, the general path gives %v", hw, j, gv, v)
						}
						if d := math.Abs(float64(gv - def[j])); d > 1e-4*(1+math.Abs(float64(v))) {
							t.Fatalf("input %v: element %d: got %v, the definition gives %v", hw, j, gv, def[j])
						}
					}
				}
			})
		}
	}
}

// BenchmarkConvDepthwiseLayers times the depthwise Conv layers of MobileNetV2
// (3×3) and of MNASNet and MobileNetV3 (5×5) at batch 1, bias included,
// on the depthwise kernels and on the general path, on 1 and 2 threads.
func BenchmarkConvDepthwiseLayers(b *testing.B) {
	layers := []struct {
		name        string
		hw, c, k, s int
	}{
		{"112x112x96_k3s2", 112, 96, 3, 2},
		{"56x56x144_k3s1", 56, 144, 3, 1},
		{"28x28x192_k3s1", 28, 192, 3, 1},
		{"14x14x576_k3s1", 14, 576, 3, 1},
		{"7x7x960_k3s1", 7, 960, 3, 1},
		{"28x28x120_k5s1", 28, 120, 5, 1},
		{"14x14x576_k5s2", 14, 576, 5, 2},
		{"7x7x576_k5s1", 7, 576, 5, 1},
	}
	r := rand.New(rand.NewSource(1))
	for _, ly := range layers {
		p := int64(ly.k / 2)
		attrs := convWindowAttrs{op: "Conv", pads: []int64{p, p, p, p}, strides: []int64{int64(ly.s), int64(ly.s)}}
		x := convRandTensor(r, 1, ly.c, ly.hw, ly.hw)
		w := convRandTensor(r, ly.c, 1, ly.k, ly.k)
		bias := convRandTensor(r, ly.c)
		for _, threads := range []int{1, 2} {
			for _, path := range []string{"depthwise", "general"} {
				b.Run(fmt.Sprintf("%s/threads=%d/%s", ly.name, threads, path), func(b *testing.B) {
					convDepthwiseOn = path == "depthwise"
					defer func() { convDepthwiseOn = true }()
					k := &convKernel{attrs: attrs, group: int64(ly.c), threads: threads}
					for b.Loop() {
						if _, err := k.compute(x, w, bias); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
