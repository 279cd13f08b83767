package native

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/deep500/deep500-go/backend/native/internal/gemm"
	"github.com/deep500/deep500-go/backend/native/internal/vec"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// This file holds the recurrent operators RNN, GRU and LSTM at every
// version. One engine runs all three: the input projections of every time
// step are one GEMM per direction (X·Wᵀ), each step adds the recurrent
// projection H·Rᵀ and applies the gate equations row by row. float16 and
// bfloat16 are computed in float32 and rounded once. float32 with the
// default activations (the common case) has its own loop,
// rnnDirectionVec: the step's product goes straight into the rows of the
// input projections (vec.MulAddTransB, no packing of R at each step) and
// the gates run as vector kernels.

// rnnCell names the recurrent cell.
type rnnCell int

const (
	cellRNN rnnCell = iota
	cellGRU
	cellLSTM
)

func (c rnnCell) String() string { return [...]string{"RNN", "GRU", "LSTM"}[c] }

// gates is the number of gate blocks of H rows in W and R.
func (c rnnCell) gates() int { return [...]int{1, 3, 4}[c] }

// activations is the number of activation functions per direction.
func (c rnnCell) activations() int { return [...]int{1, 2, 3}[c] }

// rnnActFn is an activation function of the recurrent operators.
type rnnActFn int

const (
	rnnRelu rnnActFn = iota
	rnnTanh
	rnnSigmoid
	rnnAffine
	rnnLeakyRelu
	rnnThresholdedRelu
	rnnScaledTanh
	rnnHardSigmoid
	rnnElu
	rnnSoftsign
	rnnSoftplus
)

// rnnActInfo lists, per function name (lower case), the function, whether
// it takes alpha and beta, and their defaults (those of the ONNX operator
// of the same name).
var rnnActInfo = map[string]struct {
	fn                rnnActFn
	alpha, beta       bool
	defAlpha, defBeta float64
}{
	"relu":            {rnnRelu, false, false, 0, 0},
	"tanh":            {rnnTanh, false, false, 0, 0},
	"sigmoid":         {rnnSigmoid, false, false, 0, 0},
	"affine":          {rnnAffine, true, true, 1, 0},
	"leakyrelu":       {rnnLeakyRelu, true, false, 0.01, 0},
	"thresholdedrelu": {rnnThresholdedRelu, true, false, 1, 0},
	"scaledtanh":      {rnnScaledTanh, true, true, 1, 1},
	"hardsigmoid":     {rnnHardSigmoid, true, true, 0.2, 0.5},
	"elu":             {rnnElu, true, false, 1, 0},
	"softsign":        {rnnSoftsign, false, false, 0, 0},
	"softplus":        {rnnSoftplus, false, false, 0, 0},
}

// rnnAct is an activation with its parameters.
type rnnAct struct {
	fn          rnnActFn
	alpha, beta float64
}

func (a rnnAct) apply(x float64) float64 {
	switch a.fn {
	case rnnRelu:
		return math.Max(x, 0)
	case rnnTanh:
		return math.Tanh(x)
	case rnnSigmoid:
		return sigmoid(x)
	case rnnAffine:
		return a.alpha*x + a.beta
	case rnnLeakyRelu:
		if x < 0 {
			return a.alpha * x
		}
		return x
	case rnnThresholdedRelu:
		if x > a.alpha {
			return x
		}
		return 0
	case rnnScaledTanh:
		return a.alpha * math.Tanh(a.beta*x)
	case rnnHardSigmoid:
		return math.Max(0, math.Min(1, a.alpha*x+a.beta))
	case rnnElu:
		if x < 0 {
			return a.alpha * (math.Exp(x) - 1)
		}
		return x
	case rnnSoftsign:
		return x / (1 + math.Abs(x))
	case rnnSoftplus:
		if x > 30 {
			return x
		}
		return math.Log1p(math.Exp(x))
	}
	return x
}

// rnnConfig is a compiled recurrent node: everything that does not depend
// on the input values.
type rnnConfig struct {
	cell              rnnCell
	hidden            int // 0: from R's shape
	dirs              int
	reverse           bool // direction "reverse" (one direction, backwards)
	layout            int
	clip              float64 // 0: no clipping
	acts              [][]rnnAct
	linearBeforeReset bool
	inputForget       bool
}

