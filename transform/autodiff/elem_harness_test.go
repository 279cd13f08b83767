package autodiff_test

import (
	"math"

	"github.com/deep500/deep500-go/onnx"
)

// Helpers of the element-wise, reduction, softmax and loss rules' tests.

// elemUniform is a float32 tensor of uniform draws in [lo, hi).
func elemUniform(m *model, lo, hi float64, shape ...int) *onnx.Tensor {
	t := onnx.NewTensor(onnx.Float, shape...)
	for i := range t.Float32s() {
		t.Float32s()[i] = float32(lo + (hi-lo)*m.rng.Float64())
	}
	return t
}

// elemAway moves the elements of t closer than eps to one of the points
// (the kinks of the function under test) eps away from it, so that the
// gradient is not taken where the derivative jumps.
func elemAway(t *onnx.Tensor, eps float64, points ...float64) *onnx.Tensor {
	for i := range t.Len() {
		v := getF(t, i)
		for _, p := range points {
			if math.Abs(v-p) < eps {
				if v < p {
					v = p - eps
				} else {
					v = p + eps
				}
			}
		}
		setF(t, i, v)
	}
	return t
}

// elemDouble is t converted to float64.
func elemDouble(t *onnx.Tensor) *onnx.Tensor {
	d := onnx.NewTensor(onnx.Double, t.Shape...)
	for i := range t.Len() {
		setF(d, i, getF(t, i))
	}
	return d
}

// elemToFloat appends y = Cast(v) to float32: the loss the harness
// appends takes float32 targets (the output has no declared type), so a
// float64 computation is checked through a cast at its end.
func elemToFloat(m *model, v, y string) {
	m.node("Cast", []string{v}, []string{y}, intAttr("to", int64(onnx.Float)))
}

// elemFloats is a float32 tensor of the given values and shape.
func elemFloats(vals []float32, shape ...int) *onnx.Tensor {
	return onnx.FromSlice(append([]float32{}, vals...), shape...)
}
