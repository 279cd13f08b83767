//go:build mpi

package tests

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A distributed run checkpoints on rank 0 and resumes on every rank: for
// the schemes whose ranks keep one state (allreduce, dsgd, pssgd), a run
// resumed from its checkpoint at step 4 writes the CSV of the
// uninterrupted run (losses, accuracies, rates, sample counts and bytes;
// the timings aside) and the same model.
func TestMPITrainResumeIsExact(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500MPI(t, dir)
	comparable := func(rows [][]string) []string {
		var out []string
		for _, r := range rows {
			// seconds (3), comm_seconds (12) and compute_seconds (13) are timings.
			out = append(out, strings.Join(slices.Concat(r[:3], r[4:12]), ","))
		}
		return out
	}
	for _, scheme := range []string{"allreduce", "dsgd", "pssgd"} {
		d := filepath.Join(dir, scheme)
		ck, full, fullModel := filepath.Join(d, "ck"), filepath.Join(d, "full.csv"), filepath.Join(d, "full.onnx")
		args := []string{"-np", "2", "--oversubscribe", bin, "train", "--model", "mlp", "--dataset", "synthetic:n=256,test=64", "--batch", "16",
			"--steps", "10", "--optimizer", "adam", "--lr-schedule", "step:3:0.5", "--threads", "1", "--test-every", "3", "--distributed", scheme}
		if so, se, code := runMPI(t, "mpirun", append(slices.Clone(args), "--csv", full, "--save-model", fullModel,
			"--checkpoint-dir", ck, "--checkpoint-every", "4", "--checkpoint-keep", "5")...); code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", scheme, code, so, se)
		}
		mid := filepath.Join(d, "mid")
		copyDir(t, filepath.Join(ck, "step-00000004"), filepath.Join(mid, "step-00000004"))
		csv, model := filepath.Join(d, "mid.csv"), filepath.Join(d, "mid.onnx")
		so, se, code := runMPI(t, "mpirun", "-np", "2", "--oversubscribe", bin, "train", "--resume", mid, "--csv", csv, "--save-model", model)
		if code != 0 || !strings.Contains(so, "resuming from") {
			t.Fatalf("%s resumed: exit %d\n%s\n%s", scheme, code, so, se)
		}
		if got, want := comparable(readCSV(t, csv)), comparable(readCSV(t, full)); !slices.Equal(got, want) {
			t.Errorf("%s resumed at step 4: CSV\n%s\nwant\n%s", scheme, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		sameInitializers(t, model, fullModel)
	}
}
