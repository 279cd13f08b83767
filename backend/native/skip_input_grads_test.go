package native_test

import (
	"math"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// With SkipInputGradients, backprop gives the parameters the same
// gradients, bit for bit, and the graph input none.
func TestSkipInputGradients(t *testing.T) {
	m, err := models.Preset("lenet", 3)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := network.AppendClassLoss(m, network.LossSoftmaxCrossEntropy, "y", "")
	if err != nil {
		t.Fatal(err)
	}
	x := onnx.NewTensor(onnx.Float, 4, 1, 28, 28)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(math.Sin(float64(i)))
	}
	feeds := map[string]onnx.Value{"x": x, "labels": onnx.FromSlice([]int64{1, 7, 3, 3}, 4)}
	grads := map[bool]map[string][]float32{}
	for _, skip := range []bool{false, true} {
		net, err := backend.New("native", m, backend.Options{SkipInputGradients: skip})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := net.InferenceAndBackprop(feeds, loss); err != nil {
			t.Fatal(err)
		}
		grads[skip] = map[string][]float32{}
		for _, pg := range net.Gradients(loss) {
			g, err := network.FetchTensor(net, pg.Grad)
			if err != nil {
				t.Fatal(err)
			}
			grads[skip][pg.Param] = slices.Clone(g.Float32s())
		}
		_, err = net.Fetch(network.GradName("x"))
		if skip && err == nil {
			t.Errorf("skipping input gradients: the gradient of x can still be fetched")
		}
		if !skip && err != nil {
			t.Errorf("the gradient of x: %v", err)
		}
		net.Close()
	}
	if len(grads[true]) == 0 || len(grads[true]) != len(grads[false]) {
		t.Fatalf("%d parameter gradients with the inputs' skipped, %d without", len(grads[true]), len(grads[false]))
	}
	for p, g := range grads[false] {
		if !slices.Equal(g, grads[true][p]) {
			t.Errorf("%s: the gradient differs when the inputs' are skipped", p)
		}
	}
}
