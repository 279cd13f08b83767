package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/deep500/deep500-go/metrics"
)

const benchCompareSynopsis = "[--threshold F] [--json OUT] A.json B.json"

// benchCompareDoc follows the flags in the usage.
const benchCompareDoc = `
A and B are two timing reports of d500 run --bench --json (the same
model), or two of d500 bench --json (compared row by row). For each
measurement both hold: the medians with their 95% bootstrap intervals, the
ratio of medians B/A with its 95% bootstrap interval, and a Mann-Whitney U
test of the per-run samples. A difference is reported when the test
rejects at 5% and the ratio lies beyond --threshold: the samples are the
runs of one process each, and two processes of one build differ by a few
percent, which a test on many runs calls significant.

Exit status: 0 when the reports were compared, whatever the verdict; 1
when they cannot be compared (different models, no measurement in
common, no per-run samples); 2 on bad usage or a file that cannot be read.
`

// defaultCompareThreshold is --threshold's default: 5%, above the up to
// 2.7% by which separate processes of one build differed in their median
// latency on the shared development machine (lenet on one thread,
// resnet8), with a margin.
const defaultCompareThreshold = 0.05

// cmdBenchCompare says whether two timing reports differ significantly.
func cmdBenchCompare(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench-compare", benchCompareSynopsis, stderr)
	usageDocs.Store(fs, benchCompareDoc)
	jsonPath := fs.String("json", "", "write the comparison, with both reports' environments, as JSON to `OUT`")
	threshold := fs.Float64("threshold", defaultCompareThreshold, "the smallest relative difference of the medians reported as one, as a fraction `F` (0: any significant difference)")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if len(rest) != 2 {
		return usageError(fs, stderr, "need two reports, A.json and B.json; got %d arguments", len(rest))
	}
	if !(*threshold >= 0 && *threshold < 1) {
		return usageError(fs, stderr, "--threshold %v: need a fraction in [0, 1)", *threshold)
	}
	if code := checkOutputs(fs, stderr, fileOut("json", *jsonPath)); code >= 0 {
		return code
	}
	var reps [2]metrics.TimingReport
	for i, path := range rest {
		rep, err := metrics.ReadTimingReport(path)
		if err != nil {
			// An unreadable file or one that is no timing report is a
			// wrong argument; the error names the file.
			fmt.Fprintf(stderr, "d500 bench-compare: %v\n", err)
			return exitUsage
		}
		reps[i] = rep
	}
	cmp, err := metrics.CompareTimingReports(reps[0], reps[1], *threshold)
	if err != nil {
		fmt.Fprintf(stderr, "d500 bench-compare: %v\n", err)
		if errors.Is(err, metrics.ErrIncomparable) {
			return exitFail
		}
		return exitUsage
	}
	printBenchComparison(stdout, reps, cmp)
	if *jsonPath != "" {
		cmp.Environment = metrics.CurrentEnvironment()
		err := metrics.WriteFile(*jsonPath, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false) // the verdicts say "p<0.001"
			return enc.Encode(cmp)
		})
		if err != nil {
			fmt.Fprintf(stderr, "d500 bench-compare: %v\n", err)
			return exitFail
		}
	}
	return exitOK
}

// printBenchComparison prints what the reports are, how their
// environments differ, and a verdict per measurement.
func printBenchComparison(w io.Writer, reps [2]metrics.TimingReport, cmp metrics.BenchComparison) {
	for i, r := range reps {
		fmt.Fprintf(w, "%c: %s (%s", 'A'+i, r.Path, r.Backend)
		if r.Model != "" {
			fmt.Fprintf(w, ", %s", r.Model)
		}
		fmt.Fprintln(w, ")")
	}
	if len(cmp.EnvironmentDiffers) > 0 {
		fmt.Fprintf(w, "measured with differences: %s\n", strings.Join(cmp.EnvironmentDiffers, "; "))
	}
	for _, c := range cmp.Comparisons {
		fmt.Fprintf(w, "%s: A median %.4g ms (95%% CI %.4g–%.4g, %d runs), B median %.4g ms (95%% CI %.4g–%.4g, %d runs): %s\n",
			c.Name, c.A.MedianMS, c.A.MedianCI95[0], c.A.MedianCI95[1], c.A.Runs,
			c.B.MedianMS, c.B.MedianCI95[0], c.B.MedianCI95[1], c.B.Runs, c.Verdict)
	}
	for _, n := range cmp.NotCompared {
		fmt.Fprintf(w, "not compared: %s\n", n)
	}
}
