package gemm

import (
	"runtime"
	"testing"
)

// A product large enough to run on several workers allocates nothing once
// its pack buffers and job are pooled, and still gives the single-threaded
// result bit for bit (each tile is computed whole by one worker).
func TestParallelMultiplyAllocatesNothing(t *testing.T) {
	const m, n, k = 192, 512, 64 // over ParallelMin, several tiles
	if m*n*k < ParallelMin {
		t.Fatalf("%d multiply-adds is under ParallelMin %d: the product would not run in parallel", m*n*k, ParallelMin)
	}
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(i%7) - 3
	}
	for i := range b {
		b[i] = float32(i%5) * 0.5
	}
	one, two := make([]float32, m*n), make([]float32, m*n)
	Multiply(m, n, k, 1, NewMatrix(a, k, false), NewMatrix(b, n, false), 0, one, n, 1)
	run := func() { Multiply(m, n, k, 1, NewMatrix(a, k, false), NewMatrix(b, n, false), 0, two, n, 2) }
	run()
	if allocs := testing.AllocsPerRun(20, run); allocs != 0 {
		t.Fatalf("a parallel Multiply allocates %v times per call, want 0", allocs)
	}
	for i := range one {
		if one[i] != two[i] {
			t.Fatalf("element %d: %v on 2 threads, %v on 1", i, two[i], one[i])
		}
	}
}

// A released pack buffer is handed out again after garbage collections,
// which would have emptied a sync.Pool: a training step that allocates
// must not find its buffers gone at the next step.
func TestPackBufferKeptAcrossGC(t *testing.T) {
	const n = 3000 // class 4096
	p := PackBuffer[float32](n)
	if len(*p) != n || cap(*p) != 4096 {
		t.Fatalf("PackBuffer(%d): len %d cap %d, want %d and 4096", n, len(*p), cap(*p), n)
	}
	ReleasePackBuffer(p)
	runtime.GC()
	runtime.GC()
	q := PackBuffer[float32](2049) // the same class
	if q != p || len(*q) != 2049 {
		t.Fatalf("after two collections, PackBuffer gave a new buffer (len %d) instead of the released one", len(*q))
	}
	ReleasePackBuffer(q)
}
