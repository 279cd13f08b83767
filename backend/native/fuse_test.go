package native

import (
	"math"
	"math/rand"
	randv2 "math/rand/v2"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/onnx"
)

// fuseCase is a graph the fusion tests build twice, with and without
// Optimize, and feed the same random inputs.
type fuseCase struct {
	name   string
	nodes  func(t *testing.T) []*onnx.Node
	inputs map[string][]int // fed with random values
	inits  map[string]*onnx.Tensor
	output []string
	// steps is the plan's length once optimized; fusedAway, the values
	// the fused kernels must not store (empty when nothing may fuse).
	steps     int
	fusedAway []string
}

func TestFusionAgreesWithUnfusedGraph(t *testing.T) {
	r := rand.New(rand.NewSource(124))
	w := func(shape ...int) *onnx.Tensor { return convRandTensor(r, shape...) }
	conv := func(t *testing.T, x, wName, b, y string, attrs ...*onnx.Attribute) *onnx.Node {
		return testNode(t, 17, "Conv", []string{x, wName, b}, []string{y}, append([]*onnx.Attribute{intsAttr("pads", 1, 1, 1, 1)}, attrs...)...)
	}
	scalar := func(v float32) *onnx.Tensor { return onnx.FromSlice([]float32{v}) }
	cases := []fuseCase{
		{
			name: "Conv+Relu",
			nodes: func(t *testing.T) []*onnx.Node {
				return []*onnx.Node{conv(t, "X", "W", "B", "C"), testNode(t, 17, "Relu", []string{"C"}, []string{"Y"})}
			},
			inputs: map[string][]int{"X": {2, 3, 9, 7}},
			inits:  map[string]*onnx.Tensor{"W": w(8, 3, 3, 3), "B": w(8)},
			output: []string{"Y"}, steps: 1, fusedAway: []string{"C"},
		},
		{
			name: "Conv+Clip(0,6)",
			nodes: func(t *testing.T) []*onnx.Node {
				return []*onnx.Node{conv(t, "X", "W", "B", "C"), testNode(t, 17, "Clip", []string{"C", "lo", "hi"}, []string{"Y"})}
			},
			inputs: map[string][]int{"X": {1, 4, 6, 6}},
			inits:  map[string]*onnx.Tensor{"W": w(10, 4, 3, 3), "B": w(10), "lo": scalar(0), "hi": scalar(0.5)},
			output: []string{"Y"}, steps: 1, fusedAway: []string{"C"},
		},
		{
			// A ResNet block: the shortcut is computed between the Conv and
			// its Add, so the fused kernel must run where the Add stood.
			name: "Conv+Add+Relu",
			nodes: func(t *testing.T) []*onnx.Node {
				return []*onnx.Node{
					conv(t, "X", "W", "B", "C"),
					testNode(t, 17, "Conv", []string{"X", "Wd", "Bd"}, []string{"S"}),
					testNode(t, 17, "Add", []string{"S", "C"}, []string{"A"}),
					testNode(t, 17, "Relu", []string{"A"}, []string{"Y"}),
				}
			},
			inputs: map[string][]int{"X": {2, 5, 8, 8}},
			inits:  map[string]*onnx.Tensor{"W": w(6, 5, 3, 3), "B": w(6), "Wd": w(6, 5, 1, 1), "Bd": w(6)},
			output: []string{"Y"}, steps: 2, fusedAway: []string{"C", "A"},
		},
		{
			name: "Conv+Add (residual a graph input)",
			nodes: func(t *testing.T) []*onnx.Node {
				return []*onnx.Node{conv(t, "X", "W", "", "C"), testNode(t, 17, "Add", []string{"C", "R"}, []string{"Y"})}
			},
			inputs: map[string][]int{"X": {1, 3, 5, 5}, "R": {1, 4, 5, 5}},
			inits:  map[string]*onnx.Tensor{"W": w(4, 3, 3, 3)},
			output: []string{"Y"}, steps: 1, fusedAway: []string{"C"},
		},
		{
			// The residual broadcasts: not an epilogue, so the fused step
			// falls back to the separate kernels at run time.
			name: "Conv+Add broadcast (fallback)",
			nodes: func(t *testing.T) []*onnx.Node {
				return []*onnx.Node{conv(t, "X", "W", "B", "C"), testNode(t, 17, "Add", []string{"C", "R"}, []string{"A"}), testNode(t, 17, "Relu", []string{"A"}, []string{"Y"})}
			},
			inputs: map[string][]int{"X": {1, 3, 5, 5}, "R": {4, 1, 1}},
			inits:  map[string]*onnx.Tensor{"W": w(4, 3, 3, 3), "B": w(4)},
			output: []string{"Y"}, steps: 1, fusedAway: []string{"C", "A"},
		},
		{
			name: "depthwise Conv+Clip",
			nodes: func(t *testing.T) []*onnx.Node {
				return []*onnx.Node{conv(t, "X", "W", "B", "C", intAttr("group", 6), intsAttr("strides", 2, 2)), testNode(t, 17, "Clip", []string{"C", "lo", "hi"}, []string{"Y"})}
			},
			inputs: map[string][]int{"X": {2, 6, 11, 10}},
			inits:  map[string]*onnx.Tensor{"W": w(6, 1, 3, 3), "B": w(6), "lo": scalar(0), "hi": scalar(1)},
			output: []string{"Y"}, steps: 1, fusedAway: []string{"C"},
		},
		{
			// The depthwise kernels' own clamp cannot take a clamp that
			// comes after a residual: it runs over each plane after them.
			name: "depthwise 5x5 Conv+Add+Relu, depthwise Conv+HardSwish",
			nodes: func(t *testing.T) []*onnx.Node {
				return []*onnx.Node{
					testNode(t, 17, "Conv", []string{"X", "W5", "B"}, []string{"C1"}, intsAttr("pads", 2, 2, 2, 2), intAttr("group", 6)),
					testNode(t, 17, "Add", []string{"C1", "X"}, []string{"A1"}),
					testNode(t, 17, "Relu", []string{"A1"}, []string{"Y1"}),
					conv(t, "X", "W3", "B", "C2", intAttr("group", 6)),
					testNode(t, 17, "HardSwish", []string{"C2"}, []string{"Y2"}),
				}
			},
			inputs: map[string][]int{"X": {2, 6, 9, 12}},
			inits:  map[string]*onnx.Tensor{"W5": w(6, 1, 5, 5), "W3": w(6, 1, 3, 3), "B": w(6)},
			output: []string{"Y1", "Y2"}, steps: 2, fusedAway: []string{"C1", "A1", "C2"},
		},
		{
			name: "pointwise Conv+HardSwish",
			nodes: func(t *testing.T) []*onnx.Node {
				return []*onnx.Node{testNode(t, 17, "Conv", []string{"X", "W", "B"}, []string{"C"}), testNode(t, 17, "HardSwish", []string{"C"}, []string{"Y"})}
			},
			inputs: map[string][]int{"X": {1, 8, 7, 7}},
			inits:  map[string]*onnx.Tensor{"W": w(12, 8, 1, 1), "B": w(12)},
			output: []string{"Y"}, steps: 1, fusedAway: []string{"C"},
		},
		{
			name: "Conv+Sigmoid, Conv+LeakyRelu, Conv+HardSigmoid",
			nodes: func(t *testing.T) []*onnx.Node {
				return []*onnx.Node{
					conv(t, "X", "W", "B", "C1"), testNode(t, 17, "Sigmoid", []string{"C1"}, []string{"Y1"}),
					conv(t, "X", "W", "B", "C2"), testNode(t, 17, "LeakyRelu", []string{"C2"}, []string{"Y2"}, floatAttr("alpha", 0.1)),
					conv(t, "X", "W", "B", "C3"), testNode(t, 17, "HardSigmoid", []string{"C3"}, []string{"Y3"}, floatAttr("alpha", 0.3), floatAttr("beta", 0.4)),
				}
			},
			inputs: map[string][]int{"X": {1, 2, 6, 5}},
			inits:  map[string]*onnx.Tensor{"W": w(5, 2, 3, 3), "B": w(5)},
			output: []string{"Y1", "Y2", "Y3"}, steps: 3, fusedAway: []string{"C1", "C2", "C3"},
		},
		{
			name: "Gemm+Relu",
			nodes: func(t *testing.T) []*onnx.Node {
				return []*onnx.Node{testNode(t, 17, "Gemm", []string{"X", "W", "B"}, []string{"G"}, intAttr("transB", 1)), testNode(t, 17, "Relu", []string{"G"}, []string{"Y"})}
			},
			inputs: map[string][]int{"X": {3, 40}},
			inits:  map[string]*onnx.Tensor{"W": w(30, 40), "B": w(30)},
			output: []string{"Y"}, steps: 1, fusedAway: []string{"G"},
		},
		{
			name: "Gemm (many rows)+Add+Clip",
			nodes: func(t *testing.T) []*onnx.Node {
				return []*onnx.Node{
					testNode(t, 17, "Gemm", []string{"X", "W", "B"}, []string{"G"}),
					testNode(t, 17, "Add", []string{"G", "R"}, []string{"A"}),
					testNode(t, 17, "Clip", []string{"A", "lo", "hi"}, []string{"Y"}),
				}
			},
			inputs: map[string][]int{"X": {20, 9}, "R": {20, 17}},
			inits:  map[string]*onnx.Tensor{"W": w(9, 17), "B": w(17), "lo": scalar(-1), "hi": scalar(1)},
			output: []string{"Y"}, steps: 1, fusedAway: []string{"G", "A"},
		},
		{
			name: "MatMul+Add bias+Add residual+Relu",
			nodes: func(t *testing.T) []*onnx.Node {
				return []*onnx.Node{
					testNode(t, 17, "MatMul", []string{"X", "W"}, []string{"M"}),
					testNode(t, 17, "Add", []string{"M", "B"}, []string{"A1"}),
					testNode(t, 17, "Add", []string{"R", "A1"}, []string{"A2"}),
					testNode(t, 17, "Relu", []string{"A2"}, []string{"Y"}),
				}
			},
			inputs: map[string][]int{"X": {2, 7, 16}, "R": {2, 7, 24}},
			inits:  map[string]*onnx.Tensor{"W": w(16, 24), "B": w(24)},
			output: []string{"Y"}, steps: 1, fusedAway: []string{"M", "A1", "A2"},
		},
		{
			name: "Conv output read twice (no fusion)",
			nodes: func(t *testing.T) []*onnx.Node {
				return []*onnx.Node{
					conv(t, "X", "W", "B", "C"),
					testNode(t, 17, "Relu", []string{"C"}, []string{"Y"}),
					testNode(t, 17, "Sigmoid", []string{"C"}, []string{"Z"}),
				}
			},
			inputs: map[string][]int{"X": {1, 3, 6, 6}},
			inits:  map[string]*onnx.Tensor{"W": w(4, 3, 3, 3), "B": w(4)},
			output: []string{"Y", "Z"}, steps: 3,
		},
		{
			name: "Conv output a graph output (no fusion)",
			nodes: func(t *testing.T) []*onnx.Node {
				return []*onnx.Node{conv(t, "X", "W", "B", "C"), testNode(t, 17, "Relu", []string{"C"}, []string{"Y"})}
			},
			inputs: map[string][]int{"X": {1, 3, 6, 6}},
			inits:  map[string]*onnx.Tensor{"W": w(4, 3, 3, 3), "B": w(4)},
			output: []string{"Y", "C"}, steps: 2,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkFusion(t, r, c, 0) })
		t.Run(c.name+"/NaN", func(t *testing.T) { checkFusion(t, r, c, 0.1) })
	}
}

