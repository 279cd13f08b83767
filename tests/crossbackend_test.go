package tests

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/gorgonia"
	_ "github.com/deep500/deep500-go/backend/native"
	_ "github.com/deep500/deep500-go/backend/onnxruntime"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// crossBackends are compared on the same networks; the first is the
// reference. To add a backend, import its package above and add its name
// here.
var crossBackends = []string{"native", "onnxruntime", "gorgonia"}

// crossTolerance is the rule two backends' outputs are compared by, its
// absolute part scaled to the reference output's magnitude (ScaledTo).
var crossTolerance = metrics.CrossBackendTolerance

// Every pytorch-converted network runs on every backend with the inputs of
// its first data set, and each backend's outputs must match the reference
// backend's. A backend is left out of a network only when it reports
// network.ErrUnsupported for it, and the reason is logged.
func TestCrossBackendPytorchConverted(t *testing.T) {
	root := filepath.Join(dataRoot, "pytorch-converted")
	cases, err := metrics.FindCases(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("no cases under %s (run make setup)", root)
	}
	for _, name := range crossBackends {
		if _, err := backend.Get(name); err != nil {
			t.Fatalf("backend %s: %v", name, err)
		}
	}
	compared := map[string]int{}
	for _, c := range cases {
		m, err := onnx.Load(filepath.Join(c.Dir, metrics.ModelFile))
		if err != nil {
			t.Fatal(err)
		}
		feeds := readFeeds(t, c.Dir, m.Graph)
		var ref map[string]onnx.Value
		for i, name := range crossBackends {
			out, err := runOn(name, m, feeds)
			if errors.Is(err, network.ErrUnsupported) {
				t.Logf("%s: %s left out: %v", c.Name, name, err)
				if i == 0 {
					break
				}
				continue
			}
			if err != nil {
				t.Errorf("%s on %s: %v", c.Name, name, err)
				continue
			}
			if i == 0 {
				ref = out
				continue
			}
			if ref == nil {
				continue
			}
			for _, o := range m.Graph.Outputs {
				d := metrics.Compare(out[o.Name], ref[o.Name], crossTolerance.ScaledTo(ref[o.Name]))
				if !d.Equal() {
					t.Errorf("%s: output %q of %s differs from %s: %s", c.Name, o.Name, name, crossBackends[0], d.Mismatch)
				}
			}
			compared[name]++
		}
	}
	var summary []string
	for _, name := range crossBackends[1:] {
		summary = append(summary, name+": "+strconv.Itoa(compared[name]))
		if compared[name] == 0 {
			t.Errorf("%s ran none of the %d networks", name, len(cases))
		}
	}
	sort.Strings(summary)
	t.Logf("networks compared with %s, of %d: %s", crossBackends[0], len(cases), strings.Join(summary, ", "))
}

// runOn builds the network with one backend and runs it once.
func runOn(name string, m *onnx.Model, feeds map[string]onnx.Value) (map[string]onnx.Value, error) {
	net, err := backend.New(name, m, backend.Options{})
	if err != nil {
		return nil, err
	}
	defer net.Close()
	return net.Inference(feeds)
}

// readFeeds reads test_data_set_0's inputs, the K-th file feeding the K-th
// graph input that has no initializer, as ONNX's runner does.
func readFeeds(t *testing.T, dir string, g *onnx.Graph) map[string]onnx.Value {
	t.Helper()
	feeds := map[string]onnx.Value{}
	for k, in := range runtimeInputs(g) {
		f := filepath.Join(dir, "test_data_set_0", "input_"+strconv.Itoa(k)+".pb")
		if _, err := os.Stat(f); err != nil {
			break
		}
		_, v, err := onnx.ReadValue(f, in.Type)
		if err != nil {
			t.Fatal(err)
		}
		feeds[in.Name] = v
	}
	return feeds
}

// The model presets run on every backend with the same input, at batch 2
// (and 1 for the presets of issue 12), and must agree with the reference.
// The small presets d500 train uses (mlp, lenet, resnet8) are common
// operators at DefaultOpset, which every backend of the list must run.
// The networks users run (the mobile ImageNet classifiers, the
// Transformer encoder and the recurrent net) must run on native and
// onnxruntime, the pair issue 12 benchmarks; another backend is left out
// of one only when it reports network.ErrUnsupported, and the reason is
// logged.
func TestCrossBackendPresets(t *testing.T) {
	type presetCase struct {
		name    string
		input   []int // without the batch
		batches []int
		all     bool // every backend must run it
	}
	image := []int{3, 224, 224}
	for _, c := range []presetCase{
		{"mlp", []int{1, 28, 28}, []int{2}, true},
		{"lenet", []int{1, 28, 28}, []int{2}, true},
		{"resnet8", []int{3, 32, 32}, []int{2}, true},
		{"mobilenet_v3_small", image, []int{1, 2}, false},
		{"shufflenet_v2_x0_5", image, []int{1, 2}, false},
		{"squeezenet1_1", image, []int{1, 2}, false},
		{"mnasnet0_5", image, []int{1, 2}, false},
		{"transformer", []int{32, 64}, []int{1, 2}, false},
		{"lstm_gru", []int{32, 32}, []int{1, 2}, false},
	} {
		m, err := models.Preset(c.name, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, batch := range c.batches {
			x := onnx.NewTensor(onnx.Float, append([]int{batch}, c.input...)...)
			for i := range x.Float32s() {
				x.Float32s()[i] = float32((i*7919)%1000)/500 - 1
			}
			feeds := map[string]onnx.Value{"x": x}
			var ref onnx.Value
			for i, name := range crossBackends {
				out, err := runOn(name, m, feeds)
				if err != nil {
					if !c.all && i >= 2 && errors.Is(err, network.ErrUnsupported) {
						t.Logf("%s: %s left out: %v", c.name, name, err)
					} else {
						t.Errorf("%s at batch %d on %s: %v", c.name, batch, name, err)
					}
					continue
				}
				if i == 0 {
					ref = out["y"]
					continue
				}
				if d := metrics.Compare(out["y"], ref, crossTolerance.ScaledTo(ref)); !d.Equal() {
					t.Errorf("%s at batch %d: output y of %s differs from %s: %s", c.name, batch, name, crossBackends[0], d.Mismatch)
				}
			}
		}
	}
}
