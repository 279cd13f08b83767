// Command d500 is the command-line tool of Deep500-Go.
//
// Usage:
//
//	d500 <command> [flags] [arguments]
//
// Commands available now:
//
//	conformance  run ONNX test cases with a backend and report each case as
//	             passed, failed or skipped (layer 0)
//	gradcheck    compare backprop gradients with central differences on ONNX
//	             test cases (layers 0 and 1)
//	ops          list every ONNX operator version and which backends support it
//	run          run a model on given inputs, write its outputs, or time it
//
// Later commands of the design (train, compare-optimizers, plot, model)
// are added to the table in main.go.
//
// conformance:
//
//	d500 conformance [--backend B] [--run REGEX] [--json FILE] [--csv FILE] [--threads N] [--backend-opt KEY=VALUE] [-v] DIR...
//
// DIR is a test case (a folder with model.onnx and test_data_set_N/) or a
// folder of cases. One line is printed per case that did not pass (per case
// with -v), and the last line is "N passed, N failed, N skipped". On an
// interrupt (Ctrl-C) the run stops after the current case and still writes
// the results measured so far.
//
// gradcheck:
//
//	d500 gradcheck [--backend B] [--run REGEX] [--json FILE] [--csv FILE] [--samples N] [--float32] DIR...
//
// Same cases, report and closing line as conformance; the step sizes and
// tolerances are documented by "d500 gradcheck -h" and package metrics.
//
// ops:
//
//	d500 ops [--backend B,...] [--json FILE]
//
// run:
//
//	d500 run --model M.onnx [--input NAME=FILE.pb]... [--random-inputs] [--output-dir DIR] [--bench N] [--json FILE]
//
// Exit status: 0 success; 1 failed checks or run errors; 2 bad usage
// (unknown command or flag, missing argument, unknown backend, a DIR that
// does not exist or holds no case).
package main
