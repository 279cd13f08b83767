package tests

import (
	"context"
	"testing"

	"github.com/deep500/deep500-go/metrics"
)

// sklearnCases are pipelines shaped like sklearn-onnx's output (Scaler, a
// tree ensemble, SVM or linear classifier or regressor of ai.onnx.ml, and
// ZipMap for the class probabilities), converted from models scikit-learn
// fitted, with scikit-learn's own predictions as the expected outputs.
// scripts/sklearn-cases/make_sklearn_cases.py writes them.
const sklearnCases = "testdata/sklearn"

// Every sklearn-shaped pipeline passes under the conformance rule on native
// and on ONNX Runtime: both agree with scikit-learn, and so with each other.
func TestSklearnPipelines(t *testing.T) {
	cases, err := metrics.FindCases(sklearnCases)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 6 {
		t.Fatalf("found %d cases under %s, want the 6 the script writes", len(cases), sklearnCases)
	}
	for _, b := range []string{"native", "onnxruntime"} {
		rep, err := metrics.Run(context.Background(), cases, metrics.Config{Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Tests {
			if r.Status != metrics.Passed {
				t.Errorf("%s on %s: %s: %s", r.Name, b, r.Status, r.Reason)
			}
		}
		t.Logf("%s: %s", b, rep.Summary())
	}
}
