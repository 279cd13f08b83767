package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/runner"
	"github.com/deep500/deep500-go/transform/autodiff"
)

const exportTrainingSynopsis = "--model M.onnx|PRESET --loss softmax-xent|mse|l1|bce-logits [--optimizer NAME [--lr F] [--momentum F] [--beta1 F] [--beta2 F] [--eps F] [--alpha F] [--weight-decay F]] [--batch N] [--memory-limit SIZE] [--batchnorm batch|frozen] [--seed N] [--init he|pytorch] -o train.onnx"

// cmdExportTraining writes a model's training graph: the model with a
// loss on its first output and the gradients of every parameter (and,
// with --optimizer, their updated values) as extra outputs, in standard
// ONNX operators that any engine runs.
func cmdExportTraining(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("export-training", exportTrainingSynopsis, stderr)
	modelSpec := fs.String("model", "", "the model: an ONNX `FILE` or a preset ("+strings.Join(models.PresetNames(), ", ")+")")
	lossName := fs.String("loss", "softmax-xent", "loss appended to the model's first output: "+lossKindList()+" (all of int64 class labels)")
	optName := fs.String("optimizer", "", "also write the update of this optimizer ("+strings.Join(autodiff.UpdateOptimizers(), " ")+"): the graph then outputs each parameter's next value and the optimizer's next state")
	hpFlags := addHyperparamFlags(fs)
	batch := fs.Int("batch", 64, "the batch size the graph is measured with; the batch dimension stays free when the model's input declares it symbolic")
	memLimit := memoryLimitFlag(fs)
	batchNorm := fs.String("batchnorm", "batch", "BatchNormalization in the training graph: batch (batch statistics; the updated running ones are outputs) or frozen")
	seed := fs.Uint64("seed", 1, "seed of a preset's parameters")
	initName := addInitFlag(fs)
	out := fs.String("o", "", "write the training graph to `FILE.onnx`")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	switch {
	case len(rest) > 0:
		return usageError(fs, stderr, "unexpected argument %q", rest[0])
	case *modelSpec == "":
		return usageError(fs, stderr, "--model is required")
	case *out == "":
		return usageError(fs, stderr, "-o FILE.onnx is required")
	case *batch <= 0:
		return usageError(fs, stderr, "--batch must be positive, got %d", *batch)
	case !slices.Contains(batchNormModes, *batchNorm):
		return usageError(fs, stderr, "--batchnorm must be batch or frozen, got %q", *batchNorm)
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
	var hp optimizer.Hyperparams
	if *optName != "" {
		if !slices.Contains(autodiff.UpdateOptimizers(), *optName) {
			return usageError(fs, stderr, "--optimizer %q: the updates written as ONNX are %s", *optName, strings.Join(autodiff.UpdateOptimizers(), ", "))
		}
		if hp, err = hpFlags.resolve(*optName); err == nil {
			_, err = optimizer.New(*optName, hp)
		}
		if err != nil {
			return usageError(fs, stderr, "%v", err)
		}
	}
	if code := checkOutputs(fs, stderr, fileOut("o", *out)); code >= 0 {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "d500 export-training: %v\n", err)
		return exitFail
	}
	m, err := source.load()
	if err != nil {
		return fail(err)
	}
	ex, err := exportTraining(m, kind, *batchNorm == "batch", *batch, memLimit.bytes, *optName, hp)
	if err != nil {
		return fail(err)
	}
	if err := onnx.Save(ex.model, *out); err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "training graph of %s written to %s (ai.onnx opset %d, %d nodes)\n", *modelSpec, *out, ex.opset, len(ex.model.Graph.Nodes))
	fmt.Fprintf(stdout, "  feed:   %s\n", strings.Join(ex.feeds, ", "))
	fmt.Fprintf(stdout, "  loss:   %s; gradients: %d (%s, ...)\n", ex.loss, ex.grads, network.GradName(ex.firstParam))
	if ex.update != nil {
		fmt.Fprintf(stdout, "  update: %s; feed %s (learning rate, default %g) and %s (step number, from 1) each step, the parameters and the state (%d tensors, inputs named optimizer.*) from the last step's outputs <name>.next\n",
			*optName, ex.update.LR, hp.LR, ex.update.Step, len(ex.update.State))
	}
	return exitOK
}

