package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

const benchSynopsis = "[--models LIST] [--batch 1,8] [--threads 1,2] [--passes N] [--runs N] [--min-runs N] [--budget D] [--warmup N] [--alloc-runs N] [--backend B] [--compare B] [--optimize=true|false] [--seed N] [--memory-limit SIZE] [--backend-opt KEY=VALUE] [--md FILE] [--json FILE]"

// cmdBench times every chosen model preset at every batch size and thread
// count on a backend and another one in the same process, interleaved.
func cmdBench(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench", benchSynopsis, stderr)
	modelList := fs.String("models", strings.Join(models.PresetNames(), ","), "comma-separated model presets")
	batchList := fs.String("batch", "1,8", "comma-separated batch sizes")
	threadList := fs.String("threads", "1,2", "comma-separated thread counts of both backends")
	runs := fs.Int("runs", 20, "timed runs of each backend per row and pass")
	minRuns := fs.Int("min-runs", 3, "timed runs of each backend per row and pass even when --budget is exceeded")
	budget := fs.Duration("budget", 0, "time a row's timed runs in one pass may take, judged from its warm-up (0: no limit); cuts --runs down to --min-runs for slow models")
	warmup := fs.Int("warmup", 2, "untimed runs of each backend per row and pass before the timed ones")
	passes := fs.Int("passes", 1, "times the whole table is measured over, each row's runs pooled across the passes: a stretch in which the machine is slower falls on one pass of a row, not on all of its runs")
	allocRuns := fs.Int("alloc-runs", 3, "runs of the backend after the timed ones over which its heap allocations are counted")
	backendName := fs.String("backend", "native", "the backend measured: "+strings.Join(backend.Known, ", "))
	compare := fs.String("compare", "onnxruntime", "the backend it is compared with (empty: none)")
	optimize := fs.Bool("optimize", true, "let both backends rewrite the graph for inference first, as d500 run does (backend.Options.Optimize)")
	seed := fs.Uint64("seed", 1, "seed of the models' parameters and the random inputs")
	mdPath := fs.String("md", "", "write the table as Markdown to `FILE`")
	jsonPath := fs.String("json", "", "write the report as JSON to `FILE`")
	settings := backendOptFlag(fs)
	memLimit := memoryLimitFlag(fs)
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if len(rest) > 0 {
		return usageError(fs, stderr, "unexpected argument %q", rest[0])
	}
	names, err := parsePresetList(*modelList)
	if err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	batches, err := parsePositiveInts("--batch", *batchList)
	if err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	threads, err := parsePositiveInts("--threads", *threadList)
	if err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	switch {
	case *runs <= 0:
		return usageError(fs, stderr, "--runs %d: need at least one timed run", *runs)
	case *minRuns < 0 || *warmup < 0 || *budget < 0:
		return usageError(fs, stderr, "--min-runs, --warmup and --budget must not be negative")
	case *passes <= 0:
		return usageError(fs, stderr, "--passes %d: need at least one pass", *passes)
	case *allocRuns <= 0:
		return usageError(fs, stderr, "--alloc-runs %d: need at least one run", *allocRuns)
	}
	if _, err := backend.Get(*backendName); err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	if *compare != "" {
		if _, err := parseCompare(*compare, *backendName); err != nil {
			return usageError(fs, stderr, "%v", err)
		}
		if strings.Contains(*compare, ",") {
			return usageError(fs, stderr, "--compare %s: bench compares with one backend", *compare)
		}
	}

	if code := checkOutputs(fs, stderr, fileOut("md", *mdPath), fileOut("json", *jsonPath)); code >= 0 {
		return code
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopSignals := stopOnInterrupt("bench", "stopping now; the row being measured is left out", cancel, stderr)
	defer stopSignals()

	// The environment is made after the table (see below); its threads
	// are per row.
	rep := metrics.BenchReport{Backend: *backendName, Compare: *compare, Warmup: *warmup, AllocRuns: *allocRuns, Passes: *passes, Rows: []metrics.BenchRow{}}
	b := bencher{
		base: *backendName, other: *compare, settings: settings, optimize: *optimize, seed: *seed,
		cfg:       metrics.PairConfig{Warmup: *warmup, Runs: *runs, MinRuns: *minRuns, Budget: *budget, Stop: ctx},
		allocRuns: *allocRuns, memoryLimit: memLimit.bytes,
	}
	status := exitOK
	// The cases in table order: built in the first pass, measured in
	// every pass, finished (figures pooled, allocations counted, networks
	// closed) after their last. With one pass each case is finished as
	// soon as it is measured, so one model's networks are open at a time.
	var cases []*benchCase
	finish := func(c *benchCase, interrupted bool) {
		c.finish(!interrupted, b.allocRuns)
		if c.row.Error != "" {
			status = exitFail
		}
		printBenchRow(stdout, rep, c.row)
	}
	presets := map[string]*onnx.Model{} // built in the first pass; nil: it failed
table:
	for pass := range *passes {
		i := 0
		for _, name := range names {
			if pass == 0 {
				model, err := models.Preset(name, *seed)
				if err != nil {
					fmt.Fprintf(stderr, "d500 bench: %v\n", err)
					status = exitFail
				}
				presets[name] = model
			}
			model := presets[name]
			if model == nil {
				continue
			}
			for _, batch := range batches {
				for _, t := range threads {
					if ctx.Err() != nil {
						rep.Interrupted = true
						break table
					}
					if pass == 0 {
						cases = append(cases, &benchCase{row: metrics.BenchRow{Model: name, Batch: batch, Threads: t}})
					}
					c := cases[i]
					i++
					if !c.done() {
						b.open(c, model)
					}
					before := len(c.passes)
					if !c.measure(&b) {
						rep.Interrupted = true // the pass in progress was cut short: it is left out
						break table
					}
					if *passes > 1 && len(c.passes) > before {
						printBenchPass(stderr, pass, *passes, c)
					}
					if !c.finished && (pass == *passes-1 || c.done()) {
						finish(c, false)
					}
					c.close()
				}
			}
		}
	}
	if rep.Interrupted {
		// The cases measured in at least one pass keep those passes; the
		// others are left out.
		for _, c := range cases {
			if !c.finished && len(c.passes) > 0 {
				finish(c, true)
			} else {
				c.close()
			}
		}
	}
	// The rows in table order, whichever pass finished them (a row
	// skipped or failed when first built is finished in the first pass).
	for _, c := range cases {
		if c.finished {
			rep.Rows = append(rep.Rows, c.row)
		}
	}
	if rep.Interrupted {
		fmt.Fprintf(stderr, "d500 bench: interrupted; %d rows measured\n", len(rep.Rows))
		status = exitInterrupted
	}
	// After the runs: the version probes load the ONNX Runtime library as
	// --backend-opt selects it, which must not come before the runs' own
	// loading of it.
	rep.Environment = metrics.NewEnvironment(0, settings)
	if *jsonPath != "" {
		if err := metrics.WriteFile(*jsonPath, func(w io.Writer) error { return writeIndentedJSON(w, rep) }); err != nil {
			fmt.Fprintf(stderr, "d500 bench: %v\n", err)
			status = exitFail
		}
	}
	if *mdPath != "" {
		if err := metrics.WriteFile(*mdPath, func(w io.Writer) error { return writeBenchMarkdown(w, rep) }); err != nil {
			fmt.Fprintf(stderr, "d500 bench: %v\n", err)
			status = exitFail
		}
	}
	return status
}

// bencher measures rows with one configuration.
type bencher struct {
	base, other string
	settings    map[string]string
	optimize    bool
	seed        uint64
	cfg         metrics.PairConfig
	allocRuns   int
	memoryLimit int64 // of the random inputs (0: none)
}

// benchCase is one row of the table while it is measured: the two
// networks, their inputs and the passes timed so far.
type benchCase struct {
	row               metrics.BenchRow
	base, other       network.Network
	runBase, runOther func() error
	passes            []metrics.PairResult
	roundTrips        []float64 // the core round trip before each pass, ns
	baseSkipped       bool      // the base backend cannot run the model
	compared          bool      // the other backend runs it: the passes time both
	finished          bool
}

// done reports whether the case is measured no further: the base backend
// cannot run it, it failed, or its row is made.
func (c *benchCase) done() bool { return c.baseSkipped || c.row.Error != "" || c.finished }

// open builds the case's model at its batch size and thread count on both
// backends and checks their outputs against each other. A backend that
// cannot build or run the model makes the row skipped, with the reason
// (the base backend), or leaves the compared figures out (the other one);
// any other failure is the row's Error.
// In later passes it builds them again: keeping every row's networks
// open from one pass to the next would hold gigabytes (the large networks
// at batch 8), and building them takes a few seconds for the whole table.
func (b *bencher) open(c *benchCase, model *onnx.Model) {
	row := &c.row
	// The previous row's garbage is collected now, not during this one.
	runtime.GC()
	opts := backend.Options{Threads: row.Threads, Settings: b.settings, Optimize: b.optimize}
	base, err := backend.New(b.base, model, opts)
	if err != nil {
		row.Skipped, c.baseSkipped = byBackend(b.base, err.Error()), true
		return
	}
	c.base = base
	feeds, err := batchFeeds(model.Graph, base.Inputs(), row.Batch, b.seed, &inputBudget{limit: b.memoryLimit})
	if err != nil {
		row.Error = err.Error()
		c.close()
		return
	}
	want, err := base.Inference(feeds)
	if errors.Is(err, network.ErrUnsupported) {
		row.Skipped, c.baseSkipped = byBackend(b.base, err.Error()), true
		c.close()
		return
	}
	if err != nil {
		row.Error = byBackend(b.base, err.Error())
		c.close()
		return
	}
	// Both sides run through network.InferInto: outputs are copied into
	// tensors kept between runs (where the backend can), so the time and
	// the allocations are those of inference, not of the result's copy.
	baseOut, otherOut := map[string]onnx.Value{}, map[string]onnx.Value{}
	c.runBase = func() error { _, err := network.InferInto(base, feeds, baseOut); return err }
	if b.other != "" {
		other, reason, err := b.checkedOther(model, opts, feeds, want, base.Outputs(), row)
		switch {
		case err != nil:
			row.Error = byBackend(b.other, err.Error())
			c.close()
			return
		case reason != "":
			row.Skipped = byBackend(b.other, reason)
		default:
			c.other, c.compared = other, true
			c.runOther = func() error { _, err := network.InferInto(other, feeds, otherOut); return err }
		}
	}
}

// measure times one pass of the case, if it is still measured, and
// reports false when the run was interrupted during it (the pass is then
// left out). A failing run makes the row's Error.
func (c *benchCase) measure(b *bencher) bool {
	if c.done() {
		return true
	}
	rtt := 0.0
	if d, ok := metrics.CoreRoundTrip(coreRoundTrips); ok {
		rtt = float64(d.Nanoseconds())
	}
	res, err := metrics.BenchPair(c.runBase, c.runOther, b.cfg)
	if err != nil {
		if b.cfg.Stop != nil && b.cfg.Stop.Err() != nil {
			return false
		}
		c.row.Error = err.Error()
		c.close()
		return true
	}
	c.passes = append(c.passes, res)
	c.roundTrips = append(c.roundTrips, rtt)
	return true
}

// finish completes the row from the passes measured, counts the base
// backend's allocations (when countAllocs), and closes the networks.
func (c *benchCase) finish(countAllocs bool, allocRuns int) {
	defer c.close()
	c.finished = true
	row := &c.row
	if row.Error != "" || len(c.passes) == 0 {
		return
	}
	res := metrics.PoolPairs(c.passes...)
	row.Runs, row.Backend = res.Runs, &res.A
	if c.compared {
		row.Compare, row.Ratio = &res.B, res.Ratio
		for _, p := range c.passes {
			row.PassRatios = append(row.PassRatios, p.Ratio)
		}
	}
	row.Passes = len(c.passes)
	if slices.ContainsFunc(c.roundTrips, func(v float64) bool { return v > 0 }) {
		row.CoreRoundTripNs = median(c.roundTrips)
		row.PassCoreRoundTripNs = c.roundTrips
	}
	if !countAllocs {
		return
	}
	allocs, err := metrics.MeasureAllocations(c.runBase, allocRuns)
	if err != nil {
		row.Error = err.Error()
		return
	}
	row.Allocations = &allocs
}

// close closes the case's networks.
func (c *benchCase) close() {
	for _, n := range []*network.Network{&c.base, &c.other} {
		if *n != nil {
			(*n).Close()
			*n = nil
		}
	}
	c.runBase, c.runOther = nil, nil
}

// median is the median of values (not empty).
func median(values []float64) float64 {
	v := slices.Sorted(slices.Values(values))
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// coreRoundTrips is the number of round trips CoreRoundTrip times before
// each row: about a millisecond at the slowest hand-overs seen.
const coreRoundTrips = 2000

// byBackend prefixes a reason with the backend's name unless it starts
// with it already.
func byBackend(name, reason string) string {
	if strings.HasPrefix(reason, name+":") {
		return reason
	}
	return name + ": " + reason
}

// checkedOther builds the compared backend and compares its outputs with
// want, recording the largest errors and, where they exceed the
// cross-backend tolerance, the mismatch: the timing goes on (two float32
// engines summing in different orders can differ beyond it on outputs near
// zero), and the note lets a reader judge. A backend that cannot build or
// run the model is not an error but a reason: the row goes on with the
// base backend alone.
func (b bencher) checkedOther(model *onnx.Model, opts backend.Options, feeds, want map[string]onnx.Value, outputs []string, row *metrics.BenchRow) (network.Network, string, error) {
	other, err := backend.New(b.other, model, opts)
	if err != nil {
		return nil, err.Error(), nil
	}
	got, err := other.Inference(feeds)
	if err != nil {
		other.Close()
		if errors.Is(err, network.ErrUnsupported) {
			return nil, err.Error(), nil
		}
		return nil, "", err
	}
	for _, o := range outputs {
		d := metrics.Compare(got[o], want[o], compareTolerance.ScaledTo(want[o]))
		if d.Mismatch != "" && row.Mismatch == "" {
			row.Mismatch = fmt.Sprintf("output %q of %s differs from %s's: %s", o, b.other, b.base, d.Mismatch)
		}
		row.MaxAbsError, row.MaxRelError = max(row.MaxAbsError, d.MaxAbs), max(row.MaxRelError, d.MaxRel)
	}
	return other, "", nil
}

// batchFeeds makes seeded random inputs of the declared types, with the
// symbolic batch dimension set to batch. A declared shape with another
// symbolic dimension (one not named like the batch) cannot be filled and
// is an error.
func batchFeeds(g *onnx.Graph, names []string, batch int, seed uint64, budget *inputBudget) (map[string]onnx.Value, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	feeds := map[string]onnx.Value{}
	batchParam, seen := "", false
	for _, n := range names {
		ti := g.TypeOf(n)
		if ti == nil || ti.Kind != onnx.TensorKind || !ti.HasShape {
			return nil, fmt.Errorf("input %q: need a declared tensor type and shape, have %v", n, ti)
		}
		sized := *ti
		sized.Shape = slices.Clone(ti.Shape)
		for i, d := range sized.Shape {
			if d.Size > 0 {
				continue
			}
			if !seen {
				batchParam, seen = d.Param, true
			}
			if d.Param != batchParam {
				return nil, fmt.Errorf("input %q: dimension %d (%q) is symbolic besides the batch dimension %q; give it a size", n, i, d.Param, batchParam)
			}
			sized.Shape[i] = onnx.Dim{Size: int64(batch)}
		}
		t, err := randomTensor(n, &sized, rng, budget)
		if err != nil {
			return nil, err
		}
		feeds[n] = t
	}
	return feeds, nil
}

// parsePresetList splits --models, checking every name is a preset.
func parsePresetList(list string) ([]string, error) {
	known := models.PresetNames()
	var names []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("--models: %q is not a model preset (known: %s)", n, strings.Join(known, ", "))
		}
		names = append(names, n)
	}
	return names, nil
}

