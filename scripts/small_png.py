"""Docs screenshots made small: a PNG rewritten with at most 256 colours (median cut, no
dithering: flat page colours and thin borders stay; two k-means passes after it keep small
coloured text its colour, which median cut alone turned from orange to red) and zlib's best
compression, about a third to a half of the browser's file. Used by the screenshot scripts."""

from __future__ import annotations

from pathlib import Path

from PIL import Image


def small(path: Path) -> None:
    with Image.open(path) as image:
        flat = image.convert("RGB")
    fewer = flat.quantize(
        colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE, kmeans=2
    )
    fewer.save(path, optimize=True)
