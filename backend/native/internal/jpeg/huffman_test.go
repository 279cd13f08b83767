package jpeg

import (
	"errors"
	"strings"
	"testing"
)

// packBits turns a string of '0'/'1' (spaces ignored) into bytes, padding
// the last byte with 1 bits as encoders do, and stuffing a 0 after each
// 0xFF.
func packBits(s string) []byte {
	s = strings.ReplaceAll(s, " ", "")
	for len(s)%8 != 0 {
		s += "1"
	}
	var out []byte
	for i := 0; i < len(s); i += 8 {
		var b byte
		for _, c := range s[i : i+8] {
			b = b<<1 | byte(c-'0')
		}
		out = append(out, b)
		if b == 0xFF {
			out = append(out, 0)
		}
	}
	return out
}

// The standard luminance tables (JPEG specification, tables K.3 and K.5)
// decode their documented codes, short (table lookup) and long (per-length
// search) alike.
func TestHuffmanStandardCodes(t *testing.T) {
	dc := stdTable(0, 0)
	ac := stdTable(1, 0)
	steps := []struct {
		t    *huffTable
		code string
		sym  uint8
	}{
		{dc, "00", 0}, {dc, "010", 1}, {dc, "110", 5}, {dc, "1110", 6},
		{dc, "111111110", 11}, // 9 bits: past the 8-bit lookup
		{ac, "1010", 0x00},    // end of block
		{ac, "00", 0x01}, {ac, "100", 0x03},
		{ac, "11111111001", 0xF0},      // zero run of 16
		{ac, "1111111111111110", 0xFA}, // the longest code, 16 bits
		{ac, "111111111000000", 0x82},  // run 8, size 2: the only 15-bit code
		{ac, "1111111110000010", 0x09}, // run 0, size 9
	}
	var bits string
	for _, s := range steps {
		bits += s.code
	}
	br := &bitReader{data: packBits(bits)}
	for i, s := range steps {
		got, err := br.decode(s.t)
		if err != nil || got != s.sym {
			t.Fatalf("step %d (%s): got %#x %v, want %#x", i, s.code, got, err, s.sym)
		}
	}
}

func TestHuffmanTableErrors(t *testing.T) {
	var three [16]uint8
	three[0] = 3 // three 1-bit codes
	var two [16]uint8
	two[0] = 2 // codes 0 and 1: the all-ones code is reserved
	var many [16]uint8
	many[15] = 255
	many[14] = 2
	for name, c := range map[string]struct {
		counts [16]uint8
		n      int
	}{"three 1-bit codes": {three, 3}, "all-ones code": {two, 2}, "257 symbols": {many, 257}} {
		if _, err := newHuffTable(c.counts, make([]uint8, c.n)); err == nil {
			t.Errorf("%s: expected an error", name)
		}
	}
	var ok [16]uint8
	ok[0], ok[1] = 1, 2 // codes 0, 10 and 11: 11 is all ones
	if _, err := newHuffTable(ok, make([]uint8, 3)); err == nil {
		t.Error("code 11 of length 2: expected an error")
	}
	ok[1] = 1
	if _, err := newHuffTable(ok, make([]uint8, 2)); err != nil {
		t.Errorf("codes 0 and 10: %v", err)
	}
}

// The bit reader unstuffs 0xFF 0x00 (also after fill 0xFFs), stops at a
// marker, pads with zeros when peeking past the data and refuses to
// consume the padding.
func TestBitReader(t *testing.T) {
	br := &bitReader{data: []byte{0xFF, 0x00, 0xA5, 0xFF, 0xFF, 0x00, 0xFF, 0xD9}}
	for i, want := range []int32{0xFF, 0xA5, 0xFF} {
		if v, err := br.bits(8); err != nil || v != want {
			t.Fatalf("byte %d: got %#x %v, want %#x", i, v, err, want)
		}
	}
	if p := br.peek16(); p != 0 {
		t.Errorf("peek past a marker: %#x, want 0", p)
	}
	if _, err := br.bits(1); !errors.Is(err, errShortData) {
		t.Errorf("reading past a marker: %v", err)
	}
	if br.pos != 6 {
		t.Errorf("reader stopped at %d, want 6 (the marker)", br.pos)
	}
	// Sign extension of s-bit magnitudes (F.2.2.1): 000 is -7, 011 is
	// -4, 100 is 4, 111 is 7.
	br = &bitReader{data: packBits("000 011 100 111 0 1")}
	for _, c := range []struct {
		s    uint8
		want int32
	}{{3, -7}, {3, -4}, {3, 4}, {3, 7}, {1, -1}, {1, 1}} {
		if v, err := br.receiveExtend(c.s); err != nil || v != c.want {
			t.Errorf("extend %d bits: got %d %v, want %d", c.s, v, err, c.want)
		}
	}
}

// A sequential block: DC difference +5 (category 3, bits 101), AC +1 at
// zigzag index 1, a zero run of 16, -2 (category 2) after 2 more zeros
// (index 20), end of block.
func TestDecodeSequentialBlock(t *testing.T) {
	dc, ac := stdTable(0, 0), stdTable(1, 0)
	// DC cat 3 = "100", +5 = "101"; AC (0,1) = "00" + "1"; ZRL =
	// "11111111001"; (2,2) = "11111001" + "01" (-2); EOB "1010".
	data := packBits("100 101  00 1  11111111001  11111001 01  1010")
	br := &bitReader{data: data}
	d := &decoder{}
	c := &component{dcPred: 10}
	b := make([]int16, 64)
	if err := d.decodeSequential(br, dc, ac, c, b); err != nil {
		t.Fatal(err)
	}
	want := make([]int16, 64)
	want[0] = 15
	want[zigzag[1]] = 1
	want[zigzag[1+16+2+1]] = -2
	for i := range want {
		if b[i] != want[i] {
			t.Fatalf("coefficient %d: got %d, want %d (block %v)", i, b[i], want[i], b)
		}
	}
}
