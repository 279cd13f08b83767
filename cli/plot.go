package cli

import (
	"fmt"
	"io"

	"github.com/deep500/deep500-go/metrics/plot"
)

const plotSynopsis = "--out DIR CSV..."

// cmdPlot draws training CSVs (as d500 train --csv writes them) into four
// figures, PNG and SVG each, with every run overlaid.
func cmdPlot(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("plot", plotSynopsis, stderr)
	out := fs.String("out", "", "write the figures into `DIR` (created if needed)")
	paths, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if code := checkOutAndInputs(fs, stderr, dirOut("out", *out), paths, "no CSV files given"); code >= 0 {
		return code
	}
	runs := make([]plot.Run, 0, len(paths))
	for _, p := range paths {
		run, err := plot.ReadFile(p)
		if err != nil {
			fmt.Fprintf(stderr, "d500 plot: %v\n", err)
			return exitUsage // a CSV named on the command line that cannot be read
		}
		runs = append(runs, run)
	}
	written, err := plot.WriteFigures(*out, runs)
	if err != nil {
		fmt.Fprintf(stderr, "d500 plot: %v\n", err)
		return exitFail
	}
	for _, w := range written {
		fmt.Fprintln(stdout, w)
	}
	fmt.Fprintf(stdout, "%d figures of %d run(s) in %s\n", len(written), len(runs), *out)
	return exitOK
}
