package native

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// Global average and max pooling of planes large enough to be split over
// goroutines agree with the definition on one and on two threads: the
// average (summed in float32 vector lanes) within float32 rounding of the
// float64 mean, the maximum exactly, and a NaN in a plane gives NaN.
func TestGlobalPoolPlanesMatchDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	const n, c, h, w = 2, 40, 30, 31
	x := onnx.NewTensor(onnx.Float, n, c, h, w)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(r.NormFloat64())
	}
	x.Float32s()[5*h*w+7] = float32(math.NaN()) // plane 5
	inner := h * w
	for _, threads := range []int{1, 2} {
		for _, mode := range []poolMode{poolAvg, poolMax} {
			k := &globalPoolKernel{mode: mode, threads: threads}
			y, err := k.compute(x)
			if err != nil {
				t.Fatal(err)
			}
			if want := []int{n, c, 1, 1}; !slices.Equal(y.Shape, want) {
				t.Fatalf("shape %v, want %v", y.Shape, want)
			}
			for pl, got := range y.Float32s() {
				src := x.Float32s()[pl*inner : (pl+1)*inner]
				sum, m := 0.0, math.Inf(-1)
				for _, v := range src {
					sum += float64(v)
					if float64(v) > m || v != v {
						m = float64(v)
					}
				}
				want := m
				if mode == poolAvg {
					want = sum / float64(inner)
				}
				if pl == 5 {
					if !math.IsNaN(float64(got)) {
						t.Fatalf("%v, %d threads: plane 5 holds a NaN, got %v", k.name(), threads, got)
					}
					continue
				}
				if math.Abs(float64(got)-want) > 1e-6 {
					t.Fatalf("%v, %d threads: plane %d = %v, want %v", k.name(), threads, pl, got, want)
				}
			}
		}
	}
}
