package htmlreport

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/metrics/plot"
	"github.com/deep500/deep500-go/optimizer"
)

// Write writes the page of in to w, titled title.
func Write(w io.Writer, in *Inputs, title string) error {
	p := page{Title: title, Generated: time.Now().UTC().Format("2006-01-02 15:04 UTC"), Env: in.Env,
		Trains: in.Trains, Benchs: in.Benchs}
	for _, c := range in.Checks {
		p.Checks = append(p.Checks, viewCheck(c))
	}
	if len(in.Curves) > 0 {
		for _, f := range plot.Figures {
			svg, err := f.SVG(in.Curves)
			if err != nil {
				return err
			}
			p.Figures = append(p.Figures, figure{Title: f.Title, SVG: inlineSVG(svg)})
		}
		for _, r := range in.Curves {
			p.CurveFiles = append(p.CurveFiles, r.Path)
		}
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// page is what the template shows.
type page struct {
	Title, Generated string
	Env              *metrics.Environment
	Checks           []checkView
	Figures          []figure
	CurveFiles       []string
	Trains           []Train
	Benchs           []Bench
}

// figure is one training figure, inlined.
type figure struct {
	Title string
	SVG   template.HTML
}

// inlineSVG is an SVG document as an element of the page: without the XML
// declaration, which HTML does not take.
func inlineSVG(svg []byte) template.HTML {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return template.HTML(s) // made by package plot from numbers and our own labels
}

// checkView is a check report grouped for the page.
type checkView struct {
	Check
	Suites    []counts         // by suite, in name order
	Operators []counts         // by operator: those with a case not passed first
	Problems  []metrics.Result // the cases that failed or were skipped, by name
}

// counts are the cases of one suite or operator by status.
type counts struct {
	Name                    string
	Passed, Failed, Skipped int
}

// NotPassed is the number of cases that failed or were skipped.
func (c counts) NotPassed() int { return c.Failed + c.Skipped }

func viewCheck(c Check) checkView {
	v := checkView{Check: c}
	suites, ops := map[string]*counts{}, map[string]*counts{}
	add := func(m map[string]*counts, name string, status metrics.Status) {
		n := m[name]
		if n == nil {
			n = &counts{Name: name}
			m[name] = n
		}
		switch status {
		case metrics.Passed:
			n.Passed++
		case metrics.Failed:
			n.Failed++
		default:
			n.Skipped++
		}
	}
	for _, t := range c.Tests {
		suite, _, _ := strings.Cut(t.Name, "/")
		add(suites, suite, t.Status)
		for _, op := range strings.Split(t.Operators, ",") {
			if op != "" {
				add(ops, op, t.Status)
			}
		}
		if t.Status != metrics.Passed {
			v.Problems = append(v.Problems, t)
		}
	}
	sorted := func(m map[string]*counts, worstFirst bool) []counts {
		var out []counts
		for _, n := range m {
			out = append(out, *n)
		}
		slices.SortFunc(out, func(a, b counts) int {
			if worstFirst {
				if c := cmp.Compare(b.NotPassed(), a.NotPassed()); c != 0 {
					return c
				}
			}
			return cmp.Compare(a.Name, b.Name)
		})
		return out
	}
	v.Suites, v.Operators = sorted(suites, false), sorted(ops, true)
	slices.SortFunc(v.Problems, func(a, b metrics.Result) int { return cmp.Compare(a.Name, b.Name) })
	return v
}

var funcs = template.FuncMap{
	"pct": func(part, whole int) string {
		if whole == 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
	},
	"num": func(p *float64, format string) string {
		if p == nil {
			return "–"
		}
		return fmt.Sprintf(format, *p)
	},
	"f":    func(format string, v float64) string { return fmt.Sprintf(format, v) },
	"add3": func(a, b, c int) int { return a + b + c },
	"spread": func(v []float64) string {
		if len(v) < 2 {
			return ""
		}
		return fmt.Sprintf("%.2f–%.2f", slices.Min(v), slices.Max(v))
	},
	"short": func(s string) string {
		if len(s) > 12 {
			return s[:12]
		}
		return s
	},
	"hyper": func(h optimizer.Hyperparams) string {
		var parts []string
		for _, p := range []struct {
			name string
			v    float64
		}{{"lr", h.LR}, {"momentum", h.Momentum}, {"beta1", h.Beta1}, {"beta2", h.Beta2}, {"eps", h.Eps}, {"alpha", h.Alpha}, {"weight_decay", h.WeightDecay}} {
			if p.v != 0 {
				parts = append(parts, fmt.Sprintf("%s %g", p.name, p.v))
			}
		}
		return strings.Join(parts, ", ")
	},
}

var pageTemplate = template.Must(template.New("page").Funcs(funcs).Parse(pageHTML))
