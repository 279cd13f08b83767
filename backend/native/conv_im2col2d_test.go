package native

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/backend/native/internal/gemm"
	"github.com/deep500/deep500-go/onnx"
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
		kRows, n := channels*g.kernelSize(), g.outSize()
		x := make([]float64, channels*g.inSize())
		for i := range x {
			x[i] = r.NormFloat64()
		}
		col := make([]float64, kRows*n)
		convIm2col(col, x, channels, g, 1)
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
				packIm2colPanels2D(got, x, g, p0, j0, kc, nc, nr)
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("geom %d, nr %d, block %v: panel element %d = %v, want %v", gi, nr, bl, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// A convolution gives the same bits whether its im2col matrix is written
// whole or packed block by block (the GEMM sees identical panels), with
// and without bias, on one and two threads.
func TestConvImplicitIm2colMatchesMaterialised(t *testing.T) {
	defer func(v int) { convImplicitMin = v }(convImplicitMin)
	r := rand.New(rand.NewPCG(9, 9))
	rnd := func(shape ...int) *onnx.Tensor {
		x := onnx.NewTensor(onnx.Float, shape...)
		for i := range x.Float32s() {
			x.Float32s()[i] = float32(r.NormFloat64())
		}
		return x
	}
	for _, c := range []struct {
		x, w    []int
		strides []int64
		bias    bool
	}{
		{x: []int{2, 5, 19, 23}, w: []int{12, 5, 3, 3}, strides: []int64{1, 1}, bias: true},
		{x: []int{1, 4, 30, 30}, w: []int{9, 4, 5, 5}, strides: []int64{2, 2}},
	} {
		x, w, b := rnd(c.x...), rnd(c.w...), rnd(c.w[0])
		inputs := []string{"X", "W"}
		inits := []*onnx.Initializer{{Name: "W", Tensor: w}}
		if c.bias {
			inputs = append(inputs, "B")
			inits = append(inits, &onnx.Initializer{Name: "B", Tensor: b})
		}
		node := testNode(t, 17, "Conv", inputs, []string{"Y"}, intsAttr("pads", 1, 2, 2, 1), intsAttr("strides", c.strides...))
		m := testModel([]*onnx.Node{node}, []*onnx.ValueInfo{{Name: "X", Type: floatTensorType(int64s(c.x)...)}}, []*onnx.ValueInfo{{Name: "Y"}}, inits...)
		var outs [2][]float32
		for _, threads := range []int{1, 2} {
			for i, min := range []int{math.MaxInt, 0} {
				convImplicitMin = min
				net, err := New(m, backend.Options{Threads: threads})
				if err != nil {
					t.Fatal(err)
				}
				out, err := net.Inference(map[string]onnx.Value{"X": x})
				if err != nil {
					t.Fatal(err)
				}
				outs[i] = append([]float32(nil), out["Y"].(*onnx.Tensor).Float32s()...)
				net.Close()
			}
			for i, v := range outs[0] {
				if math.Float32bits(outs[1][i]) != math.Float32bits(v) {
					t.Fatalf("x %v, w %v, %d threads: element %d is %v packed directly, %v materialised", c.x, c.w, threads, i, outs[1][i], v)
				}
			}
		}
	}
}

func int64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// BenchmarkIm2colPacking compares, for the B panels of 3×3 stride-1
// convolutions over 16 channels (kc = 144 rows, tiles of 256 columns),
// writing the whole im2col matrix and packing it with packing each tile
// through its own block (packIm2colPanels2D). The inputs are small enough
// for the whole matrix to stay in cache, the case where it is faster.
func BenchmarkIm2colPacking(b *testing.B) {
	for _, size := range []int{8, 32, 56} {
		const channels, nr = 16, 16
		g := geomOf([]int{size, size}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1})
		kRows, n := channels*g.kernelSize(), g.outSize()
		nc := min(256, n) // the GEMM's tile width
		x := make([]float32, channels*g.inSize())
		for i := range x {
			x[i] = float32(i % 7)
		}
		col := make([]float32, kRows*n)
		panels := make([]float32, (nc+nr-1)/nr*nr*kRows)
		b.Run(fmt.Sprintf("%dx%d/materialised", size, size), func(b *testing.B) {
			for b.Loop() {
				convIm2col(col, x, channels, g, 1)
				for j0 := 0; j0 < n; j0 += nc {
					gemm.PackPanelsB(panels, gemm.NewMatrix(col, n, false), 0, j0, kRows, min(nc, n-j0), nr)
				}
			}
		})
		b.Run(fmt.Sprintf("%dx%d/blocked", size, size), func(b *testing.B) {
			for b.Loop() {
				for j0 := 0; j0 < n; j0 += nc {
					packIm2colPanels2D(panels, x, g, 0, j0, kRows, min(nc, n-j0), nr)
				}
			}
		})
	}
}
