package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/recipes"
	flag "github.com/spf13/pflag"
)

// recipeAlways are the train flags a recipe written from a run records
// even when left at their defaults: every choice the run's figures depend
// on, so that a later default changes no recipe. The others are recorded
// when given (an optimizer's hyperparameter left out keeps meaning "the
// optimizer's default"; --test-every left out, "about 8 evaluations").
var recipeAlways = map[string]bool{"model": true, "dataset": true, "loss": true, "backend": true, "optimizer": true, "impl": true,
	"batch": true, "seed": true, "init": true, "normalize": true, "batchnorm": true}

// writeRunRecipe writes the run fs describes as a recipe: its flags
// without the outputs (recipes.OutputFlags), --threads and
// --memory-limit (what this machine gives a run), the fixed part
// being recipes.FixedFlags, and --target-accuracy as the acceptance
// target. epochsDefaulted says the run's one epoch was the default.
func writeRunRecipe(fs *flag.FlagSet, file string, epochsDefaulted bool) error {
	r := &recipes.Recipe{Format: recipes.Format, Name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)),
		Fixed: map[string]any{}, Mutable: map[string]any{}, Runs: 1}
	put := func(name, value string) {
		var v any = value
		if _, err := strconv.ParseFloat(value, 64); err == nil {
			v = json.Number(value)
		} else if b, err := strconv.ParseBool(value); err == nil {
			v = b
		}
		if recipes.FixedFlags[name] {
			r.Fixed[name] = v
		} else {
			r.Mutable[name] = v
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		switch {
		case f.Name == "target-accuracy":
			if v, err := strconv.ParseFloat(f.Value.String(), 64); err == nil && v > 0 {
				r.Acceptance.TargetAccuracy = &v
			}
		case recipes.OutputFlags[f.Name] || f.Name == "threads" || f.Name == "memory-limit":
		case f.Changed || recipeAlways[f.Name]:
			if f.Value.String() != "" {
				put(f.Name, f.Value.String())
			}
		}
	})
	if epochsDefaulted {
		put("epochs", "1")
	}
	r.Description = "written by d500 train --write-recipe"
	if c := metrics.CurrentEnvironment().Commit; c != "" {
		r.Description += " at commit " + c
	}
	if err := r.Check(); err != nil {
		return fmt.Errorf("--write-recipe: %w", err)
	}
	return metrics.WriteFile(file, func(w io.Writer) error { return writeIndentedJSON(w, r) })
}
