package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlotCommand(t *testing.T) {
	dir := t.TempDir()
	csv := "epoch,step,samples,seconds,loss,train_accuracy,test_accuracy,lr\n" +
		"0,1,64,0.1,2.3,,,0.001\n0,2,128,0.2,1.9,,,0.001\n0,2,128,0.3,,,0.41,\n" +
		"0,3,192,0.4,1.5,,,0.001\n0,4,256,0.5,1.2,,,0.001\n0,4,256,0.6,,,0.62,\n"
	a := filepath.Join(dir, "a.csv")
	b := filepath.Join(dir, "b.csv")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte(csv), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "plots")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"plot", a, "--out", out, b}, &stdout, &stderr); code != exitOK {
		t.Fatalf("code %d, stderr %s", code, stderr.String())
	}
	for _, name := range []string{"samples_test_accuracy", "time_test_accuracy", "samples_loss", "time_loss"} {
		for _, ext := range []string{".png", ".svg"} {
			if fi, err := os.Stat(filepath.Join(out, name+ext)); err != nil || fi.Size() == 0 {
				t.Errorf("%s%s: %v", name, ext, err)
			}
		}
	}

	// Bad usage: exit 2.
	for _, args := range [][]string{{"plot", a}, {"plot", "--out", out}, {"plot", "--nope", "--out", out, a}} {
		stderr.Reset()
		if code := run(args, &stdout, &stderr); code != exitUsage {
			t.Errorf("%q: code %d, want %d", args, code, exitUsage)
		}
	}
	// An unreadable or malformed CSV named on the command line: exit 2,
	// naming the file.
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("step,cost\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{bad, filepath.Join(dir, "missing.csv")} {
		stderr.Reset()
		if code := run([]string{"plot", "--out", out, a, p}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), filepath.Base(p)) {
			t.Errorf("%s: code %d, stderr %q", p, code, stderr.String())
		}
	}
}
