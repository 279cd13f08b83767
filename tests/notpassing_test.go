package tests

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/metrics"
)

// update rewrites the checked-in lists of cases that do not pass from the
// current run: go test ./tests -run 'Conformance|GradCheckAllSuites' -update
var update = flag.Bool("update", false, "rewrite the checked-in lists of non-passing cases")

// nativeNotPassing lists every case of the four suites that the native
// backend does not pass, with its status and reason.
const nativeNotPassing = "testdata/native_not_passing.tsv"

// checkNotPassingList is checkCaseList for a conformance run.
func checkNotPassingList(t *testing.T, rep *metrics.Report, path string) {
	t.Helper()
	checkCaseList(t, rep, path, "Conformance", "Conformance")
}

// checkCaseList requires the cases of rep that did not pass to be exactly
// those of the checked-in list at path, with the same status and the same
// reason (sameReason): a case that starts passing must leave the list,
// one that stops passing or fails otherwise fails the test. When the list
// has a counts line ("# Counts: N passed, N failed, N skipped"), the
// run's counts must be those. A fourth column, written by hand, says why a
// case cannot or does not pass yet (bad test data, numpy's random
// generator, ...); -update keeps it. A case listed as "random" has an
// outcome that depends on an unseeded random generator (Bernoulli without
// a seed against numpy's draws): it may fail, for any reason, or, by
// chance, pass. what names the kind of run in the file's header ("Conformance",
// "Gradient-check") and test the -run pattern that rewrites it.
func checkCaseList(t *testing.T, rep *metrics.Report, path, what, test string) {
	t.Helper()
	got := map[string]metrics.Result{}
	for _, r := range rep.Tests {
		if r.Status != metrics.Passed {
			got[r.Name] = r
		}
	}
	if *update {
		old, _, _ := readCaseList(path)
		if err := writeCaseList(path, what, test, rep, got, old); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d cases", path, len(got))
		return
	}
	want, counts, err := readCaseList(path)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	for name, r := range got {
		w, listed := want[name]
		reason := oneLineReason(r.Reason)
		switch {
		case !listed:
			t.Errorf("%s %s but is not in %s: %s", name, r.Status, path, reason)
		case w.status == randomStatus && r.Status == metrics.Failed:
		case w.status != string(r.Status):
			t.Errorf("%s is listed as %s in %s but %s: %s", name, w.status, path, r.Status, reason)
		case !sameReason(w.reason, reason):
			t.Errorf("%s %s for another reason than %s lists (-update if that is right):\n\tlisted: %s\n\tnow:    %s", name, r.Status, path, w.reason, reason)
		}
	}
	for name, w := range want {
		if _, ok := got[name]; !ok && w.status != randomStatus {
			t.Errorf("%s is listed as %s in %s but passes now: remove it (-update)", name, w.status, path)
		}
	}
	if counts != "" && counts != rep.Summary() {
		t.Errorf("%s pins the counts %q, the run gave %q", path, counts, rep.Summary())
	}
}

// randomStatus marks a case whose outcome is left to chance.
const randomStatus = "random"

// listed is one line of a not-passing list.
type listed struct {
	status string
	reason string // from the run that wrote the list
	note   string // why, written by hand
}

// countsPrefix starts the comment line that pins a run's counts.
const countsPrefix = "# Counts: "

// The file has one line per case: name, status, reason and an optional
// note, tab-separated, sorted by name; lines starting with # are comments,
// the counts line among them.
func readNotPassing(path string) (map[string]listed, error) {
	l, _, err := readCaseList(path)
	return l, err
}

