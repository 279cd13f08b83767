package native_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// BenchmarkPresetInferInto runs warm InferInto on every preset, with and
// without the graph optimisations, with the
// memory profiler sampling every allocation of the timed loop only, so that
// `-memprofile` names each allocation site left on the inference path. The
// rate stays 1 afterwards (outside the loops the profiler is off), because
// pprof scales a profile's samples by the rate in force when it is written:
// the counts are then exact.
func BenchmarkPresetInferInto(b *testing.B) {
	for _, name := range models.PresetNames() {
		for _, optimize := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/optimize=%v", name, optimize), func(b *testing.B) {
				runtime.MemProfileRate = 0
				m, feeds := presetFeeds(b, name, 1)
				net, err := backend.New("native", m, backend.Options{Threads: 2, Optimize: optimize})
				if err != nil {
					b.Fatal(err)
				}
				defer net.Close()
				dst := map[string]onnx.Value{}
				if _, err := network.InferInto(net, feeds, dst); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				runtime.MemProfileRate = 1
				for b.Loop() {
					if _, err := network.InferInto(net, feeds, dst); err != nil {
						b.Fatal(err)
					}
				}
				runtime.MemProfileRate = 0
			})
		}
	}
	runtime.MemProfileRate = 1
}