// parsePositiveInts splits a comma-separated list of positive integers.
func parsePositiveInts(flagName, list string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%s: %q is not a positive integer", flagName, s)
		}
		out = append(out, v)
	}
	return out, nil
}

// printBenchPass prints a line on the progress of a table measured in
// several passes, whose rows are printed when their last pass is done.
func printBenchPass(w io.Writer, pass, passes int, c *benchCase) {
	p := c.passes[len(c.passes)-1]
	fmt.Fprintf(w, "d500 bench: pass %d of %d: %s batch %d threads %d: median %.3f ms", pass+1, passes, c.row.Model, c.row.Batch, c.row.Threads, p.A.Median)
	if c.compared {
		fmt.Fprintf(w, ", ratio %.2f", p.Ratio)
	}
	fmt.Fprintln(w)
}

// printBenchRow prints a row's line as it is measured.
func printBenchRow(w io.Writer, rep metrics.BenchReport, r metrics.BenchRow) {
	fmt.Fprintf(w, "%s batch %d threads %d: ", r.Model, r.Batch, r.Threads)
	latency := func(name string, q *metrics.Quantiles) {
		fmt.Fprintf(w, "%s median %.3f ms (95%% CI %.3f–%.3f, p10–p90 %.3f–%.3f, CV %.1f%%)",
			name, q.Median, q.MedianCI95[0], q.MedianCI95[1], q.P10, q.P90, 100*q.CV)
	}
	if r.Backend != nil {
		latency(rep.Backend, r.Backend)
	}
	if r.Compare != nil {
		fmt.Fprint(w, ", ")
		latency(rep.Compare, r.Compare)
		fmt.Fprintf(w, ", ratio %.2f", r.Ratio)
	}
	if r.Allocations != nil {
		fmt.Fprintf(w, ", %.0f allocs/inference", r.Allocations.AllocsPerRun)
	}
	if r.Runs > 0 && r.Passes > 1 {
		fmt.Fprintf(w, " (%d runs each in %d passes", r.Runs, r.Passes)
		if len(r.PassRatios) > 0 {
			fmt.Fprintf(w, ", ratio per pass %.2f–%.2f", slices.Min(r.PassRatios), slices.Max(r.PassRatios))
		}
		fmt.Fprint(w, ")")
	} else if r.Runs > 0 {
		fmt.Fprintf(w, " (%d runs each)", r.Runs)
	}
	if r.CoreRoundTripNs > 0 {
		fmt.Fprintf(w, ", core round trip %.0f ns", r.CoreRoundTripNs)
	}
	if r.Skipped != "" {
		fmt.Fprintf(w, " skipped: %s", oneLine(r.Skipped))
	}
	if r.Error != "" {
		fmt.Fprintf(w, " error: %s", oneLine(r.Error))
	}
	if r.Mismatch != "" {
		fmt.Fprintf(w, " (%s)", oneLine(r.Mismatch))
	}
	fmt.Fprintln(w)
}