func readCaseList(path string) (cases map[string]listed, counts string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	out := map[string]listed{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if c, ok := strings.CutPrefix(text, countsPrefix); ok {
			counts = c
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.SplitN(text, "\t", 4)
		if len(fields) < 3 {
			return nil, "", fmt.Errorf("%s:%d: want name<TAB>status<TAB>reason[<TAB>note]", path, line)
		}
		l := listed{status: fields[1], reason: fields[2]}
		if len(fields) == 4 {
			l.note = fields[3]
		}
		out[fields[0]] = l
	}
	return out, counts, sc.Err()
}

// oneLineReason is a reason as a list holds it: its words separated by
// single spaces.
func oneLineReason(s string) string { return strings.Join(strings.Fields(s), " ") }

func writeCaseList(path, what, test string, rep *metrics.Report, results map[string]metrics.Result, old map[string]listed) error {
	names := make([]string, 0, len(results))
	for n := range results {
		names = append(names, n)
	}
	random := false
	for n, l := range old {
		if l.status != randomStatus {
			continue
		}
		random = true
		if _, ok := results[n]; !ok {
			names = append(names, n) // passed by chance this time: still listed
		}
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s cases the %s backend does not pass, with the reason.\n", what, rep.Backend)
	fmt.Fprintf(&b, "# Kept exact (status and reason) by the tests in tests/; regenerate with: go test ./tests -run '%s' -update\n", test)
	b.WriteString("# Columns: case, status (random: may fail or pass by chance), reason (from the run), note (by hand: why; kept by -update).\n")
	if !random {
		// Chance cannot move these counts: they are pinned.
		fmt.Fprintf(&b, "%s%s\n", countsPrefix, rep.Summary())
	}
	for _, n := range names {
		r, ran := results[n]
		status, reason := string(r.Status), oneLineReason(r.Reason)
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

// reasonNumber finds the numbers in a reason: an integer, or a decimal
// with a fraction or an exponent.
var reasonNumber = regexp.MustCompile(`[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?`)

// sameReason reports whether a run's reason is the listed one: the same
// words and integers, and every other number within 1e-3 relative of the
// listed one, since the last digits of a computed value may move with the
// order of a sum (the thread count) without a change in behaviour.
func sameReason(listed, got string) bool {
	if listed == got {
		return true
	}
	lt, lnums := splitReason(listed)
	gt, gnums := splitReason(got)
	if len(lnums) != len(gnums) || !slices.Equal(lt, gt) {
		return false
	}
	for i, l := range lnums {
		g := gnums[i]
		if !strings.ContainsAny(l, ".eE") || !strings.ContainsAny(g, ".eE") {
			if l != g {
				return false
			}
			continue
		}
		a, errA := strconv.ParseFloat(l, 64)
		b, errB := strconv.ParseFloat(g, 64)
		if errA != nil || errB != nil || math.Abs(a-b) > 1e-3*math.Max(math.Abs(a), math.Abs(b)) {
			return false
		}
	}
	return true
}

// splitReason returns the text between the numbers of s, and the numbers.
func splitReason(s string) (text, nums []string) {
	last := 0
	for _, m := range reasonNumber.FindAllStringIndex(s, -1) {
		text = append(text, s[last:m[0]])
		nums = append(nums, s[m[0]:m[1]])
		last = m[1]
	}
	return append(text, s[last:]), nums
}

// Reasons agree in their words and integers exactly, in their other
// numbers to 1e-3.
func TestSameReason(t *testing.T) {
	listed := `output "y" (test_data_set_0): 5 of 12 elements differ, worst at [0 3]: got 0.8203125 want 0.81640625`
	for _, c := range []struct {
		got  string
		same bool
	}{
		{listed, true},
		{`output "y" (test_data_set_0): 5 of 12 elements differ, worst at [0 3]: got 0.8203129 want 0.81640625`, true},
		{`output "y" (test_data_set_0): 5 of 12 elements differ, worst at [0 3]: got 0.8213125 want 0.81640625`, false},
		{`output "y" (test_data_set_0): 6 of 12 elements differ, worst at [0 3]: got 0.8203125 want 0.81640625`, false},
		{`output "y" (test_data_set_1): 5 of 12 elements differ, worst at [0 3]: got 0.8203125 want 0.81640625`, false},
		{`output "z" (test_data_set_0): 5 of 12 elements differ, worst at [0 3]: got 0.8203125 want 0.81640625`, false},
		{`output "y" (test_data_set_0): 5 of 12 elements differ, worst at [0 3]: got 0.8203125`, false},
	} {
		if got := sameReason(listed, c.got); got != c.same {
			t.Errorf("sameReason(%q) = %v", c.got, got)
		}
	}
	if !sameReason("relative error 1e-05 > 2", "relative error 1.0000001e-05 > 2") || sameReason("unsupported: Loop", "unsupported: Scan") {
		t.Error("exponents or words")
	}
}
