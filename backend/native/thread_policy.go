package native

import (
	"fmt"
	"slices"
	"time"

	"github.com/deep500/deep500-go/onnx"
)

// An inference of a network built for several threads runs its parallel
// regions either on the worker pool or serially on the calling goroutine
// (par.BeginSerial), whichever the network has measured to be faster, in
// its own recent runs, for the input shapes it is given.
//
// Why measure instead of always splitting: a split pays when the parts'
// work outweighs handing data between the cores, and what that costs is
// not fixed. On a shared virtual machine it changes from minute to minute:
// for stretches of seconds to minutes the host places the two cores of a
// 2-core machine so that a cache line takes 350–540 ns to go from one to
// the other and back instead of 50–130, and then every layer of a small
// network reads half of its input from the other core's cache at three
// times the usual cost: resnet8 at batch 1 ran in 0.36–0.45 ms on two
// threads and 0.28 on one (0.19 on two otherwise). The serial run is as
// fast in those stretches as outside them, so it is the yardstick: the
// policy keeps the latest times of each mode and runs the faster, tries
// the pool again now and then while serial wins (so it notices when the
// stretch is over, or that it never was: see policyProbeFirst), and goes
// back to the serial run as soon as the pool's times rise above it. Some networks are faster on one thread even in
// quiet times (LeNet at batch 1, whose layers are too small to split);
// they find that out too.
//
// A sample counts only when the network's run before it was in the same
// mode: the first run after a switch finds the data in the other core's
// cache and is slower than either mode's own. The results do not depend on the
// mode: a serial run computes the same parts as a parallel one, and the
// parts do not depend on the thread count (TestPresetInferenceSameBitsOnAnyThreads).

// ThreadsSetting is the key of backend.Options.Settings that chooses how
// an inference on more than one thread uses them: "adaptive" (the
// default) lets each run go serial when the network measured that to be
// faster, "fixed" always uses the pool, as training does.
const ThreadsSetting = "threads"

// threadPolicies holds a network's policies for the last few input
// shapes it ran: a training run's evaluations alternate between full
// batches and a smaller last one, and each keeps what it learned.
type threadPolicies struct {
	entries [4]threadPolicy
	tick    uint64
	// last is the mode of the network's previous run, lastSet whether
	// it had one: where its buffers were last written, whatever the
	// shapes.
	last, lastSet bool
}

// get returns the policy of inputs of signature sig, making one (in place
// of the least recently used) for new shapes.
func (ps *threadPolicies) get(sig uint64) *threadPolicy {
	ps.tick++
	oldest := &ps.entries[0]
	for i := range ps.entries {
		p := &ps.entries[i]
		if p.used != 0 && p.sig == sig {
			p.used = ps.tick
			return p
		}
		if p.used < oldest.used {
			oldest = p
		}
	}
	*oldest = threadPolicy{sig: sig, used: ps.tick, probeEvery: policyProbeFirst}
	return oldest
}

// record notes the time of a run of policy p that completed in the given
// mode; it counts only if the network's run before it was in the same
// mode (see above).
func (ps *threadPolicies) record(p *threadPolicy, serial bool, d time.Duration) {
	if ps.lastSet && ps.last == serial {
		if serial {
			p.serial.add(d)
		} else {
			p.parallel.add(d)
		}
	}
	ps.last, ps.lastSet = serial, true
}

// threadPolicy chooses, run by run, between the pool and a serial run for
// one network's inferences of one input shape (see above).
type threadPolicy struct {
	// sig identifies the input shapes the times are for, used when the
	// policy was last asked (threadPolicies.get; 0: never).
	sig, used uint64
	serial    modeTimes
	parallel  modeTimes
	// probe runs left in probeMode before the policy chooses again.
	probe     int
	probeMode bool
	// sinceProbe counts the runs since the pool was last tried while
	// serial runs won, probeEvery how many go by before the next try.
	sinceProbe, probeEvery int
}

