package distributed

import (
	"fmt"

	"github.com/deep500/deep500-go/onnx"
)

// decentralized is dsgd: one all-reduce per gradient tensor.
type decentralized struct{ *base }

func (d *decentralized) Consistent() bool { return true }

// SyncStats implements runner.StatsSyncer: a consistent scheme's ranks
// agree on the running statistics too.
func (d *decentralized) SyncStats(names []string) error { return d.syncStats(names) }

func (d *decentralized) Step(batch map[string]onnx.Value) (float64, error) {
	return d.step(func() (float64, error) {
		loss, err := d.backprop(batch)
		if err != nil {
			return loss, err
		}
		for _, g := range d.grads {
			if err := d.comm.AllReduceMean(g.Float32s()); err != nil {
				return loss, err
			}
		}
		return loss, d.updateAll()
	})
}

// fusedAllReduce is allreduce: all gradients in one buffer, one
// all-reduce per step. Fewer, larger messages than dsgd: the latency of
// each MPI call is paid once.
type fusedAllReduce struct{ *base }

func (f *fusedAllReduce) Consistent() bool { return true }

// SyncStats implements runner.StatsSyncer.
func (f *fusedAllReduce) SyncStats(names []string) error { return f.syncStats(names) }

func (f *fusedAllReduce) Step(batch map[string]onnx.Value) (float64, error) {
	return f.step(func() (float64, error) {
		loss, err := f.backprop(batch)
		if err != nil {
			return loss, err
		}
		pack(f.flat, f.grads)
		if err := f.comm.AllReduceMean(f.flat); err != nil {
			return loss, err
		}
		unpack(f.grads, f.flat)
		return loss, f.updateAll()
	})
}

// paramServer is pssgd. Rank 0 is the server (and a worker too): it
// gathers every rank's gradients, averages them in rank order, applies
// the rule and broadcasts the new parameters. Only rank 0's rule keeps
// state.
type paramServer struct {
	*base
	all []float32 // rank 0: every rank's gradients, gathered
}

func (p *paramServer) Consistent() bool { return true }

// SyncStats implements runner.StatsSyncer.
func (p *paramServer) SyncStats(names []string) error { return p.syncStats(names) }

func (p *paramServer) Step(batch map[string]onnx.Value) (float64, error) {
	return p.step(func() (float64, error) {
		loss, err := p.backprop(batch)
		if err != nil {
			return loss, err
		}
		n := p.comm.Size()
		if n == 1 {
			return loss, p.updateAll()
		}
		pack(p.flat, p.grads)
		if p.comm.Rank() == 0 && p.all == nil {
			p.all = make([]float32, n*p.size)
		}
		all := p.all
		if err := p.comm.Gather(0, all, p.flat); err != nil {
			return loss, err
		}
		if p.comm.Rank() == 0 {
			// The same arithmetic as AllReduceMean: sum, then scale.
			inv := 1 / float32(n)
			for j := range p.flat {
				s := all[j]
				for r := 1; r < n; r++ {
					s += all[r*p.size+j]
				}
				p.flat[j] = s * inv
			}
			unpack(p.grads, p.flat)
			if err := p.updateAll(); err != nil {
				return loss, err
			}
		}
		return loss, p.shareParams(0)
	})
}

// Tags of asgd's messages.
const (
	tagGradients = 1 + iota
	tagParams
)

// asyncParamServer is asgd. Rank 0 applies its own gradient at once, then
// serves Size-1 worker messages in the order they arrive: it receives a
// worker's gradients, applies them alone (no averaging, no waiting for the
// others), and sends that worker the parameters of that moment. A
// worker's gradient was computed on the parameters it got at its previous
// exchange, so it is stale by the updates applied since (at least one:
// rank 0's own). A fast worker may be served twice in one of rank 0's
// steps; over the run every worker is served once per step it takes.
// With two ranks there is one worker, so the run is deterministic; with
// more, the order depends on timing, as asynchronous training does.
type asyncParamServer struct{ *base }

