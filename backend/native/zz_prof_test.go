package native_test

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/onnx"
)

func BenchmarkProfPreset(b *testing.B) {
	for _, preset := range strings.Split(os.Getenv("PRESETS"), ",") {
		m, err := models.Preset(preset, 1)
		if err != nil {
			b.Fatal(err)
		}
		var shape []int
		for _, d := range m.Graph.Inputs[0].Type.Shape {
			shape = append(shape, int(max(d.Size, 1)))
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
