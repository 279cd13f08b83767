package gorgonia_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/backend/gorgonia"
	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
)

const dataRoot = "/usr/share/libonnx-testdata/data"

// runCases runs ONNX test cases (suite/case) with the gorgonia backend.
func runCases(t *testing.T, names ...string) map[string]metrics.Result {
	t.Helper()
	var dirs []string
	for _, n := range names {
		dirs = append(dirs, filepath.Join(dataRoot, n))
	}
	cases, err := metrics.FindCases(dirs...)
	if err != nil {
		t.Fatalf("ONNX test data (run make setup): %v", err)
	}
	rep, err := metrics.Run(context.Background(), cases, metrics.Config{Backend: "gorgonia"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]metrics.Result{}
	for _, r := range rep.Tests {
		out[r.Name] = r
	}
	if len(out) != len(names) {
		t.Fatalf("%d results for %d cases", len(out), len(names))
	}
	return out
}

// The mappings that compose or work around Gorgonia's ops reproduce
// ONNX's expected outputs: window geometry, average pooling with and
// without padded elements counted, softmax along a non-last axis,
// reductions over several axes, broadcasting with size-1 axes, a value
// reused after a reshape, the losses with one-hot labels, and gathers and
// splits composed of slices.
func TestONNXCasesPass(t *testing.T) {
	names := []string{
		"node/test_basic_conv_with_padding", "node/test_conv_with_strides_padding",
		"node/test_maxpool_2d_pads", "node/test_maxpool_2d_strides",
		"node/test_averagepool_2d_pads", "node/test_averagepool_2d_pads_count_include_pad",
		"node/test_softmax_axis_0", "node/test_logsoftmax_axis_1",
		"node/test_reduce_log_sum_exp_keepdims_random", "pytorch-operator/test_operator_reduced_sum",
		"node/test_mvn_expanded", "node/test_less_bcast", "node/test_gemm_all_attributes",
		"node/test_batchnorm_example", "node/test_sce_mean_weight_ii_3d",
		"node/test_nllloss_NCd1d2_with_weight_reduction_mean", "pytorch-converted/test_PReLU_3d_multiparam",
		"node/test_gather_1", "node/test_gather_negative_indices", "node/test_split_variable_parts_2d",
		"pytorch-operator/test_operator_chunk", "node/test_depthtospace_crd_mode", "node/test_spacetodepth",
	}
	for name, r := range runCases(t, names...) {
		if r.Status != metrics.Passed {
			t.Errorf("%s: %s: %s", name, r.Status, r.Reason)
		}
	}
}

// What Gorgonia cannot express is skipped with the reason, never computed
// approximately.
func TestUnsupportedIsSkippedWithReason(t *testing.T) {
	want := map[string]string{
		"node/test_maxpool_2d_same_lower":           "asymmetric pads",
		"node/test_slice_neg_steps":                 "step -1",
		"node/test_acos":                            "operator Acos",
		"node/test_batchnorm_example_training_mode": "training mode",
	}
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for name, r := range runCases(t, names...) {
		if r.Status != metrics.Skipped || !strings.Contains(r.Reason, want[name]) {
			t.Errorf("%s: %s (%q), want skipped for %q", name, r.Status, r.Reason, want[name])
		}
	}
	for _, c := range []struct {
		op    string
		since int
		want  bool
	}{{"Conv", 11, true}, {"Softmax", 13, true}, {"Softmax", 1, true}, {"SoftmaxCrossEntropyLoss", 13, true},
		{"Acos", 7, false}, {"LSTM", 14, false}, {"Conv", 2, false}} {
		if got := gorgonia.Supports("", c.op, c.since); got != c.want {
			t.Errorf("Supports(%s, %d) = %v, want %v", c.op, c.since, got, c.want)
		}
	}
}

// lenet returns the LeNet preset with a softmax cross-entropy loss, and a
// batch of n pseudo-random images with labels.
func lenet(t *testing.T, n int) (*onnx.Model, string, map[string]onnx.Value) {
	t.Helper()
	m, err := models.Preset("lenet", 1)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := network.AppendLoss(m, network.LossSoftmaxCrossEntropy, "y", "labels")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 9))
	x := make([]float32, n*28*28)
	for i := range x {
		x[i] = rng.Float32()
	}
	labels := make([]int64, n)
	for i := range labels {
		labels[i] = int64(rng.IntN(10))
	}
	return m, loss, map[string]onnx.Value{"x": onnx.FromSlice(x, n, 1, 28, 28), "labels": onnx.FromSlice(labels, n)}
}

