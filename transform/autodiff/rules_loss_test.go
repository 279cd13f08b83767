package autodiff_test

import (
	"fmt"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// elemLossCase is one configuration of SoftmaxCrossEntropyLoss or
// NegativeLogLikelihoodLoss.
type elemLossCase struct {
	op        string
	opset     int64
	reduction string
	shape     []int  // the scores' [N, C, d…]
	weights   bool   // a weights initializer (differentiable in version 12)
	ignore    *int64 // ignore_index; some labels are set to it
	allIgnore bool   // every label is ignore_index
	logProb   bool   // SCE's log_prob output feeds the output too
	int32     bool   // labels of type int32
}

func (c elemLossCase) name() string {
	s := fmt.Sprintf("%s-%d/%s/%v", c.op, c.opset, c.reduction, c.shape)
	if c.weights {
		s += "/weights"
	}
	if c.ignore != nil {
		s += fmt.Sprintf("/ignore%d", *c.ignore)
	}
	if c.allIgnore {
		s += "/all"
	}
	if c.logProb {
		s += "/log_prob"
	}
	if c.int32 {
		s += "/int32"
	}
	return s
}

// build makes the model at batch size n (the first dim of c.shape is
// replaced): y is the loss, or with log_prob, log_prob² plus the loss.
func (c elemLossCase) build(m *model, n int) {
	shape := append([]int{n}, c.shape[1:]...)
	classes := shape[1]
	m.input("x", m.randn(shape...))
	lshape := append([]int{shape[0]}, shape[2:]...)
	labels := onnx.NewTensor(onnx.Int64, lshape...)
	for i := range labels.Int64s() {
		labels.Int64s()[i] = int64(m.rng.IntN(classes))
		if c.ignore != nil && (c.allIgnore || i%3 == 1) {
			labels.Int64s()[i] = *c.ignore
		}
	}
	if c.int32 {
		l32 := onnx.NewTensor(onnx.Int32, lshape...)
		for i, v := range labels.Int64s() {
			l32.Data.([]int32)[i] = int32(v)
		}
		labels = l32
	}
	m.input("labels", labels)
	ins := []string{"x", "labels"}
	if c.weights {
		if n == c.shape[0] {
			m.param("w", elemUniform(m, 0.2, 2, classes))
		}
		ins = append(ins, "w")
	}
	attrs := []*onnx.Attribute{strAttr("reduction", c.reduction)}
	if c.ignore != nil {
		attrs = append(attrs, intAttr("ignore_index", *c.ignore))
	}
	if !c.logProb {
		m.node(c.op, ins, []string{"y"}, attrs...)
		return
	}
	m.node(c.op, ins, []string{"loss", "lp"}, attrs...)
	m.node("Mul", []string{"lp", "lp"}, []string{"lp2"})
	loss := "loss"
	if c.reduction == "none" {
		if m.opset < 13 {
			m.node("Unsqueeze", []string{"loss"}, []string{"lossu"}, ints("axes", 1))
		} else {
			m.param("one", onnx.FromSlice([]int64{1}, 1))
			m.node("Unsqueeze", []string{"loss", "one"}, []string{"lossu"})
		}
		loss = "lossu"
	}
	m.node("Add", []string{"lp2", loss}, []string{"y"})
}

func elemLossCases() []elemLossCase {
	var cases []elemLossCase
	for _, op := range []string{"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"} {
		opsets := []int64{12, 13, 17}
		if op == "NegativeLogLikelihoodLoss" {
			opsets = []int64{12, 13, 22}
		}
		for _, opset := range opsets {
			for _, red := range []string{"none", "sum", "mean"} {
				for _, shape := range [][]int{{4, 3}, {2, 3, 2, 3}} {
					for _, weights := range []bool{false, true} {
						for _, ignore := range []*int64{nil, new(int64(-1)), new(int64(1))} {
							cases = append(cases, elemLossCase{op: op, opset: opset, reduction: red, shape: shape, weights: weights, ignore: ignore})
						}
					}
				}
			}
		}
		cases = append(cases,
			elemLossCase{op: op, opset: 13, reduction: "mean", shape: []int{3, 4}, ignore: new(int64(2)), allIgnore: true},
			elemLossCase{op: op, opset: 12, reduction: "mean", shape: []int{3, 4}, weights: true, ignore: new(int64(0)), allIgnore: true},
			elemLossCase{op: op, opset: 13, reduction: "mean", shape: []int{3, 4, 2}, weights: true, int32: true},
		)
	}
	for _, opset := range []int64{12, 13} {
		for _, red := range []string{"none", "sum", "mean"} {
			for _, shape := range [][]int{{4, 3}, {2, 3, 4}} {
				cases = append(cases,
					elemLossCase{op: "SoftmaxCrossEntropyLoss", opset: opset, reduction: red, shape: shape, logProb: true},
					elemLossCase{op: "SoftmaxCrossEntropyLoss", opset: opset, reduction: red, shape: shape, logProb: true, weights: true, ignore: new(int64(1))})
			}
		}
	}
	return cases
}

func TestCrossEntropyGradients(t *testing.T) {
	for _, c := range elemLossCases() {
		t.Run(c.name(), func(t *testing.T) {
			m := newModel(t, c.opset)
			c.build(m, c.shape[0])
			checkGradients(t, m, "y")
		})
	}
}

func TestCrossEntropyGradientsFreeBatch(t *testing.T) {
	for _, c := range elemLossCases() {
		if c.allIgnore || c.opset == 17 || c.opset == 22 {
			continue
		}
		c.shape = append([]int{2}, c.shape[1:]...)
		t.Run(c.name(), func(t *testing.T) {
			checkBatches(t, c.opset, func(m *model, batch int) { c.build(m, batch) }, "y")
		})
	}
}
