package native

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// poolRowsInput draws a [2, 3, H, W] input rich in ties (small integers,
// -0 and +0), with ±Inf, and with NaNs in a few planes when nan.
func poolRowsInput(rng *rand.Rand, H, W int, nan bool) ([]float32, []float64) {
	x32 := make([]float32, 2*3*H*W)
	for i := range x32 {
		switch c := rng.IntN(20); {
		case c < 3:
			x32[i] = 0
		case c < 6:
			x32[i] = float32(math.Copysign(0, -1))
		case c == 6:
			x32[i] = float32(math.Inf(1 - 2*rng.IntN(2)))
		case c == 7 && nan && i/(H*W)%2 == 0 && rng.IntN(4) == 0:
			x32[i] = float32(math.NaN())
		case c < 12:
			x32[i] = float32(rng.IntN(5) - 4)
		default:
			x32[i] = float32(rng.NormFloat64())
		}
	}
	x64 := make([]float64, len(x32))
	for i, v := range x32 {
		x64[i] = float64(v)
	}
	return x32, x64
}

// Float32 2-D MaxPool and AveragePool (the vector row kernels inside the
// image, the scalar loop at the borders and for rows holding a NaN) give
// bit for bit what the float64 path gives (always the scalar loop: the
// same comparisons, the same float64 sums) rounded to float32: over
// kernels 1..5 × 1..5, strides 1..3 on each axis, symmetric and
// asymmetric pads up to 2, ceil_mode, count_include_pad, widths from 1 to
// 112 and two images of three channels.
func TestPoolRowKernelsMatchScalarLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pads := [][]int64{{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 0, 1, 2}, {0, 2, 2, 1}, {2, 2, 2, 2}}
	widths := []int{1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 23, 31, 33, 40, 57, 112}
	cases := 0
	for kh := 1; kh <= 5; kh++ {
		for kw := 1; kw <= 5; kw++ {
			for sh := 1; sh <= 3; sh++ {
				for sw := 1; sw <= 3; sw++ {
					for pi, pad := range pads {
						for _, ceil := range []bool{false, true} {
							W := widths[(kh*7+kw*5+sh*3+sw+pi)%len(widths)]
							H := 4 + (kw+sw+pi)%6
							for _, mode := range []poolMode{poolMax, poolAvg} {
								for _, countPad := range []bool{false, true} {
									if mode == poolMax && countPad {
										continue
									}
									name := fmt.Sprintf("%v %d×%d stride %d,%d pads %v ceil %v countPad %v on %d×%d", mode, kh, kw, sh, sw, pad, ceil, countPad, H, W)
									if checkPoolRowKernels(t, rng, name, mode, kh, kw, sh, sw, pad, ceil, countPad, H, W) {
										cases++
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if cases < 1000 {
		t.Fatalf("only %d geometries were valid", cases)
	}
}

func checkPoolRowKernels(t *testing.T, rng *rand.Rand, name string, mode poolMode, kh, kw, sh, sw int, pad []int64, ceil, countPad bool, H, W int) bool {
	t.Helper()
	k := &poolKernel{mode: mode, kernelShape: []int64{int64(kh), int64(kw)}, countPad: countPad, threads: 1,
		attrs: convWindowAttrs{op: mode.String(), strides: []int64{int64(sh), int64(sw)}, pads: pad, ceil: ceil}}
	x := onnx.NewTensor(onnx.Float, 2, 3, H, W)
	pl, shape, err := k.plan(x)
	if err != nil {
		return false // pads or kernel larger than the input allows
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	for _, nan := range []bool{false, true} {
		x32, x64 := poolRowsInput(rng, H, W, nan)
		y32, y64 := make([]float32, n), make([]float64, n)
		poolRun(k, pl, y32, x32, nil)
		poolRun(k, pl, y64, x64, nil)
		for i := range y32 {
			want := float32(y64[i])
			if math.Float32bits(y32[i]) != math.Float32bits(want) && !(y32[i] != y32[i] && want != want) {
				t.Fatalf("%s, NaNs %v: y[%d] = %v (%#x), want %v (%#x)", name, nan, i, y32[i], math.Float32bits(y32[i]), want, math.Float32bits(want))
			}
		}
	}
	return true
}
