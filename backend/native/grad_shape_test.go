package native

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// gradShapeCase is one single-operator gradient check: nodes computing out
// from fed float64 inputs and initializers (float ones are parameters and
// are checked too; integer ones are shapes, axes and indices).
type gradShapeCase struct {
	name   string
	nodes  []*onnx.Node
	feeds  map[string]*onnx.Tensor
	consts map[string]*onnx.Tensor
	out    string
}

// gradCheckCase appends L = Σ w ⊙ out (fixed random w) to the case's nodes
// and compares backprop with central differences.
func gradCheckCase(t *testing.T, r *rand.Rand, c gradShapeCase, tol float64) {
	t.Helper()
	inputs := map[string][]int64{}
	feeds := map[string]onnx.Value{}
	for name, v := range c.feeds {
		inputs[name] = shapeAsInt64(v.Shape)
		feeds[name] = v
	}
	net, err := New(graphOf(t, c.nodes, inputs, c.out, c.consts), backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := net.Inference(feeds)
	if err != nil {
		t.Fatal(err)
	}
	n := outs[c.out].(*onnx.Tensor).Len()
	if n == 0 {
		t.Fatalf("%s: empty output", c.name)
	}
	params := map[string]*onnx.Tensor{
		"gl_shape": onnx.FromSlice([]int64{1, -1}, 2),
		"gl_w":     randDoubles(r, n, 1),
	}
	for k, v := range c.consts {
		params[k] = v
	}
	nodes := append(append([]*onnx.Node{}, c.nodes...),
		testNode(t, 17, "Reshape", []string{c.out, "gl_shape"}, []string{"gl_flat"}),
		testNode(t, 17, "MatMul", []string{"gl_flat", "gl_w"}, []string{"gl_loss"}))
	checkGradients(t, graphOf(t, nodes, inputs, "gl_loss", params), feeds, "gl_loss", tol)
}

func i64s(v ...int64) *onnx.Tensor { return onnx.FromSlice(v, len(v)) }

func strAttrOf(name, v string) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrString, String: v}
}

func runGradCases(t *testing.T, seed uint64, cases []gradShapeCase) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { gradCheckCase(t, r, c, 1e-6) })
	}
}

func TestShapeGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	x234 := func() map[string]*onnx.Tensor { return map[string]*onnx.Tensor{"X": randDoubles(r, 2, 3, 4)} }
	runGradCases(t, 1, []gradShapeCase{
		{name: "Transpose perm", nodes: []*onnx.Node{testNode(t, 13, "Transpose", []string{"X"}, []string{"Y"}, intsAttr("perm", 2, 0, 1))}, feeds: x234(), out: "Y"},
		{name: "Transpose reverse", nodes: []*onnx.Node{testNode(t, 1, "Transpose", []string{"X"}, []string{"Y"})}, feeds: x234(), out: "Y"},
		{name: "Flatten", nodes: []*onnx.Node{testNode(t, 13, "Flatten", []string{"X"}, []string{"Y"}, intAttr("axis", -1))}, feeds: x234(), out: "Y"},
		{name: "Squeeze 11", nodes: []*onnx.Node{testNode(t, 11, "Squeeze", []string{"X"}, []string{"Y"}, intsAttr("axes", 1))},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 2, 1, 3)}, out: "Y"},
		{name: "Squeeze 13", nodes: []*onnx.Node{testNode(t, 13, "Squeeze", []string{"X", "axes"}, []string{"Y"})},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 2, 1, 3)}, consts: map[string]*onnx.Tensor{"axes": i64s(-2)}, out: "Y"},
		{name: "Unsqueeze 1", nodes: []*onnx.Node{testNode(t, 1, "Unsqueeze", []string{"X"}, []string{"Y"}, intsAttr("axes", 0, 3))}, feeds: x234(), out: "Y"},
		{name: "Unsqueeze 13", nodes: []*onnx.Node{testNode(t, 13, "Unsqueeze", []string{"X", "axes"}, []string{"Y"})},
			feeds: x234(), consts: map[string]*onnx.Tensor{"axes": i64s(-1)}, out: "Y"},
		{name: "Concat 13", nodes: []*onnx.Node{testNode(t, 13, "Concat", []string{"A", "B", "A"}, []string{"Y"}, intAttr("axis", -1))},
			feeds: map[string]*onnx.Tensor{"A": randDoubles(r, 2, 2), "B": randDoubles(r, 2, 3)}, out: "Y"},
		{name: "Concat 1 default axis", nodes: []*onnx.Node{testNode(t, 1, "Concat", []string{"A", "B"}, []string{"Y"})},
			feeds: map[string]*onnx.Tensor{"A": randDoubles(r, 2, 1, 2), "B": randDoubles(r, 2, 3, 2)}, out: "Y"},
		{name: "Split 13 input, one output used", nodes: []*onnx.Node{
			testNode(t, 13, "Split", []string{"X", "split"}, []string{"P", "Q"}, intAttr("axis", 1)),
			testNode(t, 13, "Mul", []string{"Q", "Q"}, []string{"Y"})},
			feeds: x234(), consts: map[string]*onnx.Tensor{"split": i64s(1, 2)}, out: "Y"},
		{name: "Split 2 attr, both outputs", nodes: []*onnx.Node{
			testNode(t, 2, "Split", []string{"X"}, []string{"P", "Q"}, intAttr("axis", -1), intsAttr("split", 3, 1)),
			testNode(t, 13, "Mul", []string{"P", "Q"}, []string{"Y"})},
			feeds: x234(), out: "Y"},
		{name: "Split 18 uneven", nodes: []*onnx.Node{
			testNode(t, 18, "Split", []string{"X"}, []string{"P", "Q", "R"}, intAttr("axis", 0), intAttr("num_outputs", 3)),
			testNode(t, 13, "Concat", []string{"R", "P", "R"}, []string{"Y"}, intAttr("axis", 0))},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 5, 2)}, out: "Y"},
		{name: "Slice 1", nodes: []*onnx.Node{testNode(t, 1, "Slice", []string{"X"}, []string{"Y"},
			intsAttr("starts", 1, -3), intsAttr("ends", 100, -1), intsAttr("axes", 1, 2))}, feeds: x234(), out: "Y"},
		{name: "Slice 13 negative steps", nodes: []*onnx.Node{testNode(t, 13, "Slice", []string{"X", "s", "e", "a", "st"}, []string{"Y"})},
			feeds: x234(), consts: map[string]*onnx.Tensor{"s": i64s(-1, 0, 3), "e": i64s(-100, 3, 0), "a": i64s(2, 1, 0), "st": i64s(-2, 2, -1)}, out: "Y"},
		{name: "Expand", nodes: []*onnx.Node{testNode(t, 13, "Expand", []string{"X", "shape"}, []string{"Y"})},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 3, 1)}, consts: map[string]*onnx.Tensor{"shape": i64s(2, 1, 4)}, out: "Y"},
		{name: "Tile 13", nodes: []*onnx.Node{testNode(t, 13, "Tile", []string{"X", "reps"}, []string{"Y"})},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 2, 3)}, consts: map[string]*onnx.Tensor{"reps": i64s(2, 3)}, out: "Y"},
		{name: "Tile 1", nodes: []*onnx.Node{testNode(t, 1, "Tile", []string{"X", "tiles", "axis"}, []string{"Y"})},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 2, 3)}, consts: map[string]*onnx.Tensor{"tiles": onnx.Scalar(int64(3)), "axis": onnx.Scalar(int64(1))}, out: "Y"},
		{name: "DepthToSpace DCR", nodes: []*onnx.Node{testNode(t, 13, "DepthToSpace", []string{"X"}, []string{"Y"}, intAttr("blocksize", 2))},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 1, 8, 2, 3)}, out: "Y"},
		{name: "DepthToSpace CRD", nodes: []*onnx.Node{testNode(t, 13, "DepthToSpace", []string{"X"}, []string{"Y"}, intAttr("blocksize", 2), strAttrOf("mode", "CRD"))},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 2, 4, 2, 1)}, out: "Y"},
		{name: "SpaceToDepth", nodes: []*onnx.Node{testNode(t, 13, "SpaceToDepth", []string{"X"}, []string{"Y"}, intAttr("blocksize", 2))},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 1, 2, 4, 2)}, out: "Y"},
	})
}

func TestPadGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	x := func() map[string]*onnx.Tensor { return map[string]*onnx.Tensor{"X": randDoubles(r, 3, 4)} }
	runGradCases(t, 2, []gradShapeCase{
		{name: "constant 2 crop and pad", nodes: []*onnx.Node{testNode(t, 2, "Pad", []string{"X"}, []string{"Y"}, intsAttr("pads", 1, -1, 2, 2))}, feeds: x(), out: "Y"},
		{name: "constant 1 paddings", nodes: []*onnx.Node{testNode(t, 1, "Pad", []string{"X"}, []string{"Y"}, intsAttr("paddings", 0, 1, 1, 0), floatAttr("value", 2))}, feeds: x(), out: "Y"},
		// Before version 13 constant_value has no differentiability mark:
		// a trainable value gets the sum over the padding.
		{name: "constant 11 trainable value", nodes: []*onnx.Node{testNode(t, 11, "Pad", []string{"X", "pads", "v"}, []string{"Y"})},
			feeds: x(), consts: map[string]*onnx.Tensor{"pads": i64s(1, 0, -1, 2), "v": onnx.FromSlice([]float64{0.5})}, out: "Y"},
		{name: "reflect 2", nodes: []*onnx.Node{testNode(t, 2, "Pad", []string{"X"}, []string{"Y"}, intsAttr("pads", 2, 3, 1, 3), strAttrOf("mode", "reflect"))}, feeds: x(), out: "Y"},
		{name: "edge 18 axes", nodes: []*onnx.Node{testNode(t, 18, "Pad", []string{"X", "pads", "", "axes"}, []string{"Y"}, strAttrOf("mode", "edge"))},
			feeds: x(), consts: map[string]*onnx.Tensor{"pads": i64s(2, 3), "axes": i64s(-1)}, out: "Y"},
		{name: "wrap 19", nodes: []*onnx.Node{testNode(t, 19, "Pad", []string{"X", "pads"}, []string{"Y"}, strAttrOf("mode", "wrap"))},
			feeds: x(), consts: map[string]*onnx.Tensor{"pads": i64s(4, 1, 2, 5)}, out: "Y"},
		// A negative side crops first and the other side pads from what
		// remains: the gradient folds back over the kept elements only.
		{name: "wrap 19 crop one side", nodes: []*onnx.Node{testNode(t, 19, "Pad", []string{"X", "pads"}, []string{"Y"}, strAttrOf("mode", "wrap"))},
			feeds: x(), consts: map[string]*onnx.Tensor{"pads": i64s(-1, 2, 3, -2)}, out: "Y"},
		{name: "reflect 18 crop one side", nodes: []*onnx.Node{testNode(t, 18, "Pad", []string{"X", "pads"}, []string{"Y"}, strAttrOf("mode", "reflect"))},
			feeds: x(), consts: map[string]*onnx.Tensor{"pads": i64s(2, -1, -1, 3)}, out: "Y"},
		{name: "reflect 2 crop one side", nodes: []*onnx.Node{testNode(t, 2, "Pad", []string{"X"}, []string{"Y"}, intsAttr("pads", 0, 3, 0, -2), strAttrOf("mode", "reflect"))}, feeds: x(), out: "Y"},
	})
}

func TestIndexGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	runGradCases(t, 3, []gradShapeCase{
		{name: "Gather axis 1 negative and repeated", nodes: []*onnx.Node{testNode(t, 13, "Gather", []string{"X", "i"}, []string{"Y"}, intAttr("axis", 1))},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 2, 4, 3)}, consts: map[string]*onnx.Tensor{"i": onnx.FromSlice([]int64{-1, 0, 3, 2}, 2, 2)}, out: "Y"},
		{name: "Gather 1 int32 scalar index", nodes: []*onnx.Node{testNode(t, 1, "Gather", []string{"X", "i"}, []string{"Y"})},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 3, 2)}, consts: map[string]*onnx.Tensor{"i": onnx.Scalar(int32(-2))}, out: "Y"},
		{name: "GatherElements", nodes: []*onnx.Node{testNode(t, 13, "GatherElements", []string{"X", "i"}, []string{"Y"}, intAttr("axis", -1))},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 2, 3)}, consts: map[string]*onnx.Tensor{"i": onnx.FromSlice([]int64{0, 0, -1, 2, 1, 1, 0, 2}, 2, 4)}, out: "Y"},
		{name: "GatherND", nodes: []*onnx.Node{testNode(t, 13, "GatherND", []string{"X", "i"}, []string{"Y"})},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 2, 3, 2)}, consts: map[string]*onnx.Tensor{"i": onnx.FromSlice([]int64{1, 2, 0, -1, 1, 2}, 3, 2)}, out: "Y"},
		{name: "GatherND batch_dims", nodes: []*onnx.Node{testNode(t, 12, "GatherND", []string{"X", "i"}, []string{"Y"}, intAttr("batch_dims", 1))},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 2, 3, 2)}, consts: map[string]*onnx.Tensor{"i": onnx.FromSlice([]int64{1, 1, 2, 0}, 2, 2, 1)}, out: "Y"},
		{name: "Scatter 9", nodes: []*onnx.Node{testNode(t, 9, "Scatter", []string{"X", "i", "U"}, []string{"Y"}, intAttr("axis", 1))},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 2, 3), "U": randDoubles(r, 2, 2)}, consts: map[string]*onnx.Tensor{"i": onnx.FromSlice([]int64{2, 0, 1, 1}, 2, 2)}, out: "Y"},
		{name: "ScatterElements 13 duplicates", nodes: []*onnx.Node{testNode(t, 13, "ScatterElements", []string{"X", "i", "U"}, []string{"Y"}, intAttr("axis", 0))},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 3, 2), "U": randDoubles(r, 2, 2)}, consts: map[string]*onnx.Tensor{"i": onnx.FromSlice([]int64{-1, 0, 2, 0}, 2, 2)}, out: "Y"},
		{name: "ScatterElements 16 add", nodes: []*onnx.Node{testNode(t, 16, "ScatterElements", []string{"X", "i", "U"}, []string{"Y"}, intAttr("axis", 0), strAttrOf("reduction", "add"))},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 3, 2), "U": randDoubles(r, 2, 2)}, consts: map[string]*onnx.Tensor{"i": onnx.FromSlice([]int64{1, 0, 1, 0}, 2, 2)}, out: "Y"},
		{name: "ScatterND 11 duplicates", nodes: []*onnx.Node{testNode(t, 11, "ScatterND", []string{"X", "i", "U"}, []string{"Y"})},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 4, 3), "U": randDoubles(r, 3, 3)}, consts: map[string]*onnx.Tensor{"i": onnx.FromSlice([]int64{1, -1, 1}, 3, 1)}, out: "Y"},
		{name: "ScatterND 16 add", nodes: []*onnx.Node{testNode(t, 16, "ScatterND", []string{"X", "i", "U"}, []string{"Y"}, strAttrOf("reduction", "add"))},
			feeds: map[string]*onnx.Tensor{"X": randDoubles(r, 2, 3), "U": randDoubles(r, 3)}, consts: map[string]*onnx.Tensor{"i": onnx.FromSlice([]int64{0, 1, 1, 2, 0, 1}, 3, 2)}, out: "Y"},
	})
}

// constNode makes a Constant node, for float inputs (scales, roi) that
// must not be trainable parameters.
func constNode(t *testing.T, name string, v *onnx.Tensor) *onnx.Node {
	return testNode(t, 13, "Constant", nil, []string{name}, &onnx.Attribute{Name: "value", Type: onnx.AttrTensor, Tensor: v})
}

func f32s(v ...float32) *onnx.Tensor { return onnx.FromSlice(v, len(v)) }

func TestResizeGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	x := func(shape ...int) map[string]*onnx.Tensor {
		return map[string]*onnx.Tensor{"X": randDoubles(r, shape...)}
	}
	resize := func(opset int64, inputs []string, consts []*onnx.Node, attrs ...*onnx.Attribute) []*onnx.Node {
		return append(consts, testNode(t, opset, "Resize", inputs, []string{"Y"}, attrs...))
	}
	mode := func(m string) *onnx.Attribute { return strAttrOf("mode", m) }
	coord := func(m string) *onnx.Attribute { return strAttrOf("coordinate_transformation_mode", m) }
	runGradCases(t, 7, []gradShapeCase{
		{name: "10 nearest", nodes: resize(10, []string{"X", "sc"}, []*onnx.Node{constNode(t, "sc", f32s(1, 1, 2, 1.5))}, mode("nearest")), feeds: x(1, 2, 2, 3), out: "Y"},
		{name: "10 linear downsample", nodes: resize(10, []string{"X", "sc"}, []*onnx.Node{constNode(t, "sc", f32s(1, 0.6, 0.5))}, mode("linear")), feeds: x(2, 5, 4), out: "Y"},
		{name: "11 linear align_corners sizes", nodes: resize(11, []string{"X", "roi", "sc", "sz"},
			[]*onnx.Node{constNode(t, "roi", f32s()), constNode(t, "sc", f32s()), constNode(t, "sz", i64s(1, 1, 3, 5))}, mode("linear"), coord("align_corners")), feeds: x(1, 1, 4, 3), out: "Y"},
		{name: "11 nearest ceil downsample", nodes: resize(11, []string{"X", "roi", "sc"},
			[]*onnx.Node{constNode(t, "roi", f32s()), constNode(t, "sc", f32s(1, 1, 0.5, 0.7))}, mode("nearest"), strAttrOf("nearest_mode", "round_prefer_ceil")), feeds: x(1, 2, 5, 6), out: "Y"},
		{name: "13 linear half_pixel", nodes: resize(13, []string{"X", "", "sc"}, []*onnx.Node{constNode(t, "sc", f32s(1, 1, 1.7, 2.5))}, mode("linear")), feeds: x(1, 2, 3, 2), out: "Y"},
		{name: "13 cubic exclude_outside", nodes: resize(13, []string{"X", "", "sc"}, []*onnx.Node{constNode(t, "sc", f32s(1, 1, 2, 1.5))},
			mode("cubic"), intAttr("exclude_outside", 1), coord("pytorch_half_pixel")), feeds: x(1, 1, 4, 4), out: "Y"},
		{name: "13 tf_crop_and_resize", nodes: resize(13, []string{"X", "roi", "", "sz"},
			[]*onnx.Node{constNode(t, "roi", f32s(0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3)), constNode(t, "sz", i64s(1, 1, 4, 5))},
			mode("linear"), coord("tf_crop_and_resize"), floatAttr("extrapolation_value", 2)), feeds: x(1, 1, 3, 4), out: "Y"},
		{name: "18 antialias axes", nodes: resize(18, []string{"X", "", "sc"}, []*onnx.Node{constNode(t, "sc", f32s(0.4, 0.6))},
			mode("linear"), intAttr("antialias", 1), intsAttr("axes", 2, 1)), feeds: x(1, 6, 5), out: "Y"},
		{name: "18 cubic antialias", nodes: resize(18, []string{"X", "", "sc"}, []*onnx.Node{constNode(t, "sc", f32s(1, 0.5))},
			mode("cubic"), intAttr("antialias", 1)), feeds: x(2, 7), out: "Y"},
		{name: "Upsample 9 nearest", nodes: []*onnx.Node{constNode(t, "sc", f32s(1, 2, 3)), testNode(t, 9, "Upsample", []string{"X", "sc"}, []string{"Y"}, mode("nearest"))},
			feeds: x(2, 2, 2), out: "Y"},
		{name: "Upsample 7 linear", nodes: []*onnx.Node{testNode(t, 7, "Upsample", []string{"X"}, []string{"Y"}, mode("linear"), &onnx.Attribute{Name: "scales", Type: onnx.AttrFloats, Floats: []float32{1, 2.5}})},
			feeds: x(2, 3), out: "Y"},
	})
}

func TestScatterReductionGradientUnsupported(t *testing.T) {
	nodes := []*onnx.Node{
		testNode(t, 18, "ScatterElements", []string{"X", "i", "U"}, []string{"Y"}, strAttrOf("reduction", "mul")),
		testNode(t, 18, "ReduceSum", []string{"Y"}, []string{"L"}, intAttr("keepdims", 0)),
	}
	params := map[string]*onnx.Tensor{"i": onnx.FromSlice([]int64{1}, 1), "U": onnx.FromSlice([]float64{2}, 1)}
	net, err := New(graphOf(t, nodes, map[string][]int64{"X": {3}}, "L", params), backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = net.InferenceAndBackprop(map[string]onnx.Value{"X": onnx.FromSlice([]float64{1, 2, 3}, 3)}, "L")
	if !errors.Is(err, network.ErrUnsupported) || !strings.Contains(err.Error(), "mul") {
		t.Fatalf("reduction mul: %v", err)
	}
}
