package native

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// The float32 operators that run the internal/vec kernels agree with
// their float64 versions (the math package) on odd shapes holding NaN,
// ±Inf, ±0 and values past exp's overflow, within a few float32 ulps
// (2e-6 relative) plus an absolute term: 1e-7 (Gelu's cut tail), more
// for LogSoftmax and LayerNormalization, whose results cross zero.
func TestFloat32VectorKernelsMatchFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 71))
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 100, -100, 3, -3}
	data := func(n int, scale float64, withSpecials bool) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = r.NormFloat64() * scale
			if withSpecials && r.IntN(6) == 0 {
				v[i] = specials[r.IntN(len(specials))]
			}
		}
		return v
	}
	cases := []struct {
		op       string
		opset    int64
		attrs    []*onnx.Attribute
		shape    []int
		specials bool
		params   int // extra inputs of the row's length (Scale, B)
		abs      float64
	}{
		{"Exp", 13, nil, []int{3, 37}, true, 0, 1e-7},
		{"Sigmoid", 13, nil, []int{3, 37}, true, 0, 1e-7},
		{"Tanh", 13, nil, []int{3, 37}, true, 0, 1e-7},
		{"Erf", 13, nil, []int{3, 37}, true, 0, 1e-7},
		{"Gelu", 20, []*onnx.Attribute{stringAttr("approximate", "none")}, []int{3, 37}, true, 0, 1e-7},
		{"Gelu", 20, []*onnx.Attribute{stringAttr("approximate", "tanh")}, []int{3, 37}, true, 0, 1e-7},
		{"HardSigmoid", 6, []*onnx.Attribute{floatAttr("alpha", 0.3), floatAttr("beta", 0.4)}, []int{3, 37}, true, 0, 1e-7},
		{"HardSwish", 14, nil, []int{3, 37}, true, 0, 1e-7},
		{"Softmax", 13, nil, []int{4, 3, 19}, false, 0, 1e-7},
		{"Softmax", 11, []*onnx.Attribute{intAttr("axis", 1)}, []int{4, 3, 19}, false, 0, 1e-7},
		{"LogSoftmax", 13, nil, []int{4, 3, 19}, false, 0, 5e-7},         // crosses zero
		{"LayerNormalization", 17, nil, []int{4, 3, 19}, false, 2, 1e-6}, // crosses zero
	}
	for _, c := range cases {
		n := onnx.NumElements(c.shape)
		x := data(n, 4, c.specials)
		extra64, extra32 := []*onnx.Tensor{}, []*onnx.Tensor{}
		for range c.params {
			p := data(c.shape[len(c.shape)-1], 1, false)
			extra64 = append(extra64, onnx.FromSlice(p, c.shape[len(c.shape)-1]))
			extra32 = append(extra32, onnx.FromSlice(toFloat32s(p), c.shape[len(c.shape)-1]))
		}
		x32 := toFloat32s(x)
		for i := range x {
			x[i] = float64(x32[i]) // the same inputs in both types
		}
		want, err := runNode1(t, c.opset, c.op, c.attrs, append([]*onnx.Tensor{onnx.FromSlice(x, c.shape...)}, extra64...)...)
		if err != nil {
			t.Fatalf("%s float64: %v", c.op, err)
		}
		got, err := runNode1(t, c.opset, c.op, c.attrs, append([]*onnx.Tensor{onnx.FromSlice(x32, c.shape...)}, extra32...)...)
		if err != nil {
			t.Fatalf("%s float32: %v", c.op, err)
		}
		w, g := want.Float64s(), got.Float32s()
		for i := range w {
			gv := float64(g[i])
			switch {
			case math.IsNaN(w[i]) || math.IsNaN(gv):
				if !(math.IsNaN(w[i]) && math.IsNaN(gv)) {
					t.Fatalf("%s %v x[%d]=%v: got %v, want %v", c.op, c.attrs, i, x[i], gv, w[i])
				}
			case math.IsInf(float64(float32(w[i])), 0) || math.IsInf(gv, 0):
				if gv != float64(float32(w[i])) {
					t.Fatalf("%s %v x[%d]=%v: got %v, want %v", c.op, c.attrs, i, x[i], gv, w[i])
				}
			case math.Abs(gv-w[i]) > 2e-6*math.Abs(w[i])+c.abs:
				t.Fatalf("%s %v x[%d]=%v: got %v, want %v", c.op, c.attrs, i, x[i], gv, w[i])
			}
		}
	}
}

func toFloat32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, f := range v {
		out[i] = float32(f)
	}
	return out
}
