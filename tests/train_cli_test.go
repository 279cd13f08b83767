package tests

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deep500/deep500-go/onnx"
)

// `d500 train` end to end: one epoch of the mlp preset on a synthetic set
// writes the CSV of the contract and the trained model.
func TestD500Train(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	csvPath := filepath.Join(dir, "train.csv")
	out := filepath.Join(dir, "trained.onnx")
	stdout, stderr, code := runD500(t, bin, "train", "--model", "mlp", "--dataset", "synthetic:classes=4,n=128,test=40",
		"--optimizer", "adam", "--lr", "0.001", "--batch", "32", "--epochs", "1", "--csv", csvPath, "--save-model", out)
	if code != 0 {
		t.Fatalf("d500 train: exit %d\n%s%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	// A run shorter than four epochs is evaluated about 8 times by
	// default (here, 4 steps: after each), so its accuracy curve has
	// points: step and evaluation rows alternate.
	if lines[0] != "epoch,step,samples,seconds,loss,train_accuracy,test_accuracy,lr" || len(lines) != 1+4+4 {
		t.Fatalf("CSV:\n%s", data)
	}
	for i := 1; i <= 4; i++ {
		step, eval := strings.Split(lines[2*i-1], ","), strings.Split(lines[2*i], ",")
		if step[4] == "" || step[6] != "" || eval[4] != "" || eval[6] == "" || eval[1] != strconv.Itoa(i) || eval[2] != strconv.Itoa(32*i) {
			t.Errorf("rows %q and %q: want step %d then its evaluation", lines[2*i-1], lines[2*i], i)
		}
	}
	if !strings.Contains(stdout, "test accuracy") {
		t.Errorf("no summary:\n%s", stdout)
	}
	m, err := onnx.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Graph.Outputs) != 1 {
		t.Errorf("saved model has outputs %v, want only the model's", m.Graph.Outputs)
	}
	if so, se, code := runD500(t, bin, "run", "--model", out, "--random-inputs"); code != 0 {
		t.Errorf("d500 run on the trained model: exit %d\n%s%s", code, so, se)
	}
	for _, args := range [][]string{
		{"train", "--dataset", "synthetic"},
		{"train", "--model", "mlp", "--dataset", "synthetic", "--impl", "fused"},
		{"train", "--model", "mlp", "--dataset", "synthetic", "--epochs", "1", "--steps", "2"},
		{"train", "--model", "mlp", "--dataset", "synthetic", "--optimizer", "nosuch"},
	} {
		if _, _, code := runD500(t, bin, args...); code != 2 {
			t.Errorf("d500 %v: exit %d, want 2", args, code)
		}
	}
}

// --impl native gives the same losses as the reference optimizer (the same
// update rules, applied inside the backend), and --plot draws the run.
func TestD500TrainNativeAndPlot(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	csvOf := func(impl string) []string {
		plotDir := filepath.Join(dir, impl)
		stdout, stderr, code := runD500(t, bin, "train", "--model", "mlp", "--dataset", "synthetic:classes=4,n=128,test=40",
			"--optimizer", "adam", "--lr", "0.001", "--batch", "32", "--epochs", "1", "--impl", impl, "--plot", plotDir)
		if code != 0 {
			t.Fatalf("d500 train --impl %s: exit %d\n%s%s", impl, code, stdout, stderr)
		}
		for _, f := range []string{"samples_loss.png", "time_test_accuracy.svg"} {
			if st, err := os.Stat(filepath.Join(plotDir, f)); err != nil || st.Size() == 0 {
				t.Errorf("--plot did not write %s: %v", f, err)
			}
		}
		data, err := os.ReadFile(filepath.Join(plotDir, "train.csv"))
		if err != nil {
			t.Fatal(err)
		}
		var losses []string
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
			losses = append(losses, strings.Split(line, ",")[4])
		}
		return losses
	}
	ref, nat := csvOf("reference"), csvOf("native")
	if strings.Join(ref, " ") != strings.Join(nat, " ") {
		t.Errorf("losses differ:\nreference %v\nnative    %v", ref, nat)
	}
}

