package transform

import (
	"fmt"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// Evaluator runs a model that has no inputs to feed (everything it reads
// is an initializer) and returns its graph outputs by name. Constant
// folding evaluates each foldable node as such a one-node model.
type Evaluator func(m *onnx.Model) (map[string]onnx.Value, error)

// NetworkEvaluator makes an Evaluator from a function that builds a
// network for a model: each evaluation builds one, runs it once and
// closes it.
func NetworkEvaluator(build func(m *onnx.Model) (network.Network, error)) Evaluator {
	return func(m *onnx.Model) (map[string]onnx.Value, error) {
		net, err := build(m)
		if err != nil {
			return nil, err
		}
		defer net.Close()
		return net.Inference(map[string]onnx.Value{})
	}
}

// BackendEvaluator evaluates with the registered backend of that name (on
// one thread, without optimizing the one-node models it is given). The
// backend must be linked into the program (for native, import
// github.com/deep500/deep500-go/backend/native).
func BackendEvaluator(name string) Evaluator {
	return NetworkEvaluator(func(m *onnx.Model) (network.Network, error) {
		net, err := backend.New(name, m, backend.Options{Threads: 1})
		if err != nil {
			return nil, fmt.Errorf("%s backend: %w", name, err)
		}
		return net, nil
	})
}
