package native

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // registers the GIF decoder
	_ "image/jpeg" // registers the JPEG decoder
	_ "image/png"  // registers the PNG decoder
	"math"
	"strconv"

	_ "golang.org/x/image/bmp"  // registers the BMP decoder
	_ "golang.org/x/image/tiff" // registers the TIFF decoder
	_ "golang.org/x/image/webp" // registers the WebP decoder

	"github.com/deep500/deep500-go/backend/native/internal/jpeg"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// ImageDecoder. ONNX's reference decodes with Pillow (libjpeg-turbo,
// libwebp, its own PNM reader), so where formats leave the decoder a
// choice native makes Pillow's:
//   - PNG, GIF, BMP, TIFF and lossless WebP are exact whatever the decoder.
//   - Lossy WebP (VP8, always 4:2:0) decodes exactly in golang.org/x/image;
//     the chroma is then upsampled and converted to RGB with libwebp's
//     "fancy" filter and fixed-point coefficients, which makes the pixels
//     libwebp's, bit for bit.
//   - JPEG is decoded by internal/jpeg, which reproduces libjpeg's
//     default decompression (accurate integer IDCT, fancy upsampling,
//     fixed-point YCbCr tables) bit for bit: baseline, extended and
//     progressive Huffman-coded files with 1 or 3 components. The JPEGs it
//     refuses as unsupported (arithmetic coding, 12-bit, CMYK, fractional
//     sampling ratios) go to Go's image/jpeg instead, with libjpeg's
//     upsampling and colour tables on top for YCbCr; its IDCT is not
//     libjpeg's, so those pixels can differ from libjpeg's by a few units
//     (of these, Go decodes only CMYK; the others are unsupported).
//   - PNM (PBM, PGM, PPM, plain and raw) is read here as Pillow reads it:
//     a maxval other than 255 scales to 0..255 with rounding half to even.
//     Pillow keeps samples above 8 bits (its "I" mode); native scales them
//     to 8 bits, as the operator's output is uint8.
//   - JPEG 2000 has no Go decoder: unsupported.
// Grayscale is Pillow's "L" conversion, the ITU-R 601-2 luma L = 0.299 R +
// 0.587 G + 0.114 B in 16-bit fixed point, rounded. Alpha is dropped, and
// palettes and gray images give RGB (Pillow's arrays would keep their own
// channel count, which the operator's [H, W, 3] output does not allow).
// https://onnx.ai/onnx/operators/onnx__ImageDecoder.html

// signalMaxPixels bounds a decoded image, checked from its header before
// the pixels are decoded.
const signalMaxPixels = 1 << 28

// decodeImage decodes an encoded image into [H, W, C] uint8 pixels: C = 3
// (RGB or BGR order) or 1 (Grayscale).
func decodeImage(data []byte, format string) (*onnx.Tensor, error) {
	var jpegErr error
	if len(data) >= 2 && data[0] == 0xFF && data[1] == 0xD8 {
		img, err := jpeg.Decode(data, signalMaxPixels)
		if err == nil {
			return imageTensor(img.Pix, img.Width, img.Height, img.Channels, format), nil
		}
		if !errors.Is(err, jpeg.ErrUnsupported) {
			return nil, fmt.Errorf("decoding the jpeg image: %w", err)
		}
		jpegErr = err // approximate fallback below
	}
	var img image.Image
	kind := "pnm"
	if isPNM(data) {
		var err error
		if img, err = decodePNM(data); err != nil {
			return nil, fmt.Errorf("decoding the PNM image: %w", err)
		}
	} else {
		var cfg image.Config
		var err error
		cfg, kind, err = image.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			if jpegErr != nil {
				return nil, network.Unsupportedf("ImageDecoder of this JPEG (%v; image/jpeg: %v)", jpegErr, err)
			}
			if err == image.ErrFormat {
				return nil, network.Unsupportedf("ImageDecoder of this image format (PNG, JPEG, GIF, BMP, TIFF, WebP and PNM are decoded)")
			}
			return nil, fmt.Errorf("decoding the image header: %w", err)
		}
		if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > signalMaxPixels {
			return nil, fmt.Errorf("a %dx%d %s image is empty or too large", cfg.Width, cfg.Height, kind)
		}
		if img, _, err = image.Decode(bytes.NewReader(data)); err != nil {
			if jpegErr != nil {
				return nil, network.Unsupportedf("ImageDecoder of this JPEG (%v; image/jpeg: %v)", jpegErr, err)
			}
			return nil, fmt.Errorf("decoding the %s image: %w", kind, err)
		}
	}
	bounds := img.Bounds()
	h, w := bounds.Dy(), bounds.Dx()
	rgb := make([]uint8, h*w*3)
	if !imageFancyRGB(rgb, img, kind) {
		for y := range h {
			for x := range w {
				c := color.NRGBAModel.Convert(img.At(bounds.Min.X+x, bounds.Min.Y+y)).(color.NRGBA)
				p := (y*w + x) * 3
				rgb[p], rgb[p+1], rgb[p+2] = c.R, c.G, c.B
			}
		}
	}
	return imageTensor(rgb, w, h, 3, format), nil
}

