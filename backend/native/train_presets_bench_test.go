package native_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/runner"
)

// trainStepPresets are the presets `make bench-train` compares with
// PyTorch, with the image shape each trains on.
var trainStepPresets = []struct {
	name  string
	shape []int // C, H, W of one sample
}{
	{"mlp", []int{1, 28, 28}},
	{"lenet", []int{1, 28, 28}},
	{"resnet8", []int{3, 32, 32}},
	{"resnet20", []int{3, 32, 32}},
}

// trainStepSetup builds preset as `d500 train` does (BatchNormalization on
// batch statistics, softmax cross-entropy, running statistics frozen) with
// a native momentum-SGD optimizer, and one batch of the given size.
func trainStepSetup(tb testing.TB, preset string, shape []int, batch, threads int) (network.Network, optimizer.Optimizer, map[string]onnx.Value) {
	tb.Helper()
	m, err := models.Preset(preset, 1)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := network.BatchNormTraining(m); err != nil {
		tb.Fatal(err)
	}
	input := m.Graph.Inputs[0].Name
	loss, err := network.AppendClassLoss(m, network.LossSoftmaxCrossEntropy, m.Graph.Outputs[0].Name, "")
	if err != nil {
		tb.Fatal(err)
	}
	labels := m.Graph.Inputs[len(m.Graph.Inputs)-1].Name
	net, err := backend.New("native", m, backend.Options{Threads: threads, Frozen: runner.BatchNormStats(m.Graph), SkipInputGradients: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { net.Close() })
	hp, err := optimizer.Defaults("momentum")
	if err != nil {
		tb.Fatal(err)
	}
	hp.LR = 0.01
	opt, err := optimizer.NewNativeFor("momentum", hp, net, loss)
	if err != nil {
		tb.Fatal(err)
	}
	x := onnx.NewTensor(onnx.Float, append([]int{batch}, shape...)...)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(math.Sin(float64(i) * 0.37))
	}
	y := onnx.NewTensor(onnx.Int64, batch)
	for i := range y.Int64s() {
		y.Int64s()[i] = int64(i % 10)
	}
	return net, opt, map[string]onnx.Value{input: x, labels: y}
}

// BenchmarkTrainPresetStep times one training step (forward, backward,
// native momentum-SGD update) of each preset `make bench-train` compares,
// at batch 64 on one and two threads.
func BenchmarkTrainPresetStep(b *testing.B) {
	for _, p := range trainStepPresets {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", p.name, threads), func(b *testing.B) {
				_, opt, batch := trainStepSetup(b, p.name, p.shape, 64, threads)
				if _, err := opt.Step(batch); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := opt.Step(batch); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// A warm training step of each preset (forward, backward, native
// momentum-SGD update, BatchNormalization on batch statistics) allocates
// nothing: activations, gradients, the statistics and the optimizer's
// state live in buffers made by the first steps.
func TestTrainPresetStepAllocatesNothing(t *testing.T) {
	for _, p := range trainStepPresets {
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/threads=%d", p.name, threads), func(t *testing.T) {
				_, opt, feeds := trainStepSetup(t, p.name, p.shape, 8, threads)
				for range 2 {
					if _, err := opt.Step(feeds); err != nil {
						t.Fatal(err)
					}
				}
				if n := testing.AllocsPerRun(3, func() {
					if _, err := opt.Step(feeds); err != nil {
						t.Fatal(err)
					}
				}); n != 0 {
					t.Errorf("a training step allocates %v times", n)
				}
			})
		}
	}
}
