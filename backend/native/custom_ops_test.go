package native

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// The custom operators of these tests live in their own domain.
const customTestDomain = "test.native.custom"

// addScaled is Y = A + alpha·B and Z = A·B (elementwise, float32, equal
// shapes), with alpha an attribute (default 1): two inputs, two outputs,
// and a gradient.
type addScaled struct{ checked atomic.Int32 }

func addScaledOperands(op *ops.Custom, in []onnx.Value) (a, b []float32, shape []int, alpha float32, err error) {
	if len(in) != 2 {
		return nil, nil, nil, 0, fmt.Errorf("want 2 inputs, got %d", len(in))
	}
	ta, _ := in[0].(*onnx.Tensor)
	tb, _ := in[1].(*onnx.Tensor)
	if ta == nil || tb == nil || ta.Type != onnx.Float || tb.Type != onnx.Float {
		return nil, nil, nil, 0, network.Unsupportedf("AddScaled of %s and %s", onnx.DescribeValue(in[0]), onnx.DescribeValue(in[1]))
	}
	if !slices.Equal(ta.Shape, tb.Shape) {
		return nil, nil, nil, 0, fmt.Errorf("shapes %v and %v differ", ta.Shape, tb.Shape)
	}
	alpha, err = op.AttrFloat("alpha", 1)
	return ta.Float32s(), tb.Float32s(), ta.Shape, alpha, err
}

func (*addScaled) Forward(op *ops.Custom, in []onnx.Value) ([]onnx.Value, error) {
	a, b, shape, alpha, err := addScaledOperands(op, in)
	if err != nil {
		return nil, err
	}
	y, z := make([]float32, len(a)), make([]float32, len(a))
	for i := range a {
		y[i] = a[i] + alpha*b[i]
		z[i] = a[i] * b[i]
	}
	return []onnx.Value{onnx.FromSlice(y, shape...), onnx.FromSlice(z, shape...)}, nil
}

func (*addScaled) Gradient(op *ops.Custom, in, _ []onnx.Value, gout []*onnx.Tensor) ([]*onnx.Tensor, error) {
	a, b, shape, alpha, err := addScaledOperands(op, in)
	if err != nil {
		return nil, err
	}
	gy, gz := gout[0].Float32s(), gout[1].Float32s()
	da, db := make([]float32, len(a)), make([]float32, len(a))
	for i := range a {
		da[i] = gy[i] + gz[i]*b[i]
		db[i] = alpha*gy[i] + gz[i]*a[i]
	}
	return []*onnx.Tensor{onnx.FromSlice(da, shape...), onnx.FromSlice(db, shape...)}, nil
}

func (k *addScaled) Check(op *ops.Custom) error {
	k.checked.Add(1)
	if len(op.In) != 2 {
		return fmt.Errorf("AddScaled takes 2 inputs, got %d", len(op.In))
	}
	_, err := op.AttrFloat("alpha", 1)
	return err
}

var (
	customTestOnce sync.Once
	customTestErr  error
	customAdd      = &addScaled{}
)

// registerCustomTestKernels registers the kernels of these tests once per
// process (go test -count=N runs the tests again in the same one).
func registerCustomTestKernels(t *testing.T) {
	t.Helper()
	customTestOnce.Do(func() {
		for _, r := range []struct {
			op    string
			since int
			k     Kernel
		}{
			{"AddScaled", 1, customAdd},
			// A forward-only kernel, and two versions of one operator.
			{"Twice", 1, KernelFunc(func(_ *ops.Custom, in []onnx.Value) ([]onnx.Value, error) {
				x := in[0].(*onnx.Tensor).Float32s()
				y := make([]float32, len(x))
				for i, v := range x {
					y[i] = 2 * v
				}
				return []onnx.Value{onnx.FromSlice(y, len(y))}, nil
			})},
			{"Twice", 3, KernelFunc(func(_ *ops.Custom, in []onnx.Value) ([]onnx.Value, error) {
				x := in[0].(*onnx.Tensor).Float32s()
				y := make([]float32, len(x))
				for i, v := range x {
					y[i] = 2*v + 1000 // tells the versions apart
				}
				return []onnx.Value{onnx.FromSlice(y, len(y))}, nil
			})},
			{"Fails", 1, KernelFunc(func(*ops.Custom, []onnx.Value) ([]onnx.Value, error) {
				return nil, errors.New("the user's kernel refuses")
			})},
			{"Panics", 1, KernelFunc(func(_ *ops.Custom, in []onnx.Value) ([]onnx.Value, error) {
				var s []float32
				return []onnx.Value{onnx.FromSlice(s[:len(in)+3])}, nil // out of range
			})},
			{"NoOutput", 1, KernelFunc(func(*ops.Custom, []onnx.Value) ([]onnx.Value, error) { return nil, nil })},
			{"BadGrad", 1, badGrad{}},
			{"GradPanics", 1, gradPanics{}},
		} {
			if err := RegisterKernel(customTestDomain, r.op, r.since, r.k); err != nil {
				customTestErr = err
				return
			}
		}
	})
	if customTestErr != nil {
		t.Fatal(customTestErr)
	}
}

