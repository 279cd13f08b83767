package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/metrics"
)

// d500 runs the tool in this process and returns its output and status.
func d500(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// runReportJSON is the part of `d500 run --bench --json` these tests read.
type runReportJSON struct {
	Backend    string            `json:"backend"`
	Model      string            `json:"model"`
	Iterations int               `json:"iterations"`
	Latency    metrics.LatencyMS `json:"latency_ms"`
	Env        struct {
		Threads     int      `json:"threads"`
		CPU         string   `json:"cpu"`
		CPUFeatures []string `json:"cpu_features"`
		GoVersion   string   `json:"go_version"`
	} `json:"environment"`
}

func readJSONFile(t *testing.T, path string, v any) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return data
}

// scaleSamples writes a copy of the run report at from to to, with every
// latency figure multiplied by f: the same runs on a machine f times
// slower.
func scaleSamples(t *testing.T, from, to string, f float64) {
	t.Helper()
	var rep map[string]any
	readJSONFile(t, from, &rep)
	lat := rep["latency_ms"].(map[string]any)
	for k, v := range lat {
		switch v := v.(type) {
		case float64:
			if k != "cv" {
				lat[k] = v * f
			}
		case []any:
			for i := range v {
				v[i] = v[i].(float64) * f
			}
		}
	}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Two runs of a small preset with --bench, compared: the report carries
// the statistics, the samples and the environment, and bench-compare
// says a report against itself shows no difference and against its runs
// made 1.5 times slower that B is slower, with an interval around 1.5.
func TestBenchCompareRuns(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "lenet.onnx")
	if _, stderr, code := d500(t, "model", "lenet", "-o", model); code != 0 {
		t.Fatalf("d500 model: exit %d: %s", code, stderr)
	}
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, path := range []string{a, b} {
		stdout, stderr, code := d500(t, "run", "--model", model, "--random-inputs", "--bench", "40", "--warmup", "5", "--threads", "1", "--json", path)
		if code != 0 {
			t.Fatalf("d500 run: exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "native: 40 runs, latency ms min ") || !strings.Contains(stdout, " (95% CI ") || !strings.Contains(stdout, ", CV ") {
			t.Fatalf("d500 run printed:\n%s", stdout)
		}
	}
	var rep runReportJSON
	readJSONFile(t, a, &rep)
	l := rep.Latency
	if rep.Iterations != 40 || len(l.Samples) != 40 || !(l.Min <= l.MedianCI95[0] && l.MedianCI95[0] <= l.Median && l.Median <= l.MedianCI95[1] && l.MedianCI95[1] <= l.Max) || l.CV <= 0 {
		t.Fatalf("run report: %+v", rep)
	}
	if st, err := metrics.SummarizeTimings(l.Samples); err != nil || st.Median != l.Median || st.MedianCI95 != l.MedianCI95 {
		t.Fatalf("the report's median %v and interval %v are not its samples' (%+v, %v)", l.Median, l.MedianCI95, st, err)
	}
	if rep.Env.Threads != 1 || rep.Env.CPU == "" || rep.Env.GoVersion == "" || rep.Env.CPUFeatures == nil {
		t.Fatalf("environment %+v", rep.Env)
	}

	// The two runs: compared, whatever the verdict on this machine.
	out := filepath.Join(dir, "cmp.json")
	stdout, stderr, code := d500(t, "bench-compare", a, b, "--json", out)
	if code != 0 || !strings.Contains(stdout, "native: A median ") || !strings.Contains(stdout, "B median ") {
		t.Fatalf("bench-compare: exit %d\n%s%s", code, stdout, stderr)
	}
	var cmp metrics.BenchComparison
	readJSONFile(t, out, &cmp)
	if len(cmp.Comparisons) != 1 || cmp.EnvironmentA == nil || cmp.EnvironmentB == nil || cmp.Environment.GoVersion == "" || cmp.Threshold != 0.05 || cmp.Comparisons[0].A.Runs != 40 {
		t.Fatalf("comparison JSON: %+v", cmp)
	}

	// A report against itself: the same samples, no difference.
	stdout, _, code = d500(t, "bench-compare", a, a)
	if code != 0 || !strings.Contains(stdout, ": no significant difference (B/A 1.00") || !strings.Contains(stdout, "p=1)") {
		t.Fatalf("a report against itself: exit %d\n%s", code, stdout)
	}
	// Its runs 1.5 times slower: B is slower, the interval around 1.5;
	// and the other way round, B is faster by as much.
	slow := filepath.Join(dir, "slow.json")
	scaleSamples(t, a, slow, 1.5)
	stdout, _, code = d500(t, "bench-compare", a, slow)
	var factor, lo, hi float64
	line := stdout[max(strings.Index(stdout, "B is"), 0):]
	if _, err := fmt.Sscanf(line, "B is slower than A: %fx (B/A, 95%% CI %f-%f, p", &factor, &lo, &hi); code != 0 || err != nil || factor != 1.5 || !(lo <= 1.5 && 1.5 <= hi) {
		t.Fatalf("1.5 times slower: exit %d, %v\n%s", code, err, stdout)
	}
	stdout, _, code = d500(t, "bench-compare", slow, a)
	if code != 0 || !strings.Contains(stdout, "B is faster than A: 1.50x (A/B, 95% CI ") {
		t.Fatalf("1.5 times faster: exit %d\n%s", code, stdout)
	}
}

// What cannot be compared is exit 1, saying why; what cannot be read, or
// is no timing report, exit 2 naming the file.
func TestBenchCompareRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, v any) string {
		path := filepath.Join(dir, name)
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	samples := []float64{1, 1.1, 0.9, 1.05, 0.95}
	runOf := func(model string, samples []float64) map[string]any {
		return map[string]any{"backend": "native", "model": model, "iterations": 5,
			"latency_ms": map[string]any{"min": 0.9, "median": 1, "p90": 1.1, "max": 1.1, "samples_ms": samples}}
	}
	a := write("a.json", runOf("x.onnx", samples))
	other := write("other.json", runOf("y.onnx", samples))
	old := write("old.json", runOf("x.onnx", nil))
	conf := write("conf.json", map[string]any{"backend": "native", "passed": 3, "failed": 0, "skipped": 0, "tests": []any{}})
	bench := write("bench.json", metrics.BenchReport{Backend: "native", Rows: []metrics.BenchRow{}})
	notJSON := filepath.Join(dir, "bad.json")
	os.WriteFile(notJSON, []byte("{"), 0o644)

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{a, other}, 1, "different models: x.onnx in " + a + ", y.onnx in " + other},
		{[]string{a, old}, 1, "older d500"},
		{[]string{a, bench}, 1, "is a d500 run --bench report and " + bench + " a d500 bench report"},
		{[]string{a, filepath.Join(dir, "missing.json")}, 2, "missing.json"},
		{[]string{a, conf}, 2, conf + ": not a timing report"},
		{[]string{notJSON, a}, 2, notJSON},
		{[]string{a}, 2, "need two reports"},
		{[]string{"--threshold", "-1", a, a}, 2, "--threshold -1"},
	} {
		_, stderr, code := d500(t, append([]string{"bench-compare"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("bench-compare %v: exit %d, want %d; stderr %q lacks %q", tc.args, code, tc.code, stderr, tc.want)
		}
	}
}

// Two d500 bench reports are compared row by row, each backend's runs
// against the same backend's in the other report; rows in one report
// only are listed as not compared.
func TestBenchCompareBenchRows(t *testing.T) {
	dir := t.TempDir()
	q := func(scale float64) *metrics.Quantiles {
		s := []float64{2, 2.1, 1.9, 2.05, 1.95, 2.02, 1.98, 2.01, 1.99, 2.03, 1.97, 2.04}
		for i := range s {
			s[i] *= scale
		}
		return &metrics.Quantiles{Median: 2 * scale, Samples: s}
	}
	rep := func(scale float64, extra string) string {
		r := metrics.BenchReport{Backend: "native", Compare: "onnxruntime", Rows: []metrics.BenchRow{
			{Model: "lenet", Batch: 1, Threads: 1, Backend: q(scale), Compare: q(1)},
		}}
		if extra != "" {
			r.Rows = append(r.Rows, metrics.BenchRow{Model: extra, Batch: 8, Threads: 2, Skipped: "onnxruntime: absent"})
		}
		path := filepath.Join(dir, fmt.Sprintf("bench-%v-%v.json", scale, extra))
		if err := metrics.WriteFile(path, func(w io.Writer) error { return json.NewEncoder(w).Encode(r) }); err != nil {
			t.Fatal(err)
		}
		return path
	}
	stdout, stderr, code := d500(t, "bench-compare", rep(1, "mlp"), rep(2, "resnet8"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"lenet batch 1 threads 1, native: A median 2.005 ms (95% CI ", "B median 4.01 ms (95% CI 3.95–4.07, 12 runs)",
		"B is slower than A: 2.00x (B/A, 95% CI 1.9",
		"lenet batch 1 threads 1, onnxruntime: A median 2.005 ms",
		"no significant difference (B/A 1.000",
		"not compared: mlp batch 8 threads 2, native: only in A",
		"not compared: resnet8 batch 8 threads 2, onnxruntime: only in B",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}
