package native

import (
	"fmt"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

var _ network.ParamUpdater = (*executor)(nil)

// UpdateParams implements network.ParamUpdater: fn gets each trainable
// parameter's own slot tensor and the gradient buffer of the last backward
// pass, so a native optimizer updates in place with no copies. The first
// time a parameter is handed out, the executor stops sharing it with the
// model's initializer (one copy, so the model is never modified).
func (e *executor) UpdateParams(loss string, fn func(param, grad *onnx.Tensor, name string) error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	bp, err := e.backwardFor(loss)
	if err != nil {
		return err
	}
	st := bp.state
	if e.lastGrads != st {
		return fmt.Errorf("native: no backward pass for loss %q to update from", loss)
	}
	for _, pg := range st.order {
		slot := e.slotOf[pg.Param]
		p, err := e.ownParam(slot)
		if err != nil {
			return err
		}
		g := st.grads[slot]
		if g == nil {
			g = st.bufs[slot].tensor(p.Type, p.Shape)
			clearTensor(g)
			st.grads[slot] = g
		}
		if err := fn(p, g, pg.Param); err != nil {
			return err
		}
	}
	return nil
}

// ownParam returns the tensor in a parameter's slot, which the caller may
// change in place: the model's initializer, a caller's feed, or a tensor
// that another slot shares (an Identity's output of the last run) is first
// replaced by a copy, so nothing outside the slot sees the change.
func (e *executor) ownParam(slot int) (*onnx.Tensor, error) {
	e.changed(slot) // the caller changes it: a packed copy is stale
	if t := e.writable(slot); t != nil {
		return t, nil
	}
	p, ok := e.slots[slot].(*onnx.Tensor)
	if !ok || p == nil {
		return nil, fmt.Errorf("native: parameter %q is %s, not a tensor", e.slotNames[slot], onnx.DescribeValue(e.slots[slot]))
	}
	c := p.Clone()
	e.slots[slot] = c
	if in, ok := e.inputOf[e.slotNames[slot]]; ok && in.held == p {
		in.held = c
	}
	e.own(slot)
	return c, nil
}

// writable returns the tensor in slot when the executor owns it and no
// other slot shares it; nil otherwise.
func (e *executor) writable(slot int) *onnx.Tensor {
	if slot >= len(e.owned) || !e.owned[slot] {
		return nil
	}
	t, ok := e.slots[slot].(*onnx.Tensor)
	if !ok || t == nil {
		return nil
	}
	for i, v := range e.slots {
		if i != slot && v == onnx.Value(t) {
			return nil
		}
	}
	return t
}

func (e *executor) own(slot int) {
	for len(e.owned) <= slot {
		e.owned = append(e.owned, false)
	}
	e.owned[slot] = true
}

func (e *executor) disown(slot int) {
	if slot < len(e.owned) {
		e.owned[slot] = false
	}
}

func clearTensor(t *onnx.Tensor) {
	switch d := t.Data.(type) {
	case []float32:
		clear(d)
	case []float64:
		clear(d)
	}
}
