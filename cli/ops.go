package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Cells of the ops table.
const (
	cellYes     = "yes"
	cellNo      = "no"
	cellAbsent  = "-" // backend not available in this build
	cellUnknown = "?" // backend cannot say without a model
)

// opsRow is one operator version and its support per backend.
type opsRow struct {
	Domain  string            `json:"domain"`
	OpType  string            `json:"op_type"`
	Since   int               `json:"since_version"`
	Support map[string]string `json:"support"`
}

// opsTotal counts, for one backend, the operator versions it supports.
type opsTotal struct {
	Available bool `json:"available"`
	Yes       int  `json:"yes"`
	No        int  `json:"no"`
	Unknown   int  `json:"unknown"`
}

type opsReport struct {
	Backends  []string            `json:"backends"`
	Operators []opsRow            `json:"operators"`
	Totals    map[string]opsTotal `json:"totals"`
}

// cmdOps prints every operator version the ops package knows and which
// backends have a kernel for it.
func cmdOps(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("ops", "[--backend B,...] [--json FILE]", stderr)
	backendList := fs.String("backend", strings.Join(backend.Known, ","), "comma-separated backends to show")
	jsonPath := fs.String("json", "", "also write the table as JSON to `FILE`")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if len(rest) > 0 {
		return usageError(fs, stderr, "unexpected argument %q", rest[0])
	}
	var names []string
	for _, n := range strings.Split(*backendList, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !slices.Contains(backend.Known, n) {
			return usageError(fs, stderr, "unknown backend %q (known: %s)", n, strings.Join(backend.Known, ", "))
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return usageError(fs, stderr, "--backend names no backend")
	}

	if code := checkOutputs(fs, stderr, fileOut("json", *jsonPath)); code >= 0 {
		return code
	}
	rep := buildOpsReport(names)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "DOMAIN\tOPERATOR\tVERSION\t%s\n", strings.Join(names, "\t"))
	for _, r := range rep.Operators {
		cells := make([]string, len(names))
		for i, n := range names {
			cells[i] = r.Support[n]
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", r.Domain, r.OpType, r.Since, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "d500 ops: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "\n%d operator versions\n", len(rep.Operators))
	for _, n := range names {
		t := rep.Totals[n]
		switch {
		case !t.Available:
			fmt.Fprintf(stdout, "%s: not available in this build\n", n)
		case t.Unknown > 0:
			fmt.Fprintf(stdout, "%s: %d supported, %d not, %d unknown\n", n, t.Yes, t.No, t.Unknown)
		default:
			fmt.Fprintf(stdout, "%s: %d supported, %d not\n", n, t.Yes, t.No)
		}
	}
	if *jsonPath != "" {
		err := metrics.WriteFile(*jsonPath, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		})
		if err != nil {
			fmt.Fprintf(stderr, "d500 ops: %v\n", err)
			return exitFail
		}
	}
	return exitOK
}

func buildOpsReport(names []string) *opsReport {
	rep := &opsReport{Backends: names, Operators: []opsRow{}, Totals: map[string]opsTotal{}}
	avail := map[string]backend.Backend{}
	for _, n := range names {
		if b, err := backend.Get(n); err == nil {
			avail[n] = b
		}
		rep.Totals[n] = opsTotal{Available: avail[n].Name != ""}
	}
	// The schemas' operator versions, then any custom ones this build
	// registered (a d500 built around cli.Main with its own kernels).
	schemas := ops.Schemas()
	keys := make([]onnx.RegisteredOperator, 0, len(schemas))
	for _, s := range schemas {
		domain, opType, since := schemaKey(s)
		keys = append(keys, onnx.RegisteredOperator{Domain: domain, OpType: opType, Since: since})
	}
	keys = append(keys, ops.CustomOperators()...)
	for _, k := range keys {
		domain, opType, since := k.Domain, k.OpType, k.Since
		row := opsRow{Domain: displayDomain(domain), OpType: opType, Since: since, Support: map[string]string{}}
		for _, n := range names {
			t := rep.Totals[n]
			b, ok := avail[n]
			switch {
			case !ok:
				row.Support[n] = cellAbsent
			case b.Supports == nil:
				row.Support[n] = cellUnknown
				t.Unknown++
			case b.Supports(domain, opType, since):
				row.Support[n] = cellYes
				t.Yes++
			default:
				row.Support[n] = cellNo
				t.No++
			}
			rep.Totals[n] = t
		}
		rep.Operators = append(rep.Operators, row)
	}
	return rep
}

// schemaKey reads the identity of a schema version.
func schemaKey(s *ops.SchemaInfo) (domain, opType string, since int) {
	return s.Domain, s.OpType, s.SinceVersion
}

// displayDomain spells the default domain out, as ONNX's documentation
// does, so the column is never blank.
func displayDomain(d string) string {
	if d == "" {
		return "ai.onnx"
	}
	return d
}
