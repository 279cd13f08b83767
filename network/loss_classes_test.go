package network_test

import (
	"math"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// With class labels, mse compares the scores with one-hot rows: the loss
// is mean((y - onehot(labels))²) over N×C, computed here by hand.
func TestAppendClassLossMSE(t *testing.T) {
	m, err := models.Preset("mlp", 1)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := network.AppendClassLoss(m, network.LossMeanSquaredError, "y", "")
	if err != nil {
		t.Fatal(err)
	}
	net, err := backend.New("native", m, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	x := make([]float32, 3*784)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)))
	}
	labels := []int64{2, 0, 9}
	out, err := net.InferenceAndBackprop(map[string]onnx.Value{
		"x": onnx.FromSlice(x, 3, 1, 28, 28), "labels": onnx.FromSlice(labels, 3)}, loss)
	if err != nil {
		t.Fatal(err)
	}
	y := out["y"].(*onnx.Tensor).Float32s()
	var want float64
	for i, l := range labels {
		for c := 0; c < 10; c++ {
			target := 0.0
			if int64(c) == l {
				target = 1
			}
			d := float64(y[i*10+c]) - target
			want += d * d
		}
	}
	want /= 30
	got := float64(out[loss].(*onnx.Tensor).Float32s()[0])
	if math.Abs(got-want) > 1e-5*want {
		t.Errorf("mse loss %v, want %v", got, want)
	}
	if len(net.Gradients(loss)) != 4 {
		t.Errorf("gradients %v, want the mlp's 4 parameters", net.Gradients(loss))
	}
	if in := m.Graph.Inputs[len(m.Graph.Inputs)-1]; in.Name != "labels" || in.Type.Elem != onnx.Int64 {
		t.Errorf("labels input %v %v, want int64 labels", in.Name, in.Type)
	}
}

func TestAppendClassLossErrors(t *testing.T) {
	m, _ := models.Preset("mlp", 1)
	if _, err := network.AppendClassLoss(m, network.LossMeanSquaredError, "y", "x"); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("labels named like the input: %v", err)
	}
	m.Opsets[""] = 9
	if _, err := network.AppendClassLoss(m, network.LossL1, "y", ""); err == nil || !strings.Contains(err.Error(), "opset") {
		t.Errorf("opset 9: %v", err)
	}
}
