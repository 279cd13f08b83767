package tickers_test

import (
	"bytes"
	"fmt"
	"log"
	"strings"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/runner"
	"github.com/deep500/deep500-go/tickers"
)

// bestAccuracy is a ticker of one's own: the best test accuracy of a run
// and the step it came at. A ticker is anything with an Event method.
type bestAccuracy struct {
	acc  float64
	step int
}

func (b *bestAccuracy) Event(e runner.Event) {
	if e.Kind == runner.AfterTestSet && e.TestAccuracy > b.acc {
		b.acc, b.step = e.TestAccuracy, e.Step
	}
}

// A ticker of one's own beside package tickers' CSV, on the events of a
// short training run.
func Example_customTicker() {
	m, err := models.Preset("mlp", 1)
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
	hp, _ := optimizer.Defaults("sgd")
	hp.LR = 0.01
	rule, _ := optimizer.New("sgd", hp)
	train, test, _ := runner.ParseSpec("synthetic:classes=4,n=128,test=32")
	trainBatches, _ := runner.NewOrdered(train, runner.SamplerOptions{BatchSize: 32})
	testBatches, _ := runner.NewOrdered(test, runner.SamplerOptions{BatchSize: 32})

	var csv bytes.Buffer
	best := &bestAccuracy{}
	r, err := runner.New(runner.Config{
		Net: net, Optimizer: optimizer.NewDriver(net, loss, rule, 0),
		Input: input, Labels: "labels", Output: output, Loss: loss,
		Train: trainBatches, Test: testBatches, Epochs: 3,
		Listeners: []runner.Listener{tickers.NewCSV(&csv), best},
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := r.Run(); err != nil {
		log.Fatal(err)
	}
	rows := strings.Count(csv.String(), "\n") - 1
	fmt.Printf("%d CSV rows (12 steps, 3 evaluations); best accuracy found: %v\n", rows, best.step > 0)
	// Output: 15 CSV rows (12 steps, 3 evaluations); best accuracy found: true
}