// SIGTERM (as Ctrl-C's SIGINT) stops training after the current step: the
// binary exits 130 naming the interruption, and the CSV, the figures, the
// model and the JSON report (interrupted: true) hold what was done up to
// then.
func TestD500TrainInterrupt(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	csvPath := filepath.Join(dir, "train.csv")
	plots := filepath.Join(dir, "plots")
	saved := filepath.Join(dir, "partial.onnx")
	jsonPath := filepath.Join(dir, "train.json")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "train", "--model", "mlp", "--dataset", "synthetic:classes=4,n=4096,test=64",
		"--batch", "16", "--steps", "1000000", "--test-every", "3", "--csv", csvPath, "--plot", plots, "--save-model", saved, "--json", jsonPath,
		"--checkpoint-dir", filepath.Join(dir, "ck"))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until a few steps and an evaluation are recorded.
	rows := func() int {
		data, _ := os.ReadFile(csvPath)
		return strings.Count(string(data), "\n") - 1
	}
	deadline := time.Now().Add(2 * time.Minute)
	for rows() < 8 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no training progress within 2 minutes:\n%s%s", stdout.String(), stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit %v, want status 130\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not name the interruption:\n%s", stderr.String())
	}
	data, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if !strings.HasSuffix(string(data), "\n") || len(lines) < 9 {
		t.Fatalf("CSV after the interrupt:\n%s", data)
	}
	for _, l := range lines[1:] {
		if len(strings.Split(l, ",")) != 8 {
			t.Errorf("incomplete CSV row %q", l)
		}
	}
	// The run stopped long before its million steps.
	last := strings.Split(lines[len(lines)-1], ",")
	if step, _ := strconv.Atoi(last[1]); step <= 0 || step > 100000 {
		t.Errorf("last row %q", lines[len(lines)-1])
	}
	if pngs, _ := filepath.Glob(filepath.Join(plots, "*.png")); len(pngs) == 0 {
		t.Errorf("no figures in %s:\n%s", plots, stdout.String())
	}
	if _, err := onnx.Load(saved); err != nil {
		t.Errorf("the model saved at the interrupt: %v", err)
	}
	var rep struct {
		Interrupted bool `json:"interrupted"`
		Steps       int  `json:"steps"`
	}
	if data := readJSON(t, jsonPath, &rep); !rep.Interrupted || rep.Steps <= 0 || rep.Steps > 100000 {
		t.Errorf("report after the interrupt:\n%s", data)
	}
	// The interrupted run wrote its checkpoint: resumed, it goes on from
	// its last step.
	if _, err := os.Stat(filepath.Join(dir, "ck", fmt.Sprintf("step-%08d", rep.Steps), "model.onnx")); err != nil {
		t.Errorf("no checkpoint of step %d after the interrupt: %v", rep.Steps, err)
	}
	so, se, code := runD500(t, bin, "train", "--resume", filepath.Join(dir, "ck"), "--steps", strconv.Itoa(rep.Steps+2), "--plot", "", "--json", "")
	if code != 0 || !strings.Contains(so, fmt.Sprintf("at step %d", rep.Steps)) || !strings.Contains(so, fmt.Sprintf("trained %d steps", rep.Steps+2)) {
		t.Errorf("resume after the interrupt: exit %d\n%s%s", code, so, se)
	}
}

// The loss, schedule and abort flags: mse on class labels trains, the
// CSV's lr column follows step:2:0.5, and a reachable --target-accuracy
// ends the run gracefully (exit 0) at the first evaluation.
func TestD500TrainScheduleLossAndAbort(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	csvPath := filepath.Join(dir, "mse.csv")
	so, se, code := runD500(t, bin, "train", "--model", "mlp", "--dataset", "synthetic:classes=4,n=256,test=32",
		"--loss", "mse", "--optimizer", "sgd", "--lr", "0.1", "--lr-schedule", "step:2:0.5", "--steps", "6", "--batch", "16", "--test-every", "0", "--csv", csvPath)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	data, _ := os.ReadFile(csvPath)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	wantLR := []float64{0.1, 0.1, 0.05, 0.05, 0.025, 0.025}
	if len(lines) != 1+6+1 {
		t.Fatalf("CSV:\n%s", data)
	}
	for i, want := range wantLR {
		f := strings.Split(lines[1+i], ",")
		lr, err := strconv.ParseFloat(f[7], 64)
		if err != nil || lr != want {
			t.Errorf("step %d: lr %q, want %g", i+1, f[7], want)
		}
		if loss, err := strconv.ParseFloat(f[4], 64); err != nil || !(loss > 0) {
			t.Errorf("step %d: mse loss %q", i+1, f[4])
		}
	}

	csvPath = filepath.Join(dir, "target.csv")
	so, se, code = runD500(t, bin, "train", "--model", "mlp", "--dataset", "synthetic:classes=4,n=256,test=32",
		"--steps", "50", "--batch", "16", "--test-every", "1", "--target-accuracy", "0.01", "--csv", csvPath)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	data, _ = os.ReadFile(csvPath)
	if lines := strings.Split(strings.TrimSpace(string(data)), "\n"); len(lines) != 1+2 {
		t.Errorf("want one step and one evaluation before the accuracy abort, CSV:\n%s", data)
	}
	for _, args := range [][]string{
		{"--lr-schedule", "linear"}, {"--target-accuracy", "2"}, {"--time-limit", "-1s"}, {"--loss", "hinge"},
	} {
		args = append([]string{"train", "--model", "mlp", "--dataset", "synthetic"}, args...)
		if _, se, code := runD500(t, bin, args...); code != 2 || !strings.Contains(se, args[5]) {
			t.Errorf("d500 %v: exit %d, want 2 and a message naming %s:\n%s", args, code, args[5], se)
		}
	}
}

