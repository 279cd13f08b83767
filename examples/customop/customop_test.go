package customop_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/examples/customop"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// The test inputs: X is [N 2, C 2, L 3], Beta one slope per channel.
var (
	inputX = onnx.FromSlice([]float32{
		-2, 0, 1, // n 0, channel 0 (β 1.5)
		0.5, 2, -1, // n 0, channel 1 (β -0.5)
		3, -0.5, 1.5, // n 1, channel 0
		-3, 1, 0.25, // n 1, channel 1
	}, 2, 2, 3)
	inputBeta = onnx.FromSlice([]float32{1.5, -0.5}, 2)
)

// expectedY is x·σ(βx) for each element of inputX, worked out from the
// definition: for instance 1·σ(1.5) = 1/(1 + e^-1.5) = 0.8175745,
// 2·σ(-1) = 0.5378828, -3·σ(1.5) = -2.4527234.
var expectedY = []float32{
	-0.0948517464, 0, 0.817574476,
	0.21891175, 0.537882843, -0.622459331,
	2.96703917, -0.16041065, 1.3569758,
	-2.45272343, 0.377540669, 0.117197657,
}

// writeCase writes an ONNX test case under root: a one-node model of
// opType (domain customop.Domain, version 1) with inputs X and Beta, and
// data set 0 with inputs and the expected output y.
func writeCase(t *testing.T, root, name, opType string, y []float32) string {
	t.Helper()
	dir := filepath.Join(root, name)
	sets := filepath.Join(dir, "test_data_set_0")
	if err := os.MkdirAll(sets, 0o755); err != nil {
		t.Fatal(err)
	}
	tensorType := func(dims ...int64) *onnx.TypeInfo {
		ti := &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float, HasShape: true}
		for _, d := range dims {
			ti.Shape = append(ti.Shape, onnx.Dim{Size: d})
		}
		return ti
	}
	g := &onnx.Graph{
		Name: name,
		Nodes: []*onnx.Node{{
			Name: "swish", OpType: opType, Domain: customop.Domain,
			Inputs: []string{"X", "Beta"}, Outputs: []string{"Y"},
			Attributes: []*onnx.Attribute{{Name: "axis", Type: onnx.AttrInt, Int: 1}},
		}},
		Inputs:  []*onnx.ValueInfo{{Name: "X", Type: tensorType(2, 2, 3)}, {Name: "Beta", Type: tensorType(2)}},
		Outputs: []*onnx.ValueInfo{{Name: "Y", Type: tensorType(2, 2, 3)}},
	}
	m := &onnx.Model{IRVersion: 8, ProducerName: "customop_test", Opsets: map[string]int64{"": 17, customop.Domain: customop.Version}, Graph: g}
	if err := onnx.Save(m, filepath.Join(dir, metrics.ModelFile)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		file, name string
		v          *onnx.Tensor
	}{
		{"input_0.pb", "X", inputX},
		{"input_1.pb", "Beta", inputBeta},
		{"output_0.pb", "Y", onnx.FromSlice(y, 2, 2, 3)},
	} {
		if err := onnx.WriteValue(filepath.Join(sets, f.file), f.name, f.v); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func register(t *testing.T) {
	t.Helper()
	if err := customop.Register(); err != nil {
		t.Fatal(err)
	}
	if err := customop.Register(); err != nil { // a second call is harmless
		t.Fatal(err)
	}
}

func findOne(t *testing.T, dir string) []metrics.Case {
	t.Helper()
	cases, err := metrics.FindCases(dir)
	if err != nil || len(cases) != 1 {
		t.Fatalf("FindCases(%s): %d cases, %v", dir, len(cases), err)
	}
	return cases
}

func TestConformance(t *testing.T) {
	register(t)
	if !native.Supports(customop.Domain, customop.OpType, customop.Version) {
		t.Fatal("native.Supports is false for the registered operator")
	}
	root := t.TempDir()
	rep, err := metrics.Run(context.Background(), findOne(t, writeCase(t, root, "test_channel_swish", customop.OpType, expectedY)), metrics.Config{Backend: "native"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed != 1 || rep.Tests[0].Status != metrics.Passed {
		t.Fatalf("conformance: %+v", rep.Tests)
	}
	if r := rep.Tests[0]; r.MaxRelError > 1e-6 || r.Operators != customop.Domain+"."+customop.OpType {
		t.Errorf("max rel error %g, operators %q", r.MaxRelError, r.Operators)
	}

	// The same case with one expected value off by 1% fails, naming the output.
	wrong := append([]float32(nil), expectedY...)
	wrong[2] *= 1.01
	rep, err = metrics.Run(context.Background(), findOne(t, writeCase(t, root, "test_channel_swish_wrong_expectation", customop.OpType, wrong)), metrics.Config{Backend: "native"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 1 || !strings.Contains(rep.Tests[0].Reason, `"Y"`) {
		t.Fatalf("a wrong expectation: %+v", rep.Tests)
	}
}

// wrongGradient is ChannelSwish with a gradient of X that leaves out the
// βx·s(1 − s) term: what the gradient check must catch.
type wrongGradient struct{ customop.ChannelSwish }

func (w wrongGradient) Gradient(op *ops.Custom, in, out []onnx.Value, gout []*onnx.Tensor) ([]*onnx.Tensor, error) {
	grads, err := w.ChannelSwish.Gradient(op, in, out, gout)
	if err != nil {
		return nil, err
	}
	x, beta, g := in[0].(*onnx.Tensor), in[1].(*onnx.Tensor), gout[0]
	at := func(t *onnx.Tensor, i int) float64 {
		if d := t.Float32s(); d != nil {
			return float64(d[i])
		}
		return t.Float64s()[i]
	}
	inner := x.Len() / (x.Shape[0] * x.Shape[1]) // axis 1
	dx := make([]float64, x.Len())
	for i := range dx {
		b, v := at(beta, (i/inner)%x.Shape[1]), at(x, i)
		dx[i] = at(g, i) / (1 + math.Exp(-b*v)) // g·s only
	}
	if x.Type == onnx.Float {
		f := make([]float32, len(dx))
		for i, v := range dx {
			f[i] = float32(v)
		}
		grads[0] = onnx.FromSlice(f, x.Shape...)
	} else {
		grads[0] = onnx.FromSlice(dx, x.Shape...)
	}
	return grads, nil
}

var registerWrong = sync.OnceValue(func() error {
	return native.RegisterKernel(customop.Domain, "ChannelSwishWrongGradient", 1, wrongGradient{})
})

func TestGradCheck(t *testing.T) {
	register(t)
	root := t.TempDir()
	cases := findOne(t, writeCase(t, root, "test_channel_swish", customop.OpType, expectedY))
	for _, f32 := range []bool{false, true} {
		var got []metrics.GradResult
		cfg := metrics.GradConfig{Backend: "native", Samples: -1, Float32Only: f32, OnResult: func(r metrics.GradResult) { got = append(got, r) }}
		rep, err := metrics.GradCheck(context.Background(), cases, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Passed != 1 || len(got) != 1 {
			t.Fatalf("gradcheck (float32 only %v): %+v", f32, rep.Tests)
		}
		// Every element of X and Beta was checked, in float64 unless told
		// otherwise: the kernel computes in both.
		want := "float64"
		if f32 {
			want = "float32"
		}
		if r := got[0]; r.Tensors != 2 || r.Elements != 12+2 || r.PrecisionName() != want {
			t.Errorf("float32 only %v: %d tensors, %d elements, precision %s", f32, r.Tensors, r.Elements, r.PrecisionName())
		}
		t.Logf("%s: worst relative error %.2g at %s", got[0].PrecisionName(), got[0].MaxRelError, got[0].Worst)
	}

	// A wrong gradient fails.
	if err := registerWrong(); err != nil {
		t.Fatal(err)
	}
	cases = findOne(t, writeCase(t, root, "test_channel_swish_wrong_gradient", "ChannelSwishWrongGradient", expectedY))
	rep, err := metrics.GradCheck(context.Background(), cases, metrics.GradConfig{Backend: "native", Samples: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 1 || !strings.Contains(rep.Tests[0].Reason, "X") {
		t.Fatalf("wrong gradient: %+v", rep.Tests)
	}
	t.Logf("the wrong gradient: %s", rep.Tests[0].Reason)
	// Its forward pass is ChannelSwish's, so conformance still passes.
	crep, err := metrics.Run(context.Background(), cases, metrics.Config{Backend: "native"})
	if err != nil || crep.Passed != 1 {
		t.Fatalf("wrong gradient's forward: %v %+v", err, crep)
	}
}

func TestBench(t *testing.T) {
	register(t)
	dir := writeCase(t, t.TempDir(), "test_channel_swish", customop.OpType, expectedY)
	m, err := onnx.Load(filepath.Join(dir, metrics.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	// Optimize on, as d500 run --bench builds it.
	net, err := backend.New("native", m, backend.Options{Optimize: true})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	feeds := map[string]onnx.Value{"X": inputX, "Beta": inputBeta}
	res, err := metrics.Bench(func() error { _, err := net.Inference(feeds); return err }, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	l := res.Latency
	if res.Iterations != 5 || l.Min <= 0 || l.Min > l.Median || l.Median > l.Max || res.ThroughputPerS <= 0 {
		t.Errorf("bench: %+v", res)
	}
	out, err := net.Inference(feeds)
	if err != nil {
		t.Fatal(err)
	}
	if d := metrics.Compare(out["Y"], onnx.FromSlice(expectedY, 2, 2, 3), metrics.ONNXTolerance); d.Mismatch != "" {
		t.Errorf("output after the bench: %s", d.Mismatch)
	}
}

// TestUnregistered: a model whose custom operator nobody registered loads,
// but the backend refuses it as unsupported, naming the domain, the
// operator and the version the model imports.
func TestUnregistered(t *testing.T) {
	register(t)
	dir := writeCase(t, t.TempDir(), "test_channel_softplus", "ChannelSoftplus", expectedY)
	m, err := onnx.Load(filepath.Join(dir, metrics.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	_, err = backend.New("native", m, backend.Options{})
	if !errors.Is(err, network.ErrUnsupported) || !strings.Contains(err.Error(), "ChannelSoftplus (domain example.customop, opset 1)") {
		t.Fatalf("unregistered operator: %v", err)
	}
	rep, err := metrics.Run(context.Background(), findOne(t, dir), metrics.Config{Backend: "native"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed != 0 || !strings.Contains(rep.Tests[0].Reason, "ChannelSoftplus (domain example.customop, opset 1)") {
		t.Fatalf("conformance of an unregistered operator: %+v", rep.Tests)
	}
	t.Logf("conformance: %s: %s", rep.Tests[0].Status, rep.Tests[0].Reason)
}
