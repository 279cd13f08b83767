package distributed

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
)

// Stats are the layer-2 figures of one step on this rank.
type Stats struct {
	// Traffic: bytes moved and seconds spent in communication calls in the
	// step. The seconds include waiting for slower ranks to reach the
	// same call: that is time the scheme makes this rank lose.
	Traffic
	// ComputeSeconds is the rest of the step's wall time: forward and
	// backward passes, update rules, packing buffers.
	ComputeSeconds float64
}

// Optimizer is a distributed optimizer: an optimizer.Optimizer that every
// rank steps once per step on its own batch, and that communicates inside
// Step.
type Optimizer interface {
	optimizer.Optimizer
	// Scheme is the name New knows it by.
	Scheme() string
	// Consistent reports whether all ranks hold the same parameters after
	// every step.
	Consistent() bool
	// LastStep returns the figures of the last Step on this rank.
	LastStep() Stats
}

// Options configure the schemes that have settings.
type Options struct {
	// AverageEvery is mavg's period: parameters are averaged after every
	// AverageEvery local steps (default 1).
	AverageEvery int
	// ClipNorm > 0 rescales the gradients a rank applies, all together,
	// to a global L2 norm of at most ClipNorm, as optimizer.Driver does;
	// the consistent schemes clip the averaged gradient.
	ClipNorm float64
}

// Schemes lists the distributed schemes New knows, as `d500 train
// --distributed` spells them.
func Schemes() []string { return []string{"pssgd", "asgd", "dsgd", "mavg", "dpsgd", "allreduce"} }

// New wraps rule, a reference optimizer, as the named distributed scheme
// over comm, for the parameters of net that loss depends on:
//
//	pssgd      consistent parameter server: every rank's gradients go to rank 0, which
//	           averages them, applies rule and broadcasts the parameters
//	asgd       inconsistent parameter server: rank 0 applies its own gradient, then
//	           each worker's alone, as it arrives, sending that worker the parameters
//	           of that moment; workers compute on stale parameters
//	dsgd       consistent decentralized: all-reduce mean of each gradient tensor in
//	           turn, then every rank applies rule to the same gradient
//	mavg       model averaging: every rank steps alone; parameters are averaged
//	           (all-reduce mean) every Options.AverageEvery steps
//	dpsgd      decentralized parallel SGD (Lian et al., 2017): every rank computes its
//	           gradient at its own parameters, replaces them by the mean of its and its
//	           ring neighbours', and applies rule with its gradient to that mean
//	allreduce  dsgd with every gradient fused into one buffer per step, reduced in one
//	           call (Horovod's tensor fusion)
//
// New broadcasts rank 0's parameters to every rank first, so all start
// equal; it is a collective call. Parameters must be float32.
//
// Every scheme is an optimizer.Stateful: its State is this rank's rule's
// state (optimizer.StateOf(rule)) plus the scheme's own counters (mavg's
// "mavg.steps"), and SetState gives each its part. Whether one rank's
// state, with that rank's parameters, resumes the whole job exactly
// depends on the scheme:
//
//	dsgd, allreduce  yes: every rank applies the rule to the same averaged
//	                 gradient at the same parameters, so every rank's rule
//	                 holds the same state, bit for bit
//	pssgd            yes: only rank 0 applies the rule (workers' rules stay
//	                 empty and unused while there are two ranks or more), and
//	                 every rank receives rank 0's parameters each step;
//	                 rank 0's state restored on every rank resumes the job
//	asgd             no: the rule's state is rank 0's alone, as for pssgd,
//	                 but each worker holds the parameters of its last
//	                 exchange, which differ from rank 0's
//	mavg             no: each rank's rule state (momentum, moments) stays
//	                 local and differs, and between averagings so do the
//	                 parameters; mavg.steps is the same on every rank
//	dpsgd            no: each rank's parameters and rule state are its own
//
// (Consistent reports the first group.) An exact resume of asgd, mavg or
// dpsgd needs every rank's own parameters and State.
func New(scheme string, comm *Comm, net network.Network, loss string, rule optimizer.UpdateRuleOptimizer, opts Options) (Optimizer, error) {
	if comm == nil || net == nil || rule == nil {
		return nil, fmt.Errorf("distributed %s: the communicator, the network and the optimizer are required", scheme)
	}
	if !slices.Contains(Schemes(), scheme) {
		return nil, fmt.Errorf("unknown distributed scheme %q (known: %s)", scheme, strings.Join(Schemes(), " "))
	}
	if opts.AverageEvery < 0 {
		return nil, fmt.Errorf("distributed mavg: averaging period %d is negative", opts.AverageEvery)
	}
	if !(opts.ClipNorm >= 0) {
		return nil, fmt.Errorf("distributed %s: invalid clip norm %g", scheme, opts.ClipNorm)
	}
	if opts.AverageEvery == 0 {
		opts.AverageEvery = 1
	}
	b := &base{scheme: scheme, comm: comm, net: net, loss: loss, rule: rule, clipNorm: opts.ClipNorm}
	b.three, _ = rule.(optimizer.ThreeStepOptimizer)
	if err := b.init(); err != nil {
		return nil, fmt.Errorf("distributed %s: %w", scheme, err)
	}
	switch scheme {
	case "pssgd":
		return &paramServer{base: b}, nil
	case "asgd":
		return &asyncParamServer{b}, nil
	case "dsgd":
		return &decentralized{b}, nil
	case "mavg":
		return &modelAveraging{base: b, every: opts.AverageEvery}, nil
	case "dpsgd":
		return &neighbours{base: b}, nil
	}
	return &fusedAllReduce{b}, nil
}

