package ops_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

const customOpDomain = "test.ops.custom"

// customVisitor records the custom operator it is asked to run.
type customVisitor struct {
	ops.UnsupportedVisitor
	seen *ops.Custom
}

func (v *customVisitor) VisitCustom(o *ops.Custom) error { v.seen = o; return nil }

func TestRegisterCustomTypesNodes(t *testing.T) {
	for _, since := range []int{1, 5} {
		if err := ops.RegisterCustom(customOpDomain, "Blend", since); err != nil {
			t.Fatal(err)
		}
	}
	// Registering a version again is allowed (another backend's kernels).
	if err := ops.RegisterCustom(customOpDomain, "Blend", 1); err != nil {
		t.Fatalf("second registration: %v", err)
	}
	if !slices.Contains(ops.CustomOperators(), onnx.RegisteredOperator{Domain: customOpDomain, OpType: "Blend", Since: 5}) {
		t.Errorf("CustomOperators() = %v lacks Blend-5", ops.CustomOperators())
	}

	// A model importing the domain at 3 selects version 1, at 7 version 5.
	for _, c := range []struct{ opset, since int64 }{{3, 1}, {7, 5}} {
		n := &onnx.Node{Name: "blend", OpType: "Blend", Domain: customOpDomain, Opset: c.opset,
			Inputs: []string{"a", "", "c"}, Outputs: []string{"y"},
			Attributes: []*onnx.Attribute{
				{Name: "w", Type: onnx.AttrFloat, Float: 0.25},
				{Name: "k", Type: onnx.AttrInt, Int: 3},
				{Name: "mode", Type: onnx.AttrString, String: "soft"},
				{Name: "ws", Type: onnx.AttrInts, Ints: []int64{1, 2}},
				{Name: "fs", Type: onnx.AttrFloats, Floats: []float32{0.5}},
				{Name: "ss", Type: onnx.AttrStrings, Strings: []string{"p", "q"}},
				{Name: "t", Type: onnx.AttrTensor, Tensor: onnx.FromSlice([]int64{7}, 1)},
				{Name: "ref", Type: onnx.AttrFloat, RefAttrName: "outer"},
			}}
		if err := onnx.TypeNode(n); err != nil {
			t.Fatal(err)
		}
		o, ok := n.Op.(*ops.Custom)
		if !ok || o.SinceVersion() != int(c.since) || o.Domain() != customOpDomain || o.OpType() != "Blend" {
			t.Fatalf("opset %d: typed as %T %+v", c.opset, n.Op, n.Op)
		}
		if !slices.Equal(o.In, []string{"a", "", "c"}) || !slices.Equal(o.Out, []string{"y"}) || o.Node() != n {
			t.Fatalf("names: in %q out %q", o.In, o.Out)
		}
		v := &customVisitor{}
		if err := ops.Visit(n, v); err != nil || v.seen != o {
			t.Fatalf("visit: %v, saw %v", err, v.seen)
		}
		// A visitor without VisitCustom answers unsupported, naming the
		// operator and the version.
		err := ops.Visit(n, ops.UnsupportedVisitor{})
		if !errors.Is(err, network.ErrUnsupported) || !strings.Contains(err.Error(), "Blend (domain test.ops.custom, version") {
			t.Errorf("plain visitor: %v", err)
		}
	}

	n := &onnx.Node{Name: "blend", OpType: "Blend", Domain: customOpDomain, Opset: 1,
		Attributes: []*onnx.Attribute{
			{Name: "w", Type: onnx.AttrFloat, Float: 0.25},
			{Name: "k", Type: onnx.AttrInt, Int: 3},
			{Name: "mode", Type: onnx.AttrString, String: "soft"},
			{Name: "ws", Type: onnx.AttrInts, Ints: []int64{1, 2}},
			{Name: "fs", Type: onnx.AttrInts, Ints: []int64{4}},
			{Name: "ss", Type: onnx.AttrStrings, Strings: []string{"p", "q"}},
			{Name: "t", Type: onnx.AttrTensor, Tensor: onnx.FromSlice([]int64{7}, 1)},
			{Name: "ref", Type: onnx.AttrFloat, RefAttrName: "outer"},
		}}
	if err := onnx.TypeNode(n); err != nil {
		t.Fatal(err)
	}
	o := n.Op.(*ops.Custom)
	check := func(what string, ok bool, err error) {
		t.Helper()
		if err != nil || !ok {
			t.Errorf("%s: ok %v, err %v", what, ok, err)
		}
	}
	w, err := o.AttrFloat("w", 1)
	check("w", w == 0.25, err)
	kf, err := o.AttrFloat("k", 1) // an INT read as a FLOAT
	check("k as float", kf == 3, err)
	k, err := o.AttrInt("k", 0)
	check("k", k == 3, err)
	mode, err := o.AttrString("mode", "hard")
	check("mode", mode == "soft", err)
	ws, err := o.AttrInts("ws")
	check("ws", slices.Equal(ws, []int64{1, 2}), err)
	fs, err := o.AttrFloats("fs")
	check("fs (INTS)", slices.Equal(fs, []float32{4}), err)
	ss, err := o.AttrStrings("ss")
	check("ss", slices.Equal(ss, []string{"p", "q"}), err)
	tt, err := o.AttrTensor("t")
	check("t", tt != nil && tt.Int64s()[0] == 7, err)
	// Absent attributes give the default; a reference to a caller's
	// attribute counts as absent.
	d, err := o.AttrFloat("missing", 1.5)
	check("default", d == 1.5, err)
	r, err := o.AttrFloat("ref", 2)
	check("ref", r == 2 && o.Attr("ref") == nil, err)
	l, err := o.AttrInts("missing")
	check("absent list", l == nil, err)
	// Lists are copies.
	ws[0] = 99
	if again, _ := o.AttrInts("ws"); again[0] != 1 {
		t.Error("AttrInts shares the node's slice")
	}
	if len(o.Attributes()) != 8 {
		t.Errorf("Attributes() has %d", len(o.Attributes()))
	}
	// The wrong type is an error naming the node and the attribute.
	for _, f := range []func() error{
		func() error { _, err := o.AttrInt("w", 0); return err },
		func() error { _, err := o.AttrString("k", ""); return err },
		func() error { _, err := o.AttrFloat("mode", 0); return err },
		func() error { _, err := o.AttrStrings("ws"); return err },
		func() error { _, err := o.AttrTensor("k"); return err },
	} {
		if err := f(); err == nil || !strings.Contains(err.Error(), `Blend "blend": attribute`) || !strings.Contains(err.Error(), "has type") {
			t.Errorf("wrong type: %v", err)
		}
	}

	// An attribute given twice fails typing.
	dup := &onnx.Node{OpType: "Blend", Domain: customOpDomain, Opset: 1, Attributes: []*onnx.Attribute{
		{Name: "w", Type: onnx.AttrFloat}, {Name: "w", Type: onnx.AttrFloat}}}
	if err := onnx.TypeNode(dup); err == nil || !strings.Contains(err.Error(), `"w" given twice`) {
		t.Errorf("duplicate attribute: %v", err)
	}

	// ops.New probes a custom operator as it does a generated one.
	op, err := ops.New(customOpDomain, "Blend", 6)
	if err != nil || op.SinceVersion() != 5 {
		t.Fatalf("New: %v %v", op, err)
	}
	if _, ok := op.(*ops.Custom); !ok {
		t.Fatalf("New gave %T", op)
	}
}

