package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An output path that cannot be written is a usage error (exit status 2)
// found before the work starts, naming the flag: a report path that is a
// folder, a path under a file, a folder output that is a file. Nothing is
// written, and a path that does not exist yet under a writable folder is
// accepted (the commands create the folders in between).
func TestD500UnwritableOutputsFailFirst(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	under := filepath.Join(file, "sub", "out") // its nearest existing ancestor is a file
	relu := filepath.Join(dataRoot, "node", "test_relu")
	csvPath := filepath.Join(dir, "never.csv")
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"train", "--model", "mlp", "--dataset", "synthetic", "--csv", csvPath, "--save-model", under + ".onnx"}, "--save-model"},
		{[]string{"train", "--model", "mlp", "--dataset", "synthetic", "--plot", file}, "--plot"},
		{[]string{"bench", "--models", "lenet", "--json", dir}, "--json"},
		{[]string{"bench", "--models", "lenet", "--md", under + ".md"}, "--md"},
		{[]string{"conformance", "--csv", under + ".csv", relu}, "--csv"},
		{[]string{"gradcheck", "--json", dir, relu}, "--json"},
		{[]string{"run", "--model", filepath.Join(relu, "model.onnx"), "--random-inputs", "--output-dir", file}, "--output-dir"},
		{[]string{"model", "lenet", "-o", dir}, "--o"},
		{[]string{"ops", "--json", under + ".json"}, "--json"},
		{[]string{"plot", "--out", file, csvPath}, "--out"},
		{[]string{"compare-optimizers", "--model", "mlp", "--dataset", "synthetic", "--a", "sgd", "--b", "adam", "--steps", "1", "--csv", dir}, "--csv"},
	} {
		_, stderr, code := runD500(t, bin, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.flag+" ") || !strings.Contains(stderr, "cannot be written") {
			t.Errorf("d500 %v: exit %d, want 2 naming %s:\n%s", tc.args, code, tc.flag, stderr)
		}
	}
	if _, err := os.Stat(csvPath); err == nil {
		t.Error("train wrote its CSV although --save-model could not be written")
	}
	if probes, _ := filepath.Glob(filepath.Join(dir, ".d500-write-check-*")); len(probes) > 0 {
		t.Errorf("write checks left behind: %v", probes)
	}
	// New folders under a writable one are made.
	deep := filepath.Join(dir, "new", "deeper", "lenet.onnx")
	if _, stderr, code := runD500(t, bin, "model", "lenet", "-o", deep); code != 0 {
		t.Errorf("model -o %s: exit %d\n%s", deep, code, stderr)
	}
}
