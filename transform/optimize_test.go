package transform_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/transform"
)

func TestEliminateDead(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	b := newTestGraph(t, 17)
	b.input("x", 3)
	b.input("withDefault", 3)
	b.init("withDefault", randomTensor(rng, 3)) // part of the interface: stays
	b.init("unused", randomTensor(rng, 3))
	b.init("w", randomTensor(rng, 3))
	b.node("Mul", []string{"x", "w"}, []string{"deadMul"})
	b.node("Relu", []string{"deadMul"}, []string{"deadRelu"})
	b.node("Sigmoid", []string{"x"}, []string{"y"})
	b.output("y")
	floatInfo := &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float}
	b.g.ValueInfo = []*onnx.ValueInfo{{Name: "deadRelu", Type: floatInfo}, {Name: "y", Type: floatInfo}}
	m := b.model()
	opt, rep := optimize(t, m)
	if len(opt.Graph.ValueInfo) != 1 || opt.Graph.ValueInfo[0].Name != "y" {
		t.Errorf("value infos %v, want only y's", opt.Graph.ValueInfo)
	}
	if got := opTypes(opt); !slices.Equal(got, []string{"Sigmoid"}) {
		t.Fatalf("optimized nodes %v, want [Sigmoid]", got)
	}
	var inits []string
	for _, in := range opt.Graph.Initializers {
		inits = append(inits, in.Name)
	}
	if !slices.Equal(inits, []string{"withDefault"}) {
		t.Errorf("initializers %v, want [withDefault]", inits)
	}
	if n := passCount(rep, "eliminate-dead"); n != 4 {
		t.Errorf("report %v: want 2 nodes and 2 initializers removed", rep)
	}
	assertEquivalent(t, m, opt, map[string]onnx.Value{"x": randomTensor(rng, 3)})
}

// The presets built with BatchNorm lose every BatchNormalization, and
// compute what they computed before.
func TestOptimizePresets(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input []int
		slow  bool
		// scaled compares within the tolerance scaled to the output
		// (ScaledTo): with random statistics these presets' logits reach
		// the hundreds (mobilenet_v3_small) or 1e5 (mnasnet0_5), and a
		// logit near 0 among them differs by float32 rounding of the
		// scale, 1e-6 of it, more than an absolute 1e-5. A wrong shift
		// term in the folding would be off by the order of a BatchNorm
		// bias, far beyond either.
		scaled bool
	}{
		{"lenet", []int{2, 1, 28, 28}, false, false},
		{"resnet8", []int{2, 3, 32, 32}, false, false},
		{"mobilenetv2", []int{1, 3, 224, 224}, true, false},
		{"mobilenet_v3_small", []int{1, 3, 224, 224}, true, true},
		{"mnasnet0_5", []int{1, 3, 224, 224}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.slow && testing.Short() {
				t.Skip("224×224 network: skipped with -short")
			}
			m, err := models.Preset(tc.name, 1)
			if err != nil {
				t.Fatal(err)
			}
			// Give BatchNorm statistics other than the identity's 0 and 1, so
			// that folding them is tested.
			rng := rand.New(rand.NewPCG(33, 34))
			for _, in := range m.Graph.Initializers {
				switch {
				case strings.HasSuffix(in.Name, ".running_var"), strings.HasSuffix(in.Name, ".scale"):
					in.Tensor = positiveTensor(rng, in.Tensor.Len())
				case strings.HasSuffix(in.Name, ".running_mean"), strings.HasSuffix(in.Name, ".bias") && count(m, "BatchNormalization") > 0:
					in.Tensor = randomTensor(rng, in.Tensor.Shape...)
				}
			}
			opt, rep := optimize(t, m)
			t.Log(rep)
			if n := count(opt, "BatchNormalization"); n != 0 {
				t.Errorf("%d BatchNormalization left: %v", n, opTypes(opt))
			}
			if rep.NodesAfter != len(opt.Graph.Nodes) || rep.NodesBefore != len(m.Graph.Nodes) {
				t.Errorf("report %v does not match the node counts %d → %d", rep, len(m.Graph.Nodes), len(opt.Graph.Nodes))
			}
			if want := len(m.Graph.Nodes) - count(m, "BatchNormalization"); tc.name != "lenet" && len(opt.Graph.Nodes) > want {
				t.Errorf("%d nodes after, want at most %d", len(opt.Graph.Nodes), want)
			}
			assertEquivalentWithin(t, m, opt, map[string]onnx.Value{m.Graph.Inputs[0].Name: randomTensor(rng, tc.input...)}, tc.scaled)
		})
	}
}

