package native_test

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/onnx"
)

// BenchmarkInferPresetBatch1 times one batch-1 inference of the convolutional
// presets on 1 and 2 threads: the latency `d500 run --bench` compares with
// ONNX Runtime.
func BenchmarkInferPresetBatch1(b *testing.B) {
	for _, preset := range []string{"lenet", "resnet8", "resnet18", "mobilenetv2", "shufflenet_v2_x0_5", "squeezenet1_1"} {
		m, err := models.Preset(preset, 1)
		if err != nil {
			b.Fatal(err)
		}
		shape := map[string][]int{"lenet": {1, 1, 28, 28}, "resnet8": {1, 3, 32, 32}, "resnet18": {1, 3, 224, 224}, "mobilenetv2": {1, 3, 224, 224},
			"shufflenet_v2_x0_5": {1, 3, 224, 224}, "squeezenet1_1": {1, 3, 224, 224}}[preset]
		x := onnx.NewTensor(onnx.Float, shape...)
		for i := range x.Float32s() {
			x.Float32s()[i] = float32(math.Sin(float64(i)))
		}
		feeds := map[string]onnx.Value{"x": x}
		for _, threads := range []int{1, 2} {
			b.Run(preset+"/threads="+string(rune('0'+threads)), func(b *testing.B) {
				net, err := backend.New("native", m, backend.Options{Threads: threads})
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
