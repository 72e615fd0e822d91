"""Writes the fidelity tests' generated lights into tests/data/environments/ (the first light is the
shared studio.hdr, copied beside them): coloured.hdr and outdoor.hdr.

    python tests/make_environments.py [coloured|outdoor|all] [OUT.hdr]

(no name: coloured; OUT only with one name.)

An equirectangular Radiance .hdr, 512x256, +Y up, run-length encoded scanlines, made here in numpy
(no photograph): a dark blue-grey sky and a darker warm floor, a strong saturated orange soft box
(the key) high on one side, a broad blue fill low on the other, and a small green light behind.
Strongly coloured and asymmetric on purpose: a renderer that ignores the light's colour, mirrors or
turns the environment, or mixes up diffuse and specular shows it. The write is deterministic (the
same bytes on every machine: the radiance values are rounded before they are encoded).

outdoor.hdr is what the two studios lack: a small, very bright sun (1 degree in radius, radiance
1e4) 12 degrees above a hard horizon, a bright blue sky brighter towards the horizon, and a dark
ground below, a sharp step at latitude 0. Rough metal under it shows how a renderer blurs the
sun and the horizon at each roughness (its prefiltered mip chain and the level it picks).

Image layout: column x covers longitude (x + 0.5) / W * 360 - 180 degrees, row y latitude
90 - (y + 0.5) / H * 180 degrees (top row up). Where a longitude points in a 3D scene is the
renderer's convention for equirectangular maps (Babylon's HDRCubeTexture for this project).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

FOLDER = Path(__file__).parent / "data" / "environments"
OUT = FOLDER / "coloured.hdr"
WIDTH, HEIGHT = 512, 256

# (longitude, latitude) degrees, angular radius degrees, soft edge degrees, linear RGB radiance
LIGHTS = (
    ((-60.0, 35.0), 16.0, 6.0, (20.0, 4.0, 0.4)),    # the orange key
    ((110.0, 12.0), 28.0, 12.0, (0.5, 1.4, 6.0)),   # the blue fill
    ((175.0, 5.0), 9.0, 4.0, (0.4, 3.0, 0.6)),      # a green back light
)


def directions(width: int, height: int) -> np.ndarray:
    """Unit vectors (H, W, 3) of the pixel centres: x east, y up, z at longitude 0."""
    lon = np.radians((np.arange(width) + 0.5) / width * 360.0 - 180.0)
    lat = np.radians(90.0 - (np.arange(height) + 0.5) / height * 180.0)
    lon, lat = np.meshgrid(lon, lat)
    return np.stack([np.cos(lat) * np.sin(lon), np.sin(lat), np.cos(lat) * np.cos(lon)], axis=-1)


def coloured_environment(width: int = WIDTH, height: int = HEIGHT) -> np.ndarray:
    """(H, W, 3) float32 linear radiance."""
    d = directions(width, height)
    up = d[..., 1:2]
    sky = np.array([0.10, 0.10, 0.13]) + (np.array([0.04, 0.05, 0.10]) - np.array([0.10, 0.10, 0.13])) * np.clip(up, 0, 1)
    floor = np.array([0.05, 0.04, 0.03]) * (1.0 - 0.5 * np.clip(-up, 0, 1))
    pixels = np.where(up >= 0, sky, floor)
    for light in LIGHTS:
        pixels = pixels + _disc(d, *light)
    return _rounded(pixels)


def _disc(d: np.ndarray, where, radius: float, soft: float, colour) -> np.ndarray:
    """A round light's radiance over the directions ``d``: ``colour`` within ``radius`` degrees of
    (longitude, latitude) ``where``, fading smoothly over ``soft`` degrees either side of its edge."""
    lon, lat = np.radians(where[0]), np.radians(where[1])
    centre = np.array([np.cos(lat) * np.sin(lon), np.sin(lat), np.cos(lat) * np.cos(lon)])
    angle = np.degrees(np.arccos(np.clip(d @ centre, -1.0, 1.0)))
    t = np.clip((radius + soft - angle) / (2.0 * soft), 0.0, 1.0)
    return (t * t * (3.0 - 2.0 * t))[..., None] * np.array(colour)


# the outdoor light: the sun's (longitude, latitude), angular radius and soft edge in degrees, radiance
SUN = ((150.0, 12.0), 1.0, 0.25, (1.0e4, 0.96e4, 0.88e4))
SKY_HORIZON, SKY_ZENITH = (1.3, 1.4, 1.6), (0.35, 0.55, 1.1)
GROUND = (0.045, 0.04, 0.035)


def outdoor_environment(width: int = WIDTH, height: int = HEIGHT) -> np.ndarray:
    """(H, W, 3) float32 linear radiance: sky above latitude 0, ground below, and the sun."""
    d = directions(width, height)
    up = d[..., 1:2]
    sky = np.array(SKY_HORIZON) + (np.array(SKY_ZENITH) - np.array(SKY_HORIZON)) * np.sqrt(np.clip(up, 0, 1))
    pixels = np.where(up >= 0, sky, np.array(GROUND))  # the hard horizon: no blend across it
    return _rounded(pixels + _disc(d, *SUN))


def _rounded(pixels: np.ndarray) -> np.ndarray:
    """Rounded to 4 significant digits, so the encoded bytes do not depend on the CPU's last bits."""
    return np.array([[[float(f"{v:.4g}") for v in px] for px in row] for row in pixels], dtype=np.float32)


