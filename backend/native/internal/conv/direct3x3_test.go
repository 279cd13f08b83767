package conv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/backend/native/internal/gemm"
)

// direct3x3Run computes the convolution of x (c × H × W) by w (m × c × 3
// × 3) with impl, the way package native does: pad once, then one kernel
// call per block of output channels, copied out.
func direct3x3Run(impl *Direct3x3Impl, l *Direct3x3Layout, x, w []float32, m int) []float32 {
	outSz := l.OH * l.OW
	y := make([]float32, m*outSz)
	src := make([]float32, l.InputSize())
	l.Pad(src, x)
	out := make([]float32, l.OutputSize())
	packed := make([]float32, l.WeightsSize())
	for co := 0; co < m; co += Direct3x3Block {
		// Garbage in the scratch must not matter: the kernel overwrites it.
		for i := range out {
			out[i] = float32(math.NaN())
		}
		l.PackWeights(packed, w, m, co)
		impl.Block(l, out, src, packed)
		rows := min(Direct3x3Block, m-co)
		l.Unpitch(y[co*outSz:(co+rows)*outSz], out, rows)
	}
	return y
}

// direct3x3Layouts returns both layouts of g over c channels, pitched
// and flat, whichever NewDirect3x3Layout would choose, and whether the
// direct kernels cover g.
func direct3x3Layouts(g *Geometry, c int) ([]Direct3x3Layout, bool) {
	l, ok := pitchedDirect3x3Layout(g, c)
	if !ok {
		return nil, false
	}
	return []Direct3x3Layout{l, l.flat()}, true
}

// direct3x3Naive computes the same convolution by its definition in
// float64, and the magnitude Σ|w·x| of each output's terms.
func direct3x3Naive(g *Geometry, x, w []float32, c, m int) (want []float32, mag []float64) {
	h, wd, oh, ow := g.In[0], g.In[1], g.Out[0], g.Out[1]
	want, mag = make([]float32, m*oh*ow), make([]float64, m*oh*ow)
	for co := range m {
		for oy := range oh {
			for ox := range ow {
				var sum, abs float64
				for ci := range c {
					for ky := range 3 {
						for kx := range 3 {
							iy, ix := oy*g.Strides[0]+ky-g.PadBegin[0], ox*g.Strides[1]+kx-g.PadBegin[1]
							xv := 0.0
							if iy >= 0 && iy < h && ix >= 0 && ix < wd {
								xv = float64(x[(ci*h+iy)*wd+ix])
							}
							p := float64(w[((co*c+ci)*3+ky)*3+kx]) * xv
							sum += p
							abs += math.Abs(p)
						}
					}
				}
				want[(co*oh+oy)*ow+ox], mag[(co*oh+oy)*ow+ox] = float32(sum), abs
			}
		}
	}
	return want, mag
}

// direct3x3Im2col computes it the general way: im2col, then the GEMM.
func direct3x3Im2col(g *Geometry, x, w []float32, c, m int) []float32 {
	outSz := g.OutSize()
	cols := make([]float32, c*9*outSz)
	Im2col(cols, x, c, g, 1)
	y := make([]float32, m*outSz)
	gemm.Multiply(m, outSz, c*9, 1, gemm.NewMatrix(w, c*9, false), gemm.NewMatrix(cols, outSz, false), 0, y, outSz, 1)
	return y
}

// closeTo reports whether got is want within the rounding of a sum of
// terms of magnitude mag, or both are the same non-finite value.
func closeTo(got, want float32, mag float64) bool {
	if math.IsNaN(float64(want)) || math.IsInf(float64(want), 0) {
		return got == want || (got != got && want != want)
	}
	return math.Abs(float64(got)-float64(want)) <= 1e-5*mag+1e-30
}

// The direct kernels give the definition's result, and the im2col+GEMM
// path's, on odd sizes: widths 1 to 37 (every tail of the flat run),
// odd and even heights, 1 to 20 channels in and out, pads 0 and 1 on
// each side, strides 1 and 2, in the pitched and the flat layout.
func TestDirect3x3MatchesNaiveAndIm2col(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pads := [][4]int{{1, 1, 1, 1}, {0, 0, 0, 0}, {1, 0, 0, 1}, {0, 1, 1, 0}}
	heights := []int{1, 3, 5, 7, 9, 11, 33, 4, 16}
	for _, impl := range Direct3x3Implementations() {
		for wd := 1; wd <= 37; wd++ {
			for pi, p := range pads {
				for s := 1; s <= 2; s++ {
					h := heights[(wd+pi+s)%len(heights)]
					c, m := 1+(wd*7+pi+s)%20, 1+(wd*3+pi*5+s)%20
					g := geomOf([]int{h, wd}, []int{3, 3}, []int{s, s}, []int{1, 1}, []int{p[0], p[1]}, []int{p[2], p[3]})
					layouts, ok := direct3x3Layouts(g, c)
					if fits := h+p[0]+p[2] >= 3 && wd+p[1]+p[3] >= 3; ok != fits {
						t.Fatalf("%v: layout ok = %v, want %v", g, ok, fits)
					}
					if _, chosen := NewDirect3x3Layout(g, c); chosen != ok {
						t.Fatalf("%v: NewDirect3x3Layout ok = %v, want %v", g, chosen, ok)
					}
					if !ok {
						continue
					}
					x, w := randSlice(r, c*h*wd), randSlice(r, m*c*9)
					want, mag := direct3x3Naive(g, x, w, c, m)
					viaGemm := direct3x3Im2col(g, x, w, c, m)
					for _, l := range layouts {
						name := fmt.Sprintf("%s/%dx%d/c%d/m%d/pad%v/stride%d/flat=%v", impl.Name, h, wd, c, m, p, s, l.Flat)
						got := direct3x3Run(&impl, &l, x, w, m)
						for i := range want {
							if !closeTo(got[i], want[i], mag[i]) {
								t.Fatalf("%s: y[%d] = %v, want %v", name, i, got[i], want[i])
							}
							if !closeTo(got[i], viaGemm[i], mag[i]) {
								t.Fatalf("%s: y[%d] = %v, im2col+GEMM %v", name, i, got[i], viaGemm[i])
							}
						}
					}
				}
			}
		}
	}
}

