package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// d500 report makes one HTML page from the results of real runs: a
// conformance report, a training CSV and a training report; an input of no
// known kind is a usage error naming it.
func TestD500Report(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	conf, csvPath, trainJSON := filepath.Join(dir, "conf.json"), filepath.Join(dir, "train.csv"), filepath.Join(dir, "train.json")
	if _, se, code := runD500(t, bin, "conformance", "--run", "test_(abs|relu)$", "--json", conf, filepath.Join(dataRoot, "node")); code != 0 {
		t.Fatalf("conformance: exit %d\n%s", code, se)
	}
	if _, se, code := runD500(t, bin, "train", "--model", "mlp", "--dataset", "synthetic:classes=4,n=128,test=32", "--steps", "4", "--batch", "32",
		"--csv", csvPath, "--json", trainJSON); code != 0 {
		t.Fatalf("train: exit %d\n%s", code, se)
	}
	page := filepath.Join(dir, "out", "report.html")
	if so, se, code := runD500(t, bin, "report", "--out", page, conf, csvPath, trainJSON); code != 0 || !strings.Contains(so, page) {
		t.Fatalf("report: exit %d\n%s%s", code, so, se)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", "Conformance: native", "2 passed", "<td>Abs</td>", "<svg", "mlp on synthetic", "Environment"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"what": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"report", "--out", page, bad}, {"report", "--out", page}, {"report", conf}, {"report", "--out", page, filepath.Join(dir, "missing.json")}} {
		if _, se, code := runD500(t, bin, args...); code != 2 {
			t.Errorf("d500 %v: exit %d, want 2\n%s", args, code, se)
		}
	}
}