// --batchnorm batch (the default) trains BatchNormalization on batch
// statistics and moves its running statistics; the saved model keeps the
// inference form with those statistics. --batchnorm frozen leaves them.
func TestD500TrainBatchNorm(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	runningMeans := func(mode string) map[string][]float32 {
		out := filepath.Join(dir, mode+".onnx")
		so, se, code := runD500(t, bin, "train", "--model", "resnet8", "--dataset", "synthetic:classes=4,n=64,test=16,shape=3x32x32",
			"--batchnorm", mode, "--steps", "3", "--batch", "16", "--save-model", out)
		if code != 0 {
			t.Fatalf("--batchnorm %s: exit %d\n%s%s", mode, code, so, se)
		}
		if !strings.Contains(so, "test accuracy") {
			t.Errorf("--batchnorm %s: no evaluation:\n%s", mode, so)
		}
		m, err := onnx.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range m.Graph.Nodes {
			if n.OpType == "BatchNormalization" && (len(n.Outputs) != 1 || n.Attr("training_mode") != nil) {
				t.Errorf("--batchnorm %s: saved node %s is not in inference form: outputs %v", mode, n.Name, n.Outputs)
			}
		}
		means := map[string][]float32{}
		for _, in := range m.Graph.Initializers {
			if strings.HasSuffix(in.Name, ".running_mean") {
				means[in.Name] = in.Tensor.Float32s()
			}
		}
		if len(means) == 0 {
			t.Fatal("resnet8 has no running means")
		}
		return means
	}
	for name, v := range runningMeans("batch") {
		if !slices.ContainsFunc(v, func(x float32) bool { return x != 0 }) {
			t.Errorf("--batchnorm batch: %s stayed zero", name)
		}
	}
	for name, v := range runningMeans("frozen") {
		if slices.ContainsFunc(v, func(x float32) bool { return x != 0 }) {
			t.Errorf("--batchnorm frozen: %s moved", name)
		}
	}
}

// Every numeric flag of train is checked before any work: a NaN, infinite
// or out-of-range hyperparameter, and an explicit zero --steps or
// --epochs, are usage errors naming the flag or value (they used to be
// replaced by the default, or train a whole epoch, with exit status 0);
// the help shows no sentinel default for the optimizer's hyperparameters;
// a batch larger than the training set is cut to it with a warning.
func TestD500TrainValidatesFlags(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lr", "-0.1"}, "lr"},
		{[]string{"--lr", "NaN"}, "NaN"},
		{[]string{"--lr", "inf"}, "inf"},
		{[]string{"--lr", "fast"}, "fast"},
		{[]string{"--optimizer", "momentum", "--momentum", "-0.5"}, "momentum"},
		{[]string{"--optimizer", "adam", "--beta1", "1"}, "beta1"},
		{[]string{"--optimizer", "adam", "--beta2", "-0.1"}, "beta2"},
		{[]string{"--optimizer", "adam", "--eps", "-1e-8"}, "eps"},
		{[]string{"--optimizer", "rmsprop", "--alpha", "-0.99"}, "alpha"},
		{[]string{"--weight-decay", "-1"}, "weight decay"},
		{[]string{"--steps", "0"}, "--steps"},
		{[]string{"--epochs", "0"}, "--epochs"},
		{[]string{"--batch", "0"}, "--batch"},
	} {
		args := append([]string{"train", "--model", "mlp", "--dataset", "synthetic:classes=4,n=64,test=16"}, tc.args...)
		_, stderr, code := runD500(t, bin, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("d500 %v: exit %d, want 2 with %q in:\n%s", args, code, tc.want, stderr)
		}
	}
	help, helpErr, code := runD500(t, bin, "train", "-h")
	if code != 0 || strings.Contains(help+helpErr, "(default -1)") {
		t.Errorf("train -h: exit %d, shows a sentinel default:\n%s%s", code, help, helpErr)
	}
	csvPath := filepath.Join(dir, "big_batch.csv")
	so, se, code := runD500(t, bin, "train", "--model", "mlp", "--dataset", "synthetic:classes=4,n=64,test=16",
		"--batch", "1000000", "--steps", "2", "--csv", csvPath)
	if code != 0 || !strings.Contains(se, "--batch 1000000 is more than the 64 training samples") {
		t.Fatalf("--batch 1000000: exit %d, want 0 and a warning:\n%s%s", code, so, se)
	}
	data, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	// Two steps of the whole set, one an epoch: 128 samples seen after
	// the second.
	if !strings.Contains(string(data), "\n2,2,128,") {
		t.Errorf("CSV after a cut batch:\n%s", data)
	}
}

