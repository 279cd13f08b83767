package conv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/backend/native/internal/vec"
)

// geomOf builds a convolution geometry from input sizes, kernel, strides,
// dilations and pads (begin, end), computing the output sizes.
func geomOf(in, kernel, strides, dilations, padBegin, padEnd []int) *Geometry {
	g := &Geometry{In: in, Kernel: kernel, Strides: strides, Dilations: dilations, PadBegin: padBegin, PadEnd: padEnd}
	for d := range in {
		span := in[d] + padBegin[d] + padEnd[d] - (kernel[d]-1)*dilations[d] - 1
		g.Out = append(g.Out, span/strides[d]+1)
	}
	return g
}

// The direct thin convolution gives what im2col followed by the thin
// product gives, over 1-, 2- and 3-D geometries with strides, dilations,
// asymmetric pads, several input channels and one or two outputs.
func TestConvDirectThinMatchesIm2col(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	geoms := []*Geometry{
		geomOf([]int{9}, []int{3}, []int{1}, []int{1}, []int{1}, []int{1}),
		geomOf([]int{10}, []int{3}, []int{2}, []int{2}, []int{2}, []int{0}),
		geomOf([]int{7, 8}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1}),
		geomOf([]int{9, 7}, []int{3, 2}, []int{2, 1}, []int{1, 2}, []int{0, 2}, []int{1, 1}),
		geomOf([]int{4, 5, 6}, []int{2, 3, 3}, []int{1, 2, 1}, []int{1, 1, 2}, []int{1, 0, 2}, []int{0, 1, 1}),
	}
	for gi, g := range geoms {
		for _, ch := range [][2]int{{1, 1}, {3, 1}, {2, 2}} {
			cg, mg := ch[0], ch[1]
			t.Run(fmt.Sprintf("geom%d/cg=%d/mg=%d", gi, cg, mg), func(t *testing.T) {
				ks, inSz, outSz := g.KernelSize(), g.InSize(), g.OutSize()
				x := make([]float32, cg*inSz)
				w := make([]float32, mg*cg*ks)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				for i := range w {
					w[i] = float32(r.NormFloat64())
				}
				cols := make([]float32, cg*ks*outSz)
				Im2col(cols, x, cg, g, 1)
				want := make([]float32, mg*outSz)
				ThinProduct(want, w, cols, mg, cg*ks, outSz, true)
				got := make([]float32, mg*outSz)
				for i := range got {
					got[i] = float32(math.NaN()) // overwrite must clear
				}
				DirectThin(got, w, x, cg, mg, g, true)
				for i := range want {
					if math.Abs(float64(got[i]-want[i])) > 1e-5*(1+math.Abs(float64(want[i]))) {
						t.Fatalf("element %d: got %v, want %v", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// im2colTestGeoms are 2-D geometries with strides, dilations, asymmetric
// pads and kernel positions whose window lies wholly in the padding.
func im2colTestGeoms() []*Geometry {
	return []*Geometry{
		geomOf([]int{7, 8}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1}),
		geomOf([]int{9, 7}, []int{3, 2}, []int{2, 3}, []int{1, 2}, []int{0, 2}, []int{1, 1}),
		geomOf([]int{4, 5}, []int{2, 5}, []int{1, 1}, []int{3, 1}, []int{3, 4}, []int{2, 4}),
		geomOf([]int{1, 6}, []int{1, 3}, []int{1, 2}, []int{1, 1}, []int{0, 2}, []int{0, 0}),
	}
}

// The 2-D im2col and col2im rows agree exactly with the N-D walker's, with
// strides, dilations and asymmetric pads, including kernel positions whose
// window lies wholly in the padding.
func TestIm2col2DMatchesWalker(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for gi, g := range im2colTestGeoms() {
		inSz, outSz := g.InSize(), g.OutSize()
		x := make([]float64, inSz)
		col := make([]float64, outSz)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		for i := range col {
			col[i] = r.NormFloat64()
		}
		w := NewWalker(g)
		for kidx := range g.KernelSize() {
			kh, kw := kidx/g.Kernel[1], kidx%g.Kernel[1]
			got, want := make([]float64, outSz), make([]float64, outSz)
			im2colRow2D(g, got, x, kh, kw)
			Im2colRow(w, want, x, kidx)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("geom %d kernel (%d,%d): im2col[%d] = %v, want %v", gi, kh, kw, i, got[i], want[i])
				}
			}
			back, wantBack := make([]float64, inSz), make([]float64, inSz)
			col2imRow2D(g, back, col, kh, kw)
			col2imRowND(w, wantBack, col, kidx)
			for i := range wantBack {
				if back[i] != wantBack[i] {
					t.Fatalf("geom %d kernel (%d,%d): col2im[%d] = %v, want %v", gi, kh, kw, i, back[i], wantBack[i])
				}
			}
		}
	}
}

// The 2-D direct thin convolution gives the N-D walker's bits exactly
// (same terms, same order), for one and two output channels over several
// input channels, with the axpy of every vector implementation.
func TestConvDirectThin2DMatchesWalker(t *testing.T) {
	for _, impl := range vec.Implementations() {
		r := rand.New(rand.NewPCG(3, 3))
		axpy := impl.Axpy
		for gi, g := range append(im2colTestGeoms(), geomOf([]int{9, 11}, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, []int{1, 1})) {
			for _, mg := range []int{1, 2} {
				const cg = 3
				x := make([]float32, cg*g.InSize())
				w := make([]float32, mg*cg*g.KernelSize())
				bias := make([]float32, mg*g.OutSize())
				for _, s := range [][]float32{x, w, bias} {
					for i := range s {
						s[i] = float32(r.NormFloat64())
					}
				}
				got, want := slices.Clone(bias), slices.Clone(bias)
				directThin2D(got, w, x, cg, mg, g, axpy)
				directThinND(want, w, x, cg, mg, g, axpy)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s: geom %d, %d outputs: element %d = %v, the walker gives %v", impl.Name, gi, mg, i, got[i], want[i])
					}
				}
			}
		}
	}
}
