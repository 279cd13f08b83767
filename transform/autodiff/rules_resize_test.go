package autodiff_test

import (
	"fmt"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func resizeF32(vals ...float32) *onnx.Tensor { return onnx.FromSlice(vals, len(vals)) }

func TestResizeGradients(t *testing.T) {
	type input struct {
		roi, scales *onnx.Tensor
		sizes       []int64
	}
	for _, c := range []struct {
		name  string
		op    string
		opset int64
		x     []int
		in    input
		attrs []*onnx.Attribute
	}{
		{"Upsample-7 nearest", "Upsample", 8, []int{1, 2, 2, 3}, input{}, []*onnx.Attribute{
			{Name: "scales", Type: onnx.AttrFloats, Floats: []float32{1, 1, 2, 3}}}},
		{"Upsample-7 linear", "Upsample", 8, []int{1, 2, 2, 3}, input{}, []*onnx.Attribute{strAttr("mode", "linear"),
			{Name: "scales", Type: onnx.AttrFloats, Floats: []float32{1, 1, 2, 1.5}}}},
		{"Upsample-9 linear", "Upsample", 9, []int{2, 1, 3, 2}, input{scales: resizeF32(1, 1, 2, 2)}, []*onnx.Attribute{strAttr("mode", "linear")}},
		{"Resize-10 nearest down", "Resize", 10, []int{1, 2, 4, 6}, input{scales: resizeF32(1, 1, 0.5, 0.7)}, nil},
		{"Resize-10 linear", "Resize", 10, []int{1, 2, 3, 4}, input{scales: resizeF32(1, 1, 1.7, 0.6)}, []*onnx.Attribute{strAttr("mode", "linear")}},
		{"Resize-11 linear align_corners sizes", "Resize", 11, []int{1, 2, 3, 4}, input{roi: resizeF32(), scales: resizeF32(), sizes: []int64{1, 2, 5, 3}},
			[]*onnx.Attribute{strAttr("mode", "linear"), strAttr("coordinate_transformation_mode", "align_corners")}},
		{"Resize-11 cubic", "Resize", 11, []int{1, 1, 4, 5}, input{roi: resizeF32(), scales: resizeF32(1, 1, 1.5, 2)},
			[]*onnx.Attribute{strAttr("mode", "cubic")}},
		{"Resize-11 nearest asymmetric ceil", "Resize", 11, []int{1, 2, 3, 4}, input{roi: resizeF32(), scales: resizeF32(1, 1, 2.5, 1.5)},
			[]*onnx.Attribute{strAttr("coordinate_transformation_mode", "asymmetric"), strAttr("nearest_mode", "round_prefer_ceil")}},
		{"Resize-11 tf_crop_and_resize", "Resize", 11, []int{1, 2, 4, 5}, input{roi: resizeF32(0, 0, 0.2, -0.1, 1, 1, 0.9, 1.2), scales: resizeF32(), sizes: []int64{1, 2, 3, 6}},
			[]*onnx.Attribute{strAttr("mode", "linear"), strAttr("coordinate_transformation_mode", "tf_crop_and_resize"), floatAttr("extrapolation_value", 2)}},
		{"Resize-13 linear scales", "Resize", 13, []int{2, 2, 3, 4}, input{scales: resizeF32(1, 1, 1.5, 0.7)},
			[]*onnx.Attribute{strAttr("mode", "linear")}},
		{"Resize-13 pytorch_half_pixel", "Resize", 13, []int{1, 2, 3, 4}, input{sizes: []int64{1, 2, 1, 7}},
			[]*onnx.Attribute{strAttr("mode", "linear"), strAttr("coordinate_transformation_mode", "pytorch_half_pixel")}},
		{"Resize-13 nearest floor 5-D", "Resize", 13, []int{1, 2, 3, 2, 3}, input{scales: resizeF32(1, 1, 2, 1.5, 0.7)},
			[]*onnx.Attribute{strAttr("nearest_mode", "floor")}},
		{"Resize-13 cubic exclude_outside", "Resize", 13, []int{1, 1, 5, 4}, input{scales: resizeF32(1, 1, 0.6, 1.75)},
			[]*onnx.Attribute{strAttr("mode", "cubic"), intAttr("exclude_outside", 1), floatAttr("cubic_coeff_a", -0.5)}},
		{"Resize-18 axes sizes", "Resize", 18, []int{1, 2, 3, 4}, input{sizes: []int64{6, 2}},
			[]*onnx.Attribute{strAttr("mode", "linear"), ints("axes", 3, -2)}},
		{"Resize-18 antialias", "Resize", 18, []int{1, 1, 6, 8}, input{scales: resizeF32(1, 1, 0.5, 0.4)},
			[]*onnx.Attribute{strAttr("mode", "linear"), intAttr("antialias", 1)}},
		{"Resize-19 half_pixel_symmetric", "Resize", 19, []int{1, 2, 3, 4}, input{scales: resizeF32(1, 1, 1.4, 2.2)},
			[]*onnx.Attribute{strAttr("mode", "linear"), strAttr("coordinate_transformation_mode", "half_pixel_symmetric")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, c.opset)
			m.input("x", m.randn(c.x...))
			ins := []string{"x"}
			add := func(name string, v *onnx.Tensor) {
				if v == nil {
					ins = append(ins, "")
					return
				}
				m.shapeConst(name, v)
				ins = append(ins, name)
			}
			switch {
			case c.op == "Upsample" && c.opset < 9:
			case c.op == "Upsample" || c.opset < 11:
				add("scales", c.in.scales)
			default:
				add("roi", c.in.roi)
				add("scales", c.in.scales)
				if c.in.sizes != nil {
					add("sizes", shapeI64(c.in.sizes))
				}
			}
			for len(ins) > 1 && ins[len(ins)-1] == "" {
				ins = ins[:len(ins)-1]
			}
			m.node(c.op, ins, []string{"y"}, c.attrs...)
			checkGradients(t, m, "y")
		})
	}
}

func TestResizeGradientsFreeBatch(t *testing.T) {
	for _, opset := range []int64{11, 13} {
		t.Run(fmt.Sprint("opset ", opset), func(t *testing.T) {
			checkBatches(t, opset, func(m *model, n int) {
				m.input("x", m.randn(n, 2, 3, 4))
				m.param("roi", resizeF32())
				m.param("scales", resizeF32(1, 1, 2, 1.5))
				m.node("Resize", []string{"x", "roi", "scales"}, []string{"y"}, strAttr("mode", "linear"))
			}, "y")
		})
	}
}
