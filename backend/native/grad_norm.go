package native

import (
	"fmt"
	"math"
	"slices"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/backend/native/internal/vec"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rules of the normalizations: BatchNormalization (training and
// inference), LayerNormalization and RMSNormalization, Instance- and
// GroupNormalization, MeanVarianceNormalization.
//
// All of them normalize x over a set of elements (a "row") with the row's
// mean μ and inv = 1/sqrt(var + eps), then apply a per-feature affine map
// y = x̂·γ + β. With g = dy·γ and m elements per row:
//
//	dx = inv · (g - mean(g) - x̂ · mean(g·x̂))     (RMS: no mean(g) term)
//	dγ = Σ dy · x̂,   dβ = Σ dy                    (per feature)
//
// The statistics are recomputed in float64, as the forward computes them.
// Gradients that reach a statistics output (LayerNormalization's Mean and
// InvStdDev, BatchNormalization's running and saved statistics) are
// propagated too.

// gnormF64 reads a float32 or float64 tensor into the reusable buffer buf.
func gnormF64(buf *[]float64, t *onnx.Tensor, what string) ([]float64, error) {
	n := t.Len()
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	out := (*buf)[:n]
	switch d := t.Data.(type) {
	case []float32:
		for i, v := range d {
			out[i] = float64(v)
		}
	case []float64:
		copy(out, d)
	default:
		return nil, network.Unsupportedf("gradients through tensor(%v) (%s)", t.Type, what)
	}
	return out, nil
}

// gnormGrad reads the gradient that reached slot as float64 values (nil
// when none did), checking it has n elements.
func gnormGrad(g *gradState, slot int, buf *[]float64, n int, what string) ([]float64, error) {
	gt := g.of(slot)
	if gt == nil {
		return nil, nil
	}
	if gt.Len() != n {
		return nil, fmt.Errorf("gradient of %s has shape %v; want %d elements", what, gt.Shape, n)
	}
	return gnormF64(buf, gt, what)
}

// gnormPut writes vals into scratch in like's type and shape and adds it
// to slot's gradient.
func gnormPut(g *gradState, slot int, s *gradScratch, like *onnx.Tensor, vals []float64) error {
	if !g.wants(slot) {
		return nil
	}
	t := s.buf.tensor(like.Type, like.Shape)
	switch d := t.Data.(type) {
	case []float32:
		for i, v := range vals {
			d[i] = float32(v)
		}
	case []float64:
		copy(d, vals)
	default:
		return network.Unsupportedf("gradients of tensor(%v)", like.Type)
	}
	return g.add(slot, t)
}

// gnormZero returns buf resized to n and zeroed.
func gnormZero(buf *[]float64, n int) []float64 {
	out := scratchOf(buf, n)
	clear(out)
	return out
}

// ---------------------------------------------------------------------
// Rows: LayerNormalization, RMSNormalization, Instance- and
// GroupNormalization.

// gnormRows describes one backward call over x seen as [rows, inner];
// element e (flat) belongs to feature (e/div) % len(scale).
type gnormRows struct {
	rows, inner int
	eps         float64
	rms         bool
	scale       []float64
	div         int
	// Per-row statistics, filled by gnormRowsBackward.
	means, invs []float64
	// Gradients reaching per-row statistics outputs (nil: none).
	dMean, dInv []float64
}

// gnormRowsBackward computes each row's statistics and, when dx is not
// nil, dx (overwritten). Rows are spread over goroutines; each writes only
// its own row of dx and its own statistics.
func gnormRowsBackward[T floatElem](dx, x, dy []T, sp *gnormRows, threads int) {
	inner, div, nf := sp.inner, max(sp.div, 1), len(sp.scale)
	fin := float64(inner)
	par.For(sp.rows, threads, max(1, par.Grain/max(inner, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			src, gy := x[r*inner:(r+1)*inner], dy[r*inner:(r+1)*inner]
			var mean float64
			if !sp.rms {
				for _, v := range src {
					mean += float64(v)
				}
				mean /= fin
			}
			var q float64
			for _, v := range src {
				d := float64(v) - mean
				q += d * d
			}
			inv := 1 / math.Sqrt(q/fin+sp.eps)
			sp.means[r], sp.invs[r] = mean, inv
			if dx == nil {
				continue
			}
			var sg, sgx float64
			for i := 0; i < inner; {
				flat := r*inner + i
				a := sp.scale[(flat/div)%nf]
				run := min(div-flat%div, inner-i)
				for j := i; j < i+run; j++ {
					g := float64(gy[j]) * a
					sg += g
					sgx += g * (float64(src[j]) - mean) * inv
				}
				i += run
			}
			mg, mgx := sg/fin, sgx/fin
			if sp.rms {
				mg = 0
			}
			// Statistics outputs: dMean/inner, and dInv · d inv/dx =
			// -dInv · inv² · x̂ / inner.
			var statsC, statsX float64
			if sp.dMean != nil {
				statsC = sp.dMean[r] / fin
			}
			if sp.dInv != nil {
				statsX = -sp.dInv[r] * inv * inv / fin
			}
			out := dx[r*inner : (r+1)*inner]
			for i := 0; i < inner; {
				flat := r*inner + i
				a := sp.scale[(flat/div)%nf]
				run := min(div-flat%div, inner-i)
				for j := i; j < i+run; j++ {
					xh := (float64(src[j]) - mean) * inv
					out[j] = T(inv*(float64(gy[j])*a-mg-xh*mgx) + statsC + statsX*xh)
				}
				i += run
			}
		}
	})
}

// gnormRowsParams adds Σ dy·x̂ and Σ dy of each feature into dscale and
// dbias (either may be nil), with the statistics gnormRowsBackward left.
func gnormRowsParams[T floatElem](dscale, dbias []float64, x, dy []T, sp *gnormRows) {
	inner, div, nf := sp.inner, max(sp.div, 1), len(sp.scale)
	for r := range sp.rows {
		mean, inv := sp.means[r], sp.invs[r]
		for i := 0; i < inner; {
			flat := r*inner + i
			f := (flat / div) % nf
			run := min(div-flat%div, inner-i)
			var s, sx float64
			for j := flat; j < flat+run; j++ {
				d := float64(dy[j])
				s += d
				sx += d * (float64(x[j]) - mean) * inv
			}
			if dscale != nil {
				dscale[f] += sx
			}
			if dbias != nil {
				dbias[f] += s
			}
			i += run
		}
	}
}

// gnormRowsKernel is the shared backward kernel of the row
// normalizations; layout turns the forward's attributes and the input
// shape into rows, inner, div and the number of features.
type gnormRowsKernel struct {
	name              string
	x, scale, bias, y int
	mean, inv         int // LayerNormalization's statistics outputs (-1: none)
	eps               float64
	rms               bool
	layer             bool  // Layer/RMSNormalization: rows split at axis
	axis              int64 // Layer/RMSNormalization
	numGroups         int64 // GroupNormalization (0: InstanceNormalization)
	perGroup          bool  // GroupNormalization version 18
	threads           int

	target                   []int // Layer/RMSNormalization: the normalized shape
	sx, sScale, sBias, zeroY gradScratch
	scaleBuf                 []float64
	dScaleBuf, dBiasBuf      []float64
	meanBuf, invBuf          []float64
	dMeanBuf, dInvBuf        []float64
	redScale, redBias        []float64
	spec                     gnormRows
}

func (gb *gradBuilder) VisitLayerNormalization(op *ops.LayerNormalization) error {
	if _, err := stashType("LayerNormalization", op.StashType); err != nil {
		return err
	}
	k := &gnormRowsKernel{name: "LayerNormalization", layer: true, x: gb.slot(op.In.X), scale: gb.slot(op.In.Scale), bias: gb.slot(op.In.B),
		y: gb.slot(op.Out.Y), mean: gb.slot(op.Out.Mean), inv: gb.slot(op.Out.InvStdDev),
		eps: float64(op.Epsilon), axis: op.Axis, threads: gb.e.threads}
	return gb.set(k.run)
}

func (gb *gradBuilder) VisitRMSNormalization(op *ops.RMSNormalization) error {
	if _, err := stashType("RMSNormalization", op.StashType); err != nil {
		return err
	}
	k := &gnormRowsKernel{name: "RMSNormalization", layer: true, x: gb.slot(op.In.X), scale: gb.slot(op.In.Scale), bias: -1,
		y: gb.slot(op.Out.Y), mean: -1, inv: -1, eps: float64(op.Epsilon), axis: op.Axis, rms: true, threads: gb.e.threads}
	return gb.set(k.run)
}

func (gb *gradBuilder) VisitInstanceNormalization(op *ops.InstanceNormalization) error {
	k := &gnormRowsKernel{name: "InstanceNormalization", x: gb.slot(op.In.Input), scale: gb.slot(op.In.Scale), bias: gb.slot(op.In.B),
		y: gb.slot(op.Out.Output), mean: -1, inv: -1, eps: float64(op.Epsilon), threads: gb.e.threads}
	return gb.set(k.run)
}

// VisitGroupNormalization: version 18 scales and shifts per group, 21 per
// channel (as the forward does).
func (gb *gradBuilder) VisitGroupNormalization(op *ops.GroupNormalization) error {
	if op.NumGroups < 1 {
		return fmt.Errorf("GroupNormalization: num_groups %d must be positive", op.NumGroups)
	}
	if op.SinceVersion() >= 21 {
		if _, err := stashType("GroupNormalization", op.StashType); err != nil {
			return err
		}
	}
	k := &gnormRowsKernel{name: "GroupNormalization", x: gb.slot(op.In.X), scale: gb.slot(op.In.Scale), bias: gb.slot(op.In.Bias),
		y: gb.slot(op.Out.Y), mean: -1, inv: -1, eps: float64(op.Epsilon), numGroups: op.NumGroups,
		perGroup: op.SinceVersion() < 21, threads: gb.e.threads}
	return gb.set(k.run)
}

// layout fills the row description of the call from x's shape (and, for
// Layer/RMSNormalization, k.target) and returns the number of features
// scale must have.
func (k *gnormRowsKernel) layout(x *onnx.Tensor, sp *gnormRows) (features int, err error) {
	if k.layer {
		axis, err := normalizeAxis(k.axis, len(x.Shape))
		if err != nil {
			return 0, err
		}
		k.target = append(k.target[:0], x.Shape[axis:]...)
		sp.rows, sp.inner, sp.div = onnx.NumElements(x.Shape[:axis]), onnx.NumElements(k.target), 1
		return sp.inner, nil
	}
	if len(x.Shape) < 2 {
		return 0, fmt.Errorf("input has shape %v; want [N, C, ...]", x.Shape)
	}
	n, c := x.Shape[0], x.Shape[1]
	spatial := onnx.NumElements(x.Shape[2:])
	groups := c
	if k.numGroups != 0 {
		if int64(c)%k.numGroups != 0 {
			return 0, fmt.Errorf("num_groups %d does not divide the %d channels", k.numGroups, c)
		}
		groups = int(k.numGroups)
	}
	features, sp.div = c, spatial
	if k.perGroup {
		features, sp.div = groups, (c/groups)*spatial
	}
	sp.rows, sp.inner = n*groups, (c/groups)*spatial
	return features, nil
}

func (k *gnormRowsKernel) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	gMean, gInv := g.of(k.mean), g.of(k.inv)
	if gy == nil && gMean == nil && gInv == nil {
		return nil
	}
	x, err := floatTensor(slots[k.x], "input X")
	if err != nil {
		return err
	}
	scale, err := floatTensor(slots[k.scale], "scale")
	if err != nil {
		return err
	}
	sp := &k.spec
	*sp = gnormRows{eps: k.eps, rms: k.rms}
	features, err := k.layout(x, sp)
	if err != nil {
		return err
	}
	if x.Len() == 0 {
		return nil
	}
	// Scale per feature: Layer/RMSNormalization broadcast it to the
	// normalized shape.
	if sp.scale, err = gnormF64(&k.scaleBuf, scale, "scale"); err != nil {
		return err
	}
	bcast := false
	if len(sp.scale) != features {
		if !k.layer {
			return fmt.Errorf("scale has shape %v; want [%d]", scale.Shape, features)
		}
		if sp.scale, err = normParam("Scale", scale, k.target, nil); err != nil {
			return err
		}
		bcast = true
	}
	if gy == nil {
		// Only statistics outputs carry gradient: y's does not count.
		gy = k.zeroY.zeros(x.Type, x.Shape)
	}
	if gy.Type != x.Type || gy.Len() != x.Len() {
		return fmt.Errorf("output gradient tensor(%v)%v for an input tensor(%v)%v", gy.Type, gy.Shape, x.Type, x.Shape)
	}
	sp.means, sp.invs = gnormZero(&k.meanBuf, sp.rows), gnormZero(&k.invBuf, sp.rows)
	if sp.dMean, err = gnormGrad(g, k.mean, &k.dMeanBuf, sp.rows, "Mean"); err != nil {
		return err
	}
	if sp.dInv, err = gnormGrad(g, k.inv, &k.dInvBuf, sp.rows, "InvStdDev"); err != nil {
		return err
	}
	var dx *onnx.Tensor
	if g.wants(k.x) {
		dx = g.dest(k.x, &k.sx, x.Type, x.Shape) // every element is written
	}
	wantScale := g.wants(k.scale)
	wantBias := k.bias >= 0 && g.wants(k.bias)
	var dScale, dBias []float64
	if wantScale {
		dScale = gnormZero(&k.dScaleBuf, len(sp.scale))
	}
	if wantBias {
		dBias = gnormZero(&k.dBiasBuf, len(sp.scale))
	}
	switch xd := x.Data.(type) {
	case []float32:
		var dxd []float32
		if dx != nil {
			dxd = dx.Data.([]float32)
		}
		gnormRowsBackward(dxd, xd, gy.Data.([]float32), sp, k.threads)
		gnormRowsParams(dScale, dBias, xd, gy.Data.([]float32), sp)
	case []float64:
		var dxd []float64
		if dx != nil {
			dxd = dx.Data.([]float64)
		}
		gnormRowsBackward(dxd, xd, gy.Data.([]float64), sp, k.threads)
		gnormRowsParams(dScale, dBias, xd, gy.Data.([]float64), sp)
	}
	if err := g.add(k.x, dx); err != nil {
		return err
	}
	if wantScale {
		if bcast {
			dScale = gnormReduceTo(dScale, k.target, scale.Shape, &k.redScale)
		}
		if err := gnormPut(g, k.scale, &k.sScale, scale, dScale); err != nil {
			return err
		}
	}
	if wantBias {
		bias, err := floatTensor(slots[k.bias], "bias")
		if err != nil {
			return err
		}
		if bias.Len() != len(dBias) {
			if !k.layer {
				return fmt.Errorf("bias has shape %v; want [%d]", bias.Shape, features)
			}
			dBias = gnormReduceTo(dBias, k.target, bias.Shape, &k.redBias)
		}
		if err := gnormPut(g, k.bias, &k.sBias, bias, dBias); err != nil {
			return err
		}
	}
	return nil
}

