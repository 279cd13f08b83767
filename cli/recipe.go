package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/recipes"
)

const recipeSynopsis = "run FILE [--runs N] [--set KEY=VALUE]... [--out DIR] [--json OUT]"

// recipeReport is `recipe run --json`.
type recipeReport struct {
	Recipe      *recipes.Recipe      `json:"recipe"`
	File        string               `json:"file"`
	Accepted    bool                 `json:"accepted"`
	Interrupted bool                 `json:"interrupted,omitempty"`
	Verdicts    []recipes.Verdict    `json:"verdicts"`
	Runs        []recipes.RunFigures `json:"runs"`
	Summary     recipes.Summary      `json:"summary"`
	Environment metrics.Environment  `json:"environment"`
}

// cmdRecipe runs an experiment recipe: `d500 recipe run FILE`.
func cmdRecipe(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("recipe", recipeSynopsis, stderr)
	runs := fs.Int("runs", 0, "train the recipe `N` times, with seeds seed, seed+1, ... (default: the recipe's runs)")
	sets := fs.StringArray("set", nil, "change a value of the recipe's mutable part, `KEY=VALUE` (KEY a train flag without dashes; runs=N too)")
	outDir := fs.String("out", "", "write each run's CSV, JSON report, MLLOG and output into `DIR` (default out/recipes/NAME)")
	jsonPath := fs.String("json", "", "write the recipe, every run's figures, the summary and the verdicts as JSON to `FILE`")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	switch {
	case len(rest) != 2 || rest[0] != "run":
		return usageError(fs, stderr, "want: d500 recipe run FILE")
	case *runs < 0:
		return usageError(fs, stderr, "--runs must not be negative")
	}
	file := rest[1]
	r, err := recipes.Load(file)
	if err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	for _, kv := range *sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return usageError(fs, stderr, "--set %q is not KEY=VALUE", kv)
		}
		if err := r.Set(k, v); err != nil {
			return usageError(fs, stderr, "--set: %v", err)
		}
	}
	if *runs > 0 {
		r.Runs = *runs
	}
	n := max(r.Runs, 1)
	dir := *outDir
	if dir == "" {
		dir = filepath.Join("out", "recipes", r.Name)
	}
	if code := checkOutputs(fs, stderr, dirOut("out", dir), fileOut("json", *jsonPath)); code >= 0 {
		return code
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "d500 recipe: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "recipe %s (%s): %d run(s), outputs in %s\n", r.Name, file, n, dir)
	rep := recipeReport{Recipe: r, File: file}
	for i := range n {
		fig, status := runRecipeOnce(r, i, dir, stderr)
		rep.Runs = append(rep.Runs, fig)
		fmt.Fprintln(stdout, describeRecipeRun(fig, n, r.Acceptance.TargetAccuracy))
		if status == exitUsage && i == 0 {
			// The recipe's flags do not make a run: a bad recipe.
			fmt.Fprintf(stderr, "d500 recipe: %s: train refuses its arguments: %s\n", file, fig.Error)
			return exitUsage
		}
		if status == exitInterrupted {
			rep.Interrupted = true
			break
		}
	}
	// After the runs: the version probes load backends' libraries, which
	// the runs choose (run and bench do the same).
	threads, _ := strconv.Atoi(fmt.Sprint(r.Mutable["threads"]))
	rep.Environment = metrics.NewEnvironment(threads, nil)
	rep.Summary = recipes.Summarize(rep.Runs)
	rep.Verdicts = r.Acceptance.Check(rep.Runs, rep.Summary)
	rep.Accepted = !rep.Interrupted
	for _, v := range rep.Verdicts {
		rep.Accepted = rep.Accepted && v.Holds
	}
	printRecipeSummary(stdout, &rep)
	status := exitOK
	if *jsonPath != "" {
		if err := metrics.WriteFile(*jsonPath, func(w io.Writer) error { return writeIndentedJSON(w, &rep) }); err != nil {
			fmt.Fprintf(stderr, "d500 recipe: %v\n", err)
			status = exitFail
		} else {
			fmt.Fprintf(stdout, "report written to %s\n", *jsonPath)
		}
	}
	switch {
	case rep.Interrupted:
		return exitInterrupted
	case !rep.Accepted:
		return exitFail
	}
	return status
}