GENERATED = {"coloured": coloured_environment, "outdoor": outdoor_environment}


def rgbe(pixels: np.ndarray) -> np.ndarray:
    """Radiance RGBE bytes (H, W, 4) of linear RGB (H, W, 3)."""
    pixels = np.asarray(pixels, np.float64)
    brightest = pixels.max(axis=-1)
    mantissa, exponent = np.frexp(brightest)
    scale = np.where(brightest > 1e-32, mantissa * 256.0 / np.where(brightest > 1e-32, brightest, 1.0), 0.0)
    out = np.zeros(pixels.shape[:2] + (4,), np.uint8)
    out[..., :3] = np.clip(np.floor(pixels * scale[..., None]), 0, 255)
    out[..., 3] = np.where(brightest > 1e-32, exponent + 128, 0)
    return out


def _rle(channel: np.ndarray) -> bytes:
    """One channel of one scanline, in Radiance's run-length code (runs of 3 or more as a run)."""
    out, values, i, n = bytearray(), channel.tolist(), 0, len(channel)
    while i < n:
        run = 1
        while i + run < n and run < 127 and values[i + run] == values[i]:
            run += 1
        if run >= 3:
            out += bytes((128 + run, values[i]))
            i += run
            continue
        start = i
        while i < n and i - start < 128:
            if i + 2 < n and values[i] == values[i + 1] == values[i + 2]:
                break
            i += 1
        out += bytes((i - start,)) + bytes(values[start:i])
    return bytes(out)


def write_hdr(path, pixels: np.ndarray) -> None:
    """A Radiance .hdr (RGBE, 32-bit_rle_rgbe, -Y H +X W, run-length encoded scanlines)."""
    pixels = np.asarray(pixels)
    height, width = pixels.shape[:2]
    if not 8 <= width < 0x8000:
        raise ValueError("run-length encoded scanlines need a width from 8 to 32767")
    data = bytearray(b"#?RADIANCE\n# made by boneviewer's tests/make_environments.py\nFORMAT=32-bit_rle_rgbe\n\n")
    data += f"-Y {height} +X {width}\n".encode()
    for row in rgbe(pixels):
        data += bytes((2, 2, width >> 8, width & 0xFF))
        for c in range(4):
            data += _rle(row[:, c])
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(data))


def read_hdr_rle(path) -> np.ndarray:
    """The reverse of write_hdr for its own files (the tests' check of the writer): (H, W, 3) float32."""
    data = Path(path).read_bytes()
    header_end = data.index(b"\n\n") + 2
    line_end = data.index(b"\n", header_end)
    _, height, _, width = data[header_end:line_end].split()
    height, width = int(height), int(width)
    pos, out = line_end + 1, np.zeros((height, width, 4), np.uint8)
    for y in range(height):
        assert data[pos:pos + 2] == b"\x02\x02" and (data[pos + 2] << 8 | data[pos + 3]) == width
        pos += 4
        for c in range(4):
            x = 0
            while x < width:
                count = data[pos]
                if count > 128:
                    out[y, x:x + count - 128, c] = data[pos + 1]
                    x, pos = x + count - 128, pos + 2
                else:
                    out[y, x:x + count, c] = np.frombuffer(data[pos + 1:pos + 1 + count], np.uint8)
                    x, pos = x + count, pos + 1 + count
    exponent = out[..., 3].astype(np.float64)
    scale = np.where(exponent > 0, np.ldexp(1.0, (exponent - 136).astype(int)), 0.0)
    return (out[..., :3] * scale[..., None]).astype(np.float32)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    names = ["coloured"]
    if argv and not argv[0].lower().endswith(".hdr"):
        wanted = argv.pop(0)
        if wanted != "all" and wanted not in GENERATED:
            print(f"error: no environment {wanted!r} (choose from {', '.join(GENERATED)}, all)", file=sys.stderr)
            return 2
        names = list(GENERATED) if wanted == "all" else [wanted]
    if argv and len(names) > 1:
        print("error: OUT.hdr goes with one environment's name", file=sys.stderr)
        return 2
    for name in names:
        out = Path(argv[0]) if argv else FOLDER / f"{name}.hdr"
        write_hdr(out, GENERATED[name]())
        print(f"wrote {out} ({WIDTH}x{HEIGHT})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
