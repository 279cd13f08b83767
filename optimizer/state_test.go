package optimizer_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
)

// A run stopped after k steps and resumed from the optimizer's State (and
// the parameters) must continue bit for bit as a run never stopped.

// stateNet is x [8, 5] → Dense 7 → Relu → Dense 3 with softmax cross-entropy on
// the native backend: four parameters, so the state has several entries
// per field. The same seed gives the same weights.
func stateNet(t *testing.T, seed uint64) (network.Network, string, string) {
	t.Helper()
	b := models.NewBuilder("mlp", models.DefaultOpset)
	b.SetSeed(seed)
	x := b.Input("x", onnx.Float, -1, 5)
	b.Output(b.Dense(b.Relu(b.Dense(x, 7)), 3), "y")
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	loss, err := network.AppendLoss(m, network.LossSoftmaxCrossEntropy, "y", "")
	if err != nil {
		t.Fatal(err)
	}
	labels := m.Graph.Inputs[len(m.Graph.Inputs)-1].Name
	net, err := backend.New("native", m, backend.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { net.Close() })
	return net, loss, labels
}

// stateBatch is the step'th batch: a different one every step, so that the
// state (which remembers past gradients) matters.
func stateBatch(labels string, step int) map[string]onnx.Value {
	r := rand.New(rand.NewPCG(11, uint64(step)))
	x := onnx.NewTensor(onnx.Float, 8, 5)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(r.NormFloat64())
	}
	y := onnx.NewTensor(onnx.Int64, 8)
	for i := range y.Int64s() {
		y.Int64s()[i] = int64(r.IntN(3))
	}
	return map[string]onnx.Value{"x": x, labels: y}
}

// paramBits returns every trainable parameter's elements as bits, in the
// order of Gradients.
func paramBits(t *testing.T, net network.Network, loss string) []uint32 {
	t.Helper()
	var out []uint32
	for _, pg := range net.Gradients(loss) {
		p, err := network.FetchTensor(net, pg.Param)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range p.Float32s() {
			out = append(out, math.Float32bits(x))
		}
	}
	return out
}

// copyParams feeds src's trainable parameters into dst.
func copyParams(t *testing.T, dst, src network.Network, loss string) {
	t.Helper()
	for _, pg := range src.Gradients(loss) {
		p, err := network.FetchTensor(src, pg.Param)
		if err != nil {
			t.Fatal(err)
		}
		if err := dst.Feed(pg.Param, p); err != nil {
			t.Fatal(err)
		}
	}
}

// sameState reports how two states differ ("" when they hold the same
// names, types, shapes and bits).
func sameState(a, b map[string]*onnx.Tensor) string {
	for name := range b {
		if _, ok := a[name]; !ok {
			return "extra " + name
		}
	}
	for name, x := range a {
		y, ok := b[name]
		if !ok {
			return "no " + name
		}
		if x.Type != y.Type || !slices.Equal(x.Shape, y.Shape) {
			return name + ": type or shape differs"
		}
		switch d := x.Data.(type) {
		case []float64:
			for i, v := range d {
				if math.Float64bits(v) != math.Float64bits(y.Float64s()[i]) {
					return name + ": bits differ"
				}
			}
		case []int64:
			if !slices.Equal(d, y.Int64s()) {
				return name + ": counts differ"
			}
		default:
			return name + ": unexpected type"
		}
	}
	return ""
}

