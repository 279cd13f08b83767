package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/runner"
)

const compareSynopsis = "--model M.onnx|PRESET --loss L --dataset SPEC --a OPT[:k=v,...] --b OPT[:k=v,...] --steps N --csv FILE [--batch N] [--seed N] [--init he|pytorch] [--backend B] [--memory-limit SIZE]"

// cmdCompareOptimizers runs two optimizers from identical weights on
// identical batches and records, per step and parameter, how far apart
// their parameters are.
func cmdCompareOptimizers(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("compare-optimizers", compareSynopsis, stderr)
	modelSpec := fs.String("model", "", "ONNX model file or preset name")
	lossName := fs.String("loss", "softmax-xent", "loss appended to the model's first output: softmax-xent")
	dataset := fs.String("dataset", "", "dataset spec (fashion-mnist, mnist:DIR, cifar10:DIR, tensors:DIR, synthetic:...)")
	specA := fs.String("a", "", "first optimizer: NAME[:k=v,...] with keys lr momentum beta1 beta2 eps alpha weight_decay")
	specB := fs.String("b", "", "second optimizer, same form")
	steps := fs.Int("steps", 0, "optimizer steps to compare")
	memLimit := memoryLimitFlag(fs)
	csvPath := fs.String("csv", "", "write step,param,l2_diff,loss_a,loss_b to `FILE`")
	batch := fs.Int("batch", 64, "batch size")
	seed := fs.Uint64("seed", 1, "seed of the initial weights and of the batch order")
	initName := addInitFlag(fs)
	backendName := fs.String("backend", "native", "backend: "+strings.Join(backend.Known, ", "))
	threads := fs.Int("threads", 0, "worker threads the backend may use (0: all cores)")
	normalize := fs.Bool("normalize", true, "normalise the images of a known dataset by its standard statistics")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	switch {
	case len(rest) > 0:
		return usageError(fs, stderr, "unexpected argument %q", rest[0])
	case *modelSpec == "" || *dataset == "" || *specA == "" || *specB == "" || *csvPath == "":
		return usageError(fs, stderr, "--model, --dataset, --a, --b and --csv are required")
	case *steps <= 0 || *batch <= 0:
		return usageError(fs, stderr, "--steps and --batch must be positive")
	}
	kind, err := network.ParseLossKind(*lossName)
	if err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	policy, err := models.ParseInit(*initName)
	if err != nil {
		return usageError(fs, stderr, "--init: %v", err)
	}
	source := modelSource{spec: *modelSpec, seed: *seed, init: policy}
	if err := source.check(); err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	ruleA, err := parseOptimizerSpec(*specA)
	if err != nil {
		return usageError(fs, stderr, "--a: %v", err)
	}
	ruleB, err := parseOptimizerSpec(*specB)
	if err != nil {
		return usageError(fs, stderr, "--b: %v", err)
	}
	if _, err := backend.Get(*backendName); err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	if code := checkOutputs(fs, stderr, fileOut("csv", *csvPath)); code >= 0 {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "d500 compare-optimizers: %v\n", err)
		return exitFail
	}
	// Two networks from the same model and seed: identical weights.
	// BatchNormalization trains on batch statistics; the running ones,
	// which only evaluation reads, are not compared.
	so := setupOptions{model: source, loss: kind, backend: *backendName, threads: *threads, batchNorm: "batch"}
	a, err := newTrainingSetup(so)
	if err != nil {
		return fail(err)
	}
	defer a.Close()
	b, err := newTrainingSetup(so)
	if err != nil {
		return fail(err)
	}
	defer b.Close()
	optA := optimizer.NewDriver(a.net, a.loss, ruleA.rule, ruleA.hp.ClipNorm)
	optB := optimizer.NewDriver(b.net, b.loss, ruleB.rule, ruleB.hp.ClipNorm)

	trainSet, _, err := runner.ParseSpecWithin(*dataset, memLimit.bytes)
	if err != nil {
		fail(err)
		return exitUsage // a --dataset that cannot be read is bad usage
	}
	opts := runner.SamplerOptions{BatchSize: *batch, Seed: *seed}
	if n, ok := runner.StandardNormalize(*dataset); ok && *normalize {
		opts.Transforms = []runner.Transform{n}
	}
	sampler, err := runner.NewShuffled(trainSet, opts)
	if err != nil {
		return fail(err)
	}
	f, err := os.Create(*csvPath)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "step,param,l2_diff,loss_a,loss_b")
	// The trainable parameters: frozen ones (running statistics) are
	// not stepped by either optimizer.
	var params []string
	for _, pg := range a.net.Gradients(a.loss) {
		params = append(params, pg.Param)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopSignals := stopOnInterrupt("compare-optimizers", "stopping after the current step", cancel, stderr)
	defer stopSignals()
	for step := 1; step <= *steps; step++ {
		if ctx.Err() != nil {
			// The rows of the steps done are in the CSV (flushed after
			// each step).
			fmt.Fprintf(stderr, "d500 compare-optimizers: interrupted after %d steps; written to %s\n", step-1, *csvPath)
			return exitInterrupted
		}
		x, y, _, err := sampler.Next()
		if errors.Is(err, io.EOF) { // a new epoch: the sampler reshuffles
			x, y, _, err = sampler.Next()
		}
		if err != nil {
			return fail(err)
		}
		// Both optimizers see the very same batch.
		lossA, err := optA.Step(map[string]onnx.Value{a.input: x, a.labels: y})
		if err != nil {
			return fail(fmt.Errorf("step %d, optimizer a: %w", step, err))
		}
		lossB, err := optB.Step(map[string]onnx.Value{b.input: x, b.labels: y})
		if err != nil {
			return fail(fmt.Errorf("step %d, optimizer b: %w", step, err))
		}
		for _, p := range params {
			d, err := paramDistance(a.net, b.net, p)
			if err != nil {
				return fail(err)
			}
			fmt.Fprintf(w, "%d,%s,%g,%g,%g\n", step, p, d, lossA, lossB)
		}
		if err := w.Flush(); err != nil { // keep what was measured if stopped
			return fail(err)
		}
	}
	fmt.Fprintf(stdout, "%d steps of %s and %s compared over %d parameters, written to %s\n", *steps, *specA, *specB, len(params), *csvPath)
	return exitOK
}

