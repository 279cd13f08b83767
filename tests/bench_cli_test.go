package tests

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
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
	data := readJSON(t, jsonPath, &rep)
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
		{[]string{"--passes", "0"}, "--passes 0"},
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
	data := readJSON(t, jsonPath, &rep)
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

// interruptBench runs d500 bench with args, sends it an interrupt once a
// line containing wait appears on its stderr (onStderr) or stdout, and
// checks it exits with status 130; it returns what it wrote.
func interruptBench(t *testing.T, bin string, onStderr bool, wait string, args ...string) (stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	outPath, errPath := filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr")
	outFile, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	errFile, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	cmd := exec.Command(bin, append([]string{"bench"}, args...)...)
	cmd.Stdout, cmd.Stderr = outFile, errFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	watched := outPath
	if onStderr {
		watched = errPath
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		data, _ := os.ReadFile(watched)
		if strings.Contains(string(data), wait) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no %q within 2 minutes:\n%s", wait, data)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	o, _ := os.ReadFile(outPath)
	e, _ := os.ReadFile(errPath)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit %v, want status 130\n%s", err, e)
	}
	return string(o), string(e)
}

// Ctrl-C during a row leaves that row out and writes the rows measured
// before it, marked interrupted, with exit status 130. With several passes
// it leaves out the pass in progress and writes every row measured in an
// earlier one, with its passes.
func TestD500BenchInterrupt(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	for _, passes := range []int{1, 2} {
		jsonPath, mdPath := filepath.Join(dir, "bench.json"), filepath.Join(dir, "bench.md")
		// LeNet's row (or first pass) takes well under a second; ResNet-18's
		// 1000 pairs would take minutes, so the interrupt falls inside it.
		wait, onStderr := "lenet batch 1 threads 1: ", false
		if passes > 1 {
			wait, onStderr = "pass 1 of 2: "+wait, true
		}
		_, stderr := interruptBench(t, bin, onStderr, wait, "--models", "lenet,resnet18", "--batch", "1", "--threads", "1",
			"--runs", "1000", "--passes", strconv.Itoa(passes), "--compare", "", "--json", jsonPath, "--md", mdPath)
		if !strings.Contains(stderr, "interrupted; 1 rows measured") {
			t.Errorf("%d passes: stderr:\n%s", passes, stderr)
		}
		var rep struct {
			Interrupted bool `json:"interrupted"`
			Rows        []struct {
				Model  string `json:"model"`
				Runs   int    `json:"runs"`
				Passes int    `json:"passes"`
				Error  string `json:"error"`
			} `json:"rows"`
		}
		data := readJSON(t, jsonPath, &rep)
		if !rep.Interrupted || len(rep.Rows) != 1 || rep.Rows[0].Model != "lenet" || rep.Rows[0].Runs != 1000 || rep.Rows[0].Passes != 1 || rep.Rows[0].Error != "" {
			t.Errorf("%d passes: report after the interrupt: %s", passes, data)
		}
		md, err := os.ReadFile(mdPath)
		if err != nil || !strings.Contains(string(md), "| lenet | 1 | 1 | 1000 |") || !strings.Contains(string(md), "Interrupted") {
			t.Errorf("%d passes: markdown after the interrupt (%v):\n%s", passes, err, md)
		}
	}
}

// With --passes the table is measured over several times and each row's
// runs are pooled: its figures are those of all the runs, and the report
// keeps each pass's ratio and core round trip.
func TestD500BenchPasses(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	jsonPath, mdPath := filepath.Join(dir, "bench.json"), filepath.Join(dir, "bench.md")
	stdout, stderr, code := runD500(t, bin, "bench", "--models", "lenet", "--batch", "1", "--threads", "1,2", "--runs", "2",
		"--passes", "3", "--json", jsonPath, "--md", mdPath)
	if code != 0 {
		t.Fatalf("d500 bench: exit %d\n%s%s", code, stdout, stderr)
	}
	var rep struct {
		Passes int `json:"passes"`
		Rows   []struct {
			Threads    int             `json:"threads"`
			Runs       int             `json:"runs"`
			Passes     int             `json:"passes"`
			Backend    *benchQuantiles `json:"backend_ms"`
			Compare    *benchQuantiles `json:"compare_ms"`
			Ratio      float64         `json:"ratio"`
			PassRatios []float64       `json:"pass_ratios"`
			CoreRTTNs  float64         `json:"core_round_trip_ns"`
			PassRTTNs  []float64       `json:"pass_core_round_trip_ns"`
			Skipped    string          `json:"skipped"`
		} `json:"rows"`
	}
	data := readJSON(t, jsonPath, &rep)
	if rep.Passes != 3 || len(rep.Rows) != 2 || rep.Rows[0].Threads != 1 || rep.Rows[1].Threads != 2 {
		t.Fatalf("report %s", data)
	}
	for i, r := range rep.Rows {
		if r.Runs != 6 || r.Passes != 3 || !r.Backend.ordered() {
			t.Errorf("row %d: %d runs in %d passes, native %+v; want 6 in 3", i, r.Runs, r.Passes, r.Backend)
		}
		if _, ok := metrics.CoreRoundTrip(10); ok && (len(r.PassRTTNs) != 3 || r.CoreRTTNs <= 0) {
			t.Errorf("row %d: core round trips %v, median %v", i, r.PassRTTNs, r.CoreRTTNs)
		}
		if !strings.Contains(stderr, fmt.Sprintf("pass 3 of 3: lenet batch 1 threads %d: median ", r.Threads)) {
			t.Errorf("no progress line of the last pass of row %d:\n%s", i, stderr)
		}
		if r.Skipped != "" {
			continue // no ONNX Runtime library here: TestD500Bench says so
		}
		// The ratio is that of the medians of all 6 runs, not an average
		// of the passes' ratios.
		if len(r.PassRatios) != 3 || !r.Compare.ordered() || r.Ratio != r.Backend.Median/r.Compare.Median {
			t.Errorf("row %d against onnxruntime: %s", i, data)
		}
	}
	if !strings.Contains(stdout, "(6 runs each in 3 passes") {
		t.Errorf("row lines:\n%s", stdout)
	}
	md, err := os.ReadFile(mdPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "measured 3 times over") || !strings.Contains(string(md), "| per pass |") || !strings.Contains(string(md), "| lenet | 1 | 2 | 6 | ") {
		t.Errorf("markdown table:\n%s", md)
	}
}