// parseRNNConfig checks the attributes the three operators share.
func parseRNNConfig(cell rnnCell, direction string, hidden *int64, layout int64, clip *float32, names []string, alphas, betas []float32) (*rnnConfig, error) {
	c := &rnnConfig{cell: cell, layout: int(layout)}
	switch direction {
	case "forward", "foward": // GRU-1's default is spelled "foward"
		c.dirs = 1
	case "reverse":
		c.dirs, c.reverse = 1, true
	case "bidirectional":
		c.dirs = 2
	default:
		return nil, fmt.Errorf("direction %q is not forward, reverse or bidirectional", direction)
	}
	if hidden != nil {
		if *hidden <= 0 {
			return nil, fmt.Errorf("hidden_size %d must be positive", *hidden)
		}
		c.hidden = int(*hidden)
	}
	if layout != 0 && layout != 1 {
		return nil, fmt.Errorf("layout %d is neither 0 nor 1", layout)
	}
	if clip != nil {
		if !(*clip > 0) {
			return nil, fmt.Errorf("clip %v must be positive", *clip)
		}
		c.clip = float64(*clip)
	}
	need := cell.activations()
	if len(names) == 0 {
		names = [][]string{{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}}[cell]
	}
	switch {
	case len(names) >= need*c.dirs:
		names = names[:need*c.dirs]
	case len(names) == need:
		names = append(append([]string{}, names...), names...)[:need*c.dirs]
	default:
		return nil, fmt.Errorf("activations %v: %s needs %d per direction", names, cell, need)
	}
	ai, bi := 0, 0
	for d := range c.dirs {
		var list []rnnAct
		for _, name := range names[d*need : (d+1)*need] {
			info, ok := rnnActInfo[strings.ToLower(name)]
			if !ok {
				return nil, network.Unsupportedf("%s activation %q", cell, name)
			}
			a := rnnAct{fn: info.fn, alpha: info.defAlpha, beta: info.defBeta}
			if info.alpha && ai < len(alphas) {
				a.alpha = float64(alphas[ai])
				ai++
			}
			if info.beta && bi < len(betas) {
				a.beta = float64(betas[bi])
				bi++
			}
			list = append(list, a)
		}
		c.acts = append(c.acts, list)
	}
	return c, nil
}

// rnnRefs are the resolved inputs and outputs of a recurrent node.
type rnnRefs struct {
	x, w, r, b, lens, h0, c0, p valueRef
	y, yh, yc                   valueRef
}

// rnnKernel computes one recurrent node.
type rnnKernel struct {
	cfg     *rnnConfig
	threads int
	outY    outputBuffer
	outYH   outputBuffer
	outYC   outputBuffer
	lens    []int // sequence lengths, kept for their storage
	s32     rnnScratch[float32]
	s64     rnnScratch[float64]
}

// rnnScratch is rnnRun's working memory, kept by the kernel between runs
// and grown when a run needs more.
type rnnScratch[T floatElem] struct {
	xt, xw, hState, cState, hr, rh, rhR, gate, gBias, rbh, zr []T
	rt, wt                                                    []float32 // rnnDirectionVec's transposed R and W
}

// rnnNode is what a recurrent node's forward kernel and backward rule
// both read from it: the configuration and the names of its values
// ("" where omitted).
type rnnNode struct {
	cfg                            *rnnConfig
	x, w, r, bias, lens, h0, c0, p string
	y, yh, yc                      string
}

// rnnNodeOf reads an RNN, GRU or LSTM operator.
func rnnNodeOf(op ops.Op) (rnnNode, error) {
	var n rnnNode
	var err error
	switch o := op.(type) {
	case *ops.RNN:
		n.cfg, err = parseRNNConfig(cellRNN, o.Direction, o.HiddenSize, o.Layout, o.Clip, o.Activations, o.ActivationAlpha, o.ActivationBeta)
		n.x, n.w, n.r, n.bias, n.lens, n.h0 = o.In.X, o.In.W, o.In.R, o.In.B, o.In.SequenceLens, o.In.InitialH
		n.y, n.yh = o.Out.Y, o.Out.YH
	case *ops.GRU:
		n.cfg, err = parseRNNConfig(cellGRU, o.Direction, o.HiddenSize, o.Layout, o.Clip, o.Activations, o.ActivationAlpha, o.ActivationBeta)
		if err == nil {
			n.cfg.linearBeforeReset = o.LinearBeforeReset != 0
		}
		n.x, n.w, n.r, n.bias, n.lens, n.h0 = o.In.X, o.In.W, o.In.R, o.In.B, o.In.SequenceLens, o.In.InitialH
		n.y, n.yh = o.Out.Y, o.Out.YH
	case *ops.LSTM:
		n.cfg, err = parseRNNConfig(cellLSTM, o.Direction, o.HiddenSize, o.Layout, o.Clip, o.Activations, o.ActivationAlpha, o.ActivationBeta)
		if err == nil {
			n.cfg.inputForget = o.InputForget != 0
		}
		n.x, n.w, n.r, n.bias, n.lens, n.h0, n.c0, n.p = o.In.X, o.In.W, o.In.R, o.In.B, o.In.SequenceLens, o.In.InitialH, o.In.InitialC, o.In.P
		n.y, n.yh, n.yc = o.Out.Y, o.Out.YH, o.Out.YC
	default:
		return n, fmt.Errorf("%s is not a recurrent operator", op.OpType())
	}
	return n, err
}

// VisitRNN compiles RNN (versions 1, 7, 14, 22).
func (b *builder) VisitRNN(op *ops.RNN) error { return b.emitRNN(op) }

// VisitGRU compiles GRU (versions 1, 3, 7, 14, 22).
func (b *builder) VisitGRU(op *ops.GRU) error { return b.emitRNN(op) }

