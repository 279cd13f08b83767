package recipes

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Format names the recipe layout this package reads and writes.
const Format = "deep500-recipe/1"

//go:embed *.json
var shipped embed.FS

// Recipe is an experiment: which flags of `d500 train` are fixed, which
// may be varied, how many runs, and what they must achieve.
type Recipe struct {
	Format      string `json:"format"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Fixed and Mutable map train flags (without dashes) to their
	// values: strings, numbers or booleans.
	Fixed   map[string]any `json:"fixed"`
	Mutable map[string]any `json:"mutable"`
	// Runs is how many times `recipe run` trains it by default (0: 1).
	Runs       int        `json:"runs,omitempty"`
	Acceptance Acceptance `json:"acceptance"`
}

// Acceptance are the criteria the runs must meet; a criterion left out
// (nil) is not checked.
type Acceptance struct {
	// TargetAccuracy is the quality target: every run must reach this
	// test accuracy at an evaluation (the run stops there, and its time
	// to accuracy is measured).
	TargetAccuracy *float64 `json:"target_accuracy,omitempty"`
	// MaxSecondsToTarget bounds the mean time to TargetAccuracy (the
	// olympic mean from five runs up).
	MaxSecondsToTarget *float64 `json:"max_seconds_to_target,omitempty"`
	// MinTestAccuracy bounds every run's final test accuracy from below,
	// MaxFinalLoss its last training loss from above.
	MinTestAccuracy *float64 `json:"min_test_accuracy,omitempty"`
	MaxFinalLoss    *float64 `json:"max_final_loss,omitempty"`
}

// Load reads and checks a recipe file.
func Load(file string) (*Recipe, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	r, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("recipe %s: %w", file, err)
	}
	return r, nil
}

// Parse reads and checks a recipe; an unknown field is an error (a
// misspelt criterion must not pass unchecked).
func Parse(data []byte) (*Recipe, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	dec.UseNumber() // a seed above 2^53 stays exact
	var r Recipe
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	return &r, r.Check()
}

// Check says what is wrong with a recipe, if anything.
func (r *Recipe) Check() error {
	switch {
	case r.Format != Format:
		return fmt.Errorf("format %q, want %q", r.Format, Format)
	case r.Runs < 0:
		return fmt.Errorf("runs %d is negative", r.Runs)
	}
	for _, k := range []string{"model", "dataset"} {
		if _, ok := r.Fixed[k]; !ok {
			return fmt.Errorf("the fixed part has no %q", k)
		}
	}
	for k, v := range r.Fixed {
		if _, ok := r.Mutable[k]; ok {
			return fmt.Errorf("%q is in both the fixed and the mutable part", k)
		}
		if err := checkValue(k, v); err != nil {
			return err
		}
	}
	for k, v := range r.Mutable {
		if err := checkValue(k, v); err != nil {
			return err
		}
	}
	if _, ok := r.Mutable["target-accuracy"]; ok {
		return errors.New(`"target-accuracy" is the acceptance's target_accuracy, not a flag of the recipe`)
	}
	a := r.Acceptance
	for _, c := range []struct {
		name   string
		v      *float64
		lo, hi float64
	}{{"target_accuracy", a.TargetAccuracy, 0, 1}, {"min_test_accuracy", a.MinTestAccuracy, 0, 1},
		{"max_seconds_to_target", a.MaxSecondsToTarget, 0, math.Inf(1)}, {"max_final_loss", a.MaxFinalLoss, math.Inf(-1), math.Inf(1)}} {
		if c.v != nil && !(*c.v >= c.lo && *c.v <= c.hi) {
			return fmt.Errorf("acceptance %s %g is out of range", c.name, *c.v)
		}
	}
	if a.MaxSecondsToTarget != nil && a.TargetAccuracy == nil {
		return errors.New("acceptance max_seconds_to_target needs target_accuracy")
	}
	return nil
}

// OutputFlags are the train flags that say where a run's results and
// state go, not what it computes: no part of a recipe (`recipe run`
// chooses its own), and free to change when a run is resumed.
var OutputFlags = map[string]bool{"csv": true, "json": true, "plot": true, "save-model": true, "nan-dir": true, "mllog": true,
	"checkpoint-dir": true, "checkpoint-every": true, "checkpoint-keep": true, "resume": true, "write-recipe": true}

