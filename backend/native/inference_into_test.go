package native_test

import (
	"math"
	"runtime"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// presetFeeds builds a preset and a batch of its input ("x", its symbolic
// batch dimension set to batch) filled with a fixed wave.
func presetFeeds(t testing.TB, name string, batch int) (*onnx.Model, map[string]onnx.Value) {
	t.Helper()
	m, err := models.Preset(name, 1)
	if err != nil {
		t.Fatal(err)
	}
	in := m.Graph.Inputs[0]
	var shape []int
	for _, d := range in.Type.Shape {
		if d.Size > 0 {
			shape = append(shape, int(d.Size))
		} else {
			shape = append(shape, batch)
		}
	}
	x := onnx.NewTensor(onnx.Float, shape...)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(math.Sin(float64(i) * 0.37))
	}
	return m, map[string]onnx.Value{in.Name: x}
}

// InferenceInto gives Inference's outputs, overwriting the caller's
// tensors in place when their shape fits and replacing them when not.
func TestInferenceIntoReusesCallerTensors(t *testing.T) {
	m, feeds := presetFeeds(t, "lenet", 2)
	net, err := backend.New("native", m, backend.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	want, err := net.Inference(feeds)
	if err != nil {
		t.Fatal(err)
	}
	stale := onnx.NewTensor(onnx.Float, 3, 10) // wrong batch: replaced
	dst := map[string]onnx.Value{"y": stale}
	if _, err := network.InferInto(net, feeds, dst); err != nil {
		t.Fatal(err)
	}
	got := dst["y"].(*onnx.Tensor)
	if got == stale {
		t.Fatalf("a [3 10] tensor was kept for a [2 10] output")
	}
	for i, v := range want["y"].(*onnx.Tensor).Float32s() {
		if got.Float32s()[i] != v {
			t.Fatalf("y[%d] = %v, Inference gave %v", i, got.Float32s()[i], v)
		}
	}
	got.Float32s()[0] = float32(math.NaN())
	if _, err := network.InferInto(net, feeds, dst); err != nil {
		t.Fatal(err)
	}
	if dst["y"].(*onnx.Tensor) != got || got.Float32s()[0] != want["y"].(*onnx.Tensor).Float32s()[0] {
		t.Fatalf("the fitting tensor was not overwritten in place")
	}
	if err := net.(network.IntoRunner).InferenceInto(feeds, nil); err == nil {
		t.Fatalf("a nil destination map was accepted")
	}
}

// After warm-up, inference of every preset allocates nothing, on one and
// on two threads, with and without the inference graph optimisations.
func TestPresetInferenceAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every preset")
	}
	for _, name := range models.PresetNames() {
		m, feeds := presetFeeds(t, name, 1)
		for _, optimize := range []bool{false, true} {
			for _, threads := range []int{1, 2} {
				net, err := backend.New("native", m, backend.Options{Threads: threads, Optimize: optimize})
				if err != nil {
					t.Fatal(err)
				}
				dst := map[string]onnx.Value{}
				run := func() {
					if _, err := network.InferInto(net, feeds, dst); err != nil {
						t.Fatal(err)
					}
				}
				run()
				// testing.AllocsPerRun counts the whole process's
				// allocations, the Go runtime's own among them (a
				// garbage collection that the building of the network
				// set off, an OS thread started for a processor): a
				// collection goes first, and a count above zero is
				// measured again, twice. An allocation of the inference
				// itself shows in every measurement.
				runtime.GC()
				var counts []float64
				for range 3 {
					a := testing.AllocsPerRun(3, run)
					counts = append(counts, a)
					if a == 0 {
						break
					}
				}
				if counts[len(counts)-1] != 0 {
					t.Errorf("%s on %d threads, Optimize %v: %v allocations per inference in three measurements, want 0", name, threads, optimize, counts)
				}
				net.Close()
			}
		}
	}
}
