package native

import (
	"fmt"

	"github.com/deep500/deep500-go/onnx"
)

// FetchInto implements network.IntoFetcher: Fetch of one tensor into the
// caller's buffer, without allocating. A gradient that no backward path
// reached is zeros, as Fetch reports it.
func (e *executor) FetchInto(name string, dst *onnx.Tensor) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if dst == nil {
		return fmt.Errorf("native: fetch %q into a nil tensor", name)
	}
	var src *onnx.Tensor
	zero := false // an unreached gradient: zeros shaped like src, its value
	if st := e.lastGrads; st != nil {
		if slot, ok := st.names[name]; ok {
			if g := st.grads[slot]; g != nil {
				src = g
			} else if p, ok := e.slots[slot].(*onnx.Tensor); ok && p != nil {
				src, zero = p, true
			} else {
				return fmt.Errorf("native: no gradient for %q yet", name)
			}
		}
	}
	if src == nil {
		s, ok := e.slotOf[name]
		if !ok {
			return fmt.Errorf("native: no value named %q in the graph", name)
		}
		t, ok := e.slots[s].(*onnx.Tensor)
		if !ok || t == nil {
			return fmt.Errorf("native: %q has no tensor value yet (it is computed by Inference)", name)
		}
		src = t
	}
	if src.Type != dst.Type || !sameShape(src.Shape, dst.Shape) {
		return fmt.Errorf("native: fetch %q: value is %v %v, buffer %v %v", name, src.Type, src.Shape, dst.Type, dst.Shape)
	}
	if zero {
		zeroData(dst)
		return nil
	}
	onnx.CopySlice(dst.Data, src.Data)
	return nil
}

// zeroData sets every element of t to zero.
func zeroData(t *onnx.Tensor) {
	switch d := t.Data.(type) {
	case []float32:
		clear(d)
	case []float64:
		clear(d)
	case []uint16: // float16 and bfloat16 bit patterns
		clear(d)
	default:
		onnx.CopySlice(t.Data, onnx.NewTensor(t.Type, t.Shape...).Data)
	}
}
