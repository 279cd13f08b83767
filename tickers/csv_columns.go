package tickers

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

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

// ContinueCSV writes prior, the CSV of a run so far (as a ticker with the
// same columns wrote it), to w and returns the ticker that goes on after
// its last row: a resumed run's CSV is then the whole run's. extra may be
// nil. prior must start with the header this ticker would write.
func ContinueCSV(w io.Writer, prior []byte, extra Columns) (*CSV, error) {
	header := append([]string{}, CSVHeader...)
	if extra != nil {
		header = append(header, extra.Names()...)
	}
	first, _, _ := strings.Cut(string(prior), "\n")
	if strings.TrimSuffix(first, "\r") != strings.Join(header, ",") {
		return nil, fmt.Errorf("the CSV so far has the header %q, not %q", first, strings.Join(header, ","))
	}
	if len(prior) > 0 && prior[len(prior)-1] != '\n' {
		return nil, errors.New("the CSV so far ends inside a row")
	}
	if _, err := w.Write(prior); err != nil {
		return nil, err
	}
	return &CSV{w: csv.NewWriter(w), extra: extra}, nil
}
