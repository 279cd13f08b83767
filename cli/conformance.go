package cli

import (
	"fmt"
	"io"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/metrics"
)

const conformanceSynopsis = "[--backend B] [--run REGEX] [--json FILE] [--csv FILE] [--threads N] [--backend-opt KEY=VALUE] [-v] DIR..."

// cmdConformance runs ONNX test cases with one backend (layer 0).
func cmdConformance(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("conformance", conformanceSynopsis, stderr)
	f := addCaseFlags(fs, "backend to test", "run only the cases whose name (suite/case, e.g. node/test_abs) matches this regular expression")
	settings := backendOptFlag(fs)
	dirs, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if code := f.check(fs, stderr, dirs); code >= 0 {
		return code
	}
	cases, filter, code := selectCases(fs, dirs, *f.run, stderr)
	if code >= 0 {
		return code
	}

	if code := checkOutputs(fs, stderr, f.outputs()...); code >= 0 {
		return code
	}
	ctx, release := interruptible("conformance", "stopping after the current case", stderr)
	defer release()

	cfg := metrics.Config{
		Backend:  *f.backend,
		Options:  backend.Options{Threads: *f.threads, Settings: settings},
		Filter:   filter,
		OnResult: resultPrinter(stdout, *f.verbose),
	}
	rep, err := metrics.Run(ctx, cases, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "d500 conformance: %v\n", err)
		return exitUsage
	}

	status := finishReport("conformance", rep, stderr, f.files(rep)...)
	fmt.Fprintln(stdout, rep.Summary())
	return status
}
