package network

import "github.com/deep500/deep500-go/onnx"

// IntoRunner is implemented by a Network that can write a run's outputs
// into values the caller keeps from run to run. Inference must return
// fresh copies, which allocates at every call; a serving loop or a
// benchmark that runs the same shapes again and again uses InferenceInto
// instead and, after its first call, allocates nothing.
type IntoRunner interface {
	// InferenceInto runs the graph on feeds, as Inference does, and puts
	// every output into dst under its name: a tensor already there with
	// the output's type and shape is overwritten in place; anything else
	// (no entry, another type or shape, a sequence) is replaced by a new
	// copy.
	InferenceInto(feeds map[string]onnx.Value, dst map[string]onnx.Value) error
}

// InferInto runs n on feeds and leaves its outputs in dst (allocated when
// nil), through IntoRunner when n implements it and through Inference
// otherwise. It returns dst.
func InferInto(n Network, feeds, dst map[string]onnx.Value) (map[string]onnx.Value, error) {
	if dst == nil {
		dst = map[string]onnx.Value{}
	}
	if r, ok := n.(IntoRunner); ok {
		return dst, r.InferenceInto(feeds, dst)
	}
	out, err := n.Inference(feeds)
	if err != nil {
		return dst, err
	}
	for k, v := range out {
		dst[k] = v
	}
	return dst, nil
}

// IntoTrainer is IntoRunner for a training pass: the outputs of
// InferenceAndBackprop written into values the caller keeps, so that a
// training step whose shapes repeat allocates nothing for them.
type IntoTrainer interface {
	// InferenceAndBackpropInto runs InferenceAndBackprop on feeds for
	// loss and puts every output into dst as InferenceInto does.
	InferenceAndBackpropInto(feeds map[string]onnx.Value, loss string, dst map[string]onnx.Value) error
}

// BackpropInto runs InferenceAndBackprop of n on feeds for loss and leaves
// its outputs in dst (allocated when nil), through IntoTrainer when n
// implements it. It returns dst.
func BackpropInto(n Network, feeds map[string]onnx.Value, loss string, dst map[string]onnx.Value) (map[string]onnx.Value, error) {
	if dst == nil {
		dst = map[string]onnx.Value{}
	}
	if r, ok := n.(IntoTrainer); ok {
		return dst, r.InferenceAndBackpropInto(feeds, loss, dst)
	}
	out, err := n.InferenceAndBackprop(feeds, loss)
	if err != nil {
		return dst, err
	}
	clear(dst)
	for k, v := range out {
		dst[k] = v
	}
	return dst, nil
}