// optimizerSpec is a parsed --a/--b value.
type optimizerSpec struct {
	rule optimizer.UpdateRuleOptimizer
	hp   optimizer.Hyperparams
}

// parseOptimizerSpec reads NAME[:k=v,...]: the optimizer's defaults with
// the given hyperparameters changed.
func parseOptimizerSpec(spec string) (optimizerSpec, error) {
	name, kvs, _ := strings.Cut(spec, ":")
	hp, err := optimizer.Defaults(name)
	if err != nil {
		return optimizerSpec{}, err
	}
	fields := map[string]*float64{"lr": &hp.LR, "momentum": &hp.Momentum, "beta1": &hp.Beta1, "beta2": &hp.Beta2,
		"eps": &hp.Eps, "alpha": &hp.Alpha, "weight_decay": &hp.WeightDecay, "clip_norm": &hp.ClipNorm}
	for _, kv := range strings.Split(kvs, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		dst, known := fields[strings.ReplaceAll(k, "-", "_")]
		if !ok || !known {
			return optimizerSpec{}, fmt.Errorf("bad hyperparameter %q in %q (keys: lr momentum beta1 beta2 eps alpha weight_decay clip_norm)", kv, spec)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return optimizerSpec{}, fmt.Errorf("hyperparameter %s: %v", k, err)
		}
		*dst = f
	}
	rule, err := optimizer.New(name, hp)
	if err != nil {
		return optimizerSpec{}, err
	}
	return optimizerSpec{rule: rule, hp: hp}, nil
}

// paramDistance is the L2 norm of the difference of a parameter between
// two networks.
func paramDistance(a, b network.Network, name string) (float64, error) {
	ta, err := network.FetchTensor(a, name)
	if err != nil {
		return 0, err
	}
	tb, err := network.FetchTensor(b, name)
	if err != nil {
		return 0, err
	}
	var sum float64
	switch da := ta.Data.(type) {
	case []float32:
		db, _ := tb.Data.([]float32)
		if len(db) != len(da) {
			return 0, fmt.Errorf("parameter %q differs in type or size between the networks", name)
		}
		for i, v := range da {
			d := float64(v) - float64(db[i])
			sum += d * d
		}
	case []float64:
		db, _ := tb.Data.([]float64)
		if len(db) != len(da) {
			return 0, fmt.Errorf("parameter %q differs in type or size between the networks", name)
		}
		for i, v := range da {
			d := v - db[i]
			sum += d * d
		}
	default:
		return 0, fmt.Errorf("parameter %q is tensor(%v)", name, ta.Type)
	}
	return math.Sqrt(sum), nil
}
