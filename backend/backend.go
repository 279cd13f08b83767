package backend

import (
	"fmt"
	"sort"
	"sync"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// importPath is where the backends' packages are: a backend registers
// itself when importPath+name is imported.
const importPath = "github.com/deep500/deep500-go/backend/"

// Known lists the backends of the design, whether or not they are linked
// into this binary.
var Known = []string{"native", "gorgonia", "onnxruntime"}

// Options configure a backend. A backend ignores what it has no use for.
type Options struct {
	// Threads bounds the worker goroutines or threads (0: all cores).
	Threads int
	// Settings holds backend-specific options as key=value strings, such as
	// the path of a shared library.
	Settings map[string]string
	// Frozen names parameters that backprop must leave out: they get no
	// gradient and are not listed by Gradients.
	Frozen []string
	// SkipInputGradients leaves the graph inputs out of backprop as well:
	// training reads only the parameters' gradients, and the input's (a
	// whole batch of images through the first layer) would be computed
	// for nothing. Gradient checks leave it unset.
	SkipInputGradients bool
	// Optimize lets the backend rewrite the graph for inference with
	// package transform before compiling it: fold constants and
	// BatchNormalization into the layer before it, drop no-ops (Identity,
	// inference Dropout) and dead nodes; the native backend also fuses
	// a Conv or Gemm with the residual Add and activation after it.
	// Parameters and intermediate values then differ from the model's
	// (folded weights have new names, removed values cannot be fetched), so
	// leave it off for training, gradient checks and anything that reads or
	// feeds parameters. Backends without graph passes ignore it (ONNX
	// Runtime optimizes on its own; gorgonia).
	Optimize bool
}

// Backend is a registered backend.
type Backend struct {
	Name string
	// New builds an executable network for the model.
	New func(m *onnx.Model, opts Options) (network.Network, error)
	// Supports reports whether the backend has a kernel for an operator
	// at a schema version; nil means it cannot say without a model.
	Supports func(domain, opType string, since int) bool
}

var (
	mu       sync.RWMutex
	backends = map[string]Backend{}
)

// Register makes a backend available under b.Name.
func Register(b Backend) {
	mu.Lock()
	defer mu.Unlock()
	backends[b.Name] = b
}

// Get returns the registered backend of that name.
func Get(name string) (Backend, error) {
	mu.RLock()
	b, ok := backends[name]
	mu.RUnlock()
	if ok {
		return b, nil
	}
	for _, k := range Known {
		if k == name {
			// A library user who forgot the blank import that registers
			// the backend gets the line to add.
			return Backend{}, network.Unsupportedf("backend %q is not available in this build: link it in with import _ %q", name, importPath+name)
		}
	}
	return Backend{}, fmt.Errorf("unknown backend %q (known: %v)", name, Known)
}

// New builds a network for model m with the backend named.
func New(name string, m *onnx.Model, opts Options) (network.Network, error) {
	b, err := Get(name)
	if err != nil {
		return nil, err
	}
	return b.New(m, opts)
}

// Names lists the registered backends, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	var out []string
	for n := range backends {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