func TestRegisterCustomRefusesClashes(t *testing.T) {
	onnx.RegisterOperator(customOpDomain, "HandWritten", 1, func(n *onnx.Node, since int) (onnx.Operator, error) {
		return &onnx.UnknownOperator{Type: n.OpType, Dom: n.Domain}, nil
	})
	for _, c := range []struct {
		domain, op string
		since      int
		want       string
	}{
		{customOpDomain, "HandWritten", 1, "clashes with operator HandWritten of that domain registered at version 1"},
		{customOpDomain, "HandWritten", 2, "clashes"},
		{"", "Relu", 6, `domain "ai.onnx" is reserved`},
		{"ai.onnx", "NewThing", 1, `domain "ai.onnx" is reserved`},
		{"ai.onnx.ml", "TreeEnsemble", 5, `domain "ai.onnx.ml" is reserved`},
		{"ai.onnx.preview.training", "X", 1, "reserved"},
		{"ai.onnx.preview", "X", 1, "reserved"},
		{ops.LossDomain, "L1Loss", 2, "reserved"},
		{customOpDomain, "", 1, "needs an op type"},
		{customOpDomain, "Neg", -1, "version -1"},
	} {
		err := ops.RegisterCustom(c.domain, c.op, c.since)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RegisterCustom(%q, %q, %d) = %v, want an error saying %q", c.domain, c.op, c.since, err, c.want)
		}
	}
	// The built-in stays what it was.
	op, err := ops.New("", "Relu", 14)
	if _, ok := op.(*ops.Relu); err != nil || !ok {
		t.Errorf("Relu is now %T (%v)", op, err)
	}
}
