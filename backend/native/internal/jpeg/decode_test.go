package jpeg

import (
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readPNG returns the pixels of a reference PNG as interleaved samples
// (gray or RGB) and the channel count.
func readPNG(t *testing.T, path string) (w, h, ch int, pix []uint8) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	w, h = b.Dx(), b.Dy()
	switch m := img.(type) {
	case *image.Gray:
		for y := range h {
			pix = append(pix, m.Pix[y*m.Stride:y*m.Stride+w]...)
		}
		return w, h, 1, pix
	case *image.RGBA, *image.NRGBA:
		for y := range h {
			for x := range w {
				r, g, bb, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
				pix = append(pix, uint8(r>>8), uint8(g>>8), uint8(bb>>8))
			}
		}
		return w, h, 3, pix
	}
	t.Fatalf("%s: unexpected PNG type %T", path, img)
	return
}

// The files in testdata were made by scripts/jpeg-cases/make_jpeg_cases.py
// with cjpeg; each PNG holds what Pillow (libjpeg-turbo 2.1.5) decodes.
func TestDecodeMatchesLibjpeg(t *testing.T) {
	files, err := filepath.Glob("testdata/*.jpg")
	if err != nil || len(files) < 20 {
		t.Fatalf("testdata: %d files, %v", len(files), err)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".jpg")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			img, err := Decode(data, 1<<20)
			if strings.HasPrefix(name, "unsupported-") {
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("got %v, want ErrUnsupported", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w, h, ch, want := readPNG(t, strings.TrimSuffix(path, ".jpg")+".png")
			if img.Width != w || img.Height != h || img.Channels != ch {
				t.Fatalf("got %dx%dx%d, want %dx%dx%d", img.Width, img.Height, img.Channels, w, h, ch)
			}
			diff, worst, first := 0, 0, -1
			for i := range want {
				if d := int(img.Pix[i]) - int(want[i]); d != 0 {
					diff++
					worst = max(worst, d, -d)
					if first < 0 {
						first = i
					}
				}
			}
			if diff > 0 {
				p := first / ch
				t.Errorf("%d of %d samples differ from libjpeg's (by up to %d); first at x=%d y=%d channel %d",
					diff, len(want), worst, p%w, p/w, first%ch)
			}
		})
	}
}
