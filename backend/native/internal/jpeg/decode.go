package jpeg

import (
	"errors"
	"fmt"
)

// ErrUnsupported is wrapped by the errors for valid JPEG files this
// package does not decode exactly (see the package documentation).
var ErrUnsupported = errors.New("jpeg: unsupported")

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnsupported}, args...)...)
}

// Image is a decoded image: Channels is 1 (gray) or 3 (RGB), and Pix
// holds Height rows of Width pixels of Channels samples each.
type Image struct {
	Width, Height, Channels int
	Pix                     []uint8
}

// Marker codes (JPEG specification, table B.1).
const (
	mSOF0 = 0xC0
	mSOF1 = 0xC1
	mSOF2 = 0xC2
	mDHT  = 0xC4
	mDAC  = 0xCC
	mRST0 = 0xD0
	mRST7 = 0xD7
	mSOI  = 0xD8
	mEOI  = 0xD9
	mSOS  = 0xDA
	mDQT  = 0xDB
	mDRI  = 0xDD
	mAPP0 = 0xE0
	mAPPE = 0xEE
	mTEM  = 0x01
)

// maxDimension is libjpeg's JPEG_MAX_DIMENSION.
const maxDimension = 65500

// component is one colour component of the frame.
type component struct {
	id     uint8
	h, v   int // sampling factors
	tq     int // quantisation table slot
	q      *[64]uint16
	w, hgt int // samples in the component: ceil(image size * factor / max factor)
	bw, bh int // blocks covering w x hgt
	stride int // blocks per row of coef (MCU-padded)
	rows   int // block rows of coef (MCU-padded)
	coef   []int16
	// coefBits[k] is the point-transform shift Al of the latest
	// progressive scan that carried coefficient k, -1 before any.
	coefBits [64]int
	dcPred   int32
}

type decoder struct {
	data      []byte
	pos       int
	maxPixels int64

	sawSOF         bool
	progressive    bool
	width, height  int
	comps          []component
	hmax, vmax     int
	mcusX, mcusY   int
	qt             [4]*[64]uint16
	huff           [2][4]*huffTable // [class: 0 DC, 1 AC][slot]
	restart        int
	jfif, adobe    bool
	adobeTransform uint8
	scans          int
	eobrun         int32
}

// Decode decodes a JPEG file to libjpeg's pixels. It refuses images of
// more than maxPixels pixels before allocating them.
func Decode(data []byte, maxPixels int64) (*Image, error) {
	d := &decoder{data: data, maxPixels: maxPixels}
	if err := d.run(); err != nil {
		return nil, err
	}
	return d.output()
}

var errTruncated = errors.New("jpeg: the file ends before its end-of-image marker")

// u8 and u16 read big-endian numbers at the cursor.
func (d *decoder) u8() (int, error) {
	if d.pos >= len(d.data) {
		return 0, errTruncated
	}
	d.pos++
	return int(d.data[d.pos-1]), nil
}

func (d *decoder) u16() (int, error) {
	if d.pos+2 > len(d.data) {
		return 0, errTruncated
	}
	d.pos += 2
	return int(d.data[d.pos-2])<<8 | int(d.data[d.pos-1]), nil
}

// nextMarker skips to the next marker, as libjpeg does: bytes before an
// 0xFF are ignored, and so are fill 0xFFs.
func (d *decoder) nextMarker() (int, error) {
	for {
		for d.pos < len(d.data) && d.data[d.pos] != 0xFF {
			d.pos++
		}
		for d.pos < len(d.data) && d.data[d.pos] == 0xFF {
			d.pos++
		}
		if d.pos >= len(d.data) {
			return 0, errTruncated
		}
		m := int(d.data[d.pos])
		d.pos++
		if m != 0 { // 0xFF 0x00 is a stuffed byte, not a marker
			return m, nil
		}
	}
}

