package tests

import (
	"strings"
	"testing"
)

// A binary built without MPI refuses distributed training with exit
// status 2 and says how to get the build that has it.
func TestD500TrainDistributedNeedsMPIBuild(t *testing.T) {
	bin := buildD500(t, t.TempDir())
	for _, args := range [][]string{
		{"--distributed", "dsgd"},
		{"--np", "2"},
	} {
		_, stderr, code := runD500(t, bin, append([]string{"train", "--model", "mlp", "--dataset", "synthetic:n=64", "--steps", "1"}, args...)...)
		if code != 2 || !strings.Contains(stderr, "distributed training needs the mpi build") || !strings.Contains(stderr, "go build -tags mpi ./cmd/d500") {
			t.Errorf("d500 train %v: exit %d, stderr:\n%s", args, code, stderr)
		}
	}
}
