package cli

import (
	"errors"
	"fmt"
	flag "github.com/spf13/pflag"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/deep500/deep500-go/distributed"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/runner"
	"github.com/deep500/deep500-go/tickers"
)

// distTrain is the distributed part of `d500 train`: its flags, and the
// run's communicator and distributed optimizer once started. Every method
// is a no-op (or passes its argument through) when --distributed is not
// given, so train.go calls them unconditionally.
type distTrain struct {
	scheme, sampling *string
	np, averageEvery *int

	comm *distributed.Comm
	opt  distributed.Optimizer
}

// mpiWorldSize is the number of ranks of the MPI job this process was
// started in by Open MPI's launcher (0 when not started by mpirun).
func mpiWorldSize() int {
	n, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_SIZE"))
	return n
}

func addDistributedFlags(fs *flag.FlagSet) *distTrain {
	return &distTrain{
		scheme: fs.String("distributed", "", "train on the ranks of an MPI job with the `SCHEME`: "+strings.Join(distributed.Schemes(), " ")+
			" (binary built with -tags mpi, run under mpirun or with --np)"),
		np:           fs.Int("np", 0, "launch `N` ranks with mpirun and train on them (--distributed defaults to allreduce)"),
		averageEvery: fs.Int("average-every", 1, "mavg: average the parameters every `K` steps"),
		sampling:     fs.String("sampling", string(distributed.Partitioned), "distributed: partitioned (each rank its own part of the training set) or replicated (all of it, each rank in its own order)"),
	}
}

// check validates the distributed flags; its error is a usage error.
func (d *distTrain) check(impl string) error {
	if *d.scheme == "" && *d.np == 0 {
		if n := mpiWorldSize(); n > 1 {
			return fmt.Errorf("started by mpirun with %d ranks: give --distributed SCHEME (%s)", n, strings.Join(distributed.Schemes(), " "))
		}
		return nil
	}
	if !distributed.Available {
		return distributed.ErrNoMPI
	}
	switch {
	case *d.scheme != "" && !slices.Contains(distributed.Schemes(), *d.scheme):
		return fmt.Errorf("unknown --distributed scheme %q (known: %s)", *d.scheme, strings.Join(distributed.Schemes(), " "))
	case *d.np < 0:
		return fmt.Errorf("--np %d is negative", *d.np)
	case *d.averageEvery <= 0:
		return fmt.Errorf("--average-every must be positive, got %d", *d.averageEvery)
	case *d.sampling != string(distributed.Partitioned) && *d.sampling != string(distributed.Replicated):
		return fmt.Errorf("--sampling must be partitioned or replicated, got %q", *d.sampling)
	case impl != "reference":
		return errors.New("--distributed wraps a reference optimizer: drop --impl native")
	}
	return nil
}

// relaunch reports whether --np asks for a new MPI job (not when this
// process is already a rank of one).
func (d *distTrain) relaunch() bool { return *d.np > 0 && mpiWorldSize() == 0 }

// launch runs `mpirun -np N d500 train ARGS` and returns its exit status.
// As root, Open MPI refuses to start without its two consent variables,
// which are set; --oversubscribe lets N exceed the cores.
func (d *distTrain) launch(args []string, stdout, stderr io.Writer) int {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		fmt.Fprintf(stderr, "d500 train: --np needs mpirun (install Debian's openmpi-bin, e.g. with make setup): %v\n", err)
		return exitFail
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "d500 train: --np: %v\n", err)
		return exitFail
	}
	child := append([]string{"-np", strconv.Itoa(*d.np), "--oversubscribe", self, "train"}, args...)
	if *d.scheme == "" {
		child = append(child, "--distributed", "allreduce")
	}
	cmd := exec.Command(mpirun, child...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = os.Environ()
	if os.Geteuid() == 0 {
		cmd.Env = append(cmd.Env, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	}
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			return exit.ExitCode()
		}
		fmt.Fprintf(stderr, "d500 train: mpirun: %v\n", err)
		return exitFail
	}
	return exitOK
}

// start joins the MPI job. On ranks other than 0 it silences the summary
// and drops the CSV, figures and saved model: rank 0 writes them.
func (d *distTrain) start(stdout *io.Writer, csvPath, plotDir, saveModel *string) error {
	if *d.scheme == "" {
		return nil
	}
	c, err := distributed.Init()
	if err != nil {
		return err
	}
	d.comm = c
	if c.Rank() != 0 {
		*stdout = io.Discard
		*csvPath, *plotDir, *saveModel = "", "", ""
	}
	return nil
}

