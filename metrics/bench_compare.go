package metrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// What d500 bench-compare reads and writes: two timing reports of the
// same model(s), `d500 run --bench --json` or `d500 bench --json`, and for
// each measurement both hold, whether the two differ (CompareTimings).

// TimingReport is a timing report read back for comparison.
type TimingReport struct {
	Path string
	// Kind is "run" (d500 run --bench --json) or "bench" (d500 bench
	// --json).
	Kind string
	// Backend is the backend measured (run: --backend; bench: --backend),
	// Model the model file of a run.
	Backend     string
	Model       string
	Environment *Environment
	// Measurements are the report's latency samples, in the report's
	// order.
	Measurements []TimingMeasurement
}

// TimingMeasurement is one set of timed runs in a report.
type TimingMeasurement struct {
	// Key matches it with the other report's: the backend's role ("the
	// --backend", or a compared backend by name) and, for a bench, the
	// row.
	Key string
	// Label names it for a reader; Backend is the backend timed.
	Label   string
	Backend string
	Latency Quantiles
	// Missing says why it has no samples to test (skipped, failed, or
	// written by a d500 that kept none), "" when it has.
	Missing string
}

// ErrNotTimingReport is returned (wrapped) by ReadTimingReport for a
// JSON file that is neither kind of timing report.
var ErrNotTimingReport = errors.New("not a timing report of d500 run --bench --json or d500 bench --json")

