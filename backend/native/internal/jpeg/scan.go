package jpeg

import (
	"errors"
	"fmt"
)

// scan is the header of one scan (SOS).
type scan struct {
	comps  []*component
	dc, ac []*huffTable // per scan component
	ss, se int          // spectral selection
	ah, al int          // successive approximation
}

func (d *decoder) readScan() error {
	if !d.sawSOF {
		return errors.New("jpeg: a scan before the frame header")
	}
	p, err := d.segment("SOS")
	if err != nil {
		return err
	}
	if len(p) < 1 {
		return errors.New("jpeg: a short scan header")
	}
	n := int(p[0])
	if n < 1 || n > 4 || len(p) != 4+2*n {
		return fmt.Errorf("jpeg: a scan header of %d bytes for %d components", len(p), n)
	}
	s := &scan{ss: int(p[1+2*n]), se: int(p[2+2*n]), ah: int(p[3+2*n] >> 4), al: int(p[3+2*n] & 15)}
	blocks := 0
	for i := range n {
		id := p[1+2*i]
		var c *component
		for j := range d.comps {
			if d.comps[j].id == id {
				c = &d.comps[j]
			}
		}
		if c == nil {
			return fmt.Errorf("jpeg: a scan of component %d, which the frame does not have", id)
		}
		for _, o := range s.comps {
			if o == c {
				return fmt.Errorf("jpeg: component %d twice in a scan", id)
			}
		}
		s.comps = append(s.comps, c)
		blocks += c.h * c.v
		td, ta := int(p[2+2*i]>>4), int(p[2+2*i]&15)
		s.dc, s.ac = append(s.dc, d.table(0, td)), append(s.ac, d.table(1, ta))
	}
	if n > 1 && blocks > 10 {
		return fmt.Errorf("jpeg: %d blocks in an MCU (at most 10)", blocks)
	}
	needDC, needAC := true, true
	if d.progressive {
		bad := false
		if s.ss == 0 {
			bad = s.se != 0
		} else {
			bad = s.ss > s.se || s.se > 63 || n != 1
		}
		if s.ah != 0 && s.al != s.ah-1 || s.al > 13 {
			bad = true
		}
		if bad {
			return fmt.Errorf("jpeg: an invalid progressive scan (Ss %d, Se %d, Ah %d, Al %d)", s.ss, s.se, s.ah, s.al)
		}
		needDC = s.ss == 0 && s.ah == 0
		needAC = s.ss > 0
		for _, c := range s.comps {
			for k := s.ss; k <= s.se; k++ {
				c.coefBits[k] = s.al
			}
		}
	}
	for i, c := range s.comps {
		if needDC {
			if s.dc[i] == nil {
				return errors.New("jpeg: a scan uses an undefined DC Huffman table")
			}
			if s.dc[i].maxSym > 15 {
				return errors.New("jpeg: a DC Huffman table with symbols above 15")
			}
		}
		if needAC && s.ac[i] == nil {
			return errors.New("jpeg: a scan uses an undefined AC Huffman table")
		}
		// libjpeg keeps the table a component had at its first scan.
		if c.q == nil {
			if d.qt[c.tq] == nil {
				return fmt.Errorf("jpeg: quantisation table %d is not defined", c.tq)
			}
			q := *d.qt[c.tq]
			c.q = &q
		}
	}
	d.scans++
	return d.decodeScan(s)
}

// table returns a Huffman table slot (nil if undefined: an error only if
// the scan uses it). In sequential files, slots 0 and 1 never defined get
// the standard tables, as in libjpeg-turbo (not in progressive ones).
func (d *decoder) table(class, slot int) *huffTable {
	if slot > 3 {
		return nil
	}
	if d.huff[class][slot] == nil && slot < 2 && !d.progressive {
		d.huff[class][slot] = stdTable(class, slot)
	}
	return d.huff[class][slot]
}

// decodeScan decodes the entropy-coded data of a scan into the
// components' coefficients.
func (d *decoder) decodeScan(s *scan) error {
	br := &bitReader{data: d.data, pos: d.pos}
	var mcus, mx int // MCUs in the scan, MCUs per row
	if len(s.comps) == 1 {
		c := s.comps[0]
		mx, mcus = c.bw, c.bw*c.bh
	} else {
		mx, mcus = d.mcusX, d.mcusX*d.mcusY
	}
	for _, c := range s.comps {
		c.dcPred = 0
	}
	d.eobrun = 0
	rst := 0
	for m := range mcus {
		if d.restart > 0 && m > 0 && m%d.restart == 0 {
			if err := d.restartMarker(br, rst); err != nil {
				return err
			}
			rst = (rst + 1) & 7
			for _, c := range s.comps {
				c.dcPred = 0
			}
			d.eobrun = 0
		}
		my, mxi := m/mx, m%mx
		for i, c := range s.comps {
			if len(s.comps) == 1 {
				if err := d.decodeBlock(br, s, i, c.block(my, mxi)); err != nil {
					return err
				}
				continue
			}
			for y := range c.v {
				for x := range c.h {
					if err := d.decodeBlock(br, s, i, c.block(my*c.v+y, mxi*c.h+x)); err != nil {
						return err
					}
				}
			}
		}
	}
	d.pos = br.pos
	return nil
}

// block returns the coefficients of block (by, bx) of the component.
func (c *component) block(by, bx int) []int16 {
	i := (by*c.stride + bx) * 64
	return c.coef[i : i+64 : i+64]
}

