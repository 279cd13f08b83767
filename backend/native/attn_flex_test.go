package native

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/onnx"
)

const flexDomain = "ai.onnx.preview"

// flexMod builds a modifier subgraph (input "x", output "y") of nodes at
// opset 17, with the given initializers.
func flexMod(t *testing.T, nodes []*onnx.Node, inits ...*onnx.Initializer) *onnx.Graph {
	t.Helper()
	g := controlGraph(nodes, []string{"x"}, []string{"y"})
	g.Initializers = inits
	return g
}

func flexScalar(name string, v any) *onnx.Initializer {
	switch x := v.(type) {
	case float32:
		return &onnx.Initializer{Name: name, Tensor: onnx.FromSlice([]float32{x})}
	case float64:
		return &onnx.Initializer{Name: name, Tensor: onnx.FromSlice([]float64{x})}
	case int64:
		return &onnx.Initializer{Name: name, Tensor: onnx.FromSlice([]int64{x})}
	}
	panic("flexScalar: type")
}

// flexCausalMod is ONNX's causal-mask score_mod: -inf where the key index
// exceeds the query index.
func flexCausalMod(t *testing.T) *onnx.Graph {
	return flexMod(t, []*onnx.Node{
		testNode(t, 17, "Shape", []string{"x"}, []string{"shape"}),
		testNode(t, 17, "Gather", []string{"shape", "idx2"}, []string{"L"}, intAttr("axis", 0)),
		testNode(t, 17, "Gather", []string{"shape", "idx3"}, []string{"S"}, intAttr("axis", 0)),
		testNode(t, 17, "Range", []string{"zero", "L", "one"}, []string{"qr"}),
		testNode(t, 17, "Reshape", []string{"qr", "qshape"}, []string{"qi"}),
		testNode(t, 17, "Range", []string{"zero", "S", "one"}, []string{"kr"}),
		testNode(t, 17, "Reshape", []string{"kr", "kshape"}, []string{"ki"}),
		testNode(t, 17, "GreaterOrEqual", []string{"qi", "ki"}, []string{"keep"}),
		testNode(t, 17, "Where", []string{"keep", "x", "ninf"}, []string{"y"}),
	}, flexScalar("zero", int64(0)), flexScalar("one", int64(1)), flexScalar("idx2", int64(2)), flexScalar("idx3", int64(3)),
		&onnx.Initializer{Name: "qshape", Tensor: onnx.FromSlice([]int64{1, 1, -1, 1}, 4)},
		&onnx.Initializer{Name: "kshape", Tensor: onnx.FromSlice([]int64{1, 1, 1, -1}, 4)},
		flexScalar("ninf", float32(math.Inf(-1))))
}

// flexRelPosMod is ONNX's relative-position score_mod: scores + (q - k).
func flexRelPosMod(t *testing.T) *onnx.Graph {
	return flexMod(t, []*onnx.Node{
		testNode(t, 17, "Shape", []string{"x"}, []string{"shape"}),
		testNode(t, 17, "Gather", []string{"shape", "idx2"}, []string{"L"}, intAttr("axis", 0)),
		testNode(t, 17, "Gather", []string{"shape", "idx3"}, []string{"S"}, intAttr("axis", 0)),
		testNode(t, 17, "Range", []string{"zero", "L", "one"}, []string{"qr"}),
		testNode(t, 17, "Reshape", []string{"qr", "qshape"}, []string{"qi"}),
		testNode(t, 17, "Range", []string{"zero", "S", "one"}, []string{"kr"}),
		testNode(t, 17, "Reshape", []string{"kr", "kshape"}, []string{"ki"}),
		testNode(t, 17, "Sub", []string{"qi", "ki"}, []string{"rel"}),
		testNode(t, 17, "Cast", []string{"rel"}, []string{"relf"}, intAttr("to", int64(onnx.Float))),
		testNode(t, 17, "Add", []string{"x", "relf"}, []string{"y"}),
	}, flexScalar("zero", int64(0)), flexScalar("one", int64(1)), flexScalar("idx2", int64(2)), flexScalar("idx3", int64(3)),
		&onnx.Initializer{Name: "qshape", Tensor: onnx.FromSlice([]int64{-1, 1}, 2)},
		&onnx.Initializer{Name: "kshape", Tensor: onnx.FromSlice([]int64{1, -1}, 2)})
}