// active reports whether this is a distributed run.
func (d *distTrain) active() bool { return d.comm != nil }

// isRoot reports whether this process writes the results: rank 0, or the
// only process.
func (d *distTrain) isRoot() bool { return d.comm == nil || d.comm.Rank() == 0 }

// ranks is the scheme and the number of ranks of a distributed run (1
// when not distributed).
func (d *distTrain) ranks() (scheme string, n int) {
	if d.comm == nil {
		return "", 1
	}
	return *d.scheme, d.comm.Size()
}

// abort ends every rank of the job with err. Any error after start goes
// here: the other ranks may be waiting for this one in a collective.
func (d *distTrain) abort(err error) {
	if d.comm != nil {
		distributed.Abort(fmt.Errorf("d500 train: %w", err))
	}
}

// finish shuts MPI down after a successful run.
func (d *distTrain) finish() {
	if d.comm != nil {
		distributed.Finalize()
	}
}

// trainSet returns this rank's training data and its sampler's seed.
// Without shuffling (--no-shuffle) the parts are contiguous blocks.
func (d *distTrain) trainSet(ds runner.Dataset, seed uint64, shuffle bool) (runner.Dataset, uint64, error) {
	if d.comm == nil {
		return ds, seed, nil
	}
	if *d.sampling == string(distributed.Replicated) {
		return ds, distributed.ReplicatedSeed(seed, d.comm.Rank()), nil
	}
	partSeed := seed
	if !shuffle {
		partSeed = 0
	}
	part, err := distributed.Partition(ds, d.comm.Rank(), d.comm.Size(), partSeed)
	return part, seed, err
}

// wrap replaces the optimizer by the distributed scheme around rule.
func (d *distTrain) wrap(opt optimizer.Optimizer, net network.Network, loss string, rule optimizer.UpdateRuleOptimizer) (optimizer.Optimizer, error) {
	if d.comm == nil {
		return opt, nil
	}
	opts := distributed.Options{AverageEvery: *d.averageEvery}
	if t, ok := rule.(optimizer.Tunable); ok {
		opts.ClipNorm = t.Hyperparameters().ClipNorm
	}
	o, err := distributed.New(*d.scheme, d.comm, net, loss, rule, opts)
	if err != nil {
		return nil, err
	}
	d.opt = o
	return o, nil
}

// newCSV is the CSV ticker: with the layer-2 columns in a distributed run.
// prior, when not nil, is the CSV of the run so far (a resumed run's),
// written first in place of the header.
func (d *distTrain) newCSV(w io.Writer, prior []byte) (*tickers.CSV, error) {
	var extra tickers.Columns
	if d.comm != nil {
		extra = distColumns{d}
	}
	if prior != nil {
		return tickers.ContinueCSV(w, prior, extra)
	}
	if extra == nil {
		return tickers.NewCSV(w), nil
	}
	return tickers.NewCSVColumns(w, extra), nil
}

// distColumns are the layer-2 figures of each step on rank 0: the number
// of ranks, the samples all ranks have used (samples is rank 0's: every
// rank takes the same number of steps of the same batch size), bytes rank
// 0 sent and received, and the step's seconds in communication (including
// waiting for the other ranks) and in computation; their sum is the
// step's time in the optimizer.
type distColumns struct{ d *distTrain }

func (distColumns) Names() []string {
	return []string{"ranks", "global_samples", "bytes_sent", "bytes_received", "comm_seconds", "compute_seconds"}
}

func (c distColumns) Cells(e runner.Event) []string {
	n := c.d.comm.Size()
	ranks, global := strconv.Itoa(n), strconv.Itoa(n*e.Samples)
	if e.Kind != runner.AfterStep || c.d.opt == nil {
		return []string{ranks, global, "", "", "", ""}
	}
	s := c.d.opt.LastStep()
	return []string{ranks, global, strconv.FormatInt(s.BytesSent, 10), strconv.FormatInt(s.BytesReceived, 10),
		strconv.FormatFloat(s.Seconds, 'f', 6, 64), strconv.FormatFloat(s.ComputeSeconds, 'f', 6, 64)}
}