// base holds what every scheme shares: the network, the wrapped rule,
// the parameters' and gradients' tensors of the step and the metering.
type base struct {
	scheme string
	comm   *Comm
	net    network.Network
	loss   string
	rule   optimizer.UpdateRuleOptimizer
	three  optimizer.ThreeStepOptimizer
	// clipNorm > 0 clips the gradients in updateAll.
	clipNorm float64

	pgs           []network.ParamGrad
	params, grads []*onnx.Tensor // this step's, fetched into the last step's buffers
	flat          []float32      // a fused buffer of all parameters (or gradients)
	size          int            // elements of all parameters together

	start   time.Time
	traffic Traffic
	last    Stats

	// stats and statsFlat are the buffers of syncStats.
	stats     []*onnx.Tensor
	statsFlat []float32
}

// State implements optimizer.Stateful with the rule's state; see New for
// which schemes' states agree across ranks.
func (b *base) State() (map[string]*onnx.Tensor, error) { return optimizer.StateOf(b.rule) }

// SetState implements optimizer.Stateful with the rule's SetState.
func (b *base) SetState(s map[string]*onnx.Tensor) error { return optimizer.SetStateOf(b.rule, s) }

// Every scheme is Stateful, through base (mavg adds its count).
var (
	_ optimizer.Stateful = (*paramServer)(nil)
	_ optimizer.Stateful = (*asyncParamServer)(nil)
	_ optimizer.Stateful = (*decentralized)(nil)
	_ optimizer.Stateful = (*modelAveraging)(nil)
	_ optimizer.Stateful = (*neighbours)(nil)
	_ optimizer.Stateful = (*fusedAllReduce)(nil)
)

func (b *base) Scheme() string   { return b.scheme }
func (b *base) LastStep() Stats  { return b.last }
func (b *base) Consistent() bool { return false }

// init finds the trainable parameters, checks they are float32 and
// replaces every rank's with rank 0's.
func (b *base) init() error {
	b.pgs = b.net.Gradients(b.loss)
	if len(b.pgs) == 0 {
		return fmt.Errorf("loss %q depends on no trainable parameter", b.loss)
	}
	n := len(b.pgs)
	b.params, b.grads = make([]*onnx.Tensor, n), make([]*onnx.Tensor, n)
	for i, pg := range b.pgs {
		t, err := network.FetchTensor(b.net, pg.Param)
		if err != nil {
			return err
		}
		if _, ok := t.Data.([]float32); !ok {
			return fmt.Errorf("parameter %q is %v: only float32 parameters are communicated", pg.Param, t.Type)
		}
		b.params[i] = t
		b.size += t.Len()
	}
	b.flat = make([]float32, b.size)
	b.begin()
	defer b.end()
	return b.shareParams(0)
}

// shareParams broadcasts root's current parameters (b.params) to every
// rank as one buffer and feeds them into the network.
func (b *base) shareParams(root int) error {
	if b.comm.Size() == 1 {
		return nil
	}
	pack(b.flat, b.params)
	if err := b.comm.Broadcast(root, b.flat); err != nil {
		return err
	}
	unpack(b.params, b.flat)
	return b.feedParams()
}

func (b *base) begin() {
	b.start = time.Now()
	b.traffic = b.comm.Traffic()
}

func (b *base) end() {
	t := b.comm.Traffic().Sub(b.traffic)
	b.last = Stats{Traffic: t, ComputeSeconds: time.Since(b.start).Seconds() - t.Seconds}
}