// checkFusion builds c with and without Optimize, checks the optimized
// plan, and compares the outputs on random inputs (a share nanShare of
// them NaN): equal within float rounding, NaN where the unfused graph has
// NaN.
func checkFusion(t *testing.T, r *rand.Rand, c fuseCase, nanShare float64) {
	var inputs, outputs []*onnx.ValueInfo
	feeds := map[string]onnx.Value{}
	for name, shape := range c.inputs {
		dims := make([]int64, len(shape))
		for i, d := range shape {
			dims[i] = int64(d)
		}
		inputs = append(inputs, &onnx.ValueInfo{Name: name, Type: floatTensorType(dims...)})
		x := convRandTensor(r, shape...)
		for i := range x.Float32s() {
			if r.Float64() < nanShare {
				x.Float32s()[i] = float32(math.NaN())
			}
		}
		feeds[name] = x
	}
	for _, name := range c.output {
		outputs = append(outputs, &onnx.ValueInfo{Name: name})
	}
	var inits []*onnx.Initializer
	for name, v := range c.inits {
		inits = append(inits, &onnx.Initializer{Name: name, Tensor: v})
	}
	model := func() *onnx.Model { return testModel(c.nodes(t), inputs, outputs, inits...) }
	plain, err := New(model(), backend.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	optimized, err := New(model(), backend.Options{Threads: 2, Optimize: true})
	if err != nil {
		t.Fatal(err)
	}
	e := optimized.(*executor)
	if len(e.plan) != c.steps {
		t.Errorf("the optimized plan has %d steps, want %d", len(e.plan), c.steps)
	}
	if len(e.fusedAway) != len(c.fusedAway) {
		t.Errorf("fused away %v, want %v", e.fusedAway, c.fusedAway)
	}
	want, err := plain.Inference(feeds)
	if err != nil {
		t.Fatal(err)
	}
	for run := range 2 { // the second run reuses the kernels' buffers
		got, err := optimized.Inference(feeds)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range c.output {
			compareFused(t, name, got[name].(*onnx.Tensor), want[name].(*onnx.Tensor), run)
		}
	}
	for _, name := range c.fusedAway {
		if _, ok := e.fusedAway[name]; !ok {
			t.Errorf("%q was not fused away", name)
		}
		_, err := optimized.Fetch(name)
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "not materialised") {
			t.Errorf("Fetch(%q) = %v, want an error saying it is not materialised", name, err)
		}
		if err := optimized.AddOutput(name); err == nil {
			t.Errorf("AddOutput(%q) succeeded", name)
		}
	}
	// Without a fallback, the values inside a chain are never stored.
	if !strings.Contains(c.name, "fallback") {
		for _, name := range c.fusedAway {
			if v := e.slots[e.slotOf[name]]; v != nil {
				t.Errorf("%q was stored: the fused kernel did not run", name)
			}
		}
	}
}

