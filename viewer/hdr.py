"""Radiance .hdr (RGBE) files: read an equirectangular environment, write one.

Only what environments use: ``FORMAT=32-bit_rle_rgbe`` (or no FORMAT line), the resolution
line ``-Y H +X W`` (rows top first, columns left to right), scanlines flat (4 bytes a pixel) or
new-style run-length encoded (each scanline ``2 2 W>>8 W&255``, then the four channels one after
another as runs). A pixel (r, g, b, e) is ``(r, g, b) * 2**(e - 136)`` and black when e is 0, as
Babylon.js's reader decodes it (Radiance adds half a step: within 1/256 of the same light).
EXPOSURE and other header lines are read past and ignored (Babylon.js ignores them too).

Every problem is one ViewerError naming the file. Sizes are checked against the bytes the file
has before anything is allocated, so a hostile header costs nothing. ``check_hdr`` is what the
command line, scripts and the panel call before any GL work (viewer/look.py): read_hdr's checks
without the float image; ``read_hdr_header`` reads the header alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from .errors import ViewerError, why_missing
from .files import open_atomically

MAX_SIDE = 32768
MAX_PIXELS = 8192 * 4096           # 32 Mpixel: 400 MB as float32 RGB, larger than any environment needs
MAX_HEADER = 64 * 1024             # bytes before the resolution line
_RESOLUTION = re.compile(rb"^-Y (\d{1,9}) \+X (\d{1,9})$")


def read_hdr(path) -> np.ndarray:
    """(H, W, 3) float32 linear radiance, rows top first."""
    return decode_hdr(_file_bytes(path), str(path))


def read_hdr_header(path) -> tuple[int, int]:
    """(width, height) from the header alone (its first kilobytes; no pixel is read)."""
    path = Path(path)
    try:
        with open(path, "rb") as file:
            head = file.read(MAX_HEADER + 128)
    except IsADirectoryError:
        raise ViewerError(f"{path}: is a folder, not a Radiance .hdr file") from None
    except OSError:
        raise ViewerError(f"{path}: {why_missing(path)}") from None
    width, height, _ = _header(head, _fault(str(path)))
    return width, height


def check_hdr(path) -> tuple[int, int]:
    """(width, height) once the whole file reads: header, sizes and every scanline (read_hdr's
    checks, without the float image); a bad file is one ViewerError naming it, in milliseconds."""
    rgbe = decode_rgbe(_file_bytes(path), str(path))
    return rgbe.shape[1], rgbe.shape[0]


def _file_bytes(path) -> bytes:
    path = Path(path)
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise ViewerError(f"{path}: is a folder, not a Radiance .hdr file") from None
    except OSError:
        raise ViewerError(f"{path}: {why_missing(path)}") from None


def _fault(name: str):
    def bad(why: str) -> ViewerError:
        return ViewerError(f"{name}: not a readable Radiance .hdr file: {why}")

    return bad


def decode_hdr(data: bytes, name: str = "<bytes>") -> np.ndarray:
    """read_hdr on bytes already in memory; ``name`` is what errors call the file."""
    rgbe = decode_rgbe(data, name)
    exponent = rgbe[..., 3].astype(np.int32)
    scale = np.where(exponent > 0, np.ldexp(np.float32(1.0), exponent - 136), 0.0).astype(np.float32)
    return rgbe[..., :3].astype(np.float32) * scale[..., None]


def decode_rgbe(data: bytes, name: str = "<bytes>") -> np.ndarray:
    """(H, W, 4) uint8 RGBE pixels of a file's bytes, every size checked first."""
    bad = _fault(name)
    width, height, start = _header(data, bad)
    size = len(data) - start
    # Smallest possible encoding: a run-length scanline of W bytes per channel takes at least
    # 4 + 4 * 2 * ceil(W / 127) bytes; a flat one 4 * W.
    smallest = height * min(4 + 8 * -(-width // 127), 4 * width)
    if size < smallest:
        raise bad(f"{width}x{height} pixels need at least {smallest} bytes of pixels, the file has {size} (truncated?)")
    return _pixels(memoryview(data)[start:], width, height, bad)


def _header(data: bytes, bad) -> tuple[int, int, int]:
    """(width, height, offset of the first pixel byte)."""
    if not data.startswith(b"#?"):
        raise bad("it does not start with '#?' (the Radiance magic)" if data else "the file is empty")
    end = data.find(b"\n\n", 0, MAX_HEADER)
    if end < 0:
        raise bad("no end of header (an empty line) in its first 64 KiB" if len(data) >= MAX_HEADER
                  else "the header never ends (truncated?)")
    for line in data[:end].split(b"\n")[1:]:
        if line.startswith(b"FORMAT=") and line.strip() != b"FORMAT=32-bit_rle_rgbe":
            raise bad(f"{line.decode('latin-1').strip()} (only 32-bit_rle_rgbe is read)")
    line_end = data.find(b"\n", end + 2, end + 2 + 64)
    if line_end < 0:
        raise bad("no resolution line after the header (truncated?)")
    resolution = data[end + 2:line_end].strip()
    match = _RESOLUTION.match(resolution)
    if not match:
        shown = resolution[:40].decode("latin-1")
        raise bad(f"resolution line {shown!r}: only '-Y height +X width' (rows top first) is read")
    height, width = int(match.group(1)), int(match.group(2))
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE) or width * height > MAX_PIXELS:
        raise bad(f"{width}x{height} pixels: sides must be 1 to {MAX_SIDE} and at most {MAX_PIXELS} pixels in all")
    return width, height, line_end + 1


def _pixels(data: memoryview, width: int, height: int, bad) -> np.ndarray:
    """(H, W, 4) uint8 RGBE."""
    raw = np.frombuffer(data, np.uint8)
    rle = 8 <= width <= 0x7FFF and len(raw) >= 4 and raw[0] == 2 and raw[1] == 2 and raw[2] < 128
    if not rle:
        if len(raw) < 4 * width * height:
            raise bad(f"{4 * width * height} bytes of flat pixels expected, {len(raw)} found (truncated?)")
        return raw[:4 * width * height].reshape(height, width, 4)
    out = np.empty((height, 4, width), np.uint8)
    scanline = bytearray(4 * width)
    source = bytes(data)
    position, n = 0, len(source)
    for row in range(height):
        if position + 4 > n:
            raise bad(f"the pixels end at row {row} of {height} (truncated)")
        a, b, c, d = source[position:position + 4]
        if a != 2 or b != 2 or (c << 8 | d) != width:
            raise bad(f"row {row}: a run-length scanline of {width} pixels expected, found bytes {a} {b} {c} {d}")
        position += 4
        filled = 0
        for channel_end in range(width, 4 * width + 1, width):
            while filled < channel_end:
                if position >= n:
                    raise bad(f"the pixels end at row {row} of {height} (truncated)")
                count = source[position]
                if count > 128:
                    count -= 128
                    if filled + count > channel_end or position + 1 >= n:
                        raise bad(f"row {row}: a run of {count} overflows its scanline" if position + 1 < n
                                  else f"the pixels end at row {row} of {height} (truncated)")
                    scanline[filled:filled + count] = source[position + 1:position + 2] * count
                    position += 2
                else:
                    if count == 0 or filled + count > channel_end:
                        raise bad(f"row {row}: a literal of {count} bytes does not fit its scanline")
                    if position + 1 + count > n:
                        raise bad(f"the pixels end at row {row} of {height} (truncated)")
                    scanline[filled:filled + count] = source[position + 1:position + 1 + count]
                    position += 1 + count
                filled += count
        out[row] = np.frombuffer(scanline, np.uint8).reshape(4, width)
    return out.transpose(0, 2, 1)


def encode_rgbe(pixels: np.ndarray) -> np.ndarray:
    """(H, W, 3) float -> (H, W, 4) uint8 RGBE (negative and NaN as black, the largest component's
    exponent shared)."""
    rgb = np.nan_to_num(np.asarray(pixels, np.float64), nan=0.0, posinf=1e38)
    rgb = np.maximum(rgb, 0.0)
    peak = rgb.max(axis=-1)
    mantissa, exponent = np.frexp(peak)
    visible = peak > 1e-38
    scale = np.where(visible, mantissa * 256.0 / np.where(visible, peak, 1.0), 0.0)
    out = np.zeros(rgb.shape[:-1] + (4,), np.uint8)
    out[..., :3] = np.clip(np.floor(rgb * scale[..., None]), 0, 255)
    out[..., 3] = np.where(visible, np.clip(exponent + 128, 0, 255), 0)
    return out


def _rle_channel(values: np.ndarray) -> bytes:
    """One channel of one scanline as Radiance's new-style runs (runs of 3 or more; literals up
    to 128, runs up to 127)."""
    n = len(values)
    # Start of each stretch of equal bytes, and its length.
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    lengths = np.diff(np.r_[starts, n])
    out = bytearray()
    literal_from = 0
    for start, length in zip(starts.tolist(), lengths.tolist()):
        if length < 3:
            continue
        _literals(out, values, literal_from, start)
        value = int(values[start])
        while length > 0:
            step = min(length, 127)
            out += bytes((128 + step, value))
            length -= step
            start += step
        literal_from = start
    _literals(out, values, literal_from, n)
    return bytes(out)


def _literals(out: bytearray, values: np.ndarray, begin: int, end: int) -> None:
    while begin < end:
        step = min(end - begin, 128)
        out.append(step)
        out += values[begin:begin + step].tobytes()
        begin += step


def write_hdr(path, pixels, rle: bool = True) -> None:
    """Write (H, W, 3) linear floats as a Radiance .hdr: run-length encoded scanlines (flat ones
    with ``rle=False``, or where the width is outside 8..32767 as the format requires).
    Written whole or not at all (viewer.files)."""
    pixels = np.asarray(pixels)
    if pixels.ndim != 3 or pixels.shape[2] != 3 or min(pixels.shape[:2]) < 1:
        raise ViewerError(f"{path}: an .hdr image is (height, width, 3) floats, got shape {pixels.shape}")
    height, width = pixels.shape[:2]
    if max(height, width) > MAX_SIDE or height * width > MAX_PIXELS:
        raise ViewerError(f"{path}: {width}x{height} pixels is more than an .hdr file here may hold")
    rgbe = encode_rgbe(pixels)
    parts = [b"#?RADIANCE\n# written by boneviewer\nFORMAT=32-bit_rle_rgbe\n\n", f"-Y {height} +X {width}\n".encode()]
    if rle and 8 <= width <= 0x7FFF:
        header = bytes((2, 2, width >> 8, width & 255))
        for row in rgbe:
            parts.append(header)
            parts.extend(_rle_channel(row[:, channel]) for channel in range(4))
    else:
        parts.append(rgbe.tobytes())
    try:
        with open_atomically(path) as handle:
            handle.write(b"".join(parts))
    except OSError as error:
        raise ViewerError(f"{path}: cannot write: {error.strerror or error}") from None
