"""three.js's own pictures of the fidelity cases: the yardstick the issue measures boneviewer by
(our picture nearer to Babylon.js's than three.js's is), recorded as Babylon's are:

    (cd tests/threejs_render && npm ci)       # once: three.js 0.187.0 (package-lock.json)
    python tests/threejs_render/record_threejs.py [--only PATTERN ...]

into tests/data/threejs_pictures/<case>.png and tests/data/threejs_pictures.json (three's version, the
WebGL renderer, each case's inputs by sha256, as tests/data/babylon_pictures.json has them).
Babylon's recorder (tests/babylon_render/record.py) draws them: the same Chromium, on SwiftShader,
the same loopback server, the same camera numbers (record.camera_parameters); only the page
(page.html here) differs: three's WebGLRenderer (no antialiasing, transparent clear), the glTF's
rest pose (GLTFLoader, no animation played), the .hdr (HDRLoader) through
PMREMGenerator.fromEquirectangular as scene.environment (three's standard image-based light), no
lights, no background; NeutralToneMapping for khr-neutral, ACESFilmicToneMapping for aces and
LinearToneMapping for none (Babylon scales by the exposure without a tone mapping too, which
three's NoToneMapping would not), toneMappingExposure the exposure, sRGB output.
--only: cases whose name matches a shell pattern; the others keep their record. About 5 s a picture.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "babylon_render"), str(HERE.parents[1])]

import fidelity_cases as fc  # noqa: E402
import record  # noqa: E402  (Babylon's recorder: its server, Chromium and camera)
import record_all  # noqa: E402

THREE_VERSION = "0.187.0"
# three looks a world direction d up in an equirectangular picture at u = 0.5 + atan2(d.z, d.x) / 2pi
# (+X the middle of the picture); Babylon's right-handed scene at u = 0.5 + atan2(d.x, -d.z) / 2pi
# (-Z the middle, +X three quarters across). three samples at transpose(R(scene.environmentRotation)) d,
# which must be (-d.z, d.y, d.x) for both to see the same light from the same side: R is a quarter turn
# about +Y. (Checked on the coloured light's mirror spheres: the other sign puts the orange key on the
# wrong side: -9.5 dB from Babylon's picture on metal_rough_grid, against -19.8 with this one.)
ENVIRONMENT_ROTATION_Y = math.pi / 2


class ThreeRecorder(record.Recorder):
    """Babylon's recorder with three.js's page (SwiftShader only: the issue's harness)."""

    folder = HERE
    library = "three.js"
    installed_file = "three/build/three.module.js"

    def __init__(self, chromium: str | None = None, environment_rotation_y: float = ENVIRONMENT_ROTATION_Y):
        super().__init__(chromium, "swiftshader")
        self.environment_rotation_y = environment_rotation_y

    def page_options(self) -> dict:
        return {"environmentRotationY": self.environment_rotation_y}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="PATTERN", help="record only the cases matching these")
    args = parser.parse_args(argv)
    chosen = record_all.choose(args.only)
    if not chosen:
        print(f"no case matches {' '.join(args.only)}", file=sys.stderr)
        return 2
    record_all.frame_cameras(chosen, reframe=False)
    version = _installed_version()
    if version != THREE_VERSION:
        raise SystemExit(f"three.js {version} is installed, not {THREE_VERSION}: run `npm ci` in {HERE}")
    previous = fc.recorded_threejs().get("cases", {}) if args.only else {}

    def check_info(info):
        if f"0.{info['three']}.0" != THREE_VERSION:
            raise SystemExit(f"the page ran three.js r{info['three']}, not {THREE_VERSION}")

    try:
        with ThreeRecorder() as recorder:
            cases = record_all.record_pictures(recorder, chosen, previous, fc.THREEJS_PICTURES_DIR, check_info,
                                               whole=not args.only)
    except record.Problem as problem:
        print(f"record_threejs.py: {problem}", file=sys.stderr)
        return 2
    document = {
        "description": "three.js's own pictures of the fidelity cases (tests/fidelity_cases.py), drawn by "
                       "tests/threejs_render/record_threejs.py in headless Chromium (WebGL2 on SwiftShader) with "
                       "Babylon's recorder and camera: WebGLRenderer without antialiasing, the file's rest pose, "
                       "PMREMGenerator.fromEquirectangular(environment) as scene.environment (turned "
                       "environmentRotation.y so the light comes from Babylon's side) and no other light, no "
                       "background, Neutral/ACESFilmic/Linear tone mapping with the exposure given, sRGB output, "
                       "transparent background. Inputs are recorded by sha256; a picture whose inputs changed "
                       "must be recorded again.",
        "generator": "tests/threejs_render/record_threejs.py",
        "versions": {"three": THREE_VERSION},
        "environment_rotation_y": ENVIRONMENT_ROTATION_Y,
        "rasterizer": "swiftshader",
        "webgl_renderer": sorted({c["webgl_renderer"] for c in cases.values()}),
        "cases": cases,
    }
    record_all.write_record(fc.THREEJS_RECORD_FILE, document, fc.THREEJS_PICTURES_DIR)
    return 0


def _installed_version() -> str:
    import json

    package = HERE / "node_modules" / "three" / "package.json"
    return json.loads(package.read_text())["version"] if package.exists() else "none"


if __name__ == "__main__":
    sys.exit(main())
