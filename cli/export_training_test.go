package cli

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/runner"
)

// The exported training graph, run by the native backend, gives the
// gradients the native backend's own backprop gives for the same model,
// loss and batch (at another batch size than the one it was measured
// with: the batch dimension is free).
func TestExportedGraphEqualsNativeBackprop(t *testing.T) {
	for _, c := range []struct {
		preset string
		loss   network.LossKind
		opt    string
	}{
		{"lenet", network.LossSoftmaxCrossEntropy, ""},
		{"mlp", network.LossMeanSquaredError, "adam"},
	} {
		t.Run(c.preset, func(t *testing.T) {
			load := func() *onnx.Model {
				m, err := models.PresetWith(c.preset, 3, models.InitHe)
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			hp, _ := optimizer.Defaults("adam")
			ex, err := exportTraining(load(), c.loss, true, 8, 0, c.opt, hp)
			if err != nil {
				t.Fatal(err)
			}
			// The same model and loss, trained by native itself.
			m := load()
			if _, err := network.BatchNormTraining(m); err != nil {
				t.Fatal(err)
			}
			loss, err := network.AppendClassLoss(m, c.loss, m.Graph.Outputs[0].Name, "")
			if err != nil {
				t.Fatal(err)
			}
			ref, err := backend.New("native", m, backend.Options{Frozen: runner.BatchNormStats(m.Graph), SkipInputGradients: true})
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close()
			feeds, err := zeroFeeds(m.Graph, 5, 0)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(4, 5))
			for name, v := range feeds {
				x := v.(*onnx.Tensor)
				switch d := x.Data.(type) {
				case []float32:
					for i := range d {
						d[i] = float32(rng.NormFloat64())
					}
				case []int64:
					for i := range d {
						d[i] = int64(rng.IntN(10))
					}
				}
				feeds[name] = x
			}
			if _, err := ref.InferenceAndBackprop(feeds, loss); err != nil {
				t.Fatal(err)
			}
			exNet, err := backend.New("native", ex.model, backend.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer exNet.Close()
			for _, pg := range ref.Gradients(loss) {
				if err := exNet.AddOutput(network.GradName(pg.Param)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := exNet.Inference(feeds)
			if err != nil {
				t.Fatal(err)
			}
			if len(ref.Gradients(loss)) != ex.grads {
				t.Errorf("%d gradients exported, native has %d", ex.grads, len(ref.Gradients(loss)))
			}
			for _, pg := range ref.Gradients(loss) {
				want, _ := network.FetchTensor(ref, pg.Grad)
				g, ok := got[pg.Grad].(*onnx.Tensor)
				if !ok {
					t.Fatalf("no %s", pg.Grad)
				}
				w, a := want.Float32s(), g.Float32s()
				scale := 0.0
				for _, v := range w {
					scale = math.Max(scale, math.Abs(float64(v)))
				}
				for i := range w {
					if math.Abs(float64(a[i]-w[i])) > 1e-4*math.Max(scale, 1e-3) {
						t.Fatalf("%s[%d] = %g, native's backprop %g", pg.Grad, i, a[i], w[i])
					}
				}
			}
		})
	}
}
