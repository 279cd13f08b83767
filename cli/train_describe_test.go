package cli

import (
	"testing"

	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/runner"
)

// The run description names every choice the figures depend on.
func TestRunDescription(t *testing.T) {
	train, test, err := runner.ParseSpec("synthetic:classes=3,n=96,test=32")
	if err != nil {
		t.Fatal(err)
	}
	base := runDescription{source: modelSource{spec: "lenet", seed: 7, init: models.InitPyTorch},
		backend: "native", dataset: "synthetic:classes=3,n=96,test=32", train: train, test: test,
		optimizer: "adam", impl: "reference", lr: 0.001, batch: 32, epochs: 2, perEpoch: 3, shuffle: true}
	file := base
	file.source, file.test, file.shuffle, file.epochs, file.step = modelSource{spec: "m.onnx"}, nil, false, 0, 5
	dist := base
	dist.epochs, dist.scheme, dist.ranks = 1, "dsgd", 2
	for _, c := range []struct {
		d    runDescription
		want string
	}{
		{base, "training preset lenet (seed 7, --init pytorch) on native: synthetic:classes=3,n=96,test=32, 96 training samples and 32 test samples (shuffled with seed 7); adam (reference) with lr 0.001, batch 32, 2 epochs of 3 steps"},
		{file, "training m.onnx on native: synthetic:classes=3,n=96,test=32, 96 training samples (in order); adam (reference) with lr 0.001, batch 32, 5 steps"},
		{dist, "training preset lenet (seed 7, --init pytorch) on native: synthetic:classes=3,n=96,test=32, 96 training samples and 32 test samples (shuffled with seed 7); adam (reference) with lr 0.001, batch 32, 1 epoch of 3 steps; dsgd over 2 ranks (the sample counts are this rank's)"},
	} {
		if got := c.d.String(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