// restartMarker checks for the restart marker RSTn expected after an
// interval and moves past it.
func (d *decoder) restartMarker(br *bitReader, n int) error {
	d.pos = br.pos
	m, err := d.nextMarker()
	if err != nil {
		return err
	}
	if m != mRST0+n {
		return fmt.Errorf("jpeg: marker 0x%02X where restart marker %d was expected (corrupt data)", m, n)
	}
	br.pos = d.pos
	br.reset()
	return nil
}

// decodeBlock decodes the part of one block's coefficients that the scan
// carries.
func (d *decoder) decodeBlock(br *bitReader, s *scan, i int, b []int16) error {
	c := s.comps[i]
	if !d.progressive {
		return d.decodeSequential(br, s.dc[i], s.ac[i], c, b)
	}
	switch {
	case s.ss == 0 && s.ah == 0: // DC, first pass
		t, err := br.decode(s.dc[i])
		if err != nil {
			return err
		}
		diff, err := br.receiveExtend(t)
		if err != nil {
			return err
		}
		if err := addDC(c, diff); err != nil {
			return err
		}
		b[0] = int16(c.dcPred << uint(s.al))
	case s.ss == 0: // DC, refinement: one more bit
		bit, err := br.bit()
		if err != nil {
			return err
		}
		if bit {
			b[0] |= 1 << uint(s.al)
		}
	case s.ah == 0:
		return d.decodeACFirst(br, s, s.ac[i], b)
	default:
		return d.decodeACRefine(br, s, s.ac[i], b)
	}
	return nil
}

// addDC adds a DC difference to the component's predictor; libjpeg
// refuses a sum that overflows its int.
func addDC(c *component, diff int32) error {
	v := int64(c.dcPred) + int64(diff)
	if v != int64(int32(v)) {
		return errors.New("jpeg: a DC coefficient overflows (corrupt data)")
	}
	c.dcPred = int32(v)
	return nil
}

// decodeSequential decodes a whole block of a sequential scan (JPEG
// specification F.2.2).
func (d *decoder) decodeSequential(br *bitReader, dc, ac *huffTable, c *component, b []int16) error {
	t, err := br.decode(dc)
	if err != nil {
		return err
	}
	diff, err := br.receiveExtend(t)
	if err != nil {
		return err
	}
	if err := addDC(c, diff); err != nil {
		return err
	}
	b[0] = int16(c.dcPred)
	for k := 1; k < 64; k++ {
		rs, err := br.decode(ac)
		if err != nil {
			return err
		}
		r, sz := int(rs>>4), rs&15
		if sz == 0 {
			if r != 15 {
				break // end of block
			}
			k += 15
			continue
		}
		k += r
		v, err := br.receiveExtend(sz)
		if err != nil {
			return err
		}
		b[zigzag[k]] = int16(v)
	}
	return nil
}

// decodeACFirst decodes the first pass of a band of AC coefficients
// (JPEG specification G.1.2.2), with end-of-band runs.
func (d *decoder) decodeACFirst(br *bitReader, s *scan, ac *huffTable, b []int16) error {
	if d.eobrun > 0 {
		d.eobrun--
		return nil
	}
	for k := s.ss; k <= s.se; k++ {
		rs, err := br.decode(ac)
		if err != nil {
			return err
		}
		r, sz := int(rs>>4), rs&15
		if sz != 0 {
			k += r
			v, err := br.receiveExtend(sz)
			if err != nil {
				return err
			}
			b[zigzag[k]] = int16(v << uint(s.al))
			continue
		}
		if r == 15 {
			k += 15
			continue
		}
		run, err := br.bits(r)
		if err != nil {
			return err
		}
		d.eobrun = 1<<r + run - 1
		break
	}
	return nil
}

// decodeACRefine decodes a refinement pass of a band of AC coefficients
// (JPEG specification G.1.2.3): one more bit of every coefficient already
// nonzero, and newly nonzero coefficients of magnitude 1 << Al.
func (d *decoder) decodeACRefine(br *bitReader, s *scan, ac *huffTable, b []int16) error {
	p1, m1 := int16(1)<<uint(s.al), int16(-1)<<uint(s.al)
	refine := func(z int) error {
		bit, err := br.bit()
		if err != nil {
			return err
		}
		if bit && b[z]&p1 == 0 {
			if b[z] >= 0 {
				b[z] += p1
			} else {
				b[z] += m1
			}
		}
		return nil
	}
	k := s.ss
	if d.eobrun == 0 {
		for ; k <= s.se; k++ {
			rs, err := br.decode(ac)
			if err != nil {
				return err
			}
			r, sz := int(rs>>4), rs&15
			var v int16
			if sz != 0 {
				// Only magnitude 1 is valid; libjpeg takes any size as 1.
				bit, err := br.bit()
				if err != nil {
					return err
				}
				v = m1
				if bit {
					v = p1
				}
			} else if r != 15 {
				run, err := br.bits(r)
				if err != nil {
					return err
				}
				d.eobrun = 1<<r + run
				break
			}
			// Skip r zero coefficients (refining the nonzero ones on
			// the way) and stop on the next zero one.
			for ; k <= s.se; k++ {
				z := zigzag[k]
				if b[z] != 0 {
					if err := refine(z); err != nil {
						return err
					}
					continue
				}
				r--
				if r < 0 {
					break
				}
			}
			if v != 0 {
				b[zigzag[k]] = v
			}
		}
	}
	if d.eobrun > 0 {
		// The rest of the band is in an end-of-band run: refine only.
		for ; k <= s.se; k++ {
			if z := zigzag[k]; b[z] != 0 {
				if err := refine(z); err != nil {
					return err
				}
			}
		}
		d.eobrun--
	}
	return nil
}
