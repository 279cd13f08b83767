package cli

import (
	"errors"
	"fmt"
	flag "github.com/spf13/pflag"
	"io"
	"os"
	"strings"
	"sync"

	// The backends linked into the tool. A backend registers itself under
	// its name when its package is imported; add later ones here.
	_ "github.com/deep500/deep500-go/backend/gorgonia"
	_ "github.com/deep500/deep500-go/backend/native"
	_ "github.com/deep500/deep500-go/backend/onnxruntime"
)

// Exit statuses of the command-line contract.
const (
	exitOK    = 0 // success
	exitFail  = 1 // failed checks or run errors
	exitUsage = 2 // bad usage
	// exitInterrupted is a run stopped by SIGINT or SIGTERM after its
	// current step, case or row, with what it measured written (128 +
	// SIGINT's number, as a shell reports a Ctrl-C).
	exitInterrupted = 130
)

// A command is one subcommand of d500. run gets the arguments after the
// command's name and returns the exit status.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands lists the subcommands in the order usage shows them, each in its
// own file; a name not listed is an unknown command (usage, exit status 2).
var commands = []command{
	{"bench", "time model presets on a backend and ONNX Runtime, interleaved: medians, ratios, allocations", cmdBench},
	{"bench-compare", "say whether two timing reports (run --bench, bench) differ significantly, and by how much", cmdBenchCompare},
	{"compare-optimizers", "run two optimizers on identical weights and batches; per step and parameter the L2 distance", cmdCompareOptimizers},
	{"conformance", "run ONNX test cases with a backend: passed, failed or skipped per case", cmdConformance},
	{"difftest", "compare two backends on random one-node models of every operator version both support", cmdDifftest},
	{"export-training", "write a model's training graph (loss, gradients, optionally an optimizer's update) in standard ONNX operators", cmdExportTraining},
	{"gradcheck", "check a backend's gradients against central differences on ONNX test cases", cmdGradcheck},
	{"model", "write a model preset (mlp, lenet, resnet8, ...) as an ONNX file", cmdModel},
	{"ops", "list every ONNX operator version and which backends support it", cmdOps},
	{"plot", "draw training CSVs: samples/time vs test accuracy and loss, PNG and SVG", cmdPlot},
	{"recipe", "run an experiment recipe N times: time to accuracy with its interval, acceptance criteria (exit 1 when one is missed)", cmdRecipe},
	{"report", "write one self-contained HTML page from the JSON and CSV results of any runs", cmdReport},
	{"run", "run a model on given inputs, write its outputs, or time it (--bench)", cmdRun},
	{"train", "train a model (ONNX file or preset) on a dataset, with reference or native optimizers", cmdTrain},
}

// Main runs d500 with args (the arguments after the program's name),
// writing to stdout and stderr, and returns the exit status of the
// command-line contract. cmd/d500 is this and nothing else; a program that
// registers operators of its own (native.RegisterKernel) before calling it
// is d500 with those operators built in.
func Main(args []string, stdout, stderr io.Writer) int { return run(args, stdout, stderr) }

// run is the whole tool, the command tree (newRootCommand) run on args, and
// the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	helpOutput = stdout
	if len(args) == 0 {
		fmt.Fprintln(stderr, "d500: no command given")
		newRootCommand(stderr, stderr, new(int)).Usage()
		return exitUsage
	}
	code := exitOK
	root := newRootCommand(stdout, stderr, &code)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		// cobra's own errors: an unknown command, a bad completion request.
		fmt.Fprintf(stderr, "d500: %v\n", err)
		fmt.Fprintln(stderr, `Run "d500 help" for the commands.`)
		return exitUsage
	}
	return code
}

// newFlagSet returns a flag set for a subcommand whose usage message shows
// synopsis and the flags. Its flags are GNU-style (package pflag, as cobra
// uses): --name VALUE or --name=VALUE, and -x for the one-letter ones;
// "-name", the Go flag package's spelling, is read as "--name" too.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	synopses.Store(fs, synopsis)
	// pflag calls Usage only for -h and --help: the help asked for goes
	// to standard output.
	fs.Usage = func() { printUsage(helpOutput, fs) }
	return fs
}

// synopses holds each flag set's synopsis line, and usageDocs the text
// some commands print after their flags, for printUsage.
var synopses, usageDocs sync.Map

// helpOutput is where help that was asked for goes: run's stdout.
var helpOutput io.Writer = os.Stdout

// printUsage writes a subcommand's usage: its synopsis and its flags, each
// with its default once.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	synopsis, _ := synopses.Load(fs)
	fmt.Fprintf(w, "usage: d500 %s %s\n\nflags:\n%s", fs.Name(), synopsis, fs.FlagUsages())
	if doc, ok := usageDocs.Load(fs); ok {
		fmt.Fprint(w, doc)
	}
}

// parseArgs parses flags that may come before, between or after the
// positional arguments (so "d500 conformance DIR --json r.json" works as
// users expect), and returns the positional ones. Everything after "--" is
// positional. code is -1 to go on, or the exit status to return: 0 after
// -h or --help (the usage printed on standard output), exitUsage after a
// bad flag (the error and the usage on standard error).
func parseArgs(fs *flag.FlagSet, args []string) (positional []string, code int) {
	if len(args) == 1 && args[0] == describeArg {
		described.fs = fs // flagsOf holds described's lock
		return nil, exitOK
	}
	if err := fs.Parse(longDashes(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, exitOK
		}
		fmt.Fprintf(fs.Output(), "d500 %s: %v\n", fs.Name(), err)
		printUsage(fs.Output(), fs)
		return nil, exitUsage
	}
	return fs.Args(), -1
}

// longDashes rewrites "-name" and "-name=value" as "--name..." where name
// is one of fs's flags, up to a "--": the single dash the Go flag package
// accepted for every flag, and that one-letter flags (-o, -v) are written
// with, keep working.
func longDashes(fs *flag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' {
			name, _, _ := strings.Cut(a[1:], "=")
			if fs.Lookup(name) != nil {
				a = "-" + a
			}
		}
		out = append(out, a)
	}
	return out
}

// usageError prints a usage error for a subcommand and its usage on
// standard error, and returns exitUsage.
func usageError(fs *flag.FlagSet, stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "d500 %s: %s\n", fs.Name(), fmt.Sprintf(format, args...))
	printUsage(stderr, fs)
	return exitUsage
}

// oneLine flattens a reason for a one-line listing.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
