package metrics

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// Report holds the results of a conformance run. Its JSON form is the one
// the command-line contract names:
//
//	{"backend":B, "passed":N, "failed":N, "skipped":N,
//	 "tests":[{"name", "status", "reason", "max_abs_error", "max_rel_error", "seconds"}]}
type Report struct {
	// Check names what the report checked, "conformance" or "gradcheck",
	// when the writer sets it.
	Check   string   `json:"check,omitempty"`
	Backend string   `json:"backend"`
	Passed  int      `json:"passed"`
	Failed  int      `json:"failed"`
	Skipped int      `json:"skipped"`
	Tests   []Result `json:"tests"`
	// Interrupted is set when the run stopped before its last case; the
	// results are those of the cases that ran.
	Interrupted bool `json:"interrupted"`
	// Environment is the machine and build the cases ran on, set by the
	// caller that writes the report (nil: left out).
	Environment *Environment `json:"environment,omitempty"`
}

// NewReport returns an empty report for a backend.
func NewReport(backendName string) *Report {
	return &Report{Backend: backendName, Tests: []Result{}}
}

// Add appends a result and counts it.
func (r *Report) Add(res Result) {
	switch res.Status {
	case Passed:
		r.Passed++
	case Skipped:
		r.Skipped++
	default:
		// Anything but passed or skipped is a failure, so a result with a
		// missing status cannot be counted as a success.
		res.Status = Failed
		r.Failed++
	}
	r.Tests = append(r.Tests, res)
}

// Summary is the closing line of the contract: "N passed, N failed, N skipped".
func (r *Report) Summary() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", r.Passed, r.Failed, r.Skipped)
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	out := *r
	out.Tests = make([]Result, len(r.Tests))
	for i, t := range r.Tests {
		out.Tests[i] = finite(t)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(&out)
}

// finite replaces non-finite numbers, which JSON cannot hold, by the
// largest float64 of the same sign (or 0 for NaN); the comparison keeps
// them out of the maxima already, this is only a safety net.
func finite(t Result) Result {
	fix := func(v float64) float64 {
		switch {
		case math.IsNaN(v):
			return 0
		case math.IsInf(v, 1):
			return math.MaxFloat64
		case math.IsInf(v, -1):
			return -math.MaxFloat64
		}
		return v
	}
	t.MaxAbsError, t.MaxRelError, t.Seconds = fix(t.MaxAbsError), fix(t.MaxRelError), fix(t.Seconds)
	return t
}

// CSVHeader is the first row WriteCSV writes: the JSON fields of a Result.
var CSVHeader = []string{"name", "status", "reason", "max_abs_error", "max_rel_error", "seconds"}

// WriteCSV writes one row per case under CSVHeader.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, t := range r.Tests {
		t = finite(t)
		row := []string{t.Name, string(t.Status), t.Reason, f(t.MaxAbsError), f(t.MaxRelError), f(t.Seconds)}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSONFile writes the report as JSON to path; see WriteFile.
func (r *Report) WriteJSONFile(path string) error { return WriteFile(path, r.WriteJSON) }

// WriteCSVFile writes the report as CSV to path; see WriteFile.
func (r *Report) WriteCSVFile(path string) error { return WriteFile(path, r.WriteCSV) }

// WriteFile writes a file through write, creating its folder if needed.
// It writes a temporary file beside path and renames it, so path holds
// either the previous complete file or the new complete one, never half a
// report.
func WriteFile(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	werr := write(tmp)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}
