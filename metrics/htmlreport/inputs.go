package htmlreport

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/metrics/plot"
)

// Inputs are the result files of a report, by kind.
type Inputs struct {
	Checks []Check              // conformance and gradient-check reports
	Benchs []Bench              // bench tables
	Trains []Train              // training reports
	Curves []plot.Run           // training curves
	Env    *metrics.Environment // the first environment found
}

// Check is a conformance or gradient-check report (d500 conformance
// --json, d500 gradcheck --json).
type Check struct {
	Path        string
	Kind        string               // "conformance" or "gradcheck"
	Backend     string               `json:"backend"`
	Passed      int                  `json:"passed"`
	Failed      int                  `json:"failed"`
	Skipped     int                  `json:"skipped"`
	Interrupted bool                 `json:"interrupted"`
	Tests       []metrics.Result     `json:"tests"`
	Environment *metrics.Environment `json:"environment"`
}

// Bench is a bench table (d500 bench --json) and the file it came from.
type Bench struct {
	Path string
	metrics.BenchReport
}

// Train is a training report (d500 train --json) and the file it came
// from.
type Train struct {
	Path string
	metrics.TrainReport
}

// Load reads the result files at paths, telling their kinds apart by
// content: a CSV with the training header is a curve; a JSON document
// with "tests" a conformance or gradient-check report, with "rows" a bench
// table, with "hyperparameters" a training report. Anything else is an
// error naming the file.
func Load(paths ...string) (*Inputs, error) {
	in := &Inputs{}
	for _, path := range paths {
		if strings.EqualFold(filepath.Ext(path), ".csv") {
			run, err := plot.ReadFile(path)
			if err != nil {
				return nil, err
			}
			in.Curves = append(in.Curves, run)
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(data, &keys); err != nil {
			return nil, fmt.Errorf("%s: not a CSV of training curves or a JSON report: %w", path, err)
		}
		var env *metrics.Environment
		switch {
		case keys["tests"] != nil:
			c := Check{Path: path}
			if err := json.Unmarshal(data, &c); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			if c.Kind == "" {
				c.Kind = "conformance" // a report written before "check" was
			}
			in.Checks, env = append(in.Checks, c), c.Environment
		case keys["rows"] != nil:
			b := Bench{Path: path}
			if err := json.Unmarshal(data, &b); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			in.Benchs, env = append(in.Benchs, b), &b.Environment
		case keys["hyperparameters"] != nil:
			t := Train{Path: path}
			if err := json.Unmarshal(data, &t); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			in.Trains, env = append(in.Trains, t), &t.Environment
		default:
			return nil, fmt.Errorf("%s: a JSON document of no known report (conformance, gradcheck, bench, train)", path)
		}
		if in.Env == nil && env != nil {
			in.Env = env
		}
	}
	return in, nil
}
