package metrics

// BenchRow is one model, batch size and thread count of `d500 bench`:
// the backend's and the compared backend's latencies, timed interleaved,
// their ratio, and the backend's heap allocations per inference.
type BenchRow struct {
	Model   string `json:"model"`
	Batch   int    `json:"batch"`
	Threads int    `json:"threads"`
	// Runs is the number of timed runs of each backend (fewer than --runs
	// when --budget cut them).
	Runs    int        `json:"runs"`
	Backend *Quantiles `json:"backend_ms,omitempty"`
	Compare *Quantiles `json:"compare_ms,omitempty"`
	// Ratio is the backend's median over the compared one's: above 1, the
	// backend is slower.
	Ratio       float64      `json:"ratio,omitempty"`
	Allocations *Allocations `json:"allocations,omitempty"`
	// CoreRoundTripNs is the round trip of a cache line between two
	// cores measured just before the row's timed runs
	// (CoreRoundTrip), 0 where it cannot be measured: on a
	// virtual machine it changes with the host's placement of the cores,
	// and the latency of small networks on several threads with it.
	CoreRoundTripNs float64 `json:"core_round_trip_ns,omitempty"`
	// Passes is the number of passes over the table the row's runs were
	// taken in; PassRatios the ratio of each pass's runs alone and
	// PassCoreRoundTripNs the core round trip before each (the row's
	// figures above are those of all the runs, and the median round trip).
	Passes              int       `json:"passes,omitempty"`
	PassRatios          []float64 `json:"pass_ratios,omitempty"`
	PassCoreRoundTripNs []float64 `json:"pass_core_round_trip_ns,omitempty"`
	// MaxAbsError and MaxRelError are how far the compared backend's
	// outputs are from the backend's; Mismatch says what differs beyond
	// CrossBackendTolerance scaled to the output (ScaledTo), if anything.
	MaxAbsError float64 `json:"max_abs_error"`
	MaxRelError float64 `json:"max_rel_error"`
	Mismatch    string  `json:"mismatch,omitempty"`
	// Skipped says why a backend did not run the model (it lacks an
	// operator, or could not start); Error why the row failed otherwise.
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
}

// BenchReport is `d500 bench --json`, which the HTML report reads back.
type BenchReport struct {
	Environment Environment `json:"environment"`
	Backend     string      `json:"backend"`
	Compare     string      `json:"compare,omitempty"`
	Warmup      int         `json:"warmup"`
	AllocRuns   int         `json:"alloc_runs"`
	// Passes is the number of times the table was measured over.
	Passes int        `json:"passes"`
	Rows   []BenchRow `json:"rows"`
	// Interrupted is set when the run was stopped before its last row; the
	// rows are those measured until then.
	Interrupted bool `json:"interrupted"`
}
