// Package gorgonia is the Gorgonia backend: it turns an ONNX graph into a
// gorgonia.org/gorgonia expression graph, runs it with Gorgonia's tape
// machine, differentiates it with Gorgonia's symbolic differentiation
// (gorgonia.Grad), and offers Gorgonia's solvers (Vanilla, Momentum, Adam,
// RMSProp, AdaGrad) as its native optimizers.
//
// Gorgonia graphs have static shapes, so a graph is built when the shapes
// of the feeds are known: at the first run, and again for every new
// combination of feed shapes (a smaller last batch), with a small cache.
// Values that decide shapes (Reshape's shape, Slice's starts, reduction
// axes given as inputs) must be constants: initializers, Constant outputs,
// or fed graph inputs, whose contents then become part of the cache key.
//
// Every operator that Gorgonia can express exactly is mapped onto its ops
// (directly or composed); everything else, including attributes or types a
// mapping cannot honour, is reported with an error wrapping
// network.ErrUnsupported, never computed approximately. Where Gorgonia's
// own ops go wrong (its Reshape aliases memory that the tape machine then
// overwrites in place; reductions and broadcasts along some axes of
// higher-rank tensors; ByIndices along axes other than 0; AveragePool2D's
// divisor) the mapping avoids them: reshapes go through a copying op of
// this package (reshape.go), reductions run one axis at a time on 3-D
// views, broadcasts on merged axes, Gather on slices. Conversions between
// the project's onnx.Tensor and gorgonia.org/tensor live only here.
//
// The package registers the backend "gorgonia" with package backend when
// it is imported.
package gorgonia
