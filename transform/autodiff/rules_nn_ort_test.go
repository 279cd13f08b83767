package autodiff_test

import (
	"os"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/backend/onnxruntime"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// nnOrtNet builds an ONNX Runtime network of m. A missing library fails
// the test, as in backend/onnxruntime's: make setup installs it.
func nnOrtNet(t *testing.T, m *onnx.Model) network.Network {
	t.Helper()
	opts := backend.Options{Threads: 1}
	if _, err := os.Stat(onnxruntime.LibraryPath(opts)); err != nil {
		t.Fatalf("no ONNX Runtime library (make onnxruntime installs it): %v", err)
	}
	net, err := backend.New("onnxruntime", m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return net
}

// nnCheckOrt builds the training graph of the model's output under an
// MSE loss and runs it on ONNX Runtime and on the native backend: the
// gradients must agree (the native backend's are those checkGradients
// compares with its own backprop).
func nnCheckOrt(t *testing.T, m *model, output string) {
	t.Helper()
	mm := m.build(output)
	feeds := withTarget(t, m, mm, m.feeds, output)
	loss, err := network.AppendLoss(mm, network.LossMeanSquaredError, output, "target")
	if err != nil {
		t.Fatal(err)
	}
	res, err := trainingGraph(t, mm, loss, feeds)
	if err != nil {
		t.Fatal(err)
	}
	nn, err := nativeNet(res.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer nn.Close()
	want, err := nn.Inference(feeds)
	if err != nil {
		t.Fatal(err)
	}
	on := nnOrtNet(t, res.Model)
	defer on.Close()
	got, err := on.Inference(feeds)
	if err != nil {
		t.Fatal(err)
	}
	for _, pg := range res.Grads {
		g, ok := got[pg.Grad].(*onnx.Tensor)
		if !ok {
			t.Fatalf("ONNX Runtime gives no %s", pg.Grad)
		}
		if err := closeTo(g, want[pg.Grad].(*onnx.Tensor), 1e-4); err != nil {
			t.Errorf("gradient of %s: %v", pg.Param, err)
		}
	}
}

func TestNNGradientsOnnxRuntime(t *testing.T) {
	cases := []struct {
		name  string
		opset int64
		build func(m *model)
	}{
		{"Conv group strides dilations", 17, func(m *model) {
			m.input("x", m.randn(2, 4, 9, 8))
			m.param("w", m.randn(6, 2, 3, 3))
			m.param("b", m.randn(6))
			m.node("Conv", []string{"x", "w", "b"}, []string{"y"}, intAttr("group", 2), ints("strides", 2, 3), ints("dilations", 2, 1), ints("pads", 1, 0, 2, 1))
		}},
		{"Conv depthwise same", 13, func(m *model) {
			m.input("x", m.randn(2, 3, 7, 6))
			m.param("w", m.randn(3, 1, 3, 3))
			m.node("Conv", []string{"x", "w"}, []string{"y"}, intAttr("group", 3), ints("strides", 2, 2), strAttr("auto_pad", "SAME_UPPER"))
		}},
		{"Conv 1d", 11, func(m *model) {
			m.input("x", m.randn(2, 3, 11))
			m.param("w", m.randn(4, 3, 3))
			m.node("Conv", []string{"x", "w"}, []string{"y"}, ints("strides", 2), ints("pads", 1, 2))
		}},
		{"Conv 3d", 17, func(m *model) {
			m.input("x", m.randn(1, 2, 5, 4, 6))
			m.param("w", m.randn(3, 2, 2, 3, 2))
			m.node("Conv", []string{"x", "w"}, []string{"y"}, ints("strides", 2, 1, 2), ints("pads", 1, 0, 1, 0, 1, 1))
		}},
		{"ConvTranspose output_padding group", 17, func(m *model) {
			m.input("x", m.randn(2, 4, 3, 4))
			m.param("w", m.randn(4, 3, 3, 3))
			m.param("b", m.randn(6))
			m.node("ConvTranspose", []string{"x", "w", "b"}, []string{"y"}, intAttr("group", 2), ints("strides", 2, 3), ints("pads", 1, 1, 0, 0), ints("output_padding", 1, 2))
		}},
		{"ConvTranspose output_shape", 17, func(m *model) {
			m.input("x", m.randn(2, 3, 4, 4))
			m.param("w", m.randn(3, 2, 3, 3))
			m.node("ConvTranspose", []string{"x", "w"}, []string{"y"}, ints("strides", 2, 2), ints("output_shape", 9, 8))
		}},
		{"MaxPool overlapping", 17, func(m *model) {
			m.input("x", m.randn(2, 3, 7, 6))
			m.node("MaxPool", []string{"x"}, []string{"y"}, ints("kernel_shape", 3, 3), ints("strides", 2, 1), ints("pads", 1, 1, 1, 1), intAttr("ceil_mode", 1))
		}},
		{"MaxPool column-major", 17, func(m *model) {
			m.input("x", m.randn(2, 2, 5, 4))
			m.node("MaxPool", []string{"x"}, []string{"y", "i"}, ints("kernel_shape", 2, 2), intAttr("storage_order", 1))
		}},
		{"MaxPool opset 11", 11, func(m *model) {
			m.input("x", m.randn(2, 2, 6, 4))
			m.node("MaxPool", []string{"x"}, []string{"y"}, ints("kernel_shape", 2, 2), ints("strides", 2, 2))
		}},
		{"AveragePool ceil count_include_pad", 17, func(m *model) {
			m.input("x", m.randn(2, 2, 7, 6))
			m.node("AveragePool", []string{"x"}, []string{"y"}, ints("kernel_shape", 3, 2), ints("strides", 2, 2), ints("pads", 1, 0, 1, 0), intAttr("ceil_mode", 1), intAttr("count_include_pad", 1))
		}},
		{"AveragePool pads", 11, func(m *model) {
			m.input("x", m.randn(2, 2, 5, 6))
			m.node("AveragePool", []string{"x"}, []string{"y"}, ints("kernel_shape", 3, 3), ints("pads", 1, 1, 1, 1))
		}},
		{"LpPool", 17, func(m *model) {
			m.input("x", m.randn(2, 2, 5, 6))
			m.node("LpPool", []string{"x"}, []string{"y"}, ints("kernel_shape", 2, 2), ints("strides", 2, 2), intAttr("p", 3))
		}},
		{"GlobalMaxPool", 17, func(m *model) {
			m.input("x", m.randn(2, 3, 4, 5))
			m.node("GlobalMaxPool", []string{"x"}, []string{"y"})
		}},
		{"GlobalAveragePool", 17, func(m *model) {
			m.input("x", m.randn(2, 3, 4, 5))
			m.node("GlobalAveragePool", []string{"x"}, []string{"y"})
		}},
		{"GlobalLpPool", 17, func(m *model) {
			m.input("x", m.randn(2, 3, 4, 5))
			m.node("GlobalLpPool", []string{"x"}, []string{"y"})
		}},
		{"BatchNormalization inference", 15, func(m *model) {
			m.input("x", m.randn(3, 3, 4, 5))
			m.node("BatchNormalization", bnParams(m, 3), []string{"y"})
		}},
		{"BatchNormalization training", 15, func(m *model) {
			m.input("x", m.randn(3, 3, 4, 5))
			m.node("BatchNormalization", bnParams(m, 3), []string{"y", "rm", "rv"}, intAttr("training_mode", 1))
		}},
		{"InstanceNormalization", 17, func(m *model) {
			m.input("x", m.randn(2, 3, 4, 5))
			m.param("scale", m.randn(3))
			m.param("bias", m.randn(3))
			m.node("InstanceNormalization", []string{"x", "scale", "bias"}, []string{"y"})
		}},
		{"LayerNormalization", 17, func(m *model) {
			m.input("x", m.randn(2, 3, 4, 5))
			m.param("scale", m.randn(4, 5))
			m.param("bias", m.randn(4, 5))
			m.node("LayerNormalization", []string{"x", "scale", "bias"}, []string{"y"}, intAttr("axis", 2))
		}},
		{"GroupNormalization", 21, func(m *model) {
			m.input("x", m.randn(2, 6, 3, 4))
			m.param("scale", m.randn(6))
			m.param("bias", m.randn(6))
			m.node("GroupNormalization", []string{"x", "scale", "bias"}, []string{"y"}, intAttr("num_groups", 3))
		}},
		{"LRN", 13, func(m *model) {
			m.input("x", m.randn(2, 5, 3, 3))
			m.node("LRN", []string{"x"}, []string{"y"}, intAttr("size", 3), floatAttr("alpha", 0.5))
		}},
		{"MeanVarianceNormalization", 13, func(m *model) {
			m.input("x", m.randn(2, 3, 4, 5))
			m.node("MeanVarianceNormalization", []string{"x"}, []string{"y"})
		}},
		{"LpNormalization", 17, func(m *model) {
			m.input("x", m.randn(3, 4, 5))
			m.node("LpNormalization", []string{"x"}, []string{"y"}, intAttr("p", 1), intAttr("axis", 1))
		}},
		{"Dropout inference", 13, func(m *model) {
			m.input("x", m.randn(3, 4))
			m.constant("ratio", onnx.Scalar(float32(0.5)))
			m.node("Dropout", []string{"x", "ratio"}, []string{"y"})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, c.opset)
			c.build(m)
			nnCheckOrt(t, m, "y")
		})
	}
}

// TestDropoutGradientsOnnxRuntime: ONNX Runtime draws its own mask; the
// gradient must follow it.
func TestDropoutGradientsOnnxRuntime(t *testing.T) {
	nnCheckDropoutMask(t, func(m *onnx.Model) network.Network { return nnOrtNet(t, m) })
}

// TestNNGradientsOnnxRuntimeFreeBatch: a training graph whose batch is
// read at run time, on ONNX Runtime at two batch sizes.
func TestNNGradientsOnnxRuntimeFreeBatch(t *testing.T) {
	build := func(m *model, batch int) {
		m.input("x", m.randn(batch, 3, 6, 6))
		m.param("w", m.randn(4, 3, 3, 3))
		m.param("scale", m.randn(4))
		m.param("bias", m.randn(4))
		m.node("Conv", []string{"x", "w"}, []string{"c"}, ints("pads", 1, 1, 1, 1))
		m.node("InstanceNormalization", []string{"c", "scale", "bias"}, []string{"n"})
		m.node("MaxPool", []string{"n"}, []string{"y"}, ints("kernel_shape", 3, 3), ints("strides", 2, 2))
	}
	m := newModel(t, 17)
	build(m, 2)
	m3 := newModel(t, 17)
	m3.rng = m.rng
	build(m3, 3)
	mm := m.build("y")
	for _, in := range mm.Graph.Inputs {
		in.Type.Shape[0] = onnx.Dim{Size: -1, Param: "N"}
	}
	feeds := []map[string]onnx.Value{withTarget(t, m, mm, m.feeds, "y"), withTarget(t, m, mm, m3.feeds, "y")}
	loss, err := network.AppendLoss(mm, network.LossMeanSquaredError, "y", "target")
	if err != nil {
		t.Fatal(err)
	}
	res, err := trainingGraph(t, mm, loss, feeds...)
	if err != nil {
		t.Fatal(err)
	}
	nn, err := nativeNet(res.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer nn.Close()
	on := nnOrtNet(t, res.Model)
	defer on.Close()
	for k, fs := range feeds {
		want, err := nn.Inference(fs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := on.Inference(fs)
		if err != nil {
			t.Fatal(err)
		}
		for _, pg := range res.Grads {
			g, ok := got[pg.Grad].(*onnx.Tensor)
			if !ok {
				t.Fatalf("ONNX Runtime gives no %s", pg.Grad)
			}
			if err := closeTo(g, want[pg.Grad].(*onnx.Tensor), 1e-4); err != nil {
				t.Errorf("feed set %d: gradient of %s: %v", k, pg.Param, err)
			}
		}
	}
}
