package cli

import (
	"errors"
	"fmt"
	flag "github.com/spf13/pflag"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/metrics/plot"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/runner"
	"github.com/deep500/deep500-go/runner/checkpoint"
	"github.com/deep500/deep500-go/tickers"
)

const trainSynopsis = "--model M.onnx|PRESET --dataset SPEC [--backend B] [--loss softmax-xent|mse] [--optimizer NAME] [--lr F] [--momentum F] [--beta1 F] [--beta2 F] [--eps F] [--alpha F] [--weight-decay F] [--batch N] [--epochs N | --steps N] [--no-shuffle] [--seed N] [--init he|pytorch] [--batchnorm batch|frozen] [--lr-schedule SPEC] [--test-every N] [--time-limit D] [--target-accuracy F] [--csv FILE] [--json FILE] [--plot DIR] [--save-model OUT.onnx] [--checkpoint-dir DIR [--checkpoint-every N]] [--resume DIR] [--write-recipe FILE] [--mllog FILE] [--memory-limit SIZE] [--distributed SCHEME [--np N]]"

// trainingSetup is a model with a loss appended, built on a backend, and
// the names a training step feeds and reads.
type trainingSetup struct {
	net                         network.Network
	input, output, loss, labels string
	// With BatchNormalization in batch mode: the statistics to copy back
	// after each step, and the inference-form network evaluations run on
	// (nil when not asked for or not needed).
	stats []network.RunningStat
	eval  network.Network
}

// setupOptions say what newTrainingSetup builds.
type setupOptions struct {
	model   modelSource
	loss    network.LossKind
	backend string
	threads int
	// batchNorm is "batch" (BatchNormalization trains on batch statistics
	// and updates its running ones) or "frozen" (it keeps the model's
	// mode: the presets' inference form, running statistics fixed).
	batchNorm string
	// eval also builds the network evaluations run on, when batch mode
	// makes it differ from the training one.
	eval bool
}

// batchNormModes are the values of --batchnorm.
var batchNormModes = []string{"batch", "frozen"}

// newTrainingSetup loads the model (file or preset), appends the loss of
// kind to its first output with a new input of int64 class labels (one-hot
// encoded inside the graph for the losses that compare tensors: see
// network.AppendClassLoss), and builds it on the backend. Running
// statistics are never trained by the optimizer (they are frozen
// parameters); in batch mode they follow the batches instead.
func newTrainingSetup(o setupOptions) (*trainingSetup, error) {
	build := func(training bool) (*onnx.Model, []network.RunningStat, error) {
		m, err := o.model.load()
		if err != nil {
			return nil, nil, err
		}
		if len(m.Graph.Inputs) == 0 || len(m.Graph.Outputs) == 0 {
			return nil, nil, fmt.Errorf("model %s has no input or no output", o.model.spec)
		}
		var stats []network.RunningStat
		if training && o.batchNorm == "batch" {
			if stats, err = network.BatchNormTraining(m); err != nil {
				return nil, nil, fmt.Errorf("%w (--batchnorm frozen trains it with fixed statistics)", err)
			}
		}
		return m, stats, nil
	}
	m, stats, err := build(true)
	if err != nil {
		return nil, err
	}
	s := &trainingSetup{output: m.Graph.Outputs[0].Name, stats: stats}
	inits := map[string]bool{}
	for _, in := range m.Graph.Initializers {
		inits[in.Name] = true
	}
	for _, in := range m.Graph.Inputs {
		if !inits[in.Name] {
			s.input = in.Name
			break
		}
	}
	newNet := func(m *onnx.Model) (network.Network, string, error) {
		loss, err := network.AppendClassLoss(m, o.loss, s.output, "")
		if err != nil {
			return nil, "", err
		}
		net, err := backend.New(o.backend, m, backend.Options{Threads: o.threads, Frozen: runner.BatchNormStats(m.Graph), SkipInputGradients: true})
		if err != nil {
			return nil, "", fmt.Errorf("%s backend: %w", o.backend, err)
		}
		return net, loss, nil
	}
	if s.net, s.loss, err = newNet(m); err != nil {
		if len(stats) > 0 && errors.Is(err, network.ErrUnsupported) {
			err = fmt.Errorf("%w (--batchnorm frozen trains BatchNormalization with fixed statistics)", err)
		}
		return nil, err
	}
	s.labels = m.Graph.Inputs[len(m.Graph.Inputs)-1].Name
	if o.eval && len(stats) > 0 {
		em, _, err := build(false)
		if err == nil {
			s.eval, _, err = newNet(em)
		}
		if err != nil {
			s.net.Close()
			return nil, fmt.Errorf("evaluation network: %w", err)
		}
	}
	return s, nil
}