// exported is a training graph and what a user feeds and reads.
type exported struct {
	model      *onnx.Model
	opset      int64
	feeds      []string
	loss       string
	grads      int
	firstParam string
	update     *autodiff.UpdateStep
}

// exportTraining builds the training graph of m: its loss, the gradients
// of its trainable parameters, and optionally an optimizer's update. The
// shapes are measured on the native backend with zero batches of batch
// and batch+1 samples, so that a symbolic batch dimension stays free.
func exportTraining(m *onnx.Model, kind network.LossKind, batchStats bool, batch int, memLimit int64, optName string, hp optimizer.Hyperparams) (*exported, error) {
	if len(m.Graph.Inputs) == 0 || len(m.Graph.Outputs) == 0 {
		return nil, fmt.Errorf("the model has no input or no output")
	}
	if batchStats {
		if _, err := network.BatchNormTraining(m); err != nil {
			return nil, fmt.Errorf("%w (--batchnorm frozen exports it with fixed statistics)", err)
		}
	}
	loss, err := network.AppendClassLoss(m, kind, m.Graph.Outputs[0].Name, "")
	if err != nil {
		return nil, err
	}
	low, err := autodiff.Lower(m)
	if err != nil {
		return nil, err
	}
	frozen := runner.BatchNormStats(low.Graph)
	var wrt []string
	for _, in := range low.Graph.Initializers {
		if in.Tensor.Type.IsFloat() && !slices.Contains(frozen, in.Name) {
			wrt = append(wrt, in.Name)
		}
	}
	if len(wrt) == 0 {
		return nil, fmt.Errorf("the model has no floating-point parameter to train")
	}
	feedsA, err := zeroFeeds(low.Graph, batch, memLimit)
	if err != nil {
		return nil, err
	}
	feedsB, err := zeroFeeds(low.Graph, batch+1, memLimit)
	if err != nil {
		return nil, err
	}
	var feedNames []string
	for _, in := range low.Graph.Inputs {
		if _, ok := feedsA[in.Name]; ok {
			feedNames = append(feedNames, in.Name)
		}
	}
	build := func(pm *onnx.Model) (network.Network, error) {
		return backend.New("native", pm, backend.Options{})
	}
	info, err := autodiff.Probe(build, low, feedsA, feedsB)
	if err != nil {
		return nil, err
	}
	res, err := autodiff.Gradients(low, autodiff.Options{Loss: loss, WRT: wrt, Info: info})
	if err != nil {
		return nil, err
	}
	ex := &exported{model: res.Model, opset: res.Opset, feeds: feedNames, loss: loss, grads: len(res.Grads), firstParam: wrt[0]}
	if optName != "" {
		st, err := autodiff.AppendUpdate(res, optName, hp)
		if err != nil {
			return nil, err
		}
		ex.update = st
		ex.model = st.WithDefaults(hp.LR)
	} else {
		ex.model = autodiff.DeclareParams(res.Model, wrt)
	}
	return ex, nil
}

// zeroFeeds makes a zero tensor for every graph input without an
// initializer, its symbolic dims set to batch; inputs that would not fit
// memLimit (0: no limit) are an error naming them, as run's random inputs.
func zeroFeeds(g *onnx.Graph, batch int, memLimit int64) (map[string]onnx.Value, error) {
	feeds := map[string]onnx.Value{}
	budget := &inputBudget{limit: memLimit}
	for _, in := range g.Inputs {
		if g.Initializer(in.Name) != nil {
			continue
		}
		t := in.Type
		if t == nil || t.Kind != onnx.TensorKind || !t.HasShape || t.Elem == onnx.Undefined {
			return nil, fmt.Errorf("input %q has no declared tensor type and shape: the training graph cannot be measured", in.Name)
		}
		shape := make([]int, len(t.Shape))
		for i, d := range t.Shape {
			if d.Param != "" || d.Size <= 0 {
				shape[i] = batch
			} else {
				shape[i] = int(d.Size)
			}
		}
		if err := budget.take(in.Name, t.Elem, shape); err != nil {
			return nil, err
		}
		feeds[in.Name] = onnx.NewTensor(t.Elem, shape...)
	}
	return feeds, nil
}
