package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/internal/memlimit"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/onnx"
)

const runSynopsis = "--model M.onnx [--backend B] [--input NAME=FILE.pb]... [--random-inputs [--memory-limit SIZE]] [--output-dir DIR] [--bench N [--compare B,...]] [--warmup N] [--json FILE] [--threads N] [--optimize=true|false] [--backend-opt KEY=VALUE]"

// inputFlags collects repeated --input flags.
type inputFlags []string

func (f *inputFlags) String() string     { return strings.Join(*f, ",") }
func (f *inputFlags) Set(s string) error { *f = append(*f, s); return nil }

// Type names the value in the help.
func (f *inputFlags) Type() string { return "NAME=FILE.pb" }

// runReport is the --json of a benchmark, as the design's contract says.
type runReport struct {
	Backend string `json:"backend"`
	Model   string `json:"model"`
	metrics.BenchResult
}

// runJSON is --json: the --backend's report, the backends --compare
// timed beside it, and the machine and build they ran on. With --compare,
// the --backend's figures are those of its runs interleaved with the
// first compared backend's.
type runJSON struct {
	runReport
	Compare     []comparedRun       `json:"compare,omitempty"`
	Environment metrics.Environment `json:"environment"`
}

// cmdRun runs a model once on given inputs and writes its outputs, or
// times it (--bench).
func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", runSynopsis, stderr)
	modelPath := fs.String("model", "", "the ONNX model to run")
	backendName := fs.String("backend", "native", "backend: "+strings.Join(backend.Known, ", "))
	var inputs inputFlags
	fs.Var(&inputs, "input", "an input as `NAME=FILE.pb` (a TensorProto, or the container the input's type needs); a bare FILE.pb goes to the next input not given by name; repeatable")
	randomInputs := fs.Bool("random-inputs", false, "fill inputs not given with seeded random values of their declared type and shape (unknown dimensions become 1)")
	memLimit := memoryLimitFlag(fs)
	seed := fs.Uint64("seed", 1, "seed of --random-inputs")
	outDir := fs.String("output-dir", "", "write each graph output K as `DIR`/output_K.pb")
	bench := fs.Int("bench", 0, "time `N` runs after warm-up and report latency and throughput")
	warmup := fs.Int("warmup", 3, "untimed runs before --bench's timed ones")
	jsonPath := fs.String("json", "", "with --bench, write the timing report as JSON to `FILE`")
	threads := fs.Int("threads", 0, "worker threads the backend may use (0: all cores)")
	compare := fs.String("compare", "", "with --bench, also time these comma-separated backends on the same inputs (their outputs must agree) and print the ratios of median latency")
	optimize := fs.Bool("optimize", true, "let the backends rewrite the graph for inference first (package transform: fold constants and BatchNormalization, drop no-ops and dead nodes); ONNX Runtime optimizes on its own either way")
	settings := backendOptFlag(fs)
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	switch {
	case len(rest) > 0:
		return usageError(fs, stderr, "unexpected argument %q", rest[0])
	case *modelPath == "":
		return usageError(fs, stderr, "--model is required")
	case *bench < 0 || *warmup < 0 || *threads < 0:
		return usageError(fs, stderr, "--bench, --warmup and --threads must not be negative")
	case *jsonPath != "" && *bench == 0:
		return usageError(fs, stderr, "--json needs --bench N")
	case *compare != "" && *bench == 0:
		return usageError(fs, stderr, "--compare needs --bench N")
	}
	if _, err := backend.Get(*backendName); err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	compared, err := parseCompare(*compare, *backendName)
	if err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	if code := checkOutputs(fs, stderr, fileOut("json", *jsonPath), dirOut("output-dir", *outDir)); code >= 0 {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "d500 run: %v\n", err)
		return exitFail
	}
	// What the command line names and cannot be used — a model file that
	// cannot be read, an input file, an input name the model lacks, an
	// input not given, a declared shape past --memory-limit — is bad
	// usage, as the contract says; what goes wrong running it is not.
	badInput := func(err error) int {
		fmt.Fprintf(stderr, "d500 run: %v\n", err)
		return exitUsage
	}

	model, err := onnx.Load(*modelPath)
	if err != nil {
		return badInput(err)
	}
	opts := backend.Options{Threads: *threads, Settings: settings, Optimize: *optimize}
	net, err := backend.New(*backendName, model, opts)
	if err != nil {
		return fail(fmt.Errorf("%s backend: %w", *backendName, err))
	}
	defer net.Close()
	feeds, err := readFeeds(model.Graph, net.Inputs(), inputs, *randomInputs, *seed, &inputBudget{limit: memLimit.bytes})
	if err != nil {
		return badInput(err)
	}
	outputs, err := net.Inference(feeds)
	if err != nil {
		return fail(err)
	}
	for k, name := range net.Outputs() {
		fmt.Fprintf(stdout, "output %d %q: %s\n", k, name, onnx.DescribeValue(outputs[name]))
	}
	if *outDir != "" {
		if err := writeOutputs(*outDir, net.Outputs(), outputs); err != nil {
			return fail(err)
		}
	}
	if *bench == 0 {
		return exitOK
	}
	runBase := func() error { _, err := net.Inference(feeds); return err }
	rep := runJSON{runReport: runReport{Backend: *backendName, Model: *modelPath}}
	// With no --compare, benchCompared times the --backend alone.
	rep.BenchResult, rep.Compare, err = benchCompared(compared, model, *modelPath, feeds, outputs, net.Outputs(), runBase, *backendName, opts, *warmup, *bench, stdout)
	if err != nil {
		return fail(err)
	}
	if *jsonPath != "" {
		// Made after the timing: the probes load the ONNX Runtime library
		// with the run's settings, which must not come before the run's
		// own choice of it.
		rep.Environment = metrics.NewEnvironment(*threads, settings)
		err := metrics.WriteFile(*jsonPath, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		})
		if err != nil {
			return fail(err)
		}
	}
	return exitOK
}

