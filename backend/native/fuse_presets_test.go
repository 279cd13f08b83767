package native_test

import (
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/models"
)

// Every preset built with Optimize (BatchNormalization folded, then Conv,
// Gemm and MatMul fused with their residual Add and activation) computes
// what the graph as written computes, within the tolerance of two float32
// backends that sum in different orders, at batch 1 and 2.
func TestOptimizedPresetsAgreeWithUnoptimized(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every preset")
	}
	for _, name := range models.PresetNames() {
		for _, batch := range []int{1, 2} {
			m, feeds := presetFeeds(t, name, batch)
			plain, err := backend.New("native", m, backend.Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			optimized, err := backend.New("native", m, backend.Options{Threads: 2, Optimize: true})
			if err != nil {
				t.Fatal(err)
			}
			want, err := plain.Inference(feeds)
			if err != nil {
				t.Fatal(err)
			}
			got, err := optimized.Inference(feeds)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for out, w := range want {
				if d := metrics.Compare(got[out], w, metrics.CrossBackendTolerance.ScaledTo(w)); !d.Equal() {
					t.Errorf("%s at batch %d, output %q: %s", name, batch, out, d.Mismatch)
				}
			}
			plain.Close()
			optimized.Close()
		}
	}
}
