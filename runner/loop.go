package runner

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
)

// EventKind names one of the points of the training loop where listeners
// are told what happens (the points of the Deep500 thesis).
type EventKind int

// The events, in the order Run emits them. One epoch is
//
//	BeforeEpoch, BeforeTrainingSet,
//	(BeforeStep, AfterStep)...,
//	AfterTrainingSet,
//	BeforeTestSet, (BeforeTestBatch, AfterTestBatch)..., AfterTestSet,
//	AfterEpoch
//
// between BeforeTraining and AfterTraining. With Config.TestEvery > 0 the
// test set is evaluated after every TestEvery steps (inside the training
// set's events) instead of at the end of the epoch. A stop requested with
// Runner.Stop takes effect after the current step or evaluation: the loop
// goes straight to AfterTraining, which is always emitted.
const (
	BeforeTraining EventKind = iota
	BeforeEpoch
	BeforeTrainingSet
	BeforeStep
	AfterStep
	AfterTrainingSet
	BeforeTestSet
	BeforeTestBatch
	AfterTestBatch
	AfterTestSet
	AfterEpoch
	AfterTraining
)

var kindNames = [...]string{"BeforeTraining", "BeforeEpoch", "BeforeTrainingSet", "BeforeStep", "AfterStep",
	"AfterTrainingSet", "BeforeTestSet", "BeforeTestBatch", "AfterTestBatch", "AfterTestSet", "AfterEpoch", "AfterTraining"}

