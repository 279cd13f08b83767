package backend_test

import (
	"fmt"
	"log"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/native" // registers the "native" backend
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/onnx"
)

// Build a model on a backend and run it. A model from a file is
// onnx.Load("model.onnx"); here LeNet comes from the presets. The backend
// is chosen by name: its package registers it when imported.
func ExampleNew() {
	m, err := models.Preset("lenet", 1)
	if err != nil {
		log.Fatal(err)
	}
	net, err := backend.New("native", m, backend.Options{Threads: 1, Optimize: true})
	if err != nil {
		log.Fatal(err)
	}
	defer net.Close()

	x := onnx.NewTensor(onnx.Float, 1, 1, 28, 28) // one black image
	out, err := net.Inference(map[string]onnx.Value{net.Inputs()[0]: x})
	if err != nil {
		log.Fatal(err)
	}
	y := out[net.Outputs()[0]].(*onnx.Tensor)
	fmt.Println(net.Outputs()[0], y.Shape, y.Type)
	// Output: y [1 10] float
}
