package network_test

import (
	"math"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// bnModel is x [N, 2, 3, 3] → BatchNormalization → Flatten → Dense → y.
func bnModel(t *testing.T, opset int64) *onnx.Model {
	t.Helper()
	b := models.NewBuilder("bn", opset)
	b.SetSeed(3)
	x := b.Input("x", onnx.Float, -1, 2, 3, 3)
	b.Output(b.Dense(b.Flatten(b.BatchNorm(x)), 4), "y")
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// In training mode the node normalises with the batch's statistics and
// its updated running statistics follow ONNX's definition: momentum ×
// old + (1 − momentum) × the batch's mean and (population) variance;
// copying them back moves the initializers.
func TestBatchNormTraining(t *testing.T) {
	m := bnModel(t, 17)
	stats, err := network.BatchNormTraining(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 2 || stats[0].Param != "bn1.running_mean" || stats[1].Updated != "bn1.running_var.updated" {
		t.Fatalf("stats %+v", stats)
	}
	loss, err := network.AppendClassLoss(m, network.LossSoftmaxCrossEntropy, "y", "")
	if err != nil {
		t.Fatal(err)
	}
	net, err := backend.New("native", m, backend.Options{Frozen: []string{"bn1.running_mean", "bn1.running_var"}})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	const n = 4
	x := make([]float32, n*2*9)
	for i := range x {
		x[i] = float32(math.Sin(float64(3*i+1))) * float32(1+i%5)
	}
	if _, err := net.InferenceAndBackprop(map[string]onnx.Value{"x": onnx.FromSlice(x, n, 2, 3, 3),
		"labels": onnx.FromSlice([]int64{0, 1, 2, 3}, n)}, loss); err != nil {
		t.Fatal(err)
	}
	if _, err := network.CopyRunningStats(net, stats, nil); err != nil {
		t.Fatal(err)
	}
	mean, _ := network.FetchTensor(net, "bn1.running_mean")
	variance, _ := network.FetchTensor(net, "bn1.running_var")
	for c := 0; c < 2; c++ {
		var sum, sq float64
		for i := 0; i < n; i++ {
			for k := 0; k < 9; k++ {
				v := float64(x[(i*2+c)*9+k])
				sum += v
				sq += v * v
			}
		}
		mu := sum / (n * 9)
		pop := sq/(n*9) - mu*mu
		wantMean, wantVar := 0.9*0+0.1*mu, 0.9*1+0.1*pop
		if got := float64(mean.Float32s()[c]); math.Abs(got-wantMean) > 1e-5 {
			t.Errorf("channel %d: running mean %v, want %v", c, got, wantMean)
		}
		if got := float64(variance.Float32s()[c]); math.Abs(got-wantVar) > 1e-5 {
			t.Errorf("channel %d: running var %v, want %v", c, got, wantVar)
		}
	}
	// The gradients leave the statistics alone: they are not parameters
	// of the loss.
	for _, pg := range net.Gradients(loss) {
		if strings.Contains(pg.Param, "running") {
			t.Errorf("gradient of %s", pg.Param)
		}
	}
}

func TestBatchNormTrainingErrors(t *testing.T) {
	if _, err := network.BatchNormTraining(bnModel(t, 13)); err == nil || !strings.Contains(err.Error(), "opset 13") {
		t.Errorf("opset 13: %v", err)
	}
	m, _ := models.Preset("mlp", 1)
	if stats, err := network.BatchNormTraining(m); err != nil || len(stats) != 0 {
		t.Errorf("a model without BatchNormalization: %v, %v", stats, err)
	}
}
