package autodiff

import (
	"fmt"
	"slices"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// Probe measures the type and shape of every tensor of m's main graph by
// running it: build makes a network of m (any backend), and each feed set
// is one inference. A dim that differs between the feed sets (the batch
// dimension, when two sets of different batch sizes are given) is -1 in
// the result: the training graph then works for any size there.
func Probe(build func(*onnx.Model) (network.Network, error), m *onnx.Model, feeds ...map[string]onnx.Value) (map[string]Info, error) {
	if len(feeds) == 0 {
		return nil, fmt.Errorf("probe: no feeds to run the model on")
	}
	net, err := build(m)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	defer net.Close()
	g := m.Graph
	outs := map[string]bool{}
	for _, o := range net.Outputs() {
		outs[o] = true
	}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o != "" && !outs[o] {
				if err := net.AddOutput(o); err != nil {
					return nil, fmt.Errorf("probe: expose %q: %w", o, err)
				}
				outs[o] = true
			}
		}
	}
	info := map[string]Info{}
	for k, fs := range feeds {
		res, err := net.Inference(fs)
		if err != nil {
			return nil, fmt.Errorf("probe: %w", err)
		}
		vals := map[string]onnx.Value{}
		for name, v := range fs {
			vals[name] = v
		}
		for _, in := range g.Initializers {
			if _, fed := vals[in.Name]; !fed {
				vals[in.Name] = in.Tensor
			}
		}
		for name, v := range res {
			vals[name] = v
		}
		seen := map[string]bool{}
		for name, v := range vals {
			t, ok := v.(*onnx.Tensor)
			if !ok {
				continue
			}
			seen[name] = true
			shape := make([]int64, len(t.Shape))
			for i, d := range t.Shape {
				shape[i] = int64(d)
			}
			prev, had := info[name]
			ints := smallInts(t)
			switch {
			case k == 0:
				info[name] = Info{Type: t.Type, Shape: shape, Ints: ints}
			case !had:
			case len(prev.Shape) != len(shape):
				return nil, fmt.Errorf("probe: %q has rank %d in one run and %d in another", name, len(prev.Shape), len(shape))
			default:
				for i := range shape {
					if prev.Shape[i] != shape[i] {
						prev.Shape[i] = -1
					}
				}
				if !slices.Equal(prev.Ints, ints) {
					prev.Ints = nil
				}
				info[name] = prev
			}
		}
		if k > 0 {
			for name := range info {
				if !seen[name] {
					delete(info, name)
				}
			}
		}
	}
	return info, nil
}

// smallIntsLimit bounds the integer tensors whose values the probe keeps.
const smallIntsLimit = 4096

// smallInts returns an integer tensor's values as int64s, nil for another
// type or a larger tensor.
func smallInts(t *onnx.Tensor) []int64 {
	if t.Len() > smallIntsLimit {
		return nil
	}
	switch d := t.Data.(type) {
	case []int64:
		return append([]int64{}, d...)
	case []int32:
		out := make([]int64, len(d))
		for i, v := range d {
			out[i] = int64(v)
		}
		return out
	}
	return nil
}
