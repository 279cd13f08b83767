// Command d500 is the command-line tool of Deep500-Go.
//
// Usage:
//
//	d500 <command> [flags] [arguments]
//
// Commands:
//
//	bench               time model presets on a backend and ONNX Runtime, interleaved
//	bench-compare       whether two timing reports differ significantly, and by how much
//	compare-optimizers  two optimizers on identical weights and batches, step by step
//	conformance         run ONNX test cases with a backend: passed, failed or skipped (layer 0)
//	gradcheck           backprop gradients against central differences (layers 0 and 1)
//	model               write a model preset as an ONNX file
//	ops                 every ONNX operator version and which backends support it
//	plot                draw training CSVs
//	recipe              run an experiment recipe N times: time to accuracy, acceptance (layer 3)
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
// Each backend's line and --json give the median's 95% bootstrap
// confidence interval and the coefficient of variation; --json keeps the
// runs (samples_ms) and the environment.
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
// earlier passes (with one pass: the rows before it) are written. Each
// median comes with its 95% bootstrap interval and the runs' coefficient
// of variation.
//
// bench-compare:
//
//	d500 bench-compare [--threshold F] [--json OUT] A.json B.json
//
// A and B are two reports of run --bench --json (of one model) or of bench
// --json (row by row). Per measurement: "no significant difference (B/A
// 1.01, 95% CI 0.97-1.05, p=0.41)" or "B is slower than A: 1.83x (B/A,
// 95% CI 1.75-1.91, p<0.001)" — a Mann-Whitney U test of the runs at 5%,
// and the ratio of medians with a bootstrap interval, which must lie
// beyond --threshold (5%). Exit 0 when compared, 1 when the reports cannot
// be (different models, no runs kept), 2 when one cannot be read.
//
// train, checkpoints and recipes:
//
//	d500 train ... [--checkpoint-dir DIR [--checkpoint-every N] [--checkpoint-keep N]] [--resume DIR] [--write-recipe FILE] [--mllog FILE]
//	d500 recipe run FILE [--runs N] [--set KEY=VALUE]... [--out DIR] [--json OUT]
//
// A checkpoint (DIR/step-NNNNNNNN: model.onnx, optimizer.onnx,
// checkpoint.json, the CSV so far) is written at the end of a run, also an
// interrupted one, and every N steps; --resume DIR continues the newest
// with the run's own arguments and ends bit-identical to a run never
// stopped. A recipe is the run's fixed and mutable flags and acceptance
// criteria; recipe run exits 0 when every criterion holds, 1 when one is
// missed, 2 on a bad recipe.
//
// Exit status: 0 success; 1 failed checks or run errors; 2 bad usage
// (unknown command or flag, missing argument, unknown backend, a DIR that
// does not exist or holds no case, a --run that matches no case, an output
// path that cannot be written: every command checks its outputs before it
// starts working); 130 interrupted (SIGINT or SIGTERM: the command stops
// after its current case, row or step and writes what it measured).
package main
