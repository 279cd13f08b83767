package tests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// `d500 recipe run` on a shipped recipe: three runs with seeds 1, 2, 3 all
// reach the target, the time to accuracy is printed with its interval,
// the JSON report holds the runs, the summary, the verdicts and the
// environment, and the exit status is 0; a target no run can reach makes
// it 1, and a bad recipe 2.
func TestD500RecipeRun(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	recipe, err := filepath.Abs(filepath.Join("..", "recipes", "mlp-sgd-fashion-mnist.json"))
	if err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "recipe.json")
	so, se, code := runD500(t, bin, "recipe", "run", recipe, "--runs", "3", "--out", filepath.Join(dir, "runs"), "--json", jsonPath)
	if code != 0 || !strings.Contains(so, "time to 80.00% test accuracy: ") || !strings.Contains(so, "95% CI") || !strings.Contains(so, "recipe accepted") {
		t.Fatalf("recipe run: exit %d\n%s%s", code, so, se)
	}
	var rep struct {
		Accepted bool `json:"accepted"`
		Runs     []struct {
			Seed            uint64  `json:"seed"`
			ReachedTarget   bool    `json:"reached_target"`
			SecondsToTarget float64 `json:"seconds_to_target"`
			CSV             string  `json:"csv"`
		} `json:"runs"`
		Summary struct {
			SecondsToTarget *struct {
				Mean float64 `json:"mean"`
				Lo   float64 `json:"ci95_lo"`
				Hi   float64 `json:"ci95_hi"`
				N    int     `json:"n"`
			} `json:"seconds_to_target"`
		} `json:"summary"`
		Environment struct {
			CPU string `json:"cpu"`
		} `json:"environment"`
	}
	data := readJSON(t, jsonPath, &rep)
	st := rep.Summary.SecondsToTarget
	if !rep.Accepted || len(rep.Runs) != 3 || st == nil || st.N != 3 || !(st.Lo <= st.Mean && st.Mean <= st.Hi) || rep.Environment.CPU == "" {
		t.Fatalf("report:\n%s", data)
	}
	for i, r := range rep.Runs {
		if r.Seed != uint64(i+1) || !r.ReachedTarget || r.SecondsToTarget <= 0 {
			t.Errorf("run %d: %+v", i+1, r)
		}
		if _, err := os.Stat(r.CSV); err != nil {
			t.Errorf("run %d's CSV: %v", i+1, err)
		}
		if ml, err := os.ReadFile(strings.TrimSuffix(r.CSV, ".csv") + ".mllog"); err != nil || !strings.Contains(string(ml), `"key":"run_stop"`) ||
			!strings.Contains(string(ml), `"status":"success"`) {
			t.Errorf("run %d's MLLOG: %v\n%s", i+1, err, ml)
		}
	}

	so, se, code = runD500(t, bin, "recipe", "run", recipe, "--runs", "2", "--out", filepath.Join(dir, "missed"),
		"--set", "acceptance.target_accuracy=0.99", "--set", "steps=20", "--set", "test-every=10")
	if code != 1 || !strings.Contains(so, "MISSED every run reaches test accuracy 0.99") || !strings.Contains(so, "recipe NOT accepted") {
		t.Errorf("unreachable target: exit %d, want 1\n%s%s", code, so, se)
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format":"deep500-recipe/1","name":"bad","fixed":{"model":"mlp","dataset":"synthetic"},"mutable":{"optimizer":"nosuch"}}`), 0o644)
	for _, args := range [][]string{
		{"recipe", "run", bad, "--out", filepath.Join(dir, "bad")},
		{"recipe", "run", recipe, "--set", "model=lenet"},
		{"recipe", "run", filepath.Join(dir, "missing.json")},
		{"recipe", "list"},
	} {
		if so, se, code := runD500(t, bin, args...); code != 2 {
			t.Errorf("d500 %v: exit %d, want 2\n%s%s", args, code, so, se)
		}
	}
}

// train --write-recipe records every choice of the run: the recipe's one
// run trains exactly as the run did (the same CSV, seconds aside).
func TestD500WriteRecipeReproducesTheRun(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	recipe, csv := filepath.Join(dir, "mine.json"), filepath.Join(dir, "train.csv")
	so, se, code := runD500(t, bin, "train", "--model", "mlp", "--dataset", "synthetic:classes=4,n=96,test=16,sep=0.2", "--batch", "16", "--steps", "9",
		"--optimizer", "rmsprop", "--lr", "0.003", "--alpha", "0.9", "--lr-schedule", "step:4:0.5", "--seed", "7", "--test-every", "3",
		"--target-accuracy", "0.99", "--csv", csv, "--write-recipe", recipe)
	if code != 0 || !strings.Contains(so, "recipe written to") {
		t.Fatalf("train --write-recipe: exit %d\n%s%s", code, so, se)
	}
	out := filepath.Join(dir, "runs")
	so, se, code = runD500(t, bin, "recipe", "run", recipe, "--out", out)
	if code != 1 || !strings.Contains(so, "run 1/1 (seed 7)") { // the run does not reach 99%
		t.Fatalf("recipe run: exit %d, want 1\n%s%s", code, so, se)
	}
	if got, want := csvWithoutSeconds(t, filepath.Join(out, "run-1.csv")), csvWithoutSeconds(t, csv); !slices.Equal(got, want) {
		t.Errorf("the recipe's run:\n%s\nthe run that wrote it:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
