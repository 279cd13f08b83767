package tickers

import (
	"runtime"
	"slices"
	"time"

	"github.com/deep500/deep500-go/runner"
)

// StepCost measures what the training steps cost the process: the wall
// time from one step's end to the next, and the heap allocations of the
// steps together with the loop's own work around them (the batch, the CSV
// row, the running statistics), evaluations left out. Counting starts at
// the end of step Warmup+1: the warm-up's steps, where buffers are made
// and plans compiled, and the one that ends where counting starts are
// left out.
//
// Allocations are read with runtime.ReadMemStats, exact but stopping the
// world for some microseconds: at the end of the warm-up, around each
// evaluation and at the end, never per step.
type StepCost struct {
	Warmup int

	last    time.Time
	timing  bool
	millis  []float64
	counted bool   // past the warm-up: allocations are being counted
	from    uint64 // Mallocs when counting (re)started
	allocs  uint64 // allocations counted so far
	steps   int    // steps counted so far
}

// NewStepCost returns a StepCost that counts from the end of step
// warmup+1.
func NewStepCost(warmup int) *StepCost { return &StepCost{Warmup: warmup} }

func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

// Event implements runner.Listener.
func (s *StepCost) Event(e runner.Event) {
	switch e.Kind {
	case runner.AfterStep:
		now := time.Now()
		if s.timing && e.Step > s.Warmup+1 {
			s.millis = append(s.millis, float64(now.Sub(s.last))/float64(time.Millisecond))
		}
		s.last, s.timing = now, true
		if e.Step == s.Warmup+1 && !s.counted {
			s.counted, s.from = true, mallocs()
		} else if s.counted {
			s.steps++
		}
	case runner.BeforeTestSet:
		s.timing = false // an evaluation between two steps is not a step's cost
		if s.counted {
			s.allocs += mallocs() - s.from
		}
	case runner.AfterTestSet:
		if s.counted {
			s.from = mallocs()
		}
	case runner.AfterTraining:
		if s.counted {
			s.allocs += mallocs() - s.from
			s.counted = false
		}
	}
}

// Medians returns the median milliseconds per step and the mean heap
// allocations per step over the steps counted; ok is false when none was
// (a run of Warmup+1 steps or fewer, or one not yet ended).
func (s *StepCost) Medians() (millis, allocs float64, ok bool) {
	if len(s.millis) == 0 || s.steps == 0 || s.counted {
		return 0, 0, false
	}
	w := slices.Clone(s.millis)
	slices.Sort(w)
	n := len(w)
	millis = w[n/2]
	if n%2 == 0 {
		millis = (w[n/2-1] + w[n/2]) / 2
	}
	return millis, float64(s.allocs) / float64(s.steps), true
}
