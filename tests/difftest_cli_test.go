package tests

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// difftestList lists every case of `d500 difftest --backend native
// --against onnxruntime --cases 2 --seed 1` that does not pass, with its
// status, reason and a note saying who is wrong. Regenerate it with
//
//	go test ./tests -run TestD500DifftestNativeOnnxruntime -update
//
// which keeps the notes of the cases still listed.
const difftestList = "testdata/difftest-native-onnxruntime.txt"

// difftestMinPassed guards against a run that generates or runs almost
// nothing (ONNX Runtime's library missing answers "not supported" for
// every operator, leaving no case at all).
const difftestMinPassed = 800

// difftestJSON is the --json document of `d500 difftest`.
type difftestJSON struct {
	Backend    string `json:"backend"`
	Against    string `json:"against"`
	Seed       uint64 `json:"seed"`
	CasesPerOp int    `json:"cases_per_op"`
	Passed     int    `json:"passed"`
	Failed     int    `json:"failed"`
	Skipped    int    `json:"skipped"`
	Tests      []struct {
		Name        string   `json:"name"`
		Status      string   `json:"status"`
		Reason      string   `json:"reason"`
		MaxAbsError *float64 `json:"max_abs_error"`
		MaxRelError *float64 `json:"max_rel_error"`
		Seconds     *float64 `json:"seconds"`
	} `json:"tests"`
	Environment *struct {
		CPU string `json:"cpu"`
	} `json:"environment"`
}

// The differential test of native against ONNX Runtime over every
// operator version both support: the cases that do not pass are exactly
// those of difftestList, with the same status and reason.
func TestD500DifftestNativeOnnxruntime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every operator version on two backends")
	}
	dir := t.TempDir()
	bin := buildD500(t, dir)
	report := filepath.Join(dir, "difftest.json")
	start := time.Now()
	stdout, stderr, code := runD500(t, bin, "difftest", "--backend", "native", "--against", "onnxruntime",
		"--cases", "2", "--seed", "1", "--json", report)
	t.Logf("d500 difftest: %s in %.1fs", lastLine(stdout), time.Since(start).Seconds())
	var rep difftestJSON
	readJSON(t, report, &rep)
	summary := fmt.Sprintf("%d passed, %d failed, %d skipped", rep.Passed, rep.Failed, rep.Skipped)
	if lastLine(stdout) != summary {
		t.Errorf("last line %q, want the report's %q", lastLine(stdout), summary)
	}
	if want := map[bool]int{true: 1, false: 0}[rep.Failed > 0]; code != want {
		t.Errorf("exit status %d with %d failures, want %d; stderr:\n%s", code, rep.Failed, want, stderr)
	}
	if rep.Backend != "native" || rep.Against != "onnxruntime" || rep.Seed != 1 || rep.CasesPerOp != 2 || rep.Environment == nil {
		t.Errorf("report header: backend %q against %q seed %d cases %d environment %v", rep.Backend, rep.Against, rep.Seed, rep.CasesPerOp, rep.Environment)
	}
	if rep.Passed+rep.Failed+rep.Skipped != len(rep.Tests) {
		t.Errorf("%s, but %d tests listed", summary, len(rep.Tests))
	}
	if rep.Passed < difftestMinPassed {
		t.Errorf("%d passed, want at least %d", rep.Passed, difftestMinPassed)
	}
	got := map[string]difftestEntry{}
	for _, r := range rep.Tests {
		if r.MaxAbsError == nil || r.MaxRelError == nil || r.Seconds == nil {
			t.Errorf("%s: incomplete entry", r.Name)
		}
		if r.Status == "passed" {
			continue
		}
		if strings.TrimSpace(r.Reason) == "" {
			t.Errorf("%s %s without a reason", r.Name, r.Status)
		}
		got[r.Name] = difftestEntry{status: r.Status, reason: strings.Join(strings.Fields(r.Reason), " ")}
	}
	if *update {
		old, _ := readDifftestList(difftestList)
		if err := writeDifftestList(difftestList, got, old); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d cases", difftestList, len(got))
		return
	}
	want, err := readDifftestList(difftestList)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	for _, name := range sortedNames(got) {
		g, w := got[name], want[name]
		switch {
		case w.status == "":
			t.Errorf("%s %s but is not in %s: %s", name, g.status, difftestList, g.reason)
		case w.status == difftestRandom && g.status == "failed":
		case w.status != g.status || !sameReason(w.reason, g.reason): // numbers within 1e-3, as the conformance lists
			t.Errorf("%s is listed as\n\t%s: %s\nbut is\n\t%s: %s", name, w.status, w.reason, g.status, g.reason)
		}
	}
	for _, name := range sortedNames(want) {
		if _, ok := got[name]; !ok && want[name].status != difftestRandom {
			t.Errorf("%s is listed as %s in %s but passes now (or was not generated): remove it (-update)", name, want[name].status, difftestList)
		}
	}
}