// badGrad's gradient has the wrong shape.
type badGrad struct{}

func (badGrad) Forward(_ *ops.Custom, in []onnx.Value) ([]onnx.Value, error) { return in[:1], nil }
func (badGrad) Gradient(*ops.Custom, []onnx.Value, []onnx.Value, []*onnx.Tensor) ([]*onnx.Tensor, error) {
	return []*onnx.Tensor{onnx.FromSlice([]float32{1, 2, 3, 4, 5}, 5)}, nil
}

// gradPanics's gradient panics.
type gradPanics struct{ badGrad }

func (gradPanics) Gradient(*ops.Custom, []onnx.Value, []onnx.Value, []*onnx.Tensor) ([]*onnx.Tensor, error) {
	panic("the user's gradient gives up")
}

// customNode types a node of the test domain as loading a model importing
// it at opset does.
func customNode(t *testing.T, opset int64, opType, name string, in, out []string, attrs ...*onnx.Attribute) *onnx.Node {
	t.Helper()
	n := &onnx.Node{Name: name, OpType: opType, Domain: customTestDomain, Inputs: in, Outputs: out, Attributes: attrs, Opset: opset}
	if err := onnx.TypeNode(n); err != nil {
		t.Fatal(err)
	}
	return n
}

func customModel(opset int64, nodes []*onnx.Node, inputs, outputs []string, inits ...*onnx.Initializer) *onnx.Model {
	var ins, outs []*onnx.ValueInfo
	for _, n := range inputs {
		ins = append(ins, &onnx.ValueInfo{Name: n})
	}
	for _, n := range outputs {
		outs = append(outs, &onnx.ValueInfo{Name: n})
	}
	m := testModel(nodes, ins, outs, inits...)
	m.Opsets[customTestDomain] = opset
	return m
}

func TestCustomOpForwardAndAttributes(t *testing.T) {
	registerCustomTestKernels(t)
	a := onnx.FromSlice([]float32{1, 2, 3}, 3)
	b := onnx.FromSlice([]float32{10, 20, -30}, 3)
	outs, err := runOp(t, customTestDomain, 1, "AddScaled", []*onnx.Attribute{floatAttr("alpha", 0.5)}, 2, a, b)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, outs[0].Float32s(), []float64{1 + 5, 2 + 10, 3 - 15})
	assertClose(t, outs[1].Float32s(), []float64{10, 40, -90})
	// The default alpha, and an INT attribute where a FLOAT is read.
	outs, err = runOp(t, customTestDomain, 1, "AddScaled", nil, 2, a, b)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, outs[0].Float32s(), []float64{11, 22, -27})
	outs, err = runOp(t, customTestDomain, 1, "AddScaled", []*onnx.Attribute{intAttr("alpha", 2)}, 2, a, b)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, outs[0].Float32s(), []float64{21, 42, -57})
	// An attribute of the wrong type fails the build, through Check.
	before := customAdd.checked.Load()
	_, err = runOp(t, customTestDomain, 1, "AddScaled", []*onnx.Attribute{stringAttr("alpha", "big")}, 2, a, b)
	if err == nil || !strings.Contains(err.Error(), `attribute "alpha"`) || customAdd.checked.Load() == before {
		t.Fatalf("string alpha: %v", err)
	}
	// Check sees the arity.
	_, err = runOp(t, customTestDomain, 1, "AddScaled", nil, 2, a)
	if err == nil || !strings.Contains(err.Error(), "takes 2 inputs, got 1") {
		t.Fatalf("one input: %v", err)
	}
}

