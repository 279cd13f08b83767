package onnxruntime_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/onnxruntime"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	onnxpb "github.com/deep500/deep500-go/onnx/pb"
	_ "github.com/deep500/deep500-go/ops"
	"google.golang.org/protobuf/proto"
)

// The tests build small models as protobuf messages and run them with the
// library make setup installs; a missing library fails them (the error
// names `make onnxruntime`), it does not skip them.

func tensorType(elem onnx.DataType, dims ...int64) *onnxpb.TypeProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
	}
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(elem)), Shape: shape}}}
}

func vi(name string, t *onnxpb.TypeProto) *onnxpb.ValueInfoProto {
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: t}
}

func nodeP(op string, in []string, out []string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{OpType: proto.String(op), Input: in, Output: out, Attribute: attrs}
}

func intAttr(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func buildModel(t *testing.T, g *onnxpb.GraphProto, opset int64) *onnx.Model {
	t.Helper()
	p := &onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g,
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(opset)}}}
	data, err := proto.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Decode(data, "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func initializer(t *testing.T, name string, v *onnx.Tensor) *onnxpb.TensorProto {
	t.Helper()
	tp, err := onnx.TensorToProto(name, v)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// mlpModel: h = x·W, y = Relu(h + b), z = ReduceSum(y) as a scalar.
func mlpModel(t *testing.T) *onnx.Model {
	g := &onnxpb.GraphProto{
		Name: proto.String("mlp"),
		Node: []*onnxpb.NodeProto{
			nodeP("MatMul", []string{"x", "W"}, []string{"h"}),
			nodeP("Add", []string{"h", "b"}, []string{"hb"}),
			nodeP("Relu", []string{"hb"}, []string{"y"}),
			nodeP("ReduceSum", []string{"y"}, []string{"z"}, intAttr("keepdims", 0)),
		},
		Initializer: []*onnxpb.TensorProto{
			initializer(t, "W", onnx.FromSlice([]float32{1, -1, 2, 0.5, 0, -3}, 2, 3)),
			initializer(t, "b", onnx.FromSlice([]float32{0.5, 0, -1}, 3)),
		},
		Input:  []*onnxpb.ValueInfoProto{vi("x", tensorType(onnx.Float, 2, 2))},
		Output: []*onnxpb.ValueInfoProto{vi("y", tensorType(onnx.Float, 2, 3)), vi("z", tensorType(onnx.Float))},
	}
	return buildModel(t, g, 13)
}

func newNet(t *testing.T, m *onnx.Model, opts backend.Options) network.Network {
	t.Helper()
	n, err := backend.New("onnxruntime", m, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func wantFloats(t *testing.T, what string, v onnx.Value, shape []int, want []float32) {
	t.Helper()
	tt, ok := v.(*onnx.Tensor)
	if !ok {
		t.Fatalf("%s: got %s, want a tensor", what, onnx.DescribeValue(v))
	}
	if len(tt.Shape) != len(shape) {
		t.Fatalf("%s: shape %v, want %v", what, tt.Shape, shape)
	}
	for i := range shape {
		if tt.Shape[i] != shape[i] {
			t.Fatalf("%s: shape %v, want %v", what, tt.Shape, shape)
		}
	}
	got := tt.Float32s()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if d := got[i] - want[i]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
}

func TestInferenceFetchFeed(t *testing.T) {
	n := newNet(t, mlpModel(t), backend.Options{Threads: 1})
	if got := strings.Join(n.Params(), ","); got != "W,b" {
		t.Errorf("Params() = %s, want W,b", got)
	}
	if got := strings.Join(n.Inputs(), ","); got != "x" {
		t.Errorf("Inputs() = %s, want x", got)
	}
	x := onnx.FromSlice([]float32{1, 2, -1, 0.5}, 2, 2)
	out, err := n.Inference(map[string]onnx.Value{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	// h = [[1+1, -1+0, 2-6], [-1+0.25, 1+0, -2-1.5]] = [[2, -1, -4], [-0.75, 1, -3.5]]
	// y = relu(h + b) = [[2.5, 0, 0], [0, 1, 0]], z = 3.5
	wantFloats(t, "y", out["y"], []int{2, 3}, []float32{2.5, 0, 0, 0, 1, 0})
	wantFloats(t, "z", out["z"], []int{}, []float32{3.5})

	// An intermediate value the session did not output: fetched by
	// exposing it and running the last feeds again.
	vs, err := n.Fetch("h", "W")
	if err != nil {
		t.Fatal(err)
	}
	wantFloats(t, "h", vs[0], []int{2, 3}, []float32{2, -1, -4, -0.75, 1, -3.5})
	wantFloats(t, "W", vs[1], []int{2, 3}, []float32{1, -1, 2, 0.5, 0, -3})

	// A new parameter value changes the next run.
	if err := n.Feed("b", onnx.FromSlice([]float32{0, 0, 10}, 3)); err != nil {
		t.Fatal(err)
	}
	if err := n.AddOutput("hb"); err != nil {
		t.Fatal(err)
	}
	out, err = n.Inference(map[string]onnx.Value{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	wantFloats(t, "y after Feed", out["y"], []int{2, 3}, []float32{2, 0, 6, 0, 1, 6.5})
	wantFloats(t, "hb", out["hb"], []int{2, 3}, []float32{2, -1, 6, -0.75, 1, 6.5})
	wantFloats(t, "z after Feed", out["z"], []int{}, []float32{15.5})

	if err := n.Feed("b", onnx.FromSlice([]float32{0, 0}, 2)); err == nil {
		t.Error("Feed of a parameter with another shape succeeded")
	}
	if err := n.Feed("y", onnx.FromSlice([]float32{0, 0, 0, 0, 0, 0}, 2, 3)); !errors.Is(err, network.ErrUnsupported) {
		t.Errorf("Feed of a computed value: %v, want ErrUnsupported", err)
	}
	if _, err := n.Fetch("nothing"); err == nil || !strings.Contains(err.Error(), `"nothing"`) {
		t.Errorf("Fetch of an unknown name: %v", err)
	}
	if _, err := n.Inference(map[string]onnx.Value{"x": x, "nope": x}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Inference with an unknown feed: %v", err)
	}
	if _, err := n.Inference(nil); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("Inference without feeds: %v", err)
	}
}

// Backprop runs the training graph of package autodiff: the gradients
// by hand for the mlp at x = [[1, 2], [-1, 0.5]], where Relu passes
// hb[0][0] and hb[1][1] only.
func TestBackprop(t *testing.T) {
	n := newNet(t, mlpModel(t), backend.Options{Threads: 1})
	if _, err := n.Fetch(network.GradName("W")); err == nil || !strings.Contains(err.Error(), "InferenceAndBackprop first") {
		t.Errorf("Fetch of a gradient before backprop: %v", err)
	}
	x := onnx.FromSlice([]float32{1, 2, -1, 0.5}, 2, 2)
	out, err := n.InferenceAndBackprop(map[string]onnx.Value{"x": x}, "z")
	if err != nil {
		t.Fatal(err)
	}
	wantFloats(t, "z", out["z"], []int{}, []float32{3.5})
	if got := n.Gradients("z"); len(got) != 2 || got[0] != (network.ParamGrad{Param: "W", Grad: "W.grad"}) || got[1].Param != "b" {
		t.Errorf("Gradients = %v", got)
	}
	vs, err := n.Fetch("W.grad", "b.grad", "x.grad")
	if err != nil {
		t.Fatal(err)
	}
	wantFloats(t, "dW", vs[0], []int{2, 3}, []float32{1, -1, 0, 2, 0.5, 0})
	wantFloats(t, "db", vs[1], []int{3}, []float32{1, 1, 0})
	wantFloats(t, "dx", vs[2], []int{2, 2}, []float32{1, 0.5, -1, 0})

	// An optimizer's step in place: b -= db; inference sees it.
	up := n.(network.ParamUpdater)
	if err := up.UpdateParams("z", func(p, g *onnx.Tensor, name string) error {
		for i := range p.Float32s() {
			p.Float32s()[i] -= g.Float32s()[i]
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wb, _ := network.FetchTensor(n, "b")
	wantFloats(t, "b after the update", wb, []int{3}, []float32{-0.5, -1, -1})
	out, err = n.Inference(map[string]onnx.Value{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	// W = [[0, 0, 2], [-1.5, -0.5, -3]]: h = [[-3, -1, -4], [-0.75, -0.25, -3.5]] + b: all negative but none.
	wantFloats(t, "y after the update", out["y"], []int{2, 3}, []float32{0, 0, 0, 0, 0, 0})

	// A gradient can be replaced (clipping does it) with its own shape only.
	if err := n.Feed("b.grad", onnx.FromSlice([]float32{0, 0, 0}, 3)); err != nil {
		t.Error(err)
	}
	if err := n.Feed("b.grad", onnx.FromSlice([]float32{0}, 1)); err == nil {
		t.Error("Feed of a gradient of another shape succeeded")
	}

	// Frozen parameters and skipped inputs get no gradient.
	f := newNet(t, mlpModel(t), backend.Options{Frozen: []string{"b"}, SkipInputGradients: true})
	if _, err := f.InferenceAndBackprop(map[string]onnx.Value{"x": x}, "z"); err != nil {
		t.Fatal(err)
	}
	if got := f.Gradients("z"); len(got) != 1 || got[0].Param != "W" {
		t.Errorf("Gradients with b frozen = %v", got)
	}
	if _, err := f.Fetch("x.grad"); err == nil {
		t.Error("Fetch of an input's gradient with SkipInputGradients succeeded")
	}
}

// An operator without a gradient rule on the loss's path is unsupported,
// by name.
func TestBackpropUnsupportedOperator(t *testing.T) {
	g := &onnxpb.GraphProto{
		Name: proto.String("dft"),
		Node: []*onnxpb.NodeProto{
			nodeP("Mul", []string{"x", "w"}, []string{"xw"}),
			nodeP("DFT", []string{"xw"}, []string{"f"}),
			nodeP("ReduceSum", []string{"f"}, []string{"z"}, intAttr("keepdims", 0)),
		},
		Initializer: []*onnxpb.TensorProto{initializer(t, "w", onnx.FromSlice([]float32{1, 2, 3, 4}, 1, 4, 1))},
		Input:       []*onnxpb.ValueInfoProto{vi("x", tensorType(onnx.Float, 1, 4, 1))},
		Output:      []*onnxpb.ValueInfoProto{vi("z", tensorType(onnx.Float))},
	}
	n := newNet(t, buildModel(t, g, 17), backend.Options{})
	x := onnx.FromSlice([]float32{1, 0, -1, 0}, 1, 4, 1)
	if _, err := n.InferenceAndBackprop(map[string]onnx.Value{"x": x}, "z"); !errors.Is(err, network.ErrUnsupported) || !strings.Contains(err.Error(), "DFT") {
		t.Errorf("InferenceAndBackprop through DFT: %v, want ErrUnsupported naming DFT", err)
	}
}

// Scalars and 16-bit floats take the paths around onnxruntime_go's limits:
// a declared scalar input fed as [1], scalar outputs flattened, float16
// and bfloat16 outputs cast to float32 and back; the bits must survive.
func TestScalarsAndHalfFloats(t *testing.T) {
	g := &onnxpb.GraphProto{
		Name: proto.String("half"),
		Node: []*onnxpb.NodeProto{
			nodeP("Add", []string{"v", "s"}, []string{"sum"}),
			nodeP("Identity", []string{"s"}, []string{"s_out"}),
			nodeP("Cast", []string{"sum"}, []string{"bf"}, intAttr("to", int64(onnx.BFloat16))),
		},
		Input:  []*onnxpb.ValueInfoProto{vi("s", tensorType(onnx.Float16)), vi("v", tensorType(onnx.Float16, 3))},
		Output: []*onnxpb.ValueInfoProto{vi("sum", tensorType(onnx.Float16, 3)), vi("s_out", tensorType(onnx.Float16)), vi("bf", tensorType(onnx.BFloat16, 3))},
	}
	n := newNet(t, buildModel(t, g, 13), backend.Options{})
	s := onnx.Scalar(onnx.F16From(1.5))
	v := onnx.FromSlice([]onnx.F16{onnx.F16From(1), onnx.F16From(-2.25), onnx.F16From(1000)}, 3)
	out, err := n.Inference(map[string]onnx.Value{"s": s, "v": v})
	if err != nil {
		t.Fatal(err)
	}
	sum, ok := out["sum"].(*onnx.Tensor)
	if !ok || sum.Type != onnx.Float16 || len(sum.Shape) != 1 || sum.Shape[0] != 3 {
		t.Fatalf("sum = %s, want float16[3]", onnx.DescribeValue(out["sum"]))
	}
	want := []float32{2.5, -0.75, 1001.5}
	for i, h := range sum.Data.([]onnx.F16) {
		if h.Float32() != want[i] {
			t.Errorf("sum[%d] = %v, want %v", i, h.Float32(), want[i])
		}
	}
	so, ok := out["s_out"].(*onnx.Tensor)
	if !ok || so.Type != onnx.Float16 || len(so.Shape) != 0 || so.Data.([]onnx.F16)[0] != onnx.F16From(1.5) {
		t.Errorf("s_out = %s, want the float16 scalar 1.5", onnx.DescribeValue(out["s_out"]))
	}
	bf, ok := out["bf"].(*onnx.Tensor)
	if !ok || bf.Type != onnx.BFloat16 {
		t.Fatalf("bf = %s, want bfloat16[3]", onnx.DescribeValue(out["bf"]))
	}
	for i, h := range bf.Data.([]onnx.BF16) {
		if h.Float32() != onnx.BF16From(want[i]).Float32() {
			t.Errorf("bf[%d] = %v, want %v", i, h.Float32(), onnx.BF16From(want[i]).Float32())
		}
	}
}

func TestStringsAndSequences(t *testing.T) {
	g := &onnxpb.GraphProto{
		Name: proto.String("strings"),
		Node: []*onnxpb.NodeProto{
			nodeP("Identity", []string{"s"}, []string{"s_out"}),
			nodeP("SequenceConstruct", []string{"x", "x"}, []string{"seq"}),
		},
		Input: []*onnxpb.ValueInfoProto{vi("s", tensorType(onnx.String, 2)), vi("x", tensorType(onnx.Int64, 2))},
		Output: []*onnxpb.ValueInfoProto{vi("s_out", tensorType(onnx.String, 2)),
			vi("seq", &onnxpb.TypeProto{Value: &onnxpb.TypeProto_SequenceType{SequenceType: &onnxpb.TypeProto_Sequence{ElemType: tensorType(onnx.Int64, 2)}}})},
	}
	n := newNet(t, buildModel(t, g, 13), backend.Options{})
	out, err := n.Inference(map[string]onnx.Value{
		"s": onnx.FromSlice([]string{"héllo", ""}, 2),
		"x": onnx.FromSlice([]int64{7, -8}, 2),
	})
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := out["s_out"].(*onnx.Tensor); !ok || strings.Join(s.Strings(), "|") != "héllo|" {
		t.Errorf("s_out = %s", onnx.DescribeValue(out["s_out"]))
	}
	seq, ok := out["seq"].(*onnx.Sequence)
	if !ok || len(seq.Values) != 2 {
		t.Fatalf("seq = %s, want a sequence of 2", onnx.DescribeValue(out["seq"]))
	}
	for i, e := range seq.Values {
		if et, ok := e.(*onnx.Tensor); !ok || len(et.Int64s()) != 2 || et.Int64s()[0] != 7 || et.Int64s()[1] != -8 {
			t.Errorf("seq[%d] = %s", i, onnx.DescribeValue(e))
		}
	}
}

func TestMissingLibraryNamesPathAndMakeTarget(t *testing.T) {
	const path = "/nonexistent/deep500/libonnxruntime.so.1"
	_, err := backend.New("onnxruntime", mlpModel(t), backend.Options{Settings: map[string]string{"lib": path}})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "make onnxruntime") {
		t.Fatalf("New with a missing library: %v", err)
	}
	if errors.Is(err, network.ErrUnsupported) {
		t.Errorf("a missing library is a set-up error, not an unsupported feature: %v", err)
	}
}

func TestUnsupportedOperatorIsErrUnsupported(t *testing.T) {
	// Add before opset 7 has no kernel in ONNX Runtime.
	g := &onnxpb.GraphProto{
		Name:   proto.String("old"),
		Node:   []*onnxpb.NodeProto{nodeP("Add", []string{"a", "a"}, []string{"y"})},
		Input:  []*onnxpb.ValueInfoProto{vi("a", tensorType(onnx.Float, 2))},
		Output: []*onnxpb.ValueInfoProto{vi("y", tensorType(onnx.Float, 2))},
	}
	_, err := backend.New("onnxruntime", buildModel(t, g, 6), backend.Options{})
	if !errors.Is(err, network.ErrUnsupported) || !strings.Contains(err.Error(), "Add(6)") {
		t.Fatalf("New of an opset-6 Add: %v, want ErrUnsupported naming Add(6)", err)
	}
}

// A sequence of scalars is fed element by element (onnxruntime_go cannot
// read such a sequence back when it makes one), and an empty sequence is
// made inside the graph; each shape of feed gets its own session.
func TestSequenceFeeds(t *testing.T) {
	seqType := &onnxpb.TypeProto{Value: &onnxpb.TypeProto_SequenceType{SequenceType: &onnxpb.TypeProto_Sequence{ElemType: tensorType(onnx.Float)}}}
	g := &onnxpb.GraphProto{
		Name: proto.String("seq"),
		Node: []*onnxpb.NodeProto{
			nodeP("SequenceLength", []string{"s"}, []string{"n"}),
			nodeP("SequenceInsert", []string{"s", "x"}, []string{"s2"}),
			nodeP("SequenceAt", []string{"s2", "pos"}, []string{"e"}),
		},
		Initializer: []*onnxpb.TensorProto{initializer(t, "pos", onnx.Scalar(int64(-1)))},
		Input:       []*onnxpb.ValueInfoProto{vi("s", seqType), vi("x", tensorType(onnx.Float))},
		Output:      []*onnxpb.ValueInfoProto{vi("n", tensorType(onnx.Int64)), vi("e", tensorType(onnx.Float))},
	}
	n := newNet(t, buildModel(t, g, 13), backend.Options{})
	scalars := func(v ...float32) *onnx.Sequence {
		s := &onnx.Sequence{Elem: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float}}
		for _, x := range v {
			s.Values = append(s.Values, onnx.Scalar(x))
		}
		return s
	}
	for _, c := range []struct {
		seq  *onnx.Sequence
		want int64
	}{
		{scalars(1.5, 2.5, 3.5), 3},
		{scalars(), 0},
		{scalars(4), 1},
		{&onnx.Sequence{Values: []onnx.Value{onnx.FromSlice([]float32{1, 2}, 2)}}, 1},
	} {
		out, err := n.Inference(map[string]onnx.Value{"s": c.seq, "x": onnx.Scalar(float32(9))})
		if err != nil {
			t.Fatalf("sequence of %d: %v", len(c.seq.Values), err)
		}
		wantFloats(t, "e", out["e"], []int{}, []float32{9})
		if nt, ok := out["n"].(*onnx.Tensor); !ok || len(nt.Shape) != 0 || nt.Int64s()[0] != c.want {
			t.Errorf("SequenceLength of %d elements = %s", len(c.seq.Values), onnx.DescribeValue(out["n"]))
		}
	}
}

// ZipMap's output, a sequence of maps, converts back to onnx.Map values.
func TestMapOutputs(t *testing.T) {
	mapType := &onnxpb.TypeProto{Value: &onnxpb.TypeProto_MapType{MapType: &onnxpb.TypeProto_Map{KeyType: proto.Int32(int32(onnx.Int64)), ValueType: tensorType(onnx.Float)}}}
	zip := nodeP("ZipMap", []string{"x"}, []string{"z"}, &onnxpb.AttributeProto{Name: proto.String("classlabels_int64s"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{10, 20}})
	zip.Domain = proto.String("ai.onnx.ml")
	g := &onnxpb.GraphProto{
		Name:   proto.String("zip"),
		Node:   []*onnxpb.NodeProto{zip},
		Input:  []*onnxpb.ValueInfoProto{vi("x", tensorType(onnx.Float, 2, 2))},
		Output: []*onnxpb.ValueInfoProto{vi("z", &onnxpb.TypeProto{Value: &onnxpb.TypeProto_SequenceType{SequenceType: &onnxpb.TypeProto_Sequence{ElemType: mapType}}})},
	}
	p := &onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g, OpsetImport: []*onnxpb.OperatorSetIdProto{
		{Domain: proto.String(""), Version: proto.Int64(13)}, {Domain: proto.String("ai.onnx.ml"), Version: proto.Int64(1)}}}
	data, err := proto.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Decode(data, "")
	if err != nil {
		t.Fatal(err)
	}
	n := newNet(t, m, backend.Options{})
	out, err := n.Inference(map[string]onnx.Value{"x": onnx.FromSlice([]float32{0.25, 0.75, 0.5, 0.5}, 2, 2)})
	if err != nil {
		t.Fatal(err)
	}
	seq, ok := out["z"].(*onnx.Sequence)
	if !ok || len(seq.Values) != 2 {
		t.Fatalf("z = %s, want a sequence of 2 maps", onnx.DescribeValue(out["z"]))
	}
	want := [][]float32{{0.25, 0.75}, {0.5, 0.5}}
	for i, v := range seq.Values {
		mv, ok := v.(*onnx.Map)
		if !ok || len(mv.Keys.Int64s()) != 2 || len(mv.Values.Values) != 2 {
			t.Fatalf("z[%d] = %s, want a map of 2", i, onnx.DescribeValue(v))
		}
		got := map[int64]float32{}
		for j, k := range mv.Keys.Int64s() {
			got[k] = mv.Values.Values[j].(*onnx.Tensor).Float32s()[0]
		}
		if got[10] != want[i][0] || got[20] != want[i][1] {
			t.Errorf("z[%d] = %v, want 10:%v 20:%v", i, got, want[i][0], want[i][1])
		}
	}
}
