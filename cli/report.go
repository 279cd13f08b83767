package cli

import (
	"fmt"
	"io"

	flag "github.com/spf13/pflag"

	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/metrics/htmlreport"
)

const reportSynopsis = "--out FILE.html [--title TEXT] RESULT..."

// cmdReport writes one self-contained HTML page from result files of any
// runs: conformance and gradcheck JSON, bench JSON, train JSON and train
// CSVs (package htmlreport).
func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("report", reportSynopsis, stderr)
	out := fs.String("out", "", "write the page to `FILE.html`")
	title := fs.String("title", "Deep500-Go results", "the page's title")
	paths, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if code := checkOutAndInputs(fs, stderr, fileOut("out", *out), paths, "no RESULT files given (JSON of conformance, gradcheck, bench or train; train CSVs)"); code >= 0 {
		return code
	}
	in, err := htmlreport.Load(paths...)
	if err != nil {
		return usageError(fs, stderr, "%v", err) // an input that cannot be read
	}
	if err := metrics.WriteFile(*out, func(w io.Writer) error { return htmlreport.Write(w, in, *title) }); err != nil {
		fmt.Fprintf(stderr, "d500 report: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "report written to %s\n", *out)
	return exitOK
}

// checkOutAndInputs is the usage check of the commands that turn the
// files named on the command line into the output out (plot, report): out
// is required and must be writable, and there must be inputs (noInputs
// says which when there are none). It returns -1 to go on, else the exit
// status.
func checkOutAndInputs(fs *flag.FlagSet, stderr io.Writer, out output, inputs []string, noInputs string) int {
	switch {
	case out.path == "":
		return usageError(fs, stderr, "--%s is required", out.flag)
	case len(inputs) == 0:
		return usageError(fs, stderr, "%s", noInputs)
	}
	return checkOutputs(fs, stderr, out)
}
