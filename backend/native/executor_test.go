package native

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// testNode builds a typed node of the default domain at the given opset.
func testNode(t testing.TB, opset int64, opType string, inputs, outputs []string, attrs ...*onnx.Attribute) *onnx.Node {
	t.Helper()
	n := &onnx.Node{OpType: opType, Inputs: inputs, Outputs: outputs, Attributes: attrs, Opset: opset}
	since, ctor, ok := onnx.LookupOperator("", opType, opset)
	if !ok {
		t.Fatalf("no operator %s at opset %d", opType, opset)
	}
	op, err := ctor(n, since)
	if err != nil {
		t.Fatal(err)
	}
	n.Op = op
	return n
}

func intAttr(name string, v int64) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrInt, Int: v}
}

func intsAttr(name string, v ...int64) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrInts, Ints: v}
}

func floatAttr(name string, v float32) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrFloat, Float: v}
}

func stringAttr(name, v string) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrString, String: v}
}

func stringsAttr(name string, v ...string) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrStrings, Strings: v}
}

func floatsAttr(name string, v ...float32) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrFloats, Floats: v}
}

func floatTensorType(dims ...int64) *onnx.TypeInfo {
	shape := make([]onnx.Dim, len(dims))
	for i, d := range dims {
		shape[i] = onnx.Dim{Size: d}
		if d < 0 {
			shape[i].Param = "N"
		}
	}
	return &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float, Shape: shape, HasShape: true}
}

// testModel wraps nodes into a model with the given inputs, outputs and
// initializers.
func testModel(nodes []*onnx.Node, inputs, outputs []*onnx.ValueInfo, inits ...*onnx.Initializer) *onnx.Model {
	g := &onnx.Graph{Nodes: nodes, Inputs: inputs, Outputs: outputs, Initializers: inits}
	for _, n := range nodes {
		n.Graph = g
	}
	return &onnx.Model{Opsets: map[string]int64{"": 17}, Graph: g}
}

// mlpModel is Y = Relu(X W + b) with X [N, 3], W [3, 2], b [2].
func mlpModel(t *testing.T) *onnx.Model {
	nodes := []*onnx.Node{
		testNode(t, 17, "MatMul", []string{"X", "W"}, []string{"XW"}),
		testNode(t, 17, "Add", []string{"XW", "b"}, []string{"Z"}),
		testNode(t, 17, "Relu", []string{"Z"}, []string{"Y"}),
	}
	return testModel(nodes,
		[]*onnx.ValueInfo{{Name: "X", Type: floatTensorType(-1, 3)}},
		[]*onnx.ValueInfo{{Name: "Y", Type: floatTensorType(-1, 2)}},
		&onnx.Initializer{Name: "W", Tensor: onnx.FromSlice([]float32{1, -1, 2, -2, 3, -3}, 3, 2)},
		&onnx.Initializer{Name: "b", Tensor: onnx.FromSlice([]float32{0.5, 0.5}, 2)},
	)
}

