package jpeg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A block with only a DC coefficient is flat at DC*q/8 (the IDCT's
// normalisation), rounded half up and offset by 128.
func TestIDCTDCOnly(t *testing.T) {
	q := new([64]uint16)
	for i := range q {
		q[i] = 1
	}
	for _, c := range []struct {
		dc, q int
		want  uint8
	}{
		{0, 1, 128}, {8, 16, 144}, {-8, 16, 112}, {4, 1, 129}, {3, 1, 128}, {-4, 1, 128}, {-5, 1, 127},
		{1016, 1, 255}, {-1024, 1, 0}, {2047, 1, 255},
	} {
		coef := make([]int16, 64)
		coef[0] = int16(c.dc)
		q[0] = uint16(c.q)
		out := make([]uint8, 64)
		idctBlock(coef, q, out, 8)
		for i, v := range out {
			if v != c.want {
				t.Fatalf("DC %d q %d: sample %d is %d, want %d", c.dc, c.q, i, v, c.want)
			}
		}
	}
}

// libjpeg's range limit clamps -512..511 to 0..255 (after adding 128) and
// wraps values outside that 10-bit window.
func TestRangeLimit(t *testing.T) {
	for _, c := range []struct {
		raw  int32
		want uint8
	}{{-128, 0}, {-129, 0}, {-512, 0}, {0, 128}, {127, 255}, {511, 255}, {-1, 127}, {512, 0}, {1023, 127}, {-513, 255}} {
		if got := rangeLimit[c.raw&1023]; got != c.want {
			t.Errorf("rangeLimit(%d) = %d, want %d", c.raw, got, c.want)
		}
	}
}

// The IDCT meets the accuracy criteria of IEEE 1180-1990 against a
// float64 reference: random blocks in [-L, H] are transformed forward in
// float64, rounded and clamped to 12 bits; the integer IDCT's outputs must
// then be within 1 of the reference everywhere, with per-position mean
// squared error at most 0.06 and mean error at most 0.015, overall mean
// squared error at most 0.02 and mean error at most 0.0015.
func TestIDCTAccuracyIEEE1180(t *testing.T) {
	var cos [8][8]float64
	for x := range 8 {
		for u := range 8 {
			cu := 1.0
			if u == 0 {
				cu = 1 / math.Sqrt2
			}
			cos[x][u] = cu / 2 * math.Cos(float64(2*x+1)*float64(u)*math.Pi/16)
		}
	}
	// 2-D DCT pair with the JPEG normalisation: the basis is orthonormal.
	fdct := func(in *[64]float64) (out [64]float64) {
		for u := range 8 {
			for v := range 8 {
				s := 0.0
				for x := range 8 {
					for y := range 8 {
						s += cos[x][u] * cos[y][v] * in[8*x+y]
					}
				}
				out[8*u+v] = s
			}
		}
		return
	}
	idct := func(in *[64]float64) (out [64]float64) {
		for x := range 8 {
			for y := range 8 {
				s := 0.0
				for u := range 8 {
					for v := range 8 {
						s += cos[x][u] * cos[y][v] * in[8*u+v]
					}
				}
				out[8*x+y] = s
			}
		}
		return
	}
	clamp := func(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }
	q := new([64]uint16)
	for i := range q {
		q[i] = 1
	}
	blocks := 10000
	if testing.Short() {
		blocks = 1000
	}
	for _, r := range []struct{ lo, hi float64 }{{256, 255}, {5, 5}, {300, 300}} {
		for _, sign := range []float64{1, -1} {
			rng := rand.New(rand.NewPCG(1, uint64(r.lo)))
			var sumErr, sumSq [64]float64
			for range blocks {
				var px [64]float64
				for i := range px {
					px[i] = sign * math.Floor(rng.Float64()*(r.lo+r.hi+1)-r.lo)
				}
				f := fdct(&px)
				coef := make([]int16, 64)
				var fq [64]float64
				for i := range f {
					fq[i] = clamp(math.RoundToEven(f[i]), -2048, 2047)
					coef[i] = int16(fq[i])
				}
				ref := idct(&fq)
				var raw [64]int32
				idctRaw(coef, q, &raw)
				for i := range raw {
					want := clamp(math.Round(ref[i]), -256, 255)
					e := clamp(float64(raw[i]), -256, 255) - want
					if math.Abs(e) > 1 {
						t.Fatalf("L=%v H=%v sign %v: error %v at %d", r.lo, r.hi, sign, e, i)
					}
					sumErr[i] += e
					sumSq[i] += e * e
				}
			}
			var totErr, totSq float64
			for i := range 64 {
				n := float64(blocks)
				if sumSq[i]/n > 0.06 || math.Abs(sumErr[i]/n) > 0.015 {
					t.Errorf("L=%v H=%v sign %v position %d: mse %.4f, mean error %.4f", r.lo, r.hi, sign, i, sumSq[i]/n, sumErr[i]/n)
				}
				totErr += sumErr[i]
				totSq += sumSq[i]
			}
			n := float64(64 * blocks)
			if totSq/n > 0.02 || math.Abs(totErr/n) > 0.0015 {
				t.Errorf("L=%v H=%v sign %v: overall mse %.4f, mean error %.5f", r.lo, r.hi, sign, totSq/n, totErr/n)
			}
		}
	}
	// All-zero input gives all-zero output.
	var raw [64]int32
	idctRaw(make([]int16, 64), q, &raw)
	for i, v := range raw {
		if v != 0 {
			t.Fatalf("zero block: output %d is %d", i, v)
		}
	}
}

// The fixed-point multipliers are the cosine combinations rounded to 13
// fractional bits.
func TestIDCTConstants(t *testing.T) {
	c := func(k float64) float64 { return math.Cos(k * math.Pi / 16) }
	fix := func(x float64) int { return int(math.Round(x * math.Sqrt2 * (1 << constBits))) }
	for _, k := range []struct {
		got  int
		want int
	}{
		{fix0_298631336, fix(-c(1) + c(3) + c(5) - c(7))},
		{fix0_390180644, fix(c(3) - c(5))},
		{fix0_541196100, fix(c(6))},
		{fix0_765366865, fix(c(2) - c(6))},
		{fix0_899976223, fix(c(3) - c(7))},
		{fix1_175875602, fix(c(3))},
		{fix1_501321110, fix(c(1) + c(3) - c(5) - c(7))},
		{fix1_847759065, fix(c(2) + c(6))},
		{fix1_961570560, fix(c(3) + c(5))},
		{fix2_053119869, fix(c(1) + c(3) - c(5) + c(7))},
		{fix2_562915447, fix(c(1) + c(3))},
		{fix3_072711026, fix(c(1) + c(3) + c(5) - c(7))},
	} {
		if k.got != k.want {
			t.Errorf("constant %d, want %d", k.got, k.want)
		}
	}
}
