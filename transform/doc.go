// Package transform rewrites ONNX models into equivalent ONNX models:
// passes any backend can run before it compiles a graph.
//
// Optimize applies the inference passes — constant folding, folding
// BatchNormalization into the Conv, ConvTranspose, Gemm or MatMul+Add
// before it, removing no-op nodes (Identity, inference Dropout, a Cast to
// the type the value already has), merging consecutive Reshapes, and
// removing dead nodes and unused initializers — over and over until none
// of them changes anything. It works on a copy: the caller's model, its nodes and
// its initializers' data are never modified.
//
// Each pass lives in a file of its own and is one entry of the list that
// Passes returns, as ONNX Runtime organises its graph transformers; a new
// pass is a new file with a function of the Pass signature and one line
// in that list. Rewrites that depend on one backend's kernels are not
// passes: the native backend fuses Conv and Gemm with their bias, residual
// Add and activation itself, when it compiles the optimized graph
// (backend/native/fuse.go).
//
// Every pass refuses what it is not sure about and leaves it as it is: a
// value a subgraph of If, Loop or Scan reads is never renamed, a
// BatchNormalization in training mode or with more than one output is
// never folded, a graph input that has an initializer (an overridable
// default) is never treated as a constant, and nothing outside the
// ai.onnx domain is evaluated. Subgraphs themselves are not rewritten.
//
// Constant folding needs something that executes operators. The package
// does not import a backend: the native backend imports this package (to
// optimize at New), so importing it back would be a cycle, and making the
// evaluator a parameter (Options.Evaluate) keeps this package a pure
// graph-to-graph layer that any backend can drive with its own kernels.
// BackendEvaluator builds one from any registered backend by name; the
// native backend passes itself.
package transform
