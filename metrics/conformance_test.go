package metrics_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	onnxpb "github.com/deep500/deep500-go/onnx/pb"
)

// nodeSuite is where Debian's libonnx-testdata puts ONNX's node tests
// (installed by make setup).
const nodeSuite = "/usr/share/libonnx-testdata/data/node"

// copyCase copies an ONNX test case into a fresh folder <tmp>/node/<name>
// so the test can alter it; the suite folder keeps the case's name.
func copyCase(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(nodeSuite, name)
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("ONNX test data missing (run make setup): %v", err)
	}
	dst := filepath.Join(t.TempDir(), "node", name)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func runOne(t *testing.T, dir, backendName string) metrics.Result {
	t.Helper()
	cases, err := metrics.FindCases(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 1 {
		t.Fatalf("FindCases(%s) found %d cases, want 1", dir, len(cases))
	}
	rep, err := metrics.Run(context.Background(), cases, metrics.Config{Backend: backendName})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tests) != 1 {
		t.Fatalf("report has %d results, want 1", len(rep.Tests))
	}
	return rep.Tests[0]
}

func TestRealCasePasses(t *testing.T) {
	dir := copyCase(t, "test_relu")
	r := runOne(t, dir, "native")
	if r.Name != "node/test_relu" {
		t.Errorf("name %q, want node/test_relu", r.Name)
	}
	if r.Status != metrics.Passed {
		t.Fatalf("test_relu: %s: %s", r.Status, r.Reason)
	}
	if r.Reason != "" || r.Seconds <= 0 {
		t.Errorf("passed case with reason %q, seconds %v", r.Reason, r.Seconds)
	}
}

// The harness must fail a case whose expected output was altered.
func TestAlteredOutputFails(t *testing.T) {
	dir := copyCase(t, "test_relu")
	out := filepath.Join(dir, "test_data_set_0", "output_0.pb")
	name, v, err := onnx.ReadValue(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	tensor, ok := v.(*onnx.Tensor)
	if !ok || tensor.Type != onnx.Float || tensor.Len() < 8 {
		t.Fatalf("output_0.pb of test_relu is %s, want a float tensor", onnx.DescribeValue(v))
	}
	// Element [0 1 2] (flat index 7 of shape [3 4 5]) moves by 1, far
	// outside the tolerance.
	tensor.Float32s()[7] += 1
	if err := onnx.WriteValue(out, name, tensor); err != nil {
		t.Fatal(err)
	}
	r := runOne(t, dir, "native")
	if r.Status != metrics.Failed {
		t.Fatalf("altered test_relu: %s (%q), want failed", r.Status, r.Reason)
	}
	want := `output "y" (test_data_set_0): 1 of 60 elements differ, worst at [0 1 2]: got `
	if !strings.HasPrefix(r.Reason, want) {
		t.Errorf("reason %q, want it to start with %q", r.Reason, want)
	}
	if r.MaxAbsError < 0.99 || r.MaxAbsError > 1.01 {
		t.Errorf("max_abs_error %v, want 1", r.MaxAbsError)
	}
}

// writeTensor writes a float TensorProto file.
func writeTensor(t *testing.T, path, name string, dims []int64, vals []float32) {
	t.Helper()
	p := &onnxpb.TensorProto{
		Name:      proto.String(name),
		Dims:      dims,
		DataType:  proto.Int32(int32(onnxpb.TensorProto_FLOAT)),
		FloatData: vals,
	}
	writeProto(t, path, p)
}

func writeProto(t *testing.T, path string, m proto.Message) {
	t.Helper()
	data, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// unaryCase writes a case folder <tmp>/custom/<name> whose model applies
// opType to a float tensor x of shape [2] giving y.
func unaryCase(t *testing.T, name, opType string) string {
	t.Helper()
	return unaryCaseIn(t, name, "", opType)
}

// unaryCaseIn is unaryCase for an operator of domain (imported at
// version 1 when it is not ONNX's).
func unaryCaseIn(t *testing.T, name, domain, opType string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "custom", name)
	vi := func(n string) *onnxpb.ValueInfoProto {
		return &onnxpb.ValueInfoProto{
			Name: proto.String(n),
			Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
				ElemType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)),
				Shape: &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{
					{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 2}},
				}},
			}}},
		}
	}
	m := &onnxpb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}},
		Graph: &onnxpb.GraphProto{
			Name:   proto.String(name),
			Node:   []*onnxpb.NodeProto{{OpType: proto.String(opType), Domain: proto.String(domain), Input: []string{"x"}, Output: []string{"y"}}},
			Input:  []*onnxpb.ValueInfoProto{vi("x")},
			Output: []*onnxpb.ValueInfoProto{vi("y")},
		},
	}
	writeProto(t, filepath.Join(dir, metrics.ModelFile), m)
	writeTensor(t, filepath.Join(dir, "test_data_set_0", "input_0.pb"), "x", []int64{2}, []float32{-1, 2})
	writeTensor(t, filepath.Join(dir, "test_data_set_0", "output_0.pb"), "y", []int64{2}, []float32{0, 2})
	return dir
}

