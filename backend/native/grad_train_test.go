package native

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// Training through the Network API: a 16→32→3 MLP (Gemm, Relu, Gemm) with
// a mean squared error loss built from Sub, Mul, Reshape and MatMul,
// fitted by plain SGD to a fixed synthetic regression problem. The loss
// must fall, and the heap must stay flat: the backward pass reuses its
// buffers, so after the first step InferenceAndBackprop allocates only
// the copies of the outputs it returns.

const (
	trainBatch  = 64
	trainIn     = 16
	trainHidden = 32
	trainOut    = 3
)

// trainMLPModel builds the network and its loss L = mean((P − Y)²).
func trainMLPModel(t testing.TB, r *rand.Rand) *onnx.Model {
	constant := func(name string, v *onnx.Tensor) *onnx.Node {
		return testNode(t, 17, "Constant", nil, []string{name}, &onnx.Attribute{Name: "value", Type: onnx.AttrTensor, Tensor: v})
	}
	mean := make([]float32, trainBatch*trainOut)
	for i := range mean {
		mean[i] = 1 / float32(len(mean))
	}
	nodes := []*onnx.Node{
		testNode(t, 17, "Gemm", []string{"X", "W1", "b1"}, []string{"H"}, intAttr("transB", 1)),
		testNode(t, 17, "Relu", []string{"H"}, []string{"R"}),
		testNode(t, 17, "Gemm", []string{"R", "W2", "b2"}, []string{"P"}, intAttr("transB", 1)),
		testNode(t, 17, "Sub", []string{"P", "Y"}, []string{"D"}),
		testNode(t, 17, "Mul", []string{"D", "D"}, []string{"S"}),
		constant("row", onnx.FromSlice([]int64{1, -1}, 2)),
		testNode(t, 17, "Reshape", []string{"S", "row"}, []string{"S1"}),
		constant("mean", onnx.FromSlice(mean, len(mean), 1)),
		testNode(t, 17, "MatMul", []string{"S1", "mean"}, []string{"L"}),
	}
	uniform := func(scale float64, shape ...int) *onnx.Tensor {
		tt := onnx.NewTensor(onnx.Float, shape...)
		for i := range tt.Float32s() {
			tt.Float32s()[i] = float32((r.Float64()*2 - 1) * scale)
		}
		return tt
	}
	return testModel(nodes,
		[]*onnx.ValueInfo{{Name: "X", Type: floatTensorType(-1, trainIn)}, {Name: "Y", Type: floatTensorType(-1, trainOut)}},
		[]*onnx.ValueInfo{{Name: "L", Type: floatTensorType(1, 1)}},
		&onnx.Initializer{Name: "W1", Tensor: uniform(1/math.Sqrt(trainIn), trainHidden, trainIn)},
		&onnx.Initializer{Name: "b1", Tensor: uniform(0.1, trainHidden)},
		&onnx.Initializer{Name: "W2", Tensor: uniform(1/math.Sqrt(trainHidden), trainOut, trainHidden)},
		&onnx.Initializer{Name: "b2", Tensor: uniform(0.1, trainOut)},
	)
}

// trainData is a fixed batch: X uniform in [-1, 1), Y = tanh(X·T) for a
// fixed random teacher T, a target the student can fit.
func trainData(r *rand.Rand) map[string]onnx.Value {
	x := onnx.NewTensor(onnx.Float, trainBatch, trainIn)
	y := onnx.NewTensor(onnx.Float, trainBatch, trainOut)
	teacher := make([]float64, trainIn*trainOut)
	for i := range teacher {
		teacher[i] = (r.Float64()*2 - 1) * 0.6
	}
	xd, yd := x.Float32s(), y.Float32s()
	for i := range xd {
		xd[i] = float32(r.Float64()*2 - 1)
	}
	for b := range trainBatch {
		for o := range trainOut {
			s := 0.0
			for k := range trainIn {
				s += float64(xd[b*trainIn+k]) * teacher[k*trainOut+o]
			}
			yd[b*trainOut+o] = float32(math.Tanh(s))
		}
	}
	return map[string]onnx.Value{"X": x, "Y": y}
}

