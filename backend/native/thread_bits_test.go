package native_test

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/onnx"
)

// Every preset's inference gives the same bits on one, two and three
// threads, at batch 1 and 3: the number of threads changes the time
// only, so a figure measured on one machine is reproduced bit for bit on
// another with more or fewer cores. The kernels split work among
// goroutines by output elements, never a sum between them. The same holds
// for a run on several threads whose regions run serially (the thread
// policy's choice when that is faster, par.BeginSerial).
func TestPresetInferenceSameBitsOnAnyThreads(t *testing.T) {
	for _, name := range models.PresetNames() {
		for _, batch := range []int{1, 3} {
			m, feeds := presetFeeds(t, name, batch)
			run := func(threads int, serial bool) []float32 {
				net, err := backend.New("native", m, backend.Options{Threads: threads, Optimize: true})
				if err != nil {
					t.Fatal(err)
				}
				defer net.Close()
				if serial {
					par.BeginSerial()
					defer par.EndSerial()
				}
				outs, err := net.Inference(feeds)
				if err != nil {
					t.Fatalf("%s batch %d, %d threads: %v", name, batch, threads, err)
				}
				var all []float32
				for _, o := range net.Outputs() {
					all = append(all, outs[o].(*onnx.Tensor).Float32s()...)
				}
				return all
			}
			want := run(1, false)
			for _, threads := range []int{2, 3} {
				for _, serial := range []bool{false, true} {
					got := run(threads, serial)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s batch %d, %d threads (serial run: %v): output element %d = %v, one thread %v", name, batch, threads, serial, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}
