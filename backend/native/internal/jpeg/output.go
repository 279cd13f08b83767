package jpeg

// output turns the decoded coefficients into pixels: IDCT of each
// component, upsampling to the image size, colour conversion.
func (d *decoder) output() (*Image, error) {
	smooth := d.progressive && d.wouldSmooth()
	planes := make([][]uint8, len(d.comps))
	for i := range d.comps {
		c := &d.comps[i]
		if c.q == nil {
			// A component no scan carried: libjpeg has no table to
			// latch for it.
			return nil, errNoData
		}
		var samples []uint8
		if smooth {
			samples = d.smoothedSamples(c)
		} else {
			samples = c.samples()
		}
		plane, err := d.upsample(c, samples)
		if err != nil {
			return nil, err
		}
		planes[i] = plane
	}
	n := d.width * d.height
	if len(d.comps) == 1 {
		return &Image{Width: d.width, Height: d.height, Channels: 1, Pix: planes[0]}, nil
	}
	pix := make([]uint8, 3*n)
	if d.isRGB() {
		for i := range n {
			pix[3*i], pix[3*i+1], pix[3*i+2] = planes[0][i], planes[1][i], planes[2][i]
		}
	} else {
		yccToRGB(pix, planes[0], planes[1], planes[2])
	}
	return &Image{Width: d.width, Height: d.height, Channels: 3, Pix: pix}, nil
}

var errNoData = unsupportedf("a component that no scan carries")

// isRGB applies libjpeg's colour-space guess for three components.
func (d *decoder) isRGB() bool {
	switch {
	case d.jfif:
		return false
	case d.adobe:
		return d.adobeTransform == 0
	}
	return d.comps[0].id == 'R' && d.comps[1].id == 'G' && d.comps[2].id == 'B'
}

// wouldSmooth reports whether libjpeg would block-smooth this progressive
// image: every component's quantisers for the DC and the first nine AC
// coefficients (in zigzag order) are nonzero, every component has DC
// data, and some component still lacks bits of one of those AC
// coefficients. Older libjpeg-turbo looked at five AC coefficients only;
// when all nine are complete neither smooths.
func (d *decoder) wouldSmooth() bool {
	useful := false
	for i := range d.comps {
		c := &d.comps[i]
		if c.q == nil {
			return false
		}
		for k := range 10 {
			if c.q[zigzag[k]] == 0 {
				return false
			}
		}
		if c.coefBits[0] < 0 {
			return false
		}
		for k := 1; k < 10; k++ {
			if c.coefBits[k] != 0 {
				useful = true
			}
		}
	}
	return useful
}

// samples runs the IDCT over the blocks covering the component and
// returns its sample plane, c.bw*8 samples per row.
func (c *component) samples() []uint8 {
	stride := c.bw * 8
	plane := make([]uint8, stride*c.bh*8)
	for by := range c.bh {
		for bx := range c.bw {
			idctBlock(c.block(by, bx), c.q, plane[by*8*stride+bx*8:], stride)
		}
	}
	return plane
}

// upsample scales a component's plane (c.w x c.hgt samples of a plane
// c.bw*8 wide) to the image size the way libjpeg-turbo's upsampler does
// with fancy upsampling on: the image's edge samples are repeated (the
// IDCT's padding beyond c.w x c.hgt is never read).
func (d *decoder) upsample(c *component, in []uint8) ([]uint8, error) {
	W, H := d.width, d.height
	stride := c.bw * 8
	if d.hmax%c.h != 0 || d.vmax%c.v != 0 {
		return nil, unsupportedf("sampling factors %dx%d against %dx%d (not an integral ratio)", c.h, c.v, d.hmax, d.vmax)
	}
	fx, fy := d.hmax/c.h, d.vmax/c.v
	out := make([]uint8, W*H)
	cw, ch := c.w, c.hgt
	row := func(r int) []uint8 { // clamped to the component's real rows
		r = min(max(r, 0), ch-1)
		return in[r*stride : r*stride+cw]
	}
	switch {
	case fx == 1 && fy == 1:
		for y := range H {
			copy(out[y*W:(y+1)*W], row(y))
		}
	case fx == 2 && fy == 1 && cw > 2:
		tmp := make([]uint8, 2*cw)
		for y := range H {
			fancyH2(tmp, row(y))
			copy(out[y*W:(y+1)*W], tmp)
		}
	case fx == 1 && fy == 2:
		// Vertical triangle filter, 3:1 with the nearer neighbour row;
		// the bias is 1 for the upper output row and 2 for the lower.
		for y := range H {
			r := y / 2
			near, far, bias := row(r), row(r-1), 1
			if y&1 == 1 {
				far, bias = row(r+1), 2
			}
			o := out[y*W : (y+1)*W]
			for x := range o {
				o[x] = uint8((3*int(near[x]) + int(far[x]) + bias) >> 2)
			}
		}
	case fx == 2 && fy == 2 && cw > 2:
		tmp := make([]uint8, 2*cw)
		sums := make([]int, cw)
		for y := range H {
			r := y / 2
			near, far := row(r), row(r-1)
			if y&1 == 1 {
				far = row(r + 1)
			}
			for x := range sums {
				sums[x] = 3*int(near[x]) + int(far[x])
			}
			fancyH2V2(tmp, sums)
			copy(out[y*W:(y+1)*W], tmp)
		}
	default: // replication, including 2:1 planes at most 2 samples wide
		for y := range H {
			src := row(y / fy)
			o := out[y*W : (y+1)*W]
			for x := range o {
				o[x] = src[x/fx]
			}
		}
	}
	return out, nil
}

