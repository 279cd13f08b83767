package plot

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Figure describes one of the figures WriteFigures draws.
type Figure struct {
	File   string // base file name, without extension
	Title  string
	XLabel string
	YLabel string
	x, y   func(Row) float64
	keep   func(Row) bool // the rows the curve is drawn from
	acc    bool           // the y axis is an accuracy in [0,1]
}

func samples(r Row) float64 { return r.Samples }
func seconds(r Row) float64 { return r.Seconds }
func loss(r Row) float64    { return r.Loss }
func testAcc(r Row) float64 { return r.TestAccuracy }

// Figures are the four figures WriteFigures draws, in order.
var Figures = []Figure{
	{File: "samples_test_accuracy", Title: "Test accuracy by training samples",
		XLabel: "training samples seen", YLabel: "test accuracy (fraction)",
		x: samples, y: testAcc, keep: Row.IsEvaluation, acc: true},
	{File: "time_test_accuracy", Title: "Test accuracy by training time",
		XLabel: "wall-clock time (s)", YLabel: "test accuracy (fraction)",
		x: seconds, y: testAcc, keep: Row.IsEvaluation, acc: true},
	{File: "samples_loss", Title: "Training loss by training samples",
		XLabel: "training samples seen", YLabel: "training loss",
		x: samples, y: loss, keep: Row.IsStep},
	{File: "time_loss", Title: "Training loss by training time",
		XLabel: "wall-clock time (s)", YLabel: "training loss",
		x: seconds, y: loss, keep: Row.IsStep},
}

// Size of the figures.
var (
	Width  = 16 * vg.Centimeter
	Height = 10 * vg.Centimeter
)

// points returns the curve of run in figure f: the kept rows where both x
// and y were measured, in file order.
func (f Figure) points(run Run) plotter.XYs {
	var xys plotter.XYs
	for _, r := range run.Rows {
		if !f.keep(r) {
			continue
		}
		x, y := f.x(r), f.y(r)
		if Has(x) && Has(y) {
			xys = append(xys, plotter.XY{X: x, Y: y})
		}
	}
	return xys
}

// Plot draws figure f with every run overlaid. A run without points for
// this figure is named in the legend as "(no data)".
func (f Figure) Plot(runs []Run) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = f.Title
	p.X.Label.Text = f.XLabel
	p.Y.Label.Text = f.YLabel
	p.Add(plotter.NewGrid())
	p.Legend.Top = !f.acc // accuracy rises, loss falls: keep the legend off the curves' ends
	p.X.Tick.Marker = plainTicks{}
	p.Y.Tick.Marker = plainTicks{}
	p.X.Min = 0                         // samples and seconds count from the start of training
	lo, hi := math.Inf(1), math.Inf(-1) // the accuracies drawn
	names := legendNames(runs)
	for i, run := range runs {
		xys := f.points(run)
		for _, xy := range xys {
			lo, hi = min(lo, xy.Y), max(hi, xy.Y)
		}
		if len(xys) == 0 {
			p.Legend.Add(names[i] + " (no data)")
			continue
		}
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", run.Path, f.File, err)
		}
		c := plotutil.Color(i)
		line.Color = c
		line.Width = vg.Points(1.5)
		line.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
		pts.Color = c
		pts.Shape = plotutil.Shape(i)
		pts.Radius = vg.Points(2)
		if len(xys) > 50 {
			// Dense curves (one point per step) read better as lines.
			p.Add(line)
			p.Legend.Add(names[i], line)
		} else {
			p.Add(line, pts)
			p.Legend.Add(names[i], line, pts)
		}
	}
	if f.acc {
		p.Y.Min, p.Y.Max = accuracyAxis(lo, hi)
	}
	return p, nil
}

// accuracyAxis is the range of an accuracy axis for accuracies from lo to
// hi: fitted to them with a margin of a tenth of their spread (two points
// at least), within [0, 1], so that curves between 0.85 and 0.9 are not
// squashed into a twentieth of the figure; [0, 1] when there are none.
func accuracyAxis(lo, hi float64) (float64, float64) {
	if lo > hi {
		return 0, 1
	}
	pad := max(0.02, (hi-lo)/10)
	return max(0, lo-pad), min(1, hi+pad)
}

// legendNames names each run by its Name, falling back to its Path when
// two runs share a base name.
func legendNames(runs []Run) []string {
	count := map[string]int{}
	for _, r := range runs {
		count[r.Name]++
	}
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.Name
		if count[r.Name] > 1 && r.Path != "" {
			names[i] = r.Path
		}
	}
	return names
}

// WriteFigures draws the four Figures of runs into dir (created if
// needed), each as FILE.png and FILE.svg, and returns the paths written.
func WriteFigures(dir string, runs []Run) ([]string, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("plot: no runs to draw")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, f := range Figures {
		p, err := f.Plot(runs)
		if err != nil {
			return written, err
		}
		for _, ext := range []string{".png", ".svg"} {
			path := filepath.Join(dir, f.File+ext)
			if err := p.Save(Width, Height, path); err != nil {
				return written, fmt.Errorf("%s: %w", path, err)
			}
			written = append(written, path)
		}
	}
	return written, nil
}

// SVG draws figure f of runs as an SVG document of the figures' size, for
// pages that inline their figures (the HTML report).
func (f Figure) SVG(runs []Run) ([]byte, error) {
	p, err := f.Plot(runs)
	if err != nil {
		return nil, err
	}
	w, err := p.WriterTo(Width, Height, "svg")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteFiles reads the training CSVs at paths and draws them into dir, as
// WriteFigures does.
func WriteFiles(dir string, paths ...string) ([]string, error) {
	runs := make([]Run, 0, len(paths))
	for _, path := range paths {
		run, err := ReadFile(path)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return WriteFigures(dir, runs)
}

// plainTicks are gonum's default ticks labelled without padding zeros
// ("25000", not "25000.00").
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', 6, 64)
		}
	}
	return ticks
}
