package conv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// depthwiseCase is one plane geometry of the depthwise tests.
type depthwiseCase struct {
	h, w, k, s             int
	top, left, bottom, rgt int
}

func (c depthwiseCase) geometry() *Geometry {
	return geomOf([]int{c.h, c.w}, []int{c.k, c.k}, []int{c.s, c.s}, []int{1, 1},
		[]int{c.top, c.left}, []int{c.bottom, c.rgt})
}

// depthwiseCases covers kernels 3 and 5, strides 1 and 2, symmetric and
// asymmetric pads of 0 to 2, widths 1 to 40, 57 and 112 (whole vectors,
// a wide block of four and every tail length of both vector widths) and
// tiny planes, skipping windows larger than the padded input.
func depthwiseCases() []depthwiseCase {
	pads := [][4]int{{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {1, 0, 0, 1}, {0, 2, 1, 0}, {2, 1, 0, 2}}
	var widths []int
	for w := 1; w <= 40; w++ {
		widths = append(widths, w)
	}
	widths = append(widths, 57, 112)
	heights := []int{1, 2, 3, 5, 7, 9}
	var cases []depthwiseCase
	for _, k := range []int{3, 5} {
		for _, s := range []int{1, 2} {
			for pi, p := range pads {
				for wi, w := range widths {
					c := depthwiseCase{h: heights[(wi+pi)%len(heights)], w: w, k: k, s: s,
						top: p[0], left: p[1], bottom: p[2], rgt: p[3]}
					if c.h+c.top+c.bottom >= k && c.w+c.left+c.rgt >= k {
						cases = append(cases, c)
					}
				}
			}
			cases = append(cases, depthwiseCase{h: 1, w: 1, k: k, s: s, top: 2, left: 2, bottom: 2, rgt: 2},
				depthwiseCase{h: 2, w: 3, k: k, s: s, top: 2, left: 1, bottom: 2, rgt: 2},
				depthwiseCase{h: 112, w: 112, k: k, s: s, top: k / 2, left: k / 2, bottom: k / 2, rgt: k / 2})
		}
	}
	return cases
}

// depthwiseReference computes the plane with DirectThin (the existing
// path: bias first, then one axpy per kernel position) and the clamp, and
// the magnitude Σ|w·x| + |bias| of each output's terms, which scales the
// tolerance.
func depthwiseReference(g *Geometry, x, w []float32, bias, lo, hi float32) (want []float32, mag []float64) {
	outSz := g.OutSize()
	want = make([]float32, outSz)
	for i := range want {
		want[i] = bias
	}
	DirectThin(want, w, x, 1, 1, g, false)
	for i, v := range want {
		want[i] = min(max(v, lo), hi)
		if v != v {
			want[i] = v
		}
	}
	absX := make([]float32, len(x))
	absW := make([]float32, len(w))
	for i := range x {
		absX[i] = float32(math.Abs(float64(x[i])))
	}
	for i := range w {
		absW[i] = float32(math.Abs(float64(w[i])))
	}
	m := make([]float32, outSz)
	for i := range m {
		m[i] = float32(math.Abs(float64(bias)))
	}
	DirectThin(m, absW, absX, 1, 1, g, false)
	mag = make([]float64, outSz)
	for i, v := range m {
		mag[i] = float64(v)
	}
	return want, mag
}

// closeDepthwise reports whether got matches want: both NaN, equal
// (zeros of either sign are equal: the kernels add a padding tap's
// +0·w where the existing path skips it, which can turn -0 into +0), or
// within 1e-5 of the terms' magnitude. The summation order is the same
// but fused multiply-adds round once where a separate multiply and add
// round twice.
func closeDepthwise(got, want float32, mag float64) bool {
	if got != got || want != want {
		return got != got && want != want
	}
	if got == want {
		return true
	}
	return math.Abs(float64(got)-float64(want)) <= 1e-5*(mag+1e-30)
}

// Every depthwise implementation's plane matches the portable kernel and
// the existing DirectThin path, with and without a clamp.
func TestDepthwiseMatchesDirectThin(t *testing.T) {
	for _, im := range DepthwiseImplementations() {
		r := rand.New(rand.NewPCG(7, 7))
		for _, c := range depthwiseCases() {
			g := c.geometry()
			l, ok := NewDepthwiseLayout(g)
			if !ok {
				t.Fatalf("%+v: no layout", c)
			}
			x := make([]float32, g.InSize())
			w := make([]float32, c.k*c.k)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			for i := range w {
				w[i] = float32(r.NormFloat64())
			}
			bias := float32(r.NormFloat64())
			for _, clamp := range [][2]float32{{float32(math.Inf(-1)), float32(math.Inf(1))}, {0, 0.75}} {
				checkDepthwise(t, im, &l, g, x, w, bias, clamp[0], clamp[1], fmt.Sprintf("%+v clamp %v", c, clamp))
			}
		}
	}
}

// checkDepthwise runs im and the portable kernel on one plane and
// compares both with DirectThin and with each other.
func checkDepthwise(t *testing.T, im DepthwiseImpl, l *DepthwiseLayout, g *Geometry, x, w []float32, bias, lo, hi float32, what string) {
	t.Helper()
	want, mag := depthwiseReference(g, x, w, bias, lo, hi)
	run := func(im *DepthwiseImpl) []float32 {
		// Scratch and output start as NaN, then the scratch is prepared
		// and another plane loaded first: the padding must stay zero
		// across Loads, and every output must be written.
		src := make([]float32, l.ScratchSize())
		y := make([]float32, g.OutSize()+depthwiseVector)
		other := make([]float32, len(x))
		for _, s := range [][]float32{src, y, other} {
			for i := range s {
				s[i] = float32(math.NaN())
			}
		}
		l.Prepare(src)
		l.Load(im, src, other)
		l.Load(im, src, x)
		l.DepthwiseKernel(im)(l, y, src, w, bias, lo, hi)
		for i := g.OutSize(); i < len(y); i++ {
			if y[i] == y[i] {
				t.Fatalf("%s %s: wrote past the plane at %d", im.Name, what, i)
			}
		}
		return y[:g.OutSize()]
	}
	got, port := run(&im), run(&depthwisePortable)
	for i := range want {
		if !closeDepthwise(got[i], want[i], mag[i]) {
			t.Fatalf("%s %s: output %d = %v, DirectThin gives %v", im.Name, what, i, got[i], want[i])
		}
		if !closeDepthwise(got[i], port[i], mag[i]) {
			t.Fatalf("%s %s: output %d = %v, the portable kernel gives %v", im.Name, what, i, got[i], port[i])
		}
	}
}

// NaN, ±Inf and -0 in the input come out as DirectThin gives them:
// NaN and Inf-Inf as NaN, a lone Inf as ±Inf, through the clamp too.
func TestDepthwiseSpecialValues(t *testing.T) {
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1))}
	for _, im := range DepthwiseImplementations() {
		r := rand.New(rand.NewPCG(9, 9))
		for _, c := range []depthwiseCase{
			{h: 9, w: 37, k: 3, s: 1, top: 1, left: 1, bottom: 1, rgt: 1},
			{h: 9, w: 37, k: 3, s: 2, top: 1, left: 1, bottom: 1, rgt: 1},
			{h: 8, w: 21, k: 5, s: 1, top: 2, left: 2, bottom: 2, rgt: 2},
			{h: 8, w: 21, k: 5, s: 2, top: 2, left: 1, bottom: 1, rgt: 2},
		} {
			g := c.geometry()
			l, _ := NewDepthwiseLayout(g)
			x := make([]float32, g.InSize())
			for i := range x {
				x[i] = float32(r.NormFloat64())
				if r.IntN(6) == 0 {
					x[i] = specials[r.IntN(len(specials))]
				}
			}
			w := make([]float32, c.k*c.k)
			for i := range w {
				w[i] = float32(r.NormFloat64())
			}
			checkDepthwise(t, im, &l, g, x, w, 0.5, float32(math.Inf(-1)), float32(math.Inf(1)), fmt.Sprintf("%+v", c))
			checkDepthwise(t, im, &l, g, x, w, 0.5, 0, 6, fmt.Sprintf("%+v relu6", c))
			allNegZero := slices.Repeat([]float32{float32(math.Copysign(0, -1))}, len(x))
			checkDepthwise(t, im, &l, g, allNegZero, w, 0, float32(math.Inf(-1)), float32(math.Inf(1)), fmt.Sprintf("%+v -0", c))
		}
	}
}

