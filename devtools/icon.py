#!/usr/bin/env python3
"""Draw the bundle's icon, packaging/mcpb/icon.png: 512x512 RGBA, pure Python (zlib + struct), deterministic.

    python devtools/icon.py            # (re)write packaging/mcpb/icon.png
    python devtools/icon.py --check    # exit 1 if the committed file is not what this script draws

The picture: a rounded square in Magnotia's violet, fading to indigo, with five white
bars of a sound wave (what the app records) standing on a baseline. Edges are
anti-aliased by sampling each pixel on a 2x2 grid. The same script always writes the
same bytes (fixed zlib level, no timestamps or text chunks), so a test can compare.
512x512 is the size Claude Desktop recommends. Stdlib only, Python 3.10+.
"""

from __future__ import annotations

import argparse
import struct
import sys
import zlib
from pathlib import Path

SIZE = 512
UNIT = SIZE / 128  # the drawing below is in a 128-unit grid
SUPER = 2  # samples per pixel side
OUT = Path(__file__).resolve().parent.parent / "packaging" / "mcpb" / "icon.png"

TOP = (124, 58, 237)  # violet
BOTTOM = (67, 56, 202)  # indigo
WHITE = (255, 255, 255)
RADIUS = 28.0
# Sound-wave bars: (centre x, half height), in units of the 128 grid; all share the centre line y = 64.
BARS = ((34.0, 14.0), (49.0, 30.0), (64.0, 42.0), (79.0, 24.0), (94.0, 34.0))
BAR_HALF_WIDTH = 5.0


def _in_rounded_square(x: float, y: float, lo: float, hi: float, radius: float) -> bool:
    cx = min(max(x, lo + radius), hi - radius)
    cy = min(max(y, lo + radius), hi - radius)
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius**2


def _in_bar(x: float, y: float) -> bool:
    """Inside a bar with round ends (a capsule), centred on y = 64."""
    for bx, half in BARS:
        if abs(x - bx) > BAR_HALF_WIDTH:
            continue
        top, bottom = 64.0 - half + BAR_HALF_WIDTH, 64.0 + half - BAR_HALF_WIDTH
        cy = min(max(y, top), bottom)
        if (x - bx) ** 2 + (y - cy) ** 2 <= BAR_HALF_WIDTH**2:
            return True
    return False


def pixels() -> list[bytes]:
    """Rows of RGBA bytes."""
    rows = []
    step = 1.0 / SUPER
    for py in range(SIZE):
        t = py / (SIZE - 1)
        base = tuple(round(a + (b - a) * t) for a, b in zip(TOP, BOTTOM, strict=True))
        row = bytearray()
        for px in range(SIZE):
            inside = bar = 0
            for sy in range(SUPER):
                for sx in range(SUPER):
                    x, y = (px + (sx + 0.5) * step) / UNIT, (py + (sy + 0.5) * step) / UNIT
                    if _in_rounded_square(x, y, 2.0, 126.0, RADIUS):
                        inside += 1
                        bar += _in_bar(x, y)
            total = SUPER * SUPER
            if inside == 0:
                row += b"\x00\x00\x00\x00"
                continue
            # Colour over the covered samples: white where the bars are, the gradient elsewhere.
            colour = [round((c * (inside - bar) + w * bar) / inside) for c, w in zip(base, WHITE, strict=True)]
            row += bytes([*colour, round(255 * inside / total)])
        rows.append(bytes(row))
    return rows


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(rows: list[bytes]) -> bytes:
    """An 8-bit RGBA PNG, filter 0 on every row."""
    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)
    raw = b"".join(b"\x00" + row for row in rows)
    return (
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 9)) + _chunk(b"IEND", b"")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="compare with the committed file instead of writing")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data = png(pixels())
    if args.check:
        current = args.out.read_bytes() if args.out.exists() else b""
        if current != data:
            print(f"{args.out} is not what devtools/icon.py draws; run it to update", file=sys.stderr)
            return 1
        print(f"{args.out}: up to date ({len(data)} bytes)")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    print(f"wrote {args.out} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