// The pool is tried again (two runs, the first not counted, see above)
// after policyProbeFirst serial runs, then after twice as many each time
// it loses again, up to policyProbeEvery: a serial choice made on a
// moment's hiccup (the other core taken by the host for a few
// milliseconds while the pool was timed) is undone within a few runs,
// and a real slow stretch costs resnet8 about 1% of its time in probes.
const (
	policyProbeFirst = 4
	policyProbeEvery = 64
)

// policySerialTrialMax is the longest parallel run after which the serial
// run is still tried: networks slower than this (ResNet-18 at batch 8) do
// enough arithmetic per byte that the pool always wins, and a serial trial
// would cost them seconds.
const policySerialTrialMax = 10 * time.Millisecond

// policyMargin is how much faster the serial run must be to be chosen:
// when the two are close the pool is kept, as the caller asked for the
// threads.
const policyMargin = 0.92

// modeTimes holds the latest counted run times of one mode.
type modeTimes struct {
	times [3]time.Duration // the latest, the n-th at times[(n-1)%3]
	n     int              // how many were counted
}

func (m *modeTimes) add(d time.Duration) {
	m.times[m.n%len(m.times)] = d
	m.n++
}

// estimate is the median of the times (the middle of 3, the lower of 2).
func (m *modeTimes) estimate() time.Duration {
	var buf [3]time.Duration
	ts := buf[:min(m.n, len(m.times))]
	copy(ts, m.times[:])
	slices.Sort(ts)
	return ts[(len(ts)-1)/2]
}

// choose returns whether the next run runs serially.
func (p *threadPolicy) choose() bool {
	if p.probe > 0 {
		p.probe--
		return p.probeMode
	}
	switch {
	case p.parallel.n == 0:
		return p.startProbe(false)
	case p.serial.n == 0:
		if p.parallel.estimate() > policySerialTrialMax {
			return false
		}
		return p.startProbe(true)
	}
	if !p.serialWins() {
		p.sinceProbe, p.probeEvery = 0, policyProbeFirst
		return false
	}
	if p.sinceProbe++; p.sinceProbe >= p.probeEvery {
		p.sinceProbe, p.probeEvery = 0, min(2*p.probeEvery, policyProbeEvery)
		return p.startProbe(false)
	}
	return true
}

// serialWins reports whether the serial run's times beat the pool's.
func (p *threadPolicy) serialWins() bool {
	if p.serial.n == 0 || p.parallel.n == 0 {
		return false
	}
	return float64(p.serial.estimate()) < policyMargin*float64(p.parallel.estimate())
}

// startProbe begins two runs in a mode whose times are measured afresh
// (the old ones are dropped: they are what the probe is to replace) and
// returns that mode for the first.
func (p *threadPolicy) startProbe(serial bool) bool {
	if serial {
		p.serial = modeTimes{}
	} else {
		p.parallel = modeTimes{}
	}
	p.probe, p.probeMode = 1, serial
	return serial
}

// inputSignature identifies the shapes and types of the values bound to
// the graph's inputs, so that a policy's times are compared only between
// runs of the same size.
func (e *executor) inputSignature() uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) {
		h ^= v
		h *= 1099511628211
	}
	for _, in := range e.inputs {
		t, ok := e.slots[in.slot].(*onnx.Tensor)
		if !ok {
			mix(0xff)
			continue
		}
		mix(uint64(t.Type))
		mix(uint64(len(t.Shape)))
		for _, d := range t.Shape {
			mix(uint64(d))
		}
	}
	return h
}

// adaptiveThreads parses the ThreadsSetting of settings: whether the
// network's inferences may run serially when that is faster.
func adaptiveThreads(settings map[string]string) (bool, error) {
	switch v := settings[ThreadsSetting]; v {
	case "", "adaptive":
		return true, nil
	case "fixed":
		return false, nil
	default:
		return false, fmt.Errorf("native: setting %s=%q: want adaptive or fixed", ThreadsSetting, v)
	}
}
