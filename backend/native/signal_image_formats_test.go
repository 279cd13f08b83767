package native

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"image/png"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// imgData decodes a gzip+base64 constant of signal_image_data_test.go.
func imgData(t *testing.T, s string) []byte {
	t.Helper()
	z, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// imgDecode runs ImageDecoder on data.
func imgDecode(t *testing.T, data []byte, format string) (*onnx.Tensor, error) {
	t.Helper()
	out, err := runOp(t, "", 20, "ImageDecoder", []*onnx.Attribute{stringAttr("pixel_format", format)}, 1, onnx.FromSlice(data, len(data)))
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// imgGray is Pillow's "L" conversion of RGB pixels.
func imgGray(rgb []uint8) []uint8 {
	g := make([]uint8, len(rgb)/3)
	for i := range g {
		r, gr, b := uint32(rgb[3*i]), uint32(rgb[3*i+1]), uint32(rgb[3*i+2])
		g[i] = uint8((r*19595 + gr*38470 + b*7471 + 0x8000) >> 16)
	}
	return g
}

func imgBGR(rgb []uint8) []uint8 {
	out := slices.Clone(rgb)
	for p := 0; p < len(out); p += 3 {
		out[p], out[p+2] = out[p+2], out[p]
	}
	return out
}

func TestImageDecoderLosslessFormats(t *testing.T) {
	want := imgData(t, imgCheckerboard)
	for _, c := range []struct{ name, data string }{
		{"bmp", imgBMP}, {"png", imgPNG}, {"tiff", imgTIFF}, {"pnm", imgPNM},
	} {
		in := imgData(t, c.data)
		for _, f := range []struct {
			format string
			want   []uint8
			c      int
		}{
			{"RGB", want, 3}, {"BGR", imgBGR(want), 3}, {"Grayscale", imgGray(want), 1},
		} {
			got, err := imgDecode(t, in, f.format)
			if err != nil {
				t.Errorf("%s %s: %v", c.name, f.format, err)
				continue
			}
			if !slices.Equal(got.Shape, []int{32, 32, f.c}) || !slices.Equal(got.Data.([]uint8), f.want) {
				t.Errorf("%s %s: shape %v, pixels differ from Pillow's", c.name, f.format, got.Shape)
			}
		}
	}
}

// Lossy WebP matches libwebp bit for bit.
func TestImageDecoderWebPLossy(t *testing.T) {
	want := imgData(t, imgWebPRGB)
	got, err := imgDecode(t, imgData(t, imgWebP), "RGB")
	if err != nil {
		t.Fatal(err)
	}
	if d := got.Data.([]uint8); !slices.Equal(got.Shape, []int{32, 32, 3}) || !slices.Equal(d, want) {
		t.Errorf("webp: shape %v, %d of %d values differ from libwebp's", got.Shape, imgCountDiff(d, want), len(want))
	}
}

func imgCountDiff(a, b []uint8) int {
	n := 0
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			n++
		}
	}
	return n + max(len(a), len(b)) - min(len(a), len(b))
}

// ONNX's JPEG cases (baseline 4:2:0, written by Pillow) decode to
// libjpeg's pixels exactly, in all three pixel formats; ONNX's BGR output
// is its RGB output reversed.
func TestImageDecoderJPEGExact(t *testing.T) {
	in := imgData(t, imgJPEG)
	rgb := imgData(t, imgJPEGRGB)
	for _, c := range []struct {
		format string
		want   []uint8
		ch     int
	}{
		{"RGB", rgb, 3}, {"BGR", imgBGR(rgb), 3}, {"Grayscale", imgData(t, imgJPEGGray), 1},
	} {
		got, err := imgDecode(t, in, c.format)
		if err != nil {
			t.Fatalf("%s: %v", c.format, err)
		}
		if d := got.Data.([]uint8); !slices.Equal(got.Shape, []int{32, 32, c.ch}) || !slices.Equal(d, c.want) {
			t.Errorf("%s: shape %v, %d of %d values differ from libjpeg's", c.format, got.Shape, imgCountDiff(d, c.want), len(c.want))
		}
	}
}

