package native

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// The float32 training kernels (vector kernels, direct convolutions,
// statistics shared between the passes) take other routes than the
// float64 ones the gradient checks verify against finite differences; the
// tests here run one graph in both types and require the float32 loss and
// gradients to be the float64 ones within float32 rounding.

// float32Twin returns t's float32 copy (t float64), other types as they are.
func float32Twin(t *onnx.Tensor) *onnx.Tensor {
	if t.Type != onnx.Double {
		return t
	}
	out := onnx.NewTensor(onnx.Float, t.Shape...)
	for i, v := range t.Float64s() {
		out.Float32s()[i] = float32(v)
	}
	return out
}

// checkFloat32Training builds L = Σ u ⊙ y after nodes in float64 and in
// float32 (feeds as graph inputs, params as initializers; u random), runs
// a training pass in each on threads, and compares L and the gradients of
// every feed and parameter: |g32 - g64| ≤ tol·max|g64| per tensor.
func checkFloat32Training(t *testing.T, r *rand.Rand, nodes []*onnx.Node, feeds, params map[string]*onnx.Tensor, y string, yShape []int, threads int, tol float64) {
	t.Helper()
	n := onnx.NumElements(yShape)
	u := randDoubles(r, yShape...)
	build := func(single bool) (network.Network, map[string]onnx.Value) {
		conv := func(x *onnx.Tensor) *onnx.Tensor {
			if single {
				return float32Twin(x)
			}
			return x
		}
		all := append([]*onnx.Node{}, nodes...)
		all = append(all,
			gelemConst(t, "f32_u", conv(u)),
			testNode(t, 14, "Mul", []string{y, "f32_u"}, []string{"f32_p"}),
			testNode(t, 13, "ReduceSum", []string{"f32_p"}, []string{"f32_L"}, intAttr("keepdims", 0)),
		)
		var ins []*onnx.ValueInfo
		fv := map[string]onnx.Value{}
		for _, name := range sortedNames(feeds) {
			typ := doubleType(gconvInts(feeds[name].Shape)...)
			if single {
				typ = floatTensorType(gconvInts(feeds[name].Shape)...)
			}
			ins = append(ins, &onnx.ValueInfo{Name: name, Type: typ})
			fv[name] = conv(feeds[name])
		}
		var inits []*onnx.Initializer
		for _, name := range sortedNames(params) {
			inits = append(inits, &onnx.Initializer{Name: name, Tensor: conv(params[name])})
		}
		net, err := New(testModel(all, ins, []*onnx.ValueInfo{{Name: "f32_L"}}, inits...), backend.Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { net.Close() })
		return net, fv
	}
	values := func(v onnx.Value) []float64 {
		x := v.(*onnx.Tensor)
		out := make([]float64, x.Len())
		if !float64sInto(out, x.Data) {
			t.Fatalf("%v is not a float tensor", x.Type)
		}
		return out
	}
	net64, f64 := build(false)
	net32, f32 := build(true)
	// Twice: the second pass runs on the buffers and statistics the
	// first one left.
	for pass := range 2 {
		o64, err := net64.InferenceAndBackprop(f64, "f32_L")
		if err != nil {
			t.Fatal(err)
		}
		o32, err := net32.InferenceAndBackprop(f32, "f32_L")
		if err != nil {
			t.Fatal(err)
		}
		l64, l32 := values(o64["f32_L"])[0], values(o32["f32_L"])[0]
		if math.Abs(l32-l64) > tol*math.Sqrt(float64(n))*math.Max(1, math.Abs(l64)) {
			t.Errorf("pass %d: loss %v in float32, %v in float64", pass, l32, l64)
		}
		names := append(sortedNames(feeds), sortedNames(params)...)
		for _, name := range names {
			g64, err := net64.Fetch(network.GradName(name))
			if err != nil {
				t.Fatal(err)
			}
			g32, err := net32.Fetch(network.GradName(name))
			if err != nil {
				t.Fatal(err)
			}
			a, b := values(g32[0]), values(g64[0])
			big := 0.0
			for _, v := range b {
				big = math.Max(big, math.Abs(v))
			}
			for i := range b {
				if d := math.Abs(a[i] - b[i]); d > tol*math.Max(big, 1e-30) || math.IsNaN(a[i]) {
					t.Fatalf("pass %d: d%s[%d] = %v in float32, %v in float64 (largest |g| %v)", pass, name, i, a[i], b[i], big)
				}
			}
		}
	}
}

// BatchNormalization in training mode: the vector path (runs of 16
// elements or more, statistics from the forward pass) and the short-run
// path, with the running statistics updated, on one and two threads.
func TestBatchNormTrainingFloat32MatchesFloat64(t *testing.T) {
	for _, shape := range [][]int{{2, 3, 4, 5}, {4, 5, 8, 8}, {3, 16, 17}, {2, 3, 3}} {
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%v/threads=%d", shape, threads), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(len(shape)), uint64(threads)))
				c := shape[1]
				feeds := map[string]*onnx.Tensor{"X": randDoubles(r, shape...)}
				for i := range feeds["X"].Float64s() {
					feeds["X"].Float64s()[i] = 3*feeds["X"].Float64s()[i] + 2 // a mean away from 0
				}
				params := map[string]*onnx.Tensor{"scale": randDoubles(r, c), "B": randDoubles(r, c), "mean": randDoubles(r, c), "var": gnormPositive(r, c)}
				nodes := []*onnx.Node{testNode(t, 15, "BatchNormalization", []string{"X", "scale", "B", "mean", "var"}, []string{"Y", "RM", "RV"},
					intAttr("training_mode", 1))}
				checkFloat32Training(t, r, nodes, feeds, params, "Y", shape, threads, 2e-5)
			})
		}
	}
}

