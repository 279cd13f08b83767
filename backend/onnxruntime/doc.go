// Package onnxruntime is the ONNX Runtime backend: it runs a model with
// Microsoft's ONNX Runtime through github.com/yalue/onnxruntime_go, which
// loads the runtime's shared library at run time (cgo, dlopen).
//
// The library is found, in this order, at backend.Options.Settings["lib"],
// at the path in the environment variable D500_ONNXRUNTIME_LIB, and at
// DefaultLibrary, where `make onnxruntime` (and so `make setup`) installs
// the build that npm's onnxruntime-node@1.30.0 ships. ONNX Runtime's
// environment is process-wide: the first network built loads the library,
// and every later one must name the same file.
//
// A network serializes the model once, builds one ONNX Runtime session and
// reuses it for every Inference. Two facts of onnxruntime_go v1.27.0 shape
// the session's graph (see graph.go): it cannot make or read rank-0 tensors
// of every type, and it copies float16 and bfloat16 outputs with one byte
// per element. So scalar inputs are fed as [1] and reshaped inside the
// graph, tensor outputs that may be scalars are returned flattened beside
// their shape, and 16-bit float outputs are cast to float32 (exactly) and
// back.
//
// Intermediate values are fetched by making them extra graph outputs, which
// rebuilds the session. ONNX Runtime's inference library has no autodiff:
// InferenceAndBackprop returns an error wrapping network.ErrUnsupported.
package onnxruntime