// Close releases the networks.
func (s *trainingSetup) Close() {
	s.net.Close()
	if s.eval != nil {
		s.eval.Close()
	}
}

// defaultTestEvery is how often a run of total steps, perEpoch to an
// epoch, is evaluated when --test-every is not given: after each epoch
// (0) once that gives at least 4 points of the test accuracy curve, else
// about 8 times over the run, so that a short run's curve is a curve and
// not one point at its end.
func defaultTestEvery(total, perEpoch int) int {
	if perEpoch <= 0 || total >= 4*perEpoch {
		return 0
	}
	return max(1, (total+7)/8)
}

// given reports whether the flag name was set on the command line.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// cmdTrain trains a model with a reference or native optimizer.
func cmdTrain(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("train", trainSynopsis, stderr)
	modelSpec := fs.String("model", "", "the model: an ONNX `FILE` or a preset ("+strings.Join(models.PresetNames(), ", ")+")")
	dataset := fs.String("dataset", "", "the dataset `SPEC` (fashion-mnist, mnist:DIR, idx:DIR, cifar10:DIR, tensors:DIR, synthetic:...)")
	backendName := fs.String("backend", "native", "backend: "+strings.Join(backend.Known, ", "))
	lossName := fs.String("loss", "softmax-xent", "loss appended to the model's first output: "+lossKindList()+" (all trained on class labels)")
	optName := fs.String("optimizer", "sgd", "optimizer: "+strings.Join(optimizer.Names(), " "))
	impl := fs.String("impl", "reference", "optimizer implementation: reference (through the Network API) or native (inside the backend)")
	hpFlags := addHyperparamFlags(fs)
	batch := fs.Int("batch", 64, "batch size")
	epochs := fs.Int("epochs", 0, "epochs to train (default 1 when --steps is not given)")
	steps := fs.Int("steps", 0, "optimizer steps to train")
	noShuffle := fs.Bool("no-shuffle", false, "visit the training samples in order")
	seed := fs.Uint64("seed", 1, "seed of the preset's parameters and the shuffling")
	initName := addInitFlag(fs)
	nanDir := fs.String("nan-dir", "", "where a NaN/Inf loss abort writes the step's gradients (default: nan-gradients/ beside the CSV)")
	normalize := fs.Bool("normalize", true, "normalise the images of a known dataset (fashion-mnist, mnist, cifar10) by its per-channel mean and standard deviation")
	csvPath := fs.String("csv", "", "write one row per step and per evaluation to `FILE`")
	jsonPath := fs.String("json", "", "write what was trained and how it ended (figures, interruption, environment) as JSON to `FILE`")
	plotDir := fs.String("plot", "", "draw the run's figures (PNG and SVG) into `DIR`; the CSV goes to DIR/train.csv unless --csv names it")
	dist := addDistributedFlags(fs) // train_distributed.go
	saveModel := fs.String("save-model", "", "write the trained model to `OUT.onnx`")
	threads := fs.Int("threads", 0, "worker threads the backend may use (0: all cores)")
	memLimit := memoryLimitFlag(fs)
	batchNorm := fs.String("batchnorm", "batch", "BatchNormalization while training: batch (batch statistics, running ones updated, as PyTorch's train mode) or frozen (the model's own mode; the presets' running statistics stay fixed)")
	lrSchedule := fs.String("lr-schedule", "", "learning-rate `SPEC`: "+runner.ScheduleSpecs+"; default constant")
	testEvery := fs.Int("test-every", 0, "evaluate on the test set after every `N` steps (0: after each epoch; default: about 8 times over a run shorter than 4 epochs, else after each epoch)")
	timeLimit := fs.Duration("time-limit", 0, "stop gracefully after the first step or evaluation past this wall time (e.g. 10m; 0: no limit)")
	targetAcc := fs.Float64("target-accuracy", 0, "stop gracefully once an evaluation reaches this test accuracy (a fraction; 0: never)")
	ckpt := addCheckpointFlags(fs) // train_checkpoint.go
	writeRecipe := fs.String("write-recipe", "", "write the run as a recipe (`FILE`.json) for d500 recipe run: its choices, and --target-accuracy as the acceptance target")
	mllogPath := fs.String("mllog", "", "write MLPerf-style :::MLLOG lines (run_start, epoch_start, eval_accuracy, run_stop) to `FILE`")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	// A resumed run takes its checkpoint's arguments first.
	var resumeFrom *checkpoint.Checkpoint
	if *ckpt.resume != "" {
		cp, err := checkpoint.Latest(*ckpt.resume)
		if err != nil {
			return usageError(fs, stderr, "--resume: %v", err)
		}
		dirGiven := given(fs, "checkpoint-dir")
		if err := applyCheckpointArgs(fs, cp); err != nil {
			return usageError(fs, stderr, "--resume: %v", err)
		}
		if !dirGiven && *ckpt.dir != "" {
			// The resumed run checkpoints where it resumed from (a copy
			// of a checkpoint goes on in its own folder).
			fs.Set("checkpoint-dir", *ckpt.resume)
		}
		resumeFrom = cp
	}
	switch {
	case len(rest) > 0:
		return usageError(fs, stderr, "unexpected argument %q", rest[0])
	case *modelSpec == "" || *dataset == "":
		return usageError(fs, stderr, "--model and --dataset are required")
	case *impl != "reference" && *impl != "native":
		return usageError(fs, stderr, "--impl must be reference or native, got %q", *impl)
	case *epochs > 0 && *steps > 0:
		return usageError(fs, stderr, "give --epochs or --steps, not both")
	case *epochs < 0 || *steps < 0 || *batch <= 0 || *threads < 0:
		return usageError(fs, stderr, "--epochs, --steps and --threads must not be negative, --batch must be positive")
	case given(fs, "epochs") && *epochs == 0, given(fs, "steps") && *steps == 0:
		return usageError(fs, stderr, "--epochs and --steps must be positive when given (leave both out for one epoch)")
	}
	epochsDefaulted := *epochs == 0 && *steps == 0
	if epochsDefaulted {
		*epochs = 1
	}
	kind, err := network.ParseLossKind(*lossName)
	if err != nil {
		return usageError(fs, stderr, "--loss: %v", err)
	}
	policy, err := models.ParseInit(*initName)
	if err != nil {
		return usageError(fs, stderr, "--init: %v", err)
	}
	source := modelSource{spec: *modelSpec, seed: *seed, init: policy}
	if err := source.check(); err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	schedule, err := runner.ParseSchedule(*lrSchedule)
	if err != nil {
		return usageError(fs, stderr, "--lr-schedule: %v", err)
	}
	switch {
	case *timeLimit < 0:
		return usageError(fs, stderr, "--time-limit must not be negative")
	case *targetAcc < 0 || *targetAcc > 1:
		return usageError(fs, stderr, "--target-accuracy is a fraction in [0, 1], got %g", *targetAcc)
	case *testEvery < 0:
		return usageError(fs, stderr, "--test-every must not be negative")
	case !slices.Contains(batchNormModes, *batchNorm):
		return usageError(fs, stderr, "--batchnorm must be batch or frozen, got %q", *batchNorm)
	}
	if err := ckpt.check(); err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	hp, err := hpFlags.resolve(*optName)
	if err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	rule, err := optimizer.New(*optName, hp)
	if err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	if _, err := backend.Get(*backendName); err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	if err := dist.check(*impl); err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	if code := checkOutputs(fs, stderr, fileOut("csv", *csvPath), fileOut("json", *jsonPath), fileOut("save-model", *saveModel), dirOut("plot", *plotDir), dirOut("nan-dir", *nanDir),
		fileOut("write-recipe", *writeRecipe), fileOut("mllog", *mllogPath)); code >= 0 {
		return code
	}
	if dist.relaunch() {
		return dist.launch(args, stdout, stderr)
	}
	if *writeRecipe != "" && dist.isRoot() {
		if err := writeRunRecipe(fs, *writeRecipe, epochsDefaulted); err != nil {
			fmt.Fprintf(stderr, "d500 train: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(stdout, "recipe written to %s\n", *writeRecipe)
	}
	fail := func(err error) int {
		dist.abort(err) // ends every rank of a distributed run
		fmt.Fprintf(stderr, "d500 train: %v\n", err)
		return exitFail
	}
	if err := dist.start(&stdout, csvPath, plotDir, saveModel); err != nil {
		return fail(err)
	}
	defer dist.finish()

	// The dataset first: a --dataset that cannot be read (or is too large
	// for --memory-limit) is bad usage, found before the model is built.
	trainSet, testSet, err := runner.ParseSpecWithin(*dataset, memLimit.bytes)
	if err != nil {
		fail(err)
		return exitUsage
	}
	setup, err := newTrainingSetup(setupOptions{model: source, loss: kind, backend: *backendName,
		threads: *threads, batchNorm: *batchNorm, eval: true})
	if err != nil {
		return fail(err)
	}
	net, input, output, loss, labels := setup.net, setup.input, setup.output, setup.loss, setup.labels
	defer setup.Close()

	trainSet, trainSeed, err := dist.trainSet(trainSet, *seed, !*noShuffle)
	if err != nil {
		return fail(err)
	}
	if n := trainSet.Len(); *batch > n && n > 0 {
		fmt.Fprintf(stderr, "d500 train: --batch %d is more than the %d training samples: batches of %d\n", *batch, n, n)
		*batch = n
	}
	var transforms []runner.Transform
	if *normalize {
		if n, ok := runner.StandardNormalize(*dataset); ok {
			transforms = append(transforms, n)
		}
	}
	opts := runner.SamplerOptions{BatchSize: *batch, Seed: trainSeed, Transforms: transforms}
	var tr, te *runner.Sampler
	if *noShuffle {
		tr, err = runner.NewOrdered(trainSet, opts)
	} else {
		tr, err = runner.NewShuffled(trainSet, opts)
	}
	if err != nil {
		return fail(err)
	}
	if testSet != nil && dist.isRoot() {
		if te, err = runner.NewOrdered(testSet, runner.SamplerOptions{BatchSize: *batch, Transforms: transforms}); err != nil {
			return fail(err)
		}
	}
	cost := tickers.NewStepCost(3)
	listeners := []runner.Listener{&tickers.Summary{W: stdout}, cost}
	total := *steps // the bar counts to the run's end: its steps, or its epochs'
	if total == 0 {
		total = *epochs * tr.BatchesPerEpoch()
	}
	if bar := tickers.NewProgress(stderr, total); bar != nil {
		listeners = append(listeners, bar) // only on a terminal
	}
	var csvT *tickers.CSV
	if *plotDir != "" && *csvPath == "" {
		if err := os.MkdirAll(*plotDir, 0o755); err != nil {
			return fail(err)
		}
		*csvPath = filepath.Join(*plotDir, "train.csv")
	}
	if *csvPath != "" {
		if err := os.MkdirAll(filepath.Dir(*csvPath), 0o755); err != nil {
			return fail(err)
		}
		f, err := os.Create(*csvPath)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		// A resumed run's CSV starts with the rows of the run so far.
		var prior []byte
		if resumeFrom != nil {
			if prior = resumeFrom.CSV; prior == nil {
				fmt.Fprintf(stderr, "d500 train: checkpoint %s holds no CSV (its run wrote none): %s starts at step %d\n",
					resumeFrom.Dir, *csvPath, resumeFrom.Meta.State.Steps)
			}
		}
		if csvT, err = dist.newCSV(f, prior); err != nil {
			return fail(fmt.Errorf("--resume: %s: %w", *csvPath, err))
		}
		listeners = append(listeners, csvT)
	}
	// The NaN abort comes first, so no other ticker sees the step after it.
	nanAbort := tickers.NaNAbort{Dir: *nanDir}
	if nanAbort.Dir == "" && *csvPath != "" {
		nanAbort.Dir = filepath.Join(filepath.Dir(*csvPath), "nan-gradients")
	}
	listeners = append([]runner.Listener{nanAbort}, listeners...)
	if *timeLimit > 0 {
		abort := tickers.TimeAbort{Limit: *timeLimit}
		if resumeFrom != nil {
			abort.From = resumeFrom.Meta.State.Seconds // the limit is this process's
		}
		listeners = append(listeners, abort)
	}
	var tta *tickers.TimeToAccuracy
	if *targetAcc > 0 {
		tta = &tickers.TimeToAccuracy{Target: *targetAcc}
		listeners = append(listeners, tta, tickers.AccuracyAbort{Target: *targetAcc})
	}
	var mllog *tickers.MLLog
	if *mllogPath != "" && dist.isRoot() {
		f, err := os.Create(*mllogPath)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		mllog = &tickers.MLLog{W: f, Target: *targetAcc}
		listeners = append(listeners, mllog)
	}
	var opt optimizer.Optimizer = optimizer.NewDriver(net, loss, rule, hp.ClipNorm)
	hyper := rule.(optimizer.Tunable).Hyperparameters()
	if *impl == "native" {
		nat, err := optimizer.NewNativeFor(*optName, hp, net, loss)
		if err != nil {
			return fail(fmt.Errorf("--impl native: %w", err))
		}
		opt, hyper = nat, nat.Hyperparameters()
	}
	if opt, err = dist.wrap(opt, net, loss, rule); err != nil {
		return fail(err)
	}
	var ckptr *checkpointer
	if *ckpt.dir != "" && dist.isRoot() {
		// An optimizer whose state cannot be saved is found now, not
		// after the run.
		if _, err := optimizer.StateOf(opt); err != nil {
			return fail(fmt.Errorf("--checkpoint-dir: %w", err))
		}
		ckptr = &checkpointer{dir: *ckpt.dir, every: *ckpt.every, keep: *ckpt.keep, args: runArgs(fs), net: net, source: source,
			opt: opt, optName: *optName, impl: *impl, backend: *backendName, csvPath: *csvPath, stdout: stdout, threads: *threads}
	}
	var resumeState *runner.State
	if resumeFrom != nil {
		if err := restoreCheckpoint(resumeFrom, net, opt, *optName, *impl, *backendName); err != nil {
			return fail(err)
		}
		resumeState = &resumeFrom.Meta.State
		fmt.Fprintf(stdout, "resuming from %s at step %d (epoch %d, batch %d)\n", resumeFrom.Dir, resumeState.Steps, resumeState.Epoch+1, resumeState.Batch)
	}
	if !given(fs, "test-every") {
		*testEvery = defaultTestEvery(total, tr.BatchesPerEpoch())
	}
	cfg := runner.Config{Net: net, Optimizer: opt,
		Hyper: hyper, Input: input, Labels: labels, Output: output, Loss: loss,
		RunningStats: setup.stats, Eval: setup.eval, Schedule: schedule, Train: tr, Test: te, Epochs: *epochs, Steps: *steps,
		TestEvery: *testEvery, Listeners: listeners, Resume: resumeState}
	if ckptr != nil {
		cfg.Checkpoint = ckptr.hook
	}
	r, err := runner.New(cfg)
	if err != nil {
		return fail(err)
	}
	desc := runDescription{source: source, backend: *backendName, dataset: *dataset,
		train: trainSet, test: testSet, optimizer: *optName, impl: *impl, lr: hyper.LR, batch: *batch,
		epochs: *epochs, step: *steps, perEpoch: tr.BatchesPerEpoch(), shuffle: !*noShuffle}
	desc.scheme, desc.ranks = dist.ranks()
	fmt.Fprintln(stdout, desc)
	errInterrupted := errors.New("interrupted: stopped after the current step")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-sig:
			r.Stop(errInterrupted)
		case <-done:
		}
	}()
	res, runErr := r.Run()
	// What was recorded is written whatever ended the run: the CSV is
	// flushed row by row, the figures are drawn from it, and the model is
	// saved unless the run ended on an error other than an interruption
	// (a NaN loss leaves parameters not worth keeping).
	var firstErr error
	failed := func(err error) int {
		if firstErr == nil {
			firstErr = err
		}
		fmt.Fprintf(stderr, "d500 train: %v\n", err)
		return exitFail
	}
	status := exitOK
	if csvT != nil && csvT.Err() != nil {
		status = failed(fmt.Errorf("%s: %w", *csvPath, csvT.Err()))
	}
	if runErr != nil {
		status = failed(runErr)
	}
	interrupted := errors.Is(runErr, errInterrupted)
	// The final checkpoint: also of a run interrupted or stopped by a
	// limit, not of one that failed (a NaN loss leaves nothing worth
	// resuming; the periodic checkpoints before it stay).
	if ckptr != nil && (runErr == nil || interrupted) {
		if err := ckptr.write(r.State()); err != nil {
			status = failed(err)
		}
	}
	if *saveModel != "" && (runErr == nil || interrupted) {
		if err := saveTrained(net, source, *saveModel); err != nil {
			status = failed(err)
		} else {
			fmt.Fprintf(stdout, "trained model written to %s\n", *saveModel)
		}
	}
	if mllog != nil && mllog.Err() != nil {
		status = failed(fmt.Errorf("%s: %w", *mllogPath, mllog.Err()))
	}
	if *csvPath != "" && (csvT == nil || csvT.Err() == nil) {
		fmt.Fprintf(stdout, "per-step figures written to %s\n", *csvPath)
	}
	if *plotDir != "" && (csvT == nil || csvT.Err() == nil) {
		if files, err := plot.WriteFiles(*plotDir, *csvPath); err != nil {
			status = failed(err)
		} else {
			fmt.Fprintf(stdout, "%d figures written to %s\n", len(files), *plotDir)
		}
	}
	if *jsonPath != "" && dist.isRoot() {
		rep := metrics.TrainReport{Environment: metrics.NewEnvironment(*threads, nil), Model: *modelSpec, Dataset: *dataset, Backend: *backendName,
			Optimizer: *optName, Impl: *impl, Hyperparams: hp, Batch: *batch, Seed: *seed, PlannedEpochs: *epochs, PlannedSteps: *steps,
			Interrupted: interrupted, CSV: *csvPath, Plots: *plotDir, SavedModel: *saveModel}
		rep.Distributed, rep.Ranks = dist.ranks()
		setTrainResult(&rep, res)
		if tta != nil {
			rep.TargetAccuracy = tta.Target
			if tta.Reached {
				rep.Target = &metrics.TargetReached{Epoch: tta.Epoch, Steps: tta.Steps, Samples: tta.Samples, Seconds: tta.Seconds, TestAccuracy: tta.TestAccuracy}
			}
		}
		if ms, allocs, ok := cost.Medians(); ok {
			rep.StepMillis, rep.AllocsPerStep = &ms, &allocs
		}
		if runErr != nil && !interrupted {
			rep.Error = runErr.Error()
		}
		if err := writeTrainReport(*jsonPath, &rep); err != nil {
			status = failed(err)
		} else {
			fmt.Fprintf(stdout, "report written to %s\n", *jsonPath)
		}
	}
	if firstErr != nil {
		// In a distributed run the other ranks may be waiting for this
		// one in a collective: end them all, now that what this rank
		// had to write is written.
		dist.abort(firstErr)
	}
	if interrupted && firstErr == runErr {
		return exitInterrupted // nothing failed besides the stop itself
	}
	return status
}

// lossKindList names the losses --loss accepts.
func lossKindList() string {
	var names []string
	for _, k := range network.LossKinds() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

// saveTrained writes the model as given (without the loss) with the
// network's current parameters as its initializers.
func saveTrained(net network.Network, source modelSource, out string) error {
	m, err := source.load()
	if err == nil {
		m, err = withParams(m, net)
	}
	if err != nil {
		return fmt.Errorf("save model: %w", err)
	}
	return onnx.Save(m, out)
}
