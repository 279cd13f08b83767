package tests

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/onnx"
)

// `d500 model PRESET -o FILE` writes the preset: it loads back with the
// preset's parameter count, and runs with `d500 run`.
func TestD500Model(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	out := filepath.Join(dir, "lenet.onnx")
	if stdout, stderr, code := runD500(t, bin, "model", "lenet", "-o", out, "--seed", "7"); code != 0 {
		t.Fatalf("d500 model: exit %d\n%s%s", code, stdout, stderr)
	}
	m, err := onnx.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := models.Preset("lenet", 7)
	if err != nil {
		t.Fatal(err)
	}
	if got, w := models.ParamCount(m), models.ParamCount(want); got != w {
		t.Fatalf("written model has %d parameters, the preset %d", got, w)
	}
	if stdout, stderr, code := runD500(t, bin, "run", "--model", out, "--random-inputs"); code != 0 || !strings.Contains(stdout, "[1 10]") {
		t.Fatalf("d500 run on the written preset: exit %d\n%s%s", code, stdout, stderr)
	}
	// --init picks the policy: the file holds exactly the preset's
	// parameters under it, and the two policies differ.
	for _, policy := range []models.Init{models.InitHe, models.InitPyTorch} {
		file := filepath.Join(dir, "lenet-"+policy.String()+".onnx")
		if stdout, stderr, code := runD500(t, bin, "model", "lenet", "-o", file, "--seed", "7", "--init", policy.String()); code != 0 {
			t.Fatalf("d500 model --init %v: exit %d\n%s%s", policy, code, stdout, stderr)
		}
		got, err := onnx.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := models.PresetWith("lenet", 7, policy)
		if err != nil {
			t.Fatal(err)
		}
		for i, in := range want.Graph.Initializers {
			if !slices.Equal(got.Graph.Initializers[i].Tensor.Float32s(), in.Tensor.Float32s()) {
				t.Fatalf("--init %v: %s differs from the preset's", policy, in.Name)
			}
		}
		if policy == models.InitHe && !slices.Equal(got.Graph.Initializers[0].Tensor.Float32s(), m.Graph.Initializers[0].Tensor.Float32s()) {
			t.Fatalf("--init he differs from the default")
		}
		if policy == models.InitPyTorch && slices.Equal(got.Graph.Initializers[0].Tensor.Float32s(), m.Graph.Initializers[0].Tensor.Float32s()) {
			t.Fatalf("--init pytorch gives the same weights as --init he")
		}
	}
	for _, args := range [][]string{{"model", "nosuch", "-o", out}, {"model", "lenet"}, {"model"}, {"model", "lenet", "-o", out, "--init", "xavier"}} {
		if _, _, code := runD500(t, bin, args...); code != 2 {
			t.Errorf("d500 %v: exit %d, want 2", args, code)
		}
	}
}
