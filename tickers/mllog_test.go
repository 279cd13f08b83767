package tickers

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deep500/deep500-go/runner"
)

// The MLLOG lines of a run: each a JSON object after ":::MLLOG ", the
// keys MLPerf's logs use, run_stop's status saying whether the target was
// reached.
func TestMLLogLines(t *testing.T) {
	for _, c := range []struct {
		acc    float64
		err    error
		status string
	}{{0.9, nil, "success"}, {0.5, nil, "aborted"}, {0.9, errors.New("nan"), "success"}} {
		var buf bytes.Buffer
		clock := time.UnixMilli(1000)
		m := &MLLog{W: &buf, Target: 0.85, Now: func() time.Time { clock = clock.Add(time.Millisecond); return clock }}
		for _, e := range []runner.Event{{Kind: runner.BeforeTraining}, {Kind: runner.BeforeEpoch, Epoch: 1},
			{Kind: runner.AfterTestSet, Epoch: 1, TestAccuracy: c.acc}, {Kind: runner.AfterEpoch, Epoch: 1},
			{Kind: runner.AfterTraining, Epoch: 1, Err: c.err}} {
			m.Event(e)
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		var keys []string
		for i, l := range lines {
			obj, ok := strings.CutPrefix(l, ":::MLLOG ")
			var v struct {
				TimeMS    int64          `json:"time_ms"`
				EventType string         `json:"event_type"`
				Key       string         `json:"key"`
				Value     any            `json:"value"`
				Metadata  map[string]any `json:"metadata"`
			}
			if !ok || json.Unmarshal([]byte(obj), &v) != nil {
				t.Fatalf("line %q", l)
			}
			if v.TimeMS != 1001+int64(i) {
				t.Errorf("line %d time_ms %d", i, v.TimeMS)
			}
			keys = append(keys, v.EventType+" "+v.Key)
			switch v.Key {
			case "eval_accuracy":
				if v.Value != c.acc || v.Metadata["epoch_num"] != 1.0 {
					t.Errorf("eval_accuracy %q", l)
				}
			case "run_stop":
				if v.Metadata["status"] != c.status {
					t.Errorf("accuracy %g: run_stop %q, want status %s", c.acc, l, c.status)
				}
			}
		}
		want := "INTERVAL_START run_start,INTERVAL_START epoch_start,POINT_IN_TIME eval_accuracy,INTERVAL_END epoch_stop,INTERVAL_END run_stop"
		if strings.Join(keys, ",") != want {
			t.Errorf("keys %v", keys)
		}
	}
}
