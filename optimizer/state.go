package optimizer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// Stateful is an optimizer whose state can be saved and restored, so that a
// run stopped and resumed from a checkpoint continues exactly.
type Stateful interface {
	// State returns copies of the optimizer's state tensors by name (names
	// are the optimizer's own, stable across runs: e.g. "adam.m/conv1.W",
	// "adam.step/conv1.W"); the copies do not alias the optimizer's buffers.
	State() (map[string]*onnx.Tensor, error)
	// SetState replaces the state with one State returned by an optimizer
	// of the same kind and hyperparameters; a missing, extra or misshapen
	// tensor is an error naming it, and leaves the optimizer unchanged.
	SetState(map[string]*onnx.Tensor) error
}

// StateOf returns opt's state, or an error wrapping network.ErrUnsupported
// naming the optimizer's type when it is not Stateful.
func StateOf(opt any) (map[string]*onnx.Tensor, error) {
	s, ok := opt.(Stateful)
	if !ok {
		return nil, network.Unsupportedf("optimizer %T cannot save its state (it does not implement optimizer.Stateful)", opt)
	}
	return s.State()
}

// SetStateOf restores opt's state, or returns an error wrapping
// network.ErrUnsupported naming the optimizer's type when it is not
// Stateful.
func SetStateOf(opt any, state map[string]*onnx.Tensor) error {
	s, ok := opt.(Stateful)
	if !ok {
		return network.Unsupportedf("optimizer %T cannot restore a state (it does not implement optimizer.Stateful)", opt)
	}
	return s.SetState(state)
}

// The reference optimizers keep their state in per-parameter maps of three
// sorts: float64 buffers of the parameter's length, step counters and
// float64 scalars. A stateLayout lists an optimizer's maps, so that State
// and SetState are written once for all of them. A state tensor is named
// "<kind>.<field>/<parameter>": kind and field never hold a '/', so the
// first '/' ends them whatever the parameter's name holds (ONNX names such
// as "/conv1/Conv_output_0" do hold them).
//
// Buffers are saved as double tensors of shape [n] and scalars as double
// and int64 tensors of shape []: the same bits the optimizer computes with,
// so a restored run continues bit for bit. Only the presence of a
// parameter's entries says whether it has taken a step (SGD's first step
// sets the momentum buffer to the gradient, AcceleGrad's starts y and z at
// the parameter): a parameter with no entries stays without after
// SetState.

// stateLayout is where one optimizer keeps its state.
type stateLayout struct {
	kind   string // the names' prefix: "adam"
	fields []stateField
}

// stateField is one per-parameter map; exactly one of bufs, count and sum
// is set, pointing at the optimizer's own field so that SetState can
// replace the map.
type stateField struct {
	name  string
	bufs  *buffers
	count *map[string]int
	sum   *map[string]float64
	// kept reports whether the optimizer, with its hyperparameters, keeps
	// this map for every parameter it has updated (RMSprop keeps grad_avg
	// only when centered). A kept map must hold every parameter any kept
	// map holds; a map not kept must be absent from a state.
	kept bool
}

func (f *stateField) sort() string {
	switch {
	case f.bufs != nil:
		return "a double tensor of shape [n]"
	case f.count != nil:
		return "an int64 scalar"
	}
	return "a double scalar"
}

// names lists the layout's name patterns, for error messages.
func (l *stateLayout) names() string {
	var s []string
	for _, f := range l.fields {
		if f.kept {
			s = append(s, l.kind+"."+f.name+"/<param>")
		}
	}
	if len(s) == 0 {
		return "none with these hyperparameters"
	}
	return strings.Join(s, ", ")
}