func TestInferenceFetchFeed(t *testing.T) {
	net, err := backend.New("native", mlpModel(t), backend.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	if got := net.Inputs(); !slices.Equal(got, []string{"X"}) {
		t.Fatalf("Inputs() = %v", got)
	}
	if got := net.Params(); !slices.Equal(got, []string{"W", "b"}) {
		t.Fatalf("Params() = %v", got)
	}
	x := onnx.FromSlice([]float32{1, 1, 1, -1, 0, 0}, 2, 3)
	out, err := net.Inference(map[string]onnx.Value{"X": x})
	if err != nil {
		t.Fatal(err)
	}
	// Row 1: [6, -6] + 0.5 -> [6.5, 0]; row 2: [-1, 1] + 0.5 -> [0, 1.5].
	y := out["Y"].(*onnx.Tensor)
	if want := []float32{6.5, 0, 0, 1.5}; !slices.Equal(y.Float32s(), want) {
		t.Fatalf("Y = %v, want %v", y.Float32s(), want)
	}

	// An intermediate value, fetched and added as an output.
	if err := net.AddOutput("Z"); err != nil {
		t.Fatal(err)
	}
	if got := net.Outputs(); !slices.Equal(got, []string{"Y", "Z"}) {
		t.Fatalf("Outputs() = %v", got)
	}
	z, err := network.FetchTensor(net, "Z")
	if err != nil || !slices.Equal(z.Float32s(), []float32{6.5, -5.5, -0.5, 1.5}) {
		t.Fatalf("Fetch(Z) = %v, %v", z, err)
	}

	// Feeding a parameter changes the next run; the wrong shape is refused.
	if err := net.Feed("b", onnx.FromSlice([]float32{0, 10}, 2)); err != nil {
		t.Fatal(err)
	}
	if err := net.Feed("b", onnx.FromSlice([]float32{0, 10, 1}, 3)); err == nil || !strings.Contains(err.Error(), "[2]") {
		t.Fatalf("feeding b with shape [3]: %v", err)
	}
	out, err = net.Inference(map[string]onnx.Value{"X": x})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{6, 4, 0, 11}; !slices.Equal(out["Y"].(*onnx.Tensor).Float32s(), want) {
		t.Fatalf("after Feed: Y = %v, want %v", out["Y"], want)
	}
	// Outputs are copies: changing them does not touch the network.
	out["Y"].(*onnx.Tensor).Float32s()[0] = 1000
	again, _ := net.Inference(map[string]onnx.Value{"X": x})
	if again["Y"].(*onnx.Tensor).Float32s()[0] != 6 {
		t.Fatal("an output aliases the network's buffer")
	}
}

func TestFeedErrorsNameTheInput(t *testing.T) {
	net, err := New(mlpModel(t), backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		feeds map[string]onnx.Value
		want  []string
	}{
		{map[string]onnx.Value{}, []string{`missing feed for input "X"`}},
		{map[string]onnx.Value{"X": onnx.FromSlice([]float32{1, 2}, 2)}, []string{`"X"`, "rank 2", "[2]"}},
		{map[string]onnx.Value{"X": onnx.FromSlice([]float32{1, 2, 3, 4}, 1, 4)}, []string{`"X"`, "[N 3]", "[1 4]"}},
		{map[string]onnx.Value{"X": onnx.FromSlice([]float64{1, 2, 3}, 1, 3)}, []string{`"X"`, "float", "double"}},
		{map[string]onnx.Value{"X": onnx.FromSlice([]float32{1, 2, 3}, 1, 3), "Q": onnx.Scalar[float32](1)}, []string{`"Q"`, "not an input"}},
		{map[string]onnx.Value{"X": &onnx.Tensor{Type: onnx.Float, Shape: []int{1, 3}, Data: []float32{1}}}, []string{`"X"`, "3 elements"}},
	}
	for _, c := range cases {
		_, err := net.Inference(c.feeds)
		if err == nil {
			t.Errorf("feeds %v: no error", c.feeds)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("feeds %v: error %q does not mention %q", c.feeds, err, w)
			}
		}
	}
	if _, err := net.Fetch("nope"); err == nil {
		t.Error("Fetch of an unknown name must fail")
	}
	if err := net.AddOutput("nope"); err == nil {
		t.Error("AddOutput of an unknown name must fail")
	}
}

func TestRuntimeErrorsNameTheNode(t *testing.T) {
	nodes := []*onnx.Node{testNode(t, 17, "MatMul", []string{"A", "B"}, []string{"Y"})}
	nodes[0].Name = "bad_matmul"
	free := &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float}
	m := testModel(nodes,
		[]*onnx.ValueInfo{{Name: "A", Type: free}, {Name: "B", Type: free}},
		[]*onnx.ValueInfo{{Name: "Y", Type: free}})
	net, err := New(m, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = net.Inference(map[string]onnx.Value{
		"A": onnx.FromSlice([]float32{1, 2, 3}, 1, 3),
		"B": onnx.FromSlice([]float32{1, 2}, 2, 1),
	})
	if err == nil || !strings.Contains(err.Error(), "bad_matmul") || !strings.Contains(err.Error(), "inner dimensions") {
		t.Fatalf("error %v should name the node and the shape problem", err)
	}
}

// noKernelOp is an operator that no backend implements: every operator of
// the schemas has a native kernel, so the unsupported path needs one of its
// own. Its Accept answers "unsupported", as a generated operator's does for
// a visitor that does not override its method.
type noKernelOp struct{ ops.Base }

const noKernelDomain = "test.no_kernel"

func (*noKernelOp) OpType() string                   { return "NoKernel" }
func (*noKernelOp) Domain() string                   { return noKernelDomain }
func (o *noKernelOp) Accept(ops.Visitor) error       { return ops.Unsupported(o) }
func (*noKernelOp) Validate() error                  { return nil }
func (*noKernelOp) CheckTypes([]onnx.DataType) error { return nil }

func init() {
	onnx.RegisterOperator(noKernelDomain, "NoKernel", 1, func(n *onnx.Node, since int) (onnx.Operator, error) {
		return &noKernelOp{Base: ops.NewBase(n, since)}, nil
	})
}

