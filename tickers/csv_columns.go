package tickers

import (
	"encoding/csv"
	"io"

	"github.com/deep500/deep500-go/runner"
)

// Columns adds figures of a caller's own to the rows of a CSV ticker,
// after the columns of CSVHeader (distributed runs add their
// communication figures this way; single-process CSVs stay as they are).
type Columns interface {
	// Names are the extra columns' headers.
	Names() []string
	// Cells returns one cell per name for the row written at e (an
	// AfterStep or AfterTestSet event); "" for a figure not measured.
	Cells(e runner.Event) []string
}

// NewCSVColumns is NewCSV with extra's columns after CSVHeader's.
func NewCSVColumns(w io.Writer, extra Columns) *CSV {
	c := &CSV{w: csv.NewWriter(w), extra: extra}
	c.write(append(append([]string{}, CSVHeader...), extra.Names()...))
	return c
}