// imageTensor returns pix (h×w pixels of c = 1 gray or 3 RGB samples) in
// the pixel format: gray gives RGB with equal channels, and RGB gives
// gray by Pillow's "L" conversion (a gray picture stays the same).
func imageTensor(pix []uint8, w, h, c int, format string) *onnx.Tensor {
	if c == 1 {
		if format == "Grayscale" {
			return onnx.FromSlice(pix, h, w, 1)
		}
		rgb := make([]uint8, 3*len(pix))
		for i, v := range pix {
			rgb[3*i], rgb[3*i+1], rgb[3*i+2] = v, v, v
		}
		return onnx.FromSlice(rgb, h, w, 3)
	}
	switch format {
	case "RGB":
		return onnx.FromSlice(pix, h, w, 3)
	case "BGR":
		for p := 0; p < len(pix); p += 3 {
			pix[p], pix[p+2] = pix[p+2], pix[p]
		}
		return onnx.FromSlice(pix, h, w, 3)
	}
	gray := make([]uint8, h*w)
	for i := range gray {
		r, g, b := uint32(pix[3*i]), uint32(pix[3*i+1]), uint32(pix[3*i+2])
		gray[i] = uint8((r*19595 + g*38470 + b*7471 + 0x8000) >> 16)
	}
	return onnx.FromSlice(gray, h, w, 1)
}

// imageFancyRGB writes the RGB pixels of a decoded YCbCr JPEG or WebP image
// into dst the way libjpeg or libwebp would; it reports false for other
// images.
func imageFancyRGB(dst []uint8, img image.Image, kind string) bool {
	var m *image.YCbCr
	switch t := img.(type) {
	case *image.YCbCr:
		m = t
	case *image.NYCbCrA:
		m = &t.YCbCr
	default:
		return false
	}
	if m.Rect.Min != (image.Point{}) {
		return false
	}
	switch kind {
	case "webp":
		if m.SubsampleRatio != image.YCbCrSubsampleRatio420 {
			return false
		}
		webpFancyRGB(dst, m)
		return true
	case "jpeg":
		return jpegFancyRGB(dst, m)
	}
	return false
}

// ---- libwebp ----

// webpYUVToRGB is libwebp's conversion (14-bit fixed point, results
// with 6 fractional bits, clipped).
func webpYUVToRGB(y, u, v int) (r, g, b uint8) {
	hi := func(x, c int) int { return (x * c) >> 8 }
	clip := func(x int) uint8 {
		switch {
		case x < 0:
			return 0
		case x >= 256<<6:
			return 255
		}
		return uint8(x >> 6)
	}
	yy := hi(y, 19077)
	return clip(yy + hi(v, 26149) - 14234), clip(yy - hi(u, 6419) - hi(v, 13320) + 8708), clip(yy + hi(u, 33050) - 17685)
}

