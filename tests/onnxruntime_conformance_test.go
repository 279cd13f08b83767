package tests

import (
	"context"
	"strings"
	"testing"

	_ "github.com/deep500/deep500-go/backend/onnxruntime"
	"github.com/deep500/deep500-go/metrics"
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
}