func TestUnsupportedOperatorFailsNew(t *testing.T) {
	n := &onnx.Node{OpType: "NoKernel", Domain: noKernelDomain, Inputs: []string{"X"}, Outputs: []string{"Y"}, Opset: 1}
	since, ctor, ok := onnx.LookupOperator(noKernelDomain, n.OpType, 1)
	if !ok {
		t.Fatal("NoKernel is not registered")
	}
	op, err := ctor(n, since)
	if err != nil {
		t.Fatal(err)
	}
	n.Op = op
	m := testModel([]*onnx.Node{n}, []*onnx.ValueInfo{{Name: "X"}}, []*onnx.ValueInfo{{Name: "Y"}})
	m.Opsets[noKernelDomain] = 1
	_, err = New(m, backend.Options{})
	if !errors.Is(err, network.ErrUnsupported) || !strings.Contains(err.Error(), "NoKernel") || !strings.Contains(err.Error(), noKernelDomain) {
		t.Fatalf("got %v, want an ErrUnsupported naming NoKernel and its domain", err)
	}
}

func TestSupportsAgreesWithTheVisitMethods(t *testing.T) {
	for _, c := range []struct {
		op    string
		since int
		want  bool
	}{
		{"Add", 1, true}, {"Add", 14, true}, {"Softmax", 1, true}, {"Softmax", 13, true},
		{"Reshape", 1, true}, {"Reshape", 5, true}, {"Reshape", 14, true}, {"Gemm", 6, true},
		{"Constant", 12, true}, {"Identity", 16, true}, {"Concat", 4, true},
		{"Conv", 11, true}, {"DeformConv", 19, true}, {"Softmax", 12, false /* no such version */},
	} {
		if got := Supports("", c.op, c.since); got != c.want {
			t.Errorf("Supports(%s, %d) = %v, want %v", c.op, c.since, got, c.want)
		}
	}
	if !Supports("ai.onnx.preview", "FlexAttention", 1) {
		t.Error("Supports(ai.onnx.preview FlexAttention, 1) = false, want true")
	}
	if Supports(noKernelDomain, "NoKernel", 1) {
		t.Errorf("Supports(%s NoKernel, 1) = true, want false", noKernelDomain)
	}
	b, err := backend.Get("native")
	if err != nil || b.Supports == nil || !b.Supports("", "MatMul", 13) {
		t.Fatalf("native backend is not registered with Supports: %v", err)
	}
}

// runOp builds a one-node model of (domain, opType) at opset, feeds the
// non-nil inputs (a nil input is omitted: its name is "") and returns the
// node's nOut outputs.
func runOp(t *testing.T, domain string, opset int64, opType string, attrs []*onnx.Attribute, nOut int, inputs ...*onnx.Tensor) ([]*onnx.Tensor, error) {
	t.Helper()
	var names []string
	var vis []*onnx.ValueInfo
	feeds := map[string]onnx.Value{}
	for i, in := range inputs {
		if in == nil {
			names = append(names, "")
			continue
		}
		n := "I" + string(rune('0'+i))
		names = append(names, n)
		vis = append(vis, &onnx.ValueInfo{Name: n})
		feeds[n] = in
	}
	var outNames []string
	var outVIs []*onnx.ValueInfo
	for i := range nOut {
		n := "O" + string(rune('0'+i))
		outNames = append(outNames, n)
		outVIs = append(outVIs, &onnx.ValueInfo{Name: n})
	}
	node := &onnx.Node{OpType: opType, Domain: domain, Inputs: names, Outputs: outNames, Attributes: attrs, Opset: opset}
	since, ctor, ok := onnx.LookupOperator(domain, opType, opset)
	if !ok {
		t.Fatalf("no operator %s.%s at opset %d", domain, opType, opset)
	}
	op, err := ctor(node, since)
	if err != nil {
		return nil, err
	}
	node.Op = op
	m := testModel([]*onnx.Node{node}, vis, outVIs)
	m.Opsets = map[string]int64{"": opset}
	if domain != "" {
		m.Opsets[domain] = opset
	}
	net, err := New(m, backend.Options{})
	if err != nil {
		return nil, err
	}
	res, err := net.Inference(feeds)
	if err != nil {
		return nil, err
	}
	out := make([]*onnx.Tensor, nOut)
	for i, n := range outNames {
		out[i], _ = res[n].(*onnx.Tensor)
	}
	return out, nil
}

