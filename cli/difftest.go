package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/metrics"
)

const difftestSynopsis = "--backend A --against B [--run REGEX] [--cases N] [--seed S] [--json FILE] [--save-failures DIR] [--threads N] [--backend-opt KEY=VALUE] [-v]"

// difftestDoc follows the flags in `d500 difftest --help`.
const difftestDoc = `
For every operator version both backends support, difftest generates --cases
random one-node models from the operator's schema (types from its type
constraints, attributes and shapes that fit the operator), runs each on both
backends and compares the outputs (rtol 1e-3, atol 1e-5; NaN equal to NaN;
exact for integers, booleans and strings). Operators with random outputs are
compared by type and shape only. A case is skipped when it cannot be
generated or a backend lacks a kernel for its types; a case one backend runs
and the other refuses is a failure. Case names are OP-vVERSION/TYPES/caseK;
the same --seed makes the same cases.
`

// cmdDifftest compares two backends on generated one-node models.
func cmdDifftest(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("difftest", difftestSynopsis, stderr)
	usageDocs.Store(fs, difftestDoc)
	a := fs.String("backend", "native", "backend under test: "+strings.Join(backend.Known, ", "))
	b := fs.String("against", "onnxruntime", "backend to compare with")
	runExpr := fs.String("run", "", "run only the cases whose name (e.g. Conv-v11/float/case0) matches this regular expression")
	cases := fs.Int("cases", 3, "cases per operator version")
	seed := fs.Uint64("seed", 1, "seed of the random cases")
	jsonPath := fs.String("json", "", "write the report as JSON to `FILE`")
	saveDir := fs.String("save-failures", "", "write each failed case to `DIR` as an ONNX test case (the expected outputs are --against's), for d500 conformance to rerun")
	threads := fs.Int("threads", 1, "worker threads each backend may use (0: all cores)")
	settings := backendOptFlag(fs)
	verbose := fs.Bool("v", false, "print a line for passed cases too")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if len(rest) > 0 {
		return usageError(fs, stderr, "unexpected argument %q", rest[0])
	}
	if *cases < 1 {
		return usageError(fs, stderr, "--cases must be at least 1, got %d", *cases)
	}
	if code := checkBackends(fs, stderr, *threads, *a, *b); code >= 0 {
		return code
	}
	filter, code := compileRun(fs, stderr, *runExpr)
	if code >= 0 {
		return code
	}
	if code := checkOutputs(fs, stderr, fileOut("json", *jsonPath)); code >= 0 {
		return code
	}
	if common, err := metrics.DiffSchemas(*a, *b); err != nil || len(common) == 0 {
		// ONNX Runtime without its library answers no for every
		// operator: a run of nothing must not pass.
		fmt.Fprintf(stderr, "d500 difftest: %s and %s have no operator version in common (see d500 ops --backend %s,%s)\n", *a, *b, *a, *b)
		return exitFail
	}
	ctx, release := interruptible("difftest", "stopping after the current case", stderr)
	defer release()

	cfg := metrics.DiffConfig{
		Backend:  *a,
		Against:  *b,
		Options:  backend.Options{Threads: *threads, Settings: settings},
		Cases:    *cases,
		Seed:     *seed,
		Filter:   filter,
		SaveDir:  *saveDir,
		OnResult: resultPrinter(stdout, *verbose),
	}
	rep, err := metrics.RunDiff(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "d500 difftest: %v\n", err)
		return exitUsage
	}
	if filter != nil && len(rep.Tests) == 0 && !rep.Interrupted {
		fmt.Fprintf(stderr, "d500 difftest: --run %q matches none of the cases (names are OP-vVERSION/TYPES/caseK, e.g. Conv-v11/float/case0)\n", *runExpr)
		return exitUsage
	}
	env := metrics.NewEnvironment(*threads, settings)
	rep.Environment = &env
	status := finishReport("difftest", &rep.Report, stderr, reportFile{*jsonPath, rep.WriteJSONFile})
	fmt.Fprintln(stdout, rep.Summary())
	return status
}
