package native_test

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/onnx"
)

// BenchmarkInferPresetBatch1 times one batch-1 inference of presets on 1
// and 2 threads, optimized for inference as `d500 run --bench` and `d500
// bench` run them: the latency they compare with ONNX Runtime. The
// input's shape is the model's, its symbolic batch set to 1.
func BenchmarkInferPresetBatch1(b *testing.B) {
	for _, preset := range []string{"lenet", "resnet8", "resnet18", "mobilenetv2", "mobilenet_v3_small", "shufflenet_v2_x0_5", "squeezenet1_1", "transformer", "lstm_gru"} {
		m, err := models.Preset(preset, 1)
		if err != nil {
			b.Fatal(err)
		}
		var shape []int
		for _, d := range m.Graph.Inputs[0].Type.Shape {
			shape = append(shape, int(max(d.Size, 1))) // the symbolic batch has no size
		}
		x := onnx.NewTensor(onnx.Float, shape...)
		for i := range x.Float32s() {
			x.Float32s()[i] = float32(math.Sin(float64(i)))
		}
		feeds := map[string]onnx.Value{m.Graph.Inputs[0].Name: x}
		for _, threads := range []int{1, 2} {
			b.Run(preset+"/threads="+string(rune('0'+threads)), func(b *testing.B) {
				net, err := backend.New("native", m, backend.Options{Threads: threads, Optimize: true})
				if err != nil {
					b.Fatal(err)
				}
				defer net.Close()
				for b.Loop() {
					if _, err := net.Inference(feeds); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
