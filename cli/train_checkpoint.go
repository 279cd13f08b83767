package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/recipes"
	"github.com/deep500/deep500-go/runner"
	"github.com/deep500/deep500-go/runner/checkpoint"
	flag "github.com/spf13/pflag"
)

// checkpointFlags are train's --checkpoint-dir, --checkpoint-every,
// --checkpoint-keep and --resume.
type checkpointFlags struct {
	dir, resume *string
	every, keep *int
}

func addCheckpointFlags(fs *flag.FlagSet) *checkpointFlags {
	return &checkpointFlags{
		dir:    fs.String("checkpoint-dir", "", "write the whole training state into `DIR` at the end of the run (also when interrupted or stopped by --time-limit) and every --checkpoint-every steps"),
		every:  fs.Int("checkpoint-every", 0, "with --checkpoint-dir, also write a checkpoint after every `N` steps (0: only at the end)"),
		keep:   fs.Int("checkpoint-keep", 2, "with --checkpoint-dir, keep the newest `N` checkpoints"),
		resume: fs.String("resume", "", "continue the run from the newest checkpoint in `DIR`, with its arguments (flags given here override those that do not change the training, such as --steps, --csv, --time-limit)"),
	}
}

func (c *checkpointFlags) check() error {
	switch {
	case *c.every < 0:
		return errors.New("--checkpoint-every must not be negative")
	case *c.keep < 1:
		return errors.New("--checkpoint-keep must be at least 1")
	case *c.every > 0 && *c.dir == "":
		return errors.New("--checkpoint-every needs --checkpoint-dir")
	}
	return nil
}

// runControlFlags decide how long a run goes on, how it is watched and
// what it may use, not what one of its steps computes.
var runControlFlags = map[string]bool{"steps": true, "epochs": true, "time-limit": true, "target-accuracy": true,
	"test-every": true, "memory-limit": true, "threads": true}

// freeOnResume says whether a resumed run may change a flag: the outputs
// (recipes.OutputFlags) and runControlFlags. Every other flag must keep
// the checkpoint's value.
func freeOnResume(name string) bool { return recipes.OutputFlags[name] || runControlFlags[name] }

// runArgs are the flags set on fs as arguments that set them again: what
// a checkpoint records of how its run was started (--resume left out).
func runArgs(fs *flag.FlagSet) []string {
	var args []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "resume" {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	return args
}

// applyCheckpointArgs sets on fs the arguments the checkpoint's run was
// started with, then again the flags given on this command line, which
// must not change what the run computes (freeOnResume).
func applyCheckpointArgs(fs *flag.FlagSet, cp *checkpoint.Checkpoint) error {
	given := map[string]string{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = f.Value.String() })
	// The checkpoint's arguments apply to the defaults, not to this
	// command line's values.
	for n := range given {
		if err := fs.Set(n, fs.Lookup(n).DefValue); err != nil {
			return fmt.Errorf("--%s: %w", n, err)
		}
	}
	if err := fs.Parse(cp.Meta.Args); err != nil {
		return fmt.Errorf("the arguments of checkpoint %s: %w", cp.Dir, err)
	}
	names := make([]string, 0, len(given))
	for n := range given {
		names = append(names, n)
	}
	sort.Strings(names)
	var changed []string
	for _, n := range names {
		v := given[n]
		if was := fs.Lookup(n).Value.String(); !freeOnResume(n) && v != was {
			if was == "" {
				was = "it unset"
			}
			changed = append(changed, fmt.Sprintf("--%s %s (the checkpoint's run has %s)", n, v, was))
			continue
		}
		if err := fs.Set(n, v); err != nil {
			return err
		}
	}
	if len(changed) > 0 {
		return fmt.Errorf("a resumed run must train as its checkpoint's did: %s; start a new run instead", strings.Join(changed, ", "))
	}
	return nil
}

// checkpointer writes a training run's checkpoints.
type checkpointer struct {
	dir         string
	every, keep int
	args        []string
	net         network.Network
	source      modelSource
	opt         optimizer.Optimizer
	optName     string
	impl        string
	backend     string
	csvPath     string
	stdout      io.Writer
	threads     int
	env         *metrics.Environment // made at the first checkpoint: its probes run programs
	model       *onnx.Model          // the model as given, loaded at the first checkpoint
}

func (c *checkpointer) environment() *metrics.Environment {
	if c.env == nil {
		env := metrics.NewEnvironment(c.threads, nil)
		c.env = &env
	}
	return c.env
}

// hook is the runner's Checkpoint: every --checkpoint-every steps.
func (c *checkpointer) hook(st runner.State) error {
	if c.every > 0 && st.Steps%c.every == 0 {
		return c.write(st)
	}
	return nil
}

// write stores the run's state at st.
func (c *checkpointer) write(st runner.State) error {
	if c.model == nil {
		m, err := c.source.load() // once: a preset is built anew by each load
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		c.model = m
	}
	model, err := withParams(c.model, c.net)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	state, err := optimizer.StateOf(c.opt)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	cp := &checkpoint.Checkpoint{Model: model, Optimizer: state,
		Meta: checkpoint.Meta{Args: c.args, State: st, Optimizer: c.optName, Impl: c.impl, Backend: c.backend,
			Environment: c.environment()}}
	if c.csvPath != "" {
		if cp.CSV, err = os.ReadFile(c.csvPath); err != nil {
			return fmt.Errorf("checkpoint: the run's CSV: %w", err)
		}
	}
	dir, err := checkpoint.Write(c.dir, cp, c.keep)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "checkpoint written to %s (step %d)\n", dir, st.Steps)
	return nil
}

// restoreCheckpoint puts the checkpoint's parameters into net and its
// optimizer state into opt; every parameter of net must be in it.
func restoreCheckpoint(cp *checkpoint.Checkpoint, net network.Network, opt optimizer.Optimizer, optName, impl, backendName string) error {
	m := cp.Meta
	if m.Optimizer != optName || m.Impl != impl || m.Backend != backendName {
		return fmt.Errorf("resume: checkpoint %s holds the state of %s (%s) on %s, this run uses %s (%s) on %s",
			cp.Dir, m.Optimizer, m.Impl, m.Backend, optName, impl, backendName)
	}
	params := cp.Params()
	for _, p := range net.Params() {
		t, ok := params[p]
		if !ok {
			return fmt.Errorf("resume: checkpoint %s has no parameter %q", cp.Dir, p)
		}
		if err := net.Feed(p, t); err != nil {
			return fmt.Errorf("resume: parameter %q: %w", p, err)
		}
	}
	if err := optimizer.SetStateOf(opt, cp.Optimizer); err != nil {
		return fmt.Errorf("resume: checkpoint %s: %w", cp.Dir, err)
	}
	return nil
}

// withParams sets m's initializers that are parameters of net to copies
// of the network's current values, and returns m.
func withParams(m *onnx.Model, net network.Network) (*onnx.Model, error) {
	params := map[string]bool{}
	for _, p := range net.Params() {
		params[p] = true
	}
	for _, in := range m.Graph.Initializers {
		if !params[in.Name] {
			continue
		}
		t, err := network.FetchTensor(net, in.Name)
		if err != nil {
			return nil, fmt.Errorf("parameter %q: %w", in.Name, err)
		}
		in.Tensor = t.Clone()
	}
	return m, nil
}
