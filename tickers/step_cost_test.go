package tickers

import (
	"testing"
	"time"

	"github.com/deep500/deep500-go/runner"
)

var sink [][]byte

// StepCost counts the allocations between the warm-up's end and the run's,
// evaluations left out, and times steps from one end to the next.
func TestStepCostLeavesOutWarmupAndEvaluations(t *testing.T) {
	s := NewStepCost(1)
	s.Event(runner.Event{Kind: runner.BeforeTraining})
	for step := 1; step <= 6; step++ {
		for range 10 {
			sink = append(sink, make([]byte, 64)) // ten allocations per step
		}
		time.Sleep(time.Millisecond)
		s.Event(runner.Event{Kind: runner.AfterStep, Step: step})
		if step == 4 {
			s.Event(runner.Event{Kind: runner.BeforeTestSet})
			for range 1000 {
				sink = append(sink, make([]byte, 64))
			}
			s.Event(runner.Event{Kind: runner.AfterTestSet})
		}
	}
	sink = nil
	s.Event(runner.Event{Kind: runner.AfterTraining})
	ms, allocs, ok := s.Medians()
	if !ok {
		t.Fatal("no step measured")
	}
	// Timed: steps 3, 4 and 6 (2 starts at the warm-up's end, 5 after the
	// evaluation). Counted: steps 3 to 6.
	if len(s.millis) != 3 || s.steps != 4 {
		t.Errorf("%d steps timed and %d counted, want 3 and 4", len(s.millis), s.steps)
	}
	// Ten per step, plus the slice's growth now and then.
	if allocs < 10 || allocs > 12 {
		t.Errorf("%v allocations per step, want 10 to 12", allocs)
	}
	if ms < 1 || ms > 200 {
		t.Errorf("median %v ms per step", ms)
	}
}
