package autodiff_test

import (
	"math"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/transform/autodiff"
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

// elemCheckBatches is checkGradients with the batch dimension (dim 0 of
// every graph input) left free: build makes the model at batch sizes 2 and
// 3 (the parameters of the first are kept), the model is probed with both
// feed sets, and the training graph's gradients are compared with the
// native backend's own on both.
func elemCheckBatches(t *testing.T, opset int64, build func(m *model, batch int), output string) {
	t.Helper()
	m := newModel(t, opset)
	build(m, 2)
	m3 := newModel(t, opset)
	m3.rng = m.rng
	build(m3, 3)
	mm := m.build(output)
	for _, in := range mm.Graph.Inputs {
		in.Type.Shape[0] = onnx.Dim{Size: -1, Param: "N"}
	}
	feeds := []map[string]onnx.Value{elemWithTarget(t, m, mm, m.feeds, output), elemWithTarget(t, m, mm, m3.feeds, output)}
	loss, err := network.AppendLoss(mm, network.LossMeanSquaredError, output, "target")
	if err != nil {
		t.Fatal(err)
	}
	res, err := elemTrainingGraph(t, mm, loss, feeds...)
	if err != nil {
		t.Fatal(err)
	}
	tn, err := nativeNet(res.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer tn.Close()
	for k, fs := range feeds {
		ref, err := nativeNet(mm)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ref.InferenceAndBackprop(fs, loss); err != nil {
			t.Fatal(err)
		}
		got, err := tn.Inference(fs)
		if err != nil {
			t.Fatal(err)
		}
		for _, pg := range res.Grads {
			want, err := network.FetchTensor(ref, network.GradName(pg.Param))
			if err != nil {
				t.Fatal(err)
			}
			g, ok := got[pg.Grad].(*onnx.Tensor)
			if !ok {
				t.Fatalf("%s: no gradient output", pg.Grad)
			}
			if err := closeTo(g, want, 1e-4); err != nil {
				t.Errorf("feed set %d: gradient of %s: %v", k, pg.Param, err)
			}
		}
		ref.Close()
	}
}

// elemExpectFail checks that building the training graph of the model
// fails with an error that mentions want.
func elemExpectFail(t *testing.T, m *model, output, want string) {
	t.Helper()
	mm := m.build(output)
	feeds := elemWithTarget(t, m, mm, m.feeds, output)
	loss, err := network.AppendLoss(mm, network.LossMeanSquaredError, output, "target")
	if err != nil {
		t.Fatal(err)
	}
	_, err = elemTrainingGraph(t, mm, loss, feeds)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got error %v, want one that mentions %q", err, want)
	}
}

// elemTrainingGraph lowers and probes mm (with every feed set) and builds
// its training graph for loss with respect to every floating-point input
// and initializer.
func elemTrainingGraph(t *testing.T, mm *onnx.Model, loss string, feeds ...map[string]onnx.Value) (*autodiff.Result, error) {
	t.Helper()
	var wrt []string
	for _, in := range mm.Graph.Inputs {
		if in.Type.Elem.IsFloat() {
			wrt = append(wrt, in.Name)
		}
	}
	for _, in := range mm.Graph.Initializers {
		if in.Tensor.Type.IsFloat() {
			wrt = append(wrt, in.Name)
		}
	}
	low, err := autodiff.Lower(mm)
	if err != nil {
		t.Fatal(err)
	}
	info, err := autodiff.Probe(nativeNet, low, feeds...)
	if err != nil {
		t.Fatal(err)
	}
	return autodiff.Gradients(low, autodiff.Options{Loss: loss, WRT: wrt, Info: info})
}

// elemWithTarget returns feeds plus a random "target" shaped like output.
func elemWithTarget(t *testing.T, m *model, mm *onnx.Model, feeds map[string]onnx.Value, output string) map[string]onnx.Value {
	t.Helper()
	net, err := nativeNet(mm)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := net.Inference(feeds)
	net.Close()
	if err != nil {
		t.Fatal(err)
	}
	y := outs[output].(*onnx.Tensor)
	out := map[string]onnx.Value{}
	for k, v := range feeds {
		out[k] = v
	}
	target := onnx.NewTensor(y.Type, y.Shape...)
	for i := range y.Len() {
		setF(target, i, m.rng.NormFloat64())
	}
	out["target"] = target
	return out
}