// webpFancyRGB upsamples 4:2:0 chroma as libwebp's fancy upsampler does:
// each output pixel mixes its four nearest chroma samples 9:3:3:1 (in two
// rounded steps, U and V packed in one word), 3:1 on the image's edges.
func webpFancyRGB(dst []uint8, m *image.YCbCr) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	uv := func(r, c int) uint32 {
		p := r*m.CStride + c
		return uint32(m.Cb[p]) | uint32(m.Cr[p])<<16
	}
	put := func(row, col int, s uint32) {
		if row < 0 {
			return
		}
		p := (row*w + col) * 3
		dst[p], dst[p+1], dst[p+2] = webpYUVToRGB(int(m.Y[row*m.YStride+col]), int(s&0xff), int(s>>16))
	}
	// pair fills output rows top and bottom (-1: none) from chroma rows
	// tr (nearer to top) and br (nearer to bottom).
	pair := func(top, bottom, tr, br int) {
		tl, l := uv(tr, 0), uv(br, 0)
		put(top, 0, (3*tl+l+0x00020002)>>2)
		put(bottom, 0, (3*l+tl+0x00020002)>>2)
		for x := 1; x <= (w-1)>>1; x++ {
			t, c := uv(tr, x), uv(br, x)
			avg := tl + t + l + c + 0x00080008
			d12 := (avg + 2*(t+l)) >> 3
			d03 := (avg + 2*(tl+c)) >> 3
			put(top, 2*x-1, (d12+tl)>>1)
			put(top, 2*x, (d03+t)>>1)
			put(bottom, 2*x-1, (d03+l)>>1)
			put(bottom, 2*x, (d12+c)>>1)
			tl, l = t, c
		}
		if w&1 == 0 {
			put(top, w-1, (3*tl+l+0x00020002)>>2)
			put(bottom, w-1, (3*l+tl+0x00020002)>>2)
		}
	}
	pair(0, -1, 0, 0)
	for k := 1; 2*k-1 < h; k++ {
		if 2*k < h {
			pair(2*k-1, 2*k, k-1, k)
		} else {
			pair(2*k-1, -1, k-1, k-1)
		}
	}
}

// ---- libjpeg ----

// jpegFancyRGB is the fallback for JPEGs internal/jpeg refuses: it
// upsamples the chroma of image/jpeg's output as libjpeg(-turbo) does by
// default (fancy upsampling for 2:1 factors, replication for the
// others) and converts to RGB with libjpeg's fixed-point tables. It
// reports false for a subsampling it does not know.
func jpegFancyRGB(dst []uint8, m *image.YCbCr) bool {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	fx, fy := 1, 1
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio444:
	case image.YCbCrSubsampleRatio422:
		fx = 2
	case image.YCbCrSubsampleRatio420:
		fx, fy = 2, 2
	case image.YCbCrSubsampleRatio440:
		fy = 2
	case image.YCbCrSubsampleRatio411:
		fx = 4
	case image.YCbCrSubsampleRatio410:
		fx, fy = 4, 2
	default:
		return false
	}
	cw, ch := (w+fx-1)/fx, (h+fy-1)/fy
	cb := jpegUpsample(m.Cb, m.CStride, cw, ch, fx, fy, w, h)
	cr := jpegUpsample(m.Cr, m.CStride, cw, ch, fx, fy, w, h)
	fix := func(x float64) int32 { return int32(x*65536 + 0.5) }
	crR, cbB, crG, cbG := fix(1.402), fix(1.772), fix(0.71414), fix(0.34414)
	clamp := func(v int32) uint8 { return uint8(min(max(v, 0), 255)) }
	for y := range h {
		for x := range w {
			i := y*w + x
			yy := int32(m.Y[y*m.YStride+x])
			b, r := int32(cb[i])-128, int32(cr[i])-128
			p := 3 * i
			dst[p] = clamp(yy + (crR*r+32768)>>16)
			dst[p+1] = clamp(yy + (-cbG*b+32768-crG*r)>>16)
			dst[p+2] = clamp(yy + (cbB*b+32768)>>16)
		}
	}
	return true
}