// writeBenchMarkdown writes the report as a Markdown table under a header
// saying when, where and how it was measured.
func writeBenchMarkdown(w io.Writer, rep metrics.BenchReport) error {
	env := rep.Environment
	commit := env.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if commit == "" {
		commit = "unknown"
	}
	if env.Modified {
		commit += " (with uncommitted changes)"
	}
	other := rep.Compare
	if other == "" {
		other = "(none)"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "# Inference latency: %s vs %s\n\n", rep.Backend, other)
	machine := fmt.Sprintf("%d cores", env.Cores)
	if len(env.CPUFeatures) > 0 {
		machine += ", " + strings.Join(env.CPUFeatures, " ")
	}
	if env.MemoryBytes > 0 {
		machine += fmt.Sprintf(", %.1f GiB", float64(env.MemoryBytes)/(1<<30))
	}
	system := env.GOOS + "/" + env.GOARCH
	if env.OS != "" {
		system += ", " + env.OS
	}
	if env.Kernel != "" {
		system += ", kernel " + env.Kernel
	}
	fmt.Fprintf(&sb, "Measured %s on %s (%s, GOMAXPROCS %d, host %s), %s %s, commit %s",
		env.Time, env.CPU, machine, env.GOMAXPROCS, env.Host, env.GoVersion, system, commit)
	if v := env.Backends["onnxruntime"]; v != "" {
		fmt.Fprintf(&sb, ", ONNX Runtime %s", v)
	}
	sb.WriteString(".\n\n")
	fmt.Fprintf(&sb, "Each row: %d untimed runs of each backend, then `runs` timed runs of each, interleaved in one process "+
		"(%s, %s, %s, …) so that the machine's drift falls on both alike; latencies in ms: the median with its 95%% confidence interval "+
		"in brackets (percentile bootstrap, %d resamples), p10–p90, and in parentheses the coefficient of variation (standard deviation over mean) of the runs; "+
		"ratio = %s median / %s median (above 1: %s is slower); allocations: %s's Go heap allocations per inference, "+
		"counted with runtime.ReadMemStats over %d runs after the timed ones. Inputs are seeded random values of the "+
		"declared shape, the batch dimension set; before the timing, the outputs of the two are compared and a note "+
		"says where they differ beyond the cross-backend tolerance (rtol %g, atol %g times the output's largest magnitude where that is above 1). "+
		"Each backend's worker threads stop spinning when its run returns (ONNX Runtime: session.force_spinning_stop), so that neither takes cores from the other's next run. "+
		"Core RTT: the round trip of a cache line between two cores, in ns, measured just before the row by two threads pinned to the first two processors; "+
		"on a virtual machine it changes with where the host places the virtual cores, and the latency of small networks on two threads with it.\n\n",
		rep.Warmup, rep.Backend, other, rep.Backend, metrics.BootstrapResamples, rep.Backend, other, rep.Backend, rep.Backend, rep.AllocRuns, compareTolerance.RTol, compareTolerance.ATol)
	if rep.Passes > 1 {
		fmt.Fprintf(&sb, "The table was measured %d times over, one pass after the other, and each row's runs from all the passes are "+
			"taken together: its medians are those of all its runs, so that a stretch of a minute in which the machine ran slower "+
			"falls on one pass of a row, not on all of it. `per pass` gives the lowest and highest ratio of one pass's runs alone, "+
			"`core RTT` the median over the passes.\n\n", rep.Passes)
	}
	fmt.Fprintf(&sb, "| model | batch | threads | runs | %[1]s median | %[1]s p10–p90 (CV) | %[2]s median | %[2]s p10–p90 (CV) | ratio | per pass | core RTT | allocs/inference | KiB/inference | note |\n", rep.Backend, other)
	sb.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	dash := "–"
	for _, r := range rep.Rows {
		cells := []string{r.Model, strconv.Itoa(r.Batch), strconv.Itoa(r.Threads), dash, dash, dash, dash, dash, dash, dash, dash, dash, dash, ""}
		if r.Runs > 0 {
			cells[3] = strconv.Itoa(r.Runs)
		}
		if q := r.Backend; q != nil {
			cells[4], cells[5] = medianCell(q), spreadCell(q)
		}
		if q := r.Compare; q != nil {
			cells[6], cells[7] = medianCell(q), spreadCell(q)
			cells[8] = fmt.Sprintf("%.2f", r.Ratio)
		}
		if len(r.PassRatios) > 1 {
			cells[9] = fmt.Sprintf("%.2f–%.2f", slices.Min(r.PassRatios), slices.Max(r.PassRatios))
		}
		if r.CoreRoundTripNs > 0 {
			cells[10] = fmt.Sprintf("%.0f", r.CoreRoundTripNs)
		}
		if a := r.Allocations; a != nil {
			cells[11], cells[12] = fmt.Sprintf("%.0f", a.AllocsPerRun), fmt.Sprintf("%.0f", a.BytesPerRun/1024)
		}
		note := &cells[13]
		switch {
		case r.Error != "":
			*note = "error: " + oneLine(r.Error)
		case r.Skipped != "":
			*note = "skipped: " + oneLine(r.Skipped)
		case r.Mismatch != "":
			*note = oneLine(r.Mismatch)
		}
		*note = strings.ReplaceAll(*note, "|", `\|`)
		sb.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	if rep.Interrupted {
		sb.WriteString("\nInterrupted: the rows above are those measured before the run was stopped.\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// medianCell is a table's median cell: the median and its 95% interval,
// "1.234 [1.220, 1.251]".
func medianCell(q *metrics.Quantiles) string {
	return fmt.Sprintf("%.3f [%.3f, %.3f]", q.Median, q.MedianCI95[0], q.MedianCI95[1])
}

// spreadCell is a table's spread cell: p10–p90 and the coefficient of
// variation, "1.200–1.300 (2.1%)".
func spreadCell(q *metrics.Quantiles) string {
	return fmt.Sprintf("%.3f–%.3f (%.1f%%)", q.P10, q.P90, 100*q.CV)
}

// writeIndentedJSON writes v as indented JSON.
func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