// A case whose operator no schema defines is a bad model: it fails,
// naming the operator, on every backend (skipped is for an operator the
// backend lacks).
func TestUnknownOperatorFails(t *testing.T) {
	dir := unaryCase(t, "test_no_such_op", "NoSuchOp")
	r := runOne(t, dir, "native")
	if r.Status != metrics.Failed {
		t.Fatalf("NoSuchOp: %s (%q), want failed", r.Status, r.Reason)
	}
	if !strings.Contains(r.Reason, "NoSuchOp") || !strings.Contains(r.Reason, "bad model") {
		t.Errorf("reason %q does not say the model is bad and name NoSuchOp", r.Reason)
	}
	if r.Name != "custom/test_no_such_op" {
		t.Errorf("name %q", r.Name)
	}
}

// A custom operator nobody registered, in a domain that is neither ONNX's
// nor this project's, is one the backend lacks: skipped, naming it and how
// to register a kernel. In ai.onnx.ml, a name no schema defines is still a
// bad model.
func TestUnregisteredCustomOperatorIsSkipped(t *testing.T) {
	r := runOne(t, unaryCaseIn(t, "test_custom", "com.example", "MyOp"), "native")
	if r.Status != metrics.Skipped || !strings.Contains(r.Reason, "unsupported") || !strings.Contains(r.Reason, "MyOp") ||
		!strings.Contains(r.Reason, "com.example") || !strings.Contains(r.Reason, "RegisterKernel") {
		t.Errorf("custom MyOp: %s (%q), want skipped as unsupported, naming it and RegisterKernel", r.Status, r.Reason)
	}
	r = runOne(t, unaryCaseIn(t, "test_ml_typo", "ai.onnx.ml", "Scalar"), "native")
	if r.Status != metrics.Failed || !strings.Contains(r.Reason, "bad model") {
		t.Errorf("ai.onnx.ml Scalar: %s (%q), want failed as a bad model", r.Status, r.Reason)
	}
}

// fakeNet is a network whose Inference is a test's function.
type fakeNet struct {
	infer func(map[string]onnx.Value) (map[string]onnx.Value, error)
}

func (f *fakeNet) Inference(feeds map[string]onnx.Value) (map[string]onnx.Value, error) {
	return f.infer(feeds)
}
func (f *fakeNet) InferenceAndBackprop(map[string]onnx.Value, string) (map[string]onnx.Value, error) {
	return nil, network.Unsupportedf("backprop")
}
func (f *fakeNet) Gradients(string) []network.ParamGrad  { return nil }
func (f *fakeNet) Fetch(...string) ([]onnx.Value, error) { return nil, errors.New("fetch") }
func (f *fakeNet) Feed(string, onnx.Value) error         { return errors.New("feed") }
func (f *fakeNet) Params() []string                      { return nil }
func (f *fakeNet) Inputs() []string                      { return []string{"x"} }
func (f *fakeNet) Outputs() []string                     { return []string{"y"} }
func (f *fakeNet) AddOutput(string) error                { return errors.New("add output") }
func (f *fakeNet) Close() error                          { return nil }

// registerFake registers a backend under a test-specific name whose
// networks run infer.
func registerFake(t *testing.T, infer func(map[string]onnx.Value) (map[string]onnx.Value, error)) string {
	name := "fake-" + t.Name()
	backend.Register(backend.Backend{
		Name: name,
		New: func(*onnx.Model, backend.Options) (network.Network, error) {
			return &fakeNet{infer: infer}, nil
		},
	})
	return name
}