// DeinterleaveRows splits rows into their even and odd elements for
// every length, across whole vectors and the last partial one, writing
// nothing but zeros past each row's data and nothing past its bound;
// CopyRows copies rows exactly. Three rows, strides wider than the rows.
func TestDepthwiseRowCopies(t *testing.T) {
	const rows = 3
	for _, im := range DepthwiseImplementations() {
		for n := 0; n <= 70; n++ {
			srcStride := n + 5
			src := make([]float32, rows*srcStride)
			for i := range src {
				src[i] = float32(i + 1)
			}
			bound := roundUp(n, 2*depthwiseVector) / 2
			dstStride := bound + 3
			even, odd := make([]float32, rows*dstStride), make([]float32, rows*dstStride)
			copyStride := n + 3
			copied := make([]float32, rows*copyStride)
			for i := range even {
				even[i], odd[i] = -1, -1
			}
			for i := range copied {
				copied[i] = -1
			}
			im.DeinterleaveRows(even, odd, dstStride, src, srcStride, rows, n)
			im.CopyRows(copied, copyStride, src, srcStride, rows, n)
			for r := range rows {
				in := src[r*srcStride:]
				for i := range copyStride {
					if v := copied[r*copyStride+i]; i < n && v != in[i] || i >= n && v != -1 {
						t.Fatalf("%s n=%d: copied row %d [%d] = %v", im.Name, n, r, i, v)
					}
				}
				for i := range dstStride {
					at := r*dstStride + i
					for _, row := range []struct {
						name      string
						got       []float32
						data, off int
					}{{"even", even, (n + 1) / 2, 0}, {"odd", odd, n / 2, 1}} {
						v := row.got[at]
						switch {
						case i < row.data && v != in[2*i+row.off]:
							t.Fatalf("%s n=%d: %s row %d [%d] = %v, want %v", im.Name, n, row.name, r, i, v, in[2*i+row.off])
						case i >= row.data && i < bound && v != 0 && v != -1:
							t.Fatalf("%s n=%d: %s row %d [%d] = %v past the data, want 0 or untouched", im.Name, n, row.name, r, i, v)
						case i >= bound && v != -1:
							t.Fatalf("%s n=%d: %s row %d written past its bound at %d", im.Name, n, row.name, r, i)
						}
					}
				}
			}
		}
	}
}

