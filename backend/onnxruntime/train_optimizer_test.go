package onnxruntime_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
)

// The in-graph optimizers' state round trip: a run stopped after k steps
// and resumed from State (and the parameters) continues bit for bit as a
// run never stopped. Like the other tests here it needs the library and
// fails without it.

// trainNet is mlpModel with a mean squared error against a target T.
func trainNet(t *testing.T) (network.Network, string) {
	t.Helper()
	m := mlpModel(t)
	loss, err := network.AppendLoss(m, network.LossMeanSquaredError, "y", "T")
	if err != nil {
		t.Fatal(err)
	}
	return newNet(t, m, backend.Options{Threads: 1}), loss
}

// trainBatch is the step'th batch, a different one every step.
func trainBatch(step int) map[string]onnx.Value {
	r := rand.New(rand.NewPCG(5, uint64(step)))
	x := onnx.NewTensor(onnx.Float, 2, 2)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(r.NormFloat64())
	}
	y := onnx.NewTensor(onnx.Float, 2, 3)
	for i := range y.Float32s() {
		y.Float32s()[i] = float32(r.NormFloat64())
	}
	return map[string]onnx.Value{"x": x, "T": y}
}

func paramBits(t *testing.T, net network.Network) []uint32 {
	t.Helper()
	var out []uint32
	for _, name := range []string{"W", "b"} {
		p, err := network.FetchTensor(net, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range p.Float32s() {
			out = append(out, math.Float32bits(x))
		}
	}
	return out
}

// sameState reports how two states differ, "" when not at all.
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
		case []float32:
			for i, v := range d {
				if math.Float32bits(v) != math.Float32bits(y.Float32s()[i]) {
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

func nativeOpt(t *testing.T, net network.Network, loss, name string, edit func(*optimizer.Hyperparams)) optimizer.TunableOptimizer {
	t.Helper()
	hp, err := optimizer.Defaults(name)
	if err != nil {
		t.Fatal(err)
	}
	edit(&hp)
	o, err := optimizer.NewNativeFor(name, hp, net, loss)
	if err != nil {
		t.Fatal(err)
	}
	if _, generic := o.(*optimizer.Native); generic {
		t.Fatal("--impl native did not get the in-graph optimizer")
	}
	return o
}

func TestNativeOptimizerResumesExactly(t *testing.T) {
	const k, m = 3, 4
	cases := []struct {
		label, name string
		edit        func(*optimizer.Hyperparams)
		kinds       []string // the state's per-parameter kinds
	}{
		{"sgd", "sgd", func(hp *optimizer.Hyperparams) { hp.LR = 0.05 }, nil},
		{"momentum dampening", "momentum", func(hp *optimizer.Hyperparams) { hp.LR, hp.Dampening = 0.05, 0.3 }, []string{"momentum"}},
		{"nesterov", "nesterov", func(hp *optimizer.Hyperparams) { hp.LR = 0.05 }, []string{"momentum"}},
		{"adam", "adam", func(hp *optimizer.Hyperparams) { hp.LR = 0.02 }, []string{"m", "v"}},
		{"adamw", "adamw", func(hp *optimizer.Hyperparams) { hp.LR = 0.02 }, []string{"m", "v"}},
		{"adagrad lr_decay", "adagrad", func(hp *optimizer.Hyperparams) { hp.LR, hp.LRDecay, hp.InitialAcc = 0.1, 0.2, 0.1 }, []string{"sum"}},
		{"rmsprop", "rmsprop", func(hp *optimizer.Hyperparams) {}, []string{"square_avg"}},
		{"rmsprop centered momentum", "rmsprop", func(hp *optimizer.Hyperparams) { hp.Centered, hp.Momentum = true, 0.9 },
			[]string{"square_avg", "grad_avg", "momentum"}},
	}
	for _, c := range cases {
		t.Run(c.label, func(t *testing.T) {
			netA, loss := trainNet(t)
			netB, _ := trainNet(t)
			netC, _ := trainNet(t)
			a := nativeOpt(t, netA, loss, c.name, c.edit)
			if st, err := optimizer.StateOf(a); err != nil || len(st) != 1 || st["optimizer.step"].Int64s()[0] != 0 {
				t.Fatalf("state before the first step: %v, %v", st, err)
			}
			for s := range k {
				if _, err := a.Step(trainBatch(s)); err != nil {
					t.Fatal(err)
				}
			}
			st, err := optimizer.StateOf(a)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"optimizer.step"}
			for _, p := range []string{"W", "b"} {
				for _, kind := range c.kinds {
					want = append(want, "optimizer."+kind+"."+p)
				}
			}
			var got []string
			for name := range st {
				got = append(got, name)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("state names %v, want %v", got, want)
			}
			if n := st["optimizer.step"].Int64s()[0]; n != k {
				t.Errorf("step count %d, want %d", n, k)
			}
			at := paramBits(t, netA)
			for _, net := range []network.Network{netB, netC} {
				for _, p := range []string{"W", "b"} {
					v, err := network.FetchTensor(netA, p)
					if err != nil {
						t.Fatal(err)
					}
					if err := net.Feed(p, v); err != nil {
						t.Fatal(err)
					}
				}
			}
			// b has built no session yet: SetState checks the state
			// against the names it expects the graph to have.
			b := nativeOpt(t, netB, loss, c.name, c.edit)
			if err := optimizer.SetStateOf(b, viaProto(t, st)); err != nil {
				t.Fatal(err)
			}
			if back, err := optimizer.StateOf(b); err != nil || sameState(st, back) != "" {
				t.Fatalf("State after SetState: %v, %s", err, sameState(st, back))
			}
			cold := nativeOpt(t, netC, loss, c.name, c.edit)
			for s := k; s < k+m; s++ {
				la, err := a.Step(trainBatch(s))
				if err != nil {
					t.Fatal(err)
				}
				lb, err := b.Step(trainBatch(s))
				if err != nil {
					t.Fatal(err)
				}
				if math.Float64bits(la) != math.Float64bits(lb) {
					t.Errorf("step %d: loss %.9g uninterrupted, %.9g resumed", s, la, lb)
				}
				if _, err := cold.Step(trainBatch(s)); err != nil {
					t.Fatal(err)
				}
			}
			pa, pb := paramBits(t, netA), paramBits(t, netB)
			if !slices.Equal(pa, pb) {
				t.Errorf("after %d more steps the parameters differ from the uninterrupted run: %v vs %v", m, pa, pb)
			}
			if slices.Equal(pa, at) {
				t.Errorf("the last %d steps did not move the parameters", m)
			}
			if len(c.kinds) > 0 && slices.Equal(pa, paramBits(t, netC)) {
				t.Errorf("a fresh optimizer without the state follows the same trajectory: the test cannot fail")
			}
		})
	}
}

func TestNativeOptimizerSetStateErrors(t *testing.T) {
	adam := func(hp *optimizer.Hyperparams) { hp.LR = 0.02 }
	netA, loss := trainNet(t)
	a := nativeOpt(t, netA, loss, "adam", adam)
	netT, _ := trainNet(t)
	target := nativeOpt(t, netT, loss, "adam", adam)
	for s := range 2 {
		if _, err := a.Step(trainBatch(s)); err != nil {
			t.Fatal(err)
		}
		if _, err := target.Step(trainBatch(s + 10)); err != nil {
			t.Fatal(err)
		}
	}
	good, err := optimizer.StateOf(a)
	if err != nil {
		t.Fatal(err)
	}
	before, err := optimizer.StateOf(target)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		what string
		edit func(s map[string]*onnx.Tensor)
		want []string
	}{
		{"missing", func(s map[string]*onnx.Tensor) { delete(s, "optimizer.v.b") }, []string{"optimizer.v.b", "missing"}},
		{"no step", func(s map[string]*onnx.Tensor) { delete(s, "optimizer.step") }, []string{"optimizer.step", "missing"}},
		{"shape", func(s map[string]*onnx.Tensor) { s["optimizer.m.W"] = onnx.NewTensor(onnx.Float, 3, 2) }, []string{"optimizer.m.W", "shape [3 2]", "[2 3]"}},
		{"type", func(s map[string]*onnx.Tensor) { s["optimizer.m.W"] = onnx.NewTensor(onnx.Double, 2, 3) }, []string{"optimizer.m.W", "double"}},
		{"step type", func(s map[string]*onnx.Tensor) { s["optimizer.step"] = onnx.Scalar(float32(2)) }, []string{"optimizer.step", "int64 scalar"}},
		{"negative step", func(s map[string]*onnx.Tensor) { s["optimizer.step"] = onnx.Scalar(int64(-2)) }, []string{"optimizer.step", "-2"}},
		{"extra", func(s map[string]*onnx.Tensor) { s["optimizer.sum.W"] = onnx.NewTensor(onnx.Float, 2, 3) }, []string{"optimizer.sum.W", "not a state tensor"}},
		{"state at step 0", func(s map[string]*onnx.Tensor) { s["optimizer.step"] = onnx.Scalar(int64(0)) }, []string{"optimizer.m.W", "step count of 0"}},
	}
	for _, c := range cases {
		s := map[string]*onnx.Tensor{}
		for k, x := range good {
			s[k] = x
		}
		c.edit(s)
		err := optimizer.SetStateOf(target, s)
		if err == nil {
			t.Errorf("%s: no error", c.what)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.what, err, w)
			}
		}
		after, err := optimizer.StateOf(target)
		if err != nil {
			t.Fatal(err)
		}
		if d := sameState(before, after); d != "" {
			t.Errorf("%s: the failed SetState changed the state: %s", c.what, d)
		}
	}
	// A state of no steps makes the optimizer fresh: its next step is the
	// first, as a new optimizer's.
	if err := optimizer.SetStateOf(target, map[string]*onnx.Tensor{"optimizer.step": onnx.Scalar(int64(0))}); err != nil {
		t.Fatal(err)
	}
	if st, err := optimizer.StateOf(target); err != nil || len(st) != 1 {
		t.Errorf("state after restoring step 0: %v, %v", st, err)
	}
}