func (k EventKind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is what a listener is told. Figures not measured at that point are
// NaN.
type Event struct {
	Kind EventKind
	// Epoch counts from 1 (the epoch in progress; AfterTraining: the last).
	Epoch int
	// Step is the number of optimizer steps done (AfterStep: including
	// this one).
	Step int
	// Samples is the number of training samples the steps done have used.
	Samples int
	// Seconds is the wall time since BeforeTraining.
	Seconds float64
	// Loss: AfterStep, the batch's training loss before the update;
	// AfterTestBatch, the batch's loss; AfterTestSet, the mean test loss;
	// AfterTraining, the last training loss.
	Loss float64
	// TrainAccuracy: AfterStep, the fraction of the step's batch whose
	// argmax of the output (computed by the step's forward pass, before the
	// update) equals the label; NaN when the backend cannot fetch the
	// output after a step or no output is configured.
	TrainAccuracy float64
	// TestAccuracy: AfterTestBatch and AfterTestSet, the fraction of the
	// batch or set whose argmax of the output equals the label;
	// AfterTraining, that of the last evaluation.
	TestAccuracy float64
	// LR is the learning rate in effect (NaN when the optimizer has none
	// the runner can see).
	LR float64
	// BatchSize is the number of samples of the batch (step and test
	// batch events).
	BatchSize int
	// Err is set on AfterTraining when the run ends with an error.
	Err error
	// Runner lets a listener stop the run.
	Runner *Runner
}

// Listener receives the events of a run: the one interface of its event
// consumers (package tickers' Ticker is this type, by another name). The
// Event type lives here so that tickers imports runner and not the other
// way round. Listeners are called in order, on the loop's goroutine.
type Listener interface {
	Event(e Event)
}

// Schedule gives the learning rate of a step from the base rate. step
// counts the steps done before it (from 0), epoch from 0; total is the
// planned number of steps (0 when unknown).
type Schedule interface {
	LR(base float64, step, epoch, stepsPerEpoch, total int) float64
}

// StepDecay multiplies the rate by Gamma every Every steps.
type StepDecay struct {
	Every int
	Gamma float64
}

// LR implements Schedule.
func (s StepDecay) LR(base float64, step, _, _, _ int) float64 {
	if s.Every <= 0 {
		return base
	}
	return base * math.Pow(s.Gamma, float64(step/s.Every))
}

// EpochDecay multiplies the rate by Gamma every Every epochs.
type EpochDecay struct {
	Every int
	Gamma float64
}

// LR implements Schedule.
func (s EpochDecay) LR(base float64, _, epoch, _, _ int) float64 {
	if s.Every <= 0 {
		return base
	}
	return base * math.Pow(s.Gamma, float64(epoch/s.Every))
}

// Cosine anneals the rate from base to Min over the planned steps:
// Min + (base-Min)(1+cos(π step/total))/2 (SGDR without restarts).
type Cosine struct {
	Min float64
}

// LR implements Schedule.
func (s Cosine) LR(base float64, step, _, _, total int) float64 {
	if total <= 0 {
		return base
	}
	f := math.Min(float64(step)/float64(total), 1)
	return s.Min + (base-s.Min)*(1+math.Cos(math.Pi*f))/2
}

// Config describes a run.
type Config struct {
	Net       network.Network
	Optimizer optimizer.Optimizer
	// Hyper, when not nil, are the optimizer's live hyperparameters
	// (optimizer.Tunable): the runner reports Hyper.LR and the schedule
	// sets it before each step.
	Hyper    *optimizer.Hyperparams
	Schedule Schedule
	// Input and Labels are the graph inputs the batches' samples and
	// labels are fed to; Output is the model output whose argmax is the
	// predicted class; Loss the scalar loss output.
	Input, Labels, Output, Loss string
	Train                       *Sampler
	// Test is evaluated at the end of each epoch (nil: never).
	Test *Sampler
	// Epochs and Steps bound the run: it ends after Epochs epochs or
	// Steps steps, whichever comes first (0: no bound; one must be set).
	// When Steps ends an epoch early, the test set is still evaluated.
	Epochs, Steps int
	// TestEvery > 0 evaluates after every TestEvery steps instead of at
	// the end of each epoch, and after the last step of the run.
	TestEvery int
	// RunningStats are copied from their updated values into the
	// statistics after every step (network.BatchNormTraining's pairs).
	RunningStats []network.RunningStat
	// Eval, when not nil, is the network evaluations run on: the same
	// model in inference form (BatchNormalization with its running
	// statistics), into which the runner copies Net's parameters before
	// each evaluation.
	Eval      network.Network
	Listeners []Listener
	// Resume, when not nil, continues a run from the point a State of it
	// was taken: the loop starts at its epoch and batch (the sampler seeks
	// there), its counts and seconds go on from the state's, and an
	// evaluation the run owed at that point is made first. With the
	// network's parameters and the optimizer's state restored as they
	// were, the run then goes on exactly as one never stopped.
	Resume *State
	// Checkpoint, when not nil, is called after every step, once the step
	// and the evaluation that follows it (if any) are done: the points
	// where State describes the run completely. An error ends the run.
	Checkpoint func(State) error
}

// State is where a run is: what a checkpoint needs, beside the
// parameters and the optimizer's state, to resume it (Config.Resume).
type State struct {
	// Epoch is the epoch in progress (from 0) and Batch the number of its
	// batches trained.
	Epoch int `json:"epoch"`
	Batch int `json:"batch"`
	// Steps, Samples and Seconds are the run's counts so far.
	Steps   int     `json:"steps"`
	Samples int     `json:"samples"`
	Seconds float64 `json:"seconds"`
	// Loss, TestLoss and TestAccuracy are the last figures (NaN: none).
	Loss         Float `json:"loss"`
	TestLoss     Float `json:"test_loss"`
	TestAccuracy Float `json:"test_accuracy"`
	// EvaluatedAt is Steps at the last evaluation, -1 before the first.
	EvaluatedAt int `json:"evaluated_at"`
	// LR is the learning rate in effect (the schedule's at the last
	// step; NaN without Config.Hyper).
	LR Float `json:"lr"`
}

// Float is a float64 that JSON carries exactly, NaN as null.
type Float float64

// MarshalJSON writes the shortest decimal that reads back to the same
// float64, or null for NaN and infinities.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = Float(math.NaN())
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	*f = Float(v)
	return err
}

// Result sums up a run.
type Result struct {
	Epochs, Steps, Samples int
	Seconds                float64
	Loss                   float64 // last training loss
	TestLoss, TestAccuracy float64 // last evaluation (NaN if none)
	Stopped                bool    // ended by Runner.Stop
}

// Runner runs the loop of a Config.
type Runner struct {
	cfg Config

	mu      sync.Mutex
	stopped bool
	reason  error

	// noTrainAccuracy is set once the backend has said it cannot fetch
	// the output after a step: the loop stops asking.
	noTrainAccuracy bool
	// statBufs and paramBufs are the buffers of the running-statistics
	// and evaluation copies, reused across steps.
	statBufs, paramBufs []*onnx.Tensor
	// statNames are the running statistics' names, for StatsSyncer.
	statNames []string
	// epoch and batch are the position of the loop (State's); evaluatedAt
	// the steps at the last evaluation; last the State Run ended in.
	epoch, batch, evaluatedAt int
	last                      State
}

