package runner_test

import (
	"fmt"
	"log"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/runner"
)

// lossCurve is a listener of its own: it keeps the training loss of every
// step (a ticker, in package tickers' terms: anything with an Event
// method).
type lossCurve struct{ losses []float64 }

func (c *lossCurve) Event(e runner.Event) {
	if e.Kind == runner.AfterStep {
		c.losses = append(c.losses, e.Loss)
	}
}

// Train a model with a reference optimizer on any backend: append a loss
// to the model's output, build it, and let the runner feed it batches,
// telling its listeners of every step and evaluation.
func Example() {
	m, err := models.Preset("mlp", 1) // x [N, 1, 28, 28] → 10 scores
	if err != nil {
		log.Fatal(err)
	}
	input, output := m.Graph.Inputs[0].Name, m.Graph.Outputs[0].Name
	loss, err := network.AppendClassLoss(m, network.LossSoftmaxCrossEntropy, output, "labels")
	if err != nil {
		log.Fatal(err)
	}
	net, err := backend.New("native", m, backend.Options{Threads: 1, SkipInputGradients: true})
	if err != nil {
		log.Fatal(err)
	}
	defer net.Close()

	hp, _ := optimizer.Defaults("adam") // torch.optim's defaults
	rule, err := optimizer.New("adam", hp)
	if err != nil {
		log.Fatal(err)
	}
	train, test, err := runner.ParseSpec("synthetic:classes=10,n=256,test=64") // Gaussian blobs of 1×28×28
	if err != nil {
		log.Fatal(err)
	}
	trainBatches, err := runner.NewShuffled(train, runner.SamplerOptions{BatchSize: 32, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	testBatches, err := runner.NewOrdered(test, runner.SamplerOptions{BatchSize: 32})
	if err != nil {
		log.Fatal(err)
	}
	curve := &lossCurve{}
	r, err := runner.New(runner.Config{
		Net: net, Optimizer: optimizer.NewDriver(net, loss, rule, 0),
		Input: input, Labels: "labels", Output: output, Loss: loss,
		Train: trainBatches, Test: testBatches, Epochs: 2,
		Listeners: []runner.Listener{curve},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := r.Run()
	if err != nil {
		log.Fatal(err)
	}
	first, last := curve.losses[0], curve.losses[len(curve.losses)-1]
	fmt.Printf("%d steps, loss %s, test accuracy above 0.9: %v\n", res.Steps, map[bool]string{true: "fell", false: "did not fall"}[last < first], res.TestAccuracy > 0.9)
	// Output: 16 steps, loss fell, test accuracy above 0.9: true
}
