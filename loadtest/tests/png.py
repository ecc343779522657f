"""Just enough of a PNG decoder to look at a browser screenshot: 8-bit RGB or RGBA, not interlaced."""

import struct
import zlib
from typing import List, Tuple


def decode(data: bytes) -> Tuple[int, int, List[bytes], int]:
    """(width, height, rows of pixel bytes, bytes per pixel)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    offset, idat = 8, b""
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError("unsupported PNG: depth %d, colour type %d, interlace %d" % (depth, colour, interlace))
            pixel = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    raw = zlib.decompress(idat)
    stride = width * pixel
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        row = _unfilter(raw[start], bytearray(raw[start + 1:start + 1 + stride]), previous, pixel)
        rows.append(bytes(row))
        previous = row
    return width, height, rows, pixel


def _unfilter(kind: int, row: bytearray, previous: bytearray, pixel: int) -> bytearray:
    for i in range(len(row)):
        left = row[i - pixel] if i >= pixel else 0
        up = previous[i]
        corner = previous[i - pixel] if i >= pixel else 0
        if kind == 1:
            row[i] = (row[i] + left) & 0xFF
        elif kind == 2:
            row[i] = (row[i] + up) & 0xFF
        elif kind == 3:
            row[i] = (row[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            estimate = left + up - corner
            pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
            row[i] = (row[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
    return row