// fancyH2 doubles a row (len(in) > 2) with libjpeg's horizontal triangle
// filter: each output is 3/4 of its nearer input and 1/4 of the other
// neighbour, rounding alternately down and up; the end samples are
// copied.
func fancyH2(out, in []uint8) {
	n := len(in)
	out[0] = in[0]
	out[1] = uint8((3*int(in[0]) + int(in[1]) + 2) >> 2)
	for i := 1; i < n-1; i++ {
		v := 3 * int(in[i])
		out[2*i] = uint8((v + int(in[i-1]) + 1) >> 2)
		out[2*i+1] = uint8((v + int(in[i+1]) + 2) >> 2)
	}
	out[2*n-2] = uint8((3*int(in[n-1]) + int(in[n-2]) + 1) >> 2)
	out[2*n-1] = in[n-1]
}

// fancyH2V2 doubles a row of vertical 3:1 sums (len(sums) > 2) with the
// horizontal triangle filter, as libjpeg's 2x2 fancy upsampler does:
// results are /16, with biases 8 and 7 alternating, and the end columns
// use their own sum four times.
func fancyH2V2(out []uint8, s []int) {
	n := len(s)
	out[0] = uint8((4*s[0] + 8) >> 4)
	out[1] = uint8((3*s[0] + s[1] + 7) >> 4)
	for i := 1; i < n-1; i++ {
		v := 3 * s[i]
		out[2*i] = uint8((v + s[i-1] + 8) >> 4)
		out[2*i+1] = uint8((v + s[i+1] + 7) >> 4)
	}
	out[2*n-2] = uint8((3*s[n-1] + s[n-2] + 8) >> 4)
	out[2*n-1] = uint8((4*s[n-1] + 7) >> 4)
}

// YCbCr to RGB in libjpeg's 16-bit fixed point: R = Y + 1.402 Cr,
// G = Y - 0.34414 Cb - 0.71414 Cr, B = Y + 1.772 Cb, with Cb and Cr
// centred on 128; the R and B terms are rounded per table entry, the G
// terms summed and then rounded.
var crR, cbB, crG, cbG = func() (crR, cbB [256]int32, crG, cbG [256]int32) {
	fix := func(x float64) int32 { return int32(x*65536 + 0.5) }
	for i := range 256 {
		x := int32(i) - 128
		crR[i] = (fix(1.40200)*x + 1<<15) >> 16
		cbB[i] = (fix(1.77200)*x + 1<<15) >> 16
		crG[i] = -fix(0.71414) * x
		cbG[i] = -fix(0.34414)*x + 1<<15
	}
	return
}()

func yccToRGB(dst, y, cb, cr []uint8) {
	clamp := func(v int32) uint8 { return uint8(min(max(v, 0), 255)) }
	for i := range y {
		yy := int32(y[i])
		dst[3*i] = clamp(yy + crR[cr[i]])
		dst[3*i+1] = clamp(yy + (cbG[cb[i]]+crG[cr[i]])>>16)
		dst[3*i+2] = clamp(yy + cbB[cb[i]])
	}
}
