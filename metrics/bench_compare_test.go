package metrics

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Two paths name the same model when they are one path, or two files
// with the same bytes.
func TestSameModel(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.onnx"), filepath.Join(dir, "b.onnx"), filepath.Join(dir, "c.onnx")
	for path, data := range map[string]string{a: "model one", b: "model one", c: "model two"} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		x, y string
		want bool
	}{
		{a, a, true},
		{a, filepath.Join(dir, ".", "a.onnx"), true},
		{a, b, true},
		{a, c, false},
		{"gone/m.onnx", "gone/./m.onnx", true}, // one path, though the file is gone
		{"gone/m.onnx", "gone/n.onnx", false},
	} {
		if got := sameModel(tc.x, tc.y); got != tc.want {
			t.Errorf("sameModel(%s, %s) = %v", tc.x, tc.y, got)
		}
	}
}

// The environments' differences that bear on speed are listed, the time
// and host are not.
func TestEnvironmentDiffers(t *testing.T) {
	a := &Environment{Time: "t1", Host: "h1", CPU: "EPYC", Threads: 1, Commit: "abc", Backends: map[string]string{"onnxruntime": "1.30.0"}}
	b := &Environment{Time: "t2", Host: "h2", CPU: "EPYC", Threads: 2, Commit: "abc", Modified: true}
	got := environmentDiffers(a, b)
	want := []string{"threads: 1 vs 2", "commit: abc vs abc+modified", "backend onnxruntime: 1.30.0 vs none"}
	if !slices.Equal(got, want) {
		t.Fatalf("differences %q, want %q", got, want)
	}
	if d := environmentDiffers(a, a); d != nil {
		t.Fatalf("an environment differs from itself: %q", d)
	}
	if d := environmentDiffers(a, nil); len(d) != 1 {
		t.Fatalf("one environment missing: %q", d)
	}
}