// gnormReduceTo sums src, of shape from, over the dimensions broadcasting
// expanded from shape to: the gradient of a broadcast parameter.
func gnormReduceTo(src []float64, from, to []int, buf *[]float64) []float64 {
	n := onnx.NumElements(to)
	dst := gnormZero(buf, n)
	if n == len(src) {
		copy(dst, src)
		return dst
	}
	sumToShape(dst, to, src, from)
	return dst
}

// ---------------------------------------------------------------------
// BatchNormalization.

// gnormBatchKernel is the backward kernel of BatchNormalization. X is
// seen as [n, features, inner] (features = channels, or channels x
// spatial positions with spatial = 0 before version 9, as in the
// forward).
//
// Training mode (the forward's choice: training_mode = 1 from version 14;
// before, statistics outputs requested, and is_test = 0 before 7): the
// batch statistics depend on X, so dX carries the two extra terms through
// the mean and variance; running_mean = input_mean·momentum +
// batch_mean·(1-momentum) sends momentum·g to input_mean and the rest to
// X through the batch mean (likewise for the variance); saved_mean and
// saved_var (the batch statistics) send their gradients to X.
//
// Inference mode: mean and var are inputs like any other, and receive
// their exact gradients (the schema marks them differentiable; freeze
// them to keep them constant); statistics outputs pass them through.
type gnormBatchKernel struct {
	x, scale, bias, mean, vr int
	y                        int
	runMean, runVar          int
	savedMean, savedVar      int
	epsilon, momentum        float64
	spatial, training        bool
	threads                  int

	sx, sScale, sBias, sMean, sVar, zeroY gradScratch
	scBuf, meanBuf, varBuf                []float64
	bMean, bVar                           []float64
	gRM, gRV, gSM, gSV                    []float64
	gM, gV                                []float64
	dScale, dBias, dMean, dVar            []float64
	spec                                  gnormBatch
	// fwd is the node's forward kernel, whose batch statistics a
	// training step reuses; stats computes them when it has none.
	fwd   *batchNormKernel
	stats batchStatsTask
	task  gnormBatch32Task
}

