package tests

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// csvWithoutSeconds is a train CSV with its seconds column left out: what
// a resumed run must reproduce exactly.
func csvWithoutSeconds(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, ",")
		rows = append(rows, strings.Join(slices.Delete(f, 3, 4), ","))
	}
	return rows
}

// sameInitializers compares two models' initializers bit for bit.
func sameInitializers(t *testing.T, a, b string) bool {
	t.Helper()
	ma, err := onnx.Load(a)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := onnx.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*onnx.Tensor{}
	for _, in := range mb.Graph.Initializers {
		want[in.Name] = in.Tensor
	}
	same := len(ma.Graph.Initializers) == len(mb.Graph.Initializers)
	for _, in := range ma.Graph.Initializers {
		w, ok := want[in.Name]
		if !ok || !slices.Equal(in.Tensor.Float32s(), w.Float32s()) || !slices.Equal(bits64(in.Tensor.Float64s()), bits64(w.Float64s())) {
			t.Errorf("%s: initializer %s differs from %s's", a, in.Name, b)
			same = false
		}
	}
	return same
}

func bits64(v []float64) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = math.Float64bits(x)
	}
	return out
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp -r %s %s: %v\n%s", from, to, err, out)
	}
}

// A run resumed from a checkpoint ends bit-identical to one never
// stopped: the same CSV (every loss, accuracy and learning rate; the
// seconds aside) and the same parameters, for every optimizer, reference
// and native, with a learning-rate schedule, evaluations between steps and
// epoch ends crossed; resumed from a checkpoint taken during the run (step
// 5 of 14) and from the one a run stopped by --time-limit writes (after
// step 1, whose resumed run owes nothing but the rest). BatchNormalization
// trains in batch mode (resnet8, its running statistics in the
// checkpoint), and ONNX Runtime resumes as native does.
func TestD500TrainResumeIsExact(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	type run struct {
		name string
		args []string
	}
	base := []string{"--dataset", "synthetic:classes=4,n=90,test=20", "--batch", "16", "--steps", "14", "--test-every", "4", "--seed", "9"}
	var runs []run
	for _, opt := range []string{"sgd", "momentum", "nesterov", "adam", "adamw", "adagrad", "rmsprop", "accelegrad"} {
		for _, impl := range []string{"reference", "native"} {
			sched := "step:5:0.5"
			if opt == "adam" || opt == "momentum" {
				sched = "cosine:0.0001"
			}
			args := append([]string{"--model", "mlp", "--optimizer", opt, "--impl", impl, "--lr-schedule", sched}, base...)
			if opt == "sgd" {
				args = append(args, "--weight-decay", "0.01")
			}
			runs = append(runs, run{opt + "-" + impl, args})
		}
	}
	runs = append(runs,
		run{"resnet8-batchnorm", []string{"--model", "resnet8", "--optimizer", "momentum", "--lr", "0.05", "--batch", "8", "--steps", "6",
			"--dataset", "synthetic:classes=10,n=40,test=8,shape=3x32x32", "--test-every", "4"}},
		run{"onnxruntime-adam-native", append([]string{"--model", "lenet", "--backend", "onnxruntime", "--optimizer", "adam", "--impl", "native", "--lr-schedule", "cosine"}, base...)},
		run{"onnxruntime-momentum-reference", append([]string{"--model", "mlp", "--backend", "onnxruntime", "--optimizer", "momentum", "--lr-schedule", "step:5:0.5"}, base...)},
	)
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			d := filepath.Join(dir, r.name)
			full, fullModel, ck := filepath.Join(d, "full.csv"), filepath.Join(d, "full.onnx"), filepath.Join(d, "ck")
			train := func(args ...string) string {
				t.Helper()
				so, se, code := runD500(t, bin, append([]string{"train"}, args...)...)
				if code != 0 {
					t.Fatalf("d500 train %v: exit %d\n%s%s", args, code, so, se)
				}
				return so
			}
			train(append(slices.Clone(r.args), "--csv", full, "--save-model", fullModel, "--checkpoint-dir", ck, "--checkpoint-every", "5", "--checkpoint-keep", "9")...)
			want := csvWithoutSeconds(t, full)

			originals, _ := filepath.Glob(filepath.Join(ck, "step-*"))
			// From the checkpoint taken at step 5.
			mid := filepath.Join(d, "mid")
			copyDir(t, filepath.Join(ck, "step-00000005"), filepath.Join(mid, "step-00000005"))
			csv, model := filepath.Join(d, "mid.csv"), filepath.Join(d, "mid.onnx")
			out := train("--resume", mid, "--csv", csv, "--save-model", model)
			if !strings.Contains(out, "resuming from") || !strings.Contains(out, "at step 5") {
				t.Errorf("resumed run's output:\n%s", out)
			}
			if got := csvWithoutSeconds(t, csv); !slices.Equal(got, want) {
				t.Errorf("resumed at step 5: CSV\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			sameInitializers(t, model, fullModel)
			// The resumed run checkpoints into the folder it resumed from.
			if after, _ := filepath.Glob(filepath.Join(ck, "step-*")); !slices.Equal(after, originals) {
				t.Errorf("the resumed run changed the first run's checkpoints: %v, were %v", after, originals)
			}
			if got, _ := filepath.Glob(filepath.Join(mid, "step-*")); len(got) < 2 {
				t.Errorf("the resumed run wrote no checkpoint beside the one it resumed from: %v", got)
			}

			// From the checkpoint of a run stopped by --time-limit.
			stopped := filepath.Join(d, "stopped")
			csv, model = filepath.Join(d, "stopped.csv"), filepath.Join(d, "stopped.onnx")
			train(append(slices.Clone(r.args), "--csv", csv, "--checkpoint-dir", stopped, "--time-limit", "1ns")...)
			if rows := csvWithoutSeconds(t, csv); len(rows) >= len(want) {
				t.Fatalf("--time-limit 1ns did not stop the run: %d rows", len(rows))
			}
			train("--resume", stopped, "--time-limit", "0", "--save-model", model)
			if got := csvWithoutSeconds(t, csv); !slices.Equal(got, want) {
				t.Errorf("resumed after --time-limit: CSV\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			sameInitializers(t, model, fullModel)
		})
	}
}

// --resume refuses what would not continue the run: a folder without
// checkpoints, a flag that changes the training, and bad checkpoint
// flags, with exit status 2 and a message naming the problem.
func TestD500TrainResumeRefuses(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	ck := filepath.Join(dir, "ck")
	args := []string{"train", "--model", "mlp", "--dataset", "synthetic:classes=4,n=32,test=8", "--batch", "16", "--steps", "2", "--lr", "0.1"}
	if so, se, code := runD500(t, bin, append(args, "--checkpoint-dir", ck)...); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--resume", filepath.Join(dir, "none")}, "none"},
		{[]string{"train", "--resume", dir}, "holds no checkpoint"},
		{[]string{"train", "--resume", ck, "--lr", "0.2"}, "--lr 0.2 (the checkpoint's run has 0.1)"},
		{[]string{"train", "--resume", ck, "--momentum", "0.5"}, "--momentum 0.5 (the checkpoint's run has it unset)"},
		{[]string{"train", "--resume", ck, "--optimizer", "adam"}, "--optimizer adam (the checkpoint's run has sgd)"},
		{[]string{"train", "--model", "mlp", "--dataset", "synthetic", "--checkpoint-every", "3"}, "--checkpoint-every needs --checkpoint-dir"},
		{[]string{"train", "--model", "mlp", "--dataset", "synthetic", "--checkpoint-dir", ck, "--checkpoint-keep", "0"}, "--checkpoint-keep must be at least 1"},
	} {
		_, se, code := runD500(t, bin, c.args...)
		if code != 2 || !strings.Contains(se, c.want) {
			t.Errorf("d500 %v: exit %d, want 2 with %q:\n%s", c.args, code, c.want, se)
		}
	}
	// Steps may change: the run goes on to the new length.
	so, se, code := runD500(t, bin, "train", "--resume", ck, "--steps", "4")
	if code != 0 || !strings.Contains(so, "trained 4 steps") {
		t.Errorf("resume with --steps 4: exit %d\n%s%s", code, so, se)
	}
}