// New checks cfg and returns its runner.
func New(cfg Config) (*Runner, error) {
	switch {
	case cfg.Net == nil || cfg.Optimizer == nil || cfg.Train == nil:
		return nil, errors.New("runner: the network, the optimizer and the training sampler are required")
	case cfg.Epochs <= 0 && cfg.Steps <= 0:
		return nil, errors.New("runner: give a number of epochs or steps")
	case cfg.Input == "" || cfg.Labels == "" || cfg.Loss == "":
		return nil, errors.New("runner: input, labels and loss names are required")
	case cfg.Test != nil && cfg.Output == "":
		return nil, errors.New("runner: evaluation needs the output name")
	}
	if st := cfg.Resume; st != nil {
		if st.Epoch < 0 || st.Batch < 0 || st.Steps < 0 || st.Samples < 0 || st.Batch > cfg.Train.BatchesPerEpoch() {
			return nil, fmt.Errorf("runner: cannot resume at batch %d of epoch %d (step %d): an epoch has %d batches",
				st.Batch, st.Epoch, st.Steps, cfg.Train.BatchesPerEpoch())
		}
	}
	return &Runner{cfg: cfg, evaluatedAt: -1}, nil
}

// Stop asks the run to end after the current step or evaluation. A nil
// reason is a graceful stop (Run returns nil); otherwise Run returns the
// first reason given. Stop may be called from any goroutine.
func (r *Runner) Stop(reason error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stopped {
		r.stopped, r.reason = true, reason
	}
}

// Network is the network being trained, and Loss the name of its loss:
// what a listener needs to look inside (fetch gradients, parameters).
func (r *Runner) Network() network.Network { return r.cfg.Net }

// Loss names the loss value the optimizer minimises.
func (r *Runner) Loss() string { return r.cfg.Loss }

func (r *Runner) stopRequested() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