// NaN and ±Inf inputs propagate as in the definition (and the general
// path): NaN where a NaN or opposite infinities meet, ±Inf elsewhere in
// their windows, and the padding's zeros add nothing; strides 1 and 2.
func TestDirect3x3NonFinite(t *testing.T) {
	for s := 1; s <= 2; s++ {
		t.Run(fmt.Sprintf("stride%d", s), func(t *testing.T) { checkDirect3x3NonFinite(t, s) })
	}
}

func checkDirect3x3NonFinite(t *testing.T, s int) {
	r := rand.New(rand.NewPCG(3, 4))
	const h, wd, c, m = 9, 21, 3, 11
	g := geomOf([]int{h, wd}, []int{3, 3}, []int{s, s}, []int{1, 1}, []int{1, 1}, []int{1, 1})
	layouts, _ := direct3x3Layouts(g, c)
	x, w := randSlice(r, c*h*wd), randSlice(r, m*c*9)
	x[0] = float32(math.NaN())               // a corner: the padding beside it
	x[(1*h+4)*wd+20] = float32(math.Inf(1))  // the right edge
	x[(2*h+4)*wd+19] = float32(math.Inf(-1)) // windows meeting the +Inf: NaN
	x[(2*h+8)*wd+10] = float32(math.Inf(1))  // the last row
	x[(0*h+6)*wd+3] = float32(math.Inf(-1))  // alone
	for _, impl := range Direct3x3Implementations() {
		for _, l := range layouts {
			got := direct3x3Run(&impl, &l, x, w, m)
			want, mag := direct3x3Naive(g, x, w, c, m)
			viaGemm := direct3x3Im2col(g, x, w, c, m)
			nonFinite := 0
			for i := range want {
				if math.IsNaN(float64(want[i])) || math.IsInf(float64(want[i]), 0) {
					nonFinite++
				}
				if !closeTo(got[i], want[i], mag[i]) || !closeTo(got[i], viaGemm[i], mag[i]) {
					t.Fatalf("%s flat=%v: y[%d] = %v, want %v (im2col+GEMM %v)", impl.Name, l.Flat, i, got[i], want[i], viaGemm[i])
				}
			}
			if nonFinite == 0 {
				t.Fatalf("no output is non-finite: the case tests nothing")
			}
		}
	}
}

// Signed zeros come out as im2col and the GEMM give them, bit for bit: an
// input of +0 and −0 times weights of either sign (−0 among them) makes
// products of both signs, and the sums start from +0 in both paths;
// strides 1 and 2, with and without padding.
func TestDirect3x3SignedZerosMatchGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const h, wd, c, m = 7, 19, 3, 10
	for s := 1; s <= 2; s++ {
		for pad := 0; pad <= 1; pad++ {
			g := geomOf([]int{h, wd}, []int{3, 3}, []int{s, s}, []int{1, 1}, []int{pad, pad}, []int{pad, pad})
			layouts, ok := direct3x3Layouts(g, c)
			if !ok {
				t.Fatalf("stride %d pad %d: layout refused", s, pad)
			}
			x, w := make([]float32, c*h*wd), randSlice(r, m*c*9)
			for i := range x {
				if r.IntN(2) == 0 {
					x[i] = float32(math.Copysign(0, -1))
				}
			}
			for i := range w {
				if r.IntN(4) == 0 {
					w[i] = float32(math.Copysign(0, -1))
				}
			}
			want := direct3x3Im2col(g, x, w, c, m)
			for _, impl := range Direct3x3Implementations() {
				for _, l := range layouts {
					got := direct3x3Run(&impl, &l, x, w, m)
					for i := range want {
						if got[i] != 0 || math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s stride %d pad %d flat=%v: y[%d] = %v (bits %#x), im2col+GEMM %v (bits %#x)", impl.Name, s, pad, l.Flat, i,
								got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
						}
					}
				}
			}
		}
	}
}

// A layout is refused for what the kernels do not cover.
func TestDirect3x3LayoutRefuses(t *testing.T) {
	for name, g := range map[string]*Geometry{
		"1-D":        geomOf([]int{9}, []int{3}, []int{1}, []int{1}, []int{1}, []int{1}),
		"5×5":        geomOf([]int{9, 9}, []int{5, 5}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1}),
		"stride 3":   geomOf([]int{9, 9}, []int{3, 3}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}),
		"stride 1×2": geomOf([]int{9, 9}, []int{3, 3}, []int{1, 2}, []int{1, 1}, []int{1, 1}, []int{1, 1}),
		"dilation 2": geomOf([]int{9, 9}, []int{3, 3}, []int{1, 1}, []int{2, 2}, []int{1, 1}, []int{1, 1}),
		"pad 2":      geomOf([]int{9, 9}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{2, 1}, []int{1, 1}),
	} {
		if _, ok := NewDirect3x3Layout(g, 4); ok {
			t.Errorf("%s: layout accepted", name)
		}
	}
}

// randSlice returns n values uniform in [-1, 1).
func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.Float64()*2 - 1)
	}
	return s
}
