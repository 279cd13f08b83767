package distributed

import (
	"testing"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/runner"
)

// A tiny classifier, x [N, 6] → Dense 8 → Relu → Dense 3, with softmax
// cross-entropy, on the native backend; the same seed gives the same
// weights.
type tinyNet struct {
	net                 network.Network
	loss, input, labels string
}

func newTinyNet(t *testing.T, seed uint64) *tinyNet {
	t.Helper()
	b := models.NewBuilder("tiny", models.DefaultOpset)
	b.SetSeed(seed)
	x := b.Input("x", onnx.Float, -1, 6)
	b.Output(b.Dense(b.Relu(b.Dense(x, 8)), 3), "y")
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
	return &tinyNet{net: net, loss: loss, input: "x", labels: labels}
}

// tinyData is a separable 3-class problem of n samples of 6 features.
func tinyData(n int) *runner.Memory {
	train, _ := runner.Synthetic(runner.SyntheticConfig{Classes: 3, Shape: []int{6}, N: n, Seed: 7, Sep: 2, Noise: 0.7})
	return train
}

// rows returns samples [from, to) of ds as a batch for tn.
func (tn *tinyNet) rows(t *testing.T, ds *runner.Memory, from, to int) map[string]onnx.Value {
	t.Helper()
	k := onnx.NumElements(ds.Shape)
	x := onnx.NewTensor(onnx.Float, to-from, k)
	copy(x.Float32s(), ds.X[from*k:to*k])
	y := onnx.NewTensor(onnx.Int64, to-from)
	copy(y.Int64s(), ds.Y[from:to])
	return map[string]onnx.Value{tn.input: x, tn.labels: y}
}

// params returns the network's trainable parameters as one flat slice, in
// the order of Gradients.
func (tn *tinyNet) params(t *testing.T) []float32 {
	t.Helper()
	var out []float32
	for _, pg := range tn.net.Gradients(tn.loss) {
		p, err := network.FetchTensor(tn.net, pg.Param)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Float32s()...)
	}
	return out
}

func sgd(t *testing.T, lr float64) optimizer.UpdateRuleOptimizer {
	t.Helper()
	hp, _ := optimizer.Defaults("sgd")
	hp.LR = lr
	r, err := optimizer.New("sgd", hp)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return 1e300
	}
	m := 0.0
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		if d < 0 {
			d = -d
		}
		m = max(m, d)
	}
	return m
}
