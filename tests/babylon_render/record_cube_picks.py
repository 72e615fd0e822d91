"""Records which pixel of an equirectangular picture each texel of Babylon.js's environment cube
holds: tests/data/babylon_cube_picks.npz (and .json: the picture's sha256, Babylon's version, the
cube's size), the reference tests/test_environment.py holds viewer.render.environment's cube to.

    python tests/babylon_render/record_cube_picks.py [--size 128] [--rasterizer swiftshader]

The picture is an index picture (index_picture(): each pixel's value is its own row and column,
integers an .hdr holds exactly), written as a Radiance .hdr; Babylon.js 9.28 loads it as
``new HDRCubeTexture(file, scene, SIZE)`` in headless Chromium (record.py's browser and server),
and the page reads level 0 of each GL face back through a framebuffer as floats. So the record
says, for every texel of the six faces (GL order +X -X +Y -Y +Z -Z, rows as uploaded), the row
and column Babylon picked, whatever its direction maths and rounding are.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT)]

from record import RASTERIZERS, Recorder  # noqa: E402

OUT = ROOT / "tests" / "data" / "babylon_cube_picks.npz"
RECORD = OUT.with_suffix(".json")
PICTURE_SIZE = (256, 512)  # rows, columns: at least Babylon's own rounding (no finer picks)

_READ_FACES = r"""
async (o) => {
  const engine = new BABYLON.Engine(document.getElementById("picture"), false, {}, false);
  const scene = new BABYLON.Scene(engine);
  scene.useRightHandedSystem = true;
  const cube = await new Promise((resolve, reject) => {
    const texture = new BABYLON.HDRCubeTexture(o.url, scene, o.size, false, true, false, false,
      () => resolve(texture), (message) => reject(new Error("environment: " + message)));
  });
  const gl = engine._gl;
  gl.getExtension("EXT_color_buffer_float");
  const framebuffer = gl.createFramebuffer();
  gl.bindFramebuffer(gl.FRAMEBUFFER, framebuffer);
  const faces = [];
  for (let face = 0; face < 6; face++) {
    gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_CUBE_MAP_POSITIVE_X + face,
                            cube.getInternalTexture()._hardwareTexture.underlyingResource, 0);
    if (gl.checkFramebufferStatus(gl.FRAMEBUFFER) !== gl.FRAMEBUFFER_COMPLETE) throw new Error("face " + face + " unreadable");
    const texels = new Float32Array(o.size * o.size * 4);
    gl.readPixels(0, 0, o.size, o.size, gl.RGBA, gl.FLOAT, texels);
    const bytes = new Uint8Array(texels.buffer);
    let binary = "";
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    faces.push(btoa(binary));
  }
  const version = BABYLON.Engine.Version;
  engine.dispose();
  return {faces, version};
}
"""


def index_picture() -> np.ndarray:
    """(256, 512, 3) float32: pixel (row, column) holds (row, column % 256, column // 256), all
    integers below 256, which RGBE stores exactly."""
    rows, columns = np.meshgrid(np.arange(PICTURE_SIZE[0]), np.arange(PICTURE_SIZE[1]), indexing="ij")
    return np.stack([rows, columns % 256, columns // 256], axis=-1).astype(np.float32)


def index_picture_bytes(folder) -> bytes:
    """The index picture as viewer.hdr writes it (deterministic bytes)."""
    from viewer.hdr import write_hdr

    path = Path(folder) / "index.hdr"
    write_hdr(path, index_picture())
    return path.read_bytes()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=128, help="the cube's size (HDRCubeTexture's third argument)")
    parser.add_argument("--rasterizer", default="swiftshader", choices=RASTERIZERS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder, Recorder(rasterizer=args.rasterizer) as recorder:
        data = index_picture_bytes(folder)
        result = recorder.evaluate(_READ_FACES, {"url": recorder.url(Path(folder) / "index.hdr"), "size": args.size},
                                   "read its environment cube back")
    texels = np.stack([np.frombuffer(base64.b64decode(face), np.float32).reshape(args.size, args.size, 4)
                       for face in result["faces"]])
    rows = texels[..., 0].astype(np.uint16)
    columns = (texels[..., 1] + 256 * texels[..., 2]).astype(np.uint16)
    if not (np.array_equal(rows, texels[..., 0]) and np.array_equal(columns, texels[..., 1] + 256 * texels[..., 2])):
        raise SystemExit("Babylon's cube holds values that are not a pixel's index: not a nearest pick")
    np.savez_compressed(OUT, rows=rows, columns=columns)
    RECORD.write_text(json.dumps({
        "description": "For each texel of Babylon.js's HDRCubeTexture(picture, scene, size) level 0 (GL faces +X -X "
                       "+Y -Y +Z -Z, rows as uploaded), the row and column of the picture's pixel it holds; the "
                       "picture is tests/babylon_render/record_cube_picks.py's index_picture(), written by "
                       "viewer.hdr.write_hdr.",
        "generator": "tests/babylon_render/record_cube_picks.py" + (f" --size {args.size}" if args.size != 128 else ""),
        "babylon": result["version"], "rasterizer": args.rasterizer, "size": args.size,
        "picture_sha256": hashlib.sha256(data).hexdigest(), "picture_shape": list(PICTURE_SIZE),
    }, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size} bytes) and {RECORD.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
