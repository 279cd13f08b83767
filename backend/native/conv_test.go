package native

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/backend/native/internal/conv"
	"github.com/deep500/deep500-go/onnx"
)

func convRandTensor(r *rand.Rand, shape ...int) *onnx.Tensor {
	t := onnx.NewTensor(onnx.Float, shape...)
	for i := range t.Float32s() {
		t.Float32s()[i] = float32(r.NormFloat64())
	}
	return t
}

// naiveConv is Conv straight from its definition, for checking.
func naiveConv(x, w, b []float32, xs, ws []int, g *convGeom, group int) ([]float32, []int) {
	n, c, m := xs[0], xs[1], ws[0]
	cg, mg := c/group, m/group
	sp := len(xs) - 2
	outShape := append([]int{n, m}, g.Out...)
	y := make([]float32, onnx.NumElements(outShape))
	inStr, kStr, oStr := rowMajorStrides(g.In), rowMajorStrides(g.Kernel), rowMajorStrides(g.Out)
	for ni := range n {
		for mi := range m {
			gi := mi / mg
			for o := range g.OutSize() {
				var s float64
				if b != nil {
					s = float64(b[mi])
				}
				for ci := range cg {
					for kk := range g.KernelSize() {
						off, ok := 0, true
						for d := range sp {
							od := o / oStr[d] % g.Out[d]
							kd := kk / kStr[d] % g.Kernel[d]
							i := od*g.Strides[d] + kd*g.Dilations[d] - g.PadBegin[d]
							if i < 0 || i >= g.In[d] {
								ok = false
								break
							}
							off += i * inStr[d]
						}
						if !ok {
							continue
						}
						xv := x[(ni*c+gi*cg+ci)*g.InSize()+off]
						wv := w[(mi*cg+ci)*g.KernelSize()+kk]
						s += float64(xv) * float64(wv)
					}
				}
				y[(ni*m+mi)*g.OutSize()+o] = float32(s)
			}
		}
	}
	return y, outShape
}

func TestConvAgainstDefinition(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	cases := []struct {
		x, w  []int
		group int64
		attrs convWindowAttrs
		bias  bool
	}{
		{[]int{2, 3, 7}, []int{4, 3, 3}, 1, convWindowAttrs{pads: []int64{1, 2}, strides: []int64{2}}, true},
		{[]int{1, 4, 9, 8}, []int{6, 2, 3, 2}, 2, convWindowAttrs{dilations: []int64{2, 1}, pads: []int64{1, 0, 2, 1}}, true},
		{[]int{2, 6, 10, 10}, []int{6, 1, 3, 3}, 6, convWindowAttrs{strides: []int64{2, 2}, autoPad: "SAME_LOWER"}, false},
		{[]int{1, 5, 6, 6}, []int{7, 5, 1, 1}, 1, convWindowAttrs{}, true},
		{[]int{1, 2, 5, 6, 4}, []int{3, 2, 2, 3, 2}, 1, convWindowAttrs{autoPad: "SAME_UPPER", strides: []int64{1, 2, 1}}, true},
		{[]int{1, 2, 5, 6, 4}, []int{2, 1, 2, 2, 2}, 2, convWindowAttrs{autoPad: "VALID", dilations: []int64{2, 1, 2}}, false},
		{[]int{1, 16, 12, 12}, []int{32, 16, 3, 3}, 1, convWindowAttrs{pads: []int64{1, 1, 1, 1}}, true},
	}
	for i, tc := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			x, w := convRandTensor(r, tc.x...), convRandTensor(r, tc.w...)
			var b *onnx.Tensor
			var bd []float32
			if tc.bias {
				b = convRandTensor(r, tc.w[0])
				bd = b.Float32s()
			}
			tc.attrs.op = "Conv"
			k := &convKernel{attrs: tc.attrs, group: tc.group}
			for run := range 2 { // the second run reuses the buffers
				got, err := k.compute(x, w, b)
				if err != nil {
					t.Fatal(err)
				}
				g, err := tc.attrs.geometry(tc.x[2:], tc.w[2:])
				if err != nil {
					t.Fatal(err)
				}
				want, shape := naiveConv(x.Float32s(), w.Float32s(), bd, tc.x, tc.w, g, int(tc.group))
				if fmt.Sprint(got.Shape) != fmt.Sprint(shape) {
					t.Fatalf("run %d: shape %v, want %v", run, got.Shape, shape)
				}
				for j, v := range want {
					if d := math.Abs(float64(got.Float32s()[j] - v)); d > 1e-4*(1+math.Abs(float64(v))) {
						t.Fatalf("run %d: element %d: got %v want %v", run, j, got.Float32s()[j], v)
					}
				}
			}
		})
	}
}

