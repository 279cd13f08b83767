package cli

import (
	"fmt"
	"io"

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
	switch {
	case *out == "":
		return usageError(fs, stderr, "--out is required")
	case len(paths) == 0:
		return usageError(fs, stderr, "no RESULT files given (JSON of conformance, gradcheck, bench or train; train CSVs)")
	}
	if code := checkOutputs(fs, stderr, fileOut("out", *out)); code >= 0 {
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