func (gb *gradBuilder) VisitBatchNormalization(op *ops.BatchNormalization) error {
	v := op.SinceVersion()
	k := &gnormBatchKernel{
		x: gb.slot(op.In.X), scale: gb.slot(op.In.Scale), bias: gb.slot(op.In.B), y: gb.slot(op.Out.Y),
		epsilon: float64(op.Epsilon), momentum: float64(op.Momentum),
		spatial: v >= 9 || op.Spatial != 0, threads: gb.e.threads,
		fwd: gb.e.batchNorms[gb.node],
	}
	if v >= 14 {
		if op.TrainingMode != 0 && op.TrainingMode != 1 {
			return fmt.Errorf("BatchNormalization: training_mode %d must be 0 or 1", op.TrainingMode)
		}
		k.mean, k.vr = gb.slot(op.In.InputMean), gb.slot(op.In.InputVar)
		k.training = op.TrainingMode == 1
		k.runMean, k.runVar = gb.slot(op.Out.RunningMean), gb.slot(op.Out.RunningVar)
		k.savedMean, k.savedVar = -1, -1
	} else {
		k.mean, k.vr = gb.slot(op.In.Mean), gb.slot(op.In.Var)
		k.runMean, k.runVar = gb.slot(op.Out.Mean), gb.slot(op.Out.Var)
		k.savedMean, k.savedVar = gb.slot(op.Out.SavedMean), gb.slot(op.Out.SavedVar)
		wantStats := op.Out.Mean != "" || op.Out.Var != "" || op.Out.SavedMean != "" || op.Out.SavedVar != ""
		if v < 7 {
			k.training = op.IsTest == 0 && wantStats
		} else {
			k.training = wantStats
		}
	}
	return gb.set(k.run)
}

