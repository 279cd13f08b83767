package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/metrics"
)

// gradCheckOnly runs the gradient check over the named cases (suite/case
// under dataRoot).
func gradCheckOnly(t *testing.T, cfg metrics.GradConfig, names ...string) []metrics.GradResult {
	t.Helper()
	var dirs []string
	for _, n := range names {
		d := filepath.Join(dataRoot, n)
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("ONNX test data missing (run make setup): %v", err)
		}
		dirs = append(dirs, d)
	}
	cases, err := metrics.FindCases(dirs...)
	if err != nil {
		t.Fatal(err)
	}
	var got []metrics.GradResult
	cfg.Backend = "native"
	cfg.OnResult = func(r metrics.GradResult) { got = append(got, r) }
	rep, err := metrics.GradCheck(context.Background(), cases, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(names) || rep.Passed+rep.Failed+rep.Skipped != len(names) {
		t.Fatalf("%d results for %d cases", len(got), len(names))
	}
	return got
}

// Single-operator cases and whole pytorch-converted networks of the
// operators whose backward rules came with the engine pass, in float64 and
// in float32.
func TestGradCheckPassesOnRuleCases(t *testing.T) {
	names := []string{
		"node/test_gemm_all_attributes", "node/test_gemm_transposeA", "node/test_gemm_default_vector_bias",
		"node/test_matmul_2d", "node/test_matmul_4d",
		"node/test_add_bcast", "node/test_sub", "node/test_mul_bcast", "node/test_div",
		"node/test_relu", "node/test_sigmoid", "node/test_tanh",
		"node/test_reshape_negative_dim", "node/test_reshape_reordered_all_dims",
		"pytorch-converted/test_Linear", "pytorch-converted/test_Sigmoid",
		"pytorch-converted/test_ReLU", "pytorch-converted/test_Tanh",
		"pytorch-operator/test_operator_addmm",
	}
	for _, f32 := range []bool{false, true} {
		for _, r := range gradCheckOnly(t, metrics.GradConfig{Float32Only: f32}, names...) {
			if r.Status != metrics.Passed {
				t.Errorf("%s (float32 only %v): %s: %s", r.Name, f32, r.Status, r.Reason)
				continue
			}
			if r.Elements == 0 || r.Tensors == 0 || r.PrecisionName() == "" {
				t.Errorf("%s: passed with %d tensors, %d elements, precision %q", r.Name, r.Tensors, r.Elements, r.PrecisionName())
			}
			if !f32 && r.PrecisionName() != "float64" {
				t.Errorf("%s: checked in %s, want float64", r.Name, r.PrecisionName())
			}
		}
	}
}

// Cases without a smooth dependence on a floating-point input are skipped,
// each with its reason.
func TestGradCheckSkipsWithReasons(t *testing.T) {
	rs := gradCheckOnly(t, metrics.GradConfig{},
		"node/test_add_uint8",                   // integer output
		"node/test_shape",                       // int64 output
		"node/test_argmax_default_axis_example", // int64 output
		"node/test_floor",                       // a float output, but non-differentiable
		"node/test_constantofshape_float_ones",  // a float output from a shape alone
	)
	for i, want := range []string{"no floating-point output", "no floating-point output", "no floating-point output",
		"(non-differentiable)", "no differentiable path"} {
		r := rs[i]
		if r.Status != metrics.Skipped || !strings.Contains(r.Reason, want) {
			t.Errorf("%s: %s %q, want skipped: %s", r.Name, r.Status, r.Reason, want)
		}
	}
}

// nativeGradNotPassing lists every case of the four suites that the
// native backend's gradient check does not pass, with its status and
// reason, and pins the counts.
const nativeGradNotPassing = "testdata/native_gradcheck_not_passing.tsv"

