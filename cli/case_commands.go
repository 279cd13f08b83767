package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"

	flag "github.com/spf13/pflag"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/metrics"
)

// What the commands that run cases and report on each (conformance,
// gradcheck, difftest) share: their common flags and checks, the line
// printed per case, the interrupt handling and the report files.

// caseFlags are the flags of the commands that run ONNX test cases from
// folders (conformance, gradcheck).
type caseFlags struct {
	backend, run, json, csv *string
	threads                 *int
	verbose                 *bool
}

// addCaseFlags defines the case flags on fs; backendHelp and runHelp
// describe --backend (the known backends follow) and --run.
func addCaseFlags(fs *flag.FlagSet, backendHelp, runHelp string) caseFlags {
	return caseFlags{
		backend: fs.String("backend", "native", backendHelp+": "+strings.Join(backend.Known, ", ")),
		run:     fs.String("run", "", runHelp),
		json:    fs.String("json", "", "write the report as JSON to `FILE`"),
		csv:     fs.String("csv", "", "write the report as CSV to `FILE`"),
		threads: fs.Int("threads", 0, "worker threads the backend may use (0: all cores)"),
		verbose: fs.Bool("v", false, "print a line for passed cases too"),
	}
}

// check makes the usage checks of a case command's arguments: at least one
// DIR, and those of checkBackends. It returns -1 to go on, else the exit
// status.
func (c caseFlags) check(fs *flag.FlagSet, stderr io.Writer, dirs []string) int {
	if len(dirs) == 0 {
		return usageError(fs, stderr, "no DIR given (a test case folder, or a folder of them)")
	}
	return checkBackends(fs, stderr, *c.threads, *c.backend)
}

// checkBackends checks that --threads is not negative and that the named
// backends exist, returning -1 to go on, else the usage error's exit
// status.
func checkBackends(fs *flag.FlagSet, stderr io.Writer, threads int, names ...string) int {
	if threads < 0 {
		return usageError(fs, stderr, "--threads must not be negative, got %d", threads)
	}
	for _, n := range names {
		if _, err := backend.Get(n); err != nil {
			return usageError(fs, stderr, "%v", err)
		}
	}
	return -1
}

// outputs are the report files the case flags ask for, to check before
// the run.
func (c caseFlags) outputs() []output {
	return []output{fileOut("json", *c.json), fileOut("csv", *c.csv)}
}

// files are the report files to write at the end. Called as
// finishReport's argument, once the cases have run, it also gives the
// report its environment with the --threads the cases ran on, which
// finishReport cannot know.
func (c caseFlags) files(rep *metrics.Report) []reportFile {
	env := metrics.NewEnvironment(*c.threads, nil)
	rep.Environment = &env
	return []reportFile{{*c.json, rep.WriteJSONFile}, {*c.csv, rep.WriteCSVFile}}
}

// compileRun compiles --run ("" for none); a bad expression is a usage
// error (code 2; -1 to go on).
func compileRun(fs *flag.FlagSet, stderr io.Writer, expr string) (*regexp.Regexp, int) {
	if expr == "" {
		return nil, -1
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, usageError(fs, stderr, "bad --run expression: %v", err)
	}
	return re, -1
}

// selectCases finds the test cases under dirs and compiles --run: a DIR
// that does not exist or holds no case, a --run that does not compile and
// a --run that matches none of the cases found are usage errors (code 2;
// -1 to go on), so that a typo in a filter is not a run of nothing that
// succeeds.
func selectCases(fs *flag.FlagSet, dirs []string, runExpr string, stderr io.Writer) (cases []metrics.Case, filter *regexp.Regexp, code int) {
	filter, code = compileRun(fs, stderr, runExpr)
	if code >= 0 {
		return nil, nil, code
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

// printResult prints a case's line as it finishes: FAIL or SKIP with the
// reason, and, when verbose, PASS followed by what passed says of it.
func printResult(w io.Writer, r metrics.Result, verbose bool, passed func() string) {
	switch {
	case r.Status == metrics.Failed:
		fmt.Fprintf(w, "FAIL %s: %s\n", r.Name, oneLine(r.Reason))
	case r.Status == metrics.Skipped:
		fmt.Fprintf(w, "SKIP %s: %s\n", r.Name, oneLine(r.Reason))
	case verbose:
		fmt.Fprintf(w, "PASS %s %s\n", r.Name, passed())
	}
}

// resultPrinter is printResult for the commands whose passed cases show
// their time.
func resultPrinter(w io.Writer, verbose bool) func(metrics.Result) {
	return func(r metrics.Result) {
		printResult(w, r, verbose, func() string { return fmt.Sprintf("(%.3fs)", r.Seconds) })
	}
}

// reportFile is a report file asked for on the command line (path "" when
// not) and what writes it.
type reportFile struct {
	path  string
	write func(path string) error
}

// finishReport writes the report's files — whatever happened during the
// run, so an interrupted run keeps what it measured — says what went wrong
// on stderr, and returns the exit status: exitInterrupted when the run was
// interrupted, else exitFail when a case failed or a file could not be
// written.
//
// A report without an environment yet gets this machine's now, with
// GOMAXPROCS threads (caseFlags.files gives one with the --threads).
func finishReport(command string, rep *metrics.Report, stderr io.Writer, files ...reportFile) int {
	if rep.Environment == nil {
		env := metrics.CurrentEnvironment()
		rep.Environment = &env
	}
	rep.Check = command
	status := exitOK
	for _, f := range files {
		if f.path == "" {
			continue
		}
		if err := f.write(f.path); err != nil {
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

// interruptible returns a context that the first SIGINT or SIGTERM
// cancels (see stopOnInterrupt) and the function that releases both.
func interruptible(command, stopping string, stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	stop := stopOnInterrupt(command, stopping, cancel, stderr)
	return ctx, func() {
		stop()
		cancel()
	}
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
