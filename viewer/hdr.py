"""Radiance .hdr (RGBE) files: the header and the layout of the pixel data, checked fast.

``read_hdr_header(path)`` reads the header alone (bounded: a few KiB at most) and gives the
image's (width, height); ``check_hdr(path)`` also walks every scanline's run lengths without
decoding a pixel, so a file cut short is found in milliseconds, before any GL work. Every
fault is one ViewerError line that starts with the file's path. Only the orientation every
equirectangular environment uses is read: ``-Y height +X width`` (rows top first).
"""

from __future__ import annotations

import os
import re

from .errors import ViewerError

MAGICS = (b"#?RADIANCE", b"#?RGBE")
HEADER_LIMIT = 64 * 1024          # bytes of header (text lines up to the resolution line)
MAX_SIDE = 16384                  # pixels per side; wider or taller is refused before anything is read
MAX_PIXELS = 16384 * 8192         # a 16k equirectangular image, the largest commonly published
RLE_WIDTHS = (8, 32767)           # the widths new-style run-length scanlines can have
_RESOLUTION = re.compile(rb"([-+])([XY]) +(\d{1,12}) +([-+])([XY]) +(\d{1,12})")


def read_hdr_header(path) -> tuple[int, int]:
    """(width, height) of a Radiance .hdr file, from its header alone."""
    width, height, _ = _header(path)
    return width, height


def check_hdr(path) -> tuple[int, int]:
    """(width, height), once the header is sound and the pixel data is all there: flat scanlines
    fill width x height x 4 bytes; run-length ones each start with their marker and their runs
    add up to the width, in every channel, within the file. Nothing is decoded."""
    width, height, offset = _header(path)
    with open(path, "rb") as file:
        file.seek(offset)
        data = file.read(height * (4 + 8 * width))  # the most any scanline layout can take
    if not _run_length_encoded(data, width):
        needed = width * height * 4
        if len(data) < needed:
            raise ViewerError(f"{path}: truncated: {len(data)} bytes of pixel data for {width}x{height} "
                              f"flat pixels, which need {needed}")
        return width, height
    row = _walk_runs(data, width, height)
    if row is not None:
        raise ViewerError(f"{path}: {row}")
    return width, height


def _header(path) -> tuple[int, int, int]:
    """(width, height, offset of the pixel data)."""
    try:
        with open(path, "rb") as file:
            head = file.read(HEADER_LIMIT)
            size = os.fstat(file.fileno()).st_size
    except IsADirectoryError:
        raise ViewerError(f"{path}: is a folder, not an .hdr file") from None
    except OSError as error:
        raise ViewerError(f"{path}: cannot read it: {error.strerror or error}") from None
    if not head.startswith(MAGICS):
        raise ViewerError(f"{path}: not a Radiance .hdr file (it does not start with #?RADIANCE)")
    end = head.find(b"\n\n")
    if end < 0:
        if len(head) >= HEADER_LIMIT:
            raise ViewerError(f"{path}: not a Radiance .hdr file (no end of header in its first "
                              f"{HEADER_LIMIT // 1024} KiB)")
        raise ViewerError(f"{path}: truncated: the header has no end (the file is {size} bytes)")
    for line in head[:end].split(b"\n")[1:]:
        if line.startswith(b"FORMAT=") and line.strip() != b"FORMAT=32-bit_rle_rgbe":
            shown = line.decode("ascii", "replace")[7:47]
            raise ViewerError(f"{path}: unsupported pixel format {shown!r} (only 32-bit_rle_rgbe is read)")
    newline = head.find(b"\n", end + 2)
    if newline < 0:
        raise ViewerError(f"{path}: truncated: the file ends in its resolution line" if len(head) < HEADER_LIMIT
                          else f"{path}: not a Radiance .hdr file (no resolution line)")
    line = head[end + 2:newline].strip()
    match = _RESOLUTION.fullmatch(line)
    if match is None:
        shown = line.decode("ascii", "replace")[:40]
        raise ViewerError(f"{path}: not a Radiance .hdr file (its resolution line is {shown!r}, "
                          "expected '-Y HEIGHT +X WIDTH')")
    if (match[1], match[2], match[4], match[5]) != (b"-", b"Y", b"+", b"X"):
        shown = line.decode("ascii")
        raise ViewerError(f"{path}: unsupported orientation {shown!r} (only '-Y HEIGHT +X WIDTH', rows top "
                          "first, is read)")
    height, width = int(match[3]), int(match[6])
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE) or width * height > MAX_PIXELS:
        raise ViewerError(f"{path}: {width}x{height} pixels is too large an environment (at most "
                          f"{MAX_SIDE} a side and {MAX_PIXELS // (1 << 20)} million pixels)")
    offset = newline + 1
    least = height * (4 + 8 * -(-width // 128)) if RLE_WIDTHS[0] <= width <= RLE_WIDTHS[1] else width * height * 4
    if size - offset < least:
        raise ViewerError(f"{path}: truncated: {max(size - offset, 0)} bytes of pixel data for {width}x{height} "
                          f"pixels, which need at least {least}")
    return width, height, offset


def _run_length_encoded(data: bytes, width: int) -> bool:
    """Whether the scanlines are new-style run-length encoded, as the first one's marker says
    (as stb_image and Babylon.js decide: otherwise the data is flat RGBE pixels)."""
    return (RLE_WIDTHS[0] <= width <= RLE_WIDTHS[1] and len(data) >= 4 and data[0] == 2 and data[1] == 2
            and not data[2] & 0x80)


def _walk_runs(data: bytes, width: int, height: int) -> str | None:
    """None when every scanline is whole, else what is wrong (the first fault). One step per run:
    a long literal run (up to 128 bytes) is one step, so a usual file takes milliseconds."""
    size = len(data)
    marker = bytes((2, 2, width >> 8, width & 0xFF))
    position = 0
    for row in range(height):
        if position + 4 > size:
            return f"truncated: the pixel data ends at scanline {row} of {height}"
        if data[position:position + 4] != marker:
            return f"scanline {row} of {height} does not start with its run-length marker (corrupt or truncated)"
        position += 4
        for _channel in range(4):
            left = width
            while left > 0:
                if position >= size:
                    return f"truncated: the pixel data ends in scanline {row} of {height}"
                count = data[position]
                if count > 128:
                    count -= 128
                    position += 2
                elif count:
                    position += 1 + count
                else:
                    return f"scanline {row} of {height} has a run of length 0 (corrupt)"
                left -= count
            if left:
                return f"scanline {row} of {height} has runs longer than the width (corrupt)"
        if position > size:
            return f"truncated: the pixel data ends in scanline {row} of {height}"
    return None