// jpegUpsample returns a w×h plane upsampled from the cw×ch plane p
// (stride stride) by factors fx, fy, as libjpeg-turbo's upsampler does:
// triangle filters for 2:1 horizontally (when the plane is wider than 2
// samples), vertically, or both, with the image's edge samples repeated;
// plain replication otherwise.
func jpegUpsample(p []uint8, stride, cw, ch, fx, fy, w, h int) []uint8 {
	out := make([]uint8, w*h)
	at := func(r, c int) int32 { return int32(p[min(max(r, 0), ch-1)*stride+c]) }
	set := func(r, c int, v int32) {
		if r < h && c < w {
			out[r*w+c] = uint8(v)
		}
	}
	switch {
	case fx == 2 && fy == 2 && cw > 2:
		for r := range ch {
			for v := range 2 {
				nb := r - 1 + 2*v // the other row: above for the upper output row
				col := func(c int) int32 { return 3*at(r, c) + at(nb, c) }
				o := 2*r + v
				this, next := col(0), col(1)
				set(o, 0, (4*this+8)>>4)
				set(o, 1, (3*this+next+7)>>4)
				last := this
				this = next
				for c := 1; c < cw-1; c++ {
					next = col(c + 1)
					set(o, 2*c, (3*this+last+8)>>4)
					set(o, 2*c+1, (3*this+next+7)>>4)
					last, this = this, next
				}
				set(o, 2*cw-2, (3*this+last+8)>>4)
				set(o, 2*cw-1, (4*this+7)>>4)
			}
		}
	case fx == 2 && fy == 1 && cw > 2:
		for r := range ch {
			set(r, 0, at(r, 0))
			set(r, 1, (3*at(r, 0)+at(r, 1)+2)>>2)
			for c := 1; c < cw-1; c++ {
				set(r, 2*c, (3*at(r, c)+at(r, c-1)+1)>>2)
				set(r, 2*c+1, (3*at(r, c)+at(r, c+1)+2)>>2)
			}
			set(r, 2*cw-2, (3*at(r, cw-1)+at(r, cw-2)+1)>>2)
			set(r, 2*cw-1, at(r, cw-1))
		}
	case fx == 1 && fy == 2:
		for r := range ch {
			for c := range cw {
				set(2*r, c, (3*at(r, c)+at(r-1, c)+1)>>2)
				set(2*r+1, c, (3*at(r, c)+at(r+1, c)+2)>>2)
			}
		}
	default:
		for r := range h {
			for c := range w {
				out[r*w+c] = uint8(at(r/fy, c/fx))
			}
		}
	}
	return out
}

// ---- PNM ----

// isPNM reports whether data starts like a PBM, PGM or PPM file.
func isPNM(data []byte) bool {
	return len(data) >= 3 && data[0] == 'P' && data[1] >= '1' && data[1] <= '6' && pnmSpace(data[2])
}

func pnmSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// pnmReader reads a PNM header and plain-format samples.
type pnmReader struct {
	data []byte
	pos  int
}

// token returns the next whitespace-separated token, skipping comments
// (from '#' to the end of the line).
func (r *pnmReader) token() (string, error) {
	for r.pos < len(r.data) {
		c := r.data[r.pos]
		switch {
		case pnmSpace(c):
			r.pos++
		case c == '#':
			r.skipComment()
		default:
			start := r.pos
			for r.pos < len(r.data) && !pnmSpace(r.data[r.pos]) && r.data[r.pos] != '#' {
				r.pos++
			}
			if r.pos-start > 10 {
				return "", fmt.Errorf("token %.10q... is too long", r.data[start:r.pos])
			}
			return string(r.data[start:r.pos]), nil
		}
	}
	return "", fmt.Errorf("unexpected end of data")
}

// skipComment moves past a comment: from '#' to the end of the line.
func (r *pnmReader) skipComment() {
	for r.pos < len(r.data) && r.data[r.pos] != '\n' && r.data[r.pos] != '\r' {
		r.pos++
	}
}

// number reads a decimal token in [lo, hi].
func (r *pnmReader) number(what string, lo, hi int) (int, error) {
	t, err := r.token()
	if err != nil {
		return 0, fmt.Errorf("reading the %s: %w", what, err)
	}
	v, err := strconv.Atoi(t)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("%s %q is not a number in [%d, %d]", what, t, lo, hi)
	}
	return v, nil
}

