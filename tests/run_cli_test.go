package tests

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/onnx"
)

// TestD500Run runs a conformance model through `d500 run`: the written
// output must match ONNX's expected output, --bench must write the
// contract's JSON, and bad input must give the contract's exit statuses.
func TestD500Run(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	c := filepath.Join(dataRoot, "node", "test_gemm_all_attributes")
	set := filepath.Join(c, "test_data_set_0")
	out := filepath.Join(dir, "out")
	benchJSON := filepath.Join(dir, "bench.json")
	stdout, stderr, code := runD500(t, bin, "run", "--model", filepath.Join(c, "model.onnx"),
		"--input", filepath.Join(set, "input_0.pb"), // bare: goes to the first input
		"--input", "c="+filepath.Join(set, "input_2.pb"),
		"--input", "b="+filepath.Join(set, "input_1.pb"),
		"--output-dir", out, "--bench", "5", "--json", benchJSON)
	if code != 0 {
		t.Fatalf("d500 run: exit %d\n%s%s", code, stdout, stderr)
	}
	_, got, err := onnx.ReadValue(filepath.Join(out, "output_0.pb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	name, want, err := onnx.ReadValue(filepath.Join(set, "output_0.pb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := metrics.Compare(got, want, metrics.ONNXTolerance); !d.Equal() {
		t.Fatalf("written output differs from ONNX's: %s", d.Mismatch)
	}
	if gotName, _, _ := onnx.ReadValue(filepath.Join(out, "output_0.pb"), nil); gotName != name {
		t.Fatalf("output named %q, want %q", gotName, name)
	}
	var rep struct {
		Backend    string  `json:"backend"`
		Model      string  `json:"model"`
		Iterations int     `json:"iterations"`
		Throughput float64 `json:"throughput_per_s"`
		Latency    struct {
			Min, Median, P90, Max float64
		} `json:"latency_ms"`
	}
	readJSON(t, benchJSON, &rep)
	l := rep.Latency
	if rep.Backend != "native" || rep.Iterations != 5 || rep.Throughput <= 0 || !(l.Min <= l.Median && l.Median <= l.P90 && l.P90 <= l.Max) || l.Min <= 0 {
		t.Fatalf("bench report %+v", rep)
	}

	// A missing input, an unknown input name or a model that cannot be
	// read is bad usage (exit 2), naming what is wrong.
	_, stderr, code = runD500(t, bin, "run", "--model", filepath.Join(c, "model.onnx"))
	if code != 2 || !strings.Contains(stderr, "a, b, c") {
		t.Fatalf("missing inputs: exit %d, %s", code, stderr)
	}
	_, stderr, code = runD500(t, bin, "run", "--model", filepath.Join(c, "model.onnx"), "--input", "nosuch="+filepath.Join(set, "input_0.pb"))
	if code != 2 || !strings.Contains(stderr, `"nosuch"`) {
		t.Fatalf("unknown input: exit %d, %s", code, stderr)
	}
	_, stderr, code = runD500(t, bin, "run", "--model", filepath.Join(dir, "missing.onnx"))
	if code != 2 || !strings.Contains(stderr, "missing.onnx") {
		t.Fatalf("missing model: exit %d, %s", code, stderr)
	}
	for _, args := range [][]string{{"run"}, {"run", "--model", "m.onnx", "--bench", "-1"}, {"run", "--model", "m.onnx", "--json", "x.json"}, {"run", "--model", "m.onnx", "--optimize=maybe"}} {
		if _, _, code := runD500(t, bin, args...); code != 2 {
			t.Errorf("d500 %v: exit %d, want 2", args, code)
		}
	}
	// Random inputs of the declared shapes are enough to time a model.
	stdout, stderr, code = runD500(t, bin, "run", "--model", filepath.Join(c, "model.onnx"), "--random-inputs", "--bench", "3")
	if code != 0 || !strings.Contains(stdout, "3 runs") {
		t.Fatalf("random inputs: exit %d\n%s%s", code, stdout, stderr)
	}
	// --optimize=false runs the graph as written, with the same result.
	plainOut := filepath.Join(dir, "plain")
	stdout, stderr, code = runD500(t, bin, "run", "--model", filepath.Join(c, "model.onnx"), "--optimize=false",
		"--input", filepath.Join(set, "input_0.pb"), "--input", filepath.Join(set, "input_1.pb"), "--input", filepath.Join(set, "input_2.pb"),
		"--output-dir", plainOut)
	if code != 0 {
		t.Fatalf("--optimize=false: exit %d\n%s%s", code, stdout, stderr)
	}
	_, plain, err := onnx.ReadValue(filepath.Join(plainOut, "output_0.pb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := metrics.Compare(plain, want, metrics.ONNXTolerance); !d.Equal() {
		t.Fatalf("--optimize=false output differs from ONNX's: %s", d.Mismatch)
	}
}

// --compare times other backends beside the --backend on the same inputs,
// after checking their outputs agree, and reports the ratio of median
// latencies in the output and the JSON.
func TestD500RunCompare(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	model := filepath.Join(dir, "lenet.onnx")
	if so, se, code := runD500(t, bin, "model", "lenet", "-o", model); code != 0 {
		t.Fatalf("d500 model: exit %d\n%s%s", code, so, se)
	}
	benchJSON := filepath.Join(dir, "bench.json")
	stdout, stderr, code := runD500(t, bin, "run", "--model", model, "--random-inputs", "--bench", "5",
		"--compare", "onnxruntime", "--json", benchJSON)
	if code != 0 {
		t.Fatalf("d500 run --compare: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "native / onnxruntime median latency: ") {
		t.Errorf("no ratio line:\n%s", stdout)
	}
	var rep struct {
		Backend string `json:"backend"`
		Compare []struct {
			Backend     string  `json:"backend"`
			Iterations  int     `json:"iterations"`
			MedianRatio float64 `json:"median_ratio"`
			MaxAbsError float64 `json:"max_abs_error"`
			Latency     struct {
				Median float64 `json:"median"`
			} `json:"latency_ms"`
		} `json:"compare"`
		Latency struct {
			Median float64 `json:"median"`
		} `json:"latency_ms"`
	}
	data := readJSON(t, benchJSON, &rep)
	if rep.Backend != "native" || len(rep.Compare) != 1 {
		t.Fatalf("report %s", data)
	}
	c := rep.Compare[0]
	if c.Backend != "onnxruntime" || c.Iterations != 5 || c.MaxAbsError > 1e-4 ||
		c.MedianRatio != rep.Latency.Median/c.Latency.Median {
		t.Errorf("compared run %+v against median %v", c, rep.Latency.Median)
	}
	// A backend without the model's operators is skipped, with the reason.
	where := filepath.Join(dataRoot, "node", "test_where_example")
	stdout, stderr, code = runD500(t, bin, "run", "--model", filepath.Join(where, "model.onnx"), "--bench", "2", "--compare", "gorgonia",
		"--input", filepath.Join(where, "test_data_set_0", "input_0.pb"), "--input", filepath.Join(where, "test_data_set_0", "input_1.pb"),
		"--input", filepath.Join(where, "test_data_set_0", "input_2.pb"))
	if code != 0 || !strings.Contains(stdout, "gorgonia: skipped: ") {
		t.Errorf("--compare gorgonia on Where: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, args := range [][]string{
		{"--compare", "onnxruntime"},                  // no --bench
		{"--bench", "2", "--compare", "native"},       // the --backend itself
		{"--bench", "2", "--compare", "nosuchengine"}, // unknown
	} {
		args = append([]string{"run", "--model", model, "--random-inputs"}, args...)
		if _, se, code := runD500(t, bin, args...); code != 2 {
			t.Errorf("d500 %v: exit %d, want 2\n%s", args, code, se)
		}
	}
}
