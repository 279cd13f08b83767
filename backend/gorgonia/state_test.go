package gorgonia_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
)

// Gorgonia's solvers hide their state: only the stateless VanillaSolver
// (sgd) can be saved and resumed; the others say they cannot.

func denseNet(t *testing.T) (network.Network, string, string) {
	t.Helper()
	b := models.NewBuilder("dense", models.DefaultOpset)
	b.SetSeed(4)
	x := b.Input("x", onnx.Float, -1, 5)
	b.Output(b.Dense(b.Relu(b.Dense(x, 6)), 3), "y")
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	loss, err := network.AppendLoss(m, network.LossSoftmaxCrossEntropy, "y", "")
	if err != nil {
		t.Fatal(err)
	}
	return build(t, "gorgonia", m), loss, m.Graph.Inputs[len(m.Graph.Inputs)-1].Name
}

func denseBatch(labels string, step int) map[string]onnx.Value {
	r := rand.New(rand.NewPCG(2, uint64(step)))
	x := onnx.NewTensor(onnx.Float, 4, 5)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(r.NormFloat64())
	}
	y := onnx.NewTensor(onnx.Int64, 4)
	for i := range y.Int64s() {
		y.Int64s()[i] = int64(r.IntN(3))
	}
	return map[string]onnx.Value{"x": x, labels: y}
}

func denseParams(t *testing.T, net network.Network, loss string) []uint32 {
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

func TestVanillaSolverResumes(t *testing.T) {
	hp, _ := optimizer.Defaults("sgd")
	hp.LR = 0.1
	netA, loss, labels := denseNet(t)
	netB, _, _ := denseNet(t)
	a, err := optimizer.NewNativeFor("sgd", hp, netA, loss)
	if err != nil {
		t.Fatal(err)
	}
	for s := range 3 {
		if _, err := a.Step(denseBatch(labels, s)); err != nil {
			t.Fatal(err)
		}
	}
	st, err := optimizer.StateOf(a)
	if err != nil || len(st) != 0 {
		t.Fatalf("VanillaSolver state: %v, %v; want empty", st, err)
	}
	for _, pg := range netA.Gradients(loss) {
		p, err := network.FetchTensor(netA, pg.Param)
		if err != nil {
			t.Fatal(err)
		}
		if err := netB.Feed(pg.Param, p); err != nil {
			t.Fatal(err)
		}
	}
	b, err := optimizer.NewNativeFor("sgd", hp, netB, loss)
	if err != nil {
		t.Fatal(err)
	}
	if err := optimizer.SetStateOf(b, st); err != nil {
		t.Fatal(err)
	}
	for s := 3; s < 6; s++ {
		if _, err := a.Step(denseBatch(labels, s)); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Step(denseBatch(labels, s)); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(denseParams(t, netA, loss), denseParams(t, netB, loss)) {
		t.Error("resumed sgd differs from the uninterrupted run")
	}
	err = optimizer.SetStateOf(b, map[string]*onnx.Tensor{"sgd.momentum/W": onnx.NewTensor(onnx.Double, 2)})
	if err == nil || !strings.Contains(err.Error(), "sgd.momentum/W") {
		t.Errorf("a state tensor for the stateless solver: %v", err)
	}
}

func TestStatefulSolversAreUnsupported(t *testing.T) {
	net, loss, _ := denseNet(t)
	for _, name := range []string{"momentum", "adam", "rmsprop", "adagrad"} {
		hp, _ := optimizer.Defaults(name)
		o, err := optimizer.NewNativeFor(name, hp, net, loss)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := optimizer.StateOf(o); !errors.Is(err, network.ErrUnsupported) || !strings.Contains(err.Error(), "cannot be saved") {
			t.Errorf("%s: State: %v, want unsupported", name, err)
		}
		if err := optimizer.SetStateOf(o, map[string]*onnx.Tensor{}); !errors.Is(err, network.ErrUnsupported) {
			t.Errorf("%s: SetState: %v, want unsupported", name, err)
		}
	}
}
