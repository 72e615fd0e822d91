"""What a first render of a character costs: a process that renders a textured FBX to a PNG
imports none of the modules it does not need and asks GL for no mipmaps (each of these cost that
first PNG 10-130 ms; scripts/bench_formats.py times the whole against f3d)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).parent / "data"

PROBE = """
import json, sys
import moderngl

def refused(*args, **kwargs):
    raise AssertionError("glGenerateMipmap asked for")

moderngl.Texture.build_mipmaps = refused
from viewer.cli import main
status = main(["render", sys.argv[1], "--out", sys.argv[2], "--size", "96x96"])
unneeded = ["numpy.ma", "viewer.gltf", "hashlib", "PIL.BmpImagePlugin", "PIL.GifImagePlugin", "PIL.PpmImagePlugin",
            *sys.argv[3:]]
print(json.dumps({"status": status, "imported": [name for name in unneeded if name in sys.modules]}))
"""


def test_a_textured_fbx_renders_without_the_modules_and_gl_work_it_does_not_need(tmp_path):
    out = tmp_path / "first.png"
    done = subprocess.run([sys.executable, "-c", PROBE, str(DATA / "fbx" / "cesiumman.fbx"), str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"status": 0, "imported": []}, report
    from PIL import Image

    with Image.open(out) as image:
        assert image.format == "PNG" and image.size == (96, 96)
        pixels = np.asarray(image.convert("RGBA")).reshape(-1, 4)
    # the character is drawn, textured (more than the background's few colours)
    assert len(np.unique(pixels, axis=0)) > 200


def test_an_untextured_fbx_renders_without_pillow(tmp_path):
    """A model with no texture never needs Pillow: the PNG is written by images.png_bytes (zlib),
    15-20 ms less of a small file's first picture."""
    out = tmp_path / "plain.png"
    done = subprocess.run([sys.executable, "-c", PROBE, str(DATA / "fbx" / "riggedsimple_transformed.fbx"), str(out),
                           "PIL", "PIL.Image"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"status": 0, "imported": []}, report
    from PIL import Image

    with Image.open(out) as image:
        assert image.format == "PNG" and image.size == (96, 96)
        pixels = np.asarray(image.convert("RGBA")).astype(int)
    drawn = np.abs(pixels - pixels[0, 0]).sum(axis=-1) > 30  # not the background's colour
    assert 0.05 < drawn.mean() < 0.95  # the cylinder is there, framed


def encoded(kind: str, pixels: np.ndarray) -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format=kind)
    return buffer.getvalue()


def test_textures_decode_through_their_own_plugin_as_image_open_decodes_them(monkeypatch):
    import io

    from PIL import Image

    from viewer.images import decode_pixels

    pixels = np.random.default_rng(2).integers(0, 256, (9, 13, 3), dtype=np.uint8)
    for kind in ("PNG", "JPEG"):
        data = encoded(kind, pixels)
        with Image.open(io.BytesIO(data)) as opened:
            assert np.array_equal(decode_pixels(data), np.asarray(opened.convert("RGBA")))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 50)  # 117 pixels: more than twice the limit
    with pytest.raises(Image.DecompressionBombError):
        decode_pixels(encoded("PNG", pixels))
    with pytest.raises(Image.UnidentifiedImageError):
        decode_pixels(b"GIF89a not a texture format")


def test_one_shot_commands_end_at_once_with_their_work_out(tmp_path):
    """render, info, export and check leave without the interpreter's teardown (viewer.cli.run:
    about 45 ms of a small render): their files whole, their output flushed, their status
    theirs, and an FBX reader started ahead for a command that then refused its options stopped
    (the exit handlers still run)."""
    import os
    import time

    import shutil

    fbx = tmp_path / "own.fbx"  # a path no other test's reader names (the suite runs on every core)
    shutil.copyfile(DATA / "fbx" / "riggedsimple_transformed.fbx", fbx)
    done = subprocess.run([sys.executable, "-m", "viewer", "render", str(fbx), "--out", str(tmp_path / "a.png"),
                           "--size", "64x64"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip().endswith("wrote " + str(tmp_path / "a.png") + " (64x64)")
    from PIL import Image

    with Image.open(tmp_path / "a.png") as image:
        assert image.size == (64, 64)
    refused = subprocess.run([sys.executable, "-m", "viewer", "render", str(fbx), "--out", str(tmp_path / "a.txt")],
                             capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "error:" in refused.stderr
    time.sleep(0.5)
    readers = [pid for pid in os.listdir("/proc") if pid.isdigit() and _reads(pid, str(fbx))]
    assert readers == [], "a reader started ahead outlived its command"
    listing = subprocess.run(f"{sys.executable} -m viewer check {DATA / 'gltf-samples'} | head -1", shell=True,
                             capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert listing.stdout.count("\n") == 1 and "Exception ignored" not in listing.stderr


def _reads(pid: str, path: str) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return path.encode() in handle.read()
    except OSError:
        return False
