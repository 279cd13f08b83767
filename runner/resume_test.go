package runner_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/runner"
)

// rowRecorder keeps what a CSV row holds, the seconds excepted, with the
// losses as bits.
type rowRecorder struct{ rows []string }

func (r *rowRecorder) Event(e runner.Event) {
	switch e.Kind {
	case runner.AfterStep, runner.AfterTestSet:
		r.rows = append(r.rows, fmt.Sprintf("%v e%d s%d n%d loss=%x acc=%x test=%x lr=%x", e.Kind, e.Epoch, e.Step, e.Samples,
			math.Float64bits(e.Loss), math.Float64bits(e.TrainAccuracy), math.Float64bits(e.TestAccuracy), math.Float64bits(e.LR)))
	}
}

// resumeRun is a run of the mlp preset on synthetic data with SGD (no
// state of its own), a step schedule and an evaluation every 3 steps:
// everything a resumed run must take up where the first left it.
type resumeRun struct {
	net    network.Network
	loss   string
	cfg    runner.Config
	record *rowRecorder
}

func newResumeRun(t *testing.T, steps int) *resumeRun {
	t.Helper()
	m, err := models.Preset("mlp", 1)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := network.AppendLoss(m, network.LossSoftmaxCrossEntropy, "y", "labels")
	if err != nil {
		t.Fatal(err)
	}
	net, err := backend.New("native", m, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { net.Close() })
	train, test, err := runner.ParseSpec("synthetic:classes=4,n=200,test=64")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := runner.NewShuffled(train, runner.SamplerOptions{BatchSize: 32, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	te, err := runner.NewOrdered(test, runner.SamplerOptions{BatchSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	hp, _ := optimizer.Defaults("sgd")
	hp.LR = 0.05
	rule, err := optimizer.New("sgd", hp)
	if err != nil {
		t.Fatal(err)
	}
	rec := &rowRecorder{}
	return &resumeRun{net: net, loss: loss, record: rec, cfg: runner.Config{Net: net, Optimizer: optimizer.NewDriver(net, loss, rule, 0),
		Hyper: rule.(optimizer.Tunable).Hyperparameters(), Schedule: runner.StepDecay{Every: 4, Gamma: 0.5},
		Input: "x", Labels: "labels", Output: "y", Loss: loss, Train: tr, Test: te, Steps: steps, TestEvery: 3,
		Listeners: []runner.Listener{rec}}}
}

func (r *resumeRun) params(t *testing.T) map[string]*onnx.Tensor {
	t.Helper()
	out := map[string]*onnx.Tensor{}
	for _, p := range r.net.Params() {
		v, err := network.FetchTensor(r.net, p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = v.Clone()
	}
	return out
}

func (r *resumeRun) run(t *testing.T) runner.Result {
	t.Helper()
	rn, err := runner.New(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rn.Run()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A run stopped after any step, or whose state was taken by the
// Checkpoint hook, and resumed on a new network with the parameters of
// that point, records the same rows as a run never stopped: losses,
// evaluations (the one a stop skipped is made on resuming, none twice),
// learning rates, epochs and sample counts. The 200 samples in batches of
// 32 make 7 batches an epoch, the last partial; 20 steps cross two epoch
// ends.
func TestResumedRunEqualsUninterrupted(t *testing.T) {
	const steps = 20
	whole := newResumeRun(t, steps)
	wantRes := whole.run(t)
	want := whole.record.rows
	wantParams := whole.params(t)

	for _, k := range []int{1, 3, 6, 7, 8, 14, 19, 20} {
		for _, how := range []string{"stop", "hook"} {
			first := newResumeRun(t, steps)
			var st runner.State
			var params map[string]*onnx.Tensor
			cut := -1 // rows the first run recorded before its state was taken
			switch how {
			case "stop":
				first.cfg.Listeners = append(first.cfg.Listeners, stopAtGraceful{k})
			case "hook":
				first.cfg.Checkpoint = func(s runner.State) error {
					if s.Steps == k {
						st, params, cut = s, first.params(t), len(first.record.rows)
					}
					return nil
				}
			}
			rn, err := runner.New(first.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rn.Run(); err != nil {
				t.Fatal(err)
			}
			rows := first.record.rows
			if how == "stop" {
				st, params = rn.State(), first.params(t)
			} else {
				rows = rows[:cut]
			}
			if st.Steps != k {
				t.Fatalf("%s at %d: state at step %d", how, k, st.Steps)
			}
			second := newResumeRun(t, steps)
			for name, v := range params {
				if err := second.net.Feed(name, v); err != nil {
					t.Fatal(err)
				}
			}
			second.cfg.Resume = &st
			res := second.run(t)
			got := append(slices.Clone(rows), second.record.rows...)
			if !slices.Equal(got, want) {
				t.Errorf("%s at step %d: resumed rows differ from the uninterrupted run's:\n%s", how, k, diffRows(got, want))
			}
			if res.Steps != wantRes.Steps || res.Samples != wantRes.Samples || res.Epochs != wantRes.Epochs ||
				math.Float64bits(res.TestAccuracy) != math.Float64bits(wantRes.TestAccuracy) {
				t.Errorf("%s at step %d: result %+v, want %+v", how, k, res, wantRes)
			}
			for name, w := range wantParams {
				if g := second.params(t)[name]; !slices.Equal(g.Float32s(), w.Float32s()) {
					t.Errorf("%s at step %d: parameter %s differs", how, k, name)
				}
			}
		}
	}
}

type stopAtGraceful struct{ step int }

func (s stopAtGraceful) Event(e runner.Event) {
	if e.Kind == runner.AfterStep && e.Step == s.step {
		e.Runner.Stop(nil)
	}
}

func diffRows(got, want []string) string {
	out := ""
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		mark := "  "
		if g != w {
			mark = "! "
		}
		out += fmt.Sprintf("%s%-100s | %s\n", mark, g, w)
	}
	return out
}

// Seek reaches a batch with the samples and random numbers Next reaches
// it with, in a later epoch too.
func TestSamplerSeekEqualsNext(t *testing.T) {
	train, _ := runner.Synthetic(runner.SyntheticConfig{Classes: 3, Shape: []int{1, 4, 4}, N: 50})
	opts := runner.SamplerOptions{BatchSize: 8, Seed: 11, Transforms: []runner.Transform{&runner.CIFARAugment{Pad: 1, Flip: true}}}
	seq, err := runner.NewShuffled(train, opts)
	if err != nil {
		t.Fatal(err)
	}
	type batch struct {
		x []float32
		y []int64
	}
	var all [][]batch // per epoch
	for epoch := 0; epoch < 3; epoch++ {
		var bs []batch
		for {
			x, y, _, err := seq.Next()
			if err != nil {
				break
			}
			bs = append(bs, batch{slices.Clone(x.Float32s()), slices.Clone(y.Int64s())})
		}
		all = append(all, bs)
	}
	for epoch, bs := range all {
		for b := range bs {
			s, err := runner.NewShuffled(train, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Seek(epoch, b); err != nil {
				t.Fatal(err)
			}
			for k := b; k < len(bs); k++ {
				x, y, _, err := s.Next()
				if err != nil {
					t.Fatalf("epoch %d batch %d: %v", epoch, k, err)
				}
				if !slices.Equal(x.Float32s(), bs[k].x) || !slices.Equal(y.Int64s(), bs[k].y) {
					t.Fatalf("seek to epoch %d batch %d: batch %d differs from Next's", epoch, b, k)
				}
			}
		}
	}
	s, _ := runner.NewShuffled(train, opts)
	if err := s.Seek(0, len(all[0])+1); err == nil {
		t.Error("seek past the epoch's batches: no error")
	}
}
