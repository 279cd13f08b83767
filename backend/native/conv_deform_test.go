package native

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// Expected values are worked out by hand from the operator's definition,
// https://onnx.ai/onnx/operators/onnx__DeformConv.html

func TestDeformConvByHand(t *testing.T) {
	x := onnx.FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, 1, 3, 3)
	w := onnx.FromSlice([]float32{1, 2, 3, 4}, 1, 1, 2, 2)
	zero := onnx.NewTensor(onnx.Float, 1, 8, 2, 2)
	got := runNodeOK(t, 22, "DeformConv", nil, 1, x, w, zero)
	floatsClose(t, "zero offsets", got[0].Float32s(), []float64{37, 47, 67, 77}, 0)
	if !slices.Equal(got[0].Shape, []int{1, 1, 2, 2}) {
		t.Errorf("shape %v", got[0].Shape)
	}
	// Every sample moved half a pixel right: halfway between neighbours,
	// half the edge pixel past the right border.
	half := onnx.NewTensor(onnx.Float, 1, 8, 2, 2)
	for kidx := range 4 {
		for p := range 4 {
			half.Float32s()[(kidx*2+1)*4+p] = 0.5
		}
	}
	got = runNodeOK(t, 19, "DeformConv", nil, 1, x, w, half)
	floatsClose(t, "half-pixel offsets", got[0].Float32s(), []float64{42, 34, 72, 55}, 1e-6)
	// Mask 0.5 on kernel position 0, and a bias.
	mask := onnx.NewTensor(onnx.Float, 1, 4, 2, 2)
	for i := range mask.Float32s() {
		mask.Float32s()[i] = 1
		if i < 4 {
			mask.Float32s()[i] = 0.5
		}
	}
	got = runNodeOK(t, 22, "DeformConv", nil, 1, x, w, zero, onnx.FromSlice([]float32{10}, 1), mask)
	floatsClose(t, "mask and bias", got[0].Float32s(), []float64{46.5, 56, 75, 84.5}, 0)

	// Bilinear in both dimensions with a 1x1 kernel.
	x2 := onnx.FromSlice([]float32{1, 2, 3, 4}, 1, 1, 2, 2)
	off := onnx.FromSlice([]float32{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 1, 2, 2, 2)
	got = runNodeOK(t, 22, "DeformConv", nil, 1, x2, onnx.FromSlice([]float32{1}, 1, 1, 1, 1), off)
	floatsClose(t, "bilinear", got[0].Float32s(), []float64{2.5, 1.5, 1.75, 1}, 1e-6)

	// Two groups and two offset groups: channel 0 samples one row down.
	xg := onnx.FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8}, 1, 2, 2, 2)
	wg := onnx.FromSlice([]float32{2, 3}, 2, 1, 1, 1)
	og := onnx.FromSlice([]float32{1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 1, 4, 2, 2)
	got = runNodeOK(t, 22, "DeformConv", []*onnx.Attribute{intAttr("group", 2), intAttr("offset_group", 2)}, 1, xg, wg, og)
	floatsClose(t, "groups", got[0].Float32s(), []float64{6, 8, 0, 0, 15, 18, 21, 24}, 0)

	// One spatial dimension.
	x1 := onnx.FromSlice([]float32{1, 2, 3, 4}, 1, 1, 4)
	o1 := onnx.FromSlice([]float32{0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 1, 2, 3)
	got = runNodeOK(t, 22, "DeformConv", nil, 1, x1, onnx.FromSlice([]float32{1, 1}, 1, 1, 2), o1)
	floatsClose(t, "1-D", got[0].Float32s(), []float64{4, 6, 5.5}, 1e-6)

	// float16 and double.
	xh := &onnx.Tensor{Type: onnx.Float16, Shape: []int{1, 1, 2, 2}, Data: f16Values(1, 2, 3, 4)}
	wh := &onnx.Tensor{Type: onnx.Float16, Shape: []int{1, 1, 1, 1}, Data: f16Values(1)}
	oh := &onnx.Tensor{Type: onnx.Float16, Shape: []int{1, 2, 2, 2}, Data: f16Values(0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5)}
	got = runNodeOK(t, 22, "DeformConv", nil, 1, xh, wh, oh)
	if v := float32Values(got[0]); !slices.Equal(v, []float32{2.5, 1.5, 1.75, 1}) {
		t.Errorf("float16: %v", v)
	}
	xd := onnx.FromSlice([]float64{1, 2, 3, 4}, 1, 1, 2, 2)
	od := onnx.FromSlice([]float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 1, 2, 2, 2)
	got = runNodeOK(t, 22, "DeformConv", nil, 1, xd, onnx.FromSlice([]float64{1}, 1, 1, 1, 1), od)
	if !slices.Equal(got[0].Float64s(), []float64{2.5, 1.5, 1.75, 1}) {
		t.Errorf("double: %v", got[0].Float64s())
	}

	// Bad input.
	if _, err := runNode(t, 22, "DeformConv", nil, 1, x, w, onnx.NewTensor(onnx.Float, 1, 8, 3, 3)); err == nil {
		t.Error("offsets of the wrong spatial size were accepted")
	}
	if _, err := runNode(t, 22, "DeformConv", []*onnx.Attribute{intAttr("offset_group", 2)}, 1, x, w, zero); err == nil {
		t.Error("offset_group not dividing the channels was accepted")
	}
	if _, err := runNode(t, 22, "DeformConv", nil, 1, x, w, zero, nil, onnx.NewTensor(onnx.Float, 1, 3, 2, 2)); err == nil {
		t.Error("a mask of the wrong size was accepted")
	}
}

// With zero offsets and no mask DeformConv is Conv, whatever the pads,
// strides, dilations and groups.
func TestDeformConvZeroOffsetsIsConv(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, c := range []struct {
		x, w                   []int
		group, og              int64
		pads, strides, dilates []int64
	}{
		{[]int{2, 4, 7, 6}, []int{6, 2, 3, 3}, 2, 2, []int64{1, 0, 2, 1}, []int64{2, 1}, []int64{1, 2}},
		{[]int{1, 3, 5, 5}, []int{4, 3, 2, 2}, 1, 3, []int64{1, 1, 1, 1}, []int64{1, 1}, []int64{2, 2}},
		{[]int{1, 4, 6, 6}, []int{4, 1, 3, 3}, 4, 1, nil, nil, nil},
		{[]int{2, 8, 40, 40}, []int{8, 1, 3, 3}, 8, 4, []int64{1, 1, 1, 1}, nil, nil},
		{[]int{1, 16, 24, 24}, []int{32, 16, 3, 3}, 1, 2, []int64{1, 1, 1, 1}, nil, nil},
		{[]int{1, 2, 3, 4, 4}, []int{3, 2, 2, 2, 2}, 1, 1, []int64{0, 1, 1, 1, 0, 0}, nil, nil},
	} {
		x := convRandTensor(r, c.x...)
		w := convRandTensor(r, c.w...)
		b := convRandTensor(r, c.w[0])
		attrs := []*onnx.Attribute{intAttr("group", c.group)}
		if c.pads != nil {
			attrs = append(attrs, intsAttr("pads", c.pads...))
		}
		if c.strides != nil {
			attrs = append(attrs, intsAttr("strides", c.strides...))
		}
		if c.dilates != nil {
			attrs = append(attrs, intsAttr("dilations", c.dilates...))
		}
		want := runNodeOK(t, 22, "Conv", attrs, 1, x, w, b)[0]
		ks := 1
		for _, k := range c.w[2:] {
			ks *= k
		}
		offShape := append([]int{c.x[0], int(c.og) * ks * (len(c.x) - 2)}, want.Shape[2:]...)
		got := runNodeOK(t, 22, "DeformConv", append(attrs, intAttr("offset_group", c.og)), 1, x, w, onnx.NewTensor(onnx.Float, offShape...), b)
		if !slices.Equal(got[0].Shape, want.Shape) {
			t.Fatalf("%v: shape %v, want %v", c, got[0].Shape, want.Shape)
		}
		wantF := make([]float64, want.Len())
		for i, v := range want.Float32s() {
			wantF[i] = float64(v)
		}
		floatsClose(t, "deform vs conv", got[0].Float32s(), wantF, 1e-4)
	}
}