func TestPanicIsAFailure(t *testing.T) {
	dir := unaryCase(t, "test_relu_like", "Relu")
	name := registerFake(t, func(map[string]onnx.Value) (map[string]onnx.Value, error) {
		var s []int
		_ = s[3] // an index out of range, as a buggy kernel would
		return nil, nil
	})
	r := runOne(t, dir, name)
	if r.Status != metrics.Failed || !strings.HasPrefix(r.Reason, "panic: ") {
		t.Fatalf("%s %q, want failed with a panic reason", r.Status, r.Reason)
	}
	if testing.Verbose() {
		t.Log(r.Reason)
	}
	if !strings.Contains(r.Reason, "index out of range") || !strings.Contains(r.Reason, "conformance_test.go") {
		t.Errorf("reason %q should give the panic and where it happened", r.Reason)
	}
}

func TestWrongTypeAndMissingOutputFail(t *testing.T) {
	dir := unaryCase(t, "test_relu_like", "Relu")
	double := registerFake(t, func(map[string]onnx.Value) (map[string]onnx.Value, error) {
		return map[string]onnx.Value{"y": onnx.FromSlice([]float64{0, 2}, 2)}, nil
	})
	r := runOne(t, dir, double)
	if r.Status != metrics.Failed || r.Reason != `output "y" (test_data_set_0): data type double, want float` {
		t.Errorf("double output: %s %q", r.Status, r.Reason)
	}
	t.Run("missing", func(t *testing.T) {
		missing := registerFake(t, func(map[string]onnx.Value) (map[string]onnx.Value, error) {
			return map[string]onnx.Value{}, nil
		})
		r := runOne(t, dir, missing)
		if r.Status != metrics.Failed || !strings.Contains(r.Reason, `output "y" (test_data_set_0): missing`) {
			t.Errorf("missing output: %s %q", r.Status, r.Reason)
		}
	})
	t.Run("unsupported at run time", func(t *testing.T) {
		unsup := registerFake(t, func(map[string]onnx.Value) (map[string]onnx.Value, error) {
			return nil, network.Unsupportedf("Relu for float (test)")
		})
		r := runOne(t, dir, unsup)
		if r.Status != metrics.Skipped || !strings.Contains(r.Reason, "Relu for float (test)") {
			t.Errorf("unsupported: %s %q", r.Status, r.Reason)
		}
	})
	t.Run("error", func(t *testing.T) {
		bad := registerFake(t, func(map[string]onnx.Value) (map[string]onnx.Value, error) {
			return nil, errors.New("kernel exploded")
		})
		r := runOne(t, dir, bad)
		if r.Status != metrics.Failed || r.Reason != "test_data_set_0: inference: kernel exploded" {
			t.Errorf("error: %s %q", r.Status, r.Reason)
		}
	})
}