// Over the four suites, the cases that do not pass are exactly those
// listed, each for the listed reason: a gradient rule that starts
// answering "unsupported", or a case that fails, or is skipped for
// another reason, fails this test; every skip says why.
func TestGradCheckAllSuites(t *testing.T) {
	if testing.Short() {
		t.Skip("checks all 1072 ONNX cases")
	}
	cases, err := metrics.FindCases(suiteDirs(t)...)
	if err != nil {
		t.Fatal(err)
	}
	var results []metrics.GradResult
	rep, err := metrics.GradCheck(context.Background(), cases, metrics.GradConfig{Backend: "native",
		OnResult: func(r metrics.GradResult) { results = append(results, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tests) != len(cases) || len(cases) != 1072 {
		t.Errorf("%d results for %d cases, want 1072", len(rep.Tests), len(cases))
	}
	for _, r := range rep.Tests {
		if r.Status != metrics.Passed && strings.TrimSpace(r.Reason) == "" {
			t.Errorf("%s %s without a reason", r.Name, r.Status)
		}
		if strings.HasPrefix(r.Reason, "panic:") {
			t.Errorf("%s panicked: %s", r.Name, r.Reason)
		}
	}
	t.Logf("%s", rep.Summary())
	for _, w := range metrics.WorstGradResults(results, 3) {
		t.Logf("worst: %.3g %s %s", w.MaxRelError, w.Name, w.Worst)
	}
	checkCaseList(t, rep, nativeGradNotPassing, "Gradient-check", "TestGradCheckAllSuites")
}

// The command: JSON and CSV of the contract, the closing lines, and the
// exit statuses.
func TestD500Gradcheck(t *testing.T) {
	tmp := t.TempDir()
	bin := buildD500(t, tmp)
	relu := filepath.Join(dataRoot, "node", "test_relu")
	linear := filepath.Join(dataRoot, "pytorch-converted", "test_Linear")
	uint8Add := filepath.Join(dataRoot, "node", "test_add_uint8")

	js, cs := filepath.Join(tmp, "g.json"), filepath.Join(tmp, "g.csv")
	out, errOut, code := runD500(t, bin, "gradcheck", "--backend", "native", "--json", js, relu, linear, uint8Add, "--csv", cs, "-v", "--seed", "7")
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	rep := readReport(t, js)
	if rep.Backend != "native" || len(rep.Tests) != 3 || rep.Passed != 2 || rep.Failed != 0 || rep.Skipped != 1 {
		t.Errorf("report %+v", rep)
	}
	wantNames := []string{"node/test_relu", "pytorch-converted/test_Linear", "node/test_add_uint8"}
	wantStatus := []string{"passed", "passed", "skipped"}
	for i, c := range rep.Tests {
		if i < 3 && (c.Name != wantNames[i] || c.Status != wantStatus[i]) {
			t.Errorf("case %d: %s %s, want %s %s", i, c.Name, c.Status, wantNames[i], wantStatus[i])
		}
		if c.Status == "passed" && (c.Reason != "" || *c.MaxRelError > 1e-5) {
			t.Errorf("%s: reason %q, max_rel_error %v", c.Name, c.Reason, *c.MaxRelError)
		}
		if c.Status == "skipped" && !strings.Contains(c.Reason, "no floating-point output") {
			t.Errorf("%s: skip reason %q", c.Name, c.Reason)
		}
	}
	if got := lastLine(out); got != "2 passed, 0 failed, 1 skipped" {
		t.Errorf("last line %q", got)
	}
	for _, want := range []string{"PASS node/test_relu (float64", "SKIP node/test_add_uint8: ", "worst relative errors:", "checked 2 cases (2 in float64, 0 in float32)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	csvData, err := os.ReadFile(cs)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csvData)), "\n")
	if len(lines) != 4 || lines[0] != strings.Join(metrics.CSVHeader, ",") || !strings.HasPrefix(lines[1], "node/test_relu,passed,") {
		t.Errorf("CSV:\n%s", csvData)
	}

	// The same seed gives the same errors; the JSON is reproducible.
	js2 := filepath.Join(tmp, "g2.json")
	if _, _, code := runD500(t, bin, "gradcheck", "--json", js2, "--seed", "7", relu, linear, uint8Add); code != 0 {
		t.Fatalf("second run: exit %d", code)
	}
	rep2 := readReport(t, js2)
	for i := range rep.Tests {
		if *rep.Tests[i].MaxRelError != *rep2.Tests[i].MaxRelError {
			t.Errorf("%s: max_rel_error %v then %v with the same seed", rep.Tests[i].Name, *rep.Tests[i].MaxRelError, *rep2.Tests[i].MaxRelError)
		}
	}

	// --run filters; a filter that matches nothing is not a failure.
	out, _, code = runD500(t, bin, "gradcheck", "--run", "Linear", relu, linear)
	if code != 0 || lastLine(out) != "1 passed, 0 failed, 0 skipped" {
		t.Errorf("--run: exit %d, last line %q", code, lastLine(out))
	}

	// Bad usage: exit status 2 with a message.
	for _, args := range [][]string{
		{"gradcheck"},
		{"gradcheck", "--nope", relu},
		{"gradcheck", "--backend", "nosuch", relu},
		{"gradcheck", "--run", "(", relu},
		{"gradcheck", "--samples", "-3", relu},
		{"gradcheck", filepath.Join(tmp, "no-such-folder")},
	} {
		_, errOut, code := runD500(t, bin, args...)
		if code != 2 || strings.TrimSpace(errOut) == "" {
			t.Errorf("d500 %v: exit %d, stderr %q; want 2 and a message", args, code, errOut)
		}
	}
	if out, _, code := runD500(t, bin, "gradcheck", "-h"); code != 0 || !strings.Contains(out, "1e-6*max(1,|x|)") {
		t.Errorf("-h: exit %d; its help on stdout should document the step and tolerance:\n%s", code, out)
	}
}

// ortGradNotPassing lists every case of the four suites that the
// gradient check on ONNX Runtime (through the training graph of package
// autodiff) does not pass, with the reason.
const ortGradNotPassing = "testdata/onnxruntime_gradcheck_not_passing.tsv"

// The gradient check on ONNX Runtime: its backprop is the training graph
// written in standard operators, checked against ONNX Runtime's own
// central differences. Every case that does not pass is listed.
func TestGradCheckOnnxruntimeAllSuites(t *testing.T) {
	if testing.Short() {
		t.Skip("checks all 1072 ONNX cases")
	}
	cases, err := metrics.FindCases(suiteDirs(t)...)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := metrics.GradCheck(context.Background(), cases, metrics.GradConfig{Backend: "onnxruntime"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tests) != len(cases) || len(cases) != 1072 {
		t.Errorf("%d results for %d cases, want 1072", len(rep.Tests), len(cases))
	}
	for _, r := range rep.Tests {
		if r.Status != metrics.Passed && strings.TrimSpace(r.Reason) == "" {
			t.Errorf("%s %s without a reason", r.Name, r.Status)
		}
	}
	t.Logf("%s", rep.Summary())
	checkCaseList(t, rep, ortGradNotPassing, "Gradient-check (onnxruntime)", "TestGradCheckOnnxruntimeAllSuites")
}
