package transform

import (
	"fmt"
	"strings"

	"github.com/deep500/deep500-go/onnx"
)

// Options configure Optimize.
type Options struct {
	// Evaluate executes the nodes constant folding replaces by their
	// values; nil leaves constant folding out (see BackendEvaluator).
	Evaluate Evaluator
	// MaxFoldedElements bounds the size of a tensor constant folding may
	// store in the model, so that folding a ConstantOfShape or an Expand
	// does not bloat it (0: DefaultMaxFoldedElements).
	MaxFoldedElements int
	// MaxRounds bounds how many times the passes are repeated looking for
	// a fixed point (0: DefaultMaxRounds).
	MaxRounds int
}

// Defaults of Options.
const (
	DefaultMaxFoldedElements = 1 << 24
	DefaultMaxRounds         = 10
)

// Pass is one rewrite of a graph: it changes g in place (g belongs to the
// copy Optimize works on) and returns how many rewrites it made, 0 when it
// found nothing to do. A pass must leave the graph's meaning unchanged up
// to floating-point rounding and skip whatever it is unsure about.
type Pass struct {
	Name string
	Run  func(g *onnx.Graph, opts *Options) (int, error)
}

// Passes lists the inference passes in the order Optimize applies them in
// each round: no-ops go first so that folding sees producers next to their
// consumers, constants are folded before BatchNormalization (whose
// parameters may come from Constant nodes), and dead nodes go last. A new
// pass is a file with its Run function and one entry here.
func Passes() []Pass {
	return []Pass{
		{Name: "eliminate-noops", Run: eliminateNoops},
		{Name: "merge-reshapes", Run: mergeReshapes},
		{Name: "fold-constants", Run: foldConstants},
		{Name: "fold-batchnorm", Run: foldBatchNorm},
		{Name: "eliminate-dead", Run: eliminateDead},
	}
}

// PassCount is what one pass did over all rounds.
type PassCount struct {
	Pass  string
	Count int
}

// Report says what Optimize did.
type Report struct {
	Rounds                                int // rounds run, the last one changing nothing (unless MaxRounds stopped it)
	NodesBefore, NodesAfter               int
	InitializersBefore, InitializersAfter int
	Passes                                []PassCount // in the order of Passes
}

// String is one line a command-line tool can print:
// "optimize: 53 → 21 nodes, 106 → 43 initializers (eliminate-noops 2, fold-batchnorm 16, ...) in 2 rounds".
func (r Report) String() string {
	var parts []string
	for _, p := range r.Passes {
		parts = append(parts, fmt.Sprintf("%s %d", p.Pass, p.Count))
	}
	return fmt.Sprintf("optimize: %d → %d nodes, %d → %d initializers (%s) in %d rounds",
		r.NodesBefore, r.NodesAfter, r.InitializersBefore, r.InitializersAfter, strings.Join(parts, ", "), r.Rounds)
}

// Optimize returns a copy of m rewritten for inference by Passes, applied
// in rounds until a round changes nothing, and a report of what each pass
// did. m is not modified, nor are the tensors of its initializers: the
// copy shares the ones it keeps unchanged and has new ones where a pass
// computed new values.
func Optimize(m *onnx.Model, opts Options) (*onnx.Model, Report, error) {
	return Apply(m, opts, Passes())
}

// Apply is Optimize with a chosen list of passes.
func Apply(m *onnx.Model, opts Options, passes []Pass) (*onnx.Model, Report, error) {
	if m == nil || m.Graph == nil {
		return nil, Report{}, fmt.Errorf("transform: model has no graph")
	}
	if opts.MaxFoldedElements <= 0 {
		opts.MaxFoldedElements = DefaultMaxFoldedElements
	}
	if opts.MaxRounds <= 0 {
		opts.MaxRounds = DefaultMaxRounds
	}
	c, err := CloneModel(m)
	if err != nil {
		return nil, Report{}, err
	}
	rep := Report{NodesBefore: len(m.Graph.Nodes), InitializersBefore: len(m.Graph.Initializers)}
	for _, p := range passes {
		rep.Passes = append(rep.Passes, PassCount{Pass: p.Name})
	}
	for rep.Rounds < opts.MaxRounds {
		rep.Rounds++
		changed := 0
		for i, p := range passes {
			n, err := p.Run(c.Graph, &opts)
			if err != nil {
				return nil, Report{}, fmt.Errorf("transform: pass %s: %w", p.Name, err)
			}
			rep.Passes[i].Count += n
			changed += n
		}
		if changed == 0 {
			break
		}
	}
	rep.NodesAfter = len(c.Graph.Nodes)
	rep.InitializersAfter = len(c.Graph.Initializers)
	return c, rep, nil
}