// compare-optimizers stops after the current step on SIGINT too: exit 130,
// and the CSV holds every step done.
func TestD500CompareOptimizersInterrupt(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	csvPath := filepath.Join(dir, "cmp.csv")
	cmd := exec.Command(bin, "compare-optimizers", "--model", "lenet", "--dataset", "synthetic:n=512", "--a", "sgd", "--b", "adam",
		"--steps", "100000", "--csv", csvPath)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		data, _ := os.ReadFile(csvPath)
		if strings.Count(string(data), "\n") > 10 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no steps within a minute:\n%s", data)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit %v, want status 130\n%s", err, stderr.String())
	}
	data, _ := os.ReadFile(csvPath)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if lines[0] != "step,param,l2_diff,loss_a,loss_b" || len(lines) < 11 || !strings.Contains(stderr.String(), "interrupted after") {
		t.Errorf("after the interrupt: %d CSV lines, stderr:\n%s", len(lines), stderr.String())
	}
}

// train --json writes what was trained and how it ended: the figures of
// the steps done, the hyperparameters, the environment; an interrupted run
// says so and keeps its figures.
func TestD500TrainJSON(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	jsonPath := filepath.Join(dir, "train.json")
	so, se, code := runD500(t, bin, "train", "--model", "mlp", "--dataset", "synthetic:classes=4,n=128,test=32", "--optimizer", "adam",
		"--lr", "0.002", "--steps", "4", "--batch", "32", "--json", jsonPath)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	var rep struct {
		Environment struct {
			CPU string `json:"cpu"`
		} `json:"environment"`
		Model       string         `json:"model"`
		Optimizer   string         `json:"optimizer"`
		Hyper       map[string]any `json:"hyperparameters"`
		Steps       int            `json:"steps"`
		Samples     int            `json:"samples"`
		FinalLoss   *float64       `json:"final_loss"`
		TestAcc     *float64       `json:"test_accuracy"`
		Interrupted bool           `json:"interrupted"`
	}
	data := readJSON(t, jsonPath, &rep)
	if rep.Environment.CPU == "" || rep.Model != "mlp" || rep.Optimizer != "adam" || rep.Hyper["lr"] != 0.002 || rep.Hyper["beta2"] != 0.999 || rep.Hyper["nesterov"] != false ||
		rep.Steps != 4 || rep.Samples != 128 || rep.FinalLoss == nil || rep.TestAcc == nil || rep.Interrupted {
		t.Errorf("report:\n%s", data)
	}
}

// On a terminal the progress bar counts to the run's end: with --steps it
// is full at the last step, across epochs (run under script(1), which
// gives the binary a pseudo-terminal).
func TestD500TrainProgressOnATerminal(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	if _, err := exec.LookPath("script"); err != nil {
		t.Fatalf("script (util-linux) not found: %v", err)
	}
	line := bin + " train --model mlp --dataset synthetic:classes=4,n=256,test=32 --steps 20 --batch 16"
	out, err := exec.Command("script", "-qec", line, "/dev/null").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "100% 20/20 steps") || !strings.Contains(string(out), "epoch 2 [====") {
		t.Errorf("no full bar of 20 steps in epoch 2:\n%q", out)
	}
}
