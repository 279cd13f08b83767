package onnxruntime_test

import (
	"testing"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/onnx"
)

// BenchmarkPresets times one inference of the small model presets, a batch
// of 8, on ONNX Runtime and on the native backend side by side:
//
//	go test ./backend/onnxruntime -run - -bench Presets
func BenchmarkPresets(b *testing.B) {
	for _, preset := range []string{"mlp", "lenet", "resnet8"} {
		m, err := models.Preset(preset, 1)
		if err != nil {
			b.Fatal(err)
		}
		shape := []int{8, 1, 28, 28}
		if preset == "resnet8" {
			shape = []int{8, 3, 32, 32}
		}
		x := onnx.NewTensor(onnx.Float, shape...)
		for i := range x.Float32s() {
			x.Float32s()[i] = float32(i%255) / 255
		}
		feeds := map[string]onnx.Value{"x": x}
		for _, name := range []string{"onnxruntime", "native"} {
			b.Run(preset+"/"+name, func(b *testing.B) {
				n, err := backend.New(name, m, backend.Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer n.Close()
				for b.Loop() {
					if _, err := n.Inference(feeds); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