// Geometries outside the kernels' cover have no layout.
func TestDepthwiseLayoutCover(t *testing.T) {
	for _, g := range []*Geometry{
		geomOf([]int{8, 8}, []int{3, 3}, []int{1, 1}, []int{2, 2}, []int{1, 1}, []int{1, 1}),
		geomOf([]int{8, 8}, []int{3, 5}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1}),
		geomOf([]int{8, 8}, []int{7, 7}, []int{1, 1}, []int{1, 1}, []int{3, 3}, []int{3, 3}),
		geomOf([]int{8, 8}, []int{3, 3}, []int{1, 2}, []int{1, 1}, []int{1, 1}, []int{1, 1}),
		geomOf([]int{8, 8}, []int{3, 3}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}),
		geomOf([]int{8}, []int{3}, []int{1}, []int{1}, []int{1}, []int{1}),
	} {
		if _, ok := NewDepthwiseLayout(g); ok {
			t.Fatalf("kernel %v strides %v dilations %v: got a layout", g.Kernel, g.Strides, g.Dilations)
		}
	}
}

// BenchmarkDepthwise runs the depthwise layers of MobileNetV2 (3×3) and
// of MNASNet/MobileNetV3 (5×5), every channel of one image on one
// thread, with each implementation and with DirectThin.
func BenchmarkDepthwise(b *testing.B) {
	layers := []struct {
		name          string
		h, c, k, s, p int
	}{
		{"112x112x96_k3s2", 112, 96, 3, 2, 1},
		{"56x56x144_k3s1", 56, 144, 3, 1, 1},
		{"14x14x576_k3s1", 14, 576, 3, 1, 1},
		{"7x7x960_k3s1", 7, 960, 3, 1, 1},
		{"28x28x120_k5s1", 28, 120, 5, 1, 2},
		{"14x14x576_k5s2", 14, 576, 5, 2, 2},
		{"7x7x576_k5s1", 7, 576, 5, 1, 2},
	}
	for _, ly := range layers {
		g := geomOf([]int{ly.h, ly.h}, []int{ly.k, ly.k}, []int{ly.s, ly.s}, []int{1, 1}, []int{ly.p, ly.p}, []int{ly.p, ly.p})
		inSz, outSz := g.InSize(), g.OutSize()
		x := make([]float32, ly.c*inSz)
		w := make([]float32, ly.c*ly.k*ly.k)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		for i := range w {
			w[i] = float32(i%5) - 2
		}
		y := make([]float32, ly.c*outSz)
		l, _ := NewDepthwiseLayout(g)
		src := make([]float32, l.ScratchSize())
		l.Prepare(src)
		for _, im := range DepthwiseImplementations() {
			kernel := l.DepthwiseKernel(&im)
			b.Run(ly.name+"/"+im.Name, func(b *testing.B) {
				for b.Loop() {
					for c := range ly.c {
						l.Load(&im, src, x[c*inSz:(c+1)*inSz])
						kernel(&l, y[c*outSz:(c+1)*outSz], src, w[c*ly.k*ly.k:], 0, float32(math.Inf(-1)), float32(math.Inf(1)))
					}
				}
			})
		}
		b.Run(ly.name+"/directthin", func(b *testing.B) {
			for b.Loop() {
				for c := range ly.c {
					DirectThin(y[c*outSz:(c+1)*outSz], w[c*ly.k*ly.k:(c+1)*ly.k*ly.k], x[c*inSz:(c+1)*inSz], 1, 1, g, true)
				}
			}
		})
	}
}