func compareFused(t *testing.T, name string, got, want *onnx.Tensor, run int) {
	t.Helper()
	if !sameShape(got.Shape, want.Shape) {
		t.Fatalf("run %d: %s has shape %v, want %v", run, name, got.Shape, want.Shape)
	}
	g, w := got.Float32s(), want.Float32s()
	nans := 0
	for i := range w {
		if math.IsNaN(float64(w[i])) {
			nans++
			if !math.IsNaN(float64(g[i])) {
				t.Fatalf("run %d: %s[%d] = %v, want NaN", run, name, i, g[i])
			}
			continue
		}
		if d := math.Abs(float64(g[i] - w[i])); !(d <= 1e-5*(1+math.Abs(float64(w[i])))) {
			t.Fatalf("run %d: %s[%d] = %v, want %v", run, name, i, g[i], w[i])
		}
	}
}

// The fused kernel agrees on float64 too, and through the im2col-by-blocks
// path of large convolutions (forced here by lowering its threshold).
func TestFusionFloat64AndImplicitIm2col(t *testing.T) {
	old := convImplicitMin
	convImplicitMin = 1
	defer func() { convImplicitMin = old }()
	r := randv2.New(randv2.NewPCG(5, 6))
	nodes := func() []*onnx.Node {
		return []*onnx.Node{
			testNode(t, 17, "Conv", []string{"X", "W", "B"}, []string{"C"}, intsAttr("pads", 1, 1, 1, 1)),
			testNode(t, 17, "Add", []string{"C", "R"}, []string{"A"}),
			testNode(t, 17, "Clip", []string{"A", "lo", "hi"}, []string{"Y"}),
		}
	}
	dt := &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Double}
	weights, bias := randDoubles(r, 7, 3, 3, 3), randDoubles(r, 7)
	model := func() *onnx.Model {
		return testModel(nodes(), []*onnx.ValueInfo{{Name: "X", Type: dt}, {Name: "R", Type: dt}}, []*onnx.ValueInfo{{Name: "Y"}},
			&onnx.Initializer{Name: "W", Tensor: weights},
			&onnx.Initializer{Name: "B", Tensor: bias},
			&onnx.Initializer{Name: "lo", Tensor: onnx.FromSlice([]float64{-0.5})},
			&onnx.Initializer{Name: "hi", Tensor: onnx.FromSlice([]float64{0.75})})
	}
	feeds := map[string]onnx.Value{"X": randDoubles(r, 2, 3, 12, 11), "R": randDoubles(r, 2, 7, 12, 11)}
	plain, err := New(model(), backend.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	fused, err := New(model(), backend.Options{Threads: 2, Optimize: true})
	if err != nil {
		t.Fatal(err)
	}
	if steps := len(fused.(*executor).plan); steps != 1 {
		t.Fatalf("%d steps, want 1", steps)
	}
	want, err := plain.Inference(feeds)
	if err != nil {
		t.Fatal(err)
	}
	got, err := fused.Inference(feeds)
	if err != nil {
		t.Fatal(err)
	}
	g, w := got["Y"].(*onnx.Tensor).Float64s(), want["Y"].(*onnx.Tensor).Float64s()
	clipped := 0
	for i := range w {
		if math.Abs(g[i]-w[i]) > 1e-12 {
			t.Fatalf("Y[%d] = %v, want %v", i, g[i], w[i])
		}
		if w[i] == -0.5 || w[i] == 0.75 {
			clipped++
		}
	}
	if clipped == 0 || clipped == len(w) {
		t.Fatalf("%d of %d values at the bounds: the test does not exercise the clamp", clipped, len(w))
	}
}

