// Package checkpoint stores the whole state of a training run in a folder,
// so that the run can be resumed and end bit-identical to one never
// stopped: the model with its current parameters (model.onnx, an ONNX
// model any tool reads, BatchNormalization's running statistics
// included), the optimizer's state (optimizer.onnx: a graph holding only
// initializers, one per state tensor), where the run is and how it was
// started (checkpoint.json: runner.State, the command-line arguments, the
// environment), and the run's CSV so far (train.csv).
//
// Each checkpoint is a folder step-NNNNNNNN inside the checkpoint
// directory, written under a temporary name and renamed into place, so a
// crash while writing never leaves a partial checkpoint where Latest finds
// it. Write keeps the newest few and removes older ones.
package checkpoint
