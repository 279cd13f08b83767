package native

import (
	"math"
	"math/rand"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// packedWeightsModel has a constant weight in every kind of product that
// packs one: a grouped Conv fused with its Relu (6 filters per group, more
// than the GEMM's few rows), a 1×1 Conv left unfused (its output is a
// graph output too), a Gemm whose constant is B (transposed), one whose
// constant is A (transposed), a batched MatMul whose constant is B, a
// MatMul whose constant is A, and a 3×3 Conv of one group, which the
// direct kernels take on AVX-512 (their repacked weights kept too).
func packedWeightsModel(t *testing.T, weights map[string]*onnx.Tensor) *onnx.Model {
	nodes := []*onnx.Node{
		testNode(t, 17, "Conv", []string{"X", "W", "B"}, []string{"C"}, intsAttr("pads", 1, 1, 1, 1), intAttr("group", 2)),
		testNode(t, 17, "Relu", []string{"C"}, []string{"Y1"}),
		testNode(t, 17, "Conv", []string{"X", "W2", ""}, []string{"Y2"}),
		testNode(t, 17, "Gemm", []string{"G", "Wg", "Bg"}, []string{"Y3"}, intAttr("transB", 1)),
		testNode(t, 17, "MatMul", []string{"M", "Wm"}, []string{"Y4"}),
		testNode(t, 17, "MatMul", []string{"Am", "N"}, []string{"Y5"}),
		testNode(t, 17, "Gemm", []string{"Ag", "H"}, []string{"Y6"}, intAttr("transA", 1)),
		testNode(t, 17, "Conv", []string{"X", "W3", "B3"}, []string{"Y7"}, intsAttr("pads", 1, 1, 1, 1)),
	}
	inputs := []*onnx.ValueInfo{
		{Name: "X", Type: floatTensorType(3, 4, 9, 9)},
		{Name: "G", Type: floatTensorType(6, 10)},
		{Name: "M", Type: floatTensorType(2, 5, 10)},
		{Name: "N", Type: floatTensorType(10, 4)},
		{Name: "H", Type: floatTensorType(10, 5)},
	}
	var outputs []*onnx.ValueInfo
	for _, name := range []string{"Y1", "Y2", "Y3", "Y4", "Y5", "Y6", "Y7"} {
		outputs = append(outputs, &onnx.ValueInfo{Name: name})
	}
	var inits []*onnx.Initializer
	for _, name := range []string{"W", "B", "W2", "Wg", "Bg", "Wm", "Am", "Ag", "W3", "B3"} {
		inits = append(inits, &onnx.Initializer{Name: name, Tensor: weights[name].Clone()})
	}
	return testModel(nodes, inputs, outputs, inits...)
}

func packedWeightsShapes() map[string][]int {
	return map[string][]int{"W": {12, 2, 3, 3}, "B": {12}, "W2": {8, 4, 1, 1}, "Wg": {7, 10}, "Bg": {7}, "Wm": {10, 9}, "Am": {6, 10}, "Ag": {10, 6}, "W3": {10, 4, 3, 3}, "B3": {10}}
}

// An optimized network, whose kernels pack their constant weights, gives
// what the plain network (which packs them at every product) gives, on
// the first run and on warm ones; after a Feed of any weight, twice (the
// second Feed overwrites the slot's own copy in place, so only the slot's
// version tells that it changed), and after a weight is changed in place
// as UpdateParams lets an optimizer do, both networks compute with the new
// weight. Both the im2col and the by-blocks (implicit) convolution paths
// are covered.
func TestPackedWeightsFollowTheWeights(t *testing.T) {
	for _, implicit := range []bool{false, true} {
		if implicit {
			old := convImplicitMin
			convImplicitMin = 1
			defer func() { convImplicitMin = old }()
		}
		r := rand.New(rand.NewSource(77))
		weights := map[string]*onnx.Tensor{}
		for name, shape := range packedWeightsShapes() {
			weights[name] = convRandTensor(r, shape...)
		}
		feeds := map[string]onnx.Value{
			"X": convRandTensor(r, 3, 4, 9, 9), "G": convRandTensor(r, 6, 10),
			"M": convRandTensor(r, 2, 5, 10), "N": convRandTensor(r, 10, 4),
			"H": convRandTensor(r, 10, 5),
		}
		plain, err := New(packedWeightsModel(t, weights), backend.Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		optimized, err := New(packedWeightsModel(t, weights), backend.Options{Threads: 2, Optimize: true})
		if err != nil {
			t.Fatal(err)
		}
		compare := func(when string) map[string]onnx.Value {
			t.Helper()
			want, err := plain.Inference(feeds)
			if err != nil {
				t.Fatal(err)
			}
			for run := range 2 {
				got, err := optimized.Inference(feeds)
				if err != nil {
					t.Fatal(err)
				}
				for name, w := range want {
					g, w := got[name].(*onnx.Tensor).Float32s(), w.(*onnx.Tensor).Float32s()
					for i := range w {
						if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
							t.Fatalf("implicit=%v, %s, run %d: %s[%d] = %v, the plain network gives %v", implicit, when, run, name, i, g[i], w[i])
						}
					}
				}
			}
			return want
		}
		before := compare("first runs")
		// Which output each weight changes.
		outputOf := map[string]string{"W": "Y1", "W2": "Y2", "Wg": "Y3", "Wm": "Y4", "Am": "Y5", "Ag": "Y6", "W3": "Y7"}
		for _, name := range []string{"W", "W2", "Wg", "Wm", "Am", "Ag", "W3"} {
			for range 2 {
				w := convRandTensor(r, packedWeightsShapes()[name]...)
				for _, net := range []network.Network{plain, optimized} {
					if err := net.Feed(name, w); err != nil {
						t.Fatal(err)
					}
				}
				after := compare("after Feed " + name)
				changed(t, before, after, outputOf[name], name)
				before = after
			}
		}
		// In place, through the slot UpdateParams hands an optimizer.
		for _, name := range []string{"W", "Wg", "Wm", "Am", "Ag", "W3"} {
			for _, net := range []network.Network{plain, optimized} {
				e := net.(*executor)
				p, err := e.ownParam(e.slotOf[name])
				if err != nil {
					t.Fatal(err)
				}
				for i := range p.Float32s() {
					p.Float32s()[i] *= -0.5
				}
			}
			after := compare("after changing " + name + " in place")
			changed(t, before, after, outputOf[name], name)
			before = after
		}
	}
}

// changed fails unless output differs between before and after, as the
// change of weight should make it.
func changed(t *testing.T, before, after map[string]onnx.Value, output, weight string) {
	t.Helper()
	b, a := before[output].(*onnx.Tensor).Float32s(), after[output].(*onnx.Tensor).Float32s()
	for i := range b {
		if a[i] != b[i] {
			return
		}
	}
	t.Fatalf("%s did not change after %s did", output, weight)
}

// Only the constants of optimized networks are packed: not the weights
// of a network that may train, nor an initializer that is also a graph
// input (a default each run may override), nor a value computed by a
// node.
func TestOnlyConstantsOfOptimizedNetworksArePacked(t *testing.T) {
	r := rand.New(rand.NewSource(78))
	weights := map[string]*onnx.Tensor{}
	for name, shape := range packedWeightsShapes() {
		weights[name] = convRandTensor(r, shape...)
	}
	for _, optimize := range []bool{false, true} {
		net, err := New(packedWeightsModel(t, weights), backend.Options{Optimize: optimize})
		if err != nil {
			t.Fatal(err)
		}
		b := &builder{e: net.(*executor)}
		for _, name := range []string{"W", "W2", "Wg", "Wm", "Am", "Ag"} {
			if got := b.constantWeight(name) != nil; got != optimize {
				t.Errorf("Optimize %v: weight %s packed: %v", optimize, name, got)
			}
		}
		for _, name := range []string{"X", "Y2", "C"} {
			if b.constantWeight(name) != nil {
				t.Errorf("Optimize %v: %s would be packed", optimize, name)
			}
		}
	}
	m := packedWeightsModel(t, weights)
	m.Graph.Inputs = append(m.Graph.Inputs, &onnx.ValueInfo{Name: "W", Type: floatTensorType(12, 2, 3, 3)})
	net, err := New(m, backend.Options{Optimize: true})
	if err != nil {
		t.Fatal(err)
	}
	if (&builder{e: net.(*executor)}).constantWeight("W") != nil {
		t.Errorf("W, a graph input with a default, would be packed")
	}
}
