package jpeg

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// segment is one marker segment of a file: the marker byte and its
// payload (without the length); a scan's entropy-coded data follows its
// SOS segment in data.
type segment struct {
	marker byte
	body   []byte
	data   []byte
}

// splitSegments cuts a well-formed JPEG (one without restart markers)
// into segments after SOI.
func splitSegments(t *testing.T, file []byte) []segment {
	t.Helper()
	var segs []segment
	p := 2
	for p+1 < len(file) {
		if file[p] != 0xFF {
			t.Fatalf("no marker at %d", p)
		}
		m := file[p+1]
		if m == mEOI {
			segs = append(segs, segment{marker: m})
			return segs
		}
		n := int(file[p+2])<<8 | int(file[p+3])
		s := segment{marker: m, body: file[p+4 : p+2+n]}
		p += 2 + n
		if m == mSOS {
			q := p
			for !(file[q] == 0xFF && file[q+1] != 0 && (file[q+1] < mRST0 || file[q+1] > mRST7)) {
				q++
			}
			s.data = file[p:q]
			p = q
		}
		segs = append(segs, s)
	}
	t.Fatal("no end-of-image marker")
	return nil
}

func joinSegments(segs []segment) []byte {
	out := []byte{0xFF, mSOI}
	for _, s := range segs {
		out = append(out, 0xFF, s.marker)
		if s.marker == mEOI {
			continue
		}
		n := len(s.body) + 2
		out = append(out, byte(n>>8), byte(n))
		out = append(out, s.body...)
		out = append(out, s.data...)
	}
	return out
}

// edit returns the file with fn applied to a copy of its segments.
func edit(t *testing.T, file []byte, fn func([]segment) []segment) []byte {
	segs := splitSegments(t, file)
	cp := make([]segment, len(segs))
	for i, s := range segs {
		cp[i] = segment{s.marker, bytes.Clone(s.body), bytes.Clone(s.data)}
	}
	return joinSegments(fn(cp))
}

func find(segs []segment, m byte) *segment {
	for i := range segs {
		if segs[i].marker == m {
			return &segs[i]
		}
	}
	return nil
}

func TestDecodeSegmentsRoundTrip(t *testing.T) {
	file := readTestdata(t, "q75-420-37x29.jpg")
	if got := edit(t, file, func(s []segment) []segment { return s }); !bytes.Equal(got, file) {
		t.Fatal("splitSegments/joinSegments do not round-trip")
	}
}