func TestConvFloat16AndFloat64(t *testing.T) {
	x := onnx.FromSlice([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, 1, 3, 3)
	w := onnx.FromSlice([]float64{1, 1, 1, 1}, 1, 1, 2, 2)
	k := &convKernel{attrs: convWindowAttrs{op: "Conv"}, group: 1}
	got, err := k.compute(x, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Float64s()) != "[12 16 24 28]" {
		t.Fatalf("float64 conv = %v", got.Float64s())
	}
	xh := onnx.FromSlice([]onnx.F16{onnx.F16From(1), onnx.F16From(2), onnx.F16From(3), onnx.F16From(4)}, 1, 1, 2, 2)
	wh := onnx.FromSlice([]onnx.F16{onnx.F16From(0.5)}, 1, 1, 1, 1)
	k2 := &convKernel{attrs: convWindowAttrs{op: "Conv"}, group: 1}
	gh, err := k2.compute(xh, wh, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range gh.Data.([]onnx.F16) {
		if v.Float32() != float32(i+1)/2 {
			t.Fatalf("float16 conv element %d = %v", i, v.Float32())
		}
	}
}

func TestConvRejectsBadInput(t *testing.T) {
	k := &convKernel{attrs: convWindowAttrs{op: "Conv"}, group: 1}
	x := onnx.NewTensor(onnx.Float, 1, 3, 5, 5)
	for _, w := range []*onnx.Tensor{
		onnx.NewTensor(onnx.Float, 2, 2, 3, 3),  // channel mismatch
		onnx.NewTensor(onnx.Float, 2, 3, 3),     // rank
		onnx.NewTensor(onnx.Float, 2, 3, 7, 7),  // kernel larger than input
		onnx.NewTensor(onnx.Double, 2, 3, 3, 3), // type
	} {
		if _, err := k.compute(x, w, nil); err == nil {
			t.Errorf("W %v %v: no error", w.Type, w.Shape)
		}
	}
	huge := &convKernel{attrs: convWindowAttrs{op: "Conv", pads: []int64{1 << 40, 0, 0, 0}}, group: 1}
	if _, err := huge.compute(x, onnx.NewTensor(onnx.Float, 1, 3, 1, 1), nil); err == nil {
		t.Error("huge pads: no error")
	}
	bad := &convKernel{attrs: convWindowAttrs{op: "Conv", strides: []int64{0, 1}}, group: 1}
	if _, err := bad.compute(x, onnx.NewTensor(onnx.Float, 1, 3, 1, 1), nil); err == nil {
		t.Error("zero stride: no error")
	}
}

// naiveConvTranspose scatters every input element times the kernel into
// the output, from the operator's definition.
func TestConvTransposeAgainstDefinition(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	xs, ws := []int{2, 4, 3, 4}, []int{4, 3, 3, 2} // group 2: M = 6
	x, w := convRandTensor(r, xs...), convRandTensor(r, ws...)
	b := convRandTensor(r, 6)
	k := &convTransposeKernel{attrs: convWindowAttrs{op: "ConvTranspose", strides: []int64{2, 3}, dilations: []int64{1, 2}, pads: []int64{1, 0, 0, 2}},
		outputPadding: []int64{1, 1}, group: 2}
	got, err := k.compute(x, w, b)
	if err != nil {
		t.Fatal(err)
	}
	// full = s*(in-1) + outpad + (k-1)*d+1 - pads
	oh, ow := 2*(3-1)+1+3-1, 3*(4-1)+1+(2-1)*2+1-2
	if fmt.Sprint(got.Shape) != fmt.Sprint([]int{2, 6, oh, ow}) {
		t.Fatalf("shape %v, want [2 6 %d %d]", got.Shape, oh, ow)
	}
	want := make([]float64, 2*6*oh*ow)
	for n := range 2 {
		for m := range 6 {
			for i := range oh * ow {
				want[(n*6+m)*oh*ow+i] = float64(b.Float32s()[m])
			}
		}
		for c := range 4 {
			gi := c / 2
			for ih := range 3 {
				for iw := range 4 {
					xv := float64(x.Float32s()[((n*4+c)*3+ih)*4+iw])
					for mm := range 3 {
						m := gi*3 + mm
						for kh := range 3 {
							for kw := range 2 {
								oy, ox := ih*2+kh*1-1, iw*3+kw*2-0
								if oy < 0 || oy >= oh || ox < 0 || ox >= ow {
									continue
								}
								want[((n*6+m)*oh+oy)*ow+ox] += xv * float64(w.Float32s()[((c*3+mm)*3+kh)*2+kw])
							}
						}
					}
				}
			}
		}
	}
	for i, v := range want {
		if d := math.Abs(float64(got.Float32s()[i]) - v); d > 1e-4*(1+math.Abs(v)) {
			t.Fatalf("element %d: got %v want %v", i, got.Float32s()[i], v)
		}
	}
}

func TestCol2ImIsAdjointOfIm2col(t *testing.T) {
	// Non-overlapping 2x2 blocks with stride 2: col2im(im2col(x)) == x.
	x := onnx.NewTensor(onnx.Float, 1, 2, 4, 6)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(i)
	}
	attrs := convWindowAttrs{op: "Col2Im", strides: []int64{2, 2}}
	g, err := attrs.geometry([]int{4, 6}, []int{2, 2})
	if err != nil {
		t.Fatal(err)
	}
	col := make([]float32, 2*4*g.OutSize())
	conv.Im2col(col, x.Float32s(), 2, g, 1)
	k := &col2imKernel{attrs: attrs}
	got, err := k.compute(onnx.FromSlice(col, 1, 8, g.OutSize()), onnx.FromSlice([]int64{4, 6}, 2), onnx.FromSlice([]int64{2, 2}, 2))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Shape) != "[1 2 4 6]" || fmt.Sprint(got.Float32s()) != fmt.Sprint(x.Float32s()) {
		t.Fatalf("got %v %v", got.Shape, got.Float32s())
	}
	// Overlapping 2-wide blocks with stride 1 over [1 2 3]: each inner
	// element is counted twice.
	g2 := onnx.FromSlice([]float32{1, 2, 2, 3}, 1, 2, 2)
	k2 := &col2imKernel{attrs: convWindowAttrs{op: "Col2Im"}}
	got2, err := k2.compute(g2, onnx.FromSlice([]int64{1, 3}, 2), onnx.FromSlice([]int64{1, 2}, 2))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got2.Float32s()) != "[1 4 3]" {
		t.Fatalf("overlapping col2im = %v", got2.Float32s())
	}
}