// flexBinaryMod is y = x <op> c for a scalar constant c.
func flexBinaryMod(t *testing.T, op string, c any) *onnx.Graph {
	return flexMod(t, []*onnx.Node{testNode(t, 17, op, []string{"x", "c"}, []string{"y"})}, flexScalar("c", c))
}

func TestFlexAttentionDefinition(t *testing.T) {
	e := math.E
	// Keys 0 and ln 3 for a query of 1: weights 1/4, 3/4, values 2 and 6.
	q, k, v := attnQKV(1)
	q2, _, _ := attnQKV(2)
	e8 := math.Exp(0.8)
	for _, c := range []struct {
		name  string
		attrs []*onnx.Attribute
		q     *onnx.Tensor
		want  []float64
	}{
		{"plain", nil, q, []float64{5}},
		{"scale 2", []*onnx.Attribute{floatAttr("scale", 2)}, q, []float64{0.2 + 5.4}},
		// Adding a constant to every score changes nothing.
		{"score_mod bias", []*onnx.Attribute{controlGraphAttr("score_mod", flexBinaryMod(t, "Add", float32(0.5)))}, q, []float64{5}},
		{"prob_mod scale", []*onnx.Attribute{controlGraphAttr("prob_mod", flexBinaryMod(t, "Mul", float32(0.5)))}, q, []float64{2.5}},
		// Soft cap 1: scores 0 and tanh(ln 3) = 0.8.
		{"soft cap", []*onnx.Attribute{controlGraphAttr("score_mod", flexMod(t, []*onnx.Node{
			testNode(t, 17, "Div", []string{"x", "cap"}, []string{"s"}),
			testNode(t, 17, "Tanh", []string{"s"}, []string{"th"}),
			testNode(t, 17, "Mul", []string{"th", "cap"}, []string{"y"}),
		}, flexScalar("cap", float32(1))))}, q, []float64{(2 + 6*e8) / (1 + e8)}},
		// Causal: query 0 sees key 0, query 1 both.
		{"causal score_mod", []*onnx.Attribute{controlGraphAttr("score_mod", flexCausalMod(t))}, q2, []float64{2, 5}},
		// Scores ln 3 * k plus (q - k): row 0 [0, ln3-1], row 1 [1, ln3].
		{"relative position", []*onnx.Attribute{controlGraphAttr("score_mod", flexRelPosMod(t))}, q2,
			[]float64{(2 + 6*3/e) / (1 + 3/e), (2*e + 6*3) / (e + 3)}},
		// Without a fully-masked-row rule, a row of -inf scores is NaN.
		{"all -inf", []*onnx.Attribute{controlGraphAttr("score_mod", flexBinaryMod(t, "Add", float32(math.Inf(-1))))}, q, []float64{math.NaN()}},
	} {
		out, err := runOp(t, flexDomain, 1, "FlexAttention", c.attrs, 1, c.q, k, v)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sigClose(t, c.name, sigFloats(t, out[0]), c.want, 1e-6)
	}
}

// Query head h reads K/V head h / (Hq / Hkv).
func TestFlexAttentionGroups(t *testing.T) {
	q := onnx.FromSlice(make([]float64, 4), 1, 4, 1, 1)
	k := onnx.FromSlice(make([]float64, 2), 1, 2, 1, 1)
	v := onnx.FromSlice([]float64{2, 6}, 1, 2, 1, 1)
	out, err := runOp(t, flexDomain, 1, "FlexAttention", nil, 1, q, k, v)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Type != onnx.Double {
		t.Fatalf("Y is %v, want double", out[0].Type)
	}
	sigClose(t, "groups", sigFloats(t, out[0]), []float64{2, 2, 6, 6}, 0)
}