// Run trains and evaluates as configured.
func (r *Runner) Run() (Result, error) {
	c := &r.cfg
	nan := math.NaN()
	res := Result{Loss: nan, TestLoss: nan, TestAccuracy: nan}
	var offset float64 // seconds of the run before it was resumed
	firstEpoch := 0
	if st := c.Resume; st != nil {
		res.Steps, res.Samples, res.Epochs = st.Steps, st.Samples, st.Epoch
		if st.Batch > 0 {
			res.Epochs++ // the epoch in progress
		}
		res.Loss, res.TestLoss, res.TestAccuracy = float64(st.Loss), float64(st.TestLoss), float64(st.TestAccuracy)
		offset, firstEpoch = st.Seconds, st.Epoch
		r.epoch, r.batch, r.evaluatedAt = st.Epoch, st.Batch, st.EvaluatedAt
		if err := c.Train.Seek(st.Epoch, st.Batch); err != nil {
			return res, fmt.Errorf("resume: %w", err)
		}
	}
	start := time.Now()
	elapsed := func() float64 { return offset + time.Since(start).Seconds() }
	perEpoch := c.Train.BatchesPerEpoch()
	total := c.Steps
	if c.Epochs > 0 && (total == 0 || c.Epochs*perEpoch < total) {
		total = c.Epochs * perEpoch
	}
	ev := func(k EventKind) Event {
		lr := nan
		if c.Hyper != nil {
			lr = c.Hyper.LR
		}
		return Event{Kind: k, Epoch: res.Epochs, Step: res.Steps, Samples: res.Samples,
			Seconds: elapsed(), Loss: nan, TrainAccuracy: nan, TestAccuracy: nan,
			LR: lr, Runner: r}
	}
	emit := func(e Event) {
		for _, l := range c.Listeners {
			l.Event(e)
		}
	}
	var baseLR float64
	if c.Hyper != nil {
		baseLR = c.Hyper.LR
		if st := c.Resume; st != nil && !math.IsNaN(float64(st.LR)) {
			c.Hyper.LR = float64(st.LR) // what the events report until the next step sets it
		}
	}
	// dueEvery says whether the steps done call for an evaluation of
	// TestEvery's that has not been made.
	dueEvery := func() bool {
		return c.TestEvery > 0 && c.Test != nil && res.Steps > 0 && res.Steps%c.TestEvery == 0 && r.evaluatedAt != res.Steps
	}
	batches := newPrefetcher(c.Train)
	defer batches.close()
	err := func() error {
		emit(ev(BeforeTraining))
		// A run stopped right after a step owes that step's evaluation.
		if c.Resume != nil && dueEvery() {
			if err := r.evaluate(&res, ev, emit); err != nil || r.stopRequested() {
				return err
			}
		}
		for epoch := firstEpoch; c.Epochs <= 0 || epoch < c.Epochs; epoch++ {
			// A run resumed inside an epoch goes back into it even with
			// its steps done: its end (the closing evaluation) may be
			// owed.
			inside := c.Resume != nil && epoch == firstEpoch && r.batch > 0
			if c.Steps > 0 && res.Steps >= c.Steps && !inside {
				break
			}
			res.Epochs = epoch + 1
			if epoch != r.epoch {
				r.epoch, r.batch = epoch, 0
			}
			emit(ev(BeforeEpoch))
			emit(ev(BeforeTrainingSet))
			ended := false // the epoch's batches are used up
			for {
				if c.Steps > 0 && res.Steps >= c.Steps {
					break
				}
				x, y, err := batches.next()
				if err == io.EOF {
					ended = true
					break
				}
				if err != nil {
					return err
				}
				if c.Hyper != nil && c.Schedule != nil {
					c.Hyper.LR = c.Schedule.LR(baseLR, res.Steps, epoch, perEpoch, total)
				}
				e := ev(BeforeStep)
				e.BatchSize = x.Shape[0]
				emit(e)
				loss, err := c.Optimizer.Step(map[string]onnx.Value{c.Input: x, c.Labels: y})
				if err != nil {
					return fmt.Errorf("step %d: %w", res.Steps+1, err)
				}
				res.Steps++
				r.batch++
				res.Samples += x.Shape[0]
				res.Loss = loss
				if len(c.RunningStats) > 0 {
					if err := r.updateRunningStats(); err != nil {
						return fmt.Errorf("step %d: %w", res.Steps, err)
					}
				}
				acc, err := r.trainAccuracy(y)
				if err != nil {
					return fmt.Errorf("step %d: %w", res.Steps, err)
				}
				e = ev(AfterStep)
				e.BatchSize, e.Loss, e.TrainAccuracy = x.Shape[0], loss, acc
				emit(e)
				if !r.stopRequested() && dueEvery() {
					if err := r.evaluate(&res, ev, emit); err != nil {
						return err
					}
				}
				if c.Checkpoint != nil {
					if err := c.Checkpoint(r.state(&res, elapsed())); err != nil {
						return fmt.Errorf("after step %d: %w", res.Steps, err)
					}
				}
				if r.stopRequested() {
					return nil
				}
			}
			emit(ev(AfterTrainingSet))
			// With TestEvery, the last step need not fall on an
			// evaluation: the final model is evaluated too, so that the
			// run's closing figures are its own. An evaluation already
			// made at these steps (before the run was resumed) is not
			// made again.
			last := c.Epochs > 0 && epoch == c.Epochs-1 || c.Steps > 0 && res.Steps >= c.Steps
			if c.Test != nil && r.evaluatedAt != res.Steps && (c.TestEvery <= 0 || last && res.Steps%c.TestEvery != 0) {
				if err := r.evaluate(&res, ev, emit); err != nil || r.stopRequested() {
					return err
				}
			}
			emit(ev(AfterEpoch))
			if ended {
				r.epoch, r.batch = epoch+1, 0
			}
		}
		return nil
	}()
	r.mu.Lock()
	res.Stopped = r.stopped
	if err == nil {
		err = r.reason
	}
	r.mu.Unlock()
	res.Seconds = elapsed()
	r.last = r.state(&res, res.Seconds)
	e := ev(AfterTraining)
	e.Loss, e.TestAccuracy, e.Err = res.Loss, res.TestAccuracy, err
	emit(e)
	return res, err
}

// state is the run's State at a point where it describes it completely.
func (r *Runner) state(res *Result, seconds float64) State {
	lr := math.NaN()
	if r.cfg.Hyper != nil {
		lr = r.cfg.Hyper.LR
	}
	return State{LR: Float(lr), Epoch: r.epoch, Batch: r.batch, Steps: res.Steps, Samples: res.Samples, Seconds: seconds,
		Loss: Float(res.Loss), TestLoss: Float(res.TestLoss), TestAccuracy: Float(res.TestAccuracy), EvaluatedAt: r.evaluatedAt}
}

// State is where the run ended, once Run has returned: a checkpoint taken
// then resumes it (Config.Resume).
func (r *Runner) State() State { return r.last }

// StatsSyncer is implemented by an optimizer that trains copies of the
// network which must agree on their running statistics too (the
// consistent distributed schemes): after every step, once each copy has
// taken its statistics' updates, the runner calls SyncStats with their
// names.
type StatsSyncer interface {
	SyncStats(names []string) error
}

