package checkpoint

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/runner"
)

func testCheckpoint(steps int) *Checkpoint {
	w := onnx.FromSlice([]float32{1.5, -2, float32(steps)}, 3)
	g := &onnx.Graph{Name: "g", Initializers: []*onnx.Initializer{{Name: "w", Tensor: w}}}
	return &Checkpoint{
		Meta: Meta{Args: []string{"--model", "mlp", "--lr", "0.1"}, Optimizer: "adam", Impl: "reference", Backend: "native",
			State: runner.State{Epoch: 1, Batch: 3, Steps: steps, Samples: 64 * steps, Seconds: 1.25,
				Loss: runner.Float(0.1 + 0.2), TestLoss: runner.Float(math.NaN()), TestAccuracy: 0.5, EvaluatedAt: -1, LR: 1e-3}},
		Model: &onnx.Model{IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g},
		Optimizer: map[string]*onnx.Tensor{
			"adam.m/w":    onnx.FromSlice([]float64{0.1, 1e-300, -3}, 3),
			"adam.step/w": onnx.FromSlice([]int64{int64(steps)}),
		},
		CSV: []byte("epoch,step\n1,1\n"),
	}
}

// What Write stores, Latest reads back exactly, the newest of the
// checkpoints kept; floats keep every bit (0.1+0.2, NaN) and older
// checkpoints beyond keep are removed.
func TestWriteLatestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []int{10, 20, 30} {
		if _, err := Write(dir, testCheckpoint(s), 2); err != nil {
			t.Fatal(err)
		}
	}
	names, _ := list(dir)
	if !slices.Equal(names, []string{"step-00000020", "step-00000030"}) {
		t.Errorf("kept %v", names)
	}
	// A folder left by a crash while writing is not a checkpoint.
	os.Mkdir(filepath.Join(dir, ".writing-123"), 0o755)
	c, err := Latest(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := testCheckpoint(30)
	if !slices.Equal(c.Meta.Args, want.Meta.Args) || c.Meta.Optimizer != "adam" {
		t.Errorf("meta %+v", c.Meta)
	}
	st, ws := c.Meta.State, want.Meta.State
	if st.Steps != 30 || st.Epoch != 1 || st.Batch != 3 || math.Float64bits(float64(st.Loss)) != math.Float64bits(float64(ws.Loss)) ||
		!math.IsNaN(float64(st.TestLoss)) || st.LR != ws.LR || st.EvaluatedAt != -1 || st.Seconds != 1.25 {
		t.Errorf("state %+v, want %+v", st, ws)
	}
	if got := c.Params()["w"].Float32s(); !slices.Equal(got, []float32{1.5, -2, 30}) {
		t.Errorf("param w %v", got)
	}
	if got := c.Optimizer["adam.m/w"].Float64s(); !slices.Equal(got, []float64{0.1, 1e-300, -3}) {
		t.Errorf("state m %v", got)
	}
	if got := c.Optimizer["adam.step/w"].Int64s(); !slices.Equal(got, []int64{30}) {
		t.Errorf("state step %v", got)
	}
	if string(c.CSV) != "epoch,step\n1,1\n" {
		t.Errorf("csv %q", c.CSV)
	}
	// The same step again replaces its checkpoint.
	again := testCheckpoint(30)
	again.Meta.State.Batch = 4
	if _, err := Write(dir, again, 2); err != nil {
		t.Fatal(err)
	}
	if c, err := Latest(dir); err != nil || c.Meta.State.Batch != 4 {
		t.Errorf("rewritten checkpoint: %v %+v", err, c)
	}
}

func TestLatestErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Latest(dir); err == nil || !strings.Contains(err.Error(), "holds no checkpoint") {
		t.Errorf("empty dir: %v", err)
	}
	if _, err := Latest(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing dir: %v", err)
	}
	folder, err := Write(dir, testCheckpoint(5), 1)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(folder, OptimizerFile), []byte("not a model"), 0o644)
	if _, err := Latest(dir); err == nil || !strings.Contains(err.Error(), OptimizerFile) {
		t.Errorf("corrupt optimizer state: %v", err)
	}
	os.WriteFile(filepath.Join(folder, MetaFile), []byte(`{"format":"other/9"}`), 0o644)
	if _, err := Latest(dir); err == nil || !strings.Contains(err.Error(), "other/9") {
		t.Errorf("unknown format: %v", err)
	}
}
