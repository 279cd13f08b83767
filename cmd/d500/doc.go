// Command d500 is the command-line tool of Deep500-Go.
//
// Usage:
//
//	d500 <command> [flags] [arguments]
//
// Commands:
//
//	bench               time model presets on a backend and ONNX Runtime, interleaved
//	compare-optimizers  two optimizers on identical weights and batches, step by step
//	conformance         run ONNX test cases with a backend: passed, failed or skipped (layer 0)
//	gradcheck           backprop gradients against central differences (layers 0 and 1)
//	model               write a model preset as an ONNX file
//	ops                 every ONNX operator version and which backends support it
//	plot                draw training CSVs
//	run                 run a model on given inputs, write its outputs, or time it
//	train               train a model on a dataset, locally or over MPI (layers 1 and 2)
//	version             the commit, Go's version and the backends' versions
//	completion          a bash, zsh, fish or powershell completion script
//	help                a command's synopsis and flags (as CMD --help)
//
// The tree is github.com/spf13/cobra's (root.go); each command parses its
// own flags, GNU style (package pflag), from the one definition its file
// makes, and cobra learns them for completion. Flags are --name VALUE or
// --name=VALUE, and -x for one-letter ones; the Go flag package's -name is
// read as --name. Help that is asked for goes to standard output.
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
//	d500 run --model M.onnx [--input NAME=FILE.pb]... [--random-inputs] [--output-dir DIR] [--bench N [--compare B,...]] [--json FILE]
//
// With --compare, each compared backend is timed interleaved with the
// --backend (one run of each in turn), so the ratio of medians is not
// skewed by the machine speeding up or slowing down between the two.
//
// bench:
//
//	d500 bench [--models LIST] [--batch 1,8] [--threads 1,2] [--passes N] [--runs N] [--min-runs N] [--budget D]
//	           [--warmup N] [--alloc-runs N] [--backend B] [--compare B] [--optimize=true|false]
//	           [--seed N] [--backend-opt KEY=VALUE] [--md FILE] [--json FILE]
//
// For every preset, batch size and thread count: the medians and p10–p90 of
// both backends timed interleaved, their ratio, and the --backend's heap
// allocations per inference; a backend that cannot run a model leaves the
// row skipped with the reason. With --passes N the whole table is measured
// N times over, each row's networks built anew in every pass, and a row's
// figures are those of its runs from all the passes pooled, with each
// pass's ratio beside them: a stretch in which the shared machine runs
// slower then falls on one pass of a row, not on all of it. On an
// interrupt the pass being measured is left out and the rows measured in
// earlier passes (with one pass: the rows before it) are written.
//
// Exit status: 0 success; 1 failed checks or run errors; 2 bad usage
// (unknown command or flag, missing argument, unknown backend, a DIR that
// does not exist or holds no case, a --run that matches no case, an output
// path that cannot be written: every command checks its outputs before it
// starts working); 130 interrupted (SIGINT or SIGTERM: the command stops
// after its current case, row or step and writes what it measured).
package main
