package native_test

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// BenchmarkTrainLeNetStep times the forward and backward pass of the LeNet
// preset on a batch of 64 Fashion-MNIST-sized images: the work of one
// step of `make run`'s training, without the optimizer's update.
func BenchmarkTrainLeNetStep(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(map[int]string{1: "threads=1", 2: "threads=2"}[threads], func(b *testing.B) {
			m, err := models.Preset("lenet", 1)
			if err != nil {
				b.Fatal(err)
			}
			loss, err := network.AppendClassLoss(m, network.LossSoftmaxCrossEntropy, "y", "")
			if err != nil {
				b.Fatal(err)
			}
			net, err := backend.New("native", m, backend.Options{Threads: threads, SkipInputGradients: true})
			if err != nil {
				b.Fatal(err)
			}
			defer net.Close()
			x := onnx.NewTensor(onnx.Float, 64, 1, 28, 28)
			for i := range x.Float32s() {
				x.Float32s()[i] = float32(math.Sin(float64(i)))
			}
			y := onnx.NewTensor(onnx.Int64, 64)
			for i := range y.Int64s() {
				y.Int64s()[i] = int64(i % 10)
			}
			feeds := map[string]onnx.Value{"x": x, "labels": y}
			b.ResetTimer()
			for range b.N {
				if _, err := net.InferenceAndBackprop(feeds, loss); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