// A network with fusions refuses backprop with a clear error instead of
// differentiating through values it never stored.
func TestFusionRefusesBackprop(t *testing.T) {
	net, err := New(mlpModel(t), backend.Options{Optimize: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(net.(*executor).fusedAway) == 0 {
		t.Fatal("MatMul+Add+Relu did not fuse")
	}
	x := onnx.FromSlice([]float32{1, 2, 3}, 1, 3)
	out, err := net.Inference(map[string]onnx.Value{"X": x})
	if err != nil {
		t.Fatal(err)
	}
	// Relu([1 2 3]·W + b) with W = [[1 -1] [2 -2] [3 -3]], b = 0.5: [14.5, 0].
	if y := out["Y"].(*onnx.Tensor).Float32s(); y[0] != 14.5 || y[1] != 0 {
		t.Fatalf("Y = %v, want [14.5 0]", y)
	}
	if _, err := net.InferenceAndBackprop(map[string]onnx.Value{"X": x}, "Y"); err == nil || !strings.Contains(err.Error(), "Optimize off") {
		t.Fatalf("InferenceAndBackprop = %v, want an error asking for Optimize off", err)
	}
}

// BenchmarkFusedLayers times layers the optimizer fuses, built unfused
// (Optimize off: the Conv, the Add and the activation each a kernel and
// a pass over memory) and fused, on one thread; -count interleaves them.
func BenchmarkFusedLayers(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	layers := []struct {
		name   string
		nodes  []*onnx.Node
		inputs map[string][]int
		inits  map[string]*onnx.Tensor
	}{
		{
			// ResNet-18's first stage: 3×3, 64 channels, 56×56, with the
			// block's residual and Relu.
			name: "Conv3x3+Add+Relu 64x56x56",
			nodes: []*onnx.Node{
				testNode(b, 17, "Conv", []string{"X", "W", "B"}, []string{"C"}, intsAttr("pads", 1, 1, 1, 1)),
				testNode(b, 17, "Add", []string{"C", "X"}, []string{"A"}),
				testNode(b, 17, "Relu", []string{"A"}, []string{"Y"}),
			},
			inputs: map[string][]int{"X": {1, 64, 56, 56}},
			inits:  map[string]*onnx.Tensor{"W": convRandTensor(r, 64, 64, 3, 3), "B": convRandTensor(r, 64)},
		},
		{
			// MobileNetV2's expansion: 1×1, 24 to 144 channels, 56×56, Relu6.
			name: "Conv1x1+Clip 144x56x56",
			nodes: []*onnx.Node{
				testNode(b, 17, "Conv", []string{"X", "W", "B"}, []string{"C"}),
				testNode(b, 17, "Clip", []string{"C", "lo", "hi"}, []string{"Y"}),
			},
			inputs: map[string][]int{"X": {1, 24, 56, 56}},
			inits: map[string]*onnx.Tensor{"W": convRandTensor(r, 144, 24, 1, 1), "B": convRandTensor(r, 144),
				"lo": onnx.FromSlice([]float32{0}), "hi": onnx.FromSlice([]float32{6})},
		},
		{
			// MobileNetV2's depthwise stage: 3×3, 144 channels, 56×56, Relu6.
			name: "depthwise3x3+Clip 144x56x56",
			nodes: []*onnx.Node{
				testNode(b, 17, "Conv", []string{"X", "W", "B"}, []string{"C"}, intsAttr("pads", 1, 1, 1, 1), intAttr("group", 144)),
				testNode(b, 17, "Clip", []string{"C", "lo", "hi"}, []string{"Y"}),
			},
			inputs: map[string][]int{"X": {1, 144, 56, 56}},
			inits: map[string]*onnx.Tensor{"W": convRandTensor(r, 144, 1, 3, 3), "B": convRandTensor(r, 144),
				"lo": onnx.FromSlice([]float32{0}), "hi": onnx.FromSlice([]float32{6})},
		},
	}
	for _, l := range layers {
		var inputs []*onnx.ValueInfo
		feeds := map[string]onnx.Value{}
		for name, shape := range l.inputs {
			inputs = append(inputs, &onnx.ValueInfo{Name: name})
			feeds[name] = convRandTensor(r, shape...)
		}
		var inits []*onnx.Initializer
		for name, t := range l.inits {
			inits = append(inits, &onnx.Initializer{Name: name, Tensor: t})
		}
		m := testModel(l.nodes, inputs, []*onnx.ValueInfo{{Name: "Y"}}, inits...)
		for _, optimize := range []bool{false, true} {
			name := l.name + "/unfused"
			if optimize {
				name = l.name + "/fused"
			}
			b.Run(name, func(b *testing.B) {
				net, err := New(m, backend.Options{Threads: 1, Optimize: optimize})
				if err != nil {
					b.Fatal(err)
				}
				if fused := len(net.(*executor).fusedAway) > 0; fused != optimize {
					b.Fatalf("fused: %v", fused)
				}
				for b.Loop() {
					if _, err := net.Inference(feeds); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
