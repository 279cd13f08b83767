package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/metrics/plot"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/runner"
	"github.com/deep500/deep500-go/tickers"
)

const trainSynopsis = "--model M.onnx|PRESET --dataset SPEC [--backend B] [--loss softmax-xent|mse] [--optimizer NAME] [--lr F] [--momentum F] [--beta1 F] [--beta2 F] [--eps F] [--alpha F] [--weight-decay F] [--batch N] [--epochs N | --steps N] [--no-shuffle] [--seed N] [--csv FILE] [--save-model OUT.onnx]"

// loadModel reads an ONNX file or builds a preset (a name without ".onnx"
// that is not an existing file).
func loadModel(spec string, seed uint64) (*onnx.Model, error) {
	if _, err := os.Stat(spec); err == nil || strings.HasSuffix(spec, ".onnx") {
		return onnx.Load(spec)
	}
	return models.Preset(spec, seed)
}

// trainingSetup is a model with a loss appended, built on a backend, and
// the names a training step feeds and reads.
type trainingSetup struct {
	net                         network.Network
	input, output, loss, labels string
}

// newTrainingSetup loads the model (file or preset), appends the loss of
// kind to its first output with a new labels input, and builds it on the
// backend. The presets' BatchNormalization runs in inference mode, so its
// running statistics are frozen: the optimizer must leave them alone.
func newTrainingSetup(modelSpec string, seed uint64, kind network.LossKind, backendName string, threads int) (*trainingSetup, error) {
	m, err := loadModel(modelSpec, seed)
	if err != nil {
		return nil, err
	}
	if len(m.Graph.Inputs) == 0 || len(m.Graph.Outputs) == 0 {
		return nil, fmt.Errorf("model %s has no input or no output", modelSpec)
	}
	s := &trainingSetup{output: m.Graph.Outputs[0].Name}
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
	if s.loss, err = network.AppendLoss(m, kind, s.output, ""); err != nil {
		return nil, err
	}
	s.labels = m.Graph.Inputs[len(m.Graph.Inputs)-1].Name
	s.net, err = backend.New(backendName, m, backend.Options{Threads: threads, Frozen: runner.BatchNormStats(m.Graph)})
	if err != nil {
		return nil, fmt.Errorf("%s backend: %w", backendName, err)
	}
	return s, nil
}