// segment returns the payload of a marker segment (after its length).
func (d *decoder) segment(name string) ([]byte, error) {
	n, err := d.u16()
	if err != nil {
		return nil, err
	}
	if n < 2 || d.pos+n-2 > len(d.data) {
		return nil, fmt.Errorf("jpeg: a %s segment of length %d does not fit the file", name, n)
	}
	p := d.data[d.pos : d.pos+n-2]
	d.pos += n - 2
	return p, nil
}

func (d *decoder) run() error {
	if len(d.data) < 2 || d.data[0] != 0xFF || d.data[1] != mSOI {
		return errors.New("jpeg: not a JPEG file (no start-of-image marker)")
	}
	d.pos = 2
	for {
		m, err := d.nextMarker()
		if err != nil {
			return err
		}
		switch {
		case m == mSOF0 || m == mSOF1 || m == mSOF2:
			err = d.readSOF(m == mSOF2)
		case m >= 0xC3 && m <= 0xCF && m != mDHT && m != mDAC && m != 0xC8:
			return unsupportedf("JPEG frame type 0x%02X (lossless, hierarchical or arithmetic-coded)", m)
		case m == mDHT:
			err = d.readDHT()
		case m == mDQT:
			err = d.readDQT()
		case m == mDRI:
			err = d.readDRI()
		case m == mSOS:
			err = d.readScan()
		case m == mEOI:
			if d.scans == 0 {
				return errors.New("jpeg: the file has no scan")
			}
			return nil
		case m == mSOI:
			return errors.New("jpeg: a second start-of-image marker")
		case m >= mRST0 && m <= mRST7 || m == mTEM:
			// Standalone markers without a length: nothing to skip.
		case m == mAPP0 || m == mAPPE:
			var p []byte
			if p, err = d.segment("APP"); err == nil {
				d.readApp(m, p)
			}
		default:
			_, err = d.segment(fmt.Sprintf("0x%02X", m))
		}
		if err != nil {
			return err
		}
	}
}

// readApp notes the JFIF and Adobe markers that libjpeg uses to guess the
// colour space.
func (d *decoder) readApp(m int, p []byte) {
	switch {
	case m == mAPP0 && len(p) >= 14 && string(p[:5]) == "JFIF\x00":
		d.jfif = true
	case m == mAPPE && len(p) >= 12 && string(p[:5]) == "Adobe":
		d.adobe = true
		d.adobeTransform = p[11]
	}
}

