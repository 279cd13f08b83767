package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/onnx"
)

func floatInput(name string, dims ...onnx.Dim) *onnx.ValueInfo {
	return &onnx.ValueInfo{Name: name, Type: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Float, Shape: dims, HasShape: true}}
}

// The batch dimension is the symbolic one, wherever it sits and in every
// input that names it; fixed dimensions stay.
func TestBatchFeedsSetsTheBatchDimension(t *testing.T) {
	n := onnx.Dim{Size: -1, Param: "N"}
	g := &onnx.Graph{Inputs: []*onnx.ValueInfo{
		floatInput("x", n, onnx.Dim{Size: 3}, onnx.Dim{Size: 4}),
		floatInput("h", onnx.Dim{Size: 2}, n, onnx.Dim{Size: 5}), // a recurrent state: [layers, N, hidden]
	}}
	feeds, err := batchFeeds(g, []string{"x", "h"}, 8, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]int{"x": {8, 3, 4}, "h": {2, 8, 5}} {
		if got := feeds[name].(*onnx.Tensor).Shape; !slices.Equal(got, want) {
			t.Errorf("%s: shape %v, want %v", name, got, want)
		}
	}
	// The graph's declaration is left symbolic.
	if g.Inputs[0].Type.Shape[0] != n {
		t.Errorf("declared shape changed to %v", g.Inputs[0].Type.Shape)
	}
	// The same seed gives the same inputs.
	again, _ := batchFeeds(g, []string{"x", "h"}, 8, 1, nil)
	if !slices.Equal(again["x"].(*onnx.Tensor).Float32s(), feeds["x"].(*onnx.Tensor).Float32s()) {
		t.Error("the same seed gave other inputs")
	}
}

// A second symbolic dimension has no size bench could choose.
func TestBatchFeedsRejectsAnotherSymbolicDimension(t *testing.T) {
	g := &onnx.Graph{Inputs: []*onnx.ValueInfo{floatInput("x", onnx.Dim{Size: -1, Param: "N"}, onnx.Dim{Size: -1, Param: "T"})}}
	_, err := batchFeeds(g, []string{"x"}, 1, 1, nil)
	if err == nil || !strings.Contains(err.Error(), `"T"`) {
		t.Fatalf("error %v, want one naming dimension T", err)
	}
}

func TestParsePositiveInts(t *testing.T) {
	if got, err := parsePositiveInts("--batch", "1, 8,16"); err != nil || !slices.Equal(got, []int{1, 8, 16}) {
		t.Errorf("1, 8,16: %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "-2", "1,,2", "x", "1.5"} {
		if _, err := parsePositiveInts("--batch", bad); err == nil || !strings.Contains(err.Error(), "--batch") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

// A bench row carries its runs, the 95% interval of each median and the
// coefficient of variation, in the JSON and in the Markdown table; the
// report carries the environment.
func TestBenchRowStatistics(t *testing.T) {
	dir := t.TempDir()
	jsonPath, mdPath := filepath.Join(dir, "bench.json"), filepath.Join(dir, "bench.md")
	stdout, stderr, code := d500(t, "bench", "--models", "lenet", "--batch", "1", "--threads", "1", "--runs", "6", "--warmup", "1",
		"--alloc-runs", "1", "--compare", "", "--json", jsonPath, "--md", mdPath)
	if code != 0 {
		t.Fatalf("d500 bench: exit %d\n%s%s", code, stdout, stderr)
	}
	var rep metrics.BenchReport
	readJSONFile(t, jsonPath, &rep)
	if len(rep.Rows) != 1 || rep.Rows[0].Backend == nil {
		t.Fatalf("rows %+v", rep.Rows)
	}
	q := rep.Rows[0].Backend
	if len(q.Samples) != 6 || !(q.Min <= q.MedianCI95[0] && q.MedianCI95[0] <= q.Median && q.Median <= q.MedianCI95[1] && q.MedianCI95[1] <= q.Max) || q.CV <= 0 {
		t.Fatalf("row's latency %+v", q)
	}
	if st, err := metrics.SummarizeTimings(q.Samples); err != nil || st.Median != q.Median || st.MedianCI95 != q.MedianCI95 || st.CV != q.CV {
		t.Fatalf("the row's figures are not its samples' (%+v, %v)", st, err)
	}
	if rep.Environment.GoVersion == "" || rep.Environment.Threads != runtime.GOMAXPROCS(0) {
		t.Fatalf("environment %+v", rep.Environment)
	}
	if !strings.Contains(stdout, fmt.Sprintf("native median %.3f ms (95%% CI %.3f–%.3f, p10–p90 ", q.Median, q.MedianCI95[0], q.MedianCI95[1])) {
		t.Errorf("row line:\n%s", stdout)
	}
	md, err := os.ReadFile(mdPath)
	if err != nil {
		t.Fatal(err)
	}
	cells := fmt.Sprintf("| lenet | 1 | 1 | 6 | %.3f [%.3f, %.3f] | %.3f–%.3f (%.1f%%) |", q.Median, q.MedianCI95[0], q.MedianCI95[1], q.P10, q.P90, 100*q.CV)
	if !strings.Contains(string(md), cells) || !strings.Contains(string(md), "| native median | native p10–p90 (CV) |") {
		t.Errorf("markdown lacks %q:\n%s", cells, md)
	}
}
