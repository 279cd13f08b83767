package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/runner"
)

// Format names the layout of a checkpoint folder; Read refuses others.
const Format = "deep500-checkpoint/1"

// The files of a checkpoint folder.
const (
	MetaFile      = "checkpoint.json"
	ModelFile     = "model.onnx"
	OptimizerFile = "optimizer.onnx"
	CSVFile       = "train.csv"
)

// folderPrefix starts the name of every checkpoint folder; the step count
// follows, zero-padded so that names sort by step.
const folderPrefix = "step-"

// Meta is checkpoint.json: what the run was and where it is.
type Meta struct {
	Format  string    `json:"format"`
	Created time.Time `json:"created"`
	// Args are the command-line arguments the run was started with
	// (without --resume): a resumed run takes them as its own.
	Args  []string     `json:"args"`
	State runner.State `json:"state"`
	// Optimizer, Impl and Backend say what wrote the optimizer's state,
	// so that another cannot read it by mistake.
	Optimizer string `json:"optimizer"`
	Impl      string `json:"impl"`
	Backend   string `json:"backend"`
	// Environment is the machine and build that wrote it (any JSON).
	Environment any `json:"environment,omitempty"`
}

// Checkpoint is one checkpoint in memory.
type Checkpoint struct {
	Meta Meta
	// Model is the model with the run's parameters as initializers.
	Model *onnx.Model
	// Optimizer is the optimizer's state by name (optimizer.Stateful).
	Optimizer map[string]*onnx.Tensor
	// CSV is the run's CSV so far (nil: the run writes none).
	CSV []byte
	// Dir is the folder it was read from (Latest, Read).
	Dir string
}

// Write stores c as the checkpoint of its step in dir (made if needed) and
// removes all but the newest keep checkpoints there (keep < 1 keeps one).
// It returns the checkpoint's folder.
func Write(dir string, c *Checkpoint, keep int) (string, error) {
	if c.Model == nil {
		return "", errors.New("checkpoint: no model")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".writing-")
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	final := filepath.Join(dir, fmt.Sprintf("%s%08d", folderPrefix, c.Meta.State.Steps))
	fail := func(err error) (string, error) {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("checkpoint %s: %w", final, err)
	}
	meta := c.Meta
	meta.Format = Format
	if meta.Created.IsZero() {
		meta.Created = time.Now().UTC()
	}
	data, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return fail(err)
	}
	if err := writeSynced(filepath.Join(tmp, MetaFile), append(data, '\n')); err != nil {
		return fail(err)
	}
	if err := onnx.Save(c.Model, filepath.Join(tmp, ModelFile)); err != nil {
		return fail(err)
	}
	if err := onnx.Save(stateModel(c.Optimizer), filepath.Join(tmp, OptimizerFile)); err != nil {
		return fail(err)
	}
	if c.CSV != nil {
		if err := writeSynced(filepath.Join(tmp, CSVFile), c.CSV); err != nil {
			return fail(err)
		}
	}
	if err := syncDir(tmp); err != nil {
		return fail(err)
	}
	// A checkpoint of the same step (the final one of a run whose last
	// periodic checkpoint fell on its last step) is replaced.
	if _, err := os.Stat(final); err == nil {
		if err := os.RemoveAll(final); err != nil {
			return fail(err)
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		return fail(err)
	}
	if err := syncDir(dir); err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", final, err)
	}
	all, err := list(dir)
	if err != nil {
		return final, nil // written; the old ones stay
	}
	for len(all) > max(keep, 1) {
		os.RemoveAll(filepath.Join(dir, all[0]))
		all = all[1:]
	}
	return final, nil
}

// Latest reads the newest checkpoint in dir. It is an error when dir holds
// none.
func Latest(dir string) (*Checkpoint, error) {
	all, err := list(dir)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("resume: %s holds no checkpoint (no %s* folder)", dir, folderPrefix)
	}
	return Read(filepath.Join(dir, all[len(all)-1]))
}

// Read reads the checkpoint in folder.
func Read(folder string) (*Checkpoint, error) {
	fail := func(err error) (*Checkpoint, error) { return nil, fmt.Errorf("checkpoint %s: %w", folder, err) }
	data, err := os.ReadFile(filepath.Join(folder, MetaFile))
	if err != nil {
		return fail(err)
	}
	c := &Checkpoint{Dir: folder}
	if err := json.Unmarshal(data, &c.Meta); err != nil {
		return fail(fmt.Errorf("%s: %w", MetaFile, err))
	}
	if c.Meta.Format != Format {
		return fail(fmt.Errorf("%s: format %q, want %q", MetaFile, c.Meta.Format, Format))
	}
	if c.Model, err = onnx.Load(filepath.Join(folder, ModelFile)); err != nil {
		return fail(err)
	}
	sm, err := onnx.Load(filepath.Join(folder, OptimizerFile))
	if err != nil {
		return fail(err)
	}
	c.Optimizer = map[string]*onnx.Tensor{}
	for _, in := range sm.Graph.Initializers {
		c.Optimizer[in.Name] = in.Tensor
	}
	switch csv, err := os.ReadFile(filepath.Join(folder, CSVFile)); {
	case err == nil:
		c.CSV = csv
	case !errors.Is(err, os.ErrNotExist):
		return fail(err)
	}
	return c, nil
}

// Params returns the model's initializers by name: the run's parameters.
func (c *Checkpoint) Params() map[string]*onnx.Tensor {
	out := map[string]*onnx.Tensor{}
	for _, in := range c.Model.Graph.Initializers {
		out[in.Name] = in.Tensor
	}
	return out
}

// list returns the names of dir's checkpoint folders, oldest first.
func list(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), folderPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		if _, err := strconv.Atoi(rest); err == nil {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// stateModel holds tensors as the initializers of an ONNX model with no
// nodes: a container every ONNX tool reads.
func stateModel(state map[string]*onnx.Tensor) *onnx.Model {
	names := make([]string, 0, len(state))
	for n := range state {
		names = append(names, n)
	}
	sort.Strings(names)
	g := &onnx.Graph{Name: "optimizer_state"}
	for _, n := range names {
		g.Initializers = append(g.Initializers, &onnx.Initializer{Name: n, Tensor: state[n]})
	}
	return &onnx.Model{IRVersion: 8, Opsets: map[string]int64{"": 17}, ProducerName: "deep500-go", Graph: g}
}

// writeSynced writes a file and flushes it to the disk.
func writeSynced(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	return errors.Join(werr, serr, cerr)
}

// syncDir flushes a folder's entries (new files, renames) to the disk.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
