package conv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Writing a block of the im2col matrix gives exactly that block of the
// whole matrix, for blocks at any offset, strides, dilations, asymmetric
// pads, narrow images (blocks that start and end inside output rows) and
// windows wholly in the padding. The block sits in a NaN-filled buffer
// one element longer, so an element left unwritten or written past it
// shows.
func TestIm2colBlock2DMatchesIm2col(t *testing.T) {
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
		for _, bl := range blocks {
			p0, j0, kc, nc := bl[0], bl[1], bl[2], bl[3]
			if kc <= 0 || nc <= 0 {
				continue
			}
			got := make([]float64, kc*nc+1)
			for i := range got {
				got[i] = math.NaN()
			}
			Im2colBlock2D(got, x, g, p0, j0, kc, nc)
			for p := range kc {
				for j := range nc {
					if g, w := got[p*nc+j], col[(p0+p)*n+j0+j]; math.Float64bits(g) != math.Float64bits(w) {
						t.Fatalf("geom %d, block %v: element (%d, %d) = %v, want %v", gi, bl, p, j, g, w)
					}
				}
			}
			if !math.IsNaN(got[kc*nc]) {
				t.Fatalf("geom %d, block %v: wrote past the block", gi, bl)
			}
		}
	}
}

// BenchmarkIm2colBlocks compares, for 3×3 stride-1 convolutions over 16
// channels (kc = 144 rows, tiles of 512 columns as the GEMM's), writing
// the whole float32 im2col matrix with writing it a tile's block at a
// time (Im2colBlock2D) into one buffer that stays in cache.
func BenchmarkIm2colBlocks(b *testing.B) {
	for _, size := range []int{8, 32, 56} {
		const channels = 16
		g := geomOf([]int{size, size}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1})
		kRows, n := channels*g.KernelSize(), g.OutSize()
		nc := min(512, n) // the GEMM's tile width
		x := make([]float32, channels*g.InSize())
		for i := range x {
			x[i] = float32(i % 7)
		}
		col := make([]float32, kRows*n)
		block := make([]float32, kRows*nc)
		b.Run(fmt.Sprintf("%dx%d/whole", size, size), func(b *testing.B) {
			for b.Loop() {
				Im2col(col, x, channels, g, 1)
			}
		})
		b.Run(fmt.Sprintf("%dx%d/blocks", size, size), func(b *testing.B) {
			for b.Loop() {
				for j0 := 0; j0 < n; j0 += nc {
					Im2colBlock2D(block, x, g, 0, j0, kRows, min(nc, n-j0))
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

// The float32 im2col of 2-D geometries (a row copy per matrix row, the
// input split into even and odd columns for column stride 2) writes
// exactly the rows of the N-D walker, with every implementation's row
// copies: strides 1 and 2 on either axis, dilations, asymmetric pads,
// odd and even widths, planes narrower than a vector and wider than two,
// kernel positions wholly in the padding, and row ranges starting inside
// a channel. The matrix starts as NaN, so an element left unwritten shows.
func TestIm2colRows2DFloat32MatchesWalker(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 4))
	const channels = 3
	for _, im := range DepthwiseImplementations() {
		for gi, g := range float32TestGeoms() {
			ks, os, inSz := g.KernelSize(), g.OutSize(), g.InSize()
			x := make([]float32, channels*inSz)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			want := make([]float32, channels*ks*os)
			w := NewWalker(g)
			for row := range channels * ks {
				Im2colRow(w, want[row*os:(row+1)*os], x[row/ks*inSz:(row/ks+1)*inSz], row%ks)
			}
			for _, rng := range [][2]int{{0, channels * ks}, {ks / 2, channels*ks - 1}} {
				if g.Strides[1] > 2 {
					continue // not this path
				}
				got := make([]float32, len(want))
				for i := range got {
					got[i] = float32(math.NaN())
				}
				im2colRows2DFloat32(&im, got, x, g, rng[0], rng[1])
				for i := rng[0] * os; i < rng[1]*os; i++ {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s, geom %d, rows %v: col[%d] (row %d, position %d) = %v, want %v", im.Name, gi, rng, i, i/os, i%os, got[i], want[i])
					}
				}
				for i := range got {
					if (i < rng[0]*os || i >= rng[1]*os) && !math.IsNaN(float64(got[i])) {
						t.Fatalf("%s, geom %d, rows %v: col[%d] written outside the rows", im.Name, gi, rng, i)
					}
				}
			}
		}
	}
}

// float32TestGeoms are the geometries of the float32 im2col tests:
// strides 1 and 2 on either axis (and 3 on rows), dilations, asymmetric
// pads, odd and even widths, planes narrower than a vector and wider than
// two, kernel positions wholly in the padding.
func float32TestGeoms() []*Geometry {
	return append(im2colTestGeoms(),
		geomOf([]int{32, 32}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1}),
		geomOf([]int{13, 13}, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, []int{1, 1}),
		geomOf([]int{35, 37}, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{0, 0}, []int{0, 0}),
		geomOf([]int{16, 16}, []int{1, 1}, []int{2, 2}, []int{1, 1}, []int{0, 0}, []int{0, 0}),
		geomOf([]int{9, 40}, []int{3, 5}, []int{1, 2}, []int{2, 2}, []int{2, 3}, []int{1, 2}),
		geomOf([]int{11, 6}, []int{2, 4}, []int{3, 2}, []int{1, 1}, []int{0, 5}, []int{2, 5}),
		geomOf([]int{5, 5}, []int{7, 7}, []int{2, 1}, []int{1, 1}, []int{3, 3}, []int{3, 3}),
	)
}

// The float32 block writer (whole output rows by row copies, the partial
// rows at either end element by element) writes exactly the blocks of
// the walker's matrix, with every implementation's row copies: blocks
// starting and ending inside output rows, spanning several rows, inside
// one row, made of whole rows, at any channel and kernel position.
func TestIm2colBlock2DFloat32MatchesWalker(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 6))
	const channels = 3
	for _, im := range DepthwiseImplementations() {
		for gi, g := range float32TestGeoms() {
			if g.Strides[1] > 2 {
				continue
			}
			ks, os, inSz, OW := g.KernelSize(), g.OutSize(), g.InSize(), g.Out[1]
			x := make([]float32, channels*inSz)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			want := make([]float32, channels*ks*os)
			w := NewWalker(g)
			for row := range channels * ks {
				Im2colRow(w, want[row*os:(row+1)*os], x[row/ks*inSz:(row/ks+1)*inSz], row%ks)
			}
			kRows := channels * ks
			blocks := [][4]int{ // p0, j0, kc, nc
				{0, 0, kRows, os},
				{1, OW, kRows - 1, min(2*OW, os-OW)},
				{ks / 2, OW / 2, kRows - ks/2, os - OW/2},
				{2, OW/2 + 1, min(5, kRows-2), min(3*OW, os-OW/2-1)},
				{0, 1, kRows, max(1, min(OW-2, os-1))},
				{kRows - 1, os - 1, 1, 1},
			}
			for _, bl := range blocks {
				p0, j0, kc, nc := bl[0], bl[1], bl[2], bl[3]
				if kc <= 0 || nc <= 0 || j0+nc > os {
					continue
				}
				got := make([]float32, kc*nc+1)
				for i := range got {
					got[i] = float32(math.NaN())
				}
				im2colBlock2DFloat32(&im, got, x, g, p0, j0, kc, nc)
				for p := range kc {
					for j := range nc {
						if g, w := got[p*nc+j], want[(p0+p)*os+j0+j]; math.Float32bits(g) != math.Float32bits(w) {
							t.Fatalf("%s, geom %d, block %v: element (%d, %d) = %v, want %v", im.Name, gi, bl, p, j, g, w)
						}
					}
				}
				if !math.IsNaN(float64(got[kc*nc])) {
					t.Fatalf("%s, geom %d, block %v: wrote past the block", im.Name, gi, bl)
				}
			}
		}
	}
}

