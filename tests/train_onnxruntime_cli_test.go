package tests

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// csvLosses reads the loss column of a train CSV's step rows.
func csvLosses(t *testing.T, path string) []float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
		f := strings.Split(line, ",")
		if f[4] == "" {
			continue // an evaluation row
		}
		v, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			t.Fatalf("%s: %q", path, line)
		}
		out = append(out, v)
	}
	return out
}

// ONNX Runtime trains through the training graph, and from the same seed
// it follows the native backend step by step: LeNet on Fashion-MNIST with
// Adam, 20 steps, with the reference optimizer and with the update
// written as ONNX (--impl native on ONNX Runtime).
func TestD500TrainOnnxruntimeFollowsNative(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	train := func(name string, extra ...string) []float64 {
		csv := filepath.Join(dir, name+".csv")
		args := append([]string{"train", "--model", "lenet", "--dataset", "fashion-mnist", "--optimizer", "adam", "--lr", "0.001",
			"--batch", "64", "--steps", "20", "--test-every", "1000", "--seed", "7", "--threads", "1", "--csv", csv}, extra...)
		stdout, stderr, code := runD500(t, bin, args...)
		if code != 0 {
			t.Fatalf("d500 %v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		return csvLosses(t, csv)
	}
	native := train("native", "--backend", "native")
	for _, c := range []struct {
		name  string
		extra []string
	}{
		{"ort-reference", []string{"--backend", "onnxruntime"}},
		{"ort-native", []string{"--backend", "onnxruntime", "--impl", "native"}},
	} {
		got := train(c.name, c.extra...)
		if len(got) != 20 || len(native) != 20 {
			t.Fatalf("%s: %d and %d step rows, want 20", c.name, len(got), len(native))
		}
		for i := range got {
			if d := math.Abs(got[i] - native[i]); d > 1e-3*math.Max(1, math.Abs(native[i])) {
				t.Errorf("%s: step %d loss %.7g, native %.7g", c.name, i+1, got[i], native[i])
			}
		}
		if native[19] >= native[0] {
			t.Errorf("the loss did not fall: %v", native)
		}
	}
}

// d500 export-training writes a graph of standard operators that ONNX
// Runtime runs with d500 run; its outputs include every gradient and,
// with --optimizer, every parameter's next value.
func TestD500ExportTraining(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	out := filepath.Join(dir, "train.onnx")
	stdout, stderr, code := runD500(t, bin, "export-training", "--model", "lenet", "--loss", "softmax-xent", "--optimizer", "adam", "--lr", "0.01", "-o", out)
	if code != 0 {
		t.Fatalf("export-training: exit %d\n%s%s", code, stdout, stderr)
	}
	m, err := onnx.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]bool{}
	for _, o := range m.Graph.Outputs {
		outs[o.Name] = true
	}
	for _, n := range m.Graph.Nodes {
		if n.Domain != "" {
			t.Errorf("node %v of domain %q", n, n.Domain)
		}
	}
	params := 0
	for _, in := range m.Graph.Initializers {
		if outs[in.Name+".next"] && !strings.HasPrefix(in.Name, "optimizer.") {
			params++
			if !outs[in.Name+".grad"] {
				t.Errorf("no gradient output for %s", in.Name)
			}
		}
	}
	if params != 10 {
		t.Errorf("%d parameters with a next value, want LeNet's 10", params)
	}
	// Inputs: a batch of 3 zero images, labels 0..2.
	x := onnx.NewTensor(onnx.Float, 3, 1, 28, 28)
	y := onnx.FromSlice([]int64{0, 1, 2}, 3)
	var inputs []string
	for name, v := range map[string]*onnx.Tensor{m.Graph.Inputs[0].Name: x, "labels": y} {
		p := filepath.Join(dir, name+".pb")
		if err := onnx.WriteValue(p, name, v); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, "--input", name+"="+p)
	}
	args := append([]string{"run", "--model", out, "--backend", "onnxruntime", "--output-dir", filepath.Join(dir, "out")}, inputs...)
	if so, se, code := runD500(t, bin, args...); code != 0 {
		t.Fatalf("d500 run on ONNX Runtime: exit %d\n%s%s", code, so, se)
	}
	for _, args := range [][]string{
		{"export-training", "--model", "lenet", "-o", filepath.Join(dir, "x.onnx"), "--optimizer", "accelegrad"},
		{"export-training", "--model", "nosuch", "-o", filepath.Join(dir, "x.onnx")},
		{"export-training", "--model", "lenet"},
		{"export-training", "--model", "lenet", "--batch", "0", "-o", filepath.Join(dir, "x.onnx")},
	} {
		if _, _, code := runD500(t, bin, args...); code != 2 {
			t.Errorf("d500 %v: exit %d, want 2", args, code)
		}
	}
}
