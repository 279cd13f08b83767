package metrics

import "time"

// CoreRoundTrip measures how long a cache line takes to go from one core
// to another and back: two threads, pinned to the first two processors
// the process may run on, take turns writing one word, rounds times. It
// returns the median over batches of 100 of their mean round trip, and
// false where it cannot pin two threads
// (one processor, GOMAXPROCS 1, or an operating system without
// sched_setaffinity).
//
// Why a benchmark wants it: every parallel region hands data between the
// cores, and on a virtual machine this hand-over is not a constant of the
// processor but of where the host places the virtual cores at the time.
// On the 2-core machines this project is measured on it is 50–100 ns most
// of the time and 350–410 ns for stretches of tens of seconds, and a
// small network's latency on two threads moves with it (ResNet-8 on the
// native backend: 0.19 ms against 0.38–0.40 ms). A ratio measured in such
// a stretch says so in its row.
func CoreRoundTrip(rounds int) (time.Duration, bool) {
	return coreRoundTrip(rounds)
}

// roundTripTimeout bounds a measurement whose partner thread never runs.
const roundTripTimeout = time.Second
