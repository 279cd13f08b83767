// Package autodiff turns a model and a scalar loss into a training graph:
// the same model, whose main graph also computes the gradients of the loss
// with respect to chosen parameters and inputs, written with standard ONNX
// operators only, so that any ONNX engine (ONNX Runtime, the native
// backend, another framework's importer) executes a training step.
//
// It is reverse-mode differentiation done on the graph rather than on
// values: the nodes on a path from a differentiated value to the loss are
// visited in reverse order, and each operator's rule (rules_*.go, one
// family per file) appends the nodes that compute its inputs' gradients
// from its outputs'. Contributions to one value are summed with Sum.
//
// Rules need the types and shapes of the forward values (which axes a
// broadcast stretched, the spatial size a transposed convolution must
// give back). ONNX's own shape inference is not available in Go, so Probe
// measures them by running the model once (twice, with two batch sizes,
// to tell the dims that follow the batch, which the training graph then
// leaves free). Everything a rule decides from them is fixed in the
// graph; only those free dims are read at run time (Shape).
//
// The nodes are typed at the model's ai.onnx opset, raised up to
// DefaultMaxOpset when no node changes meaning by it; the builder emits
// each helper (ReduceSum, Unsqueeze, Slice, Pad, ...) in the form that
// opset defines. The project's own loss operators are not standard: Lower
// rewrites them first. An operator without a rule is an error wrapping
// network.ErrUnsupported that names it.
package autodiff
