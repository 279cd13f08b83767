package autodiff

import (
	"fmt"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/transform"
)

// An update step appends an optimizer's update rule to a training graph,
// so that one run of the graph is a whole training step: forward, loss,
// gradients and the new parameters. The rules are those of package
// optimizer's reference optimizers (torch.optim's definitions), element
// by element, with the optimizer's state in the parameters' type (the
// reference keeps it in float64: trajectories agree to float tolerance,
// not bit for bit).

// StateValue is one tensor of optimizer state: fed as Input, its next
// value is the output Next; Init is its value before the first step.
type StateValue struct {
	Param, Input, Next string
	Init               float64
}

// UpdateStep describes the graph AppendUpdate returns.
type UpdateStep struct {
	Model *onnx.Model
	// LR and Step name the scalar float inputs: the learning rate of this
	// step and its number t, 1 on the first step.
	LR, Step string
	// Next pairs each parameter with the output holding its new value.
	Next []network.ParamGrad
	// State lists the optimizer's state tensors.
	State []StateValue
}

// UpdateOptimizers lists the optimizers AppendUpdate can write as ONNX.
func UpdateOptimizers() []string {
	return []string{"sgd", "momentum", "nesterov", "adam", "adamw", "adagrad", "rmsprop"}
}

// AppendUpdate returns a copy of the training graph res.Model that also
// computes the optimizer's update of every parameter of res.Grads. Its
// new inputs (LR, Step, the state) have no defaults; WithDefaults adds
// them. hp is used as given (see optimizer.Defaults).
func AppendUpdate(res *Result, name string, hp optimizer.Hyperparams) (*UpdateStep, error) {
	if _, err := optimizer.New(name, hp); err != nil {
		return nil, err
	}
	if name == "nesterov" {
		hp.Nesterov = true
	}
	switch name {
	case "sgd", "momentum", "nesterov", "adam", "adamw", "adagrad", "rmsprop":
	default:
		return nil, network.Unsupportedf("autodiff: the %s update is not written as ONNX (those that are: %v)", name, UpdateOptimizers())
	}
	if hp.ClipNorm > 0 {
		return nil, network.Unsupportedf("autodiff: gradient clipping is not written as ONNX")
	}
	c, err := transform.CloneModel(res.Model)
	if err != nil {
		return nil, fmt.Errorf("autodiff: %w", err)
	}
	g := c.Graph
	info := map[string]Info{}
	for _, in := range g.Initializers {
		info[in.Name] = tensorInfo(in.Tensor)
	}
	for _, in := range g.Inputs {
		if _, ok := info[in.Name]; !ok && in.Type != nil && in.Type.Kind == onnx.TensorKind {
			info[in.Name] = typeInfoToInfo(in.Type)
		}
	}
	b := newBuilder(g, res.Opset, info)
	st := &UpdateStep{Model: c}
	input := func(base string, dt onnx.DataType, shape []int64) string {
		name := b.claim(base)
		inf := Info{Type: dt, Shape: shape}
		b.info[name] = inf
		g.Inputs = append(g.Inputs, &onnx.ValueInfo{Name: name, Type: typeInfo(inf)})
		return name
	}
	output := func(v, base string, inf Info) string {
		name := b.claim(base)
		b.graphOutput(v, name, inf)
		return name
	}
	st.LR = input("optimizer.lr", onnx.Float, []int64{})
	st.Step = input("optimizer.step", onnx.Float, []int64{})

	// Scalars that depend on the step, one set per parameter type.
	type perType struct{ lr, t string }
	scal := map[onnx.DataType]*perType{}
	scalars := func(dt onnx.DataType) *perType {
		if s, ok := scal[dt]; ok {
			return s
		}
		s := &perType{lr: st.LR, t: st.Step}
		if dt != onnx.Float {
			s.lr, s.t = b.cast(st.LR, dt), b.cast(st.Step, dt)
		}
		b.info[s.lr] = Info{Type: dt, Shape: []int64{}}
		b.info[s.t] = Info{Type: dt, Shape: []int64{}}
		scal[dt] = s
		return s
	}
	k := func(v float64, dt onnx.DataType) string { return b.scalar(v, dt) }
	sq := func(x string) string { return b.mul(x, x) }
	sqrt := func(x string) string { return b.op("Sqrt", []string{x}) }
	// pow is base^t for a constant base.
	pow := func(base float64, t string, dt onnx.DataType) string { return b.op("Pow", []string{k(base, dt), t}) }

	for _, pg := range res.Grads {
		p, gr := pg.Param, pg.Grad
		inf, ok := b.info[p]
		if !ok {
			return nil, fmt.Errorf("autodiff: update: no type known for %q", p)
		}
		dt := inf.Type
		s := scalars(dt)
		state := func(kind string, init float64) string {
			in := input("optimizer."+kind+"."+p, dt, inf.Shape)
			st.State = append(st.State, StateValue{Param: p, Input: in, Init: init})
			return in
		}
		setNext := func(in, v string) {
			for i := range st.State {
				if st.State[i].Input == in {
					st.State[i].Next = output(v, in+".next", inf)
				}
			}
		}
		gd := gr
		if hp.WeightDecay != 0 && name != "adamw" {
			gd = b.add(gr, b.mul(k(hp.WeightDecay, dt), p))
		}
		var next string
		switch name {
		case "sgd", "momentum", "nesterov":
			upd := gd
			if hp.Momentum != 0 {
				buf := state("momentum", 0)
				// On the first step the buffer becomes g itself: the
				// dampening applies from the second step on.
				coef := k(1, dt)
				if hp.Dampening != 0 {
					first := b.op("Min", []string{b.sub(s.t, k(1, dt)), k(1, dt)})
					coef = b.sub(k(1, dt), b.mul(k(hp.Dampening, dt), first))
				}
				nb := b.add(b.mul(k(hp.Momentum, dt), buf), b.mul(coef, gd))
				setNext(buf, nb)
				upd = nb
				if hp.Nesterov {
					upd = b.add(gd, b.mul(k(hp.Momentum, dt), nb))
				}
			}
			next = b.sub(p, b.mul(s.lr, upd))
		case "adam", "adamw":
			m, v := state("m", 0), state("v", 0)
			base := p
			if name == "adamw" && hp.WeightDecay != 0 {
				base = b.mul(p, b.sub(k(1, dt), b.mul(s.lr, k(hp.WeightDecay, dt))))
			}
			nm := b.add(b.mul(k(hp.Beta1, dt), m), b.mul(k(1-hp.Beta1, dt), gd))
			nv := b.add(b.mul(k(hp.Beta2, dt), v), b.mul(k(1-hp.Beta2, dt), sq(gd)))
			setNext(m, nm)
			setNext(v, nv)
			stepSize := b.div(s.lr, b.sub(k(1, dt), pow(hp.Beta1, s.t, dt)))
			bc2 := sqrt(b.sub(k(1, dt), pow(hp.Beta2, s.t, dt)))
			den := b.add(b.div(sqrt(nv), bc2), k(hp.Eps, dt))
			next = b.sub(base, b.mul(stepSize, b.div(nm, den)))
		case "adagrad":
			sum := state("sum", hp.InitialAcc)
			clr := s.lr
			if hp.LRDecay != 0 {
				clr = b.div(s.lr, b.add(k(1, dt), b.mul(b.sub(s.t, k(1, dt)), k(hp.LRDecay, dt))))
			}
			ns := b.add(sum, sq(gd))
			setNext(sum, ns)
			next = b.sub(p, b.mul(clr, b.div(gd, b.add(sqrt(ns), k(hp.Eps, dt)))))
		case "rmsprop":
			sqAvg := state("square_avg", 0)
			ns := b.add(b.mul(k(hp.Alpha, dt), sqAvg), b.mul(k(1-hp.Alpha, dt), sq(gd)))
			setNext(sqAvg, ns)
			var den string
			if hp.Centered {
				avg := state("grad_avg", 0)
				na := b.add(b.mul(k(hp.Alpha, dt), avg), b.mul(k(1-hp.Alpha, dt), gd))
				setNext(avg, na)
				den = b.add(sqrt(b.sub(ns, sq(na))), k(hp.Eps, dt))
			} else {
				den = b.add(sqrt(ns), k(hp.Eps, dt))
			}
			if hp.Momentum > 0 {
				buf := state("momentum", 0)
				nb := b.add(b.mul(k(hp.Momentum, dt), buf), b.div(gd, den))
				setNext(buf, nb)
				next = b.sub(p, b.mul(s.lr, nb))
			} else {
				next = b.sub(p, b.mul(s.lr, b.div(gd, den)))
			}
		}
		b.info[next] = inf
		st.Next = append(st.Next, network.ParamGrad{Param: p, Grad: output(next, p+".next", inf)})
		if b.err != nil {
			return nil, fmt.Errorf("autodiff: %s update of %q: %w", name, p, b.err)
		}
	}
	return st, nil
}