func (k *gnormBatchKernel) run(slots []onnx.Value, g *gradState) error {
	gyT := g.of(k.y)
	if gyT == nil && g.of(k.runMean) == nil && g.of(k.runVar) == nil && g.of(k.savedMean) == nil && g.of(k.savedVar) == nil {
		return nil
	}
	x, err := floatTensor(slots[k.x], "input X")
	if err != nil {
		return err
	}
	if len(x.Shape) < 2 {
		return fmt.Errorf("input X has shape %v; want [N, C, ...]", x.Shape)
	}
	var ts [4]*onnx.Tensor
	for i, s := range []int{k.scale, k.bias, k.mean, k.vr} {
		if ts[i], err = floatTensor(slots[s], [...]string{"scale", "B", "mean", "var"}[i]); err != nil {
			return err
		}
	}
	scaleT, biasT, meanT, varT := ts[0], ts[1], ts[2], ts[3]
	n, c := x.Shape[0], x.Shape[1]
	inner := onnx.NumElements(x.Shape[2:])
	features := c
	if !k.spatial && inner > 1 && scaleT.Len() == c*inner {
		features, inner = c*inner, 1
	}
	for i, t := range ts {
		if t.Len() != features {
			return fmt.Errorf("%s has shape %v; want %d values for X %v", [...]string{"scale", "B", "mean", "var"}[i], t.Shape, features, x.Shape)
		}
	}
	sc, err := gnormF64(&k.scBuf, scaleT, "scale")
	if err != nil {
		return err
	}
	mu, err := gnormF64(&k.meanBuf, meanT, "mean")
	if err != nil {
		return err
	}
	vr, err := gnormF64(&k.varBuf, varT, "var")
	if err != nil {
		return err
	}
	// Gradients reaching the statistics outputs.
	var gRM, gRV, gSM, gSV []float64
	if gRM, err = gnormGrad(g, k.runMean, &k.gRM, features, "running mean"); err != nil {
		return err
	}
	if gRV, err = gnormGrad(g, k.runVar, &k.gRV, features, "running var"); err != nil {
		return err
	}
	if gSM, err = gnormGrad(g, k.savedMean, &k.gSM, features, "saved mean"); err != nil {
		return err
	}
	if gSV, err = gnormGrad(g, k.savedVar, &k.gSV, features, "saved var"); err != nil {
		return err
	}
	sp := &k.spec
	*sp = gnormBatch{n: n, features: features, inner: inner, eps: k.epsilon, training: k.training, scale: sc, mean: mu, vr: vr}
	dMeanIn, dVarIn := gnormZero(&k.dMean, features), gnormZero(&k.dVar, features)
	if k.training {
		// The batch statistics are computed below; gradients reaching
		// them are gathered in gM and gV.
		sp.mean, sp.vr = gnormZero(&k.bMean, features), gnormZero(&k.bVar, features)
		if gRM != nil || gSM != nil {
			sp.gM = gnormZero(&k.gM, features)
			for f := range features {
				if gRM != nil {
					sp.gM[f] += (1 - k.momentum) * gRM[f]
					dMeanIn[f] += k.momentum * gRM[f]
				}
				if gSM != nil {
					sp.gM[f] += gSM[f]
				}
			}
		}
		if gRV != nil || gSV != nil {
			sp.gV = gnormZero(&k.gV, features)
			for f := range features {
				if gRV != nil {
					sp.gV[f] += (1 - k.momentum) * gRV[f]
					dVarIn[f] += k.momentum * gRV[f]
				}
				if gSV != nil {
					sp.gV[f] += gSV[f]
				}
			}
		}
	} else {
		// Inference: the statistics outputs are the inputs passed through.
		for f := range features {
			for _, gs := range [][]float64{gRM, gSM} {
				if gs != nil {
					dMeanIn[f] += gs[f]
				}
			}
			for _, gs := range [][]float64{gRV, gSV} {
				if gs != nil {
					dVarIn[f] += gs[f]
				}
			}
		}
	}
	if gyT == nil {
		gyT = k.zeroY.zeros(x.Type, x.Shape)
	}
	if gyT.Type != x.Type || gyT.Len() != x.Len() {
		return fmt.Errorf("output gradient tensor(%v)%v for an input tensor(%v)%v", gyT.Type, gyT.Shape, x.Type, x.Shape)
	}
	sp.dScale, sp.dBias = gnormZero(&k.dScale, features), gnormZero(&k.dBias, features)
	sp.dMean, sp.dVar = dMeanIn, dVarIn
	var dx *onnx.Tensor
	if g.wants(k.x) {
		dx = g.dest(k.x, &k.sx, x.Type, x.Shape) // every element is written
	}
	switch xd := x.Data.(type) {
	case []float32:
		var dxd []float32
		if dx != nil {
			dxd = dx.Data.([]float32)
		}
		if sp.training && inner >= minVectorRun {
			k.backward32(dxd, x, gyT.Data.([]float32), sp)
			break
		}
		gnormBatchBackward(dxd, xd, gyT.Data.([]float32), sp, k.threads)
	case []float64:
		var dxd []float64
		if dx != nil {
			dxd = dx.Data.([]float64)
		}
		gnormBatchBackward(dxd, xd, gyT.Data.([]float64), sp, k.threads)
	}
	if err := g.add(k.x, dx); err != nil {
		return err
	}
	if err := gnormPut(g, k.scale, &k.sScale, scaleT, sp.dScale); err != nil {
		return err
	}
	if err := gnormPut(g, k.bias, &k.sBias, biasT, sp.dBias); err != nil {
		return err
	}
	if err := gnormPut(g, k.mean, &k.sMean, meanT, dMeanIn); err != nil {
		return err
	}
	return gnormPut(g, k.vr, &k.sVar, varT, dVarIn)
}