// checkValue refuses values a flag cannot take: objects, lists, null,
// and the outputs, which `recipe run` chooses itself.
func checkValue(k string, v any) error {
	if OutputFlags[k] {
		return fmt.Errorf("%q is an output of a run, not part of a recipe", k)
	}
	switch v.(type) {
	case string, float64, json.Number, bool:
		return nil
	}
	return fmt.Errorf("%q: %v is not a string, number or boolean", k, v)
}

// Set changes a value of the mutable part (the value is read as the
// flag's text); a fixed or unknown key is an error. "runs" sets Runs.
func (r *Recipe) Set(key, value string) error {
	if key == "runs" {
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			return fmt.Errorf("runs %q is not a positive integer", value)
		}
		r.Runs = n
		return nil
	}
	if name, ok := strings.CutPrefix(key, "acceptance."); ok {
		return r.setAcceptance(name, value)
	}
	if _, ok := r.Fixed[key]; ok {
		return fmt.Errorf("%q is in the fixed part of recipe %s: make a new recipe to change it", key, r.Name)
	}
	if err := checkValue(key, value); err != nil {
		return err
	}
	if key == "target-accuracy" {
		return errors.New(`set the target as the acceptance's: it is not a flag of the recipe`)
	}
	if r.Mutable == nil {
		r.Mutable = map[string]any{}
	}
	// A run is bounded by epochs or by steps: setting one replaces the
	// other.
	switch key {
	case "steps":
		delete(r.Mutable, "epochs")
	case "epochs":
		delete(r.Mutable, "steps")
	}
	r.Mutable[key] = value
	return nil
}

// setAcceptance sets the criterion of that JSON name ("" removes it).
func (r *Recipe) setAcceptance(name, value string) error {
	a := &r.Acceptance
	fields := map[string]**float64{"target_accuracy": &a.TargetAccuracy, "max_seconds_to_target": &a.MaxSecondsToTarget,
		"min_test_accuracy": &a.MinTestAccuracy, "max_final_loss": &a.MaxFinalLoss}
	f, ok := fields[name]
	if !ok {
		return fmt.Errorf("unknown acceptance criterion %q (known: target_accuracy, max_seconds_to_target, min_test_accuracy, max_final_loss)", name)
	}
	if value == "" {
		*f = nil
		return r.Check()
	}
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return fmt.Errorf("acceptance.%s %q is not a number", name, value)
	}
	*f = &v
	return r.Check()
}

// Seed is the recipe's seed (its "seed", 1 when it has none); run i (from
// 0) trains with Seed+i.
func (r *Recipe) Seed() (uint64, error) {
	v, ok := r.Mutable["seed"]
	if !ok {
		v, ok = r.Fixed["seed"]
	}
	if !ok {
		return 1, nil
	}
	s, err := strconv.ParseUint(flagText(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("seed %v is not a non-negative integer", v)
	}
	return s, nil
}

// Args are the train arguments of run i (from 0): every flag of both
// parts, sorted by name, the seed derived for the run, and the target as
// --target-accuracy.
func (r *Recipe) Args(i int) ([]string, error) {
	seed, err := r.Seed()
	if err != nil {
		return nil, err
	}
	flags := map[string]string{}
	for _, part := range []map[string]any{r.Fixed, r.Mutable} {
		for k, v := range part {
			flags[k] = flagText(v)
		}
	}
	flags["seed"] = strconv.FormatUint(seed+uint64(i), 10)
	if t := r.Acceptance.TargetAccuracy; t != nil {
		flags["target-accuracy"] = strconv.FormatFloat(*t, 'g', -1, 64)
	}
	names := make([]string, 0, len(flags))
	for k := range flags {
		names = append(names, k)
	}
	sort.Strings(names)
	args := make([]string, 0, len(names))
	for _, k := range names {
		args = append(args, "--"+k+"="+flags[k])
	}
	return args, nil
}

// flagText is a value as a flag's text: numbers in their shortest exact
// form.
func flagText(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// Shipped returns the recipes of this folder by file name.
func Shipped() (map[string]*Recipe, error) {
	entries, err := shipped.ReadDir(".")
	if err != nil {
		return nil, err
	}
	out := map[string]*Recipe{}
	for _, e := range entries {
		data, err := shipped.ReadFile(e.Name())
		if err != nil {
			return nil, err
		}
		r, err := Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join("recipes", e.Name()), err)
		}
		out[e.Name()] = r
	}
	return out, nil
}

// FixedFlags are the train flags a recipe written from a run (train
// --write-recipe) puts in its fixed part: what its figures are about. The
// other flags set are mutable.
var FixedFlags = map[string]bool{"model": true, "dataset": true, "loss": true, "backend": true, "normalize": true, "batchnorm": true}