// state returns copies of every entry of every map.
func (l *stateLayout) state() map[string]*onnx.Tensor {
	out := map[string]*onnx.Tensor{}
	for i := range l.fields {
		f := &l.fields[i]
		prefix := l.kind + "." + f.name + "/"
		switch {
		case f.bufs != nil:
			for p, b := range *f.bufs {
				c := make([]float64, len(b))
				copy(c, b)
				out[prefix+p] = onnx.FromSlice(c, len(c))
			}
		case f.count != nil:
			for p, c := range *f.count {
				out[prefix+p] = onnx.Scalar(int64(c))
			}
		case f.sum != nil:
			for p, s := range *f.sum {
				out[prefix+p] = onnx.Scalar(s)
			}
		}
	}
	return out
}

// setState checks the whole of in first and only then replaces the maps,
// so that an error leaves the optimizer as it was.
func (l *stateLayout) setState(in map[string]*onnx.Tensor) error {
	type parsed struct {
		bufs  buffers
		count map[string]int
		sum   map[string]float64
		has   map[string]bool
	}
	next := make([]parsed, len(l.fields))
	for i := range next {
		next[i] = parsed{bufs: buffers{}, count: map[string]int{}, sum: map[string]float64{}, has: map[string]bool{}}
	}
	bad := func(name, format string, args ...any) error {
		return fmt.Errorf("%s state: tensor %q %s", l.kind, name, fmt.Sprintf(format, args...))
	}
	// Sorted, so that of several faults the same one is reported each time.
	names := make([]string, 0, len(in))
	for name := range in {
		names = append(names, name)
	}
	slices.Sort(names)
	params := map[string]bool{}
	for _, name := range names {
		head, param, ok := strings.Cut(name, "/")
		fi := -1
		for i := range l.fields {
			if ok && head == l.kind+"."+l.fields[i].name {
				fi = i
			}
		}
		if fi < 0 || param == "" {
			return bad(name, "is not a state tensor of this optimizer (its names: %s)", l.names())
		}
		f := &l.fields[fi]
		if !f.kept {
			return bad(name, "is not a state tensor of this optimizer with its hyperparameters (its names: %s)", l.names())
		}
		t := in[name]
		if t == nil {
			return bad(name, "is nil")
		}
		if err := t.Check(); err != nil {
			return bad(name, "is malformed: %v", err)
		}
		switch {
		case f.bufs != nil:
			d, isDouble := t.Data.([]float64)
			if !isDouble || len(t.Shape) != 1 {
				return bad(name, "is %v of shape %v, want %s", t.Type, t.Shape, f.sort())
			}
			next[fi].bufs[param] = slices.Clone(d)
		case f.count != nil:
			d, isInt := t.Data.([]int64)
			if !isInt || len(t.Shape) != 0 {
				return bad(name, "is %v of shape %v, want %s", t.Type, t.Shape, f.sort())
			}
			if d[0] < 0 || int64(int(d[0])) != d[0] {
				return bad(name, "holds the count %d", d[0])
			}
			next[fi].count[param] = int(d[0])
		default:
			d, isDouble := t.Data.([]float64)
			if !isDouble || len(t.Shape) != 0 {
				return bad(name, "is %v of shape %v, want %s", t.Type, t.Shape, f.sort())
			}
			next[fi].sum[param] = d[0]
		}
		next[fi].has[param] = true
		params[param] = true
	}
	// Every parameter that has any state has all of it, and its buffers
	// agree on its length.
	ps := make([]string, 0, len(params))
	for p := range params {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	for _, p := range ps {
		witness, sized, size := "", "", 0
		for i := range l.fields {
			name := l.kind + "." + l.fields[i].name + "/" + p
			if !next[i].has[p] {
				continue
			}
			if witness == "" {
				witness = name
			}
			if b, ok := next[i].bufs[p]; ok {
				if sized != "" && len(b) != size {
					return bad(name, "has %d elements, %q %d: buffers of one parameter have its length", len(b), sized, size)
				}
				sized, size = name, len(b)
			}
		}
		for i := range l.fields {
			if f := &l.fields[i]; f.kept && !next[i].has[p] {
				return fmt.Errorf("%s state: tensor %q is missing (the state holds %q)", l.kind, l.kind+"."+f.name+"/"+p, witness)
			}
		}
	}
	for i := range l.fields {
		f := &l.fields[i]
		switch {
		case f.bufs != nil:
			*f.bufs = next[i].bufs
		case f.count != nil:
			*f.count = next[i].count
		default:
			*f.sum = next[i].sum
		}
	}
	return nil
}

func (o *SGD) layout() *stateLayout {
	return &stateLayout{kind: "sgd", fields: []stateField{
		{name: "momentum", bufs: &o.buf, kept: o.hp.Momentum != 0},
	}}
}

// State implements Stateful: the momentum buffers ("sgd.momentum/<param>"),
// none without momentum. A parameter without a buffer takes its first step
// next.
func (o *SGD) State() (map[string]*onnx.Tensor, error) { return o.layout().state(), nil }

// SetState implements Stateful.
func (o *SGD) SetState(s map[string]*onnx.Tensor) error { return o.layout().setState(s) }

func (o *Adam) layout() *stateLayout {
	kind := "adam"
	if o.decoupled {
		kind = "adamw"
	}
	return &stateLayout{kind: kind, fields: []stateField{
		{name: "m", bufs: &o.m, kept: true},
		{name: "v", bufs: &o.v, kept: true},
		{name: "step", count: &o.step, kept: true},
	}}
}

// State implements Stateful (for AdamW too, whose names begin "adamw."):
// "adam.m/<param>", "adam.v/<param>" and the step count "adam.step/<param>".
func (o *Adam) State() (map[string]*onnx.Tensor, error) { return o.layout().state(), nil }

// SetState implements Stateful.
func (o *Adam) SetState(s map[string]*onnx.Tensor) error { return o.layout().setState(s) }

func (o *Adagrad) layout() *stateLayout {
	return &stateLayout{kind: "adagrad", fields: []stateField{
		{name: "sum", bufs: &o.sum, kept: true},
		{name: "step", count: &o.step, kept: true},
	}}
}

// State implements Stateful: "adagrad.sum/<param>", "adagrad.step/<param>".
func (o *Adagrad) State() (map[string]*onnx.Tensor, error) { return o.layout().state(), nil }

// SetState implements Stateful.
func (o *Adagrad) SetState(s map[string]*onnx.Tensor) error { return o.layout().setState(s) }

func (o *RMSprop) layout() *stateLayout {
	return &stateLayout{kind: "rmsprop", fields: []stateField{
		{name: "square_avg", bufs: &o.sq, kept: true},
		{name: "grad_avg", bufs: &o.avg, kept: o.hp.Centered},
		{name: "momentum", bufs: &o.b, kept: o.hp.Momentum > 0},
	}}
}

// State implements Stateful: "rmsprop.square_avg/<param>", with
// "rmsprop.grad_avg/<param>" when centered and "rmsprop.momentum/<param>"
// with momentum.
func (o *RMSprop) State() (map[string]*onnx.Tensor, error) { return o.layout().state(), nil }

// SetState implements Stateful.
func (o *RMSprop) SetState(s map[string]*onnx.Tensor) error { return o.layout().setState(s) }

func (o *AcceleGrad) layout() *stateLayout {
	return &stateLayout{kind: "accelegrad", fields: []stateField{
		{name: "y", bufs: &o.y, kept: true},
		{name: "z", bufs: &o.z, kept: true},
		{name: "sum", sum: &o.sum, kept: true},
		{name: "step", count: &o.step, kept: true},
	}}
}

// State implements Stateful: "accelegrad.y/<param>", "accelegrad.z/<param>",
// the weighted sum of squared gradient norms "accelegrad.sum/<param>" and
// the iteration "accelegrad.step/<param>".
func (o *AcceleGrad) State() (map[string]*onnx.Tensor, error) { return o.layout().state(), nil }

// SetState implements Stateful.
func (o *AcceleGrad) SetState(s map[string]*onnx.Tensor) error { return o.layout().setState(s) }