func build(t *testing.T, name string, m *onnx.Model) network.Network {
	t.Helper()
	net, err := backend.New(name, m, backend.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { net.Close() })
	return net
}

// closeTo compares two float32 tensors elementwise.
func closeTo(t *testing.T, what string, got, want onnx.Value, rtol, atol float64) {
	t.Helper()
	g, w := got.(*onnx.Tensor), want.(*onnx.Tensor)
	if g.Type != w.Type || !slices.Equal(g.Shape, w.Shape) || g.Len() != w.Len() {
		t.Fatalf("%s: got %v%v, want %v%v", what, g.Type, g.Shape, w.Type, w.Shape)
	}
	gd, wd := g.Data.([]float32), w.Data.([]float32)
	for i := range gd {
		if d := math.Abs(float64(gd[i] - wd[i])); d > atol+rtol*math.Abs(float64(wd[i])) {
			t.Fatalf("%s[%d] = %g, want %g", what, i, gd[i], wd[i])
		}
	}
}

// LeNet's outputs, loss, an intermediate activation and every parameter's
// gradient (Gorgonia's symbolic differentiation) agree with the native
// backend's.
func TestLeNetMatchesNative(t *testing.T) {
	m, loss, feeds := lenet(t, 4)
	g, nat := build(t, "gorgonia", m), build(t, "native", m)
	gout, err := g.InferenceAndBackprop(feeds, loss)
	if err != nil {
		t.Fatal(err)
	}
	nout, err := nat.InferenceAndBackprop(feeds, loss)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "y", gout["y"], nout["y"], 1e-4, 1e-5)
	closeTo(t, loss, gout[loss], nout[loss], 1e-5, 1e-6)
	act := m.Graph.Nodes[0].Outputs[0]
	ga, err := g.Fetch(act)
	if err != nil {
		t.Fatal(err)
	}
	na, err := nat.Fetch(act)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, act, ga[0], na[0], 1e-4, 1e-5)
	pgs := g.Gradients(loss)
	if len(pgs) != len(nat.Params()) || len(pgs) != 10 {
		t.Fatalf("%d gradients, want one per parameter (%d)", len(pgs), len(nat.Params()))
	}
	for _, pg := range pgs {
		if pg.Grad != network.GradName(pg.Param) {
			t.Errorf("gradient of %q named %q", pg.Param, pg.Grad)
		}
		gg, err := g.Fetch(pg.Grad)
		if err != nil {
			t.Fatal(err)
		}
		ng, err := nat.Fetch(pg.Grad)
		if err != nil {
			t.Fatal(err)
		}
		closeTo(t, pg.Grad, gg[0], ng[0], 1e-3, 1e-5)
	}
	// A batch of another size builds another graph; the first is kept.
	_, _, small := lenet(t, 2)
	for _, f := range []map[string]onnx.Value{small, feeds} {
		gy, err := g.Inference(f)
		if err != nil {
			t.Fatal(err)
		}
		ny, err := nat.Inference(f)
		if err != nil {
			t.Fatal(err)
		}
		closeTo(t, "y", gy["y"], ny["y"], 1e-4, 1e-5)
	}
}