// Conv's float32 backward (dX of 3×3 stride-1 layers on the direct
// kernels with flipped, transposed filters; dW as row dot products over
// runs of images) gives the float64 path's gradients: maps large enough
// for the direct kernels, a last block of fewer than 8 filters, pads 1 and
// 0, stride 2 and 1×1 layers (the col2im and GEMM paths), 1 to 11 images.
func TestConvTrainingFloat32MatchesFloat64(t *testing.T) {
	cases := []struct {
		n, c, m, hw, k int
		strides, pads  []int64
	}{
		{3, 5, 9, 12, 3, []int64{1, 1}, []int64{1, 1, 1, 1}},
		{11, 4, 8, 9, 3, []int64{1, 1}, []int64{1, 1, 1, 1}},
		{2, 3, 6, 13, 3, []int64{1, 1}, []int64{0, 0, 0, 0}},
		{1, 6, 4, 16, 3, []int64{1, 1}, []int64{1, 0, 0, 1}},
		{4, 6, 10, 12, 3, []int64{2, 2}, []int64{1, 1, 1, 1}},
		{5, 8, 12, 10, 1, []int64{1, 1}, []int64{0, 0, 0, 0}},
	}
	for i, c := range cases {
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%d/threads=%d", i, threads), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(i), uint64(threads)))
				feeds := map[string]*onnx.Tensor{"X": randDoubles(r, c.n, c.c, c.hw, c.hw)}
				params := map[string]*onnx.Tensor{"W": randDoubles(r, c.m, c.c, c.k, c.k), "B": randDoubles(r, c.m)}
				nodes := []*onnx.Node{testNode(t, 17, "Conv", []string{"X", "W", "B"}, []string{"Y"},
					&onnx.Attribute{Name: "strides", Type: onnx.AttrInts, Ints: c.strides},
					&onnx.Attribute{Name: "pads", Type: onnx.AttrInts, Ints: c.pads})}
				out := (c.hw+int(c.pads[0]+c.pads[2])-c.k)/int(c.strides[0]) + 1
				checkFloat32Training(t, r, nodes, feeds, params, "Y", []int{c.n, c.m, out, out}, threads, 2e-5)
			})
		}
	}
}

// randFloat32s returns a float32 tensor with values in [-1, 1).
func randFloat32s(r *rand.Rand, shape ...int) *onnx.Tensor {
	t := onnx.NewTensor(onnx.Float, shape...)
	for i := range t.Float32s() {
		t.Float32s()[i] = float32(r.Float64()*2 - 1)
	}
	return t
}

// float32LossModel builds the float32 model of nodes followed by
// L = Σ u ⊙ y (u fixed, random), with the feeds as graph inputs.
func float32LossModel(t *testing.T, r *rand.Rand, nodes []*onnx.Node, feeds map[string]*onnx.Tensor, y string, yShape []int) (*onnx.Model, map[string]onnx.Value) {
	t.Helper()
	u := randFloat32s(r, yShape...)
	nodes = append(nodes,
		gelemConst(t, "wl_u", u),
		testNode(t, 14, "Mul", []string{y, "wl_u"}, []string{"wl_p"}),
		testNode(t, 13, "ReduceSum", []string{"wl_p"}, []string{"wl_L"}, intAttr("keepdims", 0)),
	)
	var ins []*onnx.ValueInfo
	fv := map[string]onnx.Value{}
	for _, name := range sortedNames(feeds) {
		ins = append(ins, &onnx.ValueInfo{Name: name, Type: floatTensorType(gconvInts(feeds[name].Shape)...)})
		fv[name] = feeds[name]
	}
	m := testModel(nodes, ins, []*onnx.ValueInfo{{Name: "wl_L"}})
	m.Opsets[""] = 27
	return m, fv
}

// checkFloat32Gradients checks the gradients of L = Σ u ⊙ y for float32-only
// operators against central differences with a float32 step (h = 1e-2,
// relative tolerance tol), for every fed input.
func checkFloat32Gradients(t *testing.T, r *rand.Rand, nodes []*onnx.Node, feeds map[string]*onnx.Tensor, y string, yShape []int, tol float64) {
	t.Helper()
	m, fv := float32LossModel(t, r, nodes, feeds, y, yShape)
	net, err := New(m, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := net.InferenceAndBackprop(fv, "wl_L"); err != nil {
		t.Fatal(err)
	}
	for _, name := range sortedNames(feeds) {
		g, err := net.Fetch(network.GradName(name))
		if err != nil {
			t.Fatal(err)
		}
		got := append([]float32{}, g[0].(*onnx.Tensor).Float32s()...)
		data := feeds[name].Float32s()
		for i := range data {
			orig := data[i]
			loss := func(v float32) float64 {
				data[i] = v
				out, err := net.Inference(fv)
				if err != nil {
					t.Fatal(err)
				}
				return float64(out["wl_L"].(*onnx.Tensor).Float32s()[0])
			}
			const h = 1e-2
			numeric := (loss(orig+h) - loss(orig-h)) / (2 * h)
			data[i] = orig
			if e := math.Abs(float64(got[i])-numeric) / math.Max(1, math.Abs(numeric)); e > tol {
				t.Errorf("dL/d%s[%d] = %.6g by backprop, %.6g by central differences", name, i, got[i], numeric)
			}
		}
	}
}
