package pool

import (
	"fmt"
	"math"
	"testing"
)

// BenchmarkWindows times each implementation on whole planes of output
// rows shaped like the presets' pooling: 3×3 windows at stride 2 over 112
// columns (shufflenet's and resnet18's MaxPool; 55 whole windows a row)
// and 3×3 at stride 1 over 56 columns, 56 rows a plane.
func BenchmarkWindows(b *testing.B) {
	for _, c := range []struct{ W, n, kw, sw int }{{112, 55, 3, 2}, {56, 54, 3, 1}} {
		const rows, outRows = 3, 56
		src := make([]float32, (outRows*c.sw+rows)*c.W)
		for i := range src {
			src[i] = float32(math.Sin(float64(i)))
		}
		dst := make([]float32, c.n)
		for _, impl := range Implementations() {
			b.Run(fmt.Sprintf("max/%dx%d_stride%d_W%d/%s", rows, c.kw, c.sw, c.W, impl.Name), func(b *testing.B) {
				for b.Loop() {
					for oh := range outRows {
						impl.MaxWindows(dst, src[oh*c.sw*c.W:], c.W, rows, c.kw, c.sw)
					}
				}
			})
			b.Run(fmt.Sprintf("avg/%dx%d_stride%d_W%d/%s", rows, c.kw, c.sw, c.W, impl.Name), func(b *testing.B) {
				for b.Loop() {
					for oh := range outRows {
						impl.AvgWindows(dst, src[oh*c.sw*c.W:], c.W, rows, c.kw, c.sw, 9)
					}
				}
			})
		}
	}
}