// VisitLSTM compiles LSTM (versions 1, 7, 14, 22).
func (b *builder) VisitLSTM(op *ops.LSTM) error { return b.emitRNN(op) }

func (b *builder) emitRNN(op ops.Op) error {
	n, err := rnnNodeOf(op)
	if err != nil {
		return err
	}
	cfg, x, w, r, bias, lens, h0, c0, p, y, yh, yc := n.cfg, n.x, n.w, n.r, n.bias, n.lens, n.h0, n.c0, n.p, n.y, n.yh, n.yc
	var refs rnnRefs
	for _, in := range []struct {
		ref      *valueRef
		name     string
		required bool
	}{{&refs.x, x, true}, {&refs.w, w, true}, {&refs.r, r, true}, {&refs.b, bias, false},
		{&refs.lens, lens, false}, {&refs.h0, h0, false}, {&refs.c0, c0, false}, {&refs.p, p, false}} {
		if in.required {
			*in.ref, err = b.input(in.name)
		} else {
			*in.ref, err = b.optionalInput(in.name)
		}
		if err != nil {
			return err
		}
	}
	refs.y, refs.yh, refs.yc = b.output(y), b.output(yh), b.output(yc)
	k := &rnnKernel{cfg: cfg, threads: b.e.threads}
	return b.emit(func(slots []onnx.Value) error {
		in := make([]*onnx.Tensor, 8)
		for i, r := range []valueRef{refs.x, refs.w, refs.r, refs.b, refs.lens, refs.h0, refs.c0, refs.p} {
			t, err := r.optionalTensor(slots)
			if err != nil {
				return err
			}
			in[i] = t
		}
		outs, err := k.compute(in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7], refs.y.present(), refs.yc.present())
		if err != nil {
			return err
		}
		refs.y.set(slots, outs[0])
		refs.yh.set(slots, outs[1])
		if outs[2] != nil {
			refs.yc.set(slots, outs[2])
		}
		return nil
	})
}

// rnnProblem is the geometry of one run.
type rnnProblem struct {
	seq, batch, input, hidden int
	lens                      []int // per batch entry
}

// compute runs the node. x is [seq, batch, input] (layout 0) or [batch,
// seq, input] (layout 1); the optional inputs may be nil. It returns Y,
// Y_h and, for LSTM, Y_c (Y only when wantY).
func (k *rnnKernel) compute(x, w, r, bias, lens, h0, c0, p *onnx.Tensor, wantY, wantYC bool) ([3]*onnx.Tensor, error) {
	var none [3]*onnx.Tensor
	cfg := k.cfg
	if x.Type != onnx.Float && x.Type != onnx.Double && x.Type != onnx.Float16 && x.Type != onnx.BFloat16 {
		return none, network.Unsupportedf("%s of tensor(%v)", cfg.cell, x.Type)
	}
	for _, t := range []*onnx.Tensor{w, r, bias, h0, c0, p} {
		if t != nil && t.Type != x.Type {
			return none, fmt.Errorf("inputs mix tensor(%v) and tensor(%v)", x.Type, t.Type)
		}
	}
	if len(x.Shape) != 3 {
		return none, fmt.Errorf("X must be 3-D, has shape %v", x.Shape)
	}
	var pr rnnProblem
	pr.seq, pr.batch, pr.input = x.Shape[0], x.Shape[1], x.Shape[2]
	if cfg.layout == 1 {
		pr.seq, pr.batch = pr.batch, pr.seq
	}
	g, dirs := cfg.cell.gates(), cfg.dirs
	if len(r.Shape) != 3 {
		return none, fmt.Errorf("R must be 3-D, has shape %v", r.Shape)
	}
	pr.hidden = cfg.hidden
	if pr.hidden == 0 {
		pr.hidden = r.Shape[2]
	}
	h := pr.hidden
	if err := rnnCheckShape("W", w, dirs, g*h, pr.input); err != nil {
		return none, err
	}
	if err := rnnCheckShape("R", r, dirs, g*h, h); err != nil {
		return none, err
	}
	if bias != nil {
		if err := rnnCheckShape("B", bias, dirs, 2*g*h); err != nil {
			return none, err
		}
	}
	if p != nil {
		if err := rnnCheckShape("P", p, dirs, 3*h); err != nil {
			return none, err
		}
	}
	stateDimsArr := [3]int{dirs, pr.batch, h}
	if cfg.layout == 1 {
		stateDimsArr = [3]int{pr.batch, dirs, h}
	}
	stateDims := stateDimsArr[:]
	if h0 != nil {
		if err := rnnCheckShape("initial_h", h0, stateDims...); err != nil {
			return none, err
		}
	}
	if c0 != nil {
		if err := rnnCheckShape("initial_c", c0, stateDims...); err != nil {
			return none, err
		}
	}
	pr.lens = scratchOf(&k.lens, pr.batch)
	if lens != nil {
		v, err := intsOf(lens)
		if err != nil {
			return none, fmt.Errorf("sequence_lens: %w", err)
		}
		if len(v) != pr.batch {
			return none, fmt.Errorf("sequence_lens has %d entries for a batch of %d", len(v), pr.batch)
		}
		for i, l := range v {
			if l < 0 || l > int64(pr.seq) {
				return none, fmt.Errorf("sequence_lens entry %d is outside [0, %d]", l, pr.seq)
			}
			pr.lens[i] = int(l)
		}
	} else {
		for i := range pr.lens {
			pr.lens[i] = pr.seq
		}
	}
	yShapeArr := [4]int{pr.seq, dirs, pr.batch, h}
	if cfg.layout == 1 {
		yShapeArr = [4]int{pr.batch, pr.seq, dirs, h}
	}
	yShape := yShapeArr[:]
	outs := [3]*onnx.Tensor{k.outY.tensor(x.Type, yShape), k.outYH.tensor(x.Type, stateDims), nil}
	if cfg.cell == cellLSTM {
		outs[2] = k.outYC.tensor(x.Type, stateDims)
	}
	switch x.Type {
	case onnx.Double:
		var yc []float64
		if outs[2] != nil {
			yc = outs[2].Data.([]float64)
		}
		rnnRun(cfg, &pr, k.threads, &k.s64, x.Float64s(), w.Float64s(), r.Float64s(), optionalData[float64](bias), optionalData[float64](h0), optionalData[float64](c0), optionalData[float64](p),
			outs[0].Data.([]float64), outs[1].Data.([]float64), yc)
	case onnx.Float:
		var yc []float32
		if outs[2] != nil {
			yc = outs[2].Data.([]float32)
		}
		rnnRun(cfg, &pr, k.threads, &k.s32, x.Float32s(), w.Float32s(), r.Float32s(), optionalData[float32](bias), optionalData[float32](h0), optionalData[float32](c0), optionalData[float32](p),
			outs[0].Data.([]float32), outs[1].Data.([]float32), yc)
	default: // float16, bfloat16: in float32, rounded once
		wide := func(t *onnx.Tensor) []float32 {
			if t == nil {
				return nil
			}
			d, _ := widenToFloat32(make([]float32, t.Len()), t.Data)
			return d
		}
		y, yh := make([]float32, outs[0].Len()), make([]float32, outs[1].Len())
		var yc []float32
		if outs[2] != nil {
			yc = make([]float32, outs[2].Len())
		}
		rnnRun(cfg, &pr, k.threads, &k.s32, wide(x), wide(w), wide(r), wide(bias), wide(h0), wide(c0), wide(p), y, yh, yc)
		if err := narrowFromFloat32(outs[0].Data, y); err != nil {
			return none, err
		}
		if err := narrowFromFloat32(outs[1].Data, yh); err != nil {
			return none, err
		}
		if yc != nil {
			if err := narrowFromFloat32(outs[2].Data, yc); err != nil {
				return none, err
			}
		}
	}
	if !wantY {
		outs[0] = nil
	}
	return outs, nil
}