// gnormBatch is one BatchNormalization backward call.
type gnormBatch struct {
	n, features, inner int
	eps                float64
	training           bool
	scale              []float64
	mean, vr           []float64 // inference: the inputs; training: filled with the batch's
	gM, gV             []float64 // training: gradients reaching the batch statistics (nil: none)
	// Outputs, per feature: dScale and dBias (overwritten); dMean and dVar
	// (inference only, added to).
	dScale, dBias, dMean, dVar []float64
}

// dxTerms gives feature f's input gradient in training mode as
// dx = a·dy + c0 + c1·(x-μ), from inv = 1/√(var+eps), Σdy and Σdy·(x-μ):
//
//	dx = γ·inv·(dy - Σdy/m - (x-μ)·inv²·Σdy(x-μ)/m) + gM/m + gV·2(x-μ)/m
func (sp *gnormBatch) dxTerms(f int, inv, sdy, sdyx float64) (a, c0, c1 float64) {
	m := float64(sp.n * sp.inner)
	a = sp.scale[f] * inv
	c0 = -a * sdy / m
	c1 = -a * inv * inv * sdyx / m
	if sp.gM != nil {
		c0 += sp.gM[f] / m
	}
	if sp.gV != nil {
		c1 += 2 * sp.gV[f] / m
	}
	return a, c0, c1
}

