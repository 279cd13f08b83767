package transform

import (
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// eliminateNoops removes nodes whose output equals their input: Identity,
// Dropout in inference (its mask unused), and a Cast to the element type
// its input already has. Readers of the output read the input instead.
// When the output is a graph output, whose name must stay, the node
// producing the input is renamed to write the graph output instead; when
// that is impossible (the input is a graph input, an initializer or
// another graph output) the node stays. A value a subgraph reads is never
// renamed. Reshape, Flatten, Squeeze and Unsqueeze change the shape and
// are not no-ops (mergeReshapes shortens chains of them).
func eliminateNoops(g *onnx.Graph, _ *Options) (int, error) {
	x := indexGraph(g)
	drop := map[*onnx.Node]bool{}
	for _, n := range g.Nodes {
		in, out, ok := passThrough(x, n)
		if !ok || in == "" || out == "" || in == out || x.captured[out] {
			continue
		}
		if x.outputs[out] {
			p := x.producer[in]
			if p == nil || x.outputs[in] || x.captured[in] || x.inputs[in] {
				continue
			}
			x.forgetNode(n)
			if err := x.renameOutput(p, in, out); err != nil {
				return 0, err
			}
		} else {
			x.forgetNode(n)
			if err := x.redirectReaders(out, in); err != nil {
				return 0, err
			}
		}
		drop[n] = true
	}
	removeNodes(g, drop)
	return len(drop), nil
}

// passThrough reports whether n copies its input in to its output out and
// does nothing else that anything reads.
func passThrough(x *graphIndex, n *onnx.Node) (in, out string, ok bool) {
	switch op := n.Op.(type) {
	case *ops.Identity:
		return op.In.Input, op.Out.Output, true
	case *ops.Dropout:
		// Before version 7 Dropout had a training flavour chosen by is_test;
		// from 12 the training_mode input chooses, off when omitted.
		if op.SinceVersion() < 7 || (op.Out.Mask != "" && !x.unused(op.Out.Mask)) {
			return "", "", false
		}
		if op.In.TrainingMode != "" {
			t, isConst := x.constant(op.In.TrainingMode)
			if !isConst {
				return "", "", false
			}
			flags := t.Bools()
			if len(flags) != 1 || flags[0] {
				return "", "", false
			}
		}
		return op.In.Data, op.Out.Output, true
	case *ops.Cast:
		have, known := elemType(x, op.In.Input)
		return op.In.Input, op.Out.Output, known && int64(have) == op.To
	}
	return "", "", false
}

// elemType returns the element type of a tensor value when it is certain:
// an initializer's, a graph input's as declared (backends check feeds
// against it), or a Cast's target.
func elemType(x *graphIndex, name string) (onnx.DataType, bool) {
	if t, ok := x.inits[name]; ok && t != nil {
		return t.Type, true
	}
	if x.inputs[name] {
		ti := x.g.TypeOf(name)
		if ti != nil && ti.Kind == onnx.TensorKind {
			return ti.Elem, true
		}
		return 0, false
	}
	if p := x.producer[name]; p != nil {
		if c, ok := p.Op.(*ops.Cast); ok && c.Out.Output == name {
			return onnx.DataType(c.To), true
		}
	}
	return 0, false
}