func (d *decoder) readSOF(progressive bool) error {
	if d.sawSOF {
		return errors.New("jpeg: a second frame header")
	}
	d.sawSOF = true
	d.progressive = progressive
	p, err := d.segment("SOF")
	if err != nil {
		return err
	}
	if len(p) < 6 {
		return errors.New("jpeg: a short frame header")
	}
	if p[0] != 8 {
		return unsupportedf("%d-bit samples", p[0])
	}
	d.height = int(p[1])<<8 | int(p[2])
	d.width = int(p[3])<<8 | int(p[4])
	n := int(p[5])
	if len(p) != 6+3*n {
		return fmt.Errorf("jpeg: a frame header of %d bytes for %d components", len(p), n)
	}
	if d.width == 0 || d.height == 0 || n == 0 {
		return fmt.Errorf("jpeg: an empty %dx%d image with %d components (DNL markers are not supported)", d.width, d.height, n)
	}
	if d.width > maxDimension || d.height > maxDimension {
		return fmt.Errorf("jpeg: a %dx%d image is larger than libjpeg allows", d.width, d.height)
	}
	if n != 1 && n != 3 {
		return unsupportedf("%d colour components", n)
	}
	if int64(d.width)*int64(d.height) > d.maxPixels {
		return fmt.Errorf("jpeg: a %dx%d image is too large", d.width, d.height)
	}
	d.comps = make([]component, n)
	for i := range d.comps {
		c := &d.comps[i]
		c.id = p[6+3*i]
		c.h, c.v = int(p[7+3*i]>>4), int(p[7+3*i]&15)
		c.tq = int(p[8+3*i])
		if c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 {
			return fmt.Errorf("jpeg: sampling factors %dx%d", c.h, c.v)
		}
		if c.tq > 3 {
			return fmt.Errorf("jpeg: quantisation table %d", c.tq)
		}
		for j := range i {
			if d.comps[j].id == c.id {
				return fmt.Errorf("jpeg: two components with id %d", c.id)
			}
		}
		d.hmax, d.vmax = max(d.hmax, c.h), max(d.vmax, c.v)
	}
	d.mcusX = ceilDiv(d.width, 8*d.hmax)
	d.mcusY = ceilDiv(d.height, 8*d.vmax)
	for i := range d.comps {
		c := &d.comps[i]
		c.w = ceilDiv(d.width*c.h, d.hmax)
		c.hgt = ceilDiv(d.height*c.v, d.vmax)
		c.bw, c.bh = ceilDiv(c.w, 8), ceilDiv(c.hgt, 8)
		c.stride, c.rows = d.mcusX*c.h, d.mcusY*c.v
		c.coef = make([]int16, c.stride*c.rows*64)
		for k := range c.coefBits {
			c.coefBits[k] = -1
		}
	}
	return nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func (d *decoder) readDQT() error {
	p, err := d.segment("DQT")
	if err != nil {
		return err
	}
	for len(p) > 0 {
		pq, tq := p[0]>>4, int(p[0]&15)
		if tq > 3 || pq > 1 {
			return fmt.Errorf("jpeg: quantisation table %d of precision %d", tq, pq)
		}
		size := 64 << pq
		if len(p) < 1+size {
			return errors.New("jpeg: a short quantisation table")
		}
		t := new([64]uint16)
		for k := range 64 {
			v := uint16(p[1+k])
			if pq == 1 {
				v = uint16(p[1+2*k])<<8 | uint16(p[2+2*k])
			}
			t[zigzag[k]] = v
		}
		d.qt[tq] = t
		p = p[1+size:]
	}
	return nil
}

func (d *decoder) readDHT() error {
	p, err := d.segment("DHT")
	if err != nil {
		return err
	}
	for len(p) > 0 {
		if len(p) < 17 {
			return errors.New("jpeg: a short Huffman table")
		}
		class, slot := int(p[0]>>4), int(p[0]&15)
		if class > 1 || slot > 3 {
			return fmt.Errorf("jpeg: Huffman table class %d slot %d", class, slot)
		}
		var counts [16]uint8
		copy(counts[:], p[1:17])
		n := 0
		for _, c := range counts {
			n += int(c)
		}
		if len(p) < 17+n {
			return errors.New("jpeg: a short Huffman table")
		}
		t, err := newHuffTable(counts, append([]uint8(nil), p[17:17+n]...))
		if err != nil {
			return err
		}
		d.huff[class][slot] = t
		p = p[17+n:]
	}
	return nil
}

func (d *decoder) readDRI() error {
	p, err := d.segment("DRI")
	if err != nil {
		return err
	}
	if len(p) != 2 {
		return errors.New("jpeg: a restart-interval segment of the wrong length")
	}
	d.restart = int(p[0])<<8 | int(p[1])
	return nil
}

// zigzag[k] is the position in the 8x8 block (row-major) of the k-th
// coefficient in coding order. The 16 entries past 63 repeat 63, as
// libjpeg's table does, so that corrupt run lengths land on the last
// coefficient instead of outside the block.
var zigzag = [64 + 16]int{
	0, 1, 8, 16, 9, 2, 3, 10,
	17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34,
	27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36,
	29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46,
	53, 60, 61, 54, 47, 55, 62, 63,
	63, 63, 63, 63, 63, 63, 63, 63,
	63, 63, 63, 63, 63, 63, 63, 63,
}