// viaProto passes every tensor through a TensorProto, as a checkpoint
// file does.
func viaProto(t *testing.T, s map[string]*onnx.Tensor) map[string]*onnx.Tensor {
	t.Helper()
	out := map[string]*onnx.Tensor{}
	for name, x := range s {
		p, err := onnx.TensorToProto(name, x)
		if err != nil {
			t.Fatal(err)
		}
		if out[name], err = onnx.TensorFromProto(p, ""); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

type stateCase struct {
	label, name string
	edit        func(*optimizer.Hyperparams)
	// fields are the names' prefixes the state must hold.
	fields []string
}

func stateCases() []stateCase {
	return []stateCase{
		{"sgd", "sgd", func(hp *optimizer.Hyperparams) { hp.LR = 0.1 }, nil},
		{"momentum", "momentum", func(hp *optimizer.Hyperparams) { hp.LR = 0.1 }, []string{"sgd.momentum/"}},
		{"momentum dampening wd", "momentum", func(hp *optimizer.Hyperparams) {
			hp.LR, hp.Dampening, hp.WeightDecay = 0.1, 0.3, 1e-3
		}, []string{"sgd.momentum/"}},
		{"nesterov", "nesterov", func(hp *optimizer.Hyperparams) { hp.LR = 0.1 }, []string{"sgd.momentum/"}},
		{"adam", "adam", func(hp *optimizer.Hyperparams) { hp.LR = 0.01 }, []string{"adam.m/", "adam.v/", "adam.step/"}},
		{"adamw", "adamw", func(hp *optimizer.Hyperparams) { hp.LR = 0.01 }, []string{"adamw.m/", "adamw.v/", "adamw.step/"}},
		{"adagrad lr_decay", "adagrad", func(hp *optimizer.Hyperparams) {
			hp.LR, hp.LRDecay, hp.InitialAcc = 0.1, 0.2, 0.1
		}, []string{"adagrad.sum/", "adagrad.step/"}},
		{"rmsprop", "rmsprop", func(hp *optimizer.Hyperparams) {}, []string{"rmsprop.square_avg/"}},
		{"rmsprop centered momentum", "rmsprop", func(hp *optimizer.Hyperparams) {
			hp.Centered, hp.Momentum = true, 0.9
		}, []string{"rmsprop.square_avg/", "rmsprop.grad_avg/", "rmsprop.momentum/"}},
		{"accelegrad", "accelegrad", func(hp *optimizer.Hyperparams) { hp.WeightDecay = 1e-3 },
			[]string{"accelegrad.y/", "accelegrad.z/", "accelegrad.sum/", "accelegrad.step/"}},
	}
}

// makeOpt returns the optimizer of c over net: the driver with the rule,
// or the native optimizer.
func makeOpt(t *testing.T, c stateCase, native bool, net network.Network, loss string) optimizer.Optimizer {
	t.Helper()
	hp, err := optimizer.Defaults(c.name)
	if err != nil {
		t.Fatal(err)
	}
	c.edit(&hp)
	if native {
		o, err := optimizer.NewNative(c.name, hp, net, loss)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	rule, err := optimizer.New(c.name, hp)
	if err != nil {
		t.Fatal(err)
	}
	return optimizer.NewDriver(net, loss, rule, 0)
}

func TestResumeIsExact(t *testing.T) {
	const k, m = 3, 4
	for _, native := range []bool{false, true} {
		for _, c := range stateCases() {
			label := c.label
			if native {
				label += " native"
			}
			t.Run(label, func(t *testing.T) {
				netA, loss, labels := stateNet(t, 5)
				netB, _, _ := stateNet(t, 5)
				netC, _, _ := stateNet(t, 5)
				a := makeOpt(t, c, native, netA, loss)
				for s := range k {
					if _, err := a.Step(stateBatch(labels, s)); err != nil {
						t.Fatal(err)
					}
				}
				st, err := optimizer.StateOf(a)
				if err != nil {
					t.Fatal(err)
				}
				// Four parameters, one entry of each field for each.
				if len(st) != 4*len(c.fields) {
					t.Errorf("the state has %d tensors, want %d (4 parameters × %v)", len(st), 4*len(c.fields), c.fields)
				}
				for name := range st {
					if !slices.ContainsFunc(c.fields, func(f string) bool { return strings.HasPrefix(name, f) }) {
						t.Errorf("state tensor %q is none of %v", name, c.fields)
					}
				}
				saved := viaProto(t, st)
				if d := sameState(st, saved); d != "" {
					t.Fatalf("through TensorProto: %s", d)
				}
				at := paramBits(t, netA, loss)
				copyParams(t, netB, netA, loss)
				copyParams(t, netC, netA, loss)
				b := makeOpt(t, c, native, netB, loss)
				if err := optimizer.SetStateOf(b, saved); err != nil {
					t.Fatal(err)
				}
				if back, err := optimizer.StateOf(b); err != nil || sameState(st, back) != "" {
					t.Fatalf("State after SetState: %v, %s", err, sameState(st, back))
				}
				// c starts from the same parameters without the state: it
				// must end elsewhere, or the state would not be tested.
				cold := makeOpt(t, c, native, netC, loss)
				for s := k; s < k+m; s++ {
					la, err := a.Step(stateBatch(labels, s))
					if err != nil {
						t.Fatal(err)
					}
					lb, err := b.Step(stateBatch(labels, s))
					if err != nil {
						t.Fatal(err)
					}
					if math.Float64bits(la) != math.Float64bits(lb) {
						t.Errorf("step %d: loss %.17g uninterrupted, %.17g resumed", s, la, lb)
					}
					if _, err := cold.Step(stateBatch(labels, s)); err != nil {
						t.Fatal(err)
					}
				}
				pa, pb := paramBits(t, netA, loss), paramBits(t, netB, loss)
				if !slices.Equal(pa, pb) {
					diff := 0
					for i := range pa {
						if pa[i] != pb[i] {
							diff++
						}
					}
					t.Errorf("after %d more steps %d of %d parameter elements differ from the uninterrupted run", m, diff, len(pa))
				}
				if slices.Equal(pa, at) {
					t.Errorf("the last %d steps did not move the parameters", m)
				}
				if pc := paramBits(t, netC, loss); len(c.fields) > 0 && slices.Equal(pa, pc) {
					t.Errorf("a fresh optimizer without the state follows the same trajectory: the test cannot fail")
				}
				if stA, _ := optimizer.StateOf(a); sameState(stA, mustState(t, b)) != "" {
					t.Errorf("the states differ at the end: %s", sameState(stA, mustState(t, b)))
				}
			})
		}
	}
}

func mustState(t *testing.T, o any) map[string]*onnx.Tensor {
	t.Helper()
	s, err := optimizer.StateOf(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A parameter that has not taken a step has no state, and stays without
// after SetState: SGD's first step sets the buffer to the gradient (with
// dampening 0.5 a zero buffer would give half of it), AcceleGrad's starts
// its sequences at the parameter.
func TestFreshParameterStaysFresh(t *testing.T) {
	for _, name := range []string{"momentum", "accelegrad", "adagrad"} {
		hp, _ := optimizer.Defaults(name)
		hp.LR = 0.1
		if name == "momentum" {
			hp.Dampening = 0.5
		}
		a, err := optimizer.New(name, hp)
		if err != nil {
			t.Fatal(err)
		}
		pa := map[string]*onnx.Tensor{"a": onnx.FromSlice([]float32{1, 2, 3}, 3), "b": onnx.FromSlice([]float32{-1, 0.5}, 2)}
		g := map[string]*onnx.Tensor{"a": onnx.FromSlice([]float32{0.3, -0.2, 0.1}, 3), "b": onnx.FromSlice([]float32{0.4, -0.6}, 2)}
		for range 2 {
			if err := a.UpdateRule(g["a"], pa["a"], "a"); err != nil {
				t.Fatal(err)
			}
		}
		st := mustState(t, a)
		for n := range st {
			if strings.HasSuffix(n, "/b") {
				t.Errorf("%s: state of b, which took no step: %q", name, n)
			}
		}
		b, _ := optimizer.New(name, hp)
		if err := optimizer.SetStateOf(b, st); err != nil {
			t.Fatal(err)
		}
		for n := range mustState(t, b) {
			if strings.HasSuffix(n, "/b") {
				t.Errorf("%s: SetState made state for b: %q", name, n)
			}
		}
		pb := map[string]*onnx.Tensor{"a": pa["a"].Clone(), "b": pa["b"].Clone()}
		for range 2 {
			for _, p := range []string{"a", "b"} {
				if err := a.UpdateRule(g[p], pa[p], p); err != nil {
					t.Fatal(err)
				}
				if err := b.UpdateRule(g[p], pb[p], p); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, p := range []string{"a", "b"} {
			if !slices.Equal(pa[p].Float32s(), pb[p].Float32s()) {
				t.Errorf("%s: %s = %v uninterrupted, %v resumed", name, p, pa[p].Float32s(), pb[p].Float32s())
			}
		}
	}
}

// trained returns an optimizer of that name after three steps of the mlp,
// and its state.
func trained(t *testing.T, name string, edit func(*optimizer.Hyperparams), seed uint64) (optimizer.UpdateRuleOptimizer, map[string]*onnx.Tensor) {
	t.Helper()
	hp, _ := optimizer.Defaults(name)
	edit(&hp)
	rule, err := optimizer.New(name, hp)
	if err != nil {
		t.Fatal(err)
	}
	net, loss, labels := stateNet(t, seed)
	d := optimizer.NewDriver(net, loss, rule, 0)
	for s := range 3 {
		if _, err := d.Step(stateBatch(labels, s)); err != nil {
			t.Fatal(err)
		}
	}
	return rule, mustState(t, rule)
}

func TestSetStateErrorsLeaveTheOptimizerUnchanged(t *testing.T) {
	none := func(*optimizer.Hyperparams) {}
	_, good := trained(t, "adam", none, 1)
	target, before := trained(t, "adam", none, 2)
	if sameState(good, before) == "" {
		t.Fatal("two differently seeded runs have the same state")
	}
	var m, step string
	for name := range good {
		if strings.HasPrefix(name, "adam.m/") && (m == "" || name < m) {
			m = name
			step = "adam.step/" + strings.TrimPrefix(name, "adam.m/")
		}
	}
	v := "adam.v/" + strings.TrimPrefix(m, "adam.m/")
	n := good[m].Len()
	cases := []struct {
		what string
		edit func(s map[string]*onnx.Tensor)
		want []string
	}{
		{"missing", func(s map[string]*onnx.Tensor) { delete(s, v) }, []string{v, "missing"}},
		{"missing counter", func(s map[string]*onnx.Tensor) { delete(s, step) }, []string{step, "missing"}},
		{"longer", func(s map[string]*onnx.Tensor) { s[m] = onnx.NewTensor(onnx.Double, n+1) }, []string{m, "elements"}},
		{"rank 2", func(s map[string]*onnx.Tensor) { s[m] = onnx.NewTensor(onnx.Double, 1, n) }, []string{m, "shape [1"}},
		{"float", func(s map[string]*onnx.Tensor) { s[m] = onnx.NewTensor(onnx.Float, n) }, []string{m, "double"}},
		{"malformed", func(s map[string]*onnx.Tensor) {
			s[m] = &onnx.Tensor{Type: onnx.Double, Shape: []int{n}, Data: []float64{1}}
		}, []string{m, "malformed"}},
		{"nil", func(s map[string]*onnx.Tensor) { s[m] = nil }, []string{m, "nil"}},
		{"counter as double", func(s map[string]*onnx.Tensor) { s[step] = onnx.Scalar(3.0) }, []string{step, "int64 scalar"}},
		{"negative counter", func(s map[string]*onnx.Tensor) { s[step] = onnx.Scalar(int64(-1)) }, []string{step, "-1"}},
		{"extra field", func(s map[string]*onnx.Tensor) { s["adam.q/W"] = onnx.NewTensor(onnx.Double, 2) }, []string{"adam.q/W", "not a state tensor", "adam.m/<param>"}},
		{"other kind", func(s map[string]*onnx.Tensor) { s["adamw.m/W"] = onnx.NewTensor(onnx.Double, 2) }, []string{"adamw.m/W", "not a state tensor"}},
		{"no parameter", func(s map[string]*onnx.Tensor) { s["adam.m/"] = onnx.NewTensor(onnx.Double, 2) }, []string{`"adam.m/"`, "not a state tensor"}},
		{"no slash", func(s map[string]*onnx.Tensor) { s["step"] = onnx.Scalar(int64(1)) }, []string{`"step"`, "not a state tensor"}},
	}
	for _, c := range cases {
		s := map[string]*onnx.Tensor{}
		for k, x := range good {
			s[k] = x
		}
		c.edit(s)
		err := target.(optimizer.Stateful).SetState(s)
		if err == nil {
			t.Errorf("%s: no error", c.what)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.what, err, w)
			}
		}
		if d := sameState(before, mustState(t, target)); d != "" {
			t.Errorf("%s: the failed SetState changed the state: %s", c.what, d)
		}
	}

	// A field the hyperparameters do not keep is an error too: a
	// centered RMSprop's state given to one that is not.
	_, centered := trained(t, "rmsprop", func(hp *optimizer.Hyperparams) { hp.Centered = true }, 1)
	plain, plainBefore := trained(t, "rmsprop", none, 1)
	err := optimizer.SetStateOf(plain, centered)
	if err == nil || !strings.Contains(err.Error(), "rmsprop.grad_avg/") || !strings.Contains(err.Error(), "hyperparameters") {
		t.Errorf("a centered state into a plain RMSprop: %v", err)
	}
	if d := sameState(plainBefore, mustState(t, plain)); d != "" {
		t.Errorf("the failed SetState changed the state: %s", d)
	}
	// And the other way: the centered one misses grad_avg.
	cent, _ := trained(t, "rmsprop", func(hp *optimizer.Hyperparams) { hp.Centered = true }, 1)
	if err := optimizer.SetStateOf(cent, plainBefore); err == nil || !strings.Contains(err.Error(), "rmsprop.grad_avg/") || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a plain state into a centered RMSprop: %v", err)
	}
	// An empty state is a fresh optimizer's.
	if err := optimizer.SetStateOf(target, nil); err != nil || len(mustState(t, target)) != 0 {
		t.Errorf("SetState(nil): %v, then %d tensors", err, len(mustState(t, target)))
	}
}

// State hands out copies, and SetState takes copies.
func TestStateDoesNotAlias(t *testing.T) {
	for _, name := range []string{"adam", "accelegrad"} {
		rule, st := trained(t, name, func(*optimizer.Hyperparams) {}, 3)
		keep := viaProto(t, st)
		for _, x := range st {
			switch d := x.Data.(type) {
			case []float64:
				d[0] = 42
			case []int64:
				d[0] = 42
			}
		}
		if d := sameState(keep, mustState(t, rule)); d != "" {
			t.Errorf("%s: changing State's tensors changed the optimizer: %s", name, d)
		}
		in := viaProto(t, keep)
		if err := optimizer.SetStateOf(rule, in); err != nil {
			t.Fatal(err)
		}
		for _, x := range in {
			switch d := x.Data.(type) {
			case []float64:
				d[0] = -7
			case []int64:
				d[0] = 7
			}
		}
		if d := sameState(keep, mustState(t, rule)); d != "" {
			t.Errorf("%s: changing SetState's tensors afterwards changed the optimizer: %s", name, d)
		}
	}
}

// plainRule keeps no state it can save.
type plainRule struct{}

func (plainRule) UpdateRule(grad, param *onnx.Tensor, name string) error { return nil }

func TestNotStatefulIsUnsupported(t *testing.T) {
	net, loss, _ := stateNet(t, 1)
	for _, o := range []any{plainRule{}, optimizer.NewDriver(net, loss, plainRule{}, 0), nil} {
		if _, err := optimizer.StateOf(o); !errors.Is(err, network.ErrUnsupported) {
			t.Errorf("StateOf(%T): %v, want ErrUnsupported", o, err)
		} else if o != nil && !strings.Contains(err.Error(), "plainRule") {
			t.Errorf("StateOf(%T): %q does not name the rule's type", o, err)
		}
		if err := optimizer.SetStateOf(o, nil); !errors.Is(err, network.ErrUnsupported) {
			t.Errorf("SetStateOf(%T): %v, want ErrUnsupported", o, err)
		}
	}
	// Every reference optimizer is Stateful, through New.
	for _, name := range optimizer.Names() {
		hp, _ := optimizer.Defaults(name)
		r, err := optimizer.New(name, hp)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := r.(optimizer.Stateful); !ok {
			t.Errorf("%s (%T) is not Stateful", name, r)
		}
		if s, err := optimizer.StateOf(r); err != nil || len(s) != 0 {
			t.Errorf("%s: a fresh optimizer's state: %d tensors, %v", name, len(s), err)
		}
	}
}
