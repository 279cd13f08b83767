package tickers

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/deep500/deep500-go/runner"
)

// Progress draws a one-line progress bar of the current epoch — steps
// done, rate and estimated time left, and the last loss — redrawn in place
// with a carriage return at most ten times a second. It is meant for a
// terminal: NewProgress returns nil for any other writer (a file, a pipe,
// CI logs), where a bar only adds noise; a nil *Progress ignores events.
type Progress struct {
	W        io.Writer
	Total    int // steps of the whole run (--steps, or epochs × steps per epoch)
	last     time.Time
	start    time.Time
	lastLoss float64
}

// NewProgress returns a progress bar for w when w is a terminal, else nil,
// counting to the run's total steps: the bar is full when the run ends,
// whether it is bounded by epochs or by steps.
func NewProgress(w io.Writer, totalSteps int) *Progress {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &Progress{W: w, Total: totalSteps}
}

// Event implements Ticker.
func (p *Progress) Event(e runner.Event) {
	if p == nil {
		return
	}
	switch e.Kind {
	case runner.BeforeTraining:
		p.start = time.Now()
	case runner.AfterStep:
		p.lastLoss = e.Loss
		if time.Since(p.last) >= 100*time.Millisecond || e.Step == p.Total {
			p.last = time.Now()
			fmt.Fprint(p.W, "\r"+p.line(e.Epoch, e.Step, time.Since(p.start)))
		}
	case runner.AfterTrainingSet, runner.AfterTraining:
		fmt.Fprint(p.W, "\r"+strings.Repeat(" ", 79)+"\r") // clear the bar before other output
	}
}

// line renders the bar for done steps of the run, in epoch, after elapsed
// time.
func (p *Progress) line(epoch, done int, elapsed time.Duration) string {
	const width = 30
	frac := 0.0
	if p.Total > 0 {
		frac = min(1, float64(done)/float64(p.Total))
	}
	filled := int(frac * width)
	rate := float64(done) / max(elapsed.Seconds(), 1e-9)
	eta := "?"
	if rate > 0 && p.Total > 0 {
		eta = (time.Duration(float64(p.Total-done)/rate) * time.Second).Round(time.Second).String()
	}
	return fmt.Sprintf("epoch %d [%s%s] %3.0f%% %d/%d steps, %.1f steps/s, ETA %s, loss %.4f",
		epoch, strings.Repeat("=", filled), strings.Repeat(" ", width-filled), 100*frac, done, p.Total, rate, eta, p.lastLoss)
}