func rnnCheckShape(name string, t *onnx.Tensor, dims ...int) error {
	ok := len(t.Shape) == len(dims)
	for i := 0; ok && i < len(dims); i++ {
		ok = t.Shape[i] == dims[i]
	}
	if !ok {
		// A copy of dims, so that the callers' argument list stays on
		// their stack.
		return fmt.Errorf("%s has shape %v, expected %v", name, t.Shape, slices.Clone(dims))
	}
	return nil
}

// rnnRun computes every direction. All slices are in the node's layout;
// bias, h0, c0 and p may be nil, and yc is nil unless the cell is LSTM.
func rnnRun[T floatElem](cfg *rnnConfig, pr *rnnProblem, threads int, sc *rnnScratch[T], x, w, r, bias, h0, c0, p, y, yh, yc []T) {
	S, B, I, H := pr.seq, pr.batch, pr.input, pr.hidden
	G := cfg.cell.gates()
	GH := G * H
	// Bring X to [seq, batch, input].
	if cfg.layout == 1 {
		xt := scratchOf(&sc.xt, len(x))
		for b := range B {
			for s := range S {
				copy(xt[(s*B+b)*I:(s*B+b+1)*I], x[(b*S+s)*I:(b*S+s+1)*I])
			}
		}
		x = xt
	}
	clear(y)
	// Y in layout 0 is [S, dirs, B, H]; layout 1 is [B, S, dirs, H].
	yAt := func(s, d, b int) []T {
		var off int
		if cfg.layout == 1 {
			off = ((b*S+s)*cfg.dirs + d) * H
		} else {
			off = ((s*cfg.dirs+d)*B + b) * H
		}
		return y[off : off+H]
	}
	stateAt := func(st []T, d, b int) []T {
		var off int
		if cfg.layout == 1 {
			off = (b*cfg.dirs + d) * H
		} else {
			off = (d*B + b) * H
		}
		return st[off : off+H]
	}
	// Working memory from the kernel: every element is written before it
	// is read (GEMM outputs, states set per direction, cleared sums).
	xw := scratchOf(&sc.xw, S*B*GH)
	hState := scratchOf(&sc.hState, B*H)
	cState := scratchOf(&sc.cState, B*H)
	hr := scratchOf(&sc.hr, B*GH)
	rh := scratchOf(&sc.rh, B*H)      // GRU: r ⊙ H(t-1)
	rhR := scratchOf(&sc.rhR, B*H)    // GRU: (r ⊙ H(t-1))·Rhᵀ
	gate := scratchOf(&sc.gate, GH)   // one batch row's gate pre-activations
	gBias := scratchOf(&sc.gBias, GH) // Wb + Rb (GRU with linear_before_reset: Wb only for h)
	rbh := scratchOf(&sc.rbh, H)      // GRU with linear_before_reset: Rbh
	zr := scratchOf(&sc.zr, B*2*H)    // GRU: z and r of every batch row
	var zero T
	_, isFloat32 := any(zero).(float32)
	for d := range cfg.dirs {
		reverse := d == 1 || cfg.reverse
		acts := cfg.acts[d]
		vectorActs := isFloat32 && p == nil && cfg.plainActivations(d)
		wd := w[d*GH*I : (d+1)*GH*I]
		rd := r[d*GH*H : (d+1)*GH*H]
		rnnDirectionBias(gBias, rbh, bias, d, H, cfg.cell == cellGRU && cfg.linearBeforeReset)
		var pd []T
		if p != nil {
			pd = p[d*3*H : (d+1)*3*H]
		}
		// The initial states, or zeros.
		for b := range B {
			if h0 != nil {
				copy(hState[b*H:(b+1)*H], stateAt(h0, d, b))
			} else {
				clear(hState[b*H : (b+1)*H])
			}
			if c0 != nil {
				copy(cState[b*H:(b+1)*H], stateAt(c0, d, b))
			} else {
				clear(cState[b*H : (b+1)*H])
			}
		}
		if vectorActs {
			out := rnnYLayout{layout1: cfg.layout == 1, seq: S, dirs: cfg.dirs, dir: d, batch: B, hidden: H}
			rnnDirectionVec(cfg.cell, cfg.linearBeforeReset, pr, reverse, threads, asFloat32s(x), asFloat32s(wd), asFloat32s(rd), asFloat32s(gBias), asFloat32s(rbh),
				asFloat32s(xw), asFloat32s(hState), asFloat32s(cState), asFloat32s(rh), asFloat32s(y), out, any(sc).(*rnnScratch[float32]))
			for b := range B {
				copy(stateAt(yh, d, b), hState[b*H:(b+1)*H])
				if yc != nil {
					copy(stateAt(yc, d, b), cState[b*H:(b+1)*H])
				}
			}
			continue
		}
		// Input projections of every step: xw = X·Wᵀ, [S*B, GH].
		if S*B > 0 {
			gemm.Multiply(S*B, GH, I, T(1), gemm.NewMatrix(x, I, false), gemm.NewMatrix(wd, I, true), T(0), xw, GH, threads)
		}
		// GRU without linear_before_reset multiplies r ⊙ H by Rh separately,
		// so the step's recurrent GEMM covers only the z and r blocks.
		hrCols := GH
		gruSplit := cfg.cell == cellGRU && !cfg.linearBeforeReset
		if gruSplit {
			hrCols = 2 * H
		}
		for s := range S {
			rnnRecurrentProduct(B, hrCols, H, hState, rd, hr, threads)
			if gruSplit {
				clear(rh)
			}
			for b := range B {
				if s >= pr.lens[b] {
					continue
				}
				t := s
				if reverse {
					t = pr.lens[b] - 1 - s
				}
				xr := xw[(t*B+b)*GH : (t*B+b+1)*GH]
				hrow := hState[b*H : (b+1)*H]
				hrr := hr[b*hrCols : (b+1)*hrCols]
				for i := range GH {
					gate[i] = xr[i] + gBias[i]
				}
				for i := range hrCols {
					gate[i] += hrr[i]
				}
				switch cfg.cell {
				case cellRNN:
					for i := range H {
						hrow[i] = T(acts[0].apply(cfg.clipped(float64(gate[i]))))
					}
					copy(yAt(t, d, b), hrow)
				case cellLSTM:
					crow := cState[b*H : (b+1)*H]
					lstmStep(cfg, acts, gate, pd, hrow, crow, H)
					copy(yAt(t, d, b), hrow)
				case cellGRU:
					zrRow := zr[b*2*H : (b+1)*2*H]
					for i := range 2 * H {
						zrRow[i] = T(acts[0].apply(cfg.clipped(float64(gate[i]))))
					}
					if gruSplit {
						for i := range H {
							rh[b*H+i] = zrRow[H+i] * hrow[i]
						}
						continue // the h gate needs (r ⊙ H)·Rhᵀ of every row
					}
					for i := range H {
						// linear_before_reset: h~ = g(xWh + Wbh + r ⊙ (H·Rhᵀ + Rbh))
						pre := xr[2*H+i] + gBias[2*H+i] + zrRow[H+i]*(hrr[2*H+i]+rbh[i])
						hc := T(acts[1].apply(cfg.clipped(float64(pre))))
						z := zrRow[i]
						hrow[i] = (1-z)*hc + z*hrow[i]
					}
					copy(yAt(t, d, b), hrow)
				}
			}
			if !gruSplit {
				continue
			}
			rnnRecurrentProduct(B, H, H, rh, rd[2*H*H:], rhR, threads)
			for b := range B {
				if s >= pr.lens[b] {
					continue
				}
				t := s
				if reverse {
					t = pr.lens[b] - 1 - s
				}
				xr := xw[(t*B+b)*GH : (t*B+b+1)*GH]
				hrow := hState[b*H : (b+1)*H]
				zrRow := zr[b*2*H : (b+1)*2*H]
				for i := range H {
					pre := xr[2*H+i] + gBias[2*H+i] + rhR[b*H+i]
					hc := T(acts[1].apply(cfg.clipped(float64(pre))))
					z := zrRow[i]
					hrow[i] = (1-z)*hc + z*hrow[i]
				}
				copy(yAt(t, d, b), hrow)
			}
		}
		for b := range B {
			copy(stateAt(yh, d, b), hState[b*H:(b+1)*H])
			if yc != nil {
				copy(stateAt(yc, d, b), cState[b*H:(b+1)*H])
			}
		}
	}
}