// cmdTrain trains a model with a reference or native optimizer.
func cmdTrain(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("train", trainSynopsis, stderr)
	modelSpec := fs.String("model", "", "the model: an ONNX `FILE` or a preset ("+strings.Join(models.PresetNames(), ", ")+")")
	dataset := fs.String("dataset", "", "the dataset `SPEC` (fashion-mnist, mnist:DIR, idx:DIR, cifar10:DIR, tensors:DIR, synthetic:...)")
	backendName := fs.String("backend", "native", "backend: "+strings.Join(backend.Known, ", "))
	lossName := fs.String("loss", "softmax-xent", "loss appended to the model's first output: softmax-xent or mse")
	optName := fs.String("optimizer", "sgd", "optimizer: "+strings.Join(optimizer.Names(), " "))
	impl := fs.String("impl", "reference", "optimizer implementation: reference (through the Network API) or native (inside the backend)")
	lr := fs.Float64("lr", -1, "learning rate (default: the optimizer's; -1 keeps it)")
	momentum := fs.Float64("momentum", -1, "momentum (default: the optimizer's; -1 keeps it)")
	beta1 := fs.Float64("beta1", -1, "Adam beta1 (default 0.9)")
	beta2 := fs.Float64("beta2", -1, "Adam beta2 (default 0.999)")
	eps := fs.Float64("eps", -1, "epsilon (default: the optimizer's; -1 keeps it)")
	alpha := fs.Float64("alpha", -1, "RMSprop smoothing constant (default 0.99)")
	wd := fs.Float64("weight-decay", -1, "weight decay (default: the optimizer's; -1 keeps it)")
	batch := fs.Int("batch", 64, "batch size")
	epochs := fs.Int("epochs", 0, "epochs to train (default 1 when --steps is not given)")
	steps := fs.Int("steps", 0, "optimizer steps to train")
	noShuffle := fs.Bool("no-shuffle", false, "visit the training samples in order")
	seed := fs.Uint64("seed", 1, "seed of the preset's parameters and the shuffling")
	nanDir := fs.String("nan-dir", "", "where a NaN/Inf loss abort writes the step's gradients (default: nan-gradients/ beside the CSV)")
	normalize := fs.Bool("normalize", true, "normalise the images of a known dataset (fashion-mnist, mnist, cifar10) by its per-channel mean and standard deviation")
	csvPath := fs.String("csv", "", "write one row per step and per evaluation to `FILE`")
	plotDir := fs.String("plot", "", "draw the run's figures (PNG and SVG) into `DIR`; the CSV goes to DIR/train.csv unless --csv names it")
	distributed := fs.String("distributed", "", "distributed scheme (not available yet)")
	saveModel := fs.String("save-model", "", "write the trained model to `OUT.onnx`")
	threads := fs.Int("threads", 0, "worker threads the backend may use (0: all cores)")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	switch {
	case len(rest) > 0:
		return usageError(fs, stderr, "unexpected argument %q", rest[0])
	case *modelSpec == "" || *dataset == "":
		return usageError(fs, stderr, "--model and --dataset are required")
	case *impl != "reference" && *impl != "native":
		return usageError(fs, stderr, "--impl must be reference or native, got %q", *impl)
	case *distributed != "":
		return usageError(fs, stderr, "--distributed is not available yet")
	case *epochs > 0 && *steps > 0:
		return usageError(fs, stderr, "give --epochs or --steps, not both")
	case *epochs < 0 || *steps < 0 || *batch <= 0 || *threads < 0:
		return usageError(fs, stderr, "--epochs, --steps and --threads must not be negative, --batch must be positive")
	}
	if *epochs == 0 && *steps == 0 {
		*epochs = 1
	}
	kind, err := network.ParseLossKind(*lossName)
	if err != nil || (kind != network.LossSoftmaxCrossEntropy && kind != network.LossMeanSquaredError) {
		return usageError(fs, stderr, "--loss must be softmax-xent or mse")
	}
	if kind == network.LossMeanSquaredError {
		return usageError(fs, stderr, "--loss mse needs one-hot float labels, which the datasets do not give yet")
	}
	hp, err := optimizer.Defaults(*optName)
	if err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	for _, o := range []struct {
		v   float64
		dst *float64
	}{{*lr, &hp.LR}, {*momentum, &hp.Momentum}, {*beta1, &hp.Beta1}, {*beta2, &hp.Beta2}, {*eps, &hp.Eps}, {*alpha, &hp.Alpha}, {*wd, &hp.WeightDecay}} {
		if o.v >= 0 {
			*o.dst = o.v
		}
	}
	rule, err := optimizer.New(*optName, hp)
	if err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	if _, err := backend.Get(*backendName); err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "d500 train: %v\n", err)
		return exitFail
	}

	setup, err := newTrainingSetup(*modelSpec, *seed, kind, *backendName, *threads)
	if err != nil {
		return fail(err)
	}
	net, input, output, loss, labels := setup.net, setup.input, setup.output, setup.loss, setup.labels
	defer net.Close()

	trainSet, testSet, err := runner.ParseSpec(*dataset)
	if err != nil {
		return fail(err)
	}
	var transforms []runner.Transform
	if *normalize {
		if n, ok := runner.StandardNormalize(*dataset); ok {
			transforms = append(transforms, n)
		}
	}
	opts := runner.SamplerOptions{BatchSize: *batch, Seed: *seed, Transforms: transforms}
	var tr, te *runner.Sampler
	if *noShuffle {
		tr, err = runner.NewOrdered(trainSet, opts)
	} else {
		tr, err = runner.NewShuffled(trainSet, opts)
	}
	if err != nil {
		return fail(err)
	}
	if testSet != nil {
		if te, err = runner.NewOrdered(testSet, runner.SamplerOptions{BatchSize: *batch, Transforms: transforms}); err != nil {
			return fail(err)
		}
	}
	listeners := []runner.Listener{&tickers.Summary{W: stdout}}
	if bar := tickers.NewProgress(stderr, tr.BatchesPerEpoch()); bar != nil {
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
		csvT = tickers.NewCSV(f)
		listeners = append(listeners, csvT)
	}
	// The NaN abort comes first, so no other ticker sees the step after it.
	nanAbort := tickers.NaNAbort{Dir: *nanDir}
	if nanAbort.Dir == "" && *csvPath != "" {
		nanAbort.Dir = filepath.Join(filepath.Dir(*csvPath), "nan-gradients")
	}
	listeners = append([]runner.Listener{nanAbort}, listeners...)
	var opt optimizer.Optimizer = optimizer.NewDriver(net, loss, rule, hp.ClipNorm)
	hyper := rule.(optimizer.Tunable).Hyperparameters()
	if *impl == "native" {
		nat, err := optimizer.NewNativeFor(*optName, hp, net, loss)
		if err != nil {
			return fail(fmt.Errorf("--impl native: %w", err))
		}
		opt, hyper = nat, nat.Hyperparameters()
	}
	r, err := runner.New(runner.Config{Net: net, Optimizer: opt,
		Hyper: hyper, Input: input, Labels: labels, Output: output, Loss: loss,
		Train: tr, Test: te, Epochs: *epochs, Steps: *steps, Listeners: listeners})
	if err != nil {
		return fail(err)
	}
	errInterrupted := errors.New("interrupted: stopped after the current step")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
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
	if csvT != nil && csvT.Err() != nil {
		return fail(fmt.Errorf("%s: %w", *csvPath, csvT.Err()))
	}
	if runErr != nil {
		return fail(runErr)
	}
	if *saveModel != "" {
		if err := saveTrained(net, *modelSpec, *seed, *saveModel); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "trained model written to %s\n", *saveModel)
	}
	if *csvPath != "" {
		fmt.Fprintf(stdout, "per-step figures written to %s\n", *csvPath)
	}
	if *plotDir != "" {
		files, err := plot.WriteFiles(*plotDir, *csvPath)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "%d figures written to %s\n", len(files), *plotDir)
	}
	_ = res
	return exitOK
}

// saveTrained writes the model as given (without the loss) with the
// network's current parameters as its initializers.
func saveTrained(net network.Network, spec string, seed uint64, out string) error {
	m, err := loadModel(spec, seed)
	if err != nil {
		return err
	}
	params := map[string]bool{}
	for _, p := range net.Params() {
		params[p] = true
	}
	for _, in := range m.Graph.Initializers {
		if !params[in.Name] {
			continue
		}
		t, err := network.FetchTensor(net, in.Name)
		if err != nil {
			return fmt.Errorf("save model: parameter %q: %w", in.Name, err)
		}
		in.Tensor = t.Clone()
	}
	return onnx.Save(m, out)
}
