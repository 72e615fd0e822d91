"""pygfx's side of scripts/bench_compare.py: run with an interpreter that has pygfx 0.17 (not a
boneviewer dependency; see bench_compare.py's docstring for the venv).

    PYTHON scripts/bench_pygfx.py frames MODEL.glb WIDTHxHEIGHT FRAMES CAMERA.json ENV.hdr
    PYTHON scripts/bench_pygfx.py first-png MODEL.glb WIDTHxHEIGHT OUT.png CAMERA.json ENV.hdr

The model is drawn with pygfx's own lit material: its glTF loader gives each PBR material a
MeshStandardMaterial (metalness, roughness, base colour texture), lit by the scene's environment
(``gfx.Scene(environment=...)``: pygfx's image-based light, a cube map with its mip chain), from the
.hdr file (read with boneviewer's reader, viewer.hdr, which needs only numpy), turned into six
256-pixel float16 faces here. The camera is boneviewer's (eye, target, vertical fov, near, far
from CAMERA.json), so both draw the same pixels' worth of model, at one internal pixel per output
pixel (pixel_ratio 1, pixel_filter "nearest": boneviewer draws without supersampling too). ``frames`` plays the first clip
(AnimationMixer) and reads every frame back (the offscreen canvas's draw() returns the image);
it prints one JSON line {"fps": ...}. ``first-png`` is the work a user's first picture costs:
import, load, light, one frame, a PNG.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

STARTED = time.perf_counter()
ROOT = Path(__file__).resolve().parents[1]
FACE = 256
WARMUP = 10


def cube_faces(equirect, size: int = FACE):
    """(6, size, size, 4) float16 faces +X, -X, +Y, -Y, +Z, -Z (the cube-map layout wgpu samples),
    each texel the equirectangular image in its direction (nearest texel: enough for a benchmark)."""
    import numpy as np

    height, width, _ = equirect.shape
    a = (np.arange(size) + 0.5) / size * 2.0 - 1.0
    u, v = np.meshgrid(a, a)
    one = np.ones_like(u)
    directions = [(one, -v, -u), (-one, -v, u), (u, one, v), (u, -one, -v), (u, -v, one), (-u, -v, -one)]
    faces = np.empty((6, size, size, 4), np.float16)
    for index, (x, y, z) in enumerate(directions):
        norm = np.sqrt(x * x + y * y + z * z)
        longitude = np.arctan2(x, -z)
        latitude = np.arcsin(np.clip(y / norm, -1.0, 1.0))
        column = ((longitude / (2 * np.pi) + 0.5) * width).astype(int) % width
        row = np.clip(((0.5 - latitude / np.pi) * height).astype(int), 0, height - 1)
        faces[index, ..., :3] = equirect[row, column]
        faces[index, ..., 3] = 1.0
    return faces


def build(model: str, size, camera_file: str, environment: str):
    import numpy as np
    import pygfx as gfx
    from rendercanvas.offscreen import RenderCanvas

    sys.path.insert(0, str(ROOT))
    from viewer.hdr import read_hdr

    canvas = RenderCanvas(size=size, pixel_ratio=1)
    # One internal pixel per output pixel and a plain copy out, as boneviewer draws (no MSAA): pygfx's
    # default (twice the pixels each way, then a Mitchell filter) would be four times the work.
    renderer = gfx.renderers.WgpuRenderer(canvas, pixel_ratio=1, pixel_filter="nearest")
    faces = cube_faces(read_hdr(environment))
    cube = gfx.Texture(faces, dim=2, size=(FACE, FACE, 6), generate_mipmaps=True)
    scene = gfx.Scene(environment=cube)
    gltf = gfx.load_gltf(model, quiet=True)
    scene.add(gltf.scene)
    lit = sum(isinstance(o.material, gfx.MeshStandardMaterial) for o in gltf.scene.iter() if getattr(o, "material", None))
    view = json.loads(Path(camera_file).read_text())
    camera = gfx.PerspectiveCamera(view["fov"], size[0] / size[1], depth_range=(view["near"], view["far"]))
    camera.local.position = view["eye"]
    camera.look_at(view["target"])
    mixer = None
    if gltf.animations:
        mixer = gfx.AnimationMixer()
        mixer.clip_action(gltf.animations[0]).play()
    canvas.request_draw(lambda: renderer.render(scene, camera))
    return canvas, mixer, lit, np


def frames(model: str, size, count: int, camera_file: str, environment: str) -> None:
    canvas, mixer, lit, np = build(model, size, camera_file, environment)
    step = 1.0 / 30.0
    for _ in range(WARMUP):
        if mixer is not None:
            mixer.update(step)
        np.asarray(canvas.draw())
    times = []
    for _ in range(count):
        start = time.perf_counter()
        if mixer is not None:
            mixer.update(step)
        image = np.asarray(canvas.draw())  # the frame, read back
        times.append(time.perf_counter() - start)
    assert image.shape[:2] == (size[1], size[0])
    print(json.dumps({"fps": 1.0 / float(np.median(times)), "lit_meshes": lit, "animated": mixer is not None}))


def first_png(model: str, size, out: str, camera_file: str, environment: str) -> None:
    import imageio.v3 as iio

    canvas, mixer, lit, np = build(model, size, camera_file, environment)
    if mixer is not None:
        mixer.update(0.0)
    iio.imwrite(out, np.asarray(canvas.draw()))
    print(json.dumps({"seconds_in_process": time.perf_counter() - STARTED, "lit_meshes": lit}))


def main(argv) -> int:
    mode, model, size, third, camera_file, environment = argv
    width, height = (int(v) for v in size.lower().split("x"))
    if mode == "frames":
        frames(model, (width, height), int(third), camera_file, environment)
    else:
        first_png(model, (width, height), third, camera_file, environment)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
