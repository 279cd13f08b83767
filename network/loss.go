package network

import (
	"fmt"
	"strconv"

	"github.com/deep500/deep500-go/onnx"
)

// LossDomain is the operator domain of the project's own operators (the
// loss operators of package ops).
const LossDomain = "ai.deep500"

// LossOpsetVersion is the version of LossDomain a model imports to use
// them.
const LossOpsetVersion = 1

// LossKind names a loss AppendLoss can add; the names are those of
// `d500 train --loss`.
type LossKind string

// The losses AppendLoss knows.
const (
	// LossSoftmaxCrossEntropy is ONNX's SoftmaxCrossEntropyLoss (mean
	// reduction) of scores [N, C, ...] and int64 class labels [N, ...].
	LossSoftmaxCrossEntropy LossKind = "softmax-xent"
	// LossMeanSquaredError is ai.deep500's MeanSquaredError (mean
	// reduction) against labels of the output's type and shape.
	LossMeanSquaredError LossKind = "mse"
	// LossL1 is ai.deep500's L1Loss (mean reduction), labels as for mse.
	LossL1 LossKind = "l1"
	// LossBinaryCrossEntropyWithLogits is ai.deep500's
	// BinaryCrossEntropyWithLogits (mean reduction) of logits against
	// targets in [0, 1] of the output's type and shape.
	LossBinaryCrossEntropyWithLogits LossKind = "bce-logits"
)

// LossKinds lists the kinds AppendLoss accepts.
func LossKinds() []LossKind {
	return []LossKind{LossSoftmaxCrossEntropy, LossMeanSquaredError, LossL1, LossBinaryCrossEntropyWithLogits}
}

// ParseLossKind returns the kind of that name, or an error listing the
// known ones.
func ParseLossKind(s string) (LossKind, error) {
	for _, k := range LossKinds() {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown loss %q (known: softmax-xent, mse, l1, bce-logits)", s)
}

// lossMinOpset is the ai.onnx opset that defines SoftmaxCrossEntropyLoss.
const lossMinOpset = 12

// AppendLoss appends a loss of the value named output to m's main graph,
// in place, and returns the name of the loss, a scalar graph output that
// InferenceAndBackprop can differentiate. It adds a graph input named
// labels ("labels" when empty), which must not name an existing value: for
// softmax-xent, int64 class labels shaped like output without its class
// dimension 1 ([N] for scores [N, C]); for the other kinds, labels of
// output's element type and shape (float when output has no declared
// type). The loss is named "loss", or "loss_1", "loss_2", ... when taken.
//
// The model's opset imports are completed: LossDomain for the custom
// losses, and, for softmax-xent, ai.onnx 12 or above — a model that imports
// an older ai.onnx opset is moved to 12 only when no node of its graphs
// resolves to another schema version there (its meaning is unchanged);
// otherwise AppendLoss fails.
//
// The new node gets its typed operator from the registry, which package
// ops fills when it is imported (every backend imports it).
func AppendLoss(m *onnx.Model, kind LossKind, output, labels string) (lossName string, err error) {
	if m == nil || m.Graph == nil {
		return "", fmt.Errorf("append loss: the model has no graph")
	}
	g := m.Graph
	used := lossUsedNames(g)
	if output == "" || !used[output] {
		return "", fmt.Errorf("append loss: %q is not a value of the graph", output)
	}
	if !lossDefined(g, output) {
		return "", fmt.Errorf("append loss: %q is not a graph input, an initializer or a node output", output)
	}
	if labels == "" {
		labels = "labels"
	}
	if used[labels] {
		return "", fmt.Errorf("append loss: the labels input %q would clash with a value of the graph of that name", labels)
	}
	lossName = "loss"
	for i := 1; used[lossName] || lossName == labels; i++ {
		lossName = "loss_" + strconv.Itoa(i)
	}
	outType := g.TypeOf(output)
	if outType == nil {
		if t := g.Initializer(output); t != nil {
			outType = onnx.TensorTypeOf(t)
		}
	}
	if outType != nil && outType.Kind != onnx.TensorKind {
		return "", fmt.Errorf("append loss: %q is a %v, not a tensor", output, outType)
	}
	elem := onnx.Float
	if outType != nil && outType.Elem != onnx.Undefined {
		elem = outType.Elem
	}
	if !elem.IsFloat() {
		return "", fmt.Errorf("append loss: %q is a tensor(%v), not of a floating-point type", output, elem)
	}

	node := &onnx.Node{Name: lossName, Inputs: []string{output, labels}, Outputs: []string{lossName}, Graph: g}
	var labelType *onnx.TypeInfo
	switch kind {
	case LossSoftmaxCrossEntropy:
		node.OpType = "SoftmaxCrossEntropyLoss"
		labelType = &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Int64}
		if outType != nil && outType.HasShape {
			if len(outType.Shape) < 2 {
				return "", fmt.Errorf("append loss: softmax-xent needs scores of shape [N, C, ...], %q has rank %d", output, len(outType.Shape))
			}
			labelType.HasShape = true
			labelType.Shape = append([]onnx.Dim{outType.Shape[0]}, outType.Shape[2:]...)
		}
	case LossMeanSquaredError, LossL1, LossBinaryCrossEntropyWithLogits:
		node.OpType = map[LossKind]string{
			LossMeanSquaredError:             "MeanSquaredError",
			LossL1:                           "L1Loss",
			LossBinaryCrossEntropyWithLogits: "BinaryCrossEntropyWithLogits",
		}[kind]
		node.Domain = LossDomain
		labelType = &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: elem}
		if outType != nil && outType.HasShape {
			labelType.HasShape = true
			labelType.Shape = append([]onnx.Dim(nil), outType.Shape...)
		}
	default:
		return "", fmt.Errorf("append loss: unknown loss kind %q (known: softmax-xent, mse, l1, bce-logits)", kind)
	}

	// Opset imports: decide before changing anything.
	if m.Opsets == nil {
		m.Opsets = map[string]int64{}
	}
	raise := int64(0)
	if node.Domain == "" {
		if cur, ok := m.Opsets[""]; !ok || cur < lossMinOpset {
			if err := CheckOpsetRaise(g, cur, lossMinOpset); err != nil {
				return "", fmt.Errorf("append loss: softmax-xent needs ai.onnx opset %d, but the model imports opset %d and %w", lossMinOpset, cur, err)
			}
			raise = lossMinOpset
		}
	}
	opset := int64(LossOpsetVersion)
	if node.Domain == "" {
		opset = max(m.Opsets[""], raise)
	} else if cur := m.Opsets[LossDomain]; cur > opset {
		opset = cur
	}
	node.Opset = opset
	if err := lossTypeNode(node); err != nil {
		return "", err
	}

	if raise > 0 {
		m.Opsets[""] = raise
		SetOpset(g, raise)
	}
	if node.Domain == LossDomain && m.Opsets[LossDomain] < LossOpsetVersion {
		m.Opsets[LossDomain] = LossOpsetVersion
	}
	g.Inputs = append(g.Inputs, &onnx.ValueInfo{Name: labels, Type: labelType})
	g.Nodes = append(g.Nodes, node)
	g.Outputs = append(g.Outputs, &onnx.ValueInfo{Name: lossName,
		Type: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: elem, HasShape: true}})
	return lossName, nil
}

