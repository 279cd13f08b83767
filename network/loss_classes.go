package network

import (
	"fmt"

	"github.com/deep500/deep500-go/onnx"
)

// oneHotMinOpset is the ai.onnx opset from which OneHot takes a negative
// axis, which AppendClassLoss uses.
const oneHotMinOpset = 11

// AppendClassLoss appends a loss of kind to m's main graph, like
// AppendLoss, for a classifier trained on int64 class labels [N] whatever
// the loss: softmax-xent takes them as they are; for the losses that
// compare tensors (mse, l1, bce-logits) the graph turns them into one-hot
// targets [N, C] of the output's type (OneHot, then the loss), so the same
// datasets and the same accuracy measure serve every loss. output must be
// scores [N, C] with C known, and the model must import ai.onnx 11 or
// above. It returns the loss's name; the labels input is named labels
// ("labels" when empty).
func AppendClassLoss(m *onnx.Model, kind LossKind, output, labels string) (string, error) {
	if kind == LossSoftmaxCrossEntropy {
		return AppendLoss(m, kind, output, labels)
	}
	if m == nil || m.Graph == nil {
		return "", fmt.Errorf("append loss: the model has no graph")
	}
	g := m.Graph
	if labels == "" {
		labels = "labels"
	}
	used := lossUsedNames(g)
	if used[labels] {
		return "", fmt.Errorf("append loss: the labels input %q would clash with a value of the graph of that name", labels)
	}
	t := g.TypeOf(output)
	if t == nil || t.Kind != onnx.TensorKind || !t.HasShape || len(t.Shape) != 2 || t.Shape[1].Size <= 0 {
		return "", fmt.Errorf("append loss: %s on class labels needs %q to be declared as scores [N, C] with a known C, got %v", kind, output, t)
	}
	classes := t.Shape[1].Size
	var values *onnx.Tensor
	switch t.Elem {
	case onnx.Float:
		values = onnx.FromSlice([]float32{0, 1}, 2)
	case onnx.Double:
		values = onnx.FromSlice([]float64{0, 1}, 2)
	default:
		return "", fmt.Errorf("append loss: one-hot targets of type %v are not supported (float or double scores only)", t.Elem)
	}
	if m.Opsets[""] < oneHotMinOpset {
		return "", fmt.Errorf("append loss: %s on class labels needs ai.onnx opset %d or above (OneHot), the model imports %d", kind, oneHotMinOpset, m.Opsets[""])
	}
	fresh := func(base string) string {
		name := base
		for i := 1; used[name] || name == labels; i++ {
			name = fmt.Sprintf("%s_%d", base, i)
		}
		used[name] = true
		return name
	}
	targets := fresh(labels + "_onehot")
	depth, onOff := fresh(labels+"_classes"), fresh(labels+"_off_on")
	loss, err := AppendLoss(m, kind, output, targets)
	if err != nil {
		return "", err
	}
	// AppendLoss made targets the last graph input and the loss the last
	// node: targets becomes the output of OneHot nodes placed before it.
	opset := m.Opsets[""]
	constant := func(name string, v *onnx.Tensor) *onnx.Node {
		return &onnx.Node{Name: name, OpType: "Constant", Outputs: []string{name}, Opset: opset, Graph: g,
			Attributes: []*onnx.Attribute{{Name: "value", Type: onnx.AttrTensor, Tensor: v}}}
	}
	nodes := []*onnx.Node{
		constant(depth, onnx.Scalar(classes)),
		constant(onOff, values),
		{Name: targets, OpType: "OneHot", Inputs: []string{labels, depth, onOff}, Outputs: []string{targets}, Opset: opset, Graph: g,
			Attributes: []*onnx.Attribute{{Name: "axis", Type: onnx.AttrInt, Int: -1}}},
	}
	for _, n := range nodes {
		if err := lossTypeNode(n); err != nil {
			return "", err
		}
	}
	last := len(g.Nodes) - 1
	g.Nodes = append(g.Nodes[:last], append(nodes, g.Nodes[last])...)
	g.Inputs[len(g.Inputs)-1] = &onnx.ValueInfo{Name: labels,
		Type: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: onnx.Int64, HasShape: true, Shape: []onnx.Dim{t.Shape[0]}}}
	return loss, nil
}