// readFeeds reads the --input files, typed by the graph's declaration of
// each input, and fills the rest with random values if asked.
func readFeeds(g *onnx.Graph, names []string, specs []string, random bool, seed uint64, budget *inputBudget) (map[string]onnx.Value, error) {
	feeds := map[string]onnx.Value{}
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	next := 0 // the next input a bare FILE goes to
	for _, spec := range specs {
		name, path, named := strings.Cut(spec, "=")
		if !named {
			path = spec
			for next < len(names) && feeds[names[next]] != nil {
				next++
			}
			if next == len(names) {
				return nil, fmt.Errorf("--input %s: the model has only %d inputs (%s)", spec, len(names), strings.Join(names, ", "))
			}
			name = names[next]
		}
		if !known[name] {
			return nil, fmt.Errorf("--input %s: the model has no input %q (inputs: %s)", spec, name, strings.Join(names, ", "))
		}
		_, v, err := onnx.ReadValue(path, g.TypeOf(name))
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", name, err)
		}
		feeds[name] = v
	}
	var missing []string
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for _, n := range names {
		if feeds[n] != nil {
			continue
		}
		if !random {
			missing = append(missing, n)
			continue
		}
		t, err := randomTensor(n, g.TypeOf(n), rng, budget)
		if err != nil {
			return nil, err
		}
		feeds[n] = t
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no value for input(s) %s: give --input NAME=FILE.pb or --random-inputs", strings.Join(missing, ", "))
	}
	return feeds, nil
}

// inputBudget is the memory the random inputs of one run may take
// together (limit, 0: no limit) and what those made so far take.
type inputBudget struct{ limit, used int64 }

// take counts a name input of type t and shape against the budget before
// it is made, and says why not when it does not fit: the input, its
// shape and the bytes, so that a declared shape too large for the
// machine is an error, not the runtime's fatal "out of memory".
func (b *inputBudget) take(name string, t onnx.DataType, shape []int) error {
	n, err := onnx.TensorBytes(t, shape)
	if err != nil {
		return fmt.Errorf("input %q: %w", name, err)
	}
	if b == nil {
		return nil
	}
	what := fmt.Sprintf("input %q (%v of shape %v)", name, t, shape)
	if b.used > 0 {
		what += " with the inputs made before it"
	}
	b.used = min(b.used+n, math.MaxInt64/2)
	return memlimit.Check(what, b.used, b.limit)
}

// randomTensor makes a tensor of the declared type with values in [-1, 1)
// (floats), [0, 10) (integers) or random booleans.
func randomTensor(name string, ti *onnx.TypeInfo, rng *rand.Rand, budget *inputBudget) (*onnx.Tensor, error) {
	if ti == nil || ti.Kind != onnx.TensorKind {
		return nil, fmt.Errorf("input %q: --random-inputs needs a declared tensor type, have %v", name, ti)
	}
	shape := make([]int, len(ti.Shape))
	for i, d := range ti.Shape {
		shape[i] = 1
		if d.Size > 0 {
			shape[i] = int(d.Size)
		}
	}
	n, err := onnx.ShapeElements(shape)
	if err != nil {
		return nil, fmt.Errorf("input %q: %w", name, err)
	}
	if err := budget.take(name, ti.Elem, shape); err != nil {
		return nil, err
	}
	t := onnx.NewTensor(ti.Elem, shape...)
	switch d := t.Data.(type) {
	case []float32:
		for i := range n {
			d[i] = rng.Float32()*2 - 1
		}
	case []float64:
		for i := range n {
			d[i] = rng.Float64()*2 - 1
		}
	case []int64:
		for i := range n {
			d[i] = rng.Int64N(10)
		}
	case []int32:
		for i := range n {
			d[i] = rng.Int32N(10)
		}
	case []bool:
		for i := range n {
			d[i] = rng.IntN(2) == 1
		}
	default:
		return nil, fmt.Errorf("input %q: --random-inputs does not make tensor(%v)", name, ti.Elem)
	}
	return t, nil
}

// writeOutputs writes graph output K as DIR/output_K.pb, named like it.
func writeOutputs(dir string, names []string, outputs map[string]onnx.Value) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	for k, name := range names {
		v, ok := outputs[name]
		if !ok {
			return fmt.Errorf("the backend returned no value for output %q", name)
		}
		if err := onnx.WriteValue(filepath.Join(dir, fmt.Sprintf("output_%d.pb", k)), name, v); err != nil {
			return fmt.Errorf("output %q: %w", name, err)
		}
	}
	return nil
}
