package transform_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/transform"
)

// FuzzOptimize optimizes whatever decodes as a model: Optimize may refuse
// it with an error, but must not panic, must leave the decoded model as it
// was, and must return a model that encodes. The seeds are small models
// each pass rewrites and ONNX test models with subgraphs, sequences and
// optional outputs.
func FuzzOptimize(f *testing.F) {
	rng := rand.New(rand.NewPCG(51, 52))
	b := newTestGraph(f, 17)
	b.input("x", -1, 2, 4, 4)
	b.init("w", randomTensor(rng, 3, 2, 1, 1))
	b.node("Conv", []string{"x", "w"}, []string{"c"})
	addBatchNorm(b, rng, "c", "bn", 3)
	b.node("Identity", []string{"bn"}, []string{"i"})
	b.init("s", onnx.FromSlice([]int64{-1, 48}, 2))
	b.node("Reshape", []string{"i", "s"}, []string{"r"})
	b.node("Reshape", []string{"r", "s"}, []string{"y"})
	b.node("Shape", []string{"w"}, []string{"unused"})
	b.output("y")
	if data, err := onnx.Encode(b.model()); err == nil {
		f.Add(data)
	}
	for _, c := range []string{"test_if", "test_loop11", "test_batchnorm_epsilon", "test_dropout_default_mask", "test_identity_sequence", "test_shape_start_1", "test_constant", "test_cast_FLOAT_to_DOUBLE"} {
		if data, err := os.ReadFile(filepath.Join("/usr/share/libonnx-testdata/data/node", c, "model.onnx")); err == nil {
			f.Add(data)
		}
	}
	evaluate := transform.BackendEvaluator("native")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := onnx.Decode(data, "")
		if err != nil {
			return
		}
		before, err := onnx.Encode(m)
		if err != nil {
			return
		}
		opt, _, err := transform.Optimize(m, transform.Options{Evaluate: evaluate})
		if err != nil {
			return
		}
		if after, err := onnx.Encode(m); err != nil || string(after) != string(before) {
			t.Fatalf("Optimize changed the model it was given")
		}
		if _, err := onnx.Encode(opt); err != nil {
			t.Fatalf("optimized model does not encode: %v", err)
		}
	})
}