// rnnRecurrentProduct writes a step's recurrent projection c = h·rᵀ:
// h is [batch, hidden], r [n, hidden] (rows of R), c [batch, n]. In
// float32 each element is a dot product of two contiguous rows
// (vec.MulAddTransB), which the small batch of a step computes without
// the blocked GEMM's packing of R, repeated at every step; float64 goes
// through the GEMM.
func rnnRecurrentProduct[T floatElem](batch, n, hidden int, h, r, c []T, threads int) {
	if h32, ok := any(h).([]float32); ok {
		c32 := any(c).([]float32)
		clear(c32[:batch*n])
		vec.MulAddTransB(batch, n, hidden, h32, hidden, any(r).([]float32), hidden, c32, n)
		return
	}
	gemm.Multiply(batch, n, hidden, T(1), gemm.NewMatrix(h, hidden, false), gemm.NewMatrix(r, hidden, true), T(0), c, n, threads)
}

// rnnYLayout locates a step's output row in Y: [S, dirs, B, H] (layout
// 0) or [B, S, dirs, H] (layout 1), for direction dir.
type rnnYLayout struct {
	layout1                       bool
	seq, dirs, dir, batch, hidden int
}

// at is the offset of step t, batch entry b.
func (l rnnYLayout) at(t, b int) int {
	if l.layout1 {
		return ((b*l.seq+t)*l.dirs + l.dir) * l.hidden
	}
	return ((t*l.dirs+l.dir)*l.batch + b) * l.hidden
}

