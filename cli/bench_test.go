package cli

import (
	"slices"
	"strings"
	"testing"

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