func TestCustomOpVersions(t *testing.T) {
	registerCustomTestKernels(t)
	x := onnx.FromSlice([]float32{1, -2}, 2)
	for _, c := range []struct {
		opset int64
		want  []float64
	}{{1, []float64{2, -4}}, {2, []float64{2, -4}}, {3, []float64{1002, 996}}, {9, []float64{1002, 996}}} {
		outs, err := runOp(t, customTestDomain, c.opset, "Twice", nil, 1, x)
		if err != nil {
			t.Fatalf("opset %d: %v", c.opset, err)
		}
		assertClose(t, outs[0].Float32s(), c.want)
	}
	for _, c := range []struct {
		op    string
		since int
		want  bool
	}{{"Twice", 1, true}, {"Twice", 2, false}, {"Twice", 3, true}, {"AddScaled", 1, true}, {"Nowhere", 1, false}} {
		if got := Supports(customTestDomain, c.op, c.since); got != c.want {
			t.Errorf("Supports(%s, %s, %d) = %v, want %v", customTestDomain, c.op, c.since, got, c.want)
		}
	}
	reg := RegisteredKernels()
	for _, want := range []onnx.RegisteredOperator{{Domain: customTestDomain, OpType: "Twice", Since: 1}, {Domain: customTestDomain, OpType: "Twice", Since: 3}} {
		if !slices.Contains(reg, want) {
			t.Errorf("RegisteredKernels() lacks %+v", want)
		}
	}
}

func TestCustomOpBackprop(t *testing.T) {
	registerCustomTestKernels(t)
	// L = ReduceSum(Y) with (Y, Z) = AddScaled(X, W; alpha 3): Z is
	// unused, so its gradient is zeros: dX = 1, dW = 3. Then a second
	// node whose both outputs reach L: (Y2, Z2) = AddScaled(Y, W; alpha 1),
	// L = ReduceSum(Y2) + ReduceSum(Z2).
	x := onnx.FromSlice([]float32{1, 2}, 2)
	w := onnx.FromSlice([]float32{0.5, -1}, 2)
	nodes := []*onnx.Node{
		customNode(t, 1, "AddScaled", "s1", []string{"X", "W"}, []string{"Y", "Z"}, floatAttr("alpha", 3)),
		testNode(t, 17, "ReduceSum", []string{"Y"}, []string{"L"}, intAttr("keepdims", 0)),
	}
	net, err := New(customModel(1, nodes, []string{"X"}, []string{"L"}, &onnx.Initializer{Name: "W", Tensor: w}), backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := net.InferenceAndBackprop(map[string]onnx.Value{"X": x}, "L")
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, out["L"].(*onnx.Tensor).Float32s(), []float64{(1 + 1.5) + (2 - 3)})
	grads, err := net.Fetch(network.GradName("X"), network.GradName("W"))
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, grads[0].(*onnx.Tensor).Float32s(), []float64{1, 1})
	assertClose(t, grads[1].(*onnx.Tensor).Float32s(), []float64{3, 3})

	nodes = []*onnx.Node{
		customNode(t, 1, "AddScaled", "s1", []string{"X", "W"}, []string{"Y", "Z"}, floatAttr("alpha", 3)),
		customNode(t, 1, "AddScaled", "s2", []string{"Y", "W"}, []string{"Y2", "Z2"}),
		testNode(t, 17, "ReduceSum", []string{"Y2"}, []string{"S1"}, intAttr("keepdims", 0)),
		testNode(t, 17, "ReduceSum", []string{"Z2"}, []string{"S2"}, intAttr("keepdims", 0)),
		testNode(t, 17, "Add", []string{"S1", "S2"}, []string{"L"}),
	}
	net, err = New(customModel(1, nodes, []string{"X"}, []string{"L"}, &onnx.Initializer{Name: "W", Tensor: w}), backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := net.InferenceAndBackprop(map[string]onnx.Value{"X": x}, "L"); err != nil {
		t.Fatal(err)
	}
	grads, err = net.Fetch(network.GradName("X"), network.GradName("W"))
	if err != nil {
		t.Fatal(err)
	}
	// Y = X + 3W; L = Σ (Y + W) + Σ Y·W.
	// dL/dY = 1 + W; dL/dX = dL/dY; dL/dW = 3 dL/dY + 1 + Y.
	y := []float64{1 + 1.5, 2 - 3}
	assertClose(t, grads[0].(*onnx.Tensor).Float32s(), []float64{1.5, 0})
	assertClose(t, grads[1].(*onnx.Tensor).Float32s(), []float64{3*1.5 + 1 + y[0], 3*0 + 1 + y[1]})
}

