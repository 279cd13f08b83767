package conv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/backend/native/internal/gemm"
)

// Packing a block of the im2col matrix through its own buffer gives
// exactly the panels that writing the whole matrix and packing it give,
// for blocks at any offset, every panel width, strides, dilations,
// asymmetric pads, narrow images (blocks that start and end inside output
// rows) and windows wholly in the padding. The panels start as NaN, so an
// element left unwritten shows.
func TestPackIm2colPanels2DMatchesPacking(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	geoms := append(im2colTestGeoms(),
		geomOf([]int{20, 37}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1}),
		geomOf([]int{15, 15}, []int{7, 7}, []int{2, 2}, []int{1, 1}, []int{3, 3}, []int{3, 3}),
	)
	const channels = 3
	for gi, g := range geoms {
		kRows, n := channels*g.KernelSize(), g.OutSize()
		x := make([]float64, channels*g.InSize())
		for i := range x {
			x[i] = r.NormFloat64()
		}
		col := make([]float64, kRows*n)
		Im2col(col, x, channels, g, 1)
		blocks := [][4]int{ // p0, j0, kc, nc
			{0, 0, kRows, n},
			{kRows / 3, n / 3, kRows - kRows/3, n - n/3},
			{1, 5, min(4, kRows-1), min(37, n-5)},
		}
		for _, nr := range []int{4, 8, 16} {
			for _, bl := range blocks {
				p0, j0, kc, nc := bl[0], bl[1], bl[2], bl[3]
				if kc <= 0 || nc <= 0 || kc > 256 { // at most one of the GEMM's K slices
					continue
				}
				size := (nc + nr - 1) / nr * nr * kc
				got, want := make([]float64, size), make([]float64, size)
				for i := range got {
					got[i], want[i] = math.NaN(), math.NaN()
				}
				gemm.PackPanelsB(want, gemm.NewMatrix(col, n, false), p0, j0, kc, nc, nr)
				PackIm2colPanels2D(got, x, g, p0, j0, kc, nc, nr)
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("geom %d, nr %d, block %v: panel element %d = %v, want %v", gi, nr, bl, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// BenchmarkIm2colPacking compares, for the B panels of 3×3 stride-1
// convolutions over 16 channels (kc = 144 rows, tiles of 256 columns),
// writing the whole im2col matrix and packing it with packing each tile
// through its own block (PackIm2colPanels2D). The inputs are small enough
// for the whole matrix to stay in cache, the case where it is faster.
func BenchmarkIm2colPacking(b *testing.B) {
	for _, size := range []int{8, 32, 56} {
		const channels, nr = 16, 16
		g := geomOf([]int{size, size}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1})
		kRows, n := channels*g.KernelSize(), g.OutSize()
		nc := min(256, n) // the GEMM's tile width
		x := make([]float32, channels*g.InSize())
		for i := range x {
			x[i] = float32(i % 7)
		}
		col := make([]float32, kRows*n)
		panels := make([]float32, (nc+nr-1)/nr*nr*kRows)
		b.Run(fmt.Sprintf("%dx%d/materialised", size, size), func(b *testing.B) {
			for b.Loop() {
				Im2col(col, x, channels, g, 1)
				for j0 := 0; j0 < n; j0 += nc {
					gemm.PackPanelsB(panels, gemm.NewMatrix(col, n, false), 0, j0, kRows, min(nc, n-j0), nr)
				}
			}
		})
		b.Run(fmt.Sprintf("%dx%d/blocked", size, size), func(b *testing.B) {
			for b.Loop() {
				for j0 := 0; j0 < n; j0 += nc {
					PackIm2colPanels2D(panels, x, g, 0, j0, kRows, min(nc, n-j0), nr)
				}
			}
		})
	}
}

// Im2colTask writes the matrix Im2col writes, element for element, on
// one thread and split over several (the matrix is large enough for
// several chunks), and a warm parallel call allocates nothing.
func TestIm2colTaskMatchesIm2col(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	g := geomOf([]int{64, 64}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1})
	const channels = 8
	x := make([]float32, channels*g.InSize())
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	want := make([]float32, channels*g.KernelSize()*g.OutSize())
	Im2col(want, x, channels, g, 1)
	var task Im2colTask[float32]
	for _, threads := range []int{1, 3} {
		got := make([]float32, len(want))
		for i := range got {
			got[i] = float32(math.NaN())
		}
		task.Run(got, x, channels, g, threads)
		for i, v := range want {
			if got[i] != v {
				t.Fatalf("%d threads: col[%d] = %v, Im2col gives %v", threads, i, got[i], v)
			}
		}
	}
	if a := testing.AllocsPerRun(5, func() { task.Run(want, x, channels, g, 3) }); a != 0 {
		t.Errorf("a warm parallel Im2colTask.Run allocates %v times", a)
	}
}
