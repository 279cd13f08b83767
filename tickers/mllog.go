package tickers

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/deep500/deep500-go/runner"
)

// MLLog writes MLPerf-style log lines, one JSON object after ":::MLLOG "
// per line, so that tools reading MLPerf training logs read a run's:
// run_start and run_stop (status "success" when Target was reached, or
// when there is no target and the run ended without an error, else
// "aborted"), epoch_start and epoch_stop, and eval_accuracy after each
// evaluation, each with epoch_num. Err reports the first write error.
type MLLog struct {
	W io.Writer
	// Target is the quality target (0: none).
	Target float64
	// Now gives the wall clock (nil: time.Now).
	Now func() time.Time

	reached bool
	err     error
}

// mllogLine is one line's object, its keys in the order MLPerf's logger
// writes them.
type mllogLine struct {
	Namespace string         `json:"namespace"`
	TimeMS    int64          `json:"time_ms"`
	EventType string         `json:"event_type"`
	Key       string         `json:"key"`
	Value     any            `json:"value"`
	Metadata  map[string]any `json:"metadata"`
}

func (m *MLLog) line(eventType, key string, value any, meta map[string]any) {
	if m.err != nil {
		return
	}
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	if meta == nil {
		meta = map[string]any{}
	}
	meta["file"], meta["lineno"] = "d500", 0
	data, err := json.Marshal(mllogLine{TimeMS: now().UnixMilli(), EventType: eventType, Key: key, Value: value, Metadata: meta})
	if err == nil {
		_, err = fmt.Fprintf(m.W, ":::MLLOG %s\n", data)
	}
	m.err = err
}

// Event implements Ticker.
func (m *MLLog) Event(e runner.Event) {
	epoch := map[string]any{"epoch_num": e.Epoch}
	switch e.Kind {
	case runner.BeforeTraining:
		m.line("INTERVAL_START", "run_start", nil, nil)
	case runner.BeforeEpoch:
		m.line("INTERVAL_START", "epoch_start", nil, epoch)
	case runner.AfterEpoch:
		m.line("INTERVAL_END", "epoch_stop", nil, epoch)
	case runner.AfterTestSet:
		m.line("POINT_IN_TIME", "eval_accuracy", e.TestAccuracy, epoch)
		if m.Target > 0 && e.TestAccuracy >= m.Target {
			m.reached = true
		}
	case runner.AfterTraining:
		status := "aborted"
		if m.Target > 0 && m.reached || m.Target <= 0 && e.Err == nil {
			status = "success"
		}
		m.line("INTERVAL_END", "run_stop", nil, map[string]any{"status": status, "epoch_num": e.Epoch})
	}
}

// Err is the first error writing the log.
func (m *MLLog) Err() error { return m.err }