// BenchmarkIm2col2D times writing the whole float32 im2col matrix of
// common convolution layers on one thread: "copies" is the float32 path
// (one row copy per matrix row, stride 2 from the deinterleaved input,
// with the implementation in use), "rows" the generic one it replaced
// (im2colRow2D: a copy or an element-by-element gather per output row).
func BenchmarkIm2col2D(b *testing.B) {
	layers := []struct {
		name     string
		channels int
		g        *Geometry
	}{
		{"16ch_32x32_3x3_s1", 16, geomOf([]int{32, 32}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1})},
		{"64ch_56x56_3x3_s1", 64, geomOf([]int{56, 56}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1})},
		{"16ch_55x55_3x3_s1", 16, geomOf([]int{55, 55}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1})},
		{"32ch_112x112_3x3_s2", 32, geomOf([]int{112, 112}, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, []int{1, 1})},
		{"3ch_224x224_3x3_s2", 3, geomOf([]int{224, 224}, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{0, 0}, []int{0, 0})},
		{"16ch_32x32_1x1_s2", 16, geomOf([]int{32, 32}, []int{1, 1}, []int{2, 2}, []int{1, 1}, []int{0, 0}, []int{0, 0})},
	}
	for _, l := range layers {
		ks, os, inSz := l.g.KernelSize(), l.g.OutSize(), l.g.InSize()
		x := make([]float32, l.channels*inSz)
		for i := range x {
			x[i] = float32(i % 7)
		}
		col := make([]float32, l.channels*ks*os)
		b.Run(l.name+"/copies", func(b *testing.B) {
			for b.Loop() {
				im2colRows2DFloat32(DepthwiseActive(), col, x, l.g, 0, l.channels*ks)
			}
		})
		b.Run(l.name+"/rows", func(b *testing.B) {
			for b.Loop() {
				for r := range l.channels * ks {
					im2colRow2D(l.g, col[r*os:(r+1)*os], x[r/ks*inSz:(r/ks+1)*inSz], r%ks/3, r%ks%3)
				}
			}
		})
	}
}
