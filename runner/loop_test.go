package runner_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/runner"
)

type recorder struct{ kinds []runner.EventKind }

func (r *recorder) Event(e runner.Event) { r.kinds = append(r.kinds, e.Kind) }

type stopAt struct{ step int }

func (s stopAt) Event(e runner.Event) {
	if e.Kind == runner.AfterStep && e.Step == s.step {
		e.Runner.Stop(errors.New("stop"))
	}
}

func setup(t *testing.T, opt string, lr float64, epochs int, ls ...runner.Listener) (*runner.Runner, *optimizer.Hyperparams) {
	t.Helper()
	return setupWrapped(t, opt, lr, epochs, nil, ls...)
}

// setupWrapped is setup with the optimizer passed through wrap (when not
// nil), so a test can watch the steps.
func setupWrapped(t *testing.T, opt string, lr float64, epochs int, wrap func(optimizer.Optimizer, network.Network) optimizer.Optimizer, ls ...runner.Listener) (*runner.Runner, *optimizer.Hyperparams) {
	t.Helper()
	return setupWith(t, opt, lr, epochs, wrap, nil, ls...)
}

// setupWith is setupWrapped with the run's configuration passed through
// tweak (when not nil) before the runner is made.
func setupWith(t *testing.T, opt string, lr float64, epochs int, wrap func(optimizer.Optimizer, network.Network) optimizer.Optimizer, tweak func(*runner.Config), ls ...runner.Listener) (*runner.Runner, *optimizer.Hyperparams) {
	t.Helper()
	m, err := models.Preset("mlp", 1)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := network.AppendLoss(m, network.LossSoftmaxCrossEntropy, "y", "labels")
	if err != nil {
		t.Fatal(err)
	}
	net, err := backend.New("native", m, backend.Options{Frozen: runner.BatchNormStats(m.Graph)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { net.Close() })
	train, test, err := runner.ParseSpec("synthetic:classes=4,n=256,test=64")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := runner.NewShuffled(train, runner.SamplerOptions{BatchSize: 32, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	te, err := runner.NewOrdered(test, runner.SamplerOptions{BatchSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	hp, _ := optimizer.Defaults(opt)
	hp.LR = lr
	rule, err := optimizer.New(opt, hp)
	if err != nil {
		t.Fatal(err)
	}
	h := rule.(optimizer.Tunable).Hyperparameters()
	var o optimizer.Optimizer = optimizer.NewDriver(net, loss, rule, 0)
	if wrap != nil {
		o = wrap(o, net)
	}
	cfg := runner.Config{Net: net, Optimizer: o, Hyper: h,
		Input: "x", Labels: "labels", Output: "y", Loss: loss, Train: tr, Test: te, Epochs: epochs, Listeners: ls}
	if tweak != nil {
		tweak(&cfg)
	}
	r, err := runner.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r, h
}

func TestLoopLearns(t *testing.T) {
	for _, c := range []struct {
		opt string
		lr  float64
	}{{"sgd", 0.1}, {"adam", 1e-3}} {
		r, _ := setup(t, c.opt, c.lr, 3)
		res, err := r.Run()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: loss %.4f test loss %.4f accuracy %.3f", c.opt, res.Loss, res.TestLoss, res.TestAccuracy)
		if res.TestAccuracy < 0.9 || res.Steps != 24 || res.Epochs != 3 {
			t.Errorf("%s: %+v", c.opt, res)
		}
	}
}

func TestEventOrderAndStop(t *testing.T) {
	rec := &recorder{}
	r, _ := setup(t, "sgd", 0.01, 1, rec)
	if _, err := r.Run(); err != nil {
		t.Fatal(err)
	}
	B, E := runner.BeforeStep, runner.AfterStep
	want := []runner.EventKind{runner.BeforeTraining, runner.BeforeEpoch, runner.BeforeTrainingSet,
		B, E, B, E, B, E, B, E, B, E, B, E, B, E, B, E, runner.AfterTrainingSet, runner.BeforeTestSet,
		runner.BeforeTestBatch, runner.AfterTestBatch, runner.BeforeTestBatch, runner.AfterTestBatch,
		runner.AfterTestSet, runner.AfterEpoch, runner.AfterTraining}
	if len(rec.kinds) != len(want) {
		t.Fatalf("events %v, want %v", rec.kinds, want)
	}
	for i := range want {
		if rec.kinds[i] != want[i] {
			t.Fatalf("event %d is %v, want %v (all: %v)", i, rec.kinds[i], want[i], rec.kinds)
		}
	}
	rec = &recorder{}
	r, _ = setup(t, "sgd", 0.01, 2, stopAt{3}, rec)
	res, err := r.Run()
	if err == nil || err.Error() != "stop" || res.Steps != 3 || !res.Stopped {
		t.Fatalf("stop: %+v, %v", res, err)
	}
	if last := rec.kinds[len(rec.kinds)-1]; last != runner.AfterTraining || rec.kinds[len(rec.kinds)-2] != runner.AfterStep {
		t.Fatalf("after a stop: %v", rec.kinds)
	}
}

// evaluatedAt records the steps after which the test set was evaluated.
type evaluatedAt struct{ steps []int }

func (r *evaluatedAt) Event(e runner.Event) {
	if e.Kind == runner.AfterTestSet {
		r.steps = append(r.steps, e.Step)
	}
}

// With TestEvery, the test set is evaluated after every TestEvery steps
// and after the run's last step, once, whether epochs or steps end it.
func TestEvaluateEveryAndAtTheEnd(t *testing.T) {
	for _, c := range []struct {
		epochs, steps, every int
		want                 []int
	}{
		{epochs: 1, every: 3, want: []int{3, 6, 8}}, // 8 steps an epoch
		{epochs: 1, every: 4, want: []int{4, 8}},
		{epochs: 2, every: 5, want: []int{5, 10, 15, 16}},
		{steps: 5, every: 3, want: []int{3, 5}},
		{steps: 11, every: 3, want: []int{3, 6, 9, 11}},
		{epochs: 2, want: []int{8, 16}},
	} {
		rec := &evaluatedAt{}
		r, _ := setupWith(t, "sgd", 0.01, c.epochs, nil, func(cfg *runner.Config) { cfg.Steps, cfg.TestEvery = c.steps, c.every }, rec)
		res, err := r.Run()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rec.steps, c.want) {
			t.Errorf("epochs %d, steps %d, every %d: evaluated after steps %v, want %v", c.epochs, c.steps, c.every, rec.steps, c.want)
		}
		if math.IsNaN(res.TestAccuracy) {
			t.Errorf("epochs %d, steps %d, every %d: no final test accuracy", c.epochs, c.steps, c.every)
		}
	}
}

func TestSchedules(t *testing.T) {
	if got := (runner.StepDecay{Every: 10, Gamma: 0.1}).LR(1, 25, 0, 5, 100); got < 0.0099 || got > 0.0101 {
		t.Errorf("step decay %g", got)
	}
	if got := (runner.EpochDecay{Every: 1, Gamma: 0.5}).LR(1, 0, 2, 5, 100); got != 0.25 {
		t.Errorf("epoch decay %g", got)
	}
	c := runner.Cosine{Min: 0}
	if c.LR(1, 0, 0, 0, 100) != 1 || c.LR(1, 50, 0, 0, 100) > 0.5000001 || c.LR(1, 100, 0, 0, 100) > 1e-12 {
		t.Errorf("cosine")
	}
}

// accuracyWitness runs inference on each batch before the step and counts,
// with its own argmax, the rows classified right: what the runner's
// training accuracy must report for that step.
type accuracyWitness struct {
	optimizer.Optimizer
	net  network.Network
	want []float64
}

func (w *accuracyWitness) Step(batch map[string]onnx.Value) (float64, error) {
	out, err := w.net.Inference(batch)
	if err != nil {
		return 0, err
	}
	scores := out["y"].(*onnx.Tensor).Float32s()
	labels := batch["labels"].(*onnx.Tensor).Int64s()
	classes := len(scores) / len(labels)
	right := 0
	for i, l := range labels {
		row := scores[i*classes : (i+1)*classes]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		if int64(best) == l {
			right++
		}
	}
	w.want = append(w.want, float64(right)/float64(len(labels)))
	return w.Optimizer.Step(batch)
}

type trainAccuracies struct{ got []float64 }

func (a *trainAccuracies) Event(e runner.Event) {
	if e.Kind == runner.AfterStep {
		a.got = append(a.got, e.TrainAccuracy)
	}
}

// Every step reports the accuracy of its own batch under the parameters
// before its update.
func TestTrainAccuracyPerStep(t *testing.T) {
	var w *accuracyWitness
	rec := &trainAccuracies{}
	r, _ := setupWrapped(t, "sgd", 0.1, 2, func(o optimizer.Optimizer, n network.Network) optimizer.Optimizer {
		w = &accuracyWitness{Optimizer: o, net: n}
		return w
	}, rec)
	if _, err := r.Run(); err != nil {
		t.Fatal(err)
	}
	if len(rec.got) != 16 || len(w.want) != 16 {
		t.Fatalf("%d steps reported, %d witnessed; want 16", len(rec.got), len(w.want))
	}
	for i := range rec.got {
		if rec.got[i] != w.want[i] {
			t.Errorf("step %d: train accuracy %v, want %v", i+1, rec.got[i], w.want[i])
		}
	}
	if first, last := rec.got[0], rec.got[len(rec.got)-1]; !(last > first) {
		t.Errorf("training accuracy did not rise: %v", rec.got)
	}
}

func TestParseSchedule(t *testing.T) {
	for _, c := range []struct {
		spec string
		want runner.Schedule
	}{
		{"", nil}, {"constant", nil},
		{"step:100:0.5", runner.StepDecay{Every: 100, Gamma: 0.5}},
		{"epoch:2:0.1", runner.EpochDecay{Every: 2, Gamma: 0.1}},
		{"cosine", runner.Cosine{}}, {"cosine:1e-5", runner.Cosine{Min: 1e-5}},
	} {
		got, err := runner.ParseSchedule(c.spec)
		if err != nil || got != c.want {
			t.Errorf("ParseSchedule(%q) = %#v, %v; want %#v", c.spec, got, err, c.want)
		}
	}
	for _, spec := range []string{"step", "step:0:0.5", "step:10", "step:10:x", "epoch:-1:0.5", "cosine:1:2", "cosine:-1", "linear:3"} {
		if s, err := runner.ParseSchedule(spec); err == nil || !strings.Contains(err.Error(), spec) {
			t.Errorf("ParseSchedule(%q) = %#v, %v; want an error naming the spec", spec, s, err)
		}
	}
}