// Feed replaces a parameter in every later run, and bad feeds are errors.
func TestFeedAndBadInput(t *testing.T) {
	m, loss, feeds := lenet(t, 2)
	g := build(t, "gorgonia", m)
	p := g.Params()[len(g.Params())-1] // the last bias
	zero := onnx.NewTensor(onnx.Float, 10)
	if err := g.Feed(p, zero); err != nil {
		t.Fatal(err)
	}
	got, err := network.FetchTensor(g, p)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, p, got, zero, 0, 0)
	if err := g.Feed(p, onnx.NewTensor(onnx.Float, 3)); err == nil {
		t.Error("feeding a parameter of the wrong shape succeeded")
	}
	bad := map[string]onnx.Value{"x": feeds["x"], "labels": onnx.FromSlice([]int64{3, 11}, 2)}
	if _, err := g.InferenceAndBackprop(bad, loss); err == nil || !strings.Contains(err.Error(), "class 11") {
		t.Errorf("a label out of range: %v", err)
	}
	wrongType := map[string]onnx.Value{"x": onnx.NewTensor(onnx.Int64, 2, 1, 28, 28), "labels": feeds["labels"]}
	if _, err := g.Inference(wrongType); err == nil || !strings.Contains(err.Error(), "expected element type") {
		t.Errorf("an input of the wrong type: %v", err)
	}
}

// Training LeNet on one batch lowers the loss with a reference optimizer
// and with Gorgonia's Adam solver; the two Adams follow the same rule, so
// the parameters stay close.
func TestTrainingReferenceAndNativeSolver(t *testing.T) {
	m, loss, feeds := lenet(t, 16)
	hp, err := optimizer.Defaults("adam")
	if err != nil {
		t.Fatal(err)
	}
	hp.LR = 0.005
	ref, nat := build(t, "gorgonia", m), build(t, "gorgonia", m)
	rule, err := optimizer.New("adam", hp)
	if err != nil {
		t.Fatal(err)
	}
	refOpt := optimizer.NewDriver(ref, loss, rule, 0)
	natOpt, err := optimizer.NewNativeFor("adam", hp, nat, loss)
	if err != nil {
		t.Fatal(err)
	}
	if _, generic := natOpt.(*optimizer.Native); generic {
		t.Fatal("--impl native did not get Gorgonia's solver")
	}
	var first, last [2]float64
	for step := range 12 {
		for i, o := range []optimizer.Optimizer{refOpt, natOpt} {
			l, err := o.Step(feeds)
			if err != nil {
				t.Fatal(err)
			}
			if step == 0 {
				first[i] = l
			}
			last[i] = l
		}
	}
	for i, name := range []string{"reference adam", "gorgonia adam"} {
		if !(last[i] < first[i]-0.2) {
			t.Errorf("%s: loss %g after 12 steps, from %g", name, last[i], first[i])
		}
	}
	// Parameters whose gradients are near zero move by ±lr in either Adam
	// whatever rounding decides, so the two runs are compared over all
	// parameters: their distance is small against how far they moved.
	var moved, apart float64
	for _, init := range m.Graph.Initializers {
		a, err := network.FetchTensor(ref, init.Name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := network.FetchTensor(nat, init.Name)
		if err != nil {
			t.Fatal(err)
		}
		p0 := init.Tensor.Data.([]float32)
		for i, x := range a.Data.([]float32) {
			y := b.Data.([]float32)[i]
			moved += float64((x - p0[i]) * (x - p0[i]))
			apart += float64((x - y) * (x - y))
		}
	}
	if moved == 0 || math.Sqrt(apart) > 0.05*math.Sqrt(moved) {
		t.Errorf("parameters moved by %g (L2), and the two Adams are %g apart", math.Sqrt(moved), math.Sqrt(apart))
	}
	// The losses are compared against how far they fell: near the end of
	// the descent the loss is small, and float32 rounding in the two
	// implementations moves it by a larger share of itself.
	if descent := first[0] - last[0]; math.Abs(last[0]-last[1]) > 1e-3*descent {
		t.Errorf("last losses %g (reference) and %g (gorgonia), want equal within 0.1%% of the descent %g", last[0], last[1], descent)
	}
	// A solver that cannot honour a hyperparameter says so.
	hp.Nesterov = true
	if _, err := optimizer.NewNativeFor("nesterov", hp, nat, loss); !errors.Is(err, network.ErrUnsupported) {
		t.Errorf("nesterov: %v, want unsupported", err)
	}
}
