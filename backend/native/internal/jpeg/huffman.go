package jpeg

import "fmt"

// huffTable is one decoding table built from a DHT segment (JPEG
// specification, annex C and F.2.2.3): a lookup on the next 8 bits for
// short codes and the per-length code ranges for the longer ones.
type huffTable struct {
	// fast[b] for the next 8 bits b: code length << 8 | symbol, or 0
	// when the code is longer than 8 bits.
	fast    [256]uint16
	maxcode [17]int32 // largest code of each length, -1 if none
	valptr  [17]int32 // index in vals of the first code of each length
	mincode [17]int32 // smallest code of each length
	vals    []uint8
	maxSym  uint8 // largest symbol, to check DC tables
}

// newHuffTable builds a table from the 16 code-length counts and the
// symbols. It fails where libjpeg does: more than 256 symbols, or code
// lengths that do not fit a prefix code without an all-ones code.
func newHuffTable(counts [16]uint8, vals []uint8) (*huffTable, error) {
	total := 0
	for _, c := range counts {
		total += int(c)
	}
	if total > 256 || total != len(vals) {
		return nil, fmt.Errorf("jpeg: a Huffman table with %d symbols", total)
	}
	t := &huffTable{vals: vals}
	for _, v := range vals {
		t.maxSym = max(t.maxSym, v)
	}
	code, k := int32(0), int32(0)
	for l := 1; l <= 16; l++ {
		n := int32(counts[l-1])
		// A code of all ones is reserved, so the codes of each length
		// must end below it.
		if code+n >= 1<<l {
			return nil, fmt.Errorf("jpeg: a Huffman table whose code lengths overflow")
		}
		t.valptr[l] = k
		t.mincode[l] = code
		if n == 0 {
			t.maxcode[l] = -1
		} else {
			t.maxcode[l] = code + n - 1
			if l <= 8 {
				for i := range n {
					c := code + i
					entry := uint16(l)<<8 | uint16(vals[k+i])
					lo := c << (8 - l)
					for j := range int32(1) << (8 - l) {
						t.fast[lo+j] = entry
					}
				}
			}
		}
		code += n
		k += n
		code <<= 1
	}
	return t, nil
}

// bitReader reads the entropy-coded bits of a scan: 0xFF 0x00 is a data
// byte 0xFF; 0xFF followed by anything else (after optional fill 0xFFs)
// is a marker, where the bits stop. Peeking past the end yields zero
// bits; consuming them is an error.
type bitReader struct {
	data []byte
	pos  int    // next byte to load
	acc  uint64 // the low n bits are the unread bits, oldest first
	n    int
	end  bool // a marker or the end of the data was reached
}

func (br *bitReader) fill() {
	for br.n <= 56 && !br.end {
		if br.pos >= len(br.data) {
			br.end = true
			return
		}
		b := br.data[br.pos]
		if b == 0xFF {
			p := br.pos + 1
			for p < len(br.data) && br.data[p] == 0xFF {
				p++
			}
			if p >= len(br.data) || br.data[p] != 0 {
				// A marker: leave pos on it for the marker parser.
				br.end = true
				return
			}
			br.pos = p + 1
		} else {
			br.pos++
		}
		br.acc = br.acc<<8 | uint64(b)
		br.n += 8
	}
}

var errShortData = fmt.Errorf("jpeg: the entropy-coded data ends early (truncated or corrupt file)")

// bits reads k (0 to 16) bits as an unsigned number.
func (br *bitReader) bits(k int) (int32, error) {
	if k == 0 {
		return 0, nil
	}
	if br.n < k {
		br.fill()
		if br.n < k {
			return 0, errShortData
		}
	}
	br.n -= k
	return int32(br.acc>>uint(br.n)) & (1<<k - 1), nil
}

func (br *bitReader) bit() (bool, error) {
	v, err := br.bits(1)
	return v != 0, err
}

// peek16 returns the next 16 bits, zero-padded past the end.
func (br *bitReader) peek16() uint32 {
	if br.n < 16 {
		br.fill()
		if br.n < 16 {
			return uint32(br.acc<<uint(16-br.n)) & 0xFFFF
		}
	}
	return uint32(br.acc>>uint(br.n-16)) & 0xFFFF
}

// decode reads one Huffman-coded symbol.
func (br *bitReader) decode(t *huffTable) (uint8, error) {
	p := br.peek16()
	if e := t.fast[p>>8]; e != 0 {
		l := int(e >> 8)
		if l > br.n {
			return 0, errShortData
		}
		br.n -= l
		return uint8(e), nil
	}
	for l := 9; l <= 16; l++ {
		code := int32(p >> uint(16-l))
		if code <= t.maxcode[l] {
			if l > br.n {
				return 0, errShortData
			}
			br.n -= l
			return t.vals[t.valptr[l]+code-t.mincode[l]], nil
		}
	}
	return 0, fmt.Errorf("jpeg: an invalid Huffman code (corrupt data)")
}

// receiveExtend reads an s-bit magnitude and gives it its sign (JPEG
// specification F.2.2.1: values below 2^(s-1) are negative).
func (br *bitReader) receiveExtend(s uint8) (int32, error) {
	if s == 0 {
		return 0, nil
	}
	if s > 16 {
		return 0, fmt.Errorf("jpeg: a coefficient of %d bits (corrupt data)", s)
	}
	v, err := br.bits(int(s))
	if err != nil {
		return 0, err
	}
	if v < 1<<(s-1) {
		v += -1<<s + 1
	}
	return v, nil
}

// reset drops the buffered bits (at a restart marker).
func (br *bitReader) reset() {
	br.acc, br.n, br.end = 0, 0, false
}

// Standard tables of the JPEG specification, annex K.3 (luminance and
// chrominance DC and AC), used for table slots 0 and 1 left undefined.
var (
	stdDCLumaCounts   = [16]uint8{0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}
	stdDCChromaCounts = [16]uint8{0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0}
	stdDCVals         = []uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	stdACLumaCounts   = [16]uint8{0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d}
	stdACLumaVals     = []uint8{
		0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
		0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0,
		0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28,
		0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
		0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
		0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
		0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
		0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5,
		0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2,
		0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
		0xf9, 0xfa,
	}
	stdACChromaCounts = [16]uint8{0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77}
	stdACChromaVals   = []uint8{
		0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71,
		0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0,
		0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26,
		0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,
		0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
		0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
		0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5,
		0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3,
		0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda,
		0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
		0xf9, 0xfa,
	}
)

// stdTable returns the annex K table for slot 0 (luminance) or 1
// (chrominance) of the DC (class 0) or AC (class 1) kind.
func stdTable(class, slot int) *huffTable {
	var t *huffTable
	switch {
	case class == 0 && slot == 0:
		t, _ = newHuffTable(stdDCLumaCounts, stdDCVals)
	case class == 0:
		t, _ = newHuffTable(stdDCChromaCounts, stdDCVals)
	case slot == 0:
		t, _ = newHuffTable(stdACLumaCounts, stdACLumaVals)
	default:
		t, _ = newHuffTable(stdACChromaCounts, stdACChromaVals)
	}
	return t
}