// trainSGDStep runs one step: backprop, then p -= lr·g for every
// parameter, through Fetch and Feed. It returns the loss.
func trainSGDStep(t testing.TB, net network.Network, feeds map[string]onnx.Value, pgs []network.ParamGrad, lr float32) float64 {
	out, err := net.InferenceAndBackprop(feeds, "L")
	if err != nil {
		t.Fatal(err)
	}
	for _, pg := range pgs {
		vs, err := net.Fetch(pg.Param, pg.Grad)
		if err != nil {
			t.Fatal(err)
		}
		p, g := vs[0].(*onnx.Tensor).Float32s(), vs[1].(*onnx.Tensor).Float32s()
		for i := range p {
			p[i] -= lr * g[i]
		}
		if err := net.Feed(pg.Param, vs[0]); err != nil {
			t.Fatal(err)
		}
	}
	return float64(out["L"].(*onnx.Tensor).Float32s()[0])
}

func heapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func TestTrainMLPLossFallsAndHeapStaysFlat(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	m := trainMLPModel(t, r)
	net, err := New(m, backend.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	feeds := trainData(r)
	pgs := net.Gradients("L")
	if len(pgs) != 4 {
		t.Fatalf("Gradients = %v, want W1, b1, W2, b2", pgs)
	}

	const steps, lr = 400, 0.1
	first := trainSGDStep(t, net, feeds, pgs, lr)
	for range 49 {
		trainSGDStep(t, net, feeds, pgs, lr)
	}
	heapEarly := heapAfterGC()
	var mallocsBefore runtime.MemStats
	runtime.ReadMemStats(&mallocsBefore)
	var last float64
	for range steps - 50 {
		last = trainSGDStep(t, net, feeds, pgs, lr)
	}
	var mallocsAfter runtime.MemStats
	runtime.ReadMemStats(&mallocsAfter)
	heapLate := heapAfterGC()
	t.Logf("loss %.5f after the first step, %.5f after %d steps", first, last, steps)
	if !(last < first/10) {
		t.Errorf("loss fell from %.5f to %.5f in %d steps, want a tenth or less", first, last, steps)
	}

	// Heap: no growth from step 50 to step 400 beyond noise.
	growth := int64(heapLate) - int64(heapEarly)
	t.Logf("heap after GC: %d bytes at step 50, %d at step %d", heapEarly, heapLate, steps)
	if growth > 64<<10 {
		t.Errorf("the heap grew by %d bytes over %d steps", growth, steps-50)
	}
	perStep := float64(mallocsAfter.Mallocs-mallocsBefore.Mallocs) / float64(steps-50)

	// InferenceAndBackprop alone. Its backward pass must allocate nothing:
	// it costs no more allocations than Inference, which returns the same
	// copies of the outputs. The forward kernels still allocate a few
	// small plans per step (broadcast walks, MatMul plans, closures for
	// par.For); they are bounded by count and, with every buffer
	// reused, by bytes: re-allocating a single activation or gradient of
	// this network (64x32 floats, 8 KiB) would exceed the byte bound.
	backprop := func() {
		if _, err := net.InferenceAndBackprop(feeds, "L"); err != nil {
			t.Fatal(err)
		}
	}
	inference := func() {
		if _, err := net.Inference(feeds); err != nil {
			t.Fatal(err)
		}
	}
	allocsBackprop := testing.AllocsPerRun(100, backprop)
	allocsInference := testing.AllocsPerRun(100, inference)
	bytesPerRun := func(f func()) float64 {
		f()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 100 {
			f()
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / 100
	}
	bytesBackprop := bytesPerRun(backprop)
	t.Logf("per step: InferenceAndBackprop %.0f allocations, %.0f bytes; Inference %.0f allocations",
		allocsBackprop, bytesBackprop, allocsInference)
	if allocsBackprop > allocsInference+1 {
		t.Errorf("the backward pass allocates %.0f times per step (InferenceAndBackprop %.0f, Inference %.0f)",
			allocsBackprop-allocsInference, allocsBackprop, allocsInference)
	}
	if allocsBackprop > 64 || bytesBackprop > 4<<10 {
		t.Errorf("InferenceAndBackprop allocates %.0f times, %.0f bytes per step", allocsBackprop, bytesBackprop)
	}
	// A whole SGD step adds the copies Fetch and Feed make by design (a
	// parameter and its gradient fetched, the parameter fed back): a few
	// allocations per parameter, nothing in proportion to the work.
	t.Logf("%.1f allocations per SGD step (Fetch and Feed copies included)", perStep)
	if perStep > allocsBackprop+16*float64(len(pgs)) {
		t.Errorf("%.1f allocations per SGD step", perStep)
	}
}

func BenchmarkTrainMLPBackprop(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	net, err := New(trainMLPModel(b, r), backend.Options{Threads: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer net.Close()
	feeds := trainData(r)
	if _, err := net.InferenceAndBackprop(feeds, "L"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := net.InferenceAndBackprop(feeds, "L"); err != nil {
			b.Fatal(err)
		}
	}
}
