package autodiff_test

import (
	"fmt"
	"testing"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// constant adds a Constant node with value t.
func (m *model) constant(name string, t *onnx.Tensor) {
	m.node("Constant", nil, []string{name}, &onnx.Attribute{Name: "value", Type: onnx.AttrTensor, Tensor: t})
}

// TestDropoutGradients: a seed makes the training graph's mask the one
// the reference run draws, so the gradients compare exactly.
func TestDropoutGradients(t *testing.T) {
	for _, c := range []struct {
		name     string
		opset    int64
		ratio    float32 // < 0: no ratio input
		training int     // -1: no training_mode input; 2: a graph input fed true
		mask     bool
	}{
		{"training", 13, 0.3, 1, false},
		{"training with mask", 13, 0.6, 1, true},
		{"training default ratio", 12, -1, 1, false},
		{"training opset17", 17, 0.25, 1, false},
		{"training opset22", 22, 0.25, 1, true},
		{"ratio 0", 13, 0, 1, false},
		{"ratio 1", 13, 1, 1, false},
		{"inference", 13, 0.5, 0, false},
		{"no training_mode", 13, 0.5, -1, true},
		{"training_mode fed", 13, 0.4, 2, false},
		{"ratio fed", 13, -2, 1, false},
	} {
		t.Run(fmt.Sprintf("%s/opset%d", c.name, c.opset), func(t *testing.T) {
			m := newModel(t, c.opset)
			m.input("x", m.randn(3, 4, 5))
			ins := []string{"x", "", ""}
			switch {
			case c.ratio == -2:
				// A ratio the graph does not fix: a float input has a
				// gradient of its own, so compute it from x.
				m.constant("r0", onnx.Scalar(float32(0.35)))
				m.input("r", onnx.Scalar(float32(0)))
				m.node("Add", []string{"r0", "r"}, []string{"ratio"})
				ins[1] = "ratio"
			case c.ratio >= 0:
				m.constant("ratio", onnx.Scalar(c.ratio))
				ins[1] = "ratio"
			}
			switch c.training {
			case 0, 1:
				m.constant("train", onnx.Scalar(c.training == 1))
				ins[2] = "train"
			case 2:
				m.input("train", onnx.Scalar(true))
				ins[2] = "train"
			}
			for len(ins) > 1 && ins[len(ins)-1] == "" {
				ins = ins[:len(ins)-1]
			}
			outs := []string{"y"}
			if c.mask {
				outs = append(outs, "mask")
			}
			m.node("Dropout", ins, outs, intAttr("seed", 7))
			checkGradients(t, m, "y")
		})
	}
	// A ratio given by a Constant's value_float.
	t.Run("ratio value_float", func(t *testing.T) {
		m := newModel(t, 13)
		m.input("x", m.randn(3, 4, 5))
		m.node("Constant", nil, []string{"ratio"}, floatAttr("value_float", 0.3))
		m.constant("train", onnx.Scalar(true))
		m.node("Dropout", []string{"x", "ratio", "train"}, []string{"y"}, intAttr("seed", 11))
		checkGradients(t, m, "y")
	})
	// Versions 7 and 10 always infer.
	for _, opset := range []int64{8, 10} {
		t.Run(fmt.Sprintf("opset%d", opset), func(t *testing.T) {
			m := newModel(t, opset)
			m.input("x", m.randn(3, 4))
			m.node("Dropout", []string{"x"}, []string{"y", "mask"}, floatAttr("ratio", 0.5))
			checkGradients(t, m, "y")
		})
	}
}

// TestDropoutGradientsMask checks the training graph without a seed: dX
// is dY where the forward kept an element, times 1/(1 − ratio), and 0
// where it dropped it (the output is 0 there).
func TestDropoutGradientsMask(t *testing.T) {
	nnCheckDropoutMask(t, func(m *onnx.Model) network.Network {
		net, err := nativeNet(m)
		if err != nil {
			t.Fatal(err)
		}
		return net
	})
}

// nnCheckDropoutMask runs the training graph of a Dropout (ratio 0.5) on
// the network build makes and checks dX against the output: 2·dY where
// the output is not 0, else 0.
func nnCheckDropoutMask(t *testing.T, build func(*onnx.Model) network.Network) {
	t.Helper()
	m := newModel(t, 13)
	x := m.randn(50, 4)
	m.input("x", x)
	m.constant("ratio", onnx.Scalar(float32(0.5)))
	m.constant("train", onnx.Scalar(true))
	m.node("Dropout", []string{"x", "ratio", "train"}, []string{"y"})
	mm := m.build("y")
	feeds := withTarget(t, m, mm, m.feeds, "y")
	loss, err := network.AppendLoss(mm, network.LossMeanSquaredError, "y", "target")
	if err != nil {
		t.Fatal(err)
	}
	res, err := trainingGraph(t, mm, loss, feeds)
	if err != nil {
		t.Fatal(err)
	}
	net := build(res.Model)
	defer net.Close()
	out, err := net.Inference(feeds)
	if err != nil {
		t.Fatal(err)
	}
	y := out["y"].(*onnx.Tensor).Float32s()
	dx := out[network.GradName("x")].(*onnx.Tensor).Float32s()
	target := feeds["target"].(*onnx.Tensor).Float32s()
	xs := x.Float32s()
	dropped := 0
	for i := range y {
		// The MSE's gradient at y is 2(y − target)/n.
		dy := 2 * (y[i] - target[i]) / float32(len(y))
		want := float32(0)
		if y[i] != 0 {
			want = dy * 2
			if d := y[i] - 2*xs[i]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("element %d: y = %g for x = %g", i, y[i], xs[i])
			}
		} else {
			dropped++
		}
		if d := dx[i] - want; d > 1e-6 || d < -1e-6 {
			t.Fatalf("element %d: dx = %g, want %g (y %g)", i, dx[i], want, y[i])
		}
	}
	if dropped == 0 || dropped == len(y) {
		t.Fatalf("%d of %d elements dropped", dropped, len(y))
	}
}

func TestDropoutGradientsFreeBatch(t *testing.T) {
	checkBatches(t, 13, func(m *model, batch int) {
		m.input("x", m.randn(batch, 6))
		m.constant("ratio", onnx.Scalar(float32(0.3)))
		m.constant("train", onnx.Scalar(true))
		m.node("Dropout", []string{"x", "ratio", "train"}, []string{"y"}, intAttr("seed", 3))
	}, "y")
}