// runNode is runOp for an operator of the default domain.
func runNode(t *testing.T, opset int64, opType string, attrs []*onnx.Attribute, nOut int, inputs ...*onnx.Tensor) ([]*onnx.Tensor, error) {
	t.Helper()
	return runOp(t, "", opset, opType, attrs, nOut, inputs...)
}

// runNode1 is runNode for an operator with a single output.
func runNode1(t *testing.T, opset int64, opType string, attrs []*onnx.Attribute, inputs ...*onnx.Tensor) (*onnx.Tensor, error) {
	t.Helper()
	outs, err := runNode(t, opset, opType, attrs, 1, inputs...)
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

func TestOlderOperatorVersions(t *testing.T) {
	x := onnx.FromSlice([]float32{0, 1, 2, 3}, 2, 2)

	// Softmax-1 flattens at axis 0: one row of four.
	got, err := runNode1(t, 1, "Softmax", []*onnx.Attribute{intAttr("axis", 0)}, x)
	if err != nil {
		t.Fatal(err)
	}
	s := math.Exp(0) + math.Exp(1) + math.Exp(2) + math.Exp(3)
	assertClose(t, got.Float32s(), []float64{1 / s, math.E / s, math.Exp(2) / s, math.Exp(3) / s})
	// Softmax-13 at axis 0 normalizes each column.
	got, err = runNode1(t, 13, "Softmax", []*onnx.Attribute{intAttr("axis", 0)}, x)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := 1/(1+math.Exp(2)), 1/(1+math.Exp(-2))
	assertClose(t, got.Float32s(), []float64{lo, lo, hi, hi})

	// Add-6 with broadcast=1, axis=0: B [2] runs along A's first axis.
	got, err = runNode1(t, 6, "Add", []*onnx.Attribute{intAttr("broadcast", 1), intAttr("axis", 0)}, x, onnx.FromSlice([]float32{10, 20}, 2))
	if err != nil || !slices.Equal(got.Float32s(), []float32{10, 11, 22, 23}) {
		t.Fatalf("Add-6 axis 0: %v %v", got, err)
	}
	// Add-6 without broadcast refuses different shapes.
	if _, err := runNode1(t, 6, "Add", nil, x, onnx.FromSlice([]float32{10, 20}, 2)); err == nil {
		t.Fatal("Add-6 with broadcast=0 must refuse shapes [2 2] and [2]")
	}

	// Reshape-1 takes the shape as an attribute.
	got, err = runNode1(t, 1, "Reshape", []*onnx.Attribute{intsAttr("shape", 4, -1)}, x)
	if err != nil || !slices.Equal(got.Shape, []int{4, 1}) {
		t.Fatalf("Reshape-1: %v %v", got, err)
	}
	// Reshape-14 with allowzero keeps a literal 0.
	empty := onnx.FromSlice([]float32{}, 0, 3)
	got, err = runNode1(t, 14, "Reshape", []*onnx.Attribute{intAttr("allowzero", 1)}, empty, onnx.FromSlice([]int64{3, 0}, 2))
	if err != nil || !slices.Equal(got.Shape, []int{3, 0}) {
		t.Fatalf("Reshape-14 allowzero: %v %v", got, err)
	}

	// Concat-1 defaults to axis 1.
	got, err = runNode1(t, 1, "Concat", nil, x, x)
	if err != nil || !slices.Equal(got.Shape, []int{2, 4}) {
		t.Fatalf("Concat-1: %v %v", got, err)
	}

	// Gemm-6 with broadcast=0 needs C of shape [M, N].
	if _, err := runNode1(t, 6, "Gemm", nil, x, x, onnx.FromSlice([]float32{1, 1}, 2)); err == nil {
		t.Fatal("Gemm-6 with broadcast=0 must refuse C of shape [2]")
	}
	got, err = runNode1(t, 6, "Gemm", []*onnx.Attribute{intAttr("broadcast", 1)}, x, x, onnx.FromSlice([]float32{1, 1}, 2))
	if err != nil || !slices.Equal(got.Float32s(), []float32{3, 4, 7, 12}) {
		t.Fatalf("Gemm-6 broadcast: %v %v", got, err)
	}

	// Relu takes integers only from version 14.
	ints := onnx.FromSlice([]int32{-1, 2}, 2)
	if _, err := runNode1(t, 13, "Relu", nil, ints); !errors.Is(err, network.ErrUnsupported) {
		t.Fatalf("Relu-13 of int32: %v", err)
	}
	got, err = runNode1(t, 14, "Relu", nil, ints)
	if err != nil || !slices.Equal(got.Int32s(), []int32{0, 2}) {
		t.Fatalf("Relu-14 of int32: %v %v", got, err)
	}
}
