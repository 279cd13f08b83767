package tests

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "github.com/deep500/deep500-go/backend/gorgonia"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/onnx"
)

// The Gorgonia backend over the four suites: no case fails (a case it
// cannot express is skipped, with the reason), at least 250 pass, and the
// passing cases cover at least 40 operator types.
func TestGorgoniaConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs all 1072 ONNX cases")
	}
	cases, err := metrics.FindCases(suiteDirs(t)...)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := metrics.Run(context.Background(), cases, metrics.Config{Backend: "gorgonia"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed+rep.Failed+rep.Skipped != 1072 {
		t.Errorf("%s over %d cases, want 1072", rep.Summary(), len(rep.Tests))
	}
	ops := map[string]bool{}
	for _, r := range rep.Tests {
		switch r.Status {
		case metrics.Failed:
			t.Errorf("%s failed: %s", r.Name, r.Reason)
		case metrics.Skipped:
			if !strings.Contains(r.Reason, "unsupported") {
				t.Errorf("%s skipped for another reason than an unsupported operator or type: %s", r.Name, r.Reason)
			}
		case metrics.Passed:
			m, err := onnx.Load(filepath.Join(dataRoot, r.Name, "model.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range m.Graph.Nodes {
				ops[n.OpType] = true
			}
		}
	}
	if rep.Passed < 250 {
		t.Errorf("%d cases passed, want at least 250", rep.Passed)
	}
	var names []string
	for op := range ops {
		names = append(names, op)
	}
	sort.Strings(names)
	if len(names) < 40 {
		t.Errorf("the passing cases cover %d operator types, want at least 40: %v", len(names), names)
	}
	t.Logf("gorgonia: %s; %d operator types: %s", rep.Summary(), len(names), strings.Join(names, " "))
}

// Gorgonia's symbolic differentiation agrees with central differences on
// every case the gradient check can check.
func TestGorgoniaGradCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("checks all 1072 ONNX cases")
	}
	cases, err := metrics.FindCases(suiteDirs(t)...)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := metrics.GradCheck(context.Background(), cases, metrics.GradConfig{Backend: "gorgonia"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Tests {
		if r.Status == metrics.Failed {
			t.Errorf("%s failed: %s", r.Name, r.Reason)
		}
	}
	if rep.Passed < 250 {
		t.Errorf("%d cases passed the gradient check, want at least 250", rep.Passed)
	}
	t.Logf("gorgonia gradcheck: %s", rep.Summary())
}
