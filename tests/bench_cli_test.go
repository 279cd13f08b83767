package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/backend/onnxruntime"
	"github.com/deep500/deep500-go/metrics"
)

// benchQuantiles is a latency summary of `d500 bench --json`, in ms.
type benchQuantiles struct {
	Min, P10, Median, P90, Max float64
}

// ordered reports whether the summary is a real one: positive and in
// order.
func (q *benchQuantiles) ordered() bool {
	return q != nil && 0 < q.Min && q.Min <= q.P10 && q.P10 <= q.Median && q.Median <= q.P90 && q.P90 <= q.Max
}

// `d500 bench` times LeNet on native and ONNX Runtime interleaved and
// writes a JSON report whose figures are consistent — the ratio is the
// quotient of the medians, the quantiles are ordered, the allocations are
// counted — with the environment it ran in, and a Markdown table.
func TestD500Bench(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	jsonPath, mdPath := filepath.Join(dir, "bench.json"), filepath.Join(dir, "bench.md")
	stdout, stderr, code := runD500(t, bin, "bench", "--models", "lenet", "--batch", "1", "--threads", "1", "--runs", "3",
		"--json", jsonPath, "--md", mdPath)
	if code != 0 {
		t.Fatalf("d500 bench: exit %d\n%s%s", code, stdout, stderr)
	}
	var rep struct {
		Environment struct {
			Time      string `json:"time"`
			CPU       string `json:"cpu"`
			Cores     int    `json:"cores"`
			GoVersion string `json:"go_version"`
		} `json:"environment"`
		Backend     string `json:"backend"`
		Compare     string `json:"compare"`
		Interrupted bool   `json:"interrupted"`
		Rows        []struct {
			Model       string          `json:"model"`
			Batch       int             `json:"batch"`
			Threads     int             `json:"threads"`
			Runs        int             `json:"runs"`
			Backend     *benchQuantiles `json:"backend_ms"`
			Compare     *benchQuantiles `json:"compare_ms"`
			Ratio       float64         `json:"ratio"`
			CoreRTTNs   float64         `json:"core_round_trip_ns"`
			MaxAbsError float64         `json:"max_abs_error"`
			Mismatch    string          `json:"mismatch"`
			Skipped     string          `json:"skipped"`
			Error       string          `json:"error"`
			Allocations *struct {
				Runs         int     `json:"runs"`
				AllocsPerRun float64 `json:"allocs_per_run"`
				BytesPerRun  float64 `json:"bytes_per_run"`
			} `json:"allocations"`
		} `json:"rows"`
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	env := rep.Environment
	if env.Time == "" || env.CPU == "" || env.Cores != runtime.NumCPU() || env.GoVersion != runtime.Version() {
		t.Errorf("environment %+v", env)
	}
	if rep.Backend != "native" || rep.Compare != "onnxruntime" || rep.Interrupted || len(rep.Rows) != 1 {
		t.Fatalf("report %s", data)
	}
	r := rep.Rows[0]
	if r.Model != "lenet" || r.Batch != 1 || r.Threads != 1 || r.Runs != 3 || r.Error != "" || !r.Backend.ordered() {
		t.Fatalf("row %s", data)
	}
	// The bench runs through network.InferInto, and a warm native
	// inference of LeNet allocates nothing (as the native backend's
	// TestPresetInferenceAllocatesNothing pins).
	if a := r.Allocations; a == nil || a.Runs != 3 || a.AllocsPerRun != 0 || a.BytesPerRun != 0 {
		t.Errorf("allocations %+v", r.Allocations)
	}
	// The round trip between two cores is measured before the row where
	// two threads can be pinned to two cores (metrics.CoreRoundTrip).
	if _, ok := metrics.CoreRoundTrip(10); ok != (r.CoreRTTNs > 0) {
		t.Errorf("core round trip %v ns, measurable here: %v", r.CoreRTTNs, ok)
	}
	if !strings.Contains(stdout, "lenet batch 1 threads 1: native median ") {
		t.Errorf("no row line:\n%s", stdout)
	}
	md, err := os.ReadFile(mdPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| lenet | 1 | 1 | 3 | ") || !strings.Contains(string(md), env.CPU) || !strings.Contains(string(md), "| core RTT |") {
		t.Errorf("markdown table:\n%s", md)
	}

	// ONNX Runtime's figures are left out only when its library is absent,
	// and then the row says why.
	lib := onnxruntime.LibraryPath(backend.Options{})
	if _, err := os.Stat(lib); err != nil {
		if r.Compare != nil || !strings.Contains(r.Skipped, lib) {
			t.Errorf("without %s: compared %+v, skipped %q", lib, r.Compare, r.Skipped)
		}
		t.Skipf("the ONNX Runtime library %s is absent (make onnxruntime): only native's figures checked", lib)
	}
	if r.Skipped != "" || r.Mismatch != "" || !r.Compare.ordered() || r.MaxAbsError > 1e-4 || r.Ratio != r.Backend.Median/r.Compare.Median {
		t.Errorf("row against onnxruntime: %s", data)
	}
	if !strings.Contains(string(md), "| onnxruntime median |") {
		t.Errorf("markdown table:\n%s", md)
	}
}

// Bad flag values are usage errors (exit 2) whose message names the value.
func TestD500BenchBadFlags(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--batch", "0"}, `"0"`},
		{[]string{"--batch", "1,x"}, `"x"`},
		{[]string{"--threads", "x"}, `"x"`},
		{[]string{"--threads", "-1"}, `"-1"`},
		{[]string{"--models", "nosuch"}, `"nosuch"`},
		{[]string{"--models", "lenet,"}, `""`},
		{[]string{"--runs", "0"}, "--runs 0"},
		{[]string{"--compare", "nosuchengine"}, "nosuchengine"},
		{[]string{"--compare", "native"}, "--compare native"},
		{[]string{"stray"}, `"stray"`},
	} {
		args := append([]string{"bench", "--models", "lenet", "--json", filepath.Join(dir, "x.json")}, tc.args...)
		_, stderr, code := runD500(t, bin, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("d500 %v: exit %d, want 2 with %s in:\n%s", args, code, tc.want, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "x.json")); err == nil {
			t.Errorf("d500 %v wrote its report", args)
		}
	}
}