// decodePNM decodes P1 to P6 into an 8-bit gray or RGB image.
func decodePNM(data []byte) (image.Image, error) {
	kind := data[1]
	r := &pnmReader{data: data, pos: 2}
	w, err := r.number("width", 1, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	h, err := r.number("height", 1, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	if int64(w)*int64(h) > signalMaxPixels {
		return nil, fmt.Errorf("a %dx%d image is too large", w, h)
	}
	bitmap := kind == '1' || kind == '4'
	maxval := 1
	if !bitmap {
		if maxval, err = r.number("maxval", 1, 65535); err != nil {
			return nil, err
		}
	}
	channels := 1
	if kind == '3' || kind == '6' {
		channels = 3
	}
	n := w * h * channels
	samples := make([]uint8, n)
	// scale maps a sample to 8 bits as Pillow does.
	scale := func(v int) uint8 {
		if maxval == 255 {
			return uint8(v)
		}
		return uint8(min(255, math.RoundToEven(float64(v)/float64(maxval)*255)))
	}
	switch kind {
	case '1': // digits 0 (white) and 1 (black), whitespace optional
		for i := 0; i < n; {
			if r.pos >= len(data) {
				return nil, fmt.Errorf("the image data ends after %d of %d pixels", i, n)
			}
			switch c := data[r.pos]; {
			case c == '0' || c == '1':
				samples[i] = 255 * (1 - (c - '0'))
				i++
				r.pos++
			case c == '#':
				r.skipComment()
			case pnmSpace(c):
				r.pos++
			default:
				return nil, fmt.Errorf("invalid character %q in a plain bitmap", c)
			}
		}
	case '2', '3':
		for i := range samples {
			v, err := r.number("sample", 0, maxval)
			if err != nil {
				return nil, err
			}
			samples[i] = scale(v)
		}
	default: // raw: one whitespace byte, then the samples
		var raster []byte
		if r.pos < len(data) {
			raster = data[r.pos+1:]
		}
		switch {
		case kind == '4':
			row := (w + 7) / 8
			if len(raster) < row*h {
				return nil, fmt.Errorf("the image data has %d bytes, want %d", len(raster), row*h)
			}
			for y := range h {
				for x := range w {
					if raster[y*row+x/8]>>(7-x%8)&1 == 0 {
						samples[y*w+x] = 255
					}
				}
			}
		case maxval < 256:
			if len(raster) < n {
				return nil, fmt.Errorf("the image data has %d bytes, want %d", len(raster), n)
			}
			for i := range samples {
				samples[i] = scale(int(raster[i]))
			}
		default:
			if len(raster) < 2*n {
				return nil, fmt.Errorf("the image data has %d bytes, want %d", len(raster), 2*n)
			}
			for i := range samples {
				samples[i] = scale(min(maxval, int(raster[2*i])<<8|int(raster[2*i+1])))
			}
		}
	}
	rect := image.Rect(0, 0, w, h)
	if channels == 1 {
		return &image.Gray{Pix: samples, Stride: w, Rect: rect}, nil
	}
	img := image.NewRGBA(rect)
	for i := range w * h {
		copy(img.Pix[4*i:4*i+3], samples[3*i:3*i+3])
		img.Pix[4*i+3] = 255
	}
	return img, nil
}

// VisitImageDecoder compiles ImageDecoder (version 20).
func (b *builder) VisitImageDecoder(op *ops.ImageDecoder) error {
	x, err := b.input(op.In.EncodedStream)
	if err != nil {
		return err
	}
	switch op.PixelFormat {
	case "RGB", "BGR", "Grayscale":
	default:
		return fmt.Errorf("pixel_format %q is not RGB, BGR or Grayscale", op.PixelFormat)
	}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Image), func(t *onnx.Tensor) (*onnx.Tensor, error) {
		data, ok := t.Data.([]uint8)
		if !ok || t.Type != onnx.Uint8 || len(t.Shape) != 1 {
			return nil, fmt.Errorf("encoded_stream must be a 1-D uint8 tensor, got %v %v", t.Type, t.Shape)
		}
		return decodeImage(data, op.PixelFormat)
	}))
}
