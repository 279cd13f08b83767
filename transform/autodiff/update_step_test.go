package autodiff_test

import (
	"testing"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/transform/autodiff"
)

// Each optimizer written as ONNX takes the reference optimizer's steps:
// four steps of a small model, the parameters compared after each.
func TestUpdateStepMatchesReference(t *testing.T) {
	cases := []struct {
		name string
		hp   func(h *optimizer.Hyperparams)
	}{
		{"sgd", func(h *optimizer.Hyperparams) { h.WeightDecay = 0.1 }},
		{"momentum", func(h *optimizer.Hyperparams) { h.Dampening = 0.3 }},
		{"nesterov", func(h *optimizer.Hyperparams) { h.WeightDecay = 0.01 }},
		{"adam", func(h *optimizer.Hyperparams) { h.WeightDecay = 0.05 }},
		{"adamw", nil},
		{"adagrad", func(h *optimizer.Hyperparams) { h.LRDecay = 0.1; h.InitialAcc = 0.2 }},
		{"rmsprop", func(h *optimizer.Hyperparams) { h.Centered = true; h.Momentum = 0.5 }},
		{"rmsprop", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, 17)
			m.input("x", m.randn(4, 3))
			m.param("w", m.randn(3, 2))
			m.param("b", m.randn(2))
			m.node("MatMul", []string{"x", "w"}, []string{"h"})
			m.node("Add", []string{"h", "b"}, []string{"y"})
			mm := m.build("y")
			feeds := map[string]onnx.Value{"x": m.feeds["x"], "target": m.randn(4, 2)}
			loss, err := network.AppendLoss(mm, network.LossMeanSquaredError, "y", "target")
			if err != nil {
				t.Fatal(err)
			}
			hp, _ := optimizer.Defaults(c.name)
			hp.LR = 0.05
			if c.hp != nil {
				c.hp(&hp)
			}
			ref, err := optimizer.New(c.name, hp)
			if err != nil {
				t.Fatal(err)
			}
			rnet, err := nativeNet(mm)
			if err != nil {
				t.Fatal(err)
			}
			defer rnet.Close()

			low, err := autodiff.Lower(mm)
			if err != nil {
				t.Fatal(err)
			}
			info, err := autodiff.Probe(nativeNet, low, feeds)
			if err != nil {
				t.Fatal(err)
			}
			res, err := autodiff.Gradients(low, autodiff.Options{Loss: loss, WRT: []string{"w", "b"}, Info: info})
			if err != nil {
				t.Fatal(err)
			}
			st, err := autodiff.AppendUpdate(res, c.name, hp)
			if err != nil {
				t.Fatal(err)
			}
			unet, err := nativeNet(st.WithDefaults(hp.LR))
			if err != nil {
				t.Fatal(err)
			}
			defer unet.Close()
			state := map[string]onnx.Value{}
			params := map[string]onnx.Value{"w": mm.Graph.Initializer("w"), "b": mm.Graph.Initializer("b")}
			for step := 1; step <= 4; step++ {
				// The reference: backprop on native, then the rule.
				if _, err := rnet.InferenceAndBackprop(feeds, loss); err != nil {
					t.Fatal(err)
				}
				if three, ok := ref.(optimizer.ThreeStepOptimizer); ok {
					three.NewInput()
				}
				for _, p := range []string{"w", "b"} {
					pt, _ := network.FetchTensor(rnet, p)
					gt, _ := network.FetchTensor(rnet, network.GradName(p))
					if err := ref.UpdateRule(gt, pt, p); err != nil {
						t.Fatal(err)
					}
					if err := rnet.Feed(p, pt); err != nil {
						t.Fatal(err)
					}
				}
				// The graph: one run.
				in := map[string]onnx.Value{st.LR: onnx.Scalar(float32(hp.LR)), st.Step: onnx.Scalar(float32(step))}
				for k, v := range feeds {
					in[k] = v
				}
				for k, v := range params {
					in[k] = v
				}
				for k, v := range state {
					in[k] = v
				}
				for _, o := range append(st.Next, stateOutputs(st)...) {
					if err := unet.AddOutput(o.Grad); err != nil {
						t.Fatal(err)
					}
				}
				out, err := unet.Inference(in)
				if err != nil {
					t.Fatal(err)
				}
				for _, pn := range st.Next {
					params[pn.Param] = out[pn.Grad]
					want, _ := network.FetchTensor(rnet, pn.Param)
					if err := closeTo(out[pn.Grad].(*onnx.Tensor), want, 1e-5); err != nil {
						t.Fatalf("step %d, %s: %v", step, pn.Param, err)
					}
				}
				for _, s := range st.State {
					state[s.Input] = out[s.Next]
				}
			}
		})
	}
	if _, err := autodiff.AppendUpdate(&autodiff.Result{}, "accelegrad", optimizer.Hyperparams{D: 1}); err == nil {
		t.Error("accelegrad written as ONNX")
	}
}

func stateOutputs(st *autodiff.UpdateStep) []network.ParamGrad {
	var out []network.ParamGrad
	for _, s := range st.State {
		out = append(out, network.ParamGrad{Param: s.Input, Grad: s.Next})
	}
	return out
}
