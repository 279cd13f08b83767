package vec

// The activations and row kernels of mathkernels_amd64.s are generated
// with avo by the separate module in _asm (which keeps avo out of the
// main module's dependencies).
//
//go:generate go run -C _asm . -file math -out ../mathkernels_amd64.s -stubs ../mathkernels_amd64.go -pkg vec

// The kernels package native calls. Each runs the implementation the
// dispatch table chose at init. Slices are read over len(x); the outputs
// must be at least as long.

// Clip writes y[i] = min(max(x[i], lo), hi); a NaN stays NaN (as ONNX's
// Clip, numpy.clip, has it).
func Clip(y, x []float32, lo, hi float32) { active.Clip(y, x, lo, hi) }

// ScaleShift writes y[i] = x[i]*a + b (fused into one rounding where the
// implementation has an FMA instruction).
func ScaleShift(y, x []float32, a, b float32) { active.ScaleShift(y, x, a, b) }

// BiasClip sets y[i] = min(max(x[i]+b, lo), hi): ScaleShift(y, x, 1, b)
// followed by Clip(y, y, lo, hi), bit for bit (a NaN passes through), in
// one pass over the data. y may be x.
func BiasClip(y, x []float32, b, lo, hi float32) { active.BiasClip(y, x, b, lo, hi) }

// ReluGrad writes dx[i] = dy[i] where x[i] > 0, else +0: Relu's backward
// pass (a NaN x gives 0).
func ReluGrad(dx, dy, x []float32) { active.ReluGrad(dx, dy, x) }

// Axpy adds a·x[i] to y[i].
func Axpy(a float32, x, y []float32) { active.Axpy(a, x, y) }

// Dot returns the sum of x[i]·y[i]. Implementations may add the terms in
// a different order (vector lanes), so results can differ in the last
// bits between them.
func Dot(x, y []float32) float32 { return active.Dot(x, y) }