// difftestEntry is one line of the list: status, reason, and a note by
// hand. A case whose status is "random" (set by hand) has outputs that
// differ from run to run (ONNX Runtime reading memory it did not write):
// it may fail with any reason, or pass.
type difftestEntry struct {
	status, reason, note string
}

func sortedNames(m map[string]difftestEntry) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// readDifftestList reads the list: name, status, reason and an optional
// note, tab-separated; lines starting with # are comments.
func readDifftestList(path string) (map[string]difftestEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]difftestEntry{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.SplitN(text, "\t", 4)
		if len(fields) < 3 {
			return nil, fmt.Errorf("%s:%d: want name<TAB>status<TAB>reason[<TAB>note]", path, line)
		}
		e := difftestEntry{status: fields[1], reason: fields[2]}
		if len(fields) == 4 {
			e.note = fields[3]
		}
		out[fields[0]] = e
	}
	return out, sc.Err()
}

func writeDifftestList(path string, got, old map[string]difftestEntry) error {
	var b strings.Builder
	b.WriteString("# Cases of `d500 difftest --backend native --against onnxruntime --cases 2 --seed 1` that do not pass.\n")
	b.WriteString("# Kept exact by TestD500DifftestNativeOnnxruntime; regenerate with: go test ./tests -run TestD500DifftestNativeOnnxruntime -update\n")
	b.WriteString("# Columns: case, status (random: outputs vary between runs, any failure accepted), reason (from the run; got = native, want = onnxruntime), note (by hand: who is wrong by the ONNX definition; kept by -update).\n")
	for name, e := range old {
		if _, ok := got[name]; !ok && e.status == difftestRandom {
			got[name] = difftestEntry{status: difftestRandom, reason: "passed in the run that wrote this list"}
		}
	}
	for _, name := range sortedNames(got) {
		e := got[name]
		if old[name].status == difftestRandom {
			e.status = difftestRandom
		}
		fmt.Fprintf(&b, "%s\t%s\t%s", name, e.status, e.reason)
		if note := old[name].note; note != "" {
			fmt.Fprintf(&b, "\t%s", note)
		}
		b.WriteString("\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// `d500 difftest` refuses bad flags with the usage (exit status 2), and a
// --run that matches no case; native against itself on a few operators
// passes and prints the closing line.
func TestD500DifftestFlags(t *testing.T) {
	bin := buildD500(t, t.TempDir())
	for _, args := range [][]string{
		{"difftest", "--cases", "0"},
		{"difftest", "--backend", "nosuch"},
		{"difftest", "--run", "("},
		{"difftest", "--run", "^NoSuchOperator-v"},
		{"difftest", "extra"},
	} {
		if _, stderr, code := runD500(t, bin, args...); code != 2 || stderr == "" {
			t.Errorf("d500 %v: exit status %d, stderr %q; want 2 and a message", args, code, stderr)
		}
	}
	stdout, stderr, code := runD500(t, bin, "difftest", "--backend", "native", "--against", "native", "--run", `^(Relu|MatMul)-v13/float/`, "--cases", "4", "-v")
	if code != 0 || lastLine(stdout) != "2 passed, 0 failed, 0 skipped" {
		t.Errorf("native against native: exit status %d, output:\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "PASS Relu-v13/float/case0") {
		t.Errorf("-v prints no PASS line:\n%s", stdout)
	}
}

// difftestRandom is the status, set by hand, of a case whose outputs vary
// between runs.
const difftestRandom = "random"