// lossTypeNode types a node AppendLoss adds.
func lossTypeNode(n *onnx.Node) error { return typeNode(n, "append loss") }

// typeNode is onnx.TypeNode with errors that start with context.
func typeNode(n *onnx.Node, context string) error {
	if err := onnx.TypeNode(n); err != nil {
		return fmt.Errorf("%s: %w", context, err)
	}
	return nil
}

// lossDefined reports whether name is a value the main graph defines.
func lossDefined(g *onnx.Graph, name string) bool {
	for _, in := range g.Inputs {
		if in.Name == name {
			return true
		}
	}
	if g.Initializer(name) != nil {
		return true
	}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o == name {
				return true
			}
		}
	}
	return false
}

// lossUsedNames collects every value and node name of g and of the graphs
// nested in its nodes' attributes.
func lossUsedNames(g *onnx.Graph) map[string]bool {
	used := map[string]bool{}
	var walk func(g *onnx.Graph)
	walk = func(g *onnx.Graph) {
		for _, list := range [][]*onnx.ValueInfo{g.Inputs, g.Outputs, g.ValueInfo} {
			for _, v := range list {
				used[v.Name] = true
			}
		}
		for _, in := range g.Initializers {
			used[in.Name] = true
		}
		for _, in := range g.SparseInitializers {
			used[in.Name] = true
		}
		for _, n := range g.Nodes {
			if n.Name != "" {
				used[n.Name] = true
			}
			for _, s := range n.Inputs {
				used[s] = true
			}
			for _, s := range n.Outputs {
				used[s] = true
			}
			for _, a := range n.Attributes {
				if a.Graph != nil {
					walk(a.Graph)
				}
				for _, sg := range a.Graphs {
					walk(sg)
				}
			}
		}
	}
	walk(g)
	delete(used, "")
	return used
}

// LossValue reads the value of the loss named name from a run's outputs:
// a one-element float or double tensor.
func LossValue(outputs map[string]onnx.Value, name string) (float64, error) {
	v, ok := outputs[name]
	if !ok {
		return 0, fmt.Errorf("loss %q is not among the outputs", name)
	}
	t, ok := v.(*onnx.Tensor)
	if !ok || t.Len() != 1 {
		return 0, fmt.Errorf("loss %q is not a one-element tensor (got %s)", name, onnx.DescribeValue(v))
	}
	switch d := t.Data.(type) {
	case []float32:
		return float64(d[0]), nil
	case []float64:
		return d[0], nil
	}
	return 0, fmt.Errorf("loss %q is %v, not float or double", name, t.Type)
}