func TestBrokenCasesFailWithReasons(t *testing.T) {
	t.Run("corrupt model", func(t *testing.T) {
		dir := unaryCase(t, "test_corrupt", "Relu")
		if err := os.WriteFile(filepath.Join(dir, metrics.ModelFile), []byte("\xff\xff\xff not protobuf"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runOne(t, dir, "native")
		if r.Status != metrics.Failed || !strings.Contains(r.Reason, "model.onnx") {
			t.Errorf("%s %q, want failed naming model.onnx", r.Status, r.Reason)
		}
	})
	t.Run("truncated output", func(t *testing.T) {
		dir := copyCase(t, "test_relu")
		out := filepath.Join(dir, "test_data_set_0", "output_0.pb")
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, data[:len(data)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		r := runOne(t, dir, "native")
		if r.Status != metrics.Failed || !strings.Contains(r.Reason, "test_data_set_0/output_0.pb") {
			t.Errorf("%s %q, want failed naming the file", r.Status, r.Reason)
		}
	})
	t.Run("no data set", func(t *testing.T) {
		dir := unaryCase(t, "test_no_data", "Relu")
		if err := os.RemoveAll(filepath.Join(dir, "test_data_set_0")); err != nil {
			t.Fatal(err)
		}
		r := runOne(t, dir, "native")
		if r.Status != metrics.Failed || !strings.Contains(r.Reason, "test_data_set") {
			t.Errorf("%s %q", r.Status, r.Reason)
		}
	})
}

func TestFindCases(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"suite/b/model.onnx", "suite/a/model.onnx", "suite/notes/readme.txt", "other/c/model.onnx"} {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := func(cs []metrics.Case) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.Name)
		}
		return strings.Join(s, " ")
	}
	cs, err := metrics.FindCases(filepath.Join(root, "suite"), filepath.Join(root, "other", "c"), filepath.Join(root, "suite", "a"))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(cs); got != "suite/a suite/b other/c" {
		t.Errorf("cases %q", got)
	}
	// A folder of suites is searched one level deeper.
	cs, err = metrics.FindCases(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(cs); got != "other/c suite/a suite/b" {
		t.Errorf("cases %q", got)
	}
	if _, err := metrics.FindCases(filepath.Join(root, "missing")); err == nil {
		t.Error("no error for a missing folder")
	}
	if _, err := metrics.FindCases(filepath.Join(root, "suite", "notes")); err == nil || !strings.Contains(err.Error(), "no test case") {
		t.Errorf("folder without cases: %v", err)
	}
}

func TestRunFilterAndInterrupt(t *testing.T) {
	dir := filepath.Dir(unaryCase(t, "test_one", "NoSuchOp"))
	unaryCase2 := filepath.Join(dir, "test_two")
	if err := os.CopyFS(unaryCase2, os.DirFS(filepath.Join(dir, "test_one"))); err != nil {
		t.Fatal(err)
	}
	cases, err := metrics.FindCases(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := metrics.Run(context.Background(), cases, metrics.Config{Backend: "native", Filter: regexp.MustCompile("two$")})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tests) != 1 || rep.Tests[0].Name != "custom/test_two" || rep.Failed != 1 {
		t.Errorf("filtered run: %+v", rep)
	}
	ctx, cancel := context.WithCancel(context.Background())
	seen := 0
	rep, err = metrics.Run(ctx, cases, metrics.Config{Backend: "native", OnResult: func(metrics.Result) { seen++; cancel() }})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || len(rep.Tests) != 1 || seen != 1 {
		t.Errorf("interrupted run: interrupted=%v, %d results", rep.Interrupted, len(rep.Tests))
	}
	if _, err := metrics.Run(context.Background(), cases, metrics.Config{Backend: "no-such-backend"}); err == nil {
		t.Error("no error for an unknown backend")
	}
}

func TestReportWriters(t *testing.T) {
	rep := metrics.NewReport("native")
	rep.Add(metrics.Result{Name: "node/a", Status: metrics.Passed, MaxAbsError: 1e-7, Seconds: 0.5})
	rep.Add(metrics.Result{Name: "node/b", Status: metrics.Failed, Reason: "it, \"differs\"\nbadly"})
	rep.Add(metrics.Result{Name: "node/c", Status: metrics.Skipped, Reason: "unsupported: operator C"})
	rep.Add(metrics.Result{Name: "node/d"}) // no status: counted as a failure
	if got := rep.Summary(); got != "1 passed, 2 failed, 1 skipped" {
		t.Errorf("summary %q", got)
	}

	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	// The contract's keys, and interrupted; environment only when set.
	if len(doc) != 6 || doc["interrupted"] == nil || doc["environment"] != nil {
		t.Errorf("JSON keys %v, want backend passed failed skipped tests interrupted", keys(doc))
	}
	var tests []map[string]any
	if err := json.Unmarshal(doc["tests"], &tests); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "status", "reason", "max_abs_error", "max_rel_error", "seconds"} {
		if _, ok := tests[0][k]; !ok {
			t.Errorf("test entry lacks %q: %v", k, tests[0])
		}
	}
	if len(tests[0]) != 6 || tests[3]["status"] != "failed" {
		t.Errorf("entries %v", tests)
	}

	buf.Reset()
	if err := rep.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || strings.Join(rows[0], ",") != "name,status,reason,max_abs_error,max_rel_error,seconds" {
		t.Fatalf("CSV %q", rows)
	}
	if rows[2][2] != "it, \"differs\"\nbadly" || rows[1][3] != "1e-07" {
		t.Errorf("CSV rows %q", rows[1:3])
	}

	// Files are replaced whole, and a failing writer leaves the old one.
	path := filepath.Join(t.TempDir(), "sub", "r.json")
	if err := rep.WriteJSONFile(path); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	err = metrics.WriteFile(path, func(w io.Writer) error { io.WriteString(w, "half"); return errors.New("disk full") })
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("WriteFile error %v should name %s", err, path)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("a failed write changed the file")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
