package native

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/backend/native/internal/vec"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// batchNormKernel computes BatchNormalization over X [N, C, D...]:
//
//	y = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + B[c]
//
// with the given mean and variance (inference), or with the batch's own
// mean and (population) variance over N and the spatial dimensions
// (training), in which case the running statistics are updated as
// input*momentum + batch*(1-momentum). With spatial = 0 (versions before
// 9) the statistics are per element of [C, D...] rather than per channel.
type batchNormKernel struct {
	epsilon  float64
	momentum float64
	spatial  bool
	training bool
	threads  int

	out          outputBuffer
	wideX, wideY float32Scratch
	a, b         []float64    // per-feature multiplier and offset
	params       [4][]float64 // scale, B, mean and var widened, kept for their storage
	res          batchNormResult
	// task is the parallel path's *scaleShiftTask of the element type
	// last run, kept so that handing it to the workers allocates nothing.
	task  any
	stats batchStatsTask
	// The batch statistics of the last training run, per feature, and
	// the input they were computed from (its storage and length), so that
	// the backward pass of the same step can use them (statsFor).
	batchMean, batchVar []float64
	runMean, runVar     []float64
	statsX              *float32
	statsLen            int
	// statOut holds the statistics outputs (running mean and variance,
	// saved mean and variance) of the training runs, reused from run to
	// run.
	statOut [4]outputBuffer
}

// statsFor returns the batch mean and variance the last training run
// computed, when x is the float32 input it computed them from.
func (k *batchNormKernel) statsFor(x *onnx.Tensor) (mean, vr []float64, ok bool) {
	if k == nil {
		return nil, nil, false
	}
	xd, isF32 := x.Data.([]float32)
	if !k.training || !isF32 || k.statsX == nil || len(xd) != k.statsLen || unsafe.SliceData(xd) != k.statsX {
		return nil, nil, false
	}
	return k.batchMean, k.batchVar, true
}

// batchNormResult holds the statistics a training run outputs.
type batchNormResult struct {
	y                   *onnx.Tensor
	runMean, runVar     []float64
	batchMean, batchVar []float64
}

func (k *batchNormKernel) compute(x, scale, bias, mean, variance *onnx.Tensor) (*batchNormResult, error) {
	if err := checkStorage(x); err != nil {
		return nil, err
	}
	if len(x.Shape) < 2 {
		return nil, fmt.Errorf("input X has shape %v; want [N, C, ...]", x.Shape)
	}
	n, c := x.Shape[0], x.Shape[1]
	inner := onnx.NumElements(x.Shape[2:])
	features := c
	params := []struct {
		name string
		t    *onnx.Tensor
	}{{"scale", scale}, {"B", bias}, {"mean", mean}, {"var", variance}}
	if !k.spatial && inner > 1 {
		// Per-element statistics when the parameters say so.
		if scale.Len() == c*inner {
			features, inner = c*inner, 1
		}
	}
	vals := &k.params
	for i, p := range params {
		if p.t.Len() != features {
			return nil, fmt.Errorf("%s has shape %v; want %d values for X %v", p.name, p.t.Shape, features, x.Shape)
		}
		if cap(vals[i]) < features {
			vals[i] = make([]float64, features)
		}
		vals[i] = vals[i][:features]
		if !float64sInto(vals[i], p.t.Data) {
			return nil, fmt.Errorf("%s: %w", p.name, network.Unsupportedf("tensor(%v) as real numbers", p.t.Type))
		}
	}
	sc, bs, mu, vr := vals[0], vals[1], vals[2], vals[3]
	// The result is the kernel's: the caller reads it before the next run.
	res := &k.res
	*res = batchNormResult{}
	k.statsX = nil
	if k.training {
		bm, bv := scratchOf(&k.batchMean, features), scratchOf(&k.batchVar, features)
		if xd, ok := x.Data.([]float32); ok && inner >= minVectorRun {
			batchStats32(bm, bv, xd, n, features, inner, k.threads, &k.stats)
			k.statsX, k.statsLen = unsafe.SliceData(xd), len(xd)
		} else if err := batchStats(bm, bv, x, n, features, inner); err != nil {
			return nil, err
		}
		res.batchMean, res.batchVar = bm, bv
		res.runMean, res.runVar = scratchOf(&k.runMean, features), scratchOf(&k.runVar, features)
		for f := range features {
			res.runMean[f] = mu[f]*k.momentum + bm[f]*(1-k.momentum)
			res.runVar[f] = vr[f]*k.momentum + bv[f]*(1-k.momentum)
		}
		mu, vr = bm, bv
	}
	if cap(k.a) < features {
		k.a, k.b = make([]float64, features), make([]float64, features)
	}
	a, b := k.a[:features], k.b[:features]
	for f := range features {
		a[f] = sc[f] / math.Sqrt(vr[f]+k.epsilon)
		b[f] = bs[f] - mu[f]*a[f]
	}
	out := k.out.tensor(x.Type, x.Shape)
	switch xd := x.Data.(type) {
	case []float32:
		scaleShiftPlanes(out.Data.([]float32), xd, a, b, n, features, inner, k.threads, taskOf[scaleShiftTask[float32]](&k.task))
	case []float64:
		scaleShiftPlanes(out.Data.([]float64), xd, a, b, n, features, inner, k.threads, taskOf[scaleShiftTask[float64]](&k.task))
	case []onnx.F16, []onnx.BF16:
		wx, _ := widenToFloat32(k.wideX.get(x.Len()), x.Data)
		wy := k.wideY.get(out.Len())
		scaleShiftPlanes(wy, wx, a, b, n, features, inner, k.threads, taskOf[scaleShiftTask[float32]](&k.task))
		if err := narrowFromFloat32(out.Data, wy); err != nil {
			return nil, err
		}
	default:
		return nil, network.Unsupportedf("BatchNormalization of %v tensors", x.Type)
	}
	res.y = out
	return res, nil
}