// More JPEGs against Pillow's pixels (internal/jpeg/testdata, made by
// scripts/jpeg-cases): a grayscale file comes out as equal RGB channels or
// as itself, a progressive 4:2:0 file exactly.
func TestImageDecoderJPEGPillowCases(t *testing.T) {
	for _, c := range []struct{ name, format string }{
		{"q70-gray-27x31", "Grayscale"}, {"q70-gray-27x31", "RGB"}, {"q70-gray-27x31", "BGR"},
		{"prog-q75-420-35x27", "RGB"}, {"smooth-partial-420-24x40", "Grayscale"},
	} {
		data, err := os.ReadFile("internal/jpeg/testdata/" + c.name + ".jpg")
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open("internal/jpeg/testdata/" + c.name + ".png")
		if err != nil {
			t.Fatal(err)
		}
		ref, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		b := ref.Bounds()
		var rgb []uint8
		for y := range b.Dy() {
			for x := range b.Dx() {
				r, g, bb, _ := ref.At(b.Min.X+x, b.Min.Y+y).RGBA()
				rgb = append(rgb, uint8(r>>8), uint8(g>>8), uint8(bb>>8))
			}
		}
		want, ch := rgb, 3
		switch c.format {
		case "BGR":
			want = imgBGR(rgb)
		case "Grayscale":
			want, ch = imgGray(rgb), 1
		}
		got, err := imgDecode(t, data, c.format)
		if err != nil {
			t.Fatalf("%s %s: %v", c.name, c.format, err)
		}
		if d := got.Data.([]uint8); !slices.Equal(got.Shape, []int{b.Dy(), b.Dx(), ch}) || !slices.Equal(d, want) {
			t.Errorf("%s %s: shape %v, %d of %d values differ from Pillow's", c.name, c.format, got.Shape, imgCountDiff(d, want), len(want))
		}
	}
}

// Corrupt and truncated JPEGs are errors; a valid JPEG that internal/jpeg
// refuses (here arithmetic-coded, which image/jpeg cannot decode either)
// is reported as unsupported.
func TestImageDecoderJPEGErrors(t *testing.T) {
	in := imgData(t, imgJPEG)
	for _, bad := range [][]byte{in[:len(in)-2], in[:len(in)/2], in[:200]} {
		if _, err := imgDecode(t, bad, "RGB"); err == nil {
			t.Errorf("%d of %d bytes: expected an error", len(bad), len(in))
		}
	}
	arith := slices.Clone(in)
	for i := 0; i+1 < len(arith); i++ {
		if arith[i] == 0xFF && arith[i+1] == 0xC0 { // SOF0 -> SOF9
			arith[i+1] = 0xC9
		}
	}
	_, err := imgDecode(t, arith, "RGB")
	if !errors.Is(err, network.ErrUnsupported) {
		t.Errorf("arithmetic-coded JPEG: got %v, want an unsupported error", err)
	}
}

// Hand-made PNM files: plain and raw, comments, maxvals other than 255
// (scaled to 0..255, halves to even, as Pillow does) and bitmaps (1 is
// black).
func TestImageDecoderPNM(t *testing.T) {
	for _, c := range []struct {
		name, data string
		shape      []int
		want       []uint8
	}{
		{"P1", "P1\n# a comment\n3 2\n0 1 0\n110", []int{2, 3, 3}, []uint8{255, 255, 255, 0, 0, 0, 255, 255, 255, 0, 0, 0, 0, 0, 0, 255, 255, 255}},
		{"P2", "P2 2 1 # width height\n 15\n7 15", []int{1, 2, 3}, []uint8{119, 119, 119, 255, 255, 255}},
		{"P3", "P3\n1 1\n2\n1 0 2\n", []int{1, 1, 3}, []uint8{128, 0, 255}},
		{"P4", "P4\n10 1\n\xa5\x80", []int{1, 10, 3}, []uint8{0, 0, 0, 255, 255, 255, 0, 0, 0, 255, 255, 255, 255, 255, 255, 0, 0, 0, 255, 255, 255, 0, 0, 0, 0, 0, 0, 255, 255, 255}},
		{"P5", "P5 2 1 1000\n\x01\xf4\x00\x01", []int{1, 2, 3}, []uint8{128, 128, 128, 0, 0, 0}},
		{"P6", "P6\n1 1\n255\n\x01\x02\x03", []int{1, 1, 3}, []uint8{1, 2, 3}},
	} {
		got, err := imgDecode(t, []byte(c.data), "RGB")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(got.Shape, c.shape) || !slices.Equal(got.Data.([]uint8), c.want) {
			t.Errorf("%s: %v %v, want %v %v", c.name, got.Shape, got.Data, c.shape, c.want)
		}
	}
	for _, bad := range []string{"P6\n2 2\n255\n\x01\x02", "P2\n1 1\n15\n16", "P5\n1 1\n", "P3\n1 x\n255\n1 2 3"} {
		if _, err := imgDecode(t, []byte(bad), "RGB"); err == nil {
			t.Errorf("%q: expected an error", bad)
		}
	}
}