// backward32 is gnormBatchBackward of a float32 training step whose
// channels have runs long enough for the vector kernels: the batch
// statistics come from the forward pass of the same step (computed again
// only when the forward ran elsewhere), then one pass over dy and x gives
// Σdy and Σdy·(x-μ) per channel and one more writes dx.
func (k *gnormBatchKernel) backward32(dx []float32, x *onnx.Tensor, dy []float32, sp *gnormBatch) {
	xd := x.Data.([]float32)
	if mean, vr, ok := k.fwd.statsFor(x); ok && len(mean) == sp.features {
		copy(sp.mean, mean)
		copy(sp.vr, vr)
	} else {
		batchStats32(sp.mean, sp.vr, xd, sp.n, sp.features, sp.inner, k.threads, &k.stats)
	}
	t := &k.task
	*t = gnormBatch32Task{sp: sp, dx: dx, x: xd, dy: dy}
	t.chunks = par.Chunks(sp.features, k.threads, max(1, par.Grain/max(2*sp.n*sp.inner, 1)))
	par.Spread(t.chunks, t) // one chunk runs here
	*t = gnormBatch32Task{} // hold no tensors between runs
}

// gnormBatch32Task is backward32's per-channel work: worker w takes the
// w-th of chunks equal runs of features.
type gnormBatch32Task struct {
	sp        *gnormBatch
	dx, x, dy []float32
	chunks    int
}