// minVectorRun is the shortest run of a channel (its inner positions) the
// float32 statistics go through the vector kernels for; shorter runs (a
// BatchNormalization after a Gemm: one element per channel and image)
// take the float64 loops.
const minVectorRun = 16

// batchStats32 writes the mean and population variance of each feature
// of x [n, features, inner] into mean and vr: each run of inner elements
// summed in the vector kernels' lanes, the runs in float64; the variance
// from the deviations about the mean, not E[x²]-E[x]², which cancels.
// Features are spread over the workers through task, the caller's.
func batchStats32(mean, vr []float64, x []float32, n, features, inner, threads int, task *batchStatsTask) {
	chunks := par.Chunks(features, threads, max(1, par.Grain/max(2*n*inner, 1)))
	*task = batchStatsTask{mean: mean, vr: vr, x: x, n: n, features: features, inner: inner, chunks: chunks}
	par.Spread(chunks, task) // one chunk runs here
	*task = batchStatsTask{} // hold no tensors between runs
}

// batchStatsTask is batchStats32's work: worker w takes the w-th of
// chunks equal runs of features.
type batchStatsTask struct {
	mean, vr                   []float64
	x                          []float32
	n, features, inner, chunks int
}

func (t *batchStatsTask) Work(w int) {
	cnt := float64(t.n * t.inner)
	for f := w * t.features / t.chunks; f < (w+1)*t.features/t.chunks; f++ {
		var s float64
		for i := range t.n {
			s += float64(vec.Sum(t.plane(i, f)))
		}
		m := s / cnt
		var q float64
		for i := range t.n {
			q += float64(vec.SumSquaredDeviations(t.plane(i, f), float32(m)))
		}
		t.mean[f], t.vr[f] = m, q/cnt
	}
}

// plane is image i's run of feature f.
func (t *batchStatsTask) plane(i, f int) []float32 {
	return t.x[(i*t.features+f)*t.inner : (i*t.features+f+1)*t.inner]
}

// batchStats writes the mean and population variance of each feature
// over the batch and the inner positions into mean and vr, in float64.
func batchStats(mean, vr []float64, x *onnx.Tensor, n, features, inner int) error {
	xs, err := float64sOf(x)
	if err != nil {
		return err
	}
	cnt := float64(n * inner)
	for f := range features {
		var s float64
		for i := range n {
			for _, v := range xs[(i*features+f)*inner : (i*features+f+1)*inner] {
				s += v
			}
		}
		m := s / cnt
		var q float64
		for i := range n {
			for _, v := range xs[(i*features+f)*inner : (i*features+f+1)*inner] {
				q += (v - m) * (v - m)
			}
		}
		mean[f], vr[f] = m, q/cnt
	}
	return nil
}

// scaleShiftPlanes writes y = x*a[f] + b[f] for X seen as [n, features,
// inner], planes spread over goroutines.
// Large tensors are split over the workers through task, the caller's.
func scaleShiftPlanes[T floatElem](y, x []T, a, b []float64, n, features, inner, threads int, task *scaleShiftTask[T]) {
	planes, minPlanes := n*features, max(1, par.Grain/max(inner, 1))
	chunks := par.Chunks(planes, threads, minPlanes)
	if chunks == 1 {
		scaleShiftPlaneRange(y, x, a, b, features, inner, 0, planes)
		return
	}
	*task = scaleShiftTask[T]{y: y, x: x, a: a, b: b, features: features, inner: inner, planes: planes, chunks: chunks}
	par.Spread(chunks, task)
	*task = scaleShiftTask[T]{} // hold no tensors between runs
}

