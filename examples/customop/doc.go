// Package customop is an example of a custom operator on the native
// backend: ChannelSwish, of the domain example.customop, version 1,
//
//	Y = X · σ(β_c · X)
//
// a Swish activation whose slope β is a second input, one value per
// channel (along the attribute axis, default 1), so that a network learns
// it as it learns PReLU's slope. The kernel (ChannelSwish) implements
// native.Kernel's Forward, native.Gradient's Gradient and native.Checker's
// Check in float32 and float64; Register hands it to
// native.RegisterKernel.
//
// Once registered, a model that imports example.customop at version 1 or
// later loads with a typed ChannelSwish node and runs on the native
// backend like a built-in operator: in metrics' conformance and gradient
// checks and in its benchmarks, which the package's test runs on an ONNX
// test case it writes (model.onnx and test_data_set_0).
package customop
