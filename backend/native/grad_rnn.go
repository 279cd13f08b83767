package native

import (
	"fmt"
	"math"

	"github.com/deep500/deep500-go/backend/native/internal/gemm"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rules of RNN, GRU and LSTM (every version): backpropagation
// through time.
//
// The forward kernel (rnn_ops.go) keeps only Y, Y_h and Y_c, and Y lacks
// the LSTM cell states, so the backward kernel first replays the forward
// pass of each direction from the saved inputs, recording a tape of every
// valid step: the state before it, the gate pre-activations (before clip)
// and activations, the new cell state (LSTM) and r ⊙ H(t-1) (GRU) or
// H(t-1)·Rhᵀ + Rbh (GRU with linear_before_reset). The replay mirrors
// rnnRun operation for operation, so in float64 it reproduces the forward
// exactly. It then walks the steps backwards, turning the gradient of the
// hidden (and cell) state into gate gradients, row by row, and the gate
// gradients into the previous state's through one GEMM with R per step.
// The gate gradients of every step are kept, indexed by (time, batch)
// like the input projections, so dX, dW and dR are one GEMM each per
// direction. Steps past a batch entry's sequence length are not on the
// tape: their gate gradients are zero and the state's gradient passes
// them unchanged, which routes Y_h's and Y_c's gradients to the last
// valid step.

// rnnGrad is the backward kernel of one recurrent node.
type rnnGrad struct {
	cfg                            *rnnConfig
	x, w, r, bias, lens, h0, c0, p int
	y, yh, yc                      int
	threads                        int
	lensBuf                        []int
	sx, sw, sr, sb, sh0, sc0, sp   gradScratch
	w32                            rnnGradWork[float32]
	w64                            rnnGradWork[float64]
	ts                             rnnGradTensors
}

// rnnGradWork holds a kernel's reusable buffers for one element type.
type rnnGradWork[T floatElem] struct {
	xs, xw, pre, act, hPrev, cPrev, cNew, aux []T // tape, rows t*B+b
	hState, cState, hr, rhStep, rhR, gBias    []T
	rbh                                       []T
	dGX, dGR, dGs, dH, dC, dHd, dHp, dRh, dXs []T
}

// rnnStateInput reports whether input i of op is initial_h or initial_c
// of RNN, GRU or LSTM. ONNX's schemas mark them non-differentiable from
// version 14 (versions 1 and 7 leave them unmarked), yet the outputs
// depend smoothly on them and a learned initial state is common:
// differentiableInput (grad.go) lets gradients reach them at every
// version.
func rnnStateInput(op ops.Op, i int) bool {
	if op.Domain() != "" {
		return false
	}
	switch op.OpType() {
	case "RNN", "GRU":
		return i == 5
	case "LSTM":
		return i == 5 || i == 6
	}
	return false
}

func (gb *gradBuilder) VisitRNN(op *ops.RNN) error   { return gb.rnnGradOf(op) }
func (gb *gradBuilder) VisitGRU(op *ops.GRU) error   { return gb.rnnGradOf(op) }
func (gb *gradBuilder) VisitLSTM(op *ops.LSTM) error { return gb.rnnGradOf(op) }

func (gb *gradBuilder) rnnGradOf(op ops.Op) error {
	n, err := rnnNodeOf(op)
	if err != nil {
		return err
	}
	k := &rnnGrad{cfg: n.cfg, x: gb.slot(n.x), w: gb.slot(n.w), r: gb.slot(n.r), bias: gb.slot(n.bias), lens: gb.slot(n.lens),
		h0: gb.slot(n.h0), c0: gb.slot(n.c0), p: gb.slot(n.p), y: gb.slot(n.y), yh: gb.slot(n.yh), yc: gb.slot(n.yc), threads: gb.e.threads}
	return gb.set(k.run)
}

// rnnGradTensors are a run's tensors: forward inputs (nil when absent),
// outputs' gradients (nil when none reached) and the gradients to fill
// (nil when not wanted).
type rnnGradTensors struct {
	x, w, r, bias, h0, c0, p      *onnx.Tensor
	gy, gyh, gyc                  *onnx.Tensor
	dx, dw, dr, db, dh0, dc0, dpp *onnx.Tensor
}

func (k *rnnGrad) run(slots []onnx.Value, g *gradState) error {
	ts := &k.ts // in the kernel: a local would escape to the heap
	*ts = rnnGradTensors{}
	ts.gy, ts.gyh, ts.gyc = g.of(k.y), g.of(k.yh), g.of(k.yc)
	if ts.gy == nil && ts.gyh == nil && ts.gyc == nil {
		return nil
	}
	cfg := k.cfg
	var err error
	if ts.x, err = floatTensor(slots[k.x], "X"); err != nil {
		return err
	}
	if ts.w, err = floatTensor(slots[k.w], "W"); err != nil {
		return err
	}
	if ts.r, err = floatTensor(slots[k.r], "R"); err != nil {
		return err
	}
	for _, o := range []struct {
		slot int
		dst  **onnx.Tensor
		name string
	}{{k.bias, &ts.bias, "B"}, {k.h0, &ts.h0, "initial_h"}, {k.c0, &ts.c0, "initial_c"}, {k.p, &ts.p, "P"}} {
		if o.slot < 0 || slots[o.slot] == nil {
			continue
		}
		if *o.dst, err = floatTensor(slots[o.slot], o.name); err != nil {
			return err
		}
	}
	for _, t := range []*onnx.Tensor{ts.w, ts.r, ts.bias, ts.h0, ts.c0, ts.p, ts.gy, ts.gyh, ts.gyc} {
		if t != nil && t.Type != ts.x.Type {
			return fmt.Errorf("%s gradient: tensors mix tensor(%v) and tensor(%v)", cfg.cell, ts.x.Type, t.Type)
		}
	}
	if len(ts.x.Shape) != 3 || len(ts.r.Shape) != 3 {
		return fmt.Errorf("%s gradient: X %v and R %v must be 3-D", cfg.cell, ts.x.Shape, ts.r.Shape)
	}
	var pr rnnProblem
	pr.seq, pr.batch, pr.input = ts.x.Shape[0], ts.x.Shape[1], ts.x.Shape[2]
	if cfg.layout == 1 {
		pr.seq, pr.batch = pr.batch, pr.seq
	}
	pr.hidden = cfg.hidden
	if pr.hidden == 0 {
		pr.hidden = ts.r.Shape[2]
	}
	G, H, D := cfg.cell.gates(), pr.hidden, cfg.dirs
	if ts.w.Len() != D*G*H*pr.input || ts.r.Len() != D*G*H*H {
		return fmt.Errorf("%s gradient: W %v or R %v does not fit hidden size %d", cfg.cell, ts.w.Shape, ts.r.Shape, H)
	}
	k.lensBuf = k.lensBuf[:0]
	if k.lens >= 0 && slots[k.lens] != nil {
		lt, ok := slots[k.lens].(*onnx.Tensor)
		if !ok || lt.Len() != pr.batch {
			return fmt.Errorf("%s gradient: sequence_lens is %s for a batch of %d", cfg.cell, onnx.DescribeValue(slots[k.lens]), pr.batch)
		}
		for i := range pr.batch {
			var l int
			switch d := lt.Data.(type) {
			case []int32:
				l = int(d[i])
			case []int64:
				l = int(d[i])
			default:
				return network.Unsupportedf("%s gradient with sequence_lens of tensor(%v)", cfg.cell, lt.Type)
			}
			if l < 0 || l > pr.seq {
				return fmt.Errorf("%s gradient: sequence_lens entry %d is outside [0, %d]", cfg.cell, l, pr.seq)
			}
			k.lensBuf = append(k.lensBuf, l)
		}
	} else {
		for range pr.batch {
			k.lensBuf = append(k.lensBuf, pr.seq)
		}
	}
	pr.lens = k.lensBuf
	for _, o := range []struct {
		t    *onnx.Tensor
		name string
	}{{ts.gy, "Y"}, {ts.gyh, "Y_h"}, {ts.gyc, "Y_c"}} {
		var want int
		switch {
		case o.t == nil:
			continue
		case o.name == "Y":
			want = pr.seq * D * pr.batch * H
		default:
			want = D * pr.batch * H
		}
		if o.t.Len() != want {
			return fmt.Errorf("%s gradient: the gradient of %s has shape %v", cfg.cell, o.name, o.t.Shape)
		}
	}
	typ := ts.x.Type
	if g.wants(k.x) {
		ts.dx = k.sx.zeros(typ, ts.x.Shape)
	}
	if g.wants(k.w) {
		ts.dw = k.sw.zeros(typ, ts.w.Shape)
	}
	if g.wants(k.r) {
		ts.dr = k.sr.zeros(typ, ts.r.Shape)
	}
	if ts.bias != nil && g.wants(k.bias) {
		ts.db = k.sb.zeros(typ, ts.bias.Shape)
	}
	if ts.h0 != nil && g.wants(k.h0) {
		ts.dh0 = k.sh0.zeros(typ, ts.h0.Shape)
	}
	if ts.c0 != nil && cfg.cell == cellLSTM && g.wants(k.c0) {
		ts.dc0 = k.sc0.zeros(typ, ts.c0.Shape)
	}
	if ts.p != nil && cfg.cell == cellLSTM && g.wants(k.p) {
		ts.dpp = k.sp.zeros(typ, ts.p.Shape)
	}
	switch typ {
	case onnx.Float:
		rnnBackward(k, &k.w32, &pr, ts)
	case onnx.Double:
		rnnBackward(k, &k.w64, &pr, ts)
	default:
		return network.Unsupportedf("%s gradient of tensor(%v)", cfg.cell, typ)
	}
	for _, o := range []struct {
		slot int
		t    *onnx.Tensor
	}{{k.x, ts.dx}, {k.w, ts.dw}, {k.r, ts.dr}, {k.bias, ts.db}, {k.h0, ts.dh0}, {k.c0, ts.dc0}, {k.p, ts.dpp}} {
		if o.t == nil {
			continue
		}
		if err := g.add(o.slot, o.t); err != nil {
			return err
		}
	}
	return nil
}

// rnnYOff is the offset of Y's row (t, d, b); rnnStateOff that of Y_h's,
// Y_c's, initial_h's and initial_c's row (d, b).
func rnnYOff(layout, S, D, B, H, t, d, b int) int {
	if layout == 1 {
		return ((b*S+t)*D + d) * H
	}
	return ((t*D+d)*B + b) * H
}

func rnnStateOff(layout, D, B, H, d, b int) int {
	if layout == 1 {
		return (b*D + d) * H
	}
	return (d*B + b) * H
}

// actGrad is the derivative of the activation a at the unclipped
// pre-activation pre, where y = a(clip(pre)): zero where clip cut it.
func (c *rnnConfig) actGrad(a rnnAct, pre, y float64) float64 {
	if c.clip > 0 && (pre < -c.clip || pre > c.clip) {
		return 0
	}
	return a.deriv(c.clipped(pre), y)
}

// deriv is the derivative of the activation at x, given y = a.apply(x).
func (a rnnAct) deriv(x, y float64) float64 {
	switch a.fn {
	case rnnRelu:
		if x > 0 {
			return 1
		}
		return 0
	case rnnTanh:
		return 1 - y*y
	case rnnSigmoid:
		return y * (1 - y)
	case rnnAffine:
		return a.alpha
	case rnnLeakyRelu:
		if x < 0 {
			return a.alpha
		}
		return 1
	case rnnThresholdedRelu:
		if x > a.alpha {
			return 1
		}
		return 0
	case rnnScaledTanh:
		t := math.Tanh(a.beta * x)
		return a.alpha * a.beta * (1 - t*t)
	case rnnHardSigmoid:
		if v := a.alpha*x + a.beta; v > 0 && v < 1 {
			return a.alpha
		}
		return 0
	case rnnElu:
		if x < 0 {
			return a.alpha * math.Exp(x)
		}
		return 1
	case rnnSoftsign:
		d := 1 + math.Abs(x)
		return 1 / (d * d)
	case rnnSoftplus:
		if x > 30 {
			return 1
		}
		return sigmoid(x)
	}
	return 1
}

// rnnBackward computes every wanted gradient of ts, one direction at a time.
func rnnBackward[T floatElem](k *rnnGrad, wk *rnnGradWork[T], pr *rnnProblem, ts *rnnGradTensors) {
	cfg := k.cfg
	S, B, I, H := pr.seq, pr.batch, pr.input, pr.hidden
	D, G := cfg.dirs, cfg.cell.gates()
	GH := G * H
	SB := S * B
	x, w, r := ts.x.Data.([]T), ts.w.Data.([]T), ts.r.Data.([]T)
	bias, h0, c0, p := optionalData[T](ts.bias), optionalData[T](ts.h0), optionalData[T](ts.c0), optionalData[T](ts.p)
	gy, gyh, gyc := optionalData[T](ts.gy), optionalData[T](ts.gyh), optionalData[T](ts.gyc)
	dx, dw, dr, db := optionalData[T](ts.dx), optionalData[T](ts.dw), optionalData[T](ts.dr), optionalData[T](ts.db)
	dh0, dc0, dp := optionalData[T](ts.dh0), optionalData[T](ts.dc0), optionalData[T](ts.dpp)
	if cfg.cell != cellLSTM {
		c0, p, gyc, dc0, dp = nil, nil, nil, nil, nil
	}
	lbr := cfg.cell == cellGRU && cfg.linearBeforeReset
	gruSplit := cfg.cell == cellGRU && !cfg.linearBeforeReset
	hrCols := GH
	if gruSplit {
		hrCols = 2 * H
	}

	// X in [seq, batch, input].
	xs := x
	if cfg.layout == 1 {
		wk.xs = withLen(wk.xs, len(x))
		xs = wk.xs
		for b := range B {
			for s := range S {
				copy(xs[(s*B+b)*I:(s*B+b+1)*I], x[(b*S+s)*I:(b*S+s+1)*I])
			}
		}
	}
	var dxs []T
	if dx != nil {
		dxs = dx // zeroed
		if cfg.layout == 1 {
			wk.dXs = withLen(wk.dXs, SB*I)
			dxs = wk.dXs
			clear(dxs)
		}
	}
	wk.xw = withLen(wk.xw, SB*GH)
	wk.pre = withLen(wk.pre, SB*GH)
	wk.act = withLen(wk.act, SB*GH)
	wk.hPrev = withLen(wk.hPrev, SB*H)
	wk.cPrev = withLen(wk.cPrev, SB*H)
	wk.cNew = withLen(wk.cNew, SB*H)
	wk.aux = withLen(wk.aux, SB*H)
	wk.hState = withLen(wk.hState, B*H)
	wk.cState = withLen(wk.cState, B*H)
	wk.hr = withLen(wk.hr, B*GH)
	wk.rhStep = withLen(wk.rhStep, B*H)
	wk.rhR = withLen(wk.rhR, B*H)
	wk.gBias = withLen(wk.gBias, GH)
	wk.rbh = withLen(wk.rbh, H)
	wk.dGX = withLen(wk.dGX, SB*GH)
	dGR := wk.dGX
	if lbr {
		wk.dGR = withLen(wk.dGR, SB*GH)
		dGR = wk.dGR
	}
	wk.dGs = withLen(wk.dGs, B*GH)
	wk.dH = withLen(wk.dH, B*H)
	wk.dC = withLen(wk.dC, B*H)
	wk.dHd = withLen(wk.dHd, B*H)
	wk.dHp = withLen(wk.dHp, B*H)
	wk.dRh = withLen(wk.dRh, B*H)
	xw, pre, act, hPrev, cPrev, cNew, aux := wk.xw, wk.pre, wk.act, wk.hPrev, wk.cPrev, wk.cNew, wk.aux
	hState, cState, hr, rhStep, rhR, gBias, rbh := wk.hState, wk.cState, wk.hr, wk.rhStep, wk.rhR, wk.gBias, wk.rbh
	dGX, dGs, dH, dC, dHd, dHp, dRh := wk.dGX, wk.dGs, wk.dH, wk.dC, wk.dHd, wk.dHp, wk.dRh
	threads := k.threads
	lens := pr.lens

	for d := range D {
		reverse := d == 1 || cfg.reverse
		acts := cfg.acts[d]
		wd := w[d*GH*I : (d+1)*GH*I]
		rd := r[d*GH*H : (d+1)*GH*H]
		rnnDirectionBias(gBias, rbh, bias, d, H, lbr)
		var pd []T
		if p != nil {
			pd = p[d*3*H : (d+1)*3*H]
		}

		// Replay the forward pass, recording the tape.
		if SB > 0 {
			gemm.Multiply(SB, GH, I, T(1), gemm.NewMatrix(xs, I, false), gemm.NewMatrix(wd, I, true), T(0), xw, GH, threads)
		}
		clear(hPrev)
		clear(aux)
		for b := range B {
			if h0 != nil {
				o := rnnStateOff(cfg.layout, D, B, H, d, b)
				copy(hState[b*H:(b+1)*H], h0[o:o+H])
			} else {
				clear(hState[b*H : (b+1)*H])
			}
			if c0 != nil {
				o := rnnStateOff(cfg.layout, D, B, H, d, b)
				copy(cState[b*H:(b+1)*H], c0[o:o+H])
			} else {
				clear(cState[b*H : (b+1)*H])
			}
		}
		for s := range S {
			gemm.Multiply(B, hrCols, H, T(1), gemm.NewMatrix(hState, H, false), gemm.NewMatrix(rd, H, true), T(0), hr, hrCols, threads)
			if gruSplit {
				clear(rhStep)
			}
			for b := range B {
				if s >= lens[b] {
					continue
				}
				t := s
				if reverse {
					t = lens[b] - 1 - s
				}
				row := t*B + b
				xr := xw[row*GH : (row+1)*GH]
				hrow := hState[b*H : (b+1)*H]
				hrr := hr[b*hrCols : (b+1)*hrCols]
				pe := pre[row*GH : (row+1)*GH]
				ac := act[row*GH : (row+1)*GH]
				copy(hPrev[row*H:(row+1)*H], hrow)
				for i := range GH {
					pe[i] = xr[i] + gBias[i]
				}
				for i := range hrCols {
					pe[i] += hrr[i]
				}
				switch cfg.cell {
				case cellRNN:
					for i := range H {
						v := T(acts[0].apply(cfg.clipped(float64(pe[i]))))
						ac[i], hrow[i] = v, v
					}
				case cellLSTM:
					crow := cState[b*H : (b+1)*H]
					copy(cPrev[row*H:(row+1)*H], crow)
					f, gg, hh := acts[0], acts[1], acts[2]
					for j := range H {
						cp := float64(crow[j])
						pi, po, pf := 0.0, 0.0, 0.0
						if pd != nil {
							pi, po, pf = float64(pd[j]), float64(pd[H+j]), float64(pd[2*H+j])
						}
						ai := float64(pe[j]) + pi*cp
						ig := f.apply(cfg.clipped(ai))
						var fg float64
						if cfg.inputForget {
							fg = 1 - ig
						} else {
							af := float64(pe[2*H+j]) + pf*cp
							fg = f.apply(cfg.clipped(af))
							pe[2*H+j] = T(af)
						}
						cc := gg.apply(cfg.clipped(float64(pe[3*H+j])))
						c := fg*cp + ig*cc
						ao := float64(pe[H+j]) + po*c
						og := f.apply(cfg.clipped(ao))
						pe[j], pe[H+j] = T(ai), T(ao)
						ac[j], ac[H+j], ac[2*H+j], ac[3*H+j] = T(ig), T(og), T(fg), T(cc)
						crow[j] = T(c)
						cNew[row*H+j] = T(c)
						hrow[j] = T(og * hh.apply(c))
					}
				case cellGRU:
					for i := range 2 * H {
						ac[i] = T(acts[0].apply(cfg.clipped(float64(pe[i]))))
					}
					if gruSplit {
						for i := range H {
							v := ac[H+i] * hrow[i]
							rhStep[b*H+i] = v
							aux[row*H+i] = v
						}
						continue
					}
					for i := range H {
						lin := hrr[2*H+i] + rbh[i]
						aux[row*H+i] = lin
						ph := xr[2*H+i] + gBias[2*H+i] + ac[H+i]*lin
						pe[2*H+i] = ph
						hc := T(acts[1].apply(cfg.clipped(float64(ph))))
						ac[2*H+i] = hc
						z := ac[i]
						hrow[i] = (1-z)*hc + z*hrow[i]
					}
				}
			}
			if !gruSplit {
				continue
			}
			gemm.Multiply(B, H, H, T(1), gemm.NewMatrix(rhStep, H, false), gemm.NewMatrix(rd[2*H*H:], H, true), T(0), rhR, H, threads)
			for b := range B {
				if s >= lens[b] {
					continue
				}
				t := s
				if reverse {
					t = lens[b] - 1 - s
				}
				row := t*B + b
				xr := xw[row*GH : (row+1)*GH]
				hrow := hState[b*H : (b+1)*H]
				pe := pre[row*GH : (row+1)*GH]
				ac := act[row*GH : (row+1)*GH]
				for i := range H {
					ph := xr[2*H+i] + gBias[2*H+i] + rhR[b*H+i]
					pe[2*H+i] = ph
					hc := T(acts[1].apply(cfg.clipped(float64(ph))))
					ac[2*H+i] = hc
					z := ac[i]
					hrow[i] = (1-z)*hc + z*hrow[i]
				}
			}
		}

		// Walk back through time.
		for b := range B {
			o := rnnStateOff(cfg.layout, D, B, H, d, b)
			if gyh != nil {
				copy(dH[b*H:(b+1)*H], gyh[o:o+H])
			} else {
				clear(dH[b*H : (b+1)*H])
			}
			if gyc != nil {
				copy(dC[b*H:(b+1)*H], gyc[o:o+H])
			} else {
				clear(dC[b*H : (b+1)*H])
			}
		}
		clear(dGX)
		if lbr {
			clear(dGR)
		}
		var dpd []T
		if dp != nil {
			dpd = dp[d*3*H : (d+1)*3*H]
		}
		for s := S - 1; s >= 0; s-- {
			for b := range B {
				gs := dGs[b*GH : (b+1)*GH]
				if s >= lens[b] {
					clear(gs)
					continue
				}
				t := s
				if reverse {
					t = lens[b] - 1 - s
				}
				row := t*B + b
				dh := dH[b*H : (b+1)*H]
				if gy != nil {
					o := rnnYOff(cfg.layout, S, D, B, H, t, d, b)
					addInto(dh, gy[o:o+H])
				}
				pe := pre[row*GH : (row+1)*GH]
				ac := act[row*GH : (row+1)*GH]
				hp := hPrev[row*H : (row+1)*H]
				switch cfg.cell {
				case cellRNN:
					for i := range H {
						gs[i] = dh[i] * T(cfg.actGrad(acts[0], float64(pe[i]), float64(ac[i])))
					}
				case cellLSTM:
					f, gg, hh := acts[0], acts[1], acts[2]
					for j := range H {
						c, cp := float64(cNew[row*H+j]), float64(cPrev[row*H+j])
						ig, og, fg, cc := float64(ac[j]), float64(ac[H+j]), float64(ac[2*H+j]), float64(ac[3*H+j])
						pi, po, pf := 0.0, 0.0, 0.0
						if pd != nil {
							pi, po, pf = float64(pd[j]), float64(pd[H+j]), float64(pd[2*H+j])
						}
						dhj := float64(dh[j])
						hc := hh.apply(c)
						dAo := dhj * hc * cfg.actGrad(f, float64(pe[H+j]), og)
						dc := float64(dC[b*H+j]) + dhj*og*hh.deriv(c, hc) + dAo*po
						dI := dc * cc
						dCp := dc * fg
						var dAf float64
						if cfg.inputForget {
							dI -= dc * cp
						} else {
							dAf = dc * cp * cfg.actGrad(f, float64(pe[2*H+j]), fg)
							dCp += dAf * pf
						}
						dAi := dI * cfg.actGrad(f, float64(pe[j]), ig)
						dCp += dAi * pi
						dAc := dc * ig * cfg.actGrad(gg, float64(pe[3*H+j]), cc)
						if dpd != nil {
							dpd[j] += T(dAi * cp)
							dpd[H+j] += T(dAo * c)
							dpd[2*H+j] += T(dAf * cp)
						}
						gs[j], gs[H+j], gs[2*H+j], gs[3*H+j] = T(dAi), T(dAo), T(dAf), T(dAc)
						dC[b*H+j] = T(dCp)
					}
				case cellGRU:
					for i := range H {
						z, hc := float64(ac[i]), float64(ac[2*H+i])
						dhi := float64(dh[i])
						dAh := dhi * (1 - z) * cfg.actGrad(acts[1], float64(pe[2*H+i]), hc)
						gs[i] = T(dhi * (float64(hp[i]) - hc) * cfg.actGrad(acts[0], float64(pe[i]), z))
						dHd[b*H+i] = T(dhi * z)
						if gruSplit {
							gs[2*H+i] = T(dAh) // gs[H+i] needs dAh·Rh: below
							continue
						}
						rg := float64(ac[H+i])
						gs[2*H+i] = T(dAh * rg)
						gs[H+i] = T(dAh * float64(aux[row*H+i]) * cfg.actGrad(acts[0], float64(pe[H+i]), rg))
						dGX[row*GH+2*H+i] = T(dAh)
					}
				}
			}
			if gruSplit {
				// d(r ⊙ H(t-1)) = dAh·Rh
				gemm.Multiply(B, H, H, T(1), gemm.NewMatrix(dGs[2*H:], GH, false), gemm.NewMatrix(rd[2*H*H:], H, false), T(0), dRh, H, threads)
				for b := range B {
					if s >= lens[b] {
						continue
					}
					t := s
					if reverse {
						t = lens[b] - 1 - s
					}
					row := t*B + b
					for i := range H {
						rg := float64(act[row*GH+H+i])
						drh := float64(dRh[b*H+i])
						dGs[b*GH+H+i] = T(drh * float64(hPrev[row*H+i]) * cfg.actGrad(acts[0], float64(pre[row*GH+H+i]), rg))
						dHd[b*H+i] += T(drh * rg)
					}
				}
			}
			gemm.Multiply(B, H, hrCols, T(1), gemm.NewMatrix(dGs, GH, false), gemm.NewMatrix(rd, H, false), T(0), dHp, H, threads)
			for b := range B {
				if s >= lens[b] {
					continue
				}
				t := s
				if reverse {
					t = lens[b] - 1 - s
				}
				row := t*B + b
				dh := dH[b*H : (b+1)*H]
				copy(dh, dHp[b*H:(b+1)*H])
				if cfg.cell == cellGRU {
					addInto(dh, dHd[b*H:(b+1)*H])
				}
				gs := dGs[b*GH : (b+1)*GH]
				if lbr {
					copy(dGR[row*GH:(row+1)*GH], gs)
					copy(dGX[row*GH:row*GH+2*H], gs[:2*H])
				} else {
					copy(dGX[row*GH:(row+1)*GH], gs)
				}
			}
		}

		// The initial states' gradients and the products over all steps.
		for b := range B {
			o := rnnStateOff(cfg.layout, D, B, H, d, b)
			if dh0 != nil {
				copy(dh0[o:o+H], dH[b*H:(b+1)*H])
			}
			if dc0 != nil {
				copy(dc0[o:o+H], dC[b*H:(b+1)*H])
			}
		}
		if SB == 0 {
			continue
		}
		if dw != nil {
			// dW (GH x I) = dGXᵀ · X
			gemm.Multiply(GH, I, SB, T(1), gemm.NewMatrix(dGX, GH, true), gemm.NewMatrix(xs, I, false), T(0), dw[d*GH*I:], I, threads)
		}
		if dxs != nil {
			// dX (SB x I) += dGX · W
			gemm.Multiply(SB, I, GH, T(1), gemm.NewMatrix(dGX, GH, false), gemm.NewMatrix(wd, I, false), T(1), dxs, I, threads)
		}
		if dr != nil {
			drd := dr[d*GH*H:]
			// dR (GH x H) = dGRᵀ · H(t-1); GRU's Rh multiplies r ⊙ H(t-1).
			gemm.Multiply(hrCols, H, SB, T(1), gemm.NewMatrix(dGR, GH, true), gemm.NewMatrix(hPrev, H, false), T(0), drd, H, threads)
			if gruSplit {
				gemm.Multiply(H, H, SB, T(1), gemm.NewMatrix(dGX[2*H:], GH, true), gemm.NewMatrix(aux, H, false), T(0), drd[2*H*H:], H, threads)
			}
		}
		if db != nil {
			wb := db[d*2*GH : d*2*GH+GH]
			rb := db[d*2*GH+GH : (d+1)*2*GH]
			for row := range SB {
				addInto(wb, dGX[row*GH:(row+1)*GH])
				addInto(rb, dGR[row*GH:(row+1)*GH])
			}
		}
	}
	if dx != nil && cfg.layout == 1 {
		for b := range B {
			for s := range S {
				copy(dx[(b*S+s)*I:(b*S+s+1)*I], dxs[(s*B+b)*I:(s*B+b+1)*I])
			}
		}
	}
}
