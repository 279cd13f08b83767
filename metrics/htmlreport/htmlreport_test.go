package htmlreport

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/metrics"
)

// A page from a conformance report, a training CSV and a training report:
// the counts by suite and by operator, every case not passed with its
// reason (escaped: reasons quote model data), the figures inlined as SVG,
// the training summary; and no reference to anything outside the file.
func TestWriteFromResults(t *testing.T) {
	dir := t.TempDir()
	env := metrics.Environment{CPU: "Test CPU 9000", Cores: 2, GoVersion: "go1.26"}
	conf := metrics.Report{Check: "conformance", Backend: "native", Passed: 2, Failed: 1, Skipped: 1, Environment: &env, Tests: []metrics.Result{
		{Name: "node/test_abs", Status: metrics.Passed, Operators: "Abs"},
		{Name: "node/test_conv_bad", Status: metrics.Failed, Reason: `output "y": got <script>alert(1)</script>`, Operators: "Conv,Relu"},
		{Name: "simple/test_relu", Status: metrics.Passed, Operators: "Relu"},
		{Name: "simple/test_gru", Status: metrics.Skipped, Reason: "unsupported: GRU", Operators: "GRU"},
	}}
	confPath := filepath.Join(dir, "conformance.json")
	if err := conf.WriteJSONFile(confPath); err != nil {
		t.Fatal(err)
	}
	csvPath := filepath.Join(dir, "train.csv")
	csv := "epoch,step,samples,seconds,loss,train_accuracy,test_accuracy,lr\n1,1,32,0.1,2.3,0.1,,0.01\n1,1,32,0.2,,,0.5,0.01\n1,2,64,0.3,2.0,0.2,,0.01\n1,2,64,0.4,,,0.6,0.01\n"
	if err := os.WriteFile(csvPath, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	trainPath := filepath.Join(dir, "train.json")
	train, _ := json.Marshal(map[string]any{"model": "lenet", "dataset": "fashion-mnist", "optimizer": "adam",
		"hyperparameters": map[string]any{"lr": 0.001, "beta1": 0.9}, "steps": 2, "samples": 64, "final_loss": 2.0, "test_accuracy": 0.6})
	if err := os.WriteFile(trainPath, train, 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := Load(confPath, csvPath, trainPath)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, in, "Results <of a test>"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<title>Results &lt;of a test&gt;</title>", "Test CPU 9000",
		"2 passed</span>, <span class=\"failed\">1 failed</span>, <span class=\"skipped\">1 skipped</span>",
		"<td>node</td><td class=\"n\">1</td><td class=\"n\">1</td><td class=\"n\">0</td>",
		"<td>Conv</td>", "<td>GRU</td>",
		"got &lt;script&gt;alert(1)&lt;/script&gt;", "unsupported: GRU",
		"<svg", "Test accuracy by training samples",
		"lenet on fashion-mnist", "lr 0.001, beta1 0.9", "test accuracy 0.6000",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "<?xml") || strings.Contains(page, "src=\"http") || strings.Contains(page, "href=\"http") {
		t.Error("the page has a script, an XML declaration or an outside reference")
	}
	// Conv and GRU, with a case not passed, come before Abs and Relu.
	if i, j := strings.Index(page, "<td>Conv</td>"), strings.Index(page, "<td>Abs</td>"); i < 0 || j < i {
		t.Error("operators with a case not passed do not come first")
	}
}

// A file of no known kind is an error naming it.
func TestLoadRefusesUnknownFiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"x.json": `{"what": 1}`, "y.json": "not json", "z.csv": "a,b\n1,2\n"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming the file", name, err)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("no error for a missing file")
	}
}