// A model the compared backend cannot run (Gorgonia has no grouped
// convolution, which MobileNetV2's depthwise layers are) is a skipped row
// with the reason, and the backend's own figures are still measured.
func TestD500BenchSkipsWhatABackendCannotRun(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	jsonPath := filepath.Join(dir, "bench.json")
	stdout, stderr, code := runD500(t, bin, "bench", "--models", "mobilenetv2", "--batch", "1", "--threads", "1",
		"--runs", "2", "--warmup", "0", "--alloc-runs", "1", "--compare", "gorgonia", "--json", jsonPath)
	if code != 0 {
		t.Fatalf("d500 bench: exit %d\n%s%s", code, stdout, stderr)
	}
	var rep struct {
		Rows []struct {
			Runs    int             `json:"runs"`
			Backend *benchQuantiles `json:"backend_ms"`
			Compare *benchQuantiles `json:"compare_ms"`
			Ratio   float64         `json:"ratio"`
			Skipped string          `json:"skipped"`
		} `json:"rows"`
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 1 {
		t.Fatalf("report %s", data)
	}
	r := rep.Rows[0]
	if !strings.HasPrefix(r.Skipped, "gorgonia: ") || !strings.Contains(r.Skipped, "group") || r.Compare != nil || r.Ratio != 0 ||
		r.Runs != 2 || !r.Backend.ordered() {
		t.Errorf("row %s", data)
	}
	if !strings.Contains(stdout, "skipped: gorgonia: ") {
		t.Errorf("no skipped line:\n%s", stdout)
	}
}

// Ctrl-C during a row leaves that row out and writes the rows measured
// before it, marked interrupted, with exit status 1.
func TestD500BenchInterrupt(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	jsonPath, mdPath, outPath := filepath.Join(dir, "bench.json"), filepath.Join(dir, "bench.md"), filepath.Join(dir, "stdout")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var stderr bytes.Buffer
	// LeNet's row takes well under a second; ResNet-18's 1000 pairs would
	// take minutes, so the interrupt falls inside it.
	cmd := exec.Command(bin, "bench", "--models", "lenet,resnet18", "--batch", "1", "--threads", "1", "--runs", "1000",
		"--compare", "", "--json", jsonPath, "--md", mdPath)
	cmd.Stdout, cmd.Stderr = out, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		data, _ := os.ReadFile(outPath)
		if strings.Contains(string(data), "lenet batch 1 threads 1: ") {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no row within 2 minutes:\n%s%s", data, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted; 1 rows measured") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	var rep struct {
		Interrupted bool `json:"interrupted"`
		Rows        []struct {
			Model string `json:"model"`
			Runs  int    `json:"runs"`
			Error string `json:"error"`
		} `json:"rows"`
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || len(rep.Rows) != 1 || rep.Rows[0].Model != "lenet" || rep.Rows[0].Runs != 1000 || rep.Rows[0].Error != "" {
		t.Errorf("report after the interrupt: %s", data)
	}
	md, err := os.ReadFile(mdPath)
	if err != nil || !strings.Contains(string(md), "| lenet | 1 | 1 | 1000 |") || !strings.Contains(string(md), "Interrupted") {
		t.Errorf("markdown after the interrupt (%v):\n%s", err, md)
	}
}