// scaleShiftTask is scaleShiftPlanes's parallel work: worker w takes the
// w-th of chunks equal runs of planes.
type scaleShiftTask[T floatElem] struct {
	y, x                            []T
	a, b                            []float64
	features, inner, planes, chunks int
}

func (t *scaleShiftTask[T]) Work(w int) {
	scaleShiftPlaneRange(t.y, t.x, t.a, t.b, t.features, t.inner, w*t.planes/t.chunks, (w+1)*t.planes/t.chunks)
}

// scaleShiftPlaneRange is scaleShiftPlanes over planes [lo, hi).
func scaleShiftPlaneRange[T floatElem](y, x []T, a, b []float64, features, inner, lo, hi int) {
	for p := lo; p < hi; p++ {
		f := p % features
		av, bv := T(a[f]), T(b[f])
		src, dst := x[p*inner:(p+1)*inner], y[p*inner:(p+1)*inner]
		if s, ok := any(src).([]float32); ok {
			vec.ScaleShift(any(dst).([]float32), s, any(av).(float32), any(bv).(float32))
			continue
		}
		for i, v := range src {
			dst[i] = v*av + bv
		}
	}
}

// VisitBatchNormalization compiles BatchNormalization at every version:
// 1 and 6 (is_test, spatial; consumed_inputs ignored), 7 (spatial), 9,
// 14 and 15 (training_mode with running statistics outputs). Before 14,
// training is chosen by is_test = 0 (versions 1 and 6) or, from 7, by
// asking for the statistics outputs.
func (b *builder) VisitBatchNormalization(op *ops.BatchNormalization) error {
	v := op.SinceVersion()
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	scale, err := b.input(op.In.Scale)
	if err != nil {
		return err
	}
	bias, err := b.input(op.In.B)
	if err != nil {
		return err
	}
	meanName, varName := op.In.Mean, op.In.Var
	if v >= 14 {
		meanName, varName = op.In.InputMean, op.In.InputVar
	}
	mean, err := b.input(meanName)
	if err != nil {
		return err
	}
	variance, err := b.input(varName)
	if err != nil {
		return err
	}
	k := &batchNormKernel{
		epsilon:  float64(op.Epsilon),
		momentum: float64(op.Momentum),
		spatial:  v >= 9 || op.Spatial != 0,
		threads:  b.e.threads,
	}
	if b.node != nil && !b.probing {
		if b.e.batchNorms == nil {
			b.e.batchNorms = map[*onnx.Node]*batchNormKernel{}
		}
		b.e.batchNorms[b.node] = k
	}
	y := b.output(op.Out.Y)
	var runMean, runVar, savedMean, savedVar valueRef
	if v >= 14 {
		if op.TrainingMode != 0 && op.TrainingMode != 1 {
			return fmt.Errorf("BatchNormalization: training_mode %d must be 0 or 1", op.TrainingMode)
		}
		k.training = op.TrainingMode == 1
		runMean, runVar = b.output(op.Out.RunningMean), b.output(op.Out.RunningVar)
		savedMean, savedVar = b.output(""), b.output("")
	} else {
		runMean, runVar = b.output(op.Out.Mean), b.output(op.Out.Var)
		savedMean, savedVar = b.output(op.Out.SavedMean), b.output(op.Out.SavedVar)
		wantStats := runMean.present() || runVar.present() || savedMean.present() || savedVar.present()
		if v < 7 {
			k.training = op.IsTest == 0 && wantStats
		} else {
			k.training = wantStats
		}
	}
	return b.emit(func(slots []onnx.Value) error {
		var ts [5]*onnx.Tensor
		for i, r := range []valueRef{x, scale, bias, mean, variance} {
			t, err := r.tensor(slots)
			if err != nil {
				return err
			}
			ts[i] = t
		}
		res, err := k.compute(ts[0], ts[1], ts[2], ts[3], ts[4])
		if err != nil {
			return err
		}
		y.set(slots, res.y)
		// Statistics outputs: in the running statistics' type (version
		// 15 lets it differ from X), shaped like the mean input.
		stat := func(i int, r valueRef, vals []float64, like *onnx.Tensor) error {
			if !r.present() {
				return nil
			}
			if vals == nil { // inference: pass the given statistics through
				r.set(slots, like.Clone())
				return nil
			}
			t := k.statOut[i].tensor(like.Type, like.Shape)
			if !storeFloat64s(t, vals) {
				var err error
				if t, err = tensorFromFloat64s(like.Type, like.Shape, vals); err != nil {
					return err
				}
			}
			r.set(slots, t)
			return nil
		}
		if err := stat(0, runMean, res.runMean, ts[3]); err != nil {
			return err
		}
		if err := stat(1, runVar, res.runVar, ts[4]); err != nil {
			return err
		}
		if err := stat(2, savedMean, res.batchMean, ts[3]); err != nil {
			return err
		}
		return stat(3, savedVar, res.batchVar, ts[4])
	})
}
