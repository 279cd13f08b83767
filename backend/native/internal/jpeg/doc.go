// Package jpeg decodes Huffman-coded JPEG images (baseline and extended
// sequential, SOF0/SOF1, and progressive, SOF2; 8-bit samples; grayscale,
// YCbCr and RGB) to the pixels libjpeg(-turbo) produces with its default
// decompression settings, bit for bit (checked against libjpeg-turbo
// 2.1.5 through Pillow: testdata, made by scripts/jpeg-cases). Pillow and
// OpenCV return those pixels, so a decoder meant to agree with them has
// to reproduce each fixed-point step rather than merely decode well:
//
//   - the accurate integer inverse DCT (libjpeg's JDCT_ISLOW: the
//     Loeffler-Ligtenberg-Moschytz factorisation in 13-bit fixed point,
//     2 extra bits kept between the column and row passes, results
//     wrapped into a 10-bit range and then clamped, exactly as libjpeg's
//     range-limit table does);
//   - no DCT scaling; block smoothing only where libjpeg applies it: to
//     progressive images whose scans leave some of the nine lowest AC
//     coefficients short of their last bit (encoders refine everything,
//     so in practice this is hand-made scan scripts). The smoothing is
//     libjpeg-turbo 2.1's (see smooth.go for where 3.0.1 differs);
//   - "fancy" chroma upsampling: triangle filters for 2:1 horizontal
//     (4:2:2), 2:1 both ways (4:2:0) and 2:1 vertical (4:4:0) ratios, with
//     libjpeg's rounding biases and its edge replication; plain
//     replication for other integral ratios (4:1:1) and for chroma planes
//     at most 2 samples wide;
//   - YCbCr to RGB through libjpeg's 16-bit fixed-point tables.
//
// libjpeg's colour-space guess is followed too: three components are
// YCbCr, except RGB when there is no JFIF marker and either an Adobe
// marker says transform 0 or, without one, the component ids are 'R',
// 'G', 'B'. Sequential scans that use Huffman tables 0 or 1 without
// defining them get the standard tables of the JPEG specification's annex
// K, as in libjpeg-turbo (Motion-JPEG frames rely on it).
//
// Arithmetic coding, lossless and hierarchical frames, 12-bit samples,
// two- and four-component (CMYK/YCCK) images and sampling factors whose
// ratios are not integers are refused with ErrUnsupported. Truncated
// files are errors, as in Pillow. Corrupt entropy-coded data (an invalid
// Huffman code, a missing restart marker, a scan that stops early) is an
// error too, where libjpeg warns and goes on with gray or resynchronised
// data (and Pillow returns that image).
// The package knows nothing of ONNX.
package jpeg