// The subgraphs get the softmax precision: float for float16 inputs,
// double for double ones or when softmax_precision says so. A subgraph
// adding a constant of another type fails.
func TestFlexAttentionSubgraphPrecision(t *testing.T) {
	q, k, v := attnQKV(1)
	half := func(x *onnx.Tensor) *onnx.Tensor {
		h := onnx.NewTensor(onnx.Float16, x.Shape...)
		storeFloat64s(h, sigFloats(t, x))
		return h
	}
	addF := controlGraphAttr("prob_mod", flexBinaryMod(t, "Mul", float32(2)))
	addD := controlGraphAttr("prob_mod", flexBinaryMod(t, "Mul", float64(2)))
	out, err := runOp(t, flexDomain, 1, "FlexAttention", []*onnx.Attribute{addF}, 1, half(q), half(k), half(v))
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Type != onnx.Float16 {
		t.Fatalf("Y is %v, want float16", out[0].Type)
	}
	sigClose(t, "float16 in, float subgraph", sigFloats(t, out[0]), []float64{10}, 2e-3)
	out, err = runOp(t, flexDomain, 1, "FlexAttention", []*onnx.Attribute{addD, intAttr("softmax_precision", int64(onnx.Double))}, 1, q, k, v)
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "double subgraph", sigFloats(t, out[0]), []float64{10}, 1e-6)
	if _, err := runOp(t, flexDomain, 1, "FlexAttention", []*onnx.Attribute{addD}, 1, q, k, v); err == nil {
		t.Error("float scores into a double Mul: expected an error")
	}
	// Bad graphs and inputs.
	two := controlGraph([]*onnx.Node{testNode(t, 17, "Add", []string{"x", "z"}, []string{"y"})}, []string{"x", "z"}, []string{"y"})
	for _, c := range []struct {
		name    string
		attrs   []*onnx.Attribute
		q, k, v *onnx.Tensor
		errPart string
	}{
		{"two inputs", []*onnx.Attribute{controlGraphAttr("score_mod", two)}, q, k, v, "one input"},
		{"shape change", []*onnx.Attribute{controlGraphAttr("score_mod", flexMod(t, []*onnx.Node{
			testNode(t, 17, "ReduceSum", []string{"x"}, []string{"y"}),
		}))}, q, k, v, "shape"},
		{"3-D", nil, onnx.FromSlice([]float32{1}, 1, 1, 1), k, v, "4-D"},
		{"types", nil, q, k, onnx.FromSlice([]float64{2, 6}, 1, 1, 2, 1), "type"},
		{"heads", nil, onnx.NewTensor(onnx.Float, 1, 3, 1, 1), onnx.NewTensor(onnx.Float, 1, 2, 2, 1), onnx.NewTensor(onnx.Float, 1, 2, 2, 1), "multiple"},
		{"precision", []*onnx.Attribute{intAttr("softmax_precision", int64(onnx.Int32))}, q, k, v, "softmax_precision"},
	} {
		_, err := runOp(t, flexDomain, 1, "FlexAttention", c.attrs, 1, c.q, c.k, c.v)
		if err == nil || !strings.Contains(err.Error(), c.errPart) {
			t.Errorf("%s: got %v, want an error about %q", c.name, err, c.errPart)
		}
	}
}

