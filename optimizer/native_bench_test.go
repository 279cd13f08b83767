package optimizer_test

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
)

// mlpModel is a 784-256-10 perceptron (MatMul, Add, Relu) with a mean
// squared error loss, for batches of 64.
func mlpModel(b testing.TB) (*onnx.Model, string) {
	b.Helper()
	g := &onnx.Graph{}
	node := func(op string, in []string, out string) {
		n := &onnx.Node{OpType: op, Inputs: in, Outputs: []string{out}, Opset: 17, Graph: g}
		since, ctor, ok := onnx.LookupOperator("", op, 17)
		if !ok {
			b.Fatalf("no %s", op)
		}
		o, err := ctor(n, since)
		if err != nil {
			b.Fatal(err)
		}
		n.Op = o
		g.Nodes = append(g.Nodes, n)
	}
	r := rand.New(rand.NewPCG(5, 6))
	param := func(name string, dims ...int) {
		t := onnx.NewTensor(onnx.Float, dims...)
		for i := range t.Float32s() {
			t.Float32s()[i] = float32(r.NormFloat64() * 0.05)
		}
		g.Initializers = append(g.Initializers, &onnx.Initializer{Name: name, Tensor: t})
	}
	ft := func(dims ...int64) *onnx.TypeInfo {
		s := make([]onnx.Dim, len(dims))
		for i, d := range dims {
			s[i] = onnx.Dim{Size: d}
		}
		return &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float, Shape: s, HasShape: true}
	}
	param("W1", 784, 256)
	param("B1", 256)
	param("W2", 256, 10)
	param("B2", 10)
	node("MatMul", []string{"X", "W1"}, "h0")
	node("Add", []string{"h0", "B1"}, "h1")
	node("Relu", []string{"h1"}, "h2")
	node("MatMul", []string{"h2", "W2"}, "h3")
	node("Add", []string{"h3", "B2"}, "Y")
	g.Inputs = []*onnx.ValueInfo{{Name: "X", Type: ft(64, 784)}}
	g.Outputs = []*onnx.ValueInfo{{Name: "Y", Type: ft(64, 10)}}
	m := &onnx.Model{Opsets: map[string]int64{"": 17}, Graph: g}
	loss, err := network.AppendLoss(m, network.LossMeanSquaredError, "Y", "T")
	if err != nil {
		b.Fatal(err)
	}
	return m, loss
}

func mlpBatch() map[string]onnx.Value {
	r := rand.New(rand.NewPCG(7, 8))
	x := onnx.NewTensor(onnx.Float, 64, 784)
	y := onnx.NewTensor(onnx.Float, 64, 10)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(r.Float64())
	}
	for i := range y.Float32s() {
		y.Float32s()[i] = float32(r.Float64())
	}
	return map[string]onnx.Value{"X": x, "T": y}
}

// BenchmarkStep times one optimizer step (forward, backward, update) on
// the MLP, reference (Driver) against native, per optimizer. The ratio of
// their ns/op is the cost of the Network API's copies.
func BenchmarkStep(b *testing.B) {
	for _, name := range []string{"sgd", "adam"} {
		for _, impl := range []string{"reference", "native"} {
			b.Run(name+"/"+impl, func(b *testing.B) {
				m, loss := mlpModel(b)
				net, err := backend.New("native", m, backend.Options{Threads: 1})
				if err != nil {
					b.Fatal(err)
				}
				defer net.Close()
				hp, _ := optimizer.Defaults(name)
				var opt optimizer.Optimizer
				if impl == "native" {
					if opt, err = optimizer.NewNative(name, hp, net, loss); err != nil {
						b.Fatal(err)
					}
				} else {
					rule, err := optimizer.New(name, hp)
					if err != nil {
						b.Fatal(err)
					}
					opt = optimizer.NewDriver(net, loss, rule, 0)
				}
				batch := mlpBatch()
				if _, err := opt.Step(batch); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, err := opt.Step(batch); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// After its first step, a reference step on the native backend fetches
// into the buffers it kept: it allocates far less than one copy of the
// largest parameter (784×256 float32, 784 KiB) per step, where fetching
// into new tensors would allocate two (the parameter and its gradient).
func TestReferenceStepReusesBuffers(t *testing.T) {
	m, loss := mlpModel(t)
	net, err := backend.New("native", m, backend.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	rule, _ := optimizer.New("adam", optimizer.Hyperparams{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	d := optimizer.NewDriver(net, loss, rule, 0)
	batch := mlpBatch()
	if _, err := d.Step(batch); err != nil {
		t.Fatal(err)
	}
	const steps = 5
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range steps {
		if _, err := d.Step(batch); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	perStep := float64(after.TotalAlloc-before.TotalAlloc) / steps
	if perStep > 784*256*4/4 {
		t.Errorf("a reference step allocates %.0f bytes", perStep)
	}
	t.Logf("a reference step allocates %.0f bytes", perStep)
	// The buffers hold what Fetch returns.
	for _, pg := range net.Gradients(loss) {
		for _, name := range []string{pg.Param, pg.Grad} {
			want, err := network.FetchTensor(net, name)
			if err != nil {
				t.Fatal(err)
			}
			got := onnx.NewTensor(want.Type, want.Shape...)
			if err := net.(network.IntoFetcher).FetchInto(name, got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Float32s(), want.Float32s()) {
				t.Errorf("FetchInto(%q) differs from Fetch", name)
			}
		}
	}
	if err := net.(network.IntoFetcher).FetchInto("W1", onnx.NewTensor(onnx.Float, 2, 2)); err == nil {
		t.Error("FetchInto a buffer of the wrong shape succeeded")
	}
}