// backprop runs the forward and backward pass of a batch and fetches
// every gradient and parameter of the step.
func (b *base) backprop(batch map[string]onnx.Value) (float64, error) {
	if b.three != nil {
		b.three.NewInput()
	}
	out, err := b.net.InferenceAndBackprop(batch, b.loss)
	if err != nil {
		return 0, err
	}
	loss, err := network.LossValue(out, b.loss)
	if err != nil {
		return 0, err
	}
	// Into the buffers of the last step (network.IntoFetcher), so that a
	// step copies but does not allocate its parameters and gradients.
	for i, pg := range b.pgs {
		g, err := network.FetchTensorInto(b.net, pg.Grad, b.grads[i])
		if err != nil {
			return loss, err
		}
		p, err := network.FetchTensorInto(b.net, pg.Param, b.params[i])
		if err != nil {
			return loss, err
		}
		if g.Len() != p.Len() {
			return loss, fmt.Errorf("the gradient of %q is not of the parameter's size", pg.Param)
		}
		if _, ok := g.Data.([]float32); !ok {
			return loss, fmt.Errorf("gradient of %q is %v: only float32 gradients are communicated", pg.Param, g.Type)
		}
		b.grads[i], b.params[i] = g, p
	}
	return loss, nil
}

// update applies the rule to parameter i with gradient g and feeds the
// parameter back into the network.
func (b *base) update(i int, g *onnx.Tensor) error {
	name := b.pgs[i].Param
	if b.three != nil {
		if err := b.three.PrepareParam(name); err != nil {
			return err
		}
	}
	if err := b.rule.UpdateRule(g, b.params[i], name); err != nil {
		return err
	}
	return b.net.Feed(name, b.params[i])
}

// updateAll clips b.grads (with clipNorm > 0) and applies the rule to
// every parameter with them.
func (b *base) updateAll() error {
	if b.clipNorm > 0 {
		clip(b.grads, b.clipNorm)
	}
	for i, g := range b.grads {
		if err := b.update(i, g); err != nil {
			return err
		}
	}
	return nil
}

func (b *base) feedParams() error {
	for i, pg := range b.pgs {
		if err := b.net.Feed(pg.Param, b.params[i]); err != nil {
			return err
		}
	}
	return nil
}

// syncStats replaces the named tensors (BatchNormalization's running
// statistics, which no gradient reaches) on every rank by their mean over
// the ranks, so that ranks that saw different batches agree on them as
// they do on the parameters. Its traffic is added to the last step's.
func (b *base) syncStats(names []string) error {
	if b.comm.Size() == 1 || len(names) == 0 {
		return nil
	}
	before := b.comm.Traffic()
	for len(b.stats) < len(names) {
		b.stats = append(b.stats, nil)
	}
	size := 0
	for i, name := range names {
		t, err := network.FetchTensorInto(b.net, name, b.stats[i])
		if err != nil {
			return err
		}
		if _, ok := t.Data.([]float32); !ok {
			return fmt.Errorf("running statistic %q is %v: only float32 tensors are communicated", name, t.Type)
		}
		b.stats[i] = t
		size += t.Len()
	}
	if len(b.statsFlat) != size {
		b.statsFlat = make([]float32, size)
	}
	stats := b.stats[:len(names)]
	pack(b.statsFlat, stats)
	if err := b.comm.AllReduceMean(b.statsFlat); err != nil {
		return err
	}
	unpack(stats, b.statsFlat)
	for i, name := range names {
		if err := b.net.Feed(name, stats[i]); err != nil {
			return err
		}
	}
	t := b.comm.Traffic().Sub(before)
	b.last.Traffic.BytesSent += t.BytesSent
	b.last.Traffic.BytesReceived += t.BytesReceived
	b.last.Traffic.Seconds += t.Seconds
	return nil
}

// clip scales the gradients together by min(1, max/(‖g‖₂ + 1e-6)), ‖g‖₂
// the norm of all of them (torch.nn.utils.clip_grad_norm_, as
// optimizer.Driver).
func clip(grads []*onnx.Tensor, max float64) {
	sum := 0.0
	for _, g := range grads {
		for _, x := range g.Float32s() {
			sum += float64(x) * float64(x)
		}
	}
	norm := math.Sqrt(sum)
	if norm+1e-6 <= max {
		return
	}
	s := max / (norm + 1e-6)
	for _, g := range grads {
		v := g.Float32s()
		for i := range v {
			v[i] = float32(float64(v[i]) * s)
		}
	}
}

// pack copies the tensors' elements, in order, into flat.
func pack(flat []float32, ts []*onnx.Tensor) {
	off := 0
	for _, t := range ts {
		off += copy(flat[off:], t.Float32s())
	}
}

// unpack copies flat back into the tensors.
func unpack(ts []*onnx.Tensor, flat []float32) {
	off := 0
	for _, t := range ts {
		off += copy(t.Float32s(), flat[off:])
	}
}

// step runs body between the metering marks and names the scheme and rank
// in its error.
func (b *base) step(body func() (float64, error)) (float64, error) {
	b.begin()
	loss, err := body()
	b.end()
	if err != nil {
		return loss, fmt.Errorf("distributed %s, rank %d: %w", b.scheme, b.comm.Rank(), err)
	}
	return loss, nil
}
