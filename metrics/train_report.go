package metrics

import (
	"math"

	"github.com/deep500/deep500-go/optimizer"
)

// TrainReport is `d500 train --json`: what was trained, how, on what
// machine, and what came of it, written whatever ended the run (an
// interrupted run says so, with the figures of the steps it did); the
// HTML report reads it back.
type TrainReport struct {
	Environment Environment `json:"environment"`
	Model       string      `json:"model"`
	Dataset     string      `json:"dataset"`
	Backend     string      `json:"backend"`
	Optimizer   string      `json:"optimizer"`
	Impl        string      `json:"impl"`
	// Hyperparams are the optimizer's hyperparameters in effect at the
	// start (the learning rate before any schedule).
	Hyperparams optimizer.Hyperparams `json:"hyperparameters"`
	Batch       int                   `json:"batch"`
	Seed        uint64                `json:"seed"`
	// PlannedEpochs and PlannedSteps are the run's bound (0: not set).
	PlannedEpochs int `json:"planned_epochs"`
	PlannedSteps  int `json:"planned_steps"`
	// Distributed is the scheme and Ranks the number of ranks of a
	// distributed run.
	Distributed string `json:"distributed,omitempty"`
	Ranks       int    `json:"ranks,omitempty"`

	Epochs  int     `json:"epochs"`
	Steps   int     `json:"steps"`
	Samples int     `json:"samples"`
	Seconds float64 `json:"seconds"`
	// FinalLoss is the last step's training loss; TestLoss and
	// TestAccuracy those of the last evaluation (null when none ran).
	FinalLoss    *float64 `json:"final_loss"`
	TestLoss     *float64 `json:"test_loss"`
	TestAccuracy *float64 `json:"test_accuracy"`
	Interrupted  bool     `json:"interrupted"`
	Error        string   `json:"error,omitempty"`
	// StepMillis is the median wall time of a step after the first
	// four, and AllocsPerStep the heap allocations per step over those
	// steps (the step and the loop's work around it, evaluations left
	// out): null for a run of four steps or fewer.
	StepMillis    *float64 `json:"step_ms"`
	AllocsPerStep *float64 `json:"allocs_per_step"`

	// TargetAccuracy is --target-accuracy (0: none), and Target the first
	// evaluation that reached it (null: none did): the run's time to
	// accuracy.
	TargetAccuracy float64        `json:"target_accuracy,omitempty"`
	Target         *TargetReached `json:"target_reached,omitempty"`

	CSV        string `json:"csv,omitempty"`
	Plots      string `json:"plots,omitempty"`
	SavedModel string `json:"saved_model,omitempty"`
}

// Finite is v, or nil (JSON null) for a NaN or an infinity, which JSON
// cannot hold.
func Finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// TargetReached is the point of a run where it first reached its target
// test accuracy.
type TargetReached struct {
	Epoch        int     `json:"epoch"`
	Steps        int     `json:"steps"`
	Samples      int     `json:"samples"`
	Seconds      float64 `json:"seconds"`
	TestAccuracy float64 `json:"test_accuracy"`
}