func (t *gnormBatch32Task) Work(w int) {
	sp := t.sp
	n, nf, inner := sp.n, sp.features, sp.inner
	for f := w * nf / t.chunks; f < (w+1)*nf/t.chunks; f++ {
		mean := sp.mean[f]
		inv := 1 / math.Sqrt(sp.vr[f]+sp.eps)
		var sdy, sdyx float64 // Σ dy and Σ dy·(x-mean)
		for i := range n {
			base := (i*nf + f) * inner
			s, d := vec.DotCentered(t.dy[base:base+inner], t.x[base:base+inner], float32(mean))
			sdy += float64(s)
			sdyx += float64(d)
		}
		sp.dBias[f] = sdy
		sp.dScale[f] = sdyx * inv
		if t.dx == nil {
			continue
		}
		a, c0, c1 := sp.dxTerms(f, inv, sdy, sdyx)
		for i := range n {
			base := (i*nf + f) * inner
			vec.Affine2(t.dx[base:base+inner], t.dy[base:base+inner], t.x[base:base+inner], float32(a), float32(c1), float32(c0-c1*mean))
		}
	}
}

// gnormBatchBackward computes dx (when not nil; overwritten) and the
// per-feature gradients; features are spread over goroutines.
func gnormBatchBackward[T floatElem](dx, x, dy []T, sp *gnormBatch, threads int) {
	n, nf, inner := sp.n, sp.features, sp.inner
	m := float64(n * inner)
	par.For(nf, threads, max(1, par.Grain/max(n*inner, 1)), func(lo, hi int) {
		for f := lo; f < hi; f++ {
			mean := sp.mean[f]
			if sp.training {
				var s float64
				for i := range n {
					for _, v := range x[(i*nf+f)*inner : (i*nf+f+1)*inner] {
						s += float64(v)
					}
				}
				mean = s / m
				var q float64
				for i := range n {
					for _, v := range x[(i*nf+f)*inner : (i*nf+f+1)*inner] {
						q += (float64(v) - mean) * (float64(v) - mean)
					}
				}
				sp.mean[f], sp.vr[f] = mean, q/m
			}
			inv := 1 / math.Sqrt(sp.vr[f]+sp.eps)
			var sdy, sdyx float64 // Σ dy and Σ dy·(x-mean)
			for i := range n {
				base := (i*nf + f) * inner
				for j := base; j < base+inner; j++ {
					d := float64(dy[j])
					sdy += d
					sdyx += d * (float64(x[j]) - mean)
				}
			}
			gamma := sp.scale[f]
			sp.dBias[f] = sdy
			sp.dScale[f] = sdyx * inv
			if !sp.training {
				sp.dMean[f] += -sdy * gamma * inv
				sp.dVar[f] += -0.5 * gamma * inv * inv * inv * sdyx
				if dx != nil {
					a := gamma * inv
					for i := range n {
						base := (i*nf + f) * inner
						for j := base; j < base+inner; j++ {
							dx[j] = T(float64(dy[j]) * a)
						}
					}
				}
				continue
			}
			if dx == nil {
				continue
			}
			a, c0, c1 := sp.dxTerms(f, inv, sdy, sdyx)
			for i := range n {
				base := (i*nf + f) * inner
				for j := base; j < base+inner; j++ {
					dx[j] = T(a*float64(dy[j]) + c0 + c1*(float64(x[j])-mean))
				}
			}
		}
	})
}

