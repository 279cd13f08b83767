package tickers

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/runner"
)

// Ticker is what every ticker here is: a runner.Listener, the one
// interface of the runner's event consumers (an alias, so that a ticker
// and a listener of one's own are the same thing wherever either is
// asked for).
type Ticker = runner.Listener

// CSVHeader is the header of `d500 train --csv`.
var CSVHeader = []string{"epoch", "step", "samples", "seconds", "loss", "train_accuracy", "test_accuracy", "lr"}

// CSV writes one row per optimizer step (AfterStep: the training loss) and
// one per evaluation (AfterTestSet: the test accuracy; its loss cell is
// empty, the contract having no test-loss column), under CSVHeader. Cells
// not measured are empty; accuracies are fractions. The header and each
// row are flushed at once, so an interrupted run keeps what it recorded.
// Err reports the first write error.
type CSV struct {
	w     *csv.Writer
	err   error
	extra Columns // NewCSVColumns
}

// NewCSV writes the header to w and returns the ticker.
func NewCSV(w io.Writer) *CSV {
	c := &CSV{w: csv.NewWriter(w)}
	c.write(CSVHeader)
	return c
}

func (c *CSV) write(row []string) {
	if c.err != nil {
		return
	}
	c.w.Write(row)
	c.w.Flush()
	c.err = c.w.Error()
}

func cell(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Event implements Ticker.
func (c *CSV) Event(e runner.Event) {
	var loss, train, test float64
	switch e.Kind {
	case runner.AfterStep:
		loss, train, test = e.Loss, e.TrainAccuracy, math.NaN()
	case runner.AfterTestSet:
		loss, train, test = math.NaN(), math.NaN(), e.TestAccuracy
	default:
		return
	}
	row := []string{strconv.Itoa(e.Epoch), strconv.Itoa(e.Step), strconv.Itoa(e.Samples),
		strconv.FormatFloat(e.Seconds, 'f', 6, 64), cell(loss), cell(train), cell(test), cell(e.LR)}
	if c.extra != nil {
		row = append(row, c.extra.Cells(e)...)
	}
	c.write(row)
}

// Err is the first error writing the CSV.
func (c *CSV) Err() error { return c.err }

// Summary prints a line per epoch (training loss, the epoch's training
// accuracy over the samples stepped on, test loss and accuracy, time) and,
// after training, the final figures with the time per step and per epoch.
type Summary struct {
	W io.Writer

	// trainRight and trainSeen sum the epoch's training accuracy over its
	// samples (steps whose accuracy was measured).
	trainRight, trainSeen float64
	epochStart            float64
	testLoss, testAcc     float64
	lastLoss              float64
	epochs, steps         int
	measuredTest, started bool
}

// Event implements Ticker.
func (s *Summary) Event(e runner.Event) {
	switch e.Kind {
	case runner.BeforeEpoch:
		s.epochStart, s.trainRight, s.trainSeen = e.Seconds, 0, 0
	case runner.AfterStep:
		s.lastLoss, s.steps = e.Loss, e.Step
		if !math.IsNaN(e.TrainAccuracy) {
			s.trainRight += e.TrainAccuracy * float64(e.BatchSize)
			s.trainSeen += float64(e.BatchSize)
		}
	case runner.AfterTestSet:
		s.testLoss, s.testAcc, s.measuredTest = e.Loss, e.TestAccuracy, true
	case runner.AfterEpoch:
		s.epochs = e.Epoch
		line := fmt.Sprintf("epoch %d: step %d, loss %.4f", e.Epoch, e.Step, s.lastLoss)
		if s.trainSeen > 0 {
			// The CSV's train_accuracy of each step, averaged over the
			// epoch's samples: one definition, two granularities.
			line += fmt.Sprintf(", train accuracy %.2f%% (mean over the epoch's steps)", 100*s.trainRight/s.trainSeen)
		}
		if s.measuredTest {
			line += fmt.Sprintf(", test loss %.4f, test accuracy %.2f%%", s.testLoss, 100*s.testAcc)
		}
		fmt.Fprintf(s.W, "%s, %.2fs\n", line, e.Seconds-s.epochStart)
	case runner.AfterTraining:
		if e.Step == 0 && e.Err != nil {
			return // nothing was trained: the error says why
		}
		line := fmt.Sprintf("trained %d steps (%d samples) in %.2fs", e.Step, e.Samples, e.Seconds)
		if e.Step > 0 {
			line += fmt.Sprintf(", %.2f ms/step", 1000*e.Seconds/float64(e.Step))
		}
		if s.epochs > 0 {
			line += fmt.Sprintf(", %.2f s/epoch", e.Seconds/float64(s.epochs))
		}
		line += fmt.Sprintf("; final loss %.4f", e.Loss)
		if s.measuredTest {
			line += fmt.Sprintf(", test loss %.4f, test accuracy %.2f%%", s.testLoss, 100*s.testAcc)
		}
		fmt.Fprintln(s.W, line)
	}
}

// NaNAbort stops the run with an error naming the step when a training
// loss is NaN or infinite.
//
// With Dir set, it first writes the gradients of that step, one
// TensorProto file per parameter (DIR/<param>.grad.pb), for debugging:
// which parameter's gradient blew up is usually the first question.
type NaNAbort struct{ Dir string }

// Event implements Ticker.
func (a NaNAbort) Event(e runner.Event) {
	if e.Kind != runner.AfterStep || !(math.IsNaN(e.Loss) || math.IsInf(e.Loss, 0)) {
		return
	}
	reason := fmt.Errorf("training loss is %v at step %d (epoch %d, lr %g): aborted", e.Loss, e.Step, e.Epoch, e.LR)
	if a.Dir != "" && e.Runner != nil {
		if err := saveGradients(a.Dir, e.Runner.Network(), e.Runner.Loss()); err != nil {
			reason = fmt.Errorf("%w (saving the gradients failed: %v)", reason, err)
		} else {
			reason = fmt.Errorf("%w; the step's gradients are in %s", reason, a.Dir)
		}
	}
	e.Runner.Stop(reason)
}

// saveGradients writes the gradient of every parameter of the last
// backward pass as DIR/<param>.grad.pb.
func saveGradients(dir string, net network.Network, loss string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, pg := range net.Gradients(loss) {
		vs, err := net.Fetch(pg.Grad)
		if err != nil {
			return err
		}
		name := strings.NewReplacer("/", "_", string(filepath.Separator), "_").Replace(pg.Param)
		if err := onnx.WriteValue(filepath.Join(dir, name+".grad.pb"), pg.Grad, vs[0]); err != nil {
			return err
		}
	}
	return nil
}

// TimeAbort stops the run gracefully after the first step or evaluation
// that ends after Limit of wall time. From is the seconds the run had
// when this process took it up (a resumed run's events count on from
// them): the limit is this process's.
type TimeAbort struct {
	Limit time.Duration
	From  float64
}

// Event implements Ticker.
func (t TimeAbort) Event(e runner.Event) {
	if (e.Kind == runner.AfterStep || e.Kind == runner.AfterTestSet) && e.Seconds-t.From >= t.Limit.Seconds() {
		e.Runner.Stop(nil)
	}
}

// AccuracyAbort stops the run gracefully once an evaluation reaches
// Target test accuracy (a fraction).
type AccuracyAbort struct{ Target float64 }

// Event implements Ticker.
func (a AccuracyAbort) Event(e runner.Event) {
	if e.Kind == runner.AfterTestSet && e.TestAccuracy >= a.Target {
		e.Runner.Stop(nil)
	}
}
