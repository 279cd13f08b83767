// Package metrics measures backends and reports the results.
//
// This first part is layer 0 of Deep500's evaluation: conformance of one
// backend against ONNX's own test cases. A case is a folder holding a
// model.onnx and test_data_set_N folders of input_K.pb and output_K.pb
// files. FindCases discovers cases under the folders a user names; Run
// loads every model, builds it with a backend, feeds every data set and
// compares every output with Compare, which follows ONNX's backend test
// runner (numpy's assert_allclose with rtol 1e-3 and atol 1e-7 for floating
// types; exact for integers, booleans and strings; data types and shapes
// must agree).
//
// Every case ends in exactly one Status. It is skipped only when the
// backend reports that it lacks an operator or type (an error wrapping
// network.ErrUnsupported), so that "not implemented yet" is never confused
// with "wrong"; any other problem, including a panic, is a failure with a
// reason that names the output, data set or file at fault. A Report holds
// the results and writes them as JSON or CSV for diffing between versions.
//
// Speed: Bench times one run repeatedly; BenchPair times two alternately
// (a, b, a, b, …) so that the machine's drift during the measurement falls
// on both alike and their ratio of medians stays meaningful;
// MeasureAllocations counts a run's heap allocations; Environment records
// where and when a figure was measured.
package metrics