// updateRunningStats copies the running statistics' updated values into
// them, and has the optimizer make its copies agree (StatsSyncer).
func (r *Runner) updateRunningStats() error {
	c := &r.cfg
	var err error
	if r.statBufs, err = network.CopyRunningStats(c.Net, c.RunningStats, r.statBufs); err != nil {
		return err
	}
	if s, ok := c.Optimizer.(StatsSyncer); ok {
		if r.statNames == nil {
			for _, st := range c.RunningStats {
				r.statNames = append(r.statNames, st.Param)
			}
		}
		if err := s.SyncStats(r.statNames); err != nil {
			return fmt.Errorf("running statistics: %w", err)
		}
	}
	return nil
}

// trainAccuracy is the fraction of the step's batch classified right, read
// from the output the step's forward pass left in the network. It is NaN
// when no output is configured or the backend cannot fetch it after a step
// (network.ErrUnsupported); any other failure is an error.
func (r *Runner) trainAccuracy(labels *onnx.Tensor) (float64, error) {
	c := &r.cfg
	if c.Output == "" || r.noTrainAccuracy {
		return math.NaN(), nil
	}
	vs, err := c.Net.Fetch(c.Output)
	if errors.Is(err, network.ErrUnsupported) {
		r.noTrainAccuracy = true
		return math.NaN(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("training accuracy: %w", err)
	}
	k, err := Correct(vs[0], labels.Int64s())
	if err != nil {
		return 0, fmt.Errorf("training accuracy: output %q: %w", c.Output, err)
	}
	return float64(k) / float64(len(labels.Int64s())), nil
}

// evaluate runs the test set once: mean loss and accuracy.
func (r *Runner) evaluate(res *Result, ev func(EventKind) Event, emit func(Event)) error {
	c := &r.cfg
	net := c.Net
	if c.Eval != nil {
		var err error
		if r.paramBufs, err = network.CopyParams(c.Eval, c.Net, r.paramBufs); err != nil {
			return fmt.Errorf("evaluation: %w", err)
		}
		net = c.Eval
	}
	emit(ev(BeforeTestSet))
	var lossSum float64
	var right, n int
	for {
		x, y, _, err := c.Test.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		e := ev(BeforeTestBatch)
		e.BatchSize = x.Shape[0]
		emit(e)
		out, err := net.Inference(map[string]onnx.Value{c.Input: x, c.Labels: y})
		if err != nil {
			return fmt.Errorf("evaluation: %w", err)
		}
		loss, err := network.LossValue(out, c.Loss)
		if err != nil {
			return err
		}
		k, err := Correct(out[c.Output], y.Int64s())
		if err != nil {
			return fmt.Errorf("output %q: %w", c.Output, err)
		}
		b := x.Shape[0]
		lossSum += loss * float64(b)
		right += k
		n += b
		e = ev(AfterTestBatch)
		e.BatchSize, e.Loss, e.TestAccuracy = b, loss, float64(k)/float64(b)
		emit(e)
	}
	if n == 0 {
		return errors.New("evaluation: empty test set")
	}
	res.TestLoss, res.TestAccuracy = lossSum/float64(n), float64(right)/float64(n)
	r.evaluatedAt = res.Steps
	e := ev(AfterTestSet)
	e.Loss, e.TestAccuracy = res.TestLoss, res.TestAccuracy
	emit(e)
	return nil
}

// Correct counts the rows of scores [N, C, ...] (the class dimension is 1,
// further dimensions must be 1) whose argmax equals the label.
func Correct(v onnx.Value, labels []int64) (int, error) {
	t, ok := v.(*onnx.Tensor)
	if !ok || len(t.Shape) < 2 || t.Shape[0] != len(labels) {
		return 0, fmt.Errorf("want class scores [%d, C], got %s", len(labels), onnx.DescribeValue(v))
	}
	cls := t.Len() / len(labels)
	at := func(i int) float64 { return 0 }
	switch d := t.Data.(type) {
	case []float32:
		at = func(i int) float64 { return float64(d[i]) }
	case []float64:
		at = func(i int) float64 { return d[i] }
	default:
		return 0, fmt.Errorf("scores are %v, not float or double", t.Type)
	}
	right := 0
	for i, l := range labels {
		best := 0
		for j := 1; j < cls; j++ {
			if at(i*cls+j) > at(i*cls+best) {
				best = j
			}
		}
		if int64(best) == l {
			right++
		}
	}
	return right, nil
}
