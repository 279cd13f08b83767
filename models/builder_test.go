package models_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/onnx"
)

func TestBuilderNamesAndShapes(t *testing.T) {
	b := models.NewBuilder("t", 0)
	x := b.Input("x", onnx.Float, -1, 3, 8, 8)
	h := b.Conv(x, 4, 3, 2, 1)
	if got := h.Shape(); len(got) != 4 || got[0] != -1 || got[1] != 4 || got[2] != 4 || got[3] != 4 {
		t.Fatalf("conv shape %v, want [-1 4 4 4]", got)
	}
	h2 := b.Relu(b.BatchNorm(h))
	y := b.Output(b.Add(h2, h), "y")
	b.Output(x, "x_copy") // a graph input is copied through Identity
	if y.Name() != "y" {
		t.Fatalf("output named %q", y.Name())
	}
	// A value held before the rename still resolves.
	b.Output(b.GlobalAveragePool(y), "pooled")
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	if m.Opset("") != models.DefaultOpset || m.Graph.Inputs[0].Type.Shape[0].Param != "N" {
		t.Fatalf("opset %d, input %v", m.Opset(""), m.Graph.Inputs[0].Type)
	}
	seen := map[string]bool{}
	for _, n := range m.Graph.Nodes {
		if n.Op == nil || n.Graph != m.Graph {
			t.Errorf("node %v: untyped or not in the graph", n)
		}
		for _, name := range append([]string{n.Name}, n.Outputs...) {
			if seen[name] && name != n.Name {
				t.Errorf("name %q used twice", name)
			}
			seen[name] = true
		}
	}
	if got := m.Graph.OutputNames(); strings.Join(got, ",") != "y,x_copy,pooled" {
		t.Fatalf("outputs %v", got)
	}
}

func TestBuilderErrors(t *testing.T) {
	b := models.NewBuilder("bad", 0)
	x := b.Input("x", onnx.Float, -1, 10)
	h := b.Conv(x, 4, 3, 1, 0) // rank 2: not an image
	b.Output(b.Relu(h), "y")
	if _, err := b.Model(); err == nil || !strings.Contains(err.Error(), "Conv") {
		t.Fatalf("err = %v, want the Conv shape error", err)
	}
	b = models.NewBuilder("mismatch", 0)
	x = b.Input("x", onnx.Float, -1, 10)
	b.Output(b.Add(b.Dense(x, 3), b.Dense(x, 4)), "y")
	if _, err := b.Model(); err == nil || !strings.Contains(err.Error(), "Add") {
		t.Fatalf("err = %v, want the Add shape error", err)
	}
	if _, err := models.Preset("vgg", 1); err == nil || !strings.Contains(err.Error(), "resnet20") {
		t.Fatalf("err = %v, want an unknown-preset error listing the presets", err)
	}
}

func TestBatchNormTraining(t *testing.T) {
	b := models.NewBuilder("bn", 0)
	b.BatchNormTraining = true
	x := b.Input("x", onnx.Float, -1, 2, 4, 4)
	b.Output(b.BatchNorm(x), "y")
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	if a := m.Graph.Nodes[0].Attr("training_mode"); a == nil || a.Int != 1 {
		t.Fatalf("training_mode = %v", a)
	}
}

func TestBuilderLayerShapes(t *testing.T) {
	b := models.NewBuilder("shapes", 0)
	x := b.Input("x", onnx.Float, -1, 8, 111, 111)
	if got := b.MaxPoolCeil(x, 3, 2, 0).Shape(); !slices.Equal(got, []int64{-1, 8, 55, 55}) {
		t.Errorf("MaxPoolCeil 3/2 of 111: %v, want [-1 8 55 55]", got)
	}
	if got := b.MaxPoolCeil(b.Input("x5", onnx.Float, -1, 1, 5, 5), 2, 2, 1).Shape(); !slices.Equal(got, []int64{-1, 1, 3, 3}) {
		// ceil((5+2-2)/2)+1 = 4, but the 4th window would start at 5,
		// in the right padding: 3.
		t.Errorf("MaxPoolCeil 2/2 pad 1 of 5: %v, want [-1 1 3 3]", got)
	}
	parts := b.Split(x, 1, 2)
	if len(parts) != 2 || !slices.Equal(parts[1].Shape(), []int64{-1, 4, 111, 111}) {
		t.Fatalf("Split: %v", parts)
	}
	if got := b.Concat(1, parts[1], x).Shape(); !slices.Equal(got, []int64{-1, 12, 111, 111}) {
		t.Errorf("Concat: %v", got)
	}
	if got := b.ChannelShuffle(x, 2).Shape(); !slices.Equal(got, []int64{-1, 8, 111, 111}) {
		t.Errorf("ChannelShuffle: %v", got)
	}
	if got := b.Mul(b.GlobalAveragePool(x), x).Shape(); !slices.Equal(got, []int64{-1, 8, 111, 111}) {
		t.Errorf("Mul [N,C,1,1]·[N,C,H,W]: %v", got)
	}
	s := b.Input("s", onnx.Float, -1, 5, 12)
	if got := b.MatMul(b.Transpose(b.Reshape(s, 0, 5, 3, 4), 0, 2, 1, 3), b.Transpose(b.Reshape(s, 0, 5, 3, 4), 0, 2, 3, 1)).Shape(); !slices.Equal(got, []int64{-1, 3, 5, 5}) {
		t.Errorf("attention scores: %v, want [-1 3 5 5]", got)
	}
	if got := b.Gather(b.Linear(s, 7), 1, 4).Shape(); !slices.Equal(got, []int64{-1, 7}) {
		t.Errorf("Gather of Linear: %v", got)
	}
	seq := b.Transpose(s, 1, 0, 2)
	if got := b.GRU(b.Squeeze(b.LSTM(seq, 6, false), 1), 3, true).Shape(); !slices.Equal(got, []int64{5, 2, -1, 3}) {
		t.Errorf("GRU after LSTM: %v, want [5 2 -1 3]", got)
	}
	b.Output(parts[1], "second_half") // a Split's second output renamed
	b.Output(b.ReduceMean(b.LayerNorm(s), 1), "y")
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Graph.OutputNames(); strings.Join(got, ",") != "second_half,y" {
		t.Fatalf("outputs %v", got)
	}
	for i, bad := range []func(b *models.Builder, x models.Value){
		func(b *models.Builder, x models.Value) { b.Reshape(x, 0, 5, 5) },
		func(b *models.Builder, x models.Value) { b.Concat(2, x, b.Transpose(x, 0, 2, 1)) },
		func(b *models.Builder, x models.Value) { b.Split(x, 1, 2) },
		func(b *models.Builder, x models.Value) { b.Transpose(x, 0, 1, 1) },
		func(b *models.Builder, x models.Value) { b.Mul(x, b.Transpose(x, 0, 2, 1)) },
		func(b *models.Builder, x models.Value) { b.MatMul(x, x) },
		func(b *models.Builder, x models.Value) { b.LSTM(x, 4, false) }, // batch first: T unknown
	} {
		b := models.NewBuilder("bad", 0)
		bad(b, b.Input("x", onnx.Float, -1, 5, 12))
		if _, err := b.Model(); err == nil {
			t.Errorf("bad layer %d accepted", i)
		}
	}
}
