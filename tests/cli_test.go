package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// buildD500 builds the command into dir and returns its path.
func buildD500(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "d500")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/deep500/deep500-go/cmd/d500")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runD500 runs the binary and returns stdout, stderr and the exit status.
func runD500(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("d500 %v: %v", args, err)
	}
	return o.String(), e.String(), code
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// conformanceJSON is the --json document of the command-line contract.
type conformanceJSON struct {
	Backend string `json:"backend"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Skipped int    `json:"skipped"`
	Tests   []struct {
		Name        string   `json:"name"`
		Status      string   `json:"status"`
		Reason      string   `json:"reason"`
		MaxAbsError *float64 `json:"max_abs_error"`
		MaxRelError *float64 `json:"max_rel_error"`
		Seconds     *float64 `json:"seconds"`
	} `json:"tests"`
}

// readReport reads a --json file and checks that it has the contract's
// fields, and the environment and interruption every report carries.
func readReport(t *testing.T, path string) conformanceJSON {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, k := range []string{"check", "backend", "passed", "failed", "skipped", "tests", "interrupted", "environment"} {
		if _, ok := top[k]; !ok {
			t.Errorf("%s lacks %q", path, k)
		}
	}
	if len(top) != 8 {
		t.Errorf("%s has %d top-level fields, want 8", path, len(top))
	}
	var rep conformanceJSON
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Tests {
		if c.Name == "" || c.MaxAbsError == nil || c.MaxRelError == nil || c.Seconds == nil {
			t.Errorf("%s: incomplete entry %+v", path, c)
		}
	}
	return rep
}

func TestD500(t *testing.T) {
	tmp := t.TempDir()
	bin := buildD500(t, tmp)
	node := filepath.Join(dataRoot, "node")
	relu, abs := filepath.Join(node, "test_relu"), filepath.Join(node, "test_abs")
	for _, d := range []string{relu, abs} {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("ONNX test data missing (run make setup): %v", err)
		}
	}

	t.Run("conformance ok", func(t *testing.T) {
		js, cs := filepath.Join(tmp, "ok.json"), filepath.Join(tmp, "ok.csv")
		// Flags after the folders work too.
		out, errOut, code := runD500(t, bin, "conformance", "--backend", "native", "--json", js, relu, abs, "--csv", cs, "-v")
		if code != 0 {
			t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		rep := readReport(t, js)
		if rep.Backend != "native" || len(rep.Tests) != 2 || rep.Failed != 0 || rep.Passed+rep.Skipped != 2 {
			t.Errorf("report %+v", rep)
		}
		if rep.Tests[0].Name != "node/test_relu" || rep.Tests[0].Status != "passed" {
			t.Errorf("first case %+v, want node/test_relu passed", rep.Tests[0])
		}
		if rep.Tests[1].Name != "node/test_abs" {
			t.Errorf("second case %q, want node/test_abs", rep.Tests[1].Name)
		}
		want := fmt.Sprintf("%d passed, 0 failed, %d skipped", rep.Passed, rep.Skipped)
		if got := lastLine(out); got != want {
			t.Errorf("last line %q, want %q", got, want)
		}
		if !strings.Contains(out, "PASS node/test_relu") {
			t.Errorf("-v output lacks the passed case:\n%s", out)
		}
		csvData, err := os.ReadFile(cs)
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Split(strings.TrimSpace(string(csvData)), "\n"); len(lines) != 3 ||
			lines[0] != "name,status,reason,max_abs_error,max_rel_error,seconds" {
			t.Errorf("CSV:\n%s", csvData)
		}
	})

	t.Run("conformance failing case", func(t *testing.T) {
		dir := filepath.Join(tmp, "altered", "test_relu")
		if err := os.CopyFS(dir, os.DirFS(relu)); err != nil {
			t.Fatal(err)
		}
		out0 := filepath.Join(dir, "test_data_set_0", "output_0.pb")
		name, v, err := onnx.ReadValue(out0, nil)
		if err != nil {
			t.Fatal(err)
		}
		v.(*onnx.Tensor).Float32s()[0] -= 3
		if err := onnx.WriteValue(out0, name, v); err != nil {
			t.Fatal(err)
		}
		js := filepath.Join(tmp, "fail.json")
		out, errOut, code := runD500(t, bin, "conformance", "--json", js, filepath.Dir(dir))
		if code != 1 {
			t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		if !strings.Contains(out, `FAIL altered/test_relu: output "y" (test_data_set_0): 1 of 60 elements differ`) {
			t.Errorf("no FAIL line naming the output:\n%s", out)
		}
		if got := lastLine(out); got != "0 passed, 1 failed, 0 skipped" {
			t.Errorf("last line %q", got)
		}
		rep := readReport(t, js)
		if rep.Failed != 1 || rep.Tests[0].Status != "failed" || rep.Tests[0].Reason == "" {
			t.Errorf("report %+v", rep)
		}
	})

	t.Run("bad usage", func(t *testing.T) {
		for _, args := range [][]string{
			{},
			{"no-such-command"},
			{"conformance"},
			{"conformance", "--no-such-flag", relu},
			{"conformance", "--backend", "tensorflow", relu},
			{"conformance", "--run", "(", relu},
			{"conformance", "--run", "test_no_such_case", relu},
			{"gradcheck", "--run", "test_no_such_case", relu},
			{"conformance", filepath.Join(tmp, "no-such-folder")},
			{"ops", "--backend", "tensorflow"},
		} {
			_, errOut, code := runD500(t, bin, args...)
			if code != 2 {
				t.Errorf("d500 %q: exit %d, want 2", args, code)
			}
			if strings.TrimSpace(errOut) == "" {
				t.Errorf("d500 %q: no message on stderr", args)
			}
		}
	})

	t.Run("ops", func(t *testing.T) {
		js := filepath.Join(tmp, "ops.json")
		out, errOut, code := runD500(t, bin, "ops", "--json", js)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		if !strings.Contains(out, "native") || !strings.Contains(out, "Relu") {
			t.Errorf("ops table lacks native or Relu:\n%.2000s", out)
		}
		var doc struct {
			Operators []struct {
				OpType  string            `json:"op_type"`
				Support map[string]string `json:"support"`
			} `json:"operators"`
		}
		readJSON(t, js, &doc)
		reluYes := false
		for _, o := range doc.Operators {
			if o.OpType == "Relu" && o.Support["native"] == "yes" {
				reluYes = true
			}
			if o.Support["gorgonia"] == "" || o.Support["onnxruntime"] == "" {
				t.Fatalf("%s lacks a backend column: %v", o.OpType, o.Support)
			}
		}
		if !reluYes {
			t.Error("no Relu version marked supported by native")
		}
	})

	t.Run("interrupt keeps results", func(t *testing.T) {
		js := filepath.Join(tmp, "int.json")
		cmd := exec.Command(bin, "conformance", "-v", "--json", js, node)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		var lines []string
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if len(lines) == 1 {
				cmd.Process.Signal(syscall.SIGINT)
			}
		}
		err = cmd.Wait()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		rep := readReport(t, js)
		// The signal normally lands while cases are running: the run stops
		// early with status 130. On a machine fast enough to finish the
		// suite first, everything ran and the status is that of a normal
		// run.
		all := suiteCounts[0].cases
		switch {
		case code == 130 && len(rep.Tests) > 0 && len(rep.Tests) < all:
		case (code == 0 || code == 1) && len(rep.Tests) == all:
			t.Logf("the run finished before SIGINT took effect")
		default:
			t.Fatalf("after SIGINT: exit status %d with %d results written", code, len(rep.Tests))
		}
		want := fmt.Sprintf("%d passed, %d failed, %d skipped", rep.Passed, rep.Failed, rep.Skipped)
		if got := lines[len(lines)-1]; got != want {
			t.Errorf("last line %q, want %q", got, want)
		}
	})
}

// readJSON decodes the JSON file at path into v and returns its bytes,
// failing the test when it cannot.
func readJSON(t *testing.T, path string, v any) []byte {
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