// rnnDirectionVec runs one direction of a float32 RNN, LSTM or GRU
// with the default activations, no clip and no peepholes. The input
// projections of all steps and the biases come first, into xw (one GEMM
// with the bias as its epilogue; from a batch of rnnTransposedBatch, every
// row starts from gBias and adds X·Wᵀ by vec.MulAdd); each step then adds
// its recurrent projection to its own rows of xw in place
// (rnnRecurrence.add), which leaves the gates' pre-activations there for
// the vector activations.
// GRU's h block is the exception: without linear_before_reset its
// recurrent product is (r ⊙ H(t-1))·Rhᵀ, known once r is; with it, r
// scales H(t-1)·Rhᵀ + Rbh (rbh), which goes to rh first. hState and
// cState hold the initial states and end as the final ones; rh is GRU's
// r ⊙ H(t-1) or H(t-1)·Rhᵀ of every batch row.
func rnnDirectionVec(cell rnnCell, linearBeforeReset bool, pr *rnnProblem, reverse bool, threads int, x, w, r, gBias, rbh, xw, hState, cState, rh, y []float32, out rnnYLayout, scratch *rnnScratch[float32]) {
	S, B, I, H := pr.seq, pr.batch, pr.input, pr.hidden
	GH := cell.gates() * H
	if S*B == 0 {
		return
	}
	rec := rnnRecurrence{r: r, hidden: H, cols: GH}
	if B >= rnnTransposedBatch && vec.MulAddVectorised() {
		rec.rt = scratchOf(&scratch.rt, H*GH)
		transpose2D(rec.rt, GH, r, H, H, GH)
	}
	if B >= rnnTransposedBatch && vec.MulAddVectorised() && I*GH <= rnnInputRowKernelMax {
		// W transposed once, then every row starts from the biases and
		// adds its projection (vec.MulAdd, nothing packed).
		wt := scratchOf(&scratch.wt, I*GH)
		transpose2D(wt, GH, w, I, I, GH)
		for row := range S * B {
			copy(xw[row*GH:(row+1)*GH], gBias)
		}
		vec.MulAdd(S*B, GH, I, x, I, wt, GH, xw, GH)
	} else {
		gemm.MultiplyFused(S*B, GH, I, 1, gemm.NewMatrix(x, I, false), gemm.NewMatrix(w, I, true), 0, xw, GH, threads,
			&gemm.Epilogue[float32]{ColBias: gBias})
	}
	// The projection of H(t-1) by R's z and r blocks only, for GRU: its h
	// block multiplies r ⊙ H(t-1) once r is known.
	hrCols := GH
	if cell == cellGRU {
		hrCols = 2 * H
	}
	full := true // every sequence as long as X: a step's rows of xw are contiguous
	for _, l := range pr.lens {
		full = full && l == S
	}
	// rowOf is the row of xw that batch entry b reads at step s.
	rowOf := func(s, b int) int {
		t := s
		if reverse {
			t = pr.lens[b] - 1 - s
		}
		return t*B + b
	}
	// addToStep adds to step s's rows of xw, from column colOff on, the
	// product of src's rows (H(t-1), or GRU's r ⊙ H(t-1)) by R's rows
	// [col0, col0+cols), for the batch entries still in their sequence:
	// in one call when every sequence is whole.
	addToStep := func(s, cols, col0 int, src []float32, colOff int) {
		if full {
			rec.add(B, cols, col0, src, xw[rowOf(s, 0)*GH+colOff:], GH)
			return
		}
		for b := range B {
			if s < pr.lens[b] {
				rec.add(1, cols, col0, src[b*H:], xw[rowOf(s, b)*GH+colOff:], GH)
			}
		}
	}
	for s := range S {
		if cell == cellGRU && linearBeforeReset {
			// H(t-1)·Rhᵀ of every row (those past their sequence unused).
			clear(rh[:B*H])
			rec.add(B, H, 2*H, hState, rh, H)
		}
		addToStep(s, hrCols, 0, hState, 0)
		for b := range B {
			if s >= pr.lens[b] {
				continue
			}
			row := rowOf(s, b)
			gate := xw[row*GH : (row+1)*GH]
			hrow := hState[b*H : (b+1)*H]
			switch cell {
			case cellRNN:
				vec.Tanh(hrow, gate[:H])
			case cellLSTM:
				rnnLSTMGatesVec(gate, hrow, cState[b*H:(b+1)*H], H)
			case cellGRU:
				if !linearBeforeReset {
					rnnGRUGatesVec(gate, gate, rh[b*H:(b+1)*H], hrow, H)
					continue // the h gate needs (r ⊙ H)·Rhᵀ
				}
				// h~ = tanh(xWh + Wbh + r ⊙ (H·Rhᵀ + Rbh))
				hh := rh[b*H : (b+1)*H]
				vec.Sigmoid(gate[:2*H], gate[:2*H])
				rg, hc := gate[H:2*H], gate[2*H:3*H]
				for i := range hc {
					hc[i] += rg[i] * (hh[i] + rbh[i])
				}
				rnnGRUUpdateVec(hc, gate[:H], hrow)
			}
			t := row / B
			copy(y[out.at(t, b):], hrow)
		}
		if cell != cellGRU || linearBeforeReset {
			continue
		}
		addToStep(s, H, 2*H, rh, 2*H)
		for b := range B {
			if s >= pr.lens[b] {
				continue
			}
			row := rowOf(s, b)
			gate := xw[row*GH : (row+1)*GH]
			hrow := hState[b*H : (b+1)*H]
			rnnGRUUpdateVec(gate[2*H:3*H], gate[:H], hrow)
			copy(y[out.at(row/B, b):], hrow)
		}
	}
}

