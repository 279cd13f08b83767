package jpeg

// Block smoothing: when a progressive image's lowest AC coefficients are
// not all known to the last bit, libjpeg estimates those still zero from
// the DC values of the 5x5 neighbourhood of blocks (the JPEG
// specification's annex K.8 idea on a larger window) before the IDCT; if
// no AC coefficient has arrived at all it also re-estimates the DC. The
// windows, the integer arithmetic and the edge handling below are those of
// libjpeg-turbo 2.1 (Debian 12's 2.1.5). libjpeg-turbo 3.0.1 changed which
// block rows it takes as neighbours for vertically subsampled components
// (v > 1) and the right-hand neighbours of images two blocks wide, so for
// those images it may differ; earlier releases used a 3x3 window.

// estimate returns libjpeg's estimate of a coefficient with quantiser q
// from the DC-weighted sum num, rounded to nearest with ties away from
// zero and, when al > 0 (the coefficient's known bits stop at bit al),
// kept below 2^al in magnitude.
func estimate(num, q int64, al int, capped bool) int16 {
	neg := num < 0
	if neg {
		num = -num
	}
	pred := (q<<7 + num) / (q << 8)
	if capped && al > 0 && pred >= 1<<al {
		pred = 1<<al - 1
	}
	if neg {
		pred = -pred
	}
	return int16(int32(pred))
}

// smoothedSamples is samples() with libjpeg's block smoothing.
func (d *decoder) smoothedSamples(c *component) []uint8 {
	stride := c.bw * 8
	plane := make([]uint8, stride*c.bh*8)
	q := c.q
	bits := &c.coefBits
	changeDC := true
	for k := 1; k <= 9; k++ {
		if bits[k] != -1 {
			changeDC = false
		}
	}
	// Quantisers in natural order: Qyx is row y, column x.
	Q00, Q01, Q10, Q20, Q11, Q02 := int64(q[0]), int64(q[1]), int64(q[8]), int64(q[16]), int64(q[9]), int64(q[2])
	Q03, Q12, Q21, Q30 := int64(q[3]), int64(q[10]), int64(q[17]), int64(q[24])
	last := d.mcusY - 1 // last iMCU row
	v := c.v
	var ws [64]int16
	for imcu := 0; imcu <= last; imcu++ {
		blockRows := v
		if imcu == last {
			if blockRows = c.bh % v; blockRows == 0 {
				blockRows = v
			}
		}
		for br := range blockRows {
			cur := imcu*v + br
			// Neighbour rows as libjpeg 2.1 picks them: it only looks
			// two rows away where its buffer holds them.
			prev := cur
			if br > 0 || imcu > 0 {
				prev = cur - 1
			}
			prev2 := prev
			if br > 1 || imcu > 1 {
				prev2 = cur - 2
			}
			next := cur
			if br < blockRows-1 || imcu < last {
				next = cur + 1
			}
			next2 := next
			if br < blockRows-2 || imcu+1 < last {
				next2 = cur + 2
			}
			rows := [5]int{prev2, prev, cur, next, next2}
			dcAt := func(r, col int) int64 { return int64(c.block(rows[r], col)[0]) }
			// dc[r][k]: DC of row r (two above to two below) and column
			// b-2+k, loaded as libjpeg's sliding registers are, so the
			// right-hand edge repeats what it repeats.
			var dc [5][5]int64
			for r := range 5 {
				for k := range 5 {
					dc[r][k] = dcAt(r, 0)
				}
			}
			lastCol := c.bw - 1
			for b := 0; b <= lastCol; b++ {
				if b == 0 && b < lastCol {
					for r := range 5 {
						dc[r][3] = dcAt(r, 1)
					}
				}
				if b+1 < lastCol {
					for r := range 5 {
						dc[r][4] = dcAt(r, b+2)
					}
				}
				copy(ws[:], c.block(cur, b))
				D := func(n int) int64 { return dc[(n-1)/5][(n-1)%5] } // DC01..DC25
				set := func(pos, k int, qk, num int64) {
					if al := bits[k]; al != 0 && ws[pos] == 0 {
						ws[pos] = estimate(Q00*num, qk, al, true)
					}
				}
				if changeDC {
					set(1, 1, Q01, -D(1)-D(2)+D(4)+D(5)-3*D(6)+13*D(7)-13*D(9)+3*D(10)-3*D(11)+38*D(12)-38*D(14)+
						3*D(15)-3*D(16)+13*D(17)-13*D(19)+3*D(20)-D(21)-D(22)+D(24)+D(25))
					set(8, 2, Q10, -D(1)-3*D(2)-3*D(3)-3*D(4)-D(5)-D(6)+13*D(7)+38*D(8)+13*D(9)-D(10)+D(16)-
						13*D(17)-38*D(18)-13*D(19)+D(20)+D(21)+3*D(22)+3*D(23)+3*D(24)+D(25))
					set(16, 3, Q20, D(3)+2*D(7)+7*D(8)+2*D(9)-5*D(12)-14*D(13)-5*D(14)+2*D(17)+7*D(18)+2*D(19)+D(23))
					set(9, 4, Q11, -D(1)+D(5)+9*D(7)-9*D(9)-9*D(17)+9*D(19)+D(21)-D(25))
					set(2, 5, Q02, 2*D(7)-5*D(8)+2*D(9)+D(11)+7*D(12)-14*D(13)+7*D(14)+D(15)+2*D(17)-5*D(18)+2*D(19))
					set(3, 6, Q03, D(7)-D(9)+2*D(12)-2*D(14)+D(17)-D(19))
					set(10, 7, Q12, D(7)-3*D(8)+D(9)-D(17)+3*D(18)-D(19))
					set(17, 8, Q21, D(7)-D(9)-3*D(12)+3*D(14)+D(17)-D(19))
					set(24, 9, Q30, D(7)+2*D(8)+D(9)-D(17)-2*D(18)-D(19))
					num := -2*D(1) - 6*D(2) - 8*D(3) - 6*D(4) - 2*D(5) - 6*D(6) + 6*D(7) + 42*D(8) + 6*D(9) - 6*D(10) -
						8*D(11) + 42*D(12) + 152*D(13) + 42*D(14) - 8*D(15) - 6*D(16) + 6*D(17) + 42*D(18) + 6*D(19) -
						6*D(20) - 2*D(21) - 6*D(22) - 8*D(23) - 6*D(24) - 2*D(25)
					ws[0] = estimate(Q00*num, Q00, 0, false)
				} else {
					set(1, 1, Q01, -7*D(11)+50*D(12)-50*D(14)+7*D(15))
					set(8, 2, Q10, -7*D(3)+50*D(8)-50*D(18)+7*D(23))
					set(16, 3, Q20, -D(3)+13*D(8)-24*D(13)+13*D(18)-D(23))
					set(9, 4, Q11, D(10)+D(16)-10*D(17)+10*D(19)-D(2)-D(20)+D(22)-D(24)+D(4)-D(6)+10*D(7)-10*D(9))
					set(2, 5, Q02, -D(11)+13*D(12)-24*D(13)+13*D(14)-D(15))
				}
				idctBlock(ws[:], q, plane[cur*8*stride+b*8:], stride)
				for r := range 5 {
					copy(dc[r][:4], dc[r][1:])
				}
			}
		}
	}
	return plane
}