// ---------------------------------------------------------------------
// MeanVarianceNormalization.

// gnormMVNKernel is the backward kernel of MeanVarianceNormalization:
// y = (x - μ) / s with s = σ + 1e-9 and σ = sqrt(max(E[x²] - μ², 0)) over
// the axes, as the forward computes it. With d = x - μ and m elements per
// group:
//
//	dx = (g - mean(g)) / s - d · Σ(g·d) / (m σ s²)
//
// (the last term is dropped where σ is 0, the clamp's flat side).
type gnormMVNKernel struct {
	axes    []int64
	x, y    int
	sx      gradScratch
	keyOf   []int
	idx     []int
	kStride []int
	lastX   []int
	nk      int
	sum, sq []float64
	sg, sgd []float64
}

func (gb *gradBuilder) VisitMeanVarianceNormalization(op *ops.MeanVarianceNormalization) error {
	k := &gnormMVNKernel{axes: append([]int64{}, op.Axes...), x: gb.slot(op.In.X), y: gb.slot(op.Out.Y)}
	return gb.set(k.run)
}

// layout computes, for every element of x, the flat index of its group,
// when x's shape changed since the last call.
func (k *gnormMVNKernel) layout(shape []int) error {
	if k.keyOf != nil && slices.Equal(k.lastX, shape) {
		return nil
	}
	rank := len(shape)
	axes, err := normalizeAxes(k.axes, rank)
	if err != nil {
		return err
	}
	kept := append([]int{}, shape...)
	for _, a := range axes {
		kept[a] = 1
	}
	k.kStride = rowMajorStrides(kept)
	for _, a := range axes {
		k.kStride[a] = 0
	}
	k.nk = onnx.NumElements(kept)
	n := onnx.NumElements(shape)
	k.keyOf, k.idx = make([]int, n), make([]int, rank)
	for i := range n {
		key := 0
		for d, s := range k.kStride {
			key += k.idx[d] * s
		}
		k.keyOf[i] = key
		for d := rank - 1; d >= 0; d-- {
			k.idx[d]++
			if k.idx[d] < shape[d] {
				break
			}
			k.idx[d] = 0
		}
	}
	k.lastX = append(k.lastX[:0], shape...)
	return nil
}

func (k *gnormMVNKernel) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil || !g.wants(k.x) {
		return nil
	}
	x, err := floatTensor(slots[k.x], "input X")
	if err != nil {
		return err
	}
	if gy.Type != x.Type || gy.Len() != x.Len() {
		return fmt.Errorf("output gradient tensor(%v)%v for an input tensor(%v)%v", gy.Type, gy.Shape, x.Type, x.Shape)
	}
	if err := k.layout(x.Shape); err != nil {
		return err
	}
	dx := k.sx.buf.tensor(x.Type, x.Shape) // every element is written
	switch xd := x.Data.(type) {
	case []float32:
		gnormMVN(k, dx.Data.([]float32), xd, gy.Data.([]float32))
	case []float64:
		gnormMVN(k, dx.Data.([]float64), xd, gy.Data.([]float64))
	}
	return g.add(k.x, dx)
}

func gnormMVN[T floatElem](k *gnormMVNKernel, dx, x, dy []T) {
	sum, sq := gnormZero(&k.sum, k.nk), gnormZero(&k.sq, k.nk)
	sg, sgd := gnormZero(&k.sg, k.nk), gnormZero(&k.sgd, k.nk)
	for i, v := range x {
		f := float64(v)
		sum[k.keyOf[i]] += f
		sq[k.keyOf[i]] += f * f
	}
	cnt := float64(len(x)) / float64(max(k.nk, 1))
	for j := range sum {
		sum[j] /= cnt                                           // μ
		sq[j] = math.Sqrt(math.Max(sq[j]/cnt-sum[j]*sum[j], 0)) // σ
	}
	for i, v := range x {
		key := k.keyOf[i]
		d := float64(dy[i])
		sg[key] += d
		sgd[key] += d * (float64(v) - sum[key])
	}
	for i, v := range x {
		key := k.keyOf[i]
		sigma := sq[key]
		s := sigma + 1e-9
		r := (float64(dy[i]) - sg[key]/cnt) / s
		if sigma > 0 {
			r -= (float64(v) - sum[key]) * sgd[key] / (cnt * sigma * s * s)
		}
		dx[i] = T(r)
	}
}