// BenchmarkConvResNet3x3 measures a ResNet-style 3x3 convolution,
// 1x64x56x56 input, 64 filters, padding 1, with bias.
func BenchmarkConvResNet3x3(b *testing.B) {
	r := rand.New(rand.NewSource(3))
	x, w, bias := convRandTensor(r, 1, 64, 56, 56), convRandTensor(r, 64, 64, 3, 3), convRandTensor(r, 64)
	k := &convKernel{attrs: convWindowAttrs{op: "Conv", pads: []int64{1, 1, 1, 1}}, group: 1}
	for b.Loop() {
		if _, err := k.compute(x, w, bias); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*64*64*9*56*56*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
}

// BenchmarkConvDepthwise measures a depthwise 3x3 convolution (groups =
// channels), the case spread over goroutines per group.
func BenchmarkConvDepthwise(b *testing.B) {
	r := rand.New(rand.NewSource(4))
	x, w := convRandTensor(r, 1, 128, 56, 56), convRandTensor(r, 128, 1, 3, 3)
	k := &convKernel{attrs: convWindowAttrs{op: "Conv", pads: []int64{1, 1, 1, 1}}, group: 128}
	for b.Loop() {
		if _, err := k.compute(x, w, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInferenceConvBlock runs Conv+BatchNormalization+Relu+MaxPool
// through the executor.
func BenchmarkInferenceConvBlock(b *testing.B) {
	r := rand.New(rand.NewSource(5))
	nodes := []*onnx.Node{
		testNode(b, 17, "Conv", []string{"X", "W"}, []string{"C"}, intsAttr("pads", 1, 1, 1, 1)),
		testNode(b, 17, "BatchNormalization", []string{"C", "S", "B", "M", "V"}, []string{"N"}),
		testNode(b, 17, "Relu", []string{"N"}, []string{"R"}),
		testNode(b, 17, "MaxPool", []string{"R"}, []string{"Y"}, intsAttr("kernel_shape", 2, 2), intsAttr("strides", 2, 2)),
	}
	ones := onnx.NewTensor(onnx.Float, 64)
	for i := range ones.Float32s() {
		ones.Float32s()[i] = 1
	}
	m := testModel(nodes,
		[]*onnx.ValueInfo{{Name: "X", Type: floatTensorType(1, 64, 56, 56)}},
		[]*onnx.ValueInfo{{Name: "Y"}},
		&onnx.Initializer{Name: "W", Tensor: convRandTensor(r, 64, 64, 3, 3)},
		&onnx.Initializer{Name: "S", Tensor: ones},
		&onnx.Initializer{Name: "B", Tensor: onnx.NewTensor(onnx.Float, 64)},
		&onnx.Initializer{Name: "M", Tensor: onnx.NewTensor(onnx.Float, 64)},
		&onnx.Initializer{Name: "V", Tensor: ones},
	)
	net, err := New(m, backend.Options{})
	if err != nil {
		b.Fatal(err)
	}
	feeds := map[string]onnx.Value{"X": convRandTensor(r, 1, 64, 56, 56)}
	for b.Loop() {
		if _, err := net.Inference(feeds); err != nil {
			b.Fatal(err)
		}
	}
}