// ReadTimingReport reads a timing report. A file that cannot be read, is
// not JSON or is no timing report is an error naming the file.
func ReadTimingReport(path string) (TimingReport, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return TimingReport{}, err
	}
	var raw struct {
		Backend     string          `json:"backend"`
		Model       string          `json:"model"`
		Latency     *LatencyMS      `json:"latency_ms"`
		Iterations  int             `json:"iterations"`
		Compare     json.RawMessage `json:"compare"` // run: the compared backends; bench: a name
		Rows        []BenchRow      `json:"rows"`
		Environment *Environment    `json:"environment"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return TimingReport{}, fmt.Errorf("%s: %w", path, err)
	}
	rep := TimingReport{Path: path, Backend: raw.Backend, Model: raw.Model, Environment: raw.Environment}
	switch {
	case raw.Latency != nil:
		rep.Kind = "run"
		rep.Measurements = append(rep.Measurements, runMeasurement("backend", raw.Backend, "", *raw.Latency, raw.Iterations))
		var compared []struct {
			Backend    string    `json:"backend"`
			Iterations int       `json:"iterations"`
			Latency    LatencyMS `json:"latency_ms"`
			Skipped    string    `json:"skipped"`
		}
		if len(raw.Compare) > 0 && !bytes.Equal(raw.Compare, []byte("null")) {
			if err := json.Unmarshal(raw.Compare, &compared); err != nil {
				return TimingReport{}, fmt.Errorf("%s: compare: %w", path, err)
			}
		}
		for _, c := range compared {
			m := runMeasurement("compare "+c.Backend, c.Backend, c.Skipped, c.Latency, c.Iterations)
			m.Label = c.Backend + " (--compare)"
			rep.Measurements = append(rep.Measurements, m)
		}
	case raw.Rows != nil:
		rep.Kind = "bench"
		var other string
		if len(raw.Compare) > 0 {
			_ = json.Unmarshal(raw.Compare, &other) // absent or empty: no compared backend
		}
		for _, r := range raw.Rows {
			row := fmt.Sprintf("%s batch %d threads %d", r.Model, r.Batch, r.Threads)
			why := r.Skipped
			if r.Error != "" {
				why = "error: " + r.Error
			}
			rep.Measurements = append(rep.Measurements, benchMeasurement(row, "backend", raw.Backend, r.Backend, why))
			if other != "" {
				rep.Measurements = append(rep.Measurements, benchMeasurement(row, "compare", other, r.Compare, why))
			}
		}
	default:
		return TimingReport{}, fmt.Errorf("%s: %w", path, ErrNotTimingReport)
	}
	return rep, nil
}

// runMeasurement is a measurement of a run report.
func runMeasurement(key, backend, skipped string, l LatencyMS, runs int) TimingMeasurement {
	m := TimingMeasurement{Key: key, Label: backend, Backend: backend,
		Latency: Quantiles{Min: l.Min, Median: l.Median, P90: l.P90, Max: l.Max, MedianCI95: l.MedianCI95, CV: l.CV, Samples: l.Samples}}
	switch {
	case skipped != "":
		m.Missing = "skipped: " + skipped
	case len(l.Samples) == 0 && runs > 0:
		m.Missing = "no per-run samples (samples_ms): written by an older d500"
	case len(l.Samples) == 0:
		m.Missing = "not timed"
	}
	return m
}

// benchMeasurement is one side of a bench report's row.
func benchMeasurement(row, role, backend string, q *Quantiles, why string) TimingMeasurement {
	m := TimingMeasurement{Key: row + " " + role, Label: row + ", " + backend, Backend: backend}
	switch {
	case q == nil && why != "":
		m.Missing = why
	case q == nil:
		m.Missing = "not timed"
	case len(q.Samples) == 0:
		m.Latency = *q
		m.Missing = "no per-run samples (samples_ms): written by an older d500"
	default:
		m.Latency = *q
	}
	return m
}

// MeasurementComparison is one measurement compared between reports A
// and B.
type MeasurementComparison struct {
	Name string        `json:"name"`
	A    SampleSummary `json:"a"`
	B    SampleSummary `json:"b"`
	// Ratio is B's median over A's, RatioCI95 its 95% bootstrap interval;
	// U and P are the Mann-Whitney test's (TimingComparison).
	Ratio       float64    `json:"ratio_b_over_a"`
	RatioCI95   [2]float64 `json:"ratio_ci95"`
	U           float64    `json:"mann_whitney_u"`
	P           float64    `json:"p_value"`
	Significant bool       `json:"significant"`
	// BelowThreshold: the test rejects, but the difference is within the
	// threshold.
	BelowThreshold bool   `json:"below_threshold,omitempty"`
	Verdict        string `json:"verdict"`
}

// SampleSummary is one side of a comparison.
type SampleSummary struct {
	Backend    string     `json:"backend"`
	Runs       int        `json:"runs"`
	MedianMS   float64    `json:"median_ms"`
	MedianCI95 [2]float64 `json:"median_ci95"`
	CV         float64    `json:"cv"`
}

// BenchComparison is d500 bench-compare's result, and its --json.
type BenchComparison struct {
	A    string `json:"a"`
	B    string `json:"b"`
	Kind string `json:"kind"`
	// Model is the model both runs timed (run reports).
	Model string `json:"model,omitempty"`
	// Threshold is the smallest relative difference of medians reported
	// as one.
	Threshold   float64                 `json:"threshold"`
	Comparisons []MeasurementComparison `json:"comparisons"`
	// NotCompared says which measurements of either report were left out,
	// and why.
	NotCompared []string `json:"not_compared,omitempty"`
	// EnvironmentDiffers lists what differs between the environments the
	// two were measured in ("threads: 1 vs 2").
	EnvironmentDiffers []string     `json:"environment_differs,omitempty"`
	EnvironmentA       *Environment `json:"environment_a"`
	EnvironmentB       *Environment `json:"environment_b"`
	// Environment is where the comparison was made.
	Environment Environment `json:"environment"`
}

// ErrIncomparable is returned (wrapped, with the reason) by
// CompareTimingReports for reports that cannot be compared.
var ErrIncomparable = errors.New("the reports cannot be compared")

// CompareTimingReports compares every measurement a and b both hold
// (CompareTimings on their samples, with threshold). Reports of different kinds or
// models, or with no measurement in common that both have samples of,
// are an error wrapping ErrIncomparable that says why. The result's
// Environment is left for the caller.
func CompareTimingReports(a, b TimingReport, threshold float64) (BenchComparison, error) {
	if !(threshold >= 0 && threshold < 1) {
		return BenchComparison{}, fmt.Errorf("threshold %v: need a fraction in [0, 1)", threshold)
	}
	incomparable := func(format string, args ...any) (BenchComparison, error) {
		return BenchComparison{}, fmt.Errorf("%w: %s", ErrIncomparable, fmt.Sprintf(format, args...))
	}
	if a.Kind != b.Kind {
		return incomparable("%s is a %s report and %s a %s report", a.Path, kindName(a.Kind), b.Path, kindName(b.Kind))
	}
	if a.Kind == "run" && !sameModel(a.Model, b.Model) {
		return incomparable("they time different models: %s in %s, %s in %s", a.Model, a.Path, b.Model, b.Path)
	}
	out := BenchComparison{A: a.Path, B: b.Path, Kind: a.Kind, Threshold: threshold, EnvironmentA: a.Environment, EnvironmentB: b.Environment,
		EnvironmentDiffers: environmentDiffers(a.Environment, b.Environment), Comparisons: []MeasurementComparison{}}
	if a.Kind == "run" {
		out.Model = a.Model
	}
	inB := map[string]TimingMeasurement{}
	for _, m := range b.Measurements {
		inB[m.Key] = m
	}
	matched := map[string]bool{}
	for _, ma := range a.Measurements {
		mb, ok := inB[ma.Key]
		if !ok {
			out.NotCompared = append(out.NotCompared, fmt.Sprintf("%s: only in A", ma.Label))
			continue
		}
		matched[ma.Key] = true
		label := ma.Label
		if ma.Backend != mb.Backend {
			label = fmt.Sprintf("%s (A) vs %s (B)", ma.Label, mb.Label)
		}
		switch {
		case ma.Missing != "":
			out.NotCompared = append(out.NotCompared, fmt.Sprintf("%s: A %s", label, ma.Missing))
			continue
		case mb.Missing != "":
			out.NotCompared = append(out.NotCompared, fmt.Sprintf("%s: B %s", label, mb.Missing))
			continue
		}
		c, err := CompareTimings(ma.Latency.Samples, mb.Latency.Samples, threshold)
		if err != nil {
			out.NotCompared = append(out.NotCompared, fmt.Sprintf("%s: %v", label, err))
			continue
		}
		out.Comparisons = append(out.Comparisons, MeasurementComparison{
			Name: label, A: summaryOf(ma.Backend, c.A), B: summaryOf(mb.Backend, c.B),
			Ratio: c.Ratio, RatioCI95: c.RatioCI95, U: c.U, P: c.P, Significant: c.Significant, BelowThreshold: c.BelowThreshold,
			Verdict: c.Verdict("A", "B"),
		})
	}
	for _, mb := range b.Measurements {
		if !matched[mb.Key] {
			out.NotCompared = append(out.NotCompared, fmt.Sprintf("%s: only in B", mb.Label))
		}
	}
	if len(out.Comparisons) == 0 {
		why := "they have no measurement in common"
		if len(out.NotCompared) > 0 {
			why = "nothing could be compared: " + strings.Join(out.NotCompared, "; ")
		}
		return incomparable("%s", why)
	}
	return out, nil
}

func summaryOf(backend string, st TimingStats) SampleSummary {
	return SampleSummary{Backend: backend, Runs: st.N, MedianMS: st.Median, MedianCI95: st.MedianCI95, CV: st.CV}
}

func kindName(kind string) string {
	if kind == "run" {
		return "d500 run --bench"
	}
	return "d500 bench"
}

// sameModel reports whether two runs' model paths name the same model:
// the same path, or files with the same bytes (the same preset written
// twice, or one file reached by two paths).
func sameModel(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	da, errA := os.ReadFile(a)
	db, errB := os.ReadFile(b)
	return errA == nil && errB == nil && bytes.Equal(da, db)
}

// environmentDiffers lists the fields of two environments that differ
// and bear on speed or reproduction (not the time or the host's name),
// as "name: A vs B".
func environmentDiffers(a, b *Environment) []string {
	if a == nil || b == nil {
		if a != b {
			return []string{"environment: only one report records it"}
		}
		return nil
	}
	var out []string
	add := func(name string, va, vb any) {
		sa, sb := fmt.Sprint(va), fmt.Sprint(vb)
		if sa != sb {
			out = append(out, fmt.Sprintf("%s: %s vs %s", name, sa, sb))
		}
	}
	add("cpu", a.CPU, b.CPU)
	add("cpu_features", strings.Join(a.CPUFeatures, " "), strings.Join(b.CPUFeatures, " "))
	add("cores", a.Cores, b.Cores)
	add("gomaxprocs", a.GOMAXPROCS, b.GOMAXPROCS)
	add("threads", a.Threads, b.Threads)
	add("memory_bytes", a.MemoryBytes, b.MemoryBytes)
	add("os", a.GOOS+" "+a.OS+" "+a.Kernel, b.GOOS+" "+b.OS+" "+b.Kernel)
	add("go_version", a.GoVersion, b.GoVersion)
	add("build_tags", a.BuildTags, b.BuildTags)
	add("commit", commitState(a), commitState(b))
	for _, name := range unionKeys(a.Backends, b.Backends) {
		add("backend "+name, orElse(a.Backends[name], "none"), orElse(b.Backends[name], "none"))
	}
	return out
}

func commitState(e *Environment) string {
	c := orElse(e.Commit, "unknown")
	if e.Modified {
		c += "+modified"
	}
	return c
}

// unionKeys are the keys of a and b, sorted, each once.
func unionKeys(a, b map[string]string) []string {
	var keys []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

func orElse(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
