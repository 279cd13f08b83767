package tickers

import "github.com/deep500/deep500-go/runner"

// TimeToAccuracy records the first evaluation that reaches Target test
// accuracy: the run's time, samples and steps to its quality target, as
// MLPerf measures training (with AccuracyAbort, the run stops there).
type TimeToAccuracy struct {
	Target float64
	// Reached is set by the first evaluation at or above Target, with its
	// figures.
	Reached               bool
	Epoch, Steps, Samples int
	Seconds, TestAccuracy float64
}

// Event implements Ticker.
func (t *TimeToAccuracy) Event(e runner.Event) {
	if !t.Reached && e.Kind == runner.AfterTestSet && e.TestAccuracy >= t.Target {
		t.Reached = true
		t.Epoch, t.Steps, t.Samples, t.Seconds, t.TestAccuracy = e.Epoch, e.Step, e.Samples, e.Seconds, e.TestAccuracy
	}
}