// A subgraph may read a value of the main graph.
func TestFlexAttentionSubgraphCapture(t *testing.T) {
	mod := controlGraph([]*onnx.Node{testNode(t, 17, "Add", []string{"x", "bias"}, []string{"y"})}, []string{"x"}, []string{"y"}, "bias")
	n := &onnx.Node{OpType: "FlexAttention", Domain: flexDomain, Inputs: []string{"Q", "K", "V"}, Outputs: []string{"Y"}, Opset: 1,
		Attributes: []*onnx.Attribute{controlGraphAttr("score_mod", mod)}}
	since, ctor, ok := onnx.LookupOperator(flexDomain, n.OpType, 1)
	if !ok {
		t.Fatal("FlexAttention is not registered")
	}
	op, err := ctor(n, since)
	if err != nil {
		t.Fatal(err)
	}
	n.Op = op
	m := testModel([]*onnx.Node{n}, []*onnx.ValueInfo{{Name: "Q"}, {Name: "K"}, {Name: "V"}, {Name: "bias"}}, []*onnx.ValueInfo{{Name: "Y"}})
	mod.Parent = m.Graph
	m.Opsets[flexDomain] = 1
	net, err := New(m, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q, k, v := attnQKV(1)
	// The bias ln 3 on key 0 evens the weights: output 4.
	res, err := net.Inference(map[string]onnx.Value{"Q": q, "K": k, "V": v, "bias": onnx.FromSlice([]float32{float32(math.Log(3)), 0}, 2)})
	if err != nil {
		t.Fatal(err)
	}
	sigClose(t, "captured bias", sigFloats(t, res["Y"].(*onnx.Tensor)), []float64{4}, 1e-6)
}

// flexReference ports the reference implementation's computation for
// inputs without subgraphs: repeated K/V heads, sqrt(scale) on Q and K,
// a softmax over the keys, the product with V.
func flexReference(q, k, v attnND, scale float64) attnND {
	B, Hq, L, E := q.shape[0], q.shape[1], q.shape[2], q.shape[3]
	Hkv, S, Ev := k.shape[1], k.shape[2], v.shape[3]
	sq := math.Sqrt(scale)
	y := newAttnND(B, Hq, L, Ev)
	for b := range B {
		for h := range Hq {
			g := h / (Hq / Hkv)
			for i := range L {
				sc := make([]float64, S)
				m := math.Inf(-1)
				for j := range S {
					for e := range E {
						sc[j] += q.data[q.idx(b, h, i, e)] * sq * (k.data[k.idx(b, g, j, e)] * sq)
					}
					m = max(m, sc[j])
				}
				sum := 0.0
				for j := range sc {
					sc[j] = math.Exp(sc[j] - m)
					sum += sc[j]
				}
				for j := range sc {
					for e := range Ev {
						y.data[y.idx(b, h, i, e)] += sc[j] / sum * v.data[v.idx(b, g, j, e)]
					}
				}
			}
		}
	}
	return y
}

// The configurations of ONNX's FlexAttention test cases without subgraphs
// (flexattention.py), inputs drawn here.
func TestFlexAttentionAgainstReferenceCases(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		name                    string
		B, Hq, Hkv, L, S, E, Ev int
		scale                   float64
		typ                     onnx.DataType
	}{
		{"flexattention", 2, 4, 4, 8, 6, 16, 16, 0, onnx.Float},
		{"flexattention_scaled", 2, 4, 4, 8, 6, 16, 16, 0.1, onnx.Float},
		{"flexattention_gqa", 2, 8, 2, 4, 6, 16, 16, 0, onnx.Float},
		{"flexattention_diff_head_sizes", 2, 4, 4, 8, 6, 16, 32, 0, onnx.Float},
		{"flexattention_fp16", 2, 4, 4, 8, 6, 16, 16, 0, onnx.Float16},
		{"flexattention_double", 2, 4, 4, 8, 6, 16, 16, 0, onnx.Double},
	} {
		half := c.typ == onnx.Float16
		q, k, v := attnRand(r, half, c.B, c.Hq, c.L, c.E), attnRand(r, half, c.B, c.Hkv, c.S, c.E), attnRand(r, half, c.B, c.Hkv, c.S, c.Ev)
		scale := 1 / math.Sqrt(float64(c.E))
		var attrs []*onnx.Attribute
		if c.scale != 0 {
			scale = c.scale
			attrs = append(attrs, floatAttr("scale", float32(c.scale)))
		}
		want := flexReference(q, k, v, scale)
		ts := make([]*onnx.Tensor, 3)
		for i, a := range []attnND{q, k, v} {
			ts[i] = onnx.NewTensor(c.typ, a.shape...)
			storeFloat64s(ts[i], a.data)
		}
		out, err := runOp(t, flexDomain, 1, "FlexAttention", attrs, 1, ts...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if out[0].Type != c.typ || !slices.Equal(out[0].Shape, want.shape) {
			t.Fatalf("%s: Y %v %v, want %v %v", c.name, out[0].Type, out[0].Shape, c.typ, want.shape)
		}
		tol := 1e-5
		if half {
			tol = 2e-3
		}
		sigClose(t, c.name, sigFloats(t, out[0]), want.data, tol)
	}
}