// rnnGRUUpdateVec applies tanh to the candidate's pre-activation hc (in
// place) and moves the state hrow towards it: (1-z)·h~ + z·H(t-1).
func rnnGRUUpdateVec(hc, z, hrow []float32) {
	vec.Tanh(hc, hc)
	z, hrow = z[:len(hc)], hrow[:len(hc)]
	for i, h := range hc {
		hrow[i] = (1-z[i])*h + z[i]*hrow[i]
	}
}

// rnnInputRowKernelMax is the most elements of W for which
// rnnDirectionVec projects the inputs with vec.MulAdd (W transposed and
// read in place, as MatMul does when B fits in L2, rowKernelProduct)
// rather than the blocked GEMM, from a batch of rnnTransposedBatch: at
// batch 1 the transpose costs what it saves (process CPU time per
// lstm_gru inference, shared machine: batch 8 615 -> 595 µs, batch 1 108
// -> 110 µs).
const rnnInputRowKernelMax = 64 * 1024

// rnnTransposedBatch is the least batch for which rnnDirectionVec
// transposes R once per run and multiplies each step by vec.MulAdd: from
// four rows of H a step, its register blocks of four rows beat the dot
// products of vec.MulAddTransB by more than the transpose costs
// (BenchmarkMulAdd 8x256x64 2.3 µs, BenchmarkMulAddTransB 3.0 µs).
const rnnTransposedBatch = 4

// rnnRecurrence is one direction's recurrent weights R ([gates·hidden,
// hidden], cols = gates·hidden rows) and, when not nil, rt, the same
// transposed ([hidden, cols]).
type rnnRecurrence struct {
	r, rt        []float32
	hidden, cols int
}

