package metrics

import (
	"runtime"
	"testing"
	"time"
)

// On a machine where two threads can be pinned to two cores, the round
// trip is measured, and is a plausible time for a cache line: above a
// nanosecond, below the timeout's share of the rounds; where they cannot,
// it says so rather than report a figure.
func TestCoreRoundTrip(t *testing.T) {
	d, ok := CoreRoundTrip(2000)
	if runtime.GOOS != "linux" || runtime.GOMAXPROCS(0) < 2 || runtime.NumCPU() < 2 {
		if ok {
			t.Fatalf("measured %v where two threads cannot be pinned", d)
		}
		t.Skip("needs two processors and Linux")
	}
	if !ok {
		t.Fatal("could not measure on a machine with two processors")
	}
	if d < time.Nanosecond || d > roundTripTimeout/2000 {
		t.Fatalf("round trip %v", d)
	}
	if _, ok := CoreRoundTrip(0); ok {
		t.Fatal("zero rounds measured")
	}
}
