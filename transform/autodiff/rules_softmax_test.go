package autodiff_test

import (
	"fmt"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func TestSoftmaxGradients(t *testing.T) {
	for _, op := range []string{"Softmax", "LogSoftmax"} {
		for _, opset := range []int64{9, 11, 13, 17} {
			for _, c := range []struct {
				shape []int
				axis  *int64
			}{
				{[]int{3, 5}, nil},
				{[]int{2, 3, 4}, nil},
				{[]int{2, 3, 4}, new(int64(0))},
				{[]int{2, 3, 4}, new(int64(1))},
				{[]int{2, 3, 4}, new(int64(2))},
				{[]int{2, 3, 4}, new(int64(-1))},
				{[]int{2, 3, 2, 3}, new(int64(-2))},
			} {
				name := fmt.Sprintf("%s-%d/%v", op, opset, c.shape)
				var attrs []*onnx.Attribute
				if c.axis != nil {
					name += fmt.Sprintf("/axis%d", *c.axis)
					attrs = append(attrs, intAttr("axis", *c.axis))
				}
				t.Run(name, func(t *testing.T) {
					m := newModel(t, opset)
					m.input("x", m.randn(c.shape...))
					m.node(op, []string{"x"}, []string{"y"}, attrs...)
					checkGradients(t, m, "y")
				})
			}
		}
	}
}

func TestSoftmaxGradientsDouble(t *testing.T) {
	for _, op := range []string{"Softmax", "LogSoftmax"} {
		for _, opset := range []int64{11, 13} {
			m := newModel(t, opset)
			m.input("x", elemDouble(m.randn(2, 3, 4)))
			m.node(op, []string{"x"}, []string{"s"}, intAttr("axis", 1))
			elemToFloat(m, "s", "y")
			checkGradients(t, m, "y")
		}
	}
}

func TestSoftmaxGradientsFreeBatch(t *testing.T) {
	for _, op := range []string{"Softmax", "LogSoftmax"} {
		for _, c := range []struct {
			opset, axis int64
		}{{11, 1}, {11, 0}, {13, -1}, {13, 0}} {
			checkBatches(t, c.opset, func(m *model, batch int) {
				m.input("x", m.randn(batch, 3, 4))
				m.node(op, []string{"x"}, []string{"y"}, intAttr("axis", c.axis))
			}, "y")
		}
	}
}
