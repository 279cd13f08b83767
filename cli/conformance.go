package cli

import (
	"context"
	"fmt"
	flag "github.com/spf13/pflag"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/metrics"
)

const conformanceSynopsis = "[--backend B] [--run REGEX] [--json FILE] [--csv FILE] [--threads N] [--backend-opt KEY=VALUE] [-v] DIR..."

// cmdConformance runs ONNX test cases with one backend (layer 0).
func cmdConformance(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("conformance", conformanceSynopsis, stderr)
	backendName := fs.String("backend", "native", "backend to test: "+strings.Join(backend.Known, ", "))
	runExpr := fs.String("run", "", "run only the cases whose name (suite/case, e.g. node/test_abs) matches this regular expression")
	jsonPath := fs.String("json", "", "write the report as JSON to `FILE`")
	csvPath := fs.String("csv", "", "write the report as CSV to `FILE`")
	threads := fs.Int("threads", 0, "worker threads the backend may use (0: all cores)")
	settings := backendOptFlag(fs)
	verbose := fs.Bool("v", false, "print a line for passed cases too")
	dirs, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if len(dirs) == 0 {
		return usageError(fs, stderr, "no DIR given (a test case folder, or a folder of them)")
	}
	if *threads < 0 {
		return usageError(fs, stderr, "--threads must not be negative, got %d", *threads)
	}
	if _, err := backend.Get(*backendName); err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	cases, filter, code := selectCases(fs, dirs, *runExpr, stderr)
	if code >= 0 {
		return code
	}

	if code := checkOutputs(fs, stderr, fileOut("json", *jsonPath), fileOut("csv", *csvPath)); code >= 0 {
		return code
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopSignals := stopOnInterrupt("conformance", "stopping after the current case", cancel, stderr)
	defer stopSignals()

	cfg := metrics.Config{
		Backend: *backendName,
		Options: backend.Options{Threads: *threads, Settings: settings},
		Filter:  filter,
		OnResult: func(r metrics.Result) {
			switch {
			case r.Status == metrics.Failed:
				fmt.Fprintf(stdout, "FAIL %s: %s\n", r.Name, oneLine(r.Reason))
			case r.Status == metrics.Skipped:
				fmt.Fprintf(stdout, "SKIP %s: %s\n", r.Name, oneLine(r.Reason))
			case *verbose:
				fmt.Fprintf(stdout, "PASS %s (%.3fs)\n", r.Name, r.Seconds)
			}
		},
	}
	rep, err := metrics.Run(ctx, cases, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "d500 conformance: %v\n", err)
		return exitUsage
	}

	status := finishReport("conformance", rep, *jsonPath, *csvPath, stderr)
	fmt.Fprintln(stdout, rep.Summary())
	return status
}

// selectCases finds the test cases under dirs and compiles --run: a DIR
// that does not exist or holds no case, a --run that does not compile and
// a --run that matches none of the cases found are usage errors (code 2;
// -1 to go on), so that a typo in a filter is not a run of nothing that
// succeeds.
func selectCases(fs *flag.FlagSet, dirs []string, runExpr string, stderr io.Writer) (cases []metrics.Case, filter *regexp.Regexp, code int) {
	if runExpr != "" {
		re, err := regexp.Compile(runExpr)
		if err != nil {
			return nil, nil, usageError(fs, stderr, "bad --run expression: %v", err)
		}
		filter = re
	}
	cases, err := metrics.FindCases(dirs...)
	if err != nil {
		fmt.Fprintf(stderr, "d500 %s: %v\n", fs.Name(), err)
		return nil, nil, exitUsage
	}
	if filter != nil && !slices.ContainsFunc(cases, func(c metrics.Case) bool { return filter.MatchString(c.Name) }) {
		fmt.Fprintf(stderr, "d500 %s: --run %q matches none of the %d cases in %s (names are suite/case, e.g. %s)\n",
			fs.Name(), runExpr, len(cases), strings.Join(dirs, ", "), cases[0].Name)
		return nil, nil, exitUsage
	}
	return cases, filter, -1
}

// finishReport writes the report's JSON and CSV files — whatever happened
// during the run, so an interrupted run keeps what it measured — says what
// went wrong on stderr, and returns the exit status: exitInterrupted when
// the run was interrupted, else exitFail when a case failed or a file could
// not be written.
func finishReport(command string, rep *metrics.Report, jsonPath, csvPath string, stderr io.Writer) int {
	env := metrics.CurrentEnvironment()
	rep.Environment, rep.Check = &env, command
	status := exitOK
	if jsonPath != "" {
		if err := rep.WriteJSONFile(jsonPath); err != nil {
			fmt.Fprintf(stderr, "d500 %s: %v\n", command, err)
			status = exitFail
		}
	}
	if csvPath != "" {
		if err := rep.WriteCSVFile(csvPath); err != nil {
			fmt.Fprintf(stderr, "d500 %s: %v\n", command, err)
			status = exitFail
		}
	}
	if rep.Failed > 0 {
		status = exitFail
	}
	if rep.Interrupted {
		fmt.Fprintf(stderr, "d500 %s: interrupted; %d cases ran\n", command, len(rep.Tests))
		status = exitInterrupted
	}
	return status
}

// stopOnInterrupt cancels the run on the first SIGINT or SIGTERM, so the
// results measured so far are written (stopping tells the user which: after
// the current case, without the current row, …); a second signal gets the
// default behaviour and ends the process at once. The returned function
// stops listening.
func stopOnInterrupt(command, stopping string, cancel func(), stderr io.Writer) func() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			fmt.Fprintf(stderr, "d500 %s: %v: %s (again to quit at once)\n", command, s, stopping)
			cancel()
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
	}
}
