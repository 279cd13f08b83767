package jpeg

// The accurate integer inverse DCT of libjpeg (JDCT_ISLOW), reproduced
// for its results: a separable 8-point Loeffler-Ligtenberg-Moschytz
// transform whose multipliers are the cosine combinations below rounded
// to 13 fractional bits. The column pass keeps 2 more bits than the
// input (pass1Bits); the row pass removes them with the 3 bits of the
// 1/8 normalisation, rounding halves up. The result, still centred on
// zero, is wrapped to 10 bits and mapped through rangeLimit.

const (
	constBits = 13
	pass1Bits = 2

	// The multipliers, round(x * 2^13), with ck = cos(k*pi/16).

	fix0_298631336 = 2446  // sqrt(2) * (-c1+c3+c5-c7)
	fix0_390180644 = 3196  // sqrt(2) * (c3-c5), used negated
	fix0_541196100 = 4433  // sqrt(2) * c6
	fix0_765366865 = 6270  // sqrt(2) * (c2-c6)
	fix0_899976223 = 7373  // sqrt(2) * (c3-c7), used negated
	fix1_175875602 = 9633  // sqrt(2) * c3
	fix1_501321110 = 12299 // sqrt(2) * (c1+c3-c5-c7)
	fix1_847759065 = 15137 // sqrt(2) * (c2+c6)
	fix1_961570560 = 16069 // sqrt(2) * (c3+c5)
	fix2_053119869 = 16819 // sqrt(2) * (c1+c3-c5+c7)
	fix2_562915447 = 20995 // sqrt(2) * (c1+c3)
	fix3_072711026 = 25172 // sqrt(2) * (c1+c3+c5-c7)
)

// rangeLimit maps the low 10 bits of a zero-centred IDCT output to a
// sample: read as a signed 10-bit number, add 128 and clamp to 0..255.
// (Values further out wrap around, as in libjpeg; only corrupt
// coefficients get there.)
var rangeLimit = func() (t [1024]uint8) {
	for v := range t {
		s := v
		if s >= 512 {
			s -= 1024
		}
		t[v] = uint8(min(max(s+128, 0), 255))
	}
	return
}()

// descale divides by 2^n, rounding halves up.
func descale(x int64, n uint) int64 { return (x + 1<<(n-1)) >> n }

// idct1D is one 8-point pass on in[0], in[s], ..., in[7s], with the even
// part's DC-and-4 terms scaled by 2^constBits; it returns the 8 outputs
// before descaling.
func idct1D(i0, i1, i2, i3, i4, i5, i6, i7 int64) (o [8]int64) {
	// Even part.
	z1 := (i2 + i6) * fix0_541196100
	tmp2 := z1 - i6*fix1_847759065
	tmp3 := z1 + i2*fix0_765366865
	tmp0 := (i0 + i4) << constBits
	tmp1 := (i0 - i4) << constBits
	t10, t13 := tmp0+tmp3, tmp0-tmp3
	t11, t12 := tmp1+tmp2, tmp1-tmp2

	// Odd part: i7, i5, i3, i1.
	a0, a1, a2, a3 := i7, i5, i3, i1
	z1 = a0 + a3
	z2 := a1 + a2
	z3 := a0 + a2
	z4 := a1 + a3
	z5 := (z3 + z4) * fix1_175875602
	a0 *= fix0_298631336
	a1 *= fix2_053119869
	a2 *= fix3_072711026
	a3 *= fix1_501321110
	z1 *= -fix0_899976223
	z2 *= -fix2_562915447
	z3 = z3*-fix1_961570560 + z5
	z4 = z4*-fix0_390180644 + z5
	a0 += z1 + z3
	a1 += z2 + z4
	a2 += z2 + z3
	a3 += z1 + z4

	return [8]int64{t10 + a3, t11 + a2, t12 + a1, t13 + a0, t13 - a0, t12 - a1, t11 - a2, t10 - a3}
}

// idctRaw dequantises and inverse-transforms one block (coefficients in
// row-major order) into zero-centred values before range limiting,
// exactly as libjpeg's islow IDCT computes them.
func idctRaw(coef []int16, q *[64]uint16, out *[64]int32) {
	var ws [64]int32
	for c := range 8 {
		if coef[8+c] == 0 && coef[16+c] == 0 && coef[24+c] == 0 && coef[32+c] == 0 &&
			coef[40+c] == 0 && coef[48+c] == 0 && coef[56+c] == 0 {
			// Only the DC term: the column is constant (same value as
			// the full computation, faster).
			dc := int32(coef[c]) * int32(q[c]) << pass1Bits
			for r := range 8 {
				ws[8*r+c] = dc
			}
			continue
		}
		dq := func(r int) int64 { return int64(int32(coef[8*r+c]) * int32(q[8*r+c])) }
		o := idct1D(dq(0), dq(1), dq(2), dq(3), dq(4), dq(5), dq(6), dq(7))
		for r := range 8 {
			ws[8*r+c] = int32(descale(o[r], constBits-pass1Bits))
		}
	}
	for r := range 8 {
		w := ws[8*r : 8*r+8]
		o := idct1D(int64(w[0]), int64(w[1]), int64(w[2]), int64(w[3]), int64(w[4]), int64(w[5]), int64(w[6]), int64(w[7]))
		for c := range 8 {
			out[8*r+c] = int32(descale(o[c], constBits+pass1Bits+3))
		}
	}
}

// idctBlock writes the 8x8 samples of one block at dst (row stride
// stride).
func idctBlock(coef []int16, q *[64]uint16, dst []uint8, stride int) {
	var raw [64]int32
	idctRaw(coef, q, &raw)
	for r := range 8 {
		row := dst[r*stride : r*stride+8]
		for c := range 8 {
			row[c] = rangeLimit[raw[8*r+c]&1023]
		}
	}
}
