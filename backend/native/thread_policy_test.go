package native

import (
	"slices"
	"testing"
	"time"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
)

// policyRun drives a policy through runs whose times are given by cost
// (per mode), returning the modes it chose.
func policyRun(ps *threadPolicies, sig uint64, runs int, cost func(serial, switched bool) time.Duration) []bool {
	var modes []bool
	for range runs {
		p := ps.get(sig)
		serial := p.choose()
		switched := len(modes) > 0 && modes[len(modes)-1] != serial
		ps.record(p, serial, cost(serial, switched))
		modes = append(modes, serial)
	}
	return modes
}

func countSerial(modes []bool) int {
	n := 0
	for _, s := range modes {
		if s {
			n++
		}
	}
	return n
}

// times returns a cost function: the pool's and the serial run's times,
// and a run right after a switch twice as slow (the data is in the other
// core's cache), which the policy must not count.
func times(parallel, serial time.Duration) func(bool, bool) time.Duration {
	return func(s, switched bool) time.Duration {
		d := parallel
		if s {
			d = serial
		}
		if switched {
			d *= 2
		}
		return d
	}
}

func TestThreadPolicyLearnsBothModesThenKeepsTheFaster(t *testing.T) {
	var p threadPolicies
	// Quiet: the pool is faster. Two pool runs, two serial, then the pool.
	modes := policyRun(&p, 1, 200, times(190*time.Microsecond, 280*time.Microsecond))
	want := []bool{false, false, true, true}
	for i, w := range want {
		if modes[i] != w {
			t.Fatalf("run %d serial=%v, want the learning runs %v (got %v)", i, modes[i], want, modes[:6])
		}
	}
	if n := countSerial(modes[4:]); n != 0 {
		t.Fatalf("%d serial runs after learning that the pool is faster, want 0", n)
	}

	// A slow stretch: the pool now takes 0.40 ms. The policy goes serial
	// within a few runs and tries the pool again only now and then.
	modes = policyRun(&p, 1, 640, times(400*time.Microsecond, 280*time.Microsecond))
	first := -1
	for i, s := range modes {
		if s {
			first = i
			break
		}
	}
	if first < 0 || first > 3 {
		t.Fatalf("first serial run after the pool slowed down: %d, want within 3 runs", first)
	}
	if pool, most := len(modes)-first-countSerial(modes[first:]), probeRuns(640); pool > most {
		t.Fatalf("%d pool runs in 640 slow ones after going serial, want only the probes (%d)", pool, most)
	}

	// The stretch ends: the next probe finds the pool fast again, and the
	// policy stays with it.
	modes = policyRun(&p, 1, 300, times(190*time.Microsecond, 280*time.Microsecond))
	if n := countSerial(modes[policyProbeEvery+2:]); n != 0 {
		t.Fatalf("%d serial runs after the pool was fast again, want 0 once probed", n)
	}
}

// A network faster on one thread even in quiet times (too little work to
// split) runs serially after learning.
func TestThreadPolicyPrefersSerialWhenFaster(t *testing.T) {
	var p threadPolicies
	modes := policyRun(&p, 7, 130, times(42*time.Microsecond, 27*time.Microsecond))
	if n, want := countSerial(modes[4:]), 126-probeRuns(126); n < want {
		t.Fatalf("%d serial runs of 126 after learning, want all but the probes: %d", n, want)
	}
}

// probeRuns is the most pool runs the probes take in n runs that all
// find the serial run faster: two per probe, after 4, 8, 16, … serial
// runs, then every policyProbeEvery.
func probeRuns(n int) int {
	runs := 0
	for every := policyProbeFirst; n > every; every = min(2*every, policyProbeEvery) {
		n -= every + 2
		runs += 2
	}
	return runs
}

// Close times keep the pool (the margin), a long parallel run is never
// tried serially, and new input shapes start the measurements afresh.
func TestThreadPolicyMarginTrialLimitAndShapes(t *testing.T) {
	var p threadPolicies
	modes := policyRun(&p, 1, 50, times(100*time.Microsecond, 96*time.Microsecond))
	if n := countSerial(modes[4:]); n != 0 {
		t.Fatalf("serial 4%% faster won %d runs, want 0 (margin %v)", n, policyMargin)
	}

	p = threadPolicies{}
	modes = policyRun(&p, 1, 20, times(2*policySerialTrialMax, policySerialTrialMax))
	if n := countSerial(modes); n != 0 {
		t.Fatalf("a %v network ran %d times serially, want never tried", 2*policySerialTrialMax, n)
	}

	// New shapes learn afresh; the last four shapes keep what they
	// learned, the fifth pushes out the least recently used.
	p = threadPolicies{}
	fast := times(42*time.Microsecond, 27*time.Microsecond)
	learning := []bool{false, false, true, true}
	policyRun(&p, 1, 10, fast)
	for sig := uint64(2); sig <= 4; sig++ {
		if modes := policyRun(&p, sig, 4, fast); !slices.Equal(modes, learning) {
			t.Fatalf("shapes %d: the policy chose %v, want the learning runs %v", sig, modes, learning)
		}
	}
	if modes := policyRun(&p, 1, 4, fast); countSerial(modes) != 4 {
		t.Fatalf("back to the first shapes the policy chose %v, want serial runs as learned", modes)
	}
	policyRun(&p, 5, 4, fast) // pushes out shapes 2
	if modes := policyRun(&p, 2, 4, fast); !slices.Equal(modes, learning) {
		t.Fatalf("shapes pushed out: the policy chose %v, want the learning runs %v again", modes, learning)
	}
}

// The ThreadsSetting: adaptive by default, fixed turns the policy off, and
// anything else is an error naming the setting.
func TestThreadsSetting(t *testing.T) {
	m, err := models.Preset("mlp", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		value  string
		policy bool
	}{{"", true}, {"adaptive", true}, {"fixed", false}} {
		net, err := New(m, backend.Options{Threads: 2, Settings: map[string]string{ThreadsSetting: c.value}})
		if err != nil {
			t.Fatalf("%s=%q: %v", ThreadsSetting, c.value, err)
		}
		if got := net.(*executor).policy != nil; got != c.policy {
			t.Fatalf("%s=%q: policy %v, want %v", ThreadsSetting, c.value, got, c.policy)
		}
	}
	if net, err := New(m, backend.Options{Threads: 1}); err != nil || net.(*executor).policy != nil {
		t.Fatalf("one thread: policy %v (err %v), want none", net.(*executor).policy != nil, err)
	}
	if _, err := New(m, backend.Options{Threads: 2, Settings: map[string]string{ThreadsSetting: "fast"}}); err == nil {
		t.Fatalf("%s=fast accepted", ThreadsSetting)
	}
}

// A hiccup while the pool is timed (the other core taken for a moment)
// makes the serial run win the learning; the first probe undoes it.
func TestThreadPolicyUndoesAHiccup(t *testing.T) {
	var p threadPolicies
	run := 0
	modes := policyRun(&p, 1, 40, func(serial, switched bool) time.Duration {
		run++
		d := times(190*time.Microsecond, 280*time.Microsecond)(serial, switched)
		if run == 2 {
			d = 400 * time.Microsecond // the pool's learning run
		}
		return d
	})
	if n := countSerial(modes); n > 2+policyProbeFirst+1 {
		t.Fatalf("%d serial runs (%v), want the learning ones and at most %d more before the probe", n, modes, policyProbeFirst+1)
	}
	if n := countSerial(modes[12:]); n != 0 {
		t.Fatalf("serial runs after the probe: %v", modes)
	}
}