// Each malformed file is refused with an error saying what is wrong
// (never a panic); the valid-but-unsupported ones wrap ErrUnsupported.
func TestDecodeErrors(t *testing.T) {
	base := readTestdata(t, "q75-420-37x29.jpg")
	sof := func(fn func(b []byte)) []byte {
		return edit(t, base, func(s []segment) []segment { fn(find(s, mSOF0).body); return s })
	}
	sos := func(fn func(b []byte)) []byte {
		return edit(t, base, func(s []segment) []segment { fn(find(s, mSOS).body); return s })
	}
	without := func(m byte) []byte {
		return edit(t, base, func(s []segment) []segment {
			var out []segment
			for _, x := range s {
				if x.marker != m {
					out = append(out, x)
				}
			}
			return out
		})
	}
	setMarker := func(from, to byte) []byte {
		return edit(t, base, func(s []segment) []segment { find(s, from).marker = to; return s })
	}
	cases := []struct {
		name        string
		data        []byte
		unsupported bool
		msg         string
	}{
		{"empty", nil, false, "not a JPEG"},
		{"png", []byte("\x89PNG\r\n\x1a\n"), false, "not a JPEG"},
		{"SOI only", []byte{0xFF, 0xD8}, false, "ends before"},
		{"no EOI", base[:len(base)-2], false, "ends before"},
		{"cut in the scan", base[:len(base)-100], false, "ends early"},
		{"no frame", without(mSOF0), false, "before the frame"},
		{"no quantisation tables", without(mDQT), false, "quantisation table"},
		{"two frames", edit(t, base, func(s []segment) []segment {
			return append([]segment{*find(s, mSOF0)}, s...)
		}), false, "second frame"},
		{"12-bit", sof(func(b []byte) { b[0] = 12 }), true, "12-bit"},
		{"zero height", sof(func(b []byte) { b[1], b[2] = 0, 0 }), false, "empty"},
		{"sampling 0x1", sof(func(b []byte) { b[7] = 0x01 }), false, "sampling factors"},
		{"sampling 5x1", sof(func(b []byte) { b[7] = 0x51 }), false, "sampling factors"},
		{"sampling 3 against 2", sof(func(b []byte) { b[7] = 0x32; b[10] = 0x21 }), true, "integral"},
		{"too large", sof(func(b []byte) { b[1], b[2], b[3], b[4] = 0xFF, 0xFF, 0xFF, 0xFF }), false, "larger than libjpeg"},
		{"too many pixels", sof(func(b []byte) { b[1], b[2], b[3], b[4] = 0x10, 0x00, 0x10, 0x00 }), false, "too large"},
		{"duplicate component", sof(func(b []byte) { b[9] = b[6] }), false, "two components"},
		{"arithmetic", setMarker(mSOF0, 0xC9), true, "arithmetic"},
		{"lossless", setMarker(mSOF0, 0xC3), true, "lossless"},
		{"unknown scan component", sos(func(b []byte) { b[1] = 9 }), false, "does not have"},
		{"undefined Huffman table", sos(func(b []byte) { b[2] = 0x22 }), false, "undefined DC Huffman"},
		{"bad Huffman data", edit(t, base, func(s []segment) []segment {
			// All ones: no code of the DC table is 9 ones.
			sc := find(s, mSOS)
			sc.data = append(bytes.Repeat([]byte{0xFF, 0x00}, 4), sc.data...)
			return s
		}), false, "invalid Huffman code"},
		{"restart marker missing", edit(t, base, func(s []segment) []segment {
			return append([]segment{{marker: mDRI, body: []byte{0, 1}}}, s...)
		}), false, "restart marker"},
	}
	for _, c := range cases {
		img, err := Decode(c.data, 1<<20)
		switch {
		case err == nil:
			t.Errorf("%s: decoded a %dx%d image, want an error", c.name, img.Width, img.Height)
		case errors.Is(err, ErrUnsupported) != c.unsupported:
			t.Errorf("%s: %v (unsupported: %v, want %v)", c.name, err, errors.Is(err, ErrUnsupported), c.unsupported)
		case !strings.Contains(err.Error(), c.msg):
			t.Errorf("%s: %q does not say %q", c.name, err, c.msg)
		}
	}
}

// Every prefix of a file is an error (the end-of-image marker is
// missing), and no prefix or single-byte change makes the decoder panic.
func TestDecodeTruncatedAndCorrupt(t *testing.T) {
	for _, name := range []string{"q75-420-37x29.jpg", "prog-q90-444-restart-29x19.jpg", "q60-422-restart-50x9.jpg"} {
		file := readTestdata(t, name)
		for n := range len(file) - 1 {
			if _, err := Decode(file[:n], 1<<20); err == nil {
				t.Fatalf("%s cut to %d bytes: no error", name, n)
			}
		}
		for i := range file {
			for _, x := range []byte{0x01, 0x80, 0xFF} {
				b := bytes.Clone(file)
				b[i] ^= x
				img, err := Decode(b, 1<<20)
				if err == nil && len(img.Pix) != img.Width*img.Height*img.Channels {
					t.Fatalf("%s byte %d ^ %#x: %d samples for %dx%dx%d", name, i, x, len(img.Pix), img.Width, img.Height, img.Channels)
				}
			}
		}
	}
}

// A JPEG without Huffman tables (as Motion-JPEG frames are written) uses
// the standard ones; this file was encoded with them, so removing its DHT
// segments changes nothing.
func TestDecodeDefaultHuffmanTables(t *testing.T) {
	file := readTestdata(t, "q75-420-37x29.jpg")
	want, err := Decode(file, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	stripped := edit(t, file, func(s []segment) []segment {
		var out []segment
		for _, x := range s {
			if x.marker != mDHT {
				out = append(out, x)
			}
		}
		return out
	})
	got, err := Decode(stripped, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Pix, want.Pix) {
		t.Error("pixels differ without the DHT segments")
	}
}

func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jpg")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil && len(data) < 1200 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := Decode(data, 1<<16)
		if err == nil && len(img.Pix) != img.Width*img.Height*img.Channels {
			t.Fatalf("%d samples for %dx%dx%d", len(img.Pix), img.Width, img.Height, img.Channels)
		}
	})
}
