// Package recipes holds experiment recipes, Deep500's level-3 unit: a
// fixed part (the model, the data, the loss and the backend: what the
// figures are about) and a mutable part (the optimizer, its
// hyperparameters, the schedule, the length, the seed: what a researcher
// varies with `d500 recipe run --set`), with acceptance criteria the runs
// must meet, such as a test accuracy every run reaches (MLPerf's quality
// target) and the time it may take.
//
// A recipe is JSON (format "deep500-recipe/1"); its parts map `d500
// train` flags (without dashes) to values. The recipes of the runs the
// README quotes are the JSON files of this folder, embedded in the binary
// (Shipped), so that `d500 recipe run recipes/NAME.json` and the tests
// use the same files.
//
// Summarize turns the runs' figures into time to accuracy the MLPerf way:
// with five runs or more the fastest and slowest are dropped (MLPerf's
// olympic scoring), and the mean of the rest is given with a 95% Student-t
// confidence interval.
package recipes