func TestCustomOpErrorsNameTheNode(t *testing.T) {
	registerCustomTestKernels(t)
	x := onnx.FromSlice([]float32{1, 2}, 2)
	run := func(op string) error {
		m := customModel(1, []*onnx.Node{customNode(t, 1, op, "user_node", []string{"X"}, []string{"Y"})}, []string{"X"}, []string{"Y"})
		net, err := New(m, backend.Options{})
		if err != nil {
			return err
		}
		_, err = net.Inference(map[string]onnx.Value{"X": x})
		return err
	}
	for _, c := range []struct{ op, want string }{
		{"Fails", "the user's kernel refuses"},
		{"Panics", "panic in the custom operator's kernel"},
		{"NoOutput", `no value for output "Y"`},
	} {
		err := run(c.op)
		if err == nil || !strings.Contains(err.Error(), `"user_node"`) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v should name the node and say %q", c.op, err, c.want)
		}
		t.Logf("%s: %v", c.op, err)
	}
	// The panic names where it happened.
	if err := run("Panics"); err == nil || !strings.Contains(err.Error(), "custom_ops_test.go:") {
		t.Errorf("panic: %v should name the line", err)
	}

	// A gradient of the wrong shape.
	nodes := []*onnx.Node{
		customNode(t, 1, "BadGrad", "bad_grad", []string{"X"}, []string{"Y"}),
		testNode(t, 17, "ReduceSum", []string{"Y"}, []string{"L"}, intAttr("keepdims", 0)),
	}
	net, err := New(customModel(1, nodes, []string{"X"}, []string{"L"}), backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = net.InferenceAndBackprop(map[string]onnx.Value{"X": x}, "L")
	if err == nil || !strings.Contains(err.Error(), `"bad_grad"`) || !strings.Contains(err.Error(), "tensor(float)[5]; the input is tensor(float)[2]") {
		t.Errorf("bad gradient: %v", err)
	}

	// A panic in a gradient.
	nodes[0] = customNode(t, 1, "GradPanics", "grad_panics", []string{"X"}, []string{"Y"})
	net, err = New(customModel(1, nodes, []string{"X"}, []string{"L"}), backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = net.InferenceAndBackprop(map[string]onnx.Value{"X": x}, "L")
	if err == nil || !strings.Contains(err.Error(), `"grad_panics"`) || !strings.Contains(err.Error(), "panic in the custom operator's gradient: the user's gradient gives up") {
		t.Errorf("gradient panic: %v", err)
	}

	// A kernel without Gradient: backprop is unsupported, saying why.
	nodes = []*onnx.Node{
		customNode(t, 1, "Twice", "fwd_only", []string{"X"}, []string{"Y"}),
		testNode(t, 17, "ReduceSum", []string{"Y"}, []string{"L"}, intAttr("keepdims", 0)),
	}
	net, err = New(customModel(1, nodes, []string{"X"}, []string{"L"}), backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = net.InferenceAndBackprop(map[string]onnx.Value{"X": x}, "L")
	if !errors.Is(err, network.ErrUnsupported) || !strings.Contains(err.Error(), "no Gradient method") || !strings.Contains(err.Error(), "Twice") {
		t.Errorf("forward-only: %v", err)
	}
}

// TestCustomOpUnregistered: an operator of a domain nobody registered, and
// one registered with ops but without a native kernel, are unsupported,
// naming the domain, the operator and the version.
func TestCustomOpUnregistered(t *testing.T) {
	const domain = "test.native.unregistered"
	n := &onnx.Node{Name: "n", OpType: "Mystery", Domain: domain, Inputs: []string{"X"}, Outputs: []string{"Y"}, Opset: 4}
	if err := onnx.TypeNode(n); err == nil {
		t.Fatal("an unregistered operator typed")
	}
	n.Op = &onnx.UnknownOperator{Type: n.OpType, Dom: domain, Opset: 4} // as onnx.Load types it
	m := customModel(4, []*onnx.Node{n}, []string{"X"}, []string{"Y"})
	m.Opsets[domain] = 4
	_, err := New(m, backend.Options{})
	if !errors.Is(err, network.ErrUnsupported) || !strings.Contains(err.Error(), "Mystery (domain test.native.unregistered, opset 4)") {
		t.Errorf("unknown operator: %v", err)
	}

	if err := ops.RegisterCustom(domain, "KernelLess", 2); err != nil {
		t.Fatal(err)
	}
	n = &onnx.Node{Name: "n", OpType: "KernelLess", Domain: domain, Inputs: []string{"X"}, Outputs: []string{"Y"}, Opset: 4}
	if err := onnx.TypeNode(n); err != nil {
		t.Fatal(err)
	}
	m = customModel(4, []*onnx.Node{n}, []string{"X"}, []string{"Y"})
	m.Opsets[domain] = 4
	_, err = New(m, backend.Options{})
	if !errors.Is(err, network.ErrUnsupported) || !strings.Contains(err.Error(), "KernelLess (domain test.native.unregistered, version 2)") ||
		!strings.Contains(err.Error(), "no native kernel") {
		t.Errorf("no kernel: %v", err)
	}
	t.Logf("no kernel: %v", err)
	if Supports(domain, "KernelLess", 2) {
		t.Error("Supports is true for an operator without a kernel")
	}
}

var customRegCount atomic.Int32

func TestCustomOpRegistrationErrors(t *testing.T) {
	registerCustomTestKernels(t)
	k := KernelFunc(func(*ops.Custom, []onnx.Value) ([]onnx.Value, error) { return nil, nil })
	// A fresh name per run, so that -count=N registers it anew.
	fresh := fmt.Sprintf("Fresh%d", customRegCount.Add(1))
	if err := RegisterKernel(customTestDomain, fresh, 1, k); err != nil {
		t.Fatal(err)
	}
	// A hand-typed operator registered with onnx directly.
	onnx.RegisterOperator(customTestDomain, "HandTyped"+fresh, 1, func(n *onnx.Node, since int) (onnx.Operator, error) {
		return &onnx.UnknownOperator{Type: n.OpType, Dom: n.Domain}, nil
	})
	for _, c := range []struct {
		domain, op string
		since      int
		k          Kernel
		want       string
	}{
		{customTestDomain, fresh, 1, k, "already registered"},
		{customTestDomain, "AddScaled", 1, k, "already registered"},
		{customTestDomain, "HandTyped" + fresh, 2, k, "clashes with operator"},
		{"", "Relu", 14, k, `domain "ai.onnx" is reserved`},
		{"ai.onnx", "MyRelu", 1, k, `domain "ai.onnx" is reserved`},
		{"ai.onnx.ml", "MyScaler", 1, k, `domain "ai.onnx.ml" is reserved`},
		{"ai.deep500", "MeanSquaredError", 1, k, `domain "ai.deep500" is reserved`},
		{customTestDomain, "", 1, k, "needs an op type"},
		{customTestDomain, "Version0" + fresh, 0, k, "version 0"},
		{customTestDomain, "NilKernel" + fresh, 1, nil, "nil kernel"},
	} {
		err := RegisterKernel(c.domain, c.op, c.since, c.k)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RegisterKernel(%q, %q, %d): %v, want an error saying %q", c.domain, c.op, c.since, err, c.want)
		}
	}
	// A failed registration leaves nothing behind.
	if _, _, ok := onnx.LookupOperator(customTestDomain, "NilKernel"+fresh, 1); ok {
		t.Error("a nil kernel's operator was registered")
	}
	// A second version of a registered operator is fine.
	if err := RegisterKernel(customTestDomain, fresh, 2, k); err != nil {
		t.Error(err)
	}
}

func TestCustomOpOptimizedBuild(t *testing.T) {
	registerCustomTestKernels(t)
	// With Optimize on (d500 run's default), the transform passes see the
	// custom node; with a constant operand they may fold it, with the
	// native kernel.
	nodes := []*onnx.Node{
		customNode(t, 1, "AddScaled", "s1", []string{"X", "W"}, []string{"Y", "Z"}, floatAttr("alpha", 2)),
		customNode(t, 1, "AddScaled", "s2", []string{"C", "C"}, []string{"K", "KZ"}),
		testNode(t, 17, "Add", []string{"Y", "K"}, []string{"O"}),
	}
	m := customModel(1, nodes, []string{"X"}, []string{"O", "Z"},
		&onnx.Initializer{Name: "W", Tensor: onnx.FromSlice([]float32{1, 2}, 2)})
	m.Graph.Nodes = append([]*onnx.Node{testNode(t, 17, "Constant", nil, []string{"C"},
		&onnx.Attribute{Name: "value", Type: onnx.AttrTensor, Tensor: onnx.FromSlice([]float32{5, 6}, 2)})}, m.Graph.Nodes...)
	m.Graph.Nodes[0].Graph = m.Graph
	net, err := New(m, backend.Options{Optimize: true})
	if err != nil {
		t.Fatal(err)
	}
	out, err := net.Inference(map[string]onnx.Value{"X": onnx.FromSlice([]float32{10, 20}, 2)})
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, out["O"].(*onnx.Tensor).Float32s(), []float64{10 + 2 + 10, 20 + 4 + 12})
	assertClose(t, out["Z"].(*onnx.Tensor).Float32s(), []float64{10, 40})
}
