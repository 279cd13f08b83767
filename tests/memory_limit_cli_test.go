package tests

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// A declared shape too large for the memory limit (the machine's, or
// --memory-limit) is an error naming the input or dataset and the bytes,
// before anything is allocated: not the runtime's fatal "out of memory"
// with a goroutine dump.
func TestD500MemoryLimit(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	huge := filepath.Join(dir, "huge.onnx")
	x := &onnx.ValueInfo{Name: "x", Type: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float, HasShape: true,
		Shape: []onnx.Dim{{Size: 1000000}, {Size: 1000000}}}}
	g := &onnx.Graph{Name: "huge", Inputs: []*onnx.ValueInfo{x}, Outputs: []*onnx.ValueInfo{{Name: "y"}},
		Nodes: []*onnx.Node{{Name: "relu", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"y"}}}}
	if err := onnx.Save(&onnx.Model{IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}, huge); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--model", huge, "--random-inputs"}, `input "x" (float of shape [1000000 1000000]) needs 3.6 TiB, more than the memory limit of`},
		{[]string{"train", "--model", "mlp", "--dataset", "synthetic:shape=1x1000000x1000000", "--steps", "1"}, `dataset "synthetic:shape=1x1000000x1000000" needs 4693 TiB`},
		// A lower limit of the user's.
		{[]string{"train", "--model", "mlp", "--dataset", "synthetic:n=1000", "--steps", "1", "--memory-limit", "1MiB"}, "more than the memory limit of 1 MiB"},
	} {
		stdout, stderr, code := runD500(t, bin, tc.args...)
		if code == 0 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "goroutine") {
			t.Errorf("d500 %v: exit %d, want an error with %q:\n%s%s", tc.args, code, tc.want, stdout, stderr)
		}
	}
	if _, stderr, code := runD500(t, bin, "run", "--model", huge, "--random-inputs", "--memory-limit", "lots"); code != 2 || !strings.Contains(stderr, `"lots" is not a size`) {
		t.Errorf("--memory-limit lots: exit %d\n%s", code, stderr)
	}
}