// add adds h·R[col:col+n]ᵀ to c: h is m rows of hidden, c m rows ldc
// apart, n columns (gate rows of R from col).
func (q *rnnRecurrence) add(m, n, col int, h, c []float32, ldc int) {
	H := q.hidden
	if q.rt != nil {
		vec.MulAdd(m, n, H, h, H, q.rt[col:], q.cols, c, ldc)
		return
	}
	vec.MulAddTransB(m, n, H, h, H, q.r[col*H:], H, c, ldc)
}

// rnnLSTMGatesVec updates one batch row's states hrow and crow from its
// gate pre-activations (blocks i, o, f, c; overwritten).
func rnnLSTMGatesVec(gate, hrow, crow []float32, H int) {
	// Blocks i, o, f are contiguous: one sigmoid call covers them.
	vec.Sigmoid(gate[:3*H], gate[:3*H])
	vec.Tanh(gate[3*H:4*H], gate[3*H:4*H])
	ig, og, fg, cc := gate[:H], gate[H:2*H], gate[2*H:3*H], gate[3*H:4*H]
	crow, hrow = crow[:H], hrow[:H]
	for j := range crow {
		crow[j] = fg[j]*crow[j] + ig[j]*cc[j]
	}
	// The candidate block is spent: it takes tanh(c).
	vec.Tanh(cc, crow)
	for j := range hrow {
		hrow[j] = og[j] * cc[j]
	}
}

// plainActivations reports whether direction d uses the default
// activations (Sigmoid for the gates, Tanh for the candidate and the
// output) without clip or coupled input and forget gates: the
// configurations the vector path computes.
func (c *rnnConfig) plainActivations(d int) bool {
	if c.clip > 0 || c.inputForget {
		return false
	}
	acts := c.acts[d]
	switch c.cell {
	case cellRNN:
		return acts[0].fn == rnnTanh
	case cellGRU:
		return acts[0].fn == rnnSigmoid && acts[1].fn == rnnTanh
	default:
		return acts[0].fn == rnnSigmoid && acts[1].fn == rnnTanh && acts[2].fn == rnnTanh
	}
}

// asFloat32s is s as a []float32; rnnRun calls it only when T is float32.
func asFloat32s[T floatElem](s []T) []float32 { return any(s).([]float32) }

// rnnGRUGatesVec is the first half of a GRU step without
// linear_before_reset on the vector path: z and r of one batch row into
// zrRow, and r ⊙ H(t-1) into rhRow for the step's product with Rh.
func rnnGRUGatesVec(gate, zrRow, rhRow, hrow []float32, H int) {
	vec.Sigmoid(zrRow[:2*H], gate[:2*H])
	r := zrRow[H : 2*H]
	for i := range H {
		rhRow[i] = r[i] * hrow[i]
	}
}

// clipped applies the clip attribute to a gate's pre-activation.
func (c *rnnConfig) clipped(v float64) float64 {
	if c.clip > 0 {
		return math.Max(-c.clip, math.Min(c.clip, v))
	}
	return v
}

// lstmStep updates one batch row's hidden and cell state from its gate
// pre-activations (blocks i, o, f, c of H each) and peepholes pd (i, o, f;
// nil when absent).
func lstmStep[T floatElem](cfg *rnnConfig, acts []rnnAct, gate, pd, hrow, crow []T, H int) {
	f, g, h := acts[0], acts[1], acts[2]
	for j := range H {
		cPrev := float64(crow[j])
		pi, po, pf := 0.0, 0.0, 0.0
		if pd != nil {
			pi, po, pf = float64(pd[j]), float64(pd[H+j]), float64(pd[2*H+j])
		}
		ig := f.apply(cfg.clipped(float64(gate[j]) + pi*cPrev))
		var fg float64
		if cfg.inputForget {
			fg = 1 - ig
		} else {
			fg = f.apply(cfg.clipped(float64(gate[2*H+j]) + pf*cPrev))
		}
		cc := g.apply(cfg.clipped(float64(gate[3*H+j])))
		c := fg*cPrev + ig*cc
		og := f.apply(cfg.clipped(float64(gate[H+j]) + po*c))
		crow[j] = T(c)
		hrow[j] = T(og * h.apply(c))
	}
}

// rnnDirectionBias fills the gate bias of direction d from B (nil: none):
// gBias = Wb + Rb per gate, except that with GRU's linear_before_reset the
// hidden gate takes Wb only and rbh its Rb, which applies inside r ⊙ (·).
func rnnDirectionBias[T floatElem](gBias, rbh, bias []T, d, H int, lbr bool) {
	clear(gBias)
	clear(rbh)
	if bias == nil {
		return
	}
	GH := len(gBias)
	wb := bias[d*2*GH : d*2*GH+GH]
	rb := bias[d*2*GH+GH : (d+1)*2*GH]
	for i := range GH {
		gBias[i] = wb[i] + rb[i]
	}
	if lbr {
		for i := range H {
			gBias[2*H+i] = wb[2*H+i]
			rbh[i] = rb[2*H+i]
		}
	}
}
