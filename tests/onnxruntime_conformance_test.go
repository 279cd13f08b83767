package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/onnxruntime"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/onnx"
)

// onnxruntimeNotPassing lists every case of the four suites that the
// onnxruntime backend does not pass, with its status, reason and a note
// saying whose limit it is.
const onnxruntimeNotPassing = "testdata/onnxruntime_not_passing.tsv"

// onnxruntimeMinPassed is the pass count the issue asks of the backend
// (ONNX Runtime 1.30's own Python API passes 990 under the same rule).
const onnxruntimeMinPassed = 980

// The ONNX Runtime backend runs all 1072 cases; the ones it does not pass
// are exactly those listed, and at least onnxruntimeMinPassed pass. The
// library is installed by make setup; without it every case fails with a
// reason naming `make onnxruntime`, and so does this test.
func TestOnnxruntimeConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs all 1072 ONNX cases")
	}
	cases, err := metrics.FindCases(suiteDirs(t)...)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := metrics.Run(context.Background(), cases, metrics.Config{Backend: "onnxruntime"})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Passed + rep.Failed + rep.Skipped; got != 1072 {
		t.Errorf("%d cases reported (%s), want 1072", got, rep.Summary())
	}
	for _, r := range rep.Tests {
		if r.Status != metrics.Passed && strings.TrimSpace(r.Reason) == "" {
			t.Errorf("%s %s without a reason", r.Name, r.Status)
		}
		if strings.HasPrefix(r.Reason, "panic:") {
			t.Errorf("%s panicked: %s", r.Name, r.Reason)
		}
	}
	t.Logf("onnxruntime: %s", rep.Summary())
	if rep.Passed < onnxruntimeMinPassed {
		t.Errorf("onnxruntime passed %d cases, want at least %d", rep.Passed, onnxruntimeMinPassed)
	}
	checkNotPassingList(t, rep, onnxruntimeNotPassing)
	checkOpsColumnAgrees(t, rep, cases)
}

// checkOpsColumnAgrees requires `d500 ops` to say "yes" for every operator
// version of every case ONNX Runtime passed: the probe behind the column
// must never deny what the conformance run saw working.
func checkOpsColumnAgrees(t *testing.T, rep *metrics.Report, cases []metrics.Case) {
	t.Helper()
	b, err := backend.Get("onnxruntime")
	if err != nil || b.Supports == nil {
		t.Fatalf("onnxruntime backend without Supports: %v", err)
	}
	passed := map[string]bool{}
	for _, r := range rep.Tests {
		passed[r.Name] = r.Status == metrics.Passed
	}
	checked := map[string]bool{}
	for _, c := range cases {
		if !passed[c.Name] {
			continue
		}
		m, err := onnx.Load(filepath.Join(c.Dir, metrics.ModelFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range m.Graph.Nodes {
			if n.Op == nil || n.Op.SinceVersion() == 0 {
				continue // a model-local function or an unknown operator
			}
			key := fmt.Sprintf("%s.%s-%d", n.Op.Domain(), n.Op.OpType(), n.Op.SinceVersion())
			if checked[key] {
				continue
			}
			checked[key] = true
			if !b.Supports(n.Op.Domain(), n.Op.OpType(), n.Op.SinceVersion()) {
				t.Errorf("d500 ops says onnxruntime lacks %s, but %s passed with it", key, c.Name)
			}
		}
	}
	if len(checked) < 100 {
		t.Errorf("only %d operator versions checked", len(checked))
	}
}
