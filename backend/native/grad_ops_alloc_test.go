package native

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// The backward rules of these operators (gradOpCases, then the ones
// checked with a weighted-sum loss) allocate nothing once their shapes
// repeat.
func TestGradOpsNoAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for _, c := range gradOpCases(t, r) {
		inputs := map[string][]int64{}
		feeds := map[string]onnx.Value{}
		for name, v := range c.feeds {
			inputs[name] = shapeAsInt64(v.Shape)
			feeds[name] = v
		}
		params := map[string]*onnx.Tensor{"gl_shape": onnx.FromSlice([]int64{1, -1}, 2)}
		for k, v := range c.consts {
			params[k] = v
		}
		probe, err := New(graphOf(t, c.nodes, inputs, c.out, params), backend.Options{})
		if err != nil {
			t.Fatal(err)
		}
		outs, err := probe.Inference(feeds)
		if err != nil {
			t.Fatal(err)
		}
		params["gl_w"] = randDoubles(r, outs[c.out].(*onnx.Tensor).Len(), 1)
		nodes := append(append([]*onnx.Node{}, c.nodes...),
			testNode(t, 17, "Reshape", []string{c.out, "gl_shape"}, []string{"gl_flat"}),
			testNode(t, 17, "MatMul", []string{"gl_flat", "gl_w"}, []string{"gl_loss"}))
		if a := backwardStepAllocs(t, graphOf(t, nodes, inputs, "gl_loss", params), feeds, "gl_loss", c.name); a != 0 {
			t.Errorf("%s: %v allocations per backward step", c.name, a)
		}
	}
	r = rand.New(rand.NewPCG(5, 6))
	f64 := []struct {
		op    string
		nodes []*onnx.Node
		feeds map[string][]int
	}{
		{"GridSample", []*onnx.Node{testNode(t, 20, "GridSample", []string{"X", "G"}, []string{"Y"}, gconvStrAttr("mode", "linear"))},
			map[string][]int{"X": {1, 2, 3, 3}, "G": {1, 2, 2, 2}}},
		{"LRN", []*onnx.Node{testNode(t, 13, "LRN", []string{"X"}, []string{"Y"}, intAttr("size", 3))},
			map[string][]int{"X": {1, 4, 2, 2}}},
		{"RoiAlign", []*onnx.Node{
			gelemConst(t, "B", onnx.FromSlice([]int64{0}, 1)),
			testNode(t, 22, "RoiAlign", []string{"X", "R", "B"}, []string{"Y"}, intAttr("output_height", 2), intAttr("output_width", 2))},
			map[string][]int{"X": {1, 2, 5, 5}, "R": {1, 4}}},
		{"ReverseSequence", []*onnx.Node{
			gelemConst(t, "L", onnx.FromSlice([]int64{2, 3}, 2)),
			testNode(t, 10, "ReverseSequence", []string{"X", "L"}, []string{"Y"}, intAttr("batch_axis", 1), intAttr("time_axis", 0))},
			map[string][]int{"X": {3, 2, 2}}},
		{"MaxRoiPool", []*onnx.Node{
			gelemConst(t, "R", onnx.FromSlice([]float64{0, 0.5, 1, 3.5, 4}, 1, 5)),
			testNode(t, 22, "MaxRoiPool", []string{"X", "R"}, []string{"Y"}, intsAttr("pooled_shape", 2, 2))},
			map[string][]int{"X": {1, 2, 5, 5}}},
	}
	for _, c := range f64 {
		feeds := map[string]onnx.Value{}
		inputs := map[string][]int64{}
		for name, shape := range c.feeds {
			v := randDoubles(r, shape...)
			if name == "R" {
				copy(v.Float64s(), []float64{0.5, 0.7, 3.6, 4.1})
			}
			feeds[name], inputs[name] = v, gconvInts(shape)
		}
		m, loss := gconvWeightedModel(t, r, c.nodes, inputs, nil, feeds, []string{"Y"})
		if a := backwardStepAllocs(t, m, feeds, loss, c.op); a != 0 {
			t.Errorf("%s: %v allocations per backward step", c.op, a)
		}
	}
	cc := []*onnx.Node{testNode(t, 27, "CausalConvWithState", []string{"X", "W", "Bi"}, []string{"Y", "S"}, gconvStrAttr("activation", "silu"))}
	m, fv := float32LossModel(t, r, cc, map[string]*onnx.Tensor{"X": randFloat32s(r, 2, 2, 4), "W": randFloat32s(r, 2, 1, 3), "Bi": randFloat32s(r, 2)}, "Y", []int{2, 2, 4})
	if a := backwardStepAllocs(t, m, fv, "wl_L", "CausalConvWithState"); a != 0 {
		t.Errorf("CausalConvWithState: %v allocations per backward step", a)
	}
	la := []*onnx.Node{testNode(t, 27, "LinearAttention", []string{"Q", "K", "V", "", "G", "Be"}, []string{"Y", "S"},
		intAttr("q_num_heads", 2), intAttr("kv_num_heads", 1), gconvStrAttr("update_rule", "gated_delta"))}
	m, fv = float32LossModel(t, r, la, map[string]*onnx.Tensor{"Q": randFloat32s(r, 1, 3, 4), "K": randFloat32s(r, 1, 3, 2),
		"V": randFloat32s(r, 1, 3, 2), "G": randFloat32s(r, 1, 3, 1), "Be": randFloat32s(r, 1, 3, 1)}, "Y", []int{1, 3, 4})
	if a := backwardStepAllocs(t, m, fv, "wl_L", "LinearAttention"); a != 0 {
		t.Errorf("LinearAttention: %v allocations per backward step", a)
	}
}

