"""viewer.hdr: Radiance .hdr files read and written; every bad file one ViewerError naming it, fast."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from viewer.errors import ViewerError
from viewer.hdr import MAX_PIXELS, decode_hdr, encode_rgbe, read_hdr, write_hdr

SHARED_STUDIO = Path(__file__).resolve().parent / "data" / "environments" / "studio.hdr"  # shared/pbr's, copied


def _picture(height=16, width=32, seed=0):
    """Values an RGBE file holds exactly (mantissas of 8 bits), with flat stretches for runs."""
    rng = np.random.default_rng(seed)
    exponent = rng.integers(-6, 4, (height, width, 1))
    mantissa = rng.integers(128, 256, (height, width, 1)).astype(np.float64)
    channels = np.concatenate([mantissa, rng.integers(0, 256, (height, width, 2)) * (mantissa / 255.0)], -1)
    picture = np.floor(channels) * 2.0 ** (exponent - 8)
    picture[:, width // 4: width // 2] = 0.75      # a run in every channel
    picture[height // 2, :] = 0.0                    # black: exponent 0
    return picture.astype(np.float32)


@pytest.mark.parametrize("rle", [True, False])
def test_round_trip_is_exact_for_values_rgbe_holds(tmp_path, rle):
    picture = _picture()
    write_hdr(tmp_path / "p.hdr", picture, rle=rle)
    back = read_hdr(tmp_path / "p.hdr")
    assert back.dtype == np.float32 and back.shape == picture.shape
    np.testing.assert_array_equal(back, picture)


def test_run_length_encoding_is_used_and_shorter(tmp_path):
    picture = np.full((8, 200, 3), 0.5, np.float32)
    write_hdr(tmp_path / "rle.hdr", picture)
    write_hdr(tmp_path / "flat.hdr", picture, rle=False)
    rle, flat = (tmp_path / "rle.hdr").read_bytes(), (tmp_path / "flat.hdr").read_bytes()
    assert len(rle) < len(flat) / 10
    start = rle.index(b"+X 200\n") + len(b"+X 200\n")
    assert rle[start:start + 4] == bytes((2, 2, 0, 200))  # new-style run-length scanline
    np.testing.assert_array_equal(read_hdr(tmp_path / "rle.hdr"), picture)


def test_any_floats_come_back_within_rgbe_precision(tmp_path):
    rng = np.random.default_rng(1)
    picture = (rng.random((12, 40, 3)) ** 3 * 50).astype(np.float32)
    write_hdr(tmp_path / "p.hdr", picture)
    back = read_hdr(tmp_path / "p.hdr")
    peak = picture.max(axis=-1, keepdims=True)
    assert np.all(np.abs(back - picture) <= peak / 128 + 1e-30)


def test_narrow_pictures_are_flat_and_negative_or_nan_is_black(tmp_path):
    picture = np.array([[[1.0, -2.0, np.nan], [0.25, 0.5, 1.0]]], np.float32)  # width 2 < 8: flat
    write_hdr(tmp_path / "n.hdr", picture)
    np.testing.assert_array_equal(read_hdr(tmp_path / "n.hdr"), [[[1.0, 0.0, 0.0], [0.25, 0.5, 1.0]]])


def test_pixels_decode_as_babylon_does():
    header = b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\nEXPOSURE=2.0\n\n-Y 1 +X 2\n"
    pixels = decode_hdr(header + bytes((128, 64, 32, 129, 200, 0, 7, 0)))
    np.testing.assert_array_equal(pixels, [[[1.0, 0.5, 0.25], [0.0, 0.0, 0.0]]])  # EXPOSURE ignored, as Babylon


def test_encode_shares_the_largest_components_exponent():
    rgbe = encode_rgbe(np.array([[[1.0, 0.5, 0.25]]]))
    assert rgbe.tolist() == [[[128, 64, 32, 129]]]


def test_reads_the_shared_studio():
    picture = read_hdr(SHARED_STUDIO)
    assert picture.shape == (256, 512, 3)
    assert np.isfinite(picture).all() and picture.min() > 0.0
    assert 0.4 < picture.mean() < 0.6 and picture.max() > 5.0  # soft boxes far brighter than the room


def _valid_file(width=16, height=4) -> bytes:
    from viewer.hdr import _rle_channel  # noqa: PLC2701 - the writer's encoder, to build broken files

    rgbe = encode_rgbe(_picture(height, width))
    parts = [b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n", f"-Y {height} +X {width}\n".encode()]
    for row in rgbe:
        parts.append(bytes((2, 2, width >> 8, width & 255)))
        parts.extend(_rle_channel(row[:, c]) for c in range(4))
    return b"".join(parts)


BAD_FILES = {
    "empty": (b"", "empty"),
    "a png": (b"\x89PNG\r\n\x1a\n" + bytes(64), "magic"),
    "no end of header": (b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n", "header"),
    "xyze": (b"#?RADIANCE\nFORMAT=32-bit_rle_xyze\n\n-Y 1 +X 1\n\x00\x00\x00\x00", "32-bit_rle_xyze"),
    "bottom-up rows": (b"#?RADIANCE\n\n+Y 1 +X 1\n\x00\x00\x00\x00", "resolution"),
    "no resolution": (b"#?RADIANCE\n\n", "resolution"),
    "absurd size": (b"#?RADIANCE\n\n-Y 999999999 +X 999999999\n", "pixels"),
    "too many pixels": (f"#?RADIANCE\n\n-Y 30000 +X 30000\n".encode(), "pixels"),
    "size beyond its bytes": (b"#?RADIANCE\n\n-Y 4000 +X 8000\n" + bytes(100), "truncated"),
    "zero width": (b"#?RADIANCE\n\n-Y 4 +X 0\n", "pixels"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_files_are_one_error_naming_the_file(tmp_path, case):
    data, words = BAD_FILES[case]
    path = tmp_path / "bad.hdr"
    path.write_bytes(data)
    start = time.perf_counter()
    with pytest.raises(ViewerError) as error:
        read_hdr(path)
    assert time.perf_counter() - start < 0.2
    message = str(error.value)
    assert str(path) in message and words in message and "\n" not in message


def test_truncated_and_corrupt_pixel_data(tmp_path):
    good = _valid_file()
    header_end = good.index(b"+X 16\n") + len(b"+X 16\n")
    cases = {
        "truncated in a run": good[:-3],
        "truncated at a scanline": good[:header_end + 10],
        "wrong scanline width": good[:header_end] + bytes((2, 2, 0, 17)) + good[header_end + 4:],
        "run past the scanline": good[:header_end + 4] + bytes((128 + 100, 1)) + good[header_end + 6:],
        "empty literal": good[:header_end + 4] + bytes((0,)) + good[header_end + 5:],
    }
    for name, data in cases.items():
        path = tmp_path / f"{name}.hdr"
        path.write_bytes(data)
        with pytest.raises(ViewerError, match="not a readable Radiance"):
            read_hdr(path)
    (tmp_path / "good.hdr").write_bytes(good)
    assert read_hdr(tmp_path / "good.hdr").shape == (4, 16, 3)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(ViewerError, match="no such file") as error:
        read_hdr(tmp_path / "nothing.hdr")
    assert "nothing.hdr" in str(error.value)
    with pytest.raises(ViewerError, match="folder"):
        read_hdr(tmp_path)


def test_absurd_size_is_refused_before_allocating(tmp_path):
    side = int(np.sqrt(MAX_PIXELS)) + 1
    path = tmp_path / "huge.hdr"
    path.write_bytes(f"#?RADIANCE\n\n-Y {side} +X {side}\n".encode() + bytes(1000))
    start = time.perf_counter()
    with pytest.raises(ViewerError):
        read_hdr(path)
    assert time.perf_counter() - start < 0.05


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_damaged_files_never_escape_as_other_errors(data):
    good = bytearray(_valid_file(width=24, height=6))
    for _ in range(data.draw(st.integers(1, 6))):
        position = data.draw(st.integers(0, len(good) - 1))
        good[position] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(good)))
    start = time.perf_counter()
    try:
        pixels = decode_hdr(bytes(good[:cut]), "damaged.hdr")
    except ViewerError as error:
        assert str(error).startswith("damaged.hdr: ")
    else:
        assert pixels.dtype == np.float32 and pixels.ndim == 3 and pixels.shape[2] == 3
    assert time.perf_counter() - start < 0.5


def test_write_refuses_a_wrong_shape(tmp_path):
    with pytest.raises(ViewerError, match="height, width, 3"):
        write_hdr(tmp_path / "x.hdr", np.zeros((4, 4)))
