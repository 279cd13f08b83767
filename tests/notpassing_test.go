package tests

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/metrics"
)

// update rewrites the checked-in lists of cases that do not pass from the
// current run: go test ./tests -run Conformance -update
var update = flag.Bool("update", false, "rewrite the checked-in lists of non-passing conformance cases")

// nativeNotPassing lists every case of the four suites that the native
// backend does not pass, with its status and reason.
const nativeNotPassing = "testdata/native_not_passing.tsv"

// checkNotPassingList requires the cases that did not pass to be exactly
// those of the checked-in list, with the same status: a case that starts
// passing must leave the list, and one that stops passing fails the test.
// The reasons in the file are for readers; they are refreshed with -update
// and not compared, since error wording may change without a change in
// behaviour. A fourth column, written by hand, says why a case cannot or
// does not pass yet (bad test data, numpy's random generator, ...); -update
// keeps it. A case listed as "random" has an outcome that depends on an
// unseeded random generator (Bernoulli without a seed against numpy's
// draws): it may fail or, by chance, pass, and either is accepted.
func checkNotPassingList(t *testing.T, rep *metrics.Report, path string) {
	t.Helper()
	got := map[string]metrics.Result{}
	for _, r := range rep.Tests {
		if r.Status != metrics.Passed {
			got[r.Name] = r
		}
	}
	if *update {
		old, _ := readNotPassing(path)
		if err := writeNotPassing(path, rep.Backend, got, old); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d cases", path, len(got))
		return
	}
	want, err := readNotPassing(path)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	for name, r := range got {
		w, listed := want[name]
		switch {
		case !listed:
			t.Errorf("%s %s but is not in %s: %s", name, r.Status, path, r.Reason)
		case w.status == randomStatus && r.Status == metrics.Failed:
		case w.status != string(r.Status):
			t.Errorf("%s is listed as %s in %s but %s: %s", name, w.status, path, r.Status, r.Reason)
		}
	}
	for name, w := range want {
		if _, ok := got[name]; !ok && w.status != randomStatus {
			t.Errorf("%s is listed as %s in %s but passes now: remove it (-update)", name, w.status, path)
		}
	}
}

// randomStatus marks a case whose outcome is left to chance.
const randomStatus = "random"

// listed is one line of a not-passing list.
type listed struct {
	status string
	note   string // why, written by hand
}

// The file has one line per case: name, status, reason and an optional
// note, tab-separated, sorted by name; lines starting with # are comments.
func readNotPassing(path string) (map[string]listed, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]listed{}
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
		l := listed{status: fields[1]}
		if len(fields) == 4 {
			l.note = fields[3]
		}
		out[fields[0]] = l
	}
	return out, sc.Err()
}

func writeNotPassing(path, backendName string, results map[string]metrics.Result, old map[string]listed) error {
	names := make([]string, 0, len(results))
	for n := range results {
		names = append(names, n)
	}
	for n, l := range old {
		if _, ok := results[n]; !ok && l.status == randomStatus {
			names = append(names, n) // passed by chance this time: still listed
		}
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "# Conformance cases the %s backend does not pass, with the reason.\n", backendName)
	b.WriteString("# Kept exact by the conformance tests in tests/; regenerate with: go test ./tests -run Conformance -update\n")
	b.WriteString("# Columns: case, status (random: may fail or pass by chance), reason (from the run), note (by hand: why; kept by -update).\n")
	for _, n := range names {
		r, ran := results[n]
		status, reason := string(r.Status), strings.Join(strings.Fields(r.Reason), " ")
		if old[n].status == randomStatus {
			status = randomStatus
			if !ran {
				reason = "passed in the run that wrote this list"
			}
		}
		fmt.Fprintf(&b, "%s\t%s\t%s", n, status, reason)
		if note := old[n].note; note != "" {
			fmt.Fprintf(&b, "\t%s", note)
		}
		b.WriteString("\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
