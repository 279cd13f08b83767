//go:build mpi

package tests

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// These tests build d500 with -tags mpi and run it under mpirun on two
// ranks (as root, with Open MPI's consent variables). Run them with
// `go test -tags mpi -run '^TestMPI' ./tests` (make test does).

func buildD500MPI(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "d500")
	cmd := exec.Command("go", "build", "-tags", "mpi", "-o", bin, "github.com/deep500/deep500-go/cmd/d500")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi: %v\n%s", err, out)
	}
	return bin
}

// runMPI runs name with args (mpirun or d500) and returns stdout, stderr
// and the exit status. The deadline only guards against a hang.
func runMPI(t *testing.T, name string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var o, e bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v hung:\n%s\n%s", name, args, o.String(), e.String())
	}
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return o.String(), e.String(), code
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// --test-every 0: one evaluation, at the end (a short run is otherwise
// evaluated about 8 times).
const mpiTrainArgs = "train --model mlp --dataset synthetic:n=256,test=64 --batch 16 --steps 4 --lr 0.05 --threads 1 --test-every 0"

// Every scheme trains under `mpirun -np 2`: exit 0, one summary (rank 0's),
// and a CSV with the layer-2 columns whose step rows count real traffic.
func TestMPITrainEveryScheme(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500MPI(t, dir)
	for _, scheme := range []string{"pssgd", "asgd", "dsgd", "mavg", "dpsgd", "allreduce"} {
		csvPath := filepath.Join(dir, scheme+".csv")
		args := append([]string{"-np", "2", "--oversubscribe", bin}, strings.Fields(mpiTrainArgs)...)
		args = append(args, "--distributed", scheme, "--average-every", "2", "--csv", csvPath, "--save-model", filepath.Join(dir, scheme+".onnx"))
		stdout, stderr, code := runMPI(t, "mpirun", args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", scheme, code, stdout, stderr)
		}
		if n := strings.Count(stdout, "trained 4 steps (64 samples)"); n != 1 {
			t.Errorf("%s: %d summaries, want rank 0's only:\n%s", scheme, n, stdout)
		}
		rows := readCSV(t, csvPath)
		want := "epoch,step,samples,seconds,loss,train_accuracy,test_accuracy,lr,ranks,global_samples,bytes_sent,bytes_received,comm_seconds,compute_seconds"
		if got := strings.Join(rows[0], ","); got != want {
			t.Fatalf("%s: header %q", scheme, got)
		}
		if len(rows) != 1+4+1 {
			t.Fatalf("%s: %d rows, want 4 steps and 1 evaluation", scheme, len(rows)-1)
		}
		for i, r := range rows[1:5] {
			sent, _ := strconv.Atoi(r[10])
			recv, _ := strconv.Atoi(r[11])
			comm, _ := strconv.ParseFloat(r[12], 64)
			comp, _ := strconv.ParseFloat(r[13], 64)
			if r[2] != strconv.Itoa(16*(i+1)) || r[9] != strconv.Itoa(32*(i+1)) {
				t.Errorf("%s: step %d used %s samples on rank 0 and %s in all, want %d and %d", scheme, i+1, r[2], r[9], 16*(i+1), 32*(i+1))
			}
			// mavg talks every second step; asgd's rank 0 sends and
			// receives every step. Every other scheme moves data every step.
			quiet := scheme == "mavg" && r[1] == "1" || scheme == "mavg" && r[1] == "3"
			if r[8] != "2" || comp <= 0 || quiet != (sent == 0) || quiet != (recv == 0) || (!quiet && comm <= 0) {
				t.Errorf("%s: step row %v", scheme, r)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, scheme+".onnx")); err != nil {
			t.Errorf("%s: rank 0 wrote no model: %v", scheme, err)
		}
	}
}

// `d500 train --np 2` launches itself under mpirun.
func TestMPITrainNP(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500MPI(t, dir)
	csvPath := filepath.Join(dir, "np.csv")
	args := append(strings.Fields(mpiTrainArgs), "--np", "2", "--csv", csvPath)
	stdout, stderr, code := runMPI(t, bin, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	rows := readCSV(t, csvPath)
	if len(rows) != 6 || rows[1][8] != "2" {
		t.Fatalf("CSV of --np 2 (allreduce by default): %v", rows)
	}
	// allreduce of the mlp's 407,050 float32 parameters: each rank sends
	// and receives the whole fused buffer once per step.
	if rows[1][10] != "1628200" || rows[1][11] != "1628200" {
		t.Errorf("bytes of one fused all-reduce step: sent %s received %s, want 1628200", rows[1][10], rows[1][11])
	}
	// An epoch of 256 samples in batches of 32 per rank: 4 steps when the
	// two ranks split the set, 8 when each has all of it.
	for sampling, steps := range map[string]int{"partitioned": 4, "replicated": 8} {
		stdout, stderr, code := runMPI(t, bin, "train", "--model", "mlp", "--dataset", "synthetic:n=256,test=32", "--batch", "32",
			"--epochs", "1", "--threads", "1", "--np", "2", "--distributed", "dsgd", "--sampling", sampling)
		want := fmt.Sprintf("trained %d steps (%d samples)", steps, 32*steps)
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("--sampling %s: exit %d, want %q in:\n%s\n%s", sampling, code, want, stdout, stderr)
		}
	}
}

// A failure on the ranks ends the job with a non-zero status and the
// message, never a hang; and a d500 started by mpirun without a scheme is
// a usage error rather than two runs writing one CSV.
func TestMPITrainFailures(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500MPI(t, dir)
	_, stderr, code := runMPI(t, bin, "train", "--model", "mlp", "--dataset", "synthetic:n=1,test=1", "--steps", "1", "--np", "2", "--distributed", "dsgd")
	if code == 0 || !strings.Contains(stderr, "of 2: d500 train: partition: 1 samples cannot be split among 2 ranks") {
		t.Errorf("one sample on two ranks: exit %d, stderr:\n%s", code, stderr)
	}
	_, stderr, code = runMPI(t, "mpirun", "-np", "2", "--oversubscribe", bin, "train", "--model", "mlp", "--dataset", "synthetic:n=64", "--steps", "1")
	if code == 0 || !strings.Contains(stderr, "started by mpirun with 2 ranks: give --distributed SCHEME") {
		t.Errorf("mpirun without --distributed: exit %d, stderr:\n%s", code, stderr)
	}
	// Bad distributed flags are usage errors (status 2), found before any
	// rank starts.
	for _, c := range []struct{ args, msg string }{
		{"--distributed ring", `unknown --distributed scheme "ring"`},
		{"--distributed dsgd --impl native", "--distributed wraps a reference optimizer"},
		{"--distributed mavg --average-every 0", "--average-every must be positive"},
		{"--distributed dsgd --sampling sideways", "--sampling must be partitioned or replicated"},
		{"--np -1", "--np -1 is negative"},
	} {
		args := append([]string{"train", "--model", "mlp", "--dataset", "synthetic:n=64", "--steps", "1"}, strings.Fields(c.args)...)
		_, stderr, code := runMPI(t, bin, args...)
		if code != 2 || !strings.Contains(stderr, c.msg) {
			t.Errorf("d500 train %s: exit %d, want 2 and %q in:\n%s", c.args, code, c.msg, stderr)
		}
	}
}
