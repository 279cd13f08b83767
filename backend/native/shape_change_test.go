package native_test

import (
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// Kernels keep plans, shapes and buffers between runs; a network run on
// batch 1, then 3, then 1 again must give, each time, exactly what a fresh
// network gives for that batch: nothing planned for one shape may leak
// into a run of another, with and without the graph optimisations.
func TestPresetInferenceAcrossBatchChanges(t *testing.T) {
	presets := []string{"mlp", "lenet", "resnet8", "transformer", "lstm_gru", "shufflenet_v2_x0_5", "mobilenet_v3_small"}
	if testing.Short() {
		presets = presets[:4]
	}
	for _, optimize := range []bool{false, true} {
		for _, name := range presets {
			fresh := map[int]*onnx.Tensor{}
			for _, batch := range []int{1, 3} {
				m, feeds := presetFeeds(t, name, batch)
				net, err := backend.New("native", m, backend.Options{Threads: 2, Optimize: optimize})
				if err != nil {
					t.Fatal(err)
				}
				out, err := net.Inference(feeds)
				if err != nil {
					t.Fatalf("%s (Optimize %v) batch %d: %v", name, optimize, batch, err)
				}
				fresh[batch] = out["y"].(*onnx.Tensor)
				net.Close()
			}
			m, _ := presetFeeds(t, name, 1)
			net, err := backend.New("native", m, backend.Options{Threads: 2, Optimize: optimize})
			if err != nil {
				t.Fatal(err)
			}
			dst := map[string]onnx.Value{}
			for step, batch := range []int{1, 3, 1, 3} {
				_, feeds := presetFeeds(t, name, batch)
				if _, err := network.InferInto(net, feeds, dst); err != nil {
					t.Fatalf("%s (Optimize %v) run %d (batch %d): %v", name, optimize, step, batch, err)
				}
				got, want := dst["y"].(*onnx.Tensor), fresh[batch]
				if !sameInts(got.Shape, want.Shape) {
					t.Fatalf("%s (Optimize %v) run %d (batch %d): shape %v, a fresh network gives %v", name, optimize, step, batch, got.Shape, want.Shape)
				}
				for i, v := range want.Float32s() {
					if g := got.Float32s()[i]; g != v {
						t.Fatalf("%s (Optimize %v) run %d (batch %d): y[%d] = %v, a fresh network gives %v", name, optimize, step, batch, i, g, v)
					}
				}
			}
			net.Close()
		}
	}
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
