package network

import (
	"fmt"

	"github.com/deep500/deep500-go/onnx"
)

// batchNormTrainingOpset is the first ai.onnx opset whose
// BatchNormalization has the training_mode attribute.
const batchNormTrainingOpset = 14

// RunningStat pairs a BatchNormalization running statistic (an
// initializer: the running mean or variance) with the graph output that
// holds its updated value after a training-mode run. Training copies
// Updated into Param after every step, so the statistics evaluation uses
// follow the batches seen, as in PyTorch's train()/eval() modes.
type RunningStat struct {
	Param, Updated string
}

// BatchNormTraining switches every BatchNormalization of m's main graph to
// training mode, in place: it normalises with the batch's statistics
// (training_mode 1), and its updated running mean and variance become
// graph outputs, named after the statistics with ".updated" appended. It
// returns the pairs to copy after each step. The node's momentum is the
// weight of the old running value, as ONNX defines it.
//
// A model without BatchNormalization is left alone (no pairs). One whose
// ai.onnx opset is below 14, where BatchNormalization has no training
// mode, or whose BatchNormalization lacks running statistics, is an error.
func BatchNormTraining(m *onnx.Model) ([]RunningStat, error) {
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("batch-norm training mode: the model has no graph")
	}
	g := m.Graph
	used := lossUsedNames(g)
	var stats []RunningStat
	for _, n := range g.Nodes {
		if n.OpType != "BatchNormalization" || n.Domain != "" {
			continue
		}
		if n.Opset < batchNormTrainingOpset {
			return nil, fmt.Errorf("batch-norm training mode: node %v is BatchNormalization of opset %d, which has no training mode (opset %d has)", n, n.Opset, batchNormTrainingOpset)
		}
		if len(n.Inputs) != 5 || g.Initializer(n.Inputs[3]) == nil || g.Initializer(n.Inputs[4]) == nil {
			return nil, fmt.Errorf("batch-norm training mode: node %v does not take its running mean and variance from initializers", n)
		}
		if len(n.Outputs) > 1 {
			return nil, fmt.Errorf("batch-norm training mode: node %v already has %d outputs", n, len(n.Outputs))
		}
		mode := n.Attr("training_mode")
		if mode == nil {
			mode = &onnx.Attribute{Name: "training_mode", Type: onnx.AttrInt}
			n.Attributes = append(n.Attributes, mode)
		}
		mode.Int = 1
		for _, stat := range n.Inputs[3:5] {
			out := stat + ".updated"
			for i := 1; used[out]; i++ {
				out = fmt.Sprintf("%s.updated_%d", stat, i)
			}
			used[out] = true
			n.Outputs = append(n.Outputs, out)
			stats = append(stats, RunningStat{Param: stat, Updated: out})
			t := g.Initializer(stat)
			g.Outputs = append(g.Outputs, &onnx.ValueInfo{Name: out, Type: onnx.TensorTypeOf(t)})
		}
		if err := typeNode(n, "batch-norm training mode"); err != nil {
			return nil, err
		}
	}
	return stats, nil
}

// CopyRunningStats feeds each statistic's updated value back into the
// statistic, after a training step. bufs holds a buffer per pair, reused
// across calls (see FetchTensorInto); it may be nil or shorter, and the
// returned slice is to be passed next time.
func CopyRunningStats(n Network, stats []RunningStat, bufs []*onnx.Tensor) ([]*onnx.Tensor, error) {
	return copyTensors(n, n, len(stats), func(i int) (string, string) { return stats[i].Updated, stats[i].Param }, bufs, "running statistic")
}

// CopyParams feeds every parameter of src (its floating-point
// initializers, trainable or frozen) into dst, which must be built from
// the same model: a training network's weights into the network that
// evaluates them. bufs is reused as in CopyRunningStats.
func CopyParams(dst, src Network, bufs []*onnx.Tensor) ([]*onnx.Tensor, error) {
	params := src.Params()
	return copyTensors(dst, src, len(params), func(i int) (string, string) { return params[i], params[i] }, bufs, "copy parameter")
}

// copyTensors feeds n tensors of src into dst: the i-th is fetched from
// src under the first name pair(i) gives and fed to dst under the second,
// through bufs[i] (grown to n entries and returned). Errors name the
// destination, after what.
func copyTensors(dst, src Network, n int, pair func(i int) (from, to string), bufs []*onnx.Tensor, what string) ([]*onnx.Tensor, error) {
	for len(bufs) < n {
		bufs = append(bufs, nil)
	}
	for i := range n {
		from, to := pair(i)
		t, err := FetchTensorInto(src, from, bufs[i])
		if err != nil {
			return bufs, fmt.Errorf("%s %q: %w", what, to, err)
		}
		bufs[i] = t
		if err := dst.Feed(to, t); err != nil {
			return bufs, fmt.Errorf("%s %q: %w", what, to, err)
		}
	}
	return bufs, nil
}
