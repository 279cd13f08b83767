package recipes

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// The recipes of this folder parse, name the Fashion-MNIST runs of the
// README, and give train arguments with the derived seeds.
func TestShippedRecipes(t *testing.T) {
	all, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	r := all["lenet-adam-fashion-mnist.json"]
	if r == nil || len(all) < 3 {
		t.Fatalf("shipped recipes: %v", all)
	}
	args, err := r.Args(2)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--backend=native", "--batch=64", "--dataset=fashion-mnist", "--epochs=1", "--init=he", "--loss=softmax-xent",
		"--lr=0.001", "--model=lenet", "--optimizer=adam", "--seed=3", "--target-accuracy=0.85", "--test-every=50"}
	if !slices.Equal(args, want) {
		t.Errorf("args of run 3:\n%v\nwant\n%v", args, want)
	}
}

func TestParseAndSet(t *testing.T) {
	good := `{"format":"deep500-recipe/1","name":"x","fixed":{"model":"mlp","dataset":"synthetic"},"mutable":{"seed":18446744073709551000,"lr":0.1,"epochs":2},"acceptance":{"target_accuracy":0.5}}`
	r, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := r.Seed(); err != nil || s != 18446744073709551000 {
		t.Errorf("seed %d %v: a seed above 2^53 must stay exact", s, err)
	}
	for _, c := range []struct{ key, value, want string }{
		{"model", "lenet", "fixed part"},
		{"csv", "a.csv", "output of a run"},
		{"acceptance.nosuch", "1", "unknown acceptance criterion"},
		{"acceptance.target_accuracy", "2", "out of range"},
		{"runs", "0", "positive"},
	} {
		if err := r.Set(c.key, c.value); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Set(%s, %s): %v, want %q", c.key, c.value, err, c.want)
		}
	}
	if err := r.Set("steps", "30"); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Mutable["epochs"]; ok {
		t.Error("setting steps left epochs")
	}
	for _, bad := range []struct{ json, want string }{
		{`{"format":"deep500-recipe/9","fixed":{"model":"m","dataset":"d"}}`, "format"},
		{`{"format":"deep500-recipe/1","fixed":{"model":"m"}}`, `no "dataset"`},
		{`{"format":"deep500-recipe/1","fixed":{"model":"m","dataset":"d"},"acceptance":{"target_acuracy":0.9}}`, "unknown field"},
		{`{"format":"deep500-recipe/1","fixed":{"model":"m","dataset":"d","lr":[1]}}`, "not a string"},
		{`{"format":"deep500-recipe/1","fixed":{"model":"m","dataset":"d"},"mutable":{"model":"n"}}`, "both"},
		{`{"format":"deep500-recipe/1","fixed":{"model":"m","dataset":"d"},"acceptance":{"max_seconds_to_target":3}}`, "needs target_accuracy"},
	} {
		if _, err := Parse([]byte(bad.json)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Parse(%s): %v, want %q", bad.json, err, bad.want)
		}
	}
}

// The interval is Student's t: for 1, 2, 3 the mean 2 ± t(0.975, 2) ·
// 1/√3 = 2 ± 2.4841; from five values up the fastest and slowest are
// dropped.
func TestMeanInterval(t *testing.T) {
	iv := MeanInterval([]float64{3, 1, 2}, true)
	if iv.Mean != 2 || math.Abs(iv.Lo-(2-2.48414)) > 1e-4 || math.Abs(iv.Hi-(2+2.48414)) > 1e-4 || iv.N != 3 || iv.Dropped != 0 {
		t.Errorf("1,2,3: %+v", iv)
	}
	iv = MeanInterval([]float64{100, 1, 2, 3, -50}, true)
	if iv.Mean != 2 || iv.N != 3 || iv.Dropped != 2 {
		t.Errorf("olympic: %+v", iv)
	}
	if iv := MeanInterval([]float64{5}, true); iv.Mean != 5 || !math.IsNaN(iv.Lo) {
		t.Errorf("one value: %+v", iv)
	}
}

func TestAcceptanceCheck(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	runs := []RunFigures{
		{Run: 1, ReachedTarget: true, SecondsToTarget: 2, TestAccuracy: f(0.9), FinalLoss: f(0.3)},
		{Run: 2, ReachedTarget: true, SecondsToTarget: 4, TestAccuracy: f(0.86), FinalLoss: f(0.5)},
	}
	a := Acceptance{TargetAccuracy: f(0.85), MaxSecondsToTarget: f(3.5), MinTestAccuracy: f(0.87), MaxFinalLoss: f(0.6)}
	var got []bool
	for _, v := range a.Check(runs, Summarize(runs)) {
		got = append(got, v.Holds)
	}
	// completes, reaches, mean 3 s ≤ 3.5, lowest 0.86 < 0.87, loss ≤ 0.6
	if want := []bool{true, true, true, false, true}; !slices.Equal(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
	runs[1].ReachedTarget = false
	if v := a.Check(runs, Summarize(runs)); v[1].Holds || v[2].Holds {
		t.Errorf("a run short of the target: %+v", v)
	}
}