func (a *asyncParamServer) Step(batch map[string]onnx.Value) (float64, error) {
	return a.step(func() (float64, error) {
		loss, err := a.backprop(batch)
		if err != nil {
			return loss, err
		}
		if a.comm.Rank() != 0 {
			pack(a.flat, a.grads)
			if err := a.comm.Send(0, tagGradients, a.flat); err != nil {
				return loss, err
			}
			if err := a.comm.Recv(0, tagParams, a.flat); err != nil {
				return loss, err
			}
			unpack(a.params, a.flat)
			return loss, a.feedParams()
		}
		if err := a.updateAll(); err != nil {
			return loss, err
		}
		for served := 1; served < a.comm.Size(); served++ {
			w, err := a.comm.RecvAny(tagGradients, a.flat)
			if err != nil {
				return loss, err
			}
			unpack(a.grads, a.flat)
			if err := a.updateAll(); err != nil {
				return loss, err
			}
			pack(a.flat, a.params)
			if err := a.comm.Send(w, tagParams, a.flat); err != nil {
				return loss, err
			}
		}
		return loss, nil
	})
}

// modelAveraging is mavg: local steps, and every `every` steps the
// parameters are replaced by their mean over the ranks. Optimizer state
// (momentum, Adam's moments) stays local.
type modelAveraging struct {
	*base
	every, steps int
}

// mavgSteps names the count of local steps in mavg's state: the next
// averaging is due when it reaches a multiple of the period.
const mavgSteps = "mavg.steps"

// State implements optimizer.Stateful: the rule's state and mavgSteps.
func (m *modelAveraging) State() (map[string]*onnx.Tensor, error) {
	s, err := m.base.State()
	if err != nil {
		return nil, err
	}
	if _, clash := s[mavgSteps]; clash {
		return nil, fmt.Errorf("distributed mavg: the rule's state has a tensor named %q, as mavg's own", mavgSteps)
	}
	s[mavgSteps] = onnx.Scalar(int64(m.steps))
	return s, nil
}

// SetState implements optimizer.Stateful; the count is set only when the
// rule has taken the rest, so an error leaves both as they were.
func (m *modelAveraging) SetState(s map[string]*onnx.Tensor) error {
	t, ok := s[mavgSteps]
	if !ok {
		return fmt.Errorf("distributed mavg state: tensor %q is missing", mavgSteps)
	}
	if t == nil || t.Check() != nil || t.Type != onnx.Int64 || len(t.Shape) != 0 {
		return fmt.Errorf("distributed mavg state: tensor %q is not an int64 scalar", mavgSteps)
	}
	n := t.Int64s()[0]
	if n < 0 || int64(int(n)) != n {
		return fmt.Errorf("distributed mavg state: tensor %q holds the count %d", mavgSteps, n)
	}
	rest := make(map[string]*onnx.Tensor, len(s)-1)
	for k, v := range s {
		if k != mavgSteps {
			rest[k] = v
		}
	}
	if err := m.base.SetState(rest); err != nil {
		return err
	}
	m.steps = int(n)
	return nil
}

func (m *modelAveraging) Step(batch map[string]onnx.Value) (float64, error) {
	return m.step(func() (float64, error) {
		loss, err := m.backprop(batch)
		if err != nil {
			return loss, err
		}
		if err := m.updateAll(); err != nil {
			return loss, err
		}
		m.steps++
		if m.steps%m.every != 0 || m.comm.Size() == 1 {
			return loss, nil
		}
		pack(m.flat, m.params)
		if err := m.comm.AllReduceMean(m.flat); err != nil {
			return loss, err
		}
		unpack(m.params, m.flat)
		return loss, m.feedParams()
	})
}

// neighbours is dpsgd (Lian et al., 2017, D-PSGD on a ring): with x_i the
// parameters of rank i and g_i its gradient at x_i,
// x_i ← mean(x_{i-1}, x_i, x_{i+1}) − step(g_i): the mixing matrix gives
// each distinct member of the neighbourhood the same weight (1/3 on a
// ring of three or more, 1/2 with two ranks). The step is the wrapped
// rule's, so with SGD it is exactly −lr·g_i.
type neighbours struct {
	*base
	left, right []float32
}

func (d *neighbours) Step(batch map[string]onnx.Value) (float64, error) {
	return d.step(func() (float64, error) {
		loss, err := d.backprop(batch)
		if err != nil {
			return loss, err
		}
		if n := d.comm.Size(); n > 1 {
			if d.left == nil {
				d.left, d.right = make([]float32, d.size), make([]float32, d.size)
			}
			pack(d.flat, d.params)
			if err := d.comm.RingExchange(d.flat, d.left, d.right); err != nil {
				return loss, err
			}
			if n == 2 {
				for j, x := range d.flat {
					d.flat[j] = (x + d.left[j]) * 0.5
				}
			} else {
				for j, x := range d.flat {
					d.flat[j] = (d.left[j] + x + d.right[j]) / 3
				}
			}
			unpack(d.params, d.flat)
		}
		return loss, d.updateAll()
	})
}