// backend.Options.Optimize makes the native backend optimize at New: the
// network computes the same and no longer has the folded parameters.
func TestNativeOptimizeOption(t *testing.T) {
	m, err := models.Preset("resnet8", 2)
	if err != nil {
		t.Fatal(err)
	}
	x := randomTensor(rand.New(rand.NewPCG(35, 36)), 1, 3, 32, 32)
	outputs := func(opts backend.Options) (map[string]onnx.Value, []string) {
		net, err := backend.New("native", m, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer net.Close()
		out, err := net.Inference(map[string]onnx.Value{m.Graph.Inputs[0].Name: x})
		if err != nil {
			t.Fatal(err)
		}
		return out, net.Params()
	}
	want, paramsBefore := outputs(backend.Options{})
	got, paramsAfter := outputs(backend.Options{Optimize: true})
	if len(paramsAfter) >= len(paramsBefore) {
		t.Errorf("%d parameters after optimizing, %d before: want fewer (BatchNorm folded)", len(paramsAfter), len(paramsBefore))
	}
	name := m.Graph.Outputs[0].Name
	if d := metrics.Compare(got[name], want[name], metrics.CrossBackendTolerance); !d.Equal() {
		t.Fatalf("output %q: optimized differs: %s", name, d.Mismatch)
	}
}

func TestOptimizeOddModels(t *testing.T) {
	if _, _, err := transform.Optimize(nil, transform.Options{}); err == nil {
		t.Error("nil model: want an error")
	}
	if _, _, err := transform.Optimize(&onnx.Model{}, transform.Options{}); err == nil {
		t.Error("model without a graph: want an error")
	}
	// An unknown operator, a node with no outputs, a BatchNormalization
	// whose producer is unknown, a Constant whose value is missing.
	b := newTestGraph(t, 17)
	b.input("x", 4)
	unknown := &onnx.Node{Name: "mystery", OpType: "Mystery", Domain: "example.com", Inputs: []string{"x"}, Outputs: []string{"m"}, Opset: 1, Graph: b.g}
	unknown.Op = &onnx.UnknownOperator{Type: "Mystery", Dom: "example.com", Opset: 1}
	b.g.Nodes = append(b.g.Nodes, unknown)
	b.g.Nodes = append(b.g.Nodes, &onnx.Node{Name: "nothing", OpType: "Mystery", Domain: "example.com", Op: unknown.Op, Graph: b.g})
	rng := rand.New(rand.NewPCG(37, 38))
	addBatchNorm(b, rng, "m", "y", 4)
	b.output("y")
	m := b.model()
	opt, _, err := transform.Optimize(m, transform.Options{Evaluate: transform.BackendEvaluator("native")})
	if err != nil {
		t.Fatal(err)
	}
	if got := opTypes(opt); !slices.Equal(got, []string{"Mystery", "BatchNormalization"}) {
		t.Errorf("optimized nodes %v, want [Mystery BatchNormalization]", got)
	}
	// An evaluator that fails leaves the nodes as they were.
	failing := func(*onnx.Model) (map[string]onnx.Value, error) { return nil, errors.New("no") }
	b = newTestGraph(t, 17)
	b.init("c", randomTensor(rng, 3))
	b.input("x", 3)
	b.node("Exp", []string{"c"}, []string{"e"})
	b.node("Add", []string{"x", "e"}, []string{"y"})
	b.output("y")
	opt, _, err = transform.Optimize(b.model(), transform.Options{Evaluate: failing})
	if err != nil {
		t.Fatal(err)
	}
	if got := opTypes(opt); !slices.Equal(got, []string{"Exp", "Add"}) {
		t.Errorf("with a failing evaluator: nodes %v, want [Exp Add]", got)
	}
}

// Every ONNX conformance case the native backend passes still passes when
// it optimizes the model first: a sweep of odd models (every operator,
// Constant nodes, optional inputs and outputs, subgraphs) for any pass
// that changes a result, fails or panics.
func TestOptimizeKeepsConformance(t *testing.T) {
	const data = "/usr/share/libonnx-testdata/data"
	if _, err := os.Stat(data); err != nil {
		t.Skipf("ONNX test data not installed (%v)", err)
	}
	if testing.Short() {
		t.Skip("runs every conformance case twice: skipped with -short")
	}
	cases, err := metrics.FindCases(data)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := metrics.Run(context.Background(), cases, metrics.Config{Backend: "native"})
	if err != nil {
		t.Fatal(err)
	}
	optimized, err := metrics.Run(context.Background(), cases, metrics.Config{Backend: "native", Options: backend.Options{Optimize: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cases", len(cases))
	passed := 0
	for i, want := range plain.Tests {
		got := optimized.Tests[i]
		if strings.Contains(want.Name, "bernoulli") {
			// Random draws: they match ONNX's expected output only by
			// chance, with or without Optimize.
			continue
		}
		if want.Status == metrics.Passed {
			passed++
			if got.Status != metrics.Passed {
				t.Errorf("%s: %s with Optimize: %s", want.Name, got.Status, got.Reason)
			}
		}
	}
	if passed < 500 {
		t.Errorf("only %d cases pass without Optimize: the sweep tests too little", passed)
	}
}