// WithDefaults returns a copy of st's model in which the step's inputs
// have initializers as defaults (learning rate lr, step 1, the state's
// initial values) and the parameters are graph inputs defaulting to their
// current values: the file runs as it is for the first step, and an
// engine feeds the outputs back for the next.
func (st *UpdateStep) WithDefaults(lr float64) *onnx.Model {
	params := make([]string, len(st.Next))
	for i, pg := range st.Next {
		params[i] = pg.Param
	}
	c := DeclareParams(st.Model, params)
	g := c.Graph
	g.Initializers = append([]*onnx.Initializer(nil), g.Initializers...)
	add := func(name string, t *onnx.Tensor) {
		g.Initializers = append(g.Initializers, &onnx.Initializer{Name: name, Tensor: t})
	}
	add(st.LR, onnx.Scalar(float32(lr)))
	add(st.Step, onnx.Scalar(float32(1)))
	for _, s := range st.State {
		p := g.Initializer(s.Param)
		t := onnx.NewTensor(p.Type, p.Shape...)
		if s.Init != 0 {
			for i := range t.Len() {
				setFloat(t, i, s.Init)
			}
		}
		add(s.Input, t)
	}
	return c
}

// DeclareParams returns a copy of m (sharing its nodes) whose named
// initializers are also graph inputs, the initializers their defaults an
// engine may override: how a training graph takes the parameters an
// engine updates. Names already declared as inputs are left alone.
func DeclareParams(m *onnx.Model, params []string) *onnx.Model {
	c := *m
	g := *m.Graph
	g.Inputs = append([]*onnx.ValueInfo(nil), m.Graph.Inputs...)
	declared := map[string]bool{}
	for _, in := range g.Inputs {
		declared[in.Name] = true
	}
	for _, p := range params {
		if t := g.Initializer(p); t != nil && !declared[p] {
			g.Inputs = append(g.Inputs, &onnx.ValueInfo{Name: p, Type: onnx.TensorTypeOf(t)})
			declared[p] = true
		}
	}
	c.Graph = &g
	return &c
}

func setFloat(t *onnx.Tensor, i int, v float64) {
	switch d := t.Data.(type) {
	case []float32:
		d[i] = float32(v)
	case []float64:
		d[i] = v
	case []onnx.F16:
		d[i] = onnx.F16From(float32(v))
	case []onnx.BF16:
		d[i] = onnx.BF16From(float32(v))
	}
}

func tensorInfo(t *onnx.Tensor) Info {
	s := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		s[i] = int64(d)
	}
	return Info{Type: t.Type, Shape: s}
}

func typeInfoToInfo(t *onnx.TypeInfo) Info {
	inf := Info{Type: t.Elem, Shape: []int64{}}
	for _, d := range t.Shape {
		if d.Param != "" || d.Size < 0 {
			inf.Shape = append(inf.Shape, -1)
		} else {
			inf.Shape = append(inf.Shape, d.Size)
		}
	}
	return inf
}