// backwardStepAllocs runs the backward step of the node of type opType once
// more and returns its allocations per run.
func backwardStepAllocs(t *testing.T, m *onnx.Model, feeds map[string]onnx.Value, loss, opType string) float64 {
	t.Helper()
	net, err := New(m, backend.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := net.InferenceAndBackprop(feeds, loss); err != nil {
		t.Fatal(err)
	}
	e := net.(*executor)
	bp := e.backward[loss]
	for _, step := range bp.steps {
		if step.node.OpType != opType {
			continue
		}
		return testing.AllocsPerRun(20, func() {
			if err := step.run(e.slots, bp.state); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Fatalf("no backward step for %s", opType)
	return 0
}

// gradOpCases is one small case per backward rule of TopK, Trilu, Compress,
// CenterCropPad, CumProd, MaxUnpool, Col2Im, LpNormalization,
// TensorScatter and Det.
func gradOpCases(t *testing.T, r *rand.Rand) []gradShapeCase {
	x := func(shape ...int) map[string]*onnx.Tensor {
		return map[string]*onnx.Tensor{"X": randDoubles(r, shape...)}
	}
	return []gradShapeCase{
		{name: "TopK", nodes: []*onnx.Node{testNode(t, 11, "TopK", []string{"X", "K"}, []string{"Y", "I"}, intAttr("axis", 1))},
			feeds: x(2, 4, 3), consts: map[string]*onnx.Tensor{"K": i64s(2)}, out: "Y"},
		{name: "Trilu", nodes: []*onnx.Node{testNode(t, 14, "Trilu", []string{"X"}, []string{"Y"})}, feeds: x(2, 3, 4), out: "Y"},
		{name: "Compress", nodes: []*onnx.Node{testNode(t, 11, "Compress", []string{"X", "C"}, []string{"Y"}, intAttr("axis", 1))},
			feeds: x(2, 3), consts: map[string]*onnx.Tensor{"C": onnx.FromSlice([]bool{true, false, true}, 3)}, out: "Y"},
		{name: "CenterCropPad", nodes: []*onnx.Node{testNode(t, 18, "CenterCropPad", []string{"X", "S"}, []string{"Y"})},
			feeds: x(5, 2, 4), consts: map[string]*onnx.Tensor{"S": i64s(2, 5, 4)}, out: "Y"},
		{name: "CumProd", nodes: []*onnx.Node{testNode(t, 26, "CumProd", []string{"X", "A"}, []string{"Y"}, intAttr("reverse", 1))},
			feeds: x(2, 5), consts: map[string]*onnx.Tensor{"A": onnx.FromSlice([]int64{1})}, out: "Y"},
		{name: "MaxUnpool", nodes: []*onnx.Node{testNode(t, 11, "MaxUnpool", []string{"X", "I", "S"}, []string{"Y"}, intsAttr("kernel_shape", 2, 2), intsAttr("strides", 2, 2))},
			feeds: x(1, 1, 2, 2), consts: map[string]*onnx.Tensor{"I": onnx.FromSlice([]int64{0, 3, 9, 15}, 1, 1, 2, 2), "S": i64s(1, 1, 5, 5)}, out: "Y"},
		{name: "Col2Im", nodes: []*onnx.Node{testNode(t, 18, "Col2Im", []string{"X", "IS", "BS"}, []string{"Y"})},
			feeds: x(2, 2*4, 6), consts: map[string]*onnx.Tensor{"IS": i64s(3, 4), "BS": i64s(2, 2)}, out: "Y"},
		{name: "LpNormalization", nodes: []*onnx.Node{testNode(t, 22, "LpNormalization", []string{"X"}, []string{"Y"})}, feeds: x(2, 3), out: "Y"},
		{name: "TensorScatter", nodes: []*onnx.Node{testNode(t, 24, "TensorScatter", []string{"X", "U", "W"}, []string{"Y"}, intAttr("axis", 1))},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 2, 4, 2), "U": randDoubles(r, 2, 2, 2)}, consts: map[string]*onnx.Tensor{"W": i64s(0, 2)}, out: "Y"},
		{name: "Det", nodes: []*onnx.Node{testNode(t, 22, "Det", []string{"X"}, []string{"Y"})}, feeds: x(2, 3, 3), out: "Y"},
	}
}

// The float32 kernels of gradOpCases agree with the float64 ones (checked
// against central differences in the operators' grad_*_test.go files); the
// float32 graph ends in a Cast to float64.
func TestGradOpsFloat32MatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	for _, c := range gradOpCases(t, r) {
		grads := map[onnx.DataType]map[string][]float64{}
		w := randDoubles(r, 64, 1)
		for _, typ := range []onnx.DataType{onnx.Float, onnx.Double} {
			var ins []*onnx.ValueInfo
			feeds := map[string]onnx.Value{}
			for _, name := range sortedNames(c.feeds) {
				v := c.feeds[name]
				in := floatTensorType(shapeAsInt64(v.Shape)...)
				in.Elem = typ
				ins = append(ins, &onnx.ValueInfo{Name: name, Type: in})
				if typ == onnx.Float {
					f := onnx.NewTensor(onnx.Float, v.Shape...)
					for i, x := range v.Float64s() {
						f.Data.([]float32)[i] = float32(x)
					}
					feeds[name] = f
				} else {
					feeds[name] = v
				}
			}
			inits := []*onnx.Initializer{{Name: "gl_shape", Tensor: onnx.FromSlice([]int64{1, -1}, 2)}}
			for _, name := range sortedNames(c.consts) {
				inits = append(inits, &onnx.Initializer{Name: name, Tensor: c.consts[name]})
			}
			probe, err := New(testModel(c.nodes, ins, []*onnx.ValueInfo{{Name: c.out}}, inits...), backend.Options{})
			if err != nil {
				t.Fatal(err)
			}
			outs, err := probe.Inference(feeds)
			if err != nil {
				t.Fatal(err)
			}
			n := outs[c.out].(*onnx.Tensor).Len()
			wt := onnx.FromSlice(append([]float64{}, w.Float64s()[:n]...), n, 1)
			inits = append(inits, &onnx.Initializer{Name: "gl_w", Tensor: wt})
			nodes := append(append([]*onnx.Node{}, c.nodes...),
				testNode(t, 13, "Cast", []string{c.out}, []string{"gl_cast"}, intAttr("to", int64(onnx.Double))),
				testNode(t, 17, "Reshape", []string{"gl_cast", "gl_shape"}, []string{"gl_flat"}),
				testNode(t, 17, "MatMul", []string{"gl_flat", "gl_w"}, []string{"gl_loss"}))
			net, err := New(testModel(nodes, ins, []*onnx.ValueInfo{{Name: "gl_loss"}}, inits...), backend.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := net.InferenceAndBackprop(feeds, "gl_loss"); err != nil {
				t.Fatalf("%s %v: %v", c.name, typ, err)
			}
			grads[typ] = map[string][]float64{}
			for name := range c.feeds {
				gv, err := net.Fetch(network.GradName(name))
				if err != nil {
					t.Fatal(err)
				}
				g := gv[0].(*onnx.Tensor)
				vals := make([]float64, g.Len())
				for i := range vals {
					switch d := g.Data.(type) {
					case []float32:
						vals[i] = float64(d[i])
					case []float64:
						vals[i] = d[i]
					}
				}
				grads[typ][name] = vals
			}
		}
		for name, want := range grads[onnx.Double] {
			got := grads[onnx.Float][name]
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-4*math.Max(1, math.Abs(want[i])) {
					t.Errorf("%s: d%s[%d] = %v in float32, %v in float64", c.name, name, i, got[i], want[i])
				}
			}
		}
	}
}
