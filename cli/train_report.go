package cli

import (
	"io"

	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/runner"
)

// setTrainResult fills the outcome of rep from the runner's result.
func setTrainResult(rep *metrics.TrainReport, res runner.Result) {
	rep.Epochs, rep.Steps, rep.Samples, rep.Seconds = res.Epochs, res.Steps, res.Samples, res.Seconds
	rep.FinalLoss, rep.TestLoss, rep.TestAccuracy = metrics.Finite(res.Loss), metrics.Finite(res.TestLoss), metrics.Finite(res.TestAccuracy)
}

// writeTrainReport writes the report to path.
func writeTrainReport(path string, rep *metrics.TrainReport) error {
	return metrics.WriteFile(path, func(w io.Writer) error { return writeIndentedJSON(w, rep) })
}