// runRecipeOnce trains run i of the recipe with d500 train, its output
// in dir/run-K.log, and returns its figures and exit status.
func runRecipeOnce(r *recipes.Recipe, i int, dir string, stderr io.Writer) (recipes.RunFigures, int) {
	fig := recipes.RunFigures{Run: i + 1}
	args, err := r.Args(i)
	if err != nil {
		fig.ExitStatus, fig.Error = exitUsage, err.Error()
		return fig, exitUsage
	}
	seed, _ := r.Seed()
	fig.Seed = seed + uint64(i)
	base := filepath.Join(dir, fmt.Sprintf("run-%d", i+1))
	fig.CSV = base + ".csv"
	args = append(args, "--csv", fig.CSV, "--json", base+".json", "--mllog", base+".mllog")
	var out, errOut bytes.Buffer
	status := cmdTrain(args, &out, &errOut)
	log := fmt.Sprintf("d500 train %s\n%s%s", strings.Join(args, " "), out.String(), errOut.String())
	if err := os.WriteFile(base+".log", []byte(log), 0o644); err != nil {
		fmt.Fprintf(stderr, "d500 recipe: %v\n", err)
	}
	fig.ExitStatus = status
	if status != exitOK {
		msg, _, _ := strings.Cut(errOut.String(), "\nusage:") // the error, not train's usage
		fig.Error = strings.TrimSpace(msg)
	}
	var tr metrics.TrainReport
	if data, err := os.ReadFile(base + ".json"); err == nil && json.Unmarshal(data, &tr) == nil {
		fig.Steps, fig.Samples, fig.Seconds = tr.Steps, tr.Samples, tr.Seconds
		fig.FinalLoss, fig.TestAccuracy = tr.FinalLoss, tr.TestAccuracy
		if t := tr.Target; t != nil {
			fig.ReachedTarget = true
			fig.SecondsToTarget, fig.SamplesToTarget, fig.StepsToTarget = t.Seconds, t.Samples, t.Steps
		}
	} else if status == exitOK {
		fig.ExitStatus, fig.Error = exitFail, fmt.Sprintf("no readable report %s.json", base)
	}
	return fig, status
}

func describeRecipeRun(f recipes.RunFigures, n int, target *float64) string {
	s := fmt.Sprintf("run %d/%d (seed %d): ", f.Run, n, f.Seed)
	if f.ExitStatus != exitOK && f.ExitStatus != exitInterrupted {
		return s + fmt.Sprintf("failed (exit %d): %s", f.ExitStatus, oneLine(f.Error))
	}
	switch {
	case target != nil && f.ReachedTarget:
		s += fmt.Sprintf("reached %s test accuracy at step %d (%d samples) in %.2fs", percent(*target), f.StepsToTarget, f.SamplesToTarget, f.SecondsToTarget)
	case target != nil:
		s += fmt.Sprintf("did not reach %s test accuracy in %d steps (%.2fs)", percent(*target), f.Steps, f.Seconds)
	default:
		s += fmt.Sprintf("%d steps in %.2fs", f.Steps, f.Seconds)
	}
	if f.TestAccuracy != nil {
		s += fmt.Sprintf("; final test accuracy %s", percent(*f.TestAccuracy))
	}
	if f.ExitStatus == exitInterrupted {
		s += " (interrupted)"
	}
	return s
}

func percent(v float64) string { return strconv.FormatFloat(100*v, 'f', 2, 64) + "%" }

func printRecipeSummary(w io.Writer, rep *recipeReport) {
	s := rep.Summary
	interval := func(iv *recipes.Interval, unit string, scale float64, prec int) string {
		f := func(v float64) string { return strconv.FormatFloat(v*scale, 'f', prec, 64) }
		txt := f(iv.Mean) + unit
		if !math.IsNaN(iv.Lo) {
			txt += fmt.Sprintf(" (95%% CI %s–%s%s", f(iv.Lo), f(iv.Hi), unit)
		} else {
			txt += " (one run: no interval"
		}
		txt += fmt.Sprintf(", %d runs", iv.N)
		if iv.Dropped > 0 {
			txt += fmt.Sprintf(", the fastest and slowest of %d dropped", iv.N+iv.Dropped)
		}
		return txt + ")"
	}
	if t := rep.Recipe.Acceptance.TargetAccuracy; t != nil {
		if s.SecondsToTarget != nil {
			fmt.Fprintf(w, "time to %s test accuracy: %s\n", percent(*t), interval(s.SecondsToTarget, " s", 1, 2))
			fmt.Fprintf(w, "samples to %s test accuracy: %s\n", percent(*t), interval(s.SamplesToTarget, "", 1, 0))
		} else {
			fmt.Fprintf(w, "time to %s test accuracy: not measured, %d of %d runs reached it\n", percent(*t), s.Reached, s.Runs)
		}
	}
	if s.TestAccuracy != nil {
		fmt.Fprintf(w, "final test accuracy: %s\n", interval(s.TestAccuracy, "%", 100, 2))
	}
	for _, v := range rep.Verdicts {
		mark := "holds"
		if !v.Holds {
			mark = "MISSED"
		}
		fmt.Fprintf(w, "  %-6s %s: %s\n", mark, v.Criterion, v.Detail)
	}
	switch {
	case rep.Interrupted:
		fmt.Fprintln(w, "recipe interrupted: not accepted")
	case rep.Accepted:
		fmt.Fprintln(w, "recipe accepted")
	default:
		fmt.Fprintln(w, "recipe NOT accepted")
	}
}
