#!/usr/bin/env python3
"""Regenerates backend/native/internal/jpeg/testdata: small JPEG files made
with libjpeg-turbo's cjpeg (sampling factors, restart intervals, qualities,
progressive and multi-scan files, scan scripts that make libjpeg
block-smooth, grayscale, RGB) or Pillow's encoder and, beside each, the
pixels Pillow decodes from it (libjpeg-turbo with its default settings) as
a PNG. The Go decoder must refuse the files named unsupported-*.jpg with
ErrUnsupported.

Needs /usr/bin/python3 with numpy and Pillow (Debian: python3-pil) and
cjpeg (Debian: libjpeg-turbo-progs). The source images come from a seeded
generator, so the files only change if the tools do.
"""
import io
import os
import shutil
import subprocess
import sys

import numpy as np
from PIL import Image

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "..", "..", "backend", "native", "internal", "jpeg", "testdata")


def source(w, h, seed, gray=False, noise=12.0):
    """A smooth colour field with edges and some noise: small files that
    still exercise every coefficient and the clamping."""
    rng = np.random.RandomState(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    chans = []
    for c in range(1 if gray else 3):
        a, b, p = rng.uniform(0.05, 0.4, 3)
        v = 128 + 90 * np.sin(a * x + p * 7) * np.cos(b * y + c)
        v += np.where((x // 5 + y // 7 + c) % 3 == 0, 60, -30)
        v += rng.normal(0, noise, (h, w))
        chans.append(v)
    img = np.clip(np.stack(chans, axis=2), 0, 255).astype(np.uint8)
    return img[:, :, 0] if gray else img


def pnm(img):
    if img.ndim == 2:
        h, w = img.shape
        return b"P5\n%d %d\n255\n" % (w, h) + img.tobytes()
    h, w, _ = img.shape
    return b"P6\n%d %d\n255\n" % (w, h) + img.tobytes()


def pillow(img, options):
    f = io.BytesIO()
    Image.fromarray(img).save(f, "JPEG", **options)
    return f.getvalue()


def cjpeg(img, args, scans=None):
    if isinstance(args, dict):  # Pillow's encoder instead
        return pillow(img, args)
    cmd = ["cjpeg"] + args
    if scans is not None:
        path = os.path.join(OUT, ".scans.txt")
        with open(path, "w") as f:
            f.write(scans)
        cmd += ["-scans", path]
    try:
        return subprocess.run(cmd, input=pnm(img), stdout=subprocess.PIPE, check=True).stdout
    finally:
        if scans is not None:
            os.remove(path)


# Progressive scripts that leave low-frequency AC coefficients incomplete,
# which makes libjpeg block-smooth the image: the last bit of every AC
# coefficient missing; only DC (at full or half precision); AC 1-2 only;
# AC first sent with Al=2 and refined to Al=1 only.
PARTIAL = "0,1,2: 0-0, 0, 1;\n0: 1-63, 0, 1;\n1: 1-63, 0, 1;\n2: 1-63, 0, 1;\n0,1,2: 0-0, 1, 0;\n"
DC_ONLY = "0,1,2: 0-0, 0, 0;\n"
DC_AL1 = "0,1,2: 0-0, 0, 1;\n"
GRAY_AC12 = "0: 0-0, 0, 0;\n0: 1-2, 0, 0;\n"
AL2 = "0,1,2: 0-0, 0, 0;\n0: 1-63, 0, 2;\n0: 1-63, 2, 1;\n1: 1-63, 0, 1;\n2: 1-63, 0, 1;\n"
# Sequential, one scan per component (non-interleaved).
NONINTERLEAVED = "0;\n1;\n2;\n"

CASES = [
    # name, width, height, seed, gray, cjpeg arguments (or Pillow's save
    # options), scan script
    ("pil-q90-420-optimize-41x23", 41, 23, 31, False, {"quality": 90, "optimize": True}, None),
    ("pil-prog-q80-444-20x20", 20, 20, 32, False, {"quality": 80, "progressive": True, "subsampling": 0}, None),
    ("pil-q75-gray-17x9", 17, 9, 33, True, {"quality": 75}, None),
    ("q75-420-37x29", 37, 29, 1, False, ["-quality", "75"], None),
    ("q90-422-33x17", 33, 17, 2, False, ["-quality", "90", "-sample", "2x1"], None),
    ("q50-444-19x23", 19, 23, 3, False, ["-quality", "50", "-sample", "1x1"], None),
    ("q85-440-21x30", 21, 30, 4, False, ["-quality", "85", "-sample", "1x2"], None),
    ("q80-411-45x13", 45, 13, 5, False, ["-quality", "80", "-sample", "4x1"], None),
    ("q80-410-29x21", 29, 21, 34, False, ["-quality", "80", "-sample", "4x2"], None),
    ("q90-mixed-31x18", 31, 18, 35, False, ["-quality", "90", "-sample", "2x2,1x2,2x1"], None),
    ("q95-420-restart-40x24", 40, 24, 6, False, ["-quality", "95", "-restart", "1B"], None),
    ("q60-422-restart-50x9", 50, 9, 7, False, ["-quality", "60", "-sample", "2x1", "-restart", "1"], None),
    ("q70-gray-27x31", 27, 31, 8, True, ["-quality", "70", "-grayscale"], None),
    ("q100-420-noise-16x16", 16, 16, 9, False, ["-quality", "100"], None),
    ("q10-420-26x22", 26, 22, 10, False, ["-quality", "10"], None),
    ("q75-420-1x1", 1, 1, 11, False, ["-quality", "75"], None),
    ("q75-420-3x2", 3, 2, 12, False, ["-quality", "75"], None),
    ("q75-420-4x5", 4, 5, 13, False, ["-quality", "75"], None),
    ("q75-422-5x3", 5, 3, 14, False, ["-quality", "75", "-sample", "2x1"], None),
    ("q75-440-2x7", 2, 7, 15, False, ["-quality", "75", "-sample", "1x2"], None),
    ("q85-rgb-23x14", 23, 14, 16, False, ["-quality", "85", "-rgb"], None),
    ("q75-420-scans-30x20", 30, 20, 17, False, ["-quality", "75"], NONINTERLEAVED),
    ("prog-q75-420-35x27", 35, 27, 18, False, ["-quality", "75", "-progressive"], None),
    ("prog-q90-444-restart-29x19", 29, 19, 19, False, ["-quality", "90", "-sample", "1x1", "-progressive", "-restart", "2B"], None),
    ("prog-q80-gray-18x25", 18, 25, 20, True, ["-quality", "80", "-grayscale", "-progressive"], None),
    ("q75-420-gray-as-color-24x24", 24, 24, 21, True, ["-quality", "75"], None),
    ("smooth-partial-420-24x40", 24, 40, 22, False, ["-quality", "75"], PARTIAL),
    ("smooth-partial-444-16x24", 16, 24, 24, False, ["-quality", "60", "-sample", "1x1"], PARTIAL),
    ("smooth-dconly-420-40x56", 40, 56, 25, False, ["-quality", "75"], DC_ONLY),
    ("smooth-dconly-422-8x30", 8, 30, 26, False, ["-quality", "90", "-sample", "2x1"], DC_ONLY),
    ("smooth-dcal1-440-37x45", 37, 45, 27, False, ["-quality", "50", "-sample", "1x2"], DC_AL1),
    ("smooth-ac12-gray-30x22", 30, 22, 28, True, ["-quality", "85", "-grayscale"], GRAY_AC12),
    ("smooth-al2-444-33x27", 33, 27, 29, False, ["-quality", "95", "-sample", "1x1"], AL2),
    ("smooth-al2-420-48x33", 48, 33, 30, False, ["-quality", "80"], AL2),
    ("unsupported-arith-16x16", 16, 16, 23, False, ["-quality", "75", "-arithmetic"], None),
]


def main():
    if shutil.which("cjpeg") is None:
        sys.exit("cjpeg not found: apt-get install -y libjpeg-turbo-progs")
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        if name.endswith((".jpg", ".png")):
            os.remove(os.path.join(OUT, name))
    for name, w, h, seed, gray, args, scans in CASES:
        img = source(w, h, seed, gray)
        if name.startswith("q75-420-gray-as-color"):
            img = np.stack([img] * 3, axis=2)  # colour file of a gray picture
        data = cjpeg(img, args, scans)
        with open(os.path.join(OUT, name + ".jpg"), "wb") as f:
            f.write(data)
        if name.startswith("unsupported-"):
            continue
        dec = Image.open(io.BytesIO(data))
        dec.load()
        assert dec.mode in ("RGB", "L"), (name, dec.mode)
        dec.save(os.path.join(OUT, name + ".png"), optimize=True)
        print(f"{name}: {len(data)} bytes, {dec.mode} {dec.size}", file=sys.stderr)


if __name__ == "__main__":
    main()
