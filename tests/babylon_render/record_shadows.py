"""Records Babylon.js's pictures of the shadow cases (tests/shadow_cases.py): each character with a
directional light added to a copy of its file, the studio environment, a ShadowGenerator with
percentage-closer filtering and a ground that receives, into tests/data/babylon_shadows/<case>.png,
and tests/data/babylon_shadows.json with each case's inputs (the lit model's files, the environment
and the camera by sha256; the size and the page's shadow settings) and Babylon's version:

    (cd tests/babylon_render && npm ci)       # once: Babylon.js 9.28 (package-lock.json)
    python tests/babylon_render/record_shadows.py [--reframe]

--reframe: write the cameras again (tests/data/shadow_cameras/<model>.json; by default an existing
one is kept, since it is an input). Needs Debian's chromium and Playwright (record.py); SwiftShader.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE), str(HERE.parents[1])]

import shadow_cases as sc  # noqa: E402
from record import Recorder, write_png  # noqa: E402
from record_all import package_version  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reframe", action="store_true", help="rewrite the cameras")
    args = parser.parse_args(argv)
    sc.CAMERAS_DIR.mkdir(parents=True, exist_ok=True)
    for case in sc.CASES:
        if args.reframe or not case.camera.exists():
            sc.framed_camera(case).save(case.camera)
            print(f"framed {case.camera.relative_to(sc.ROOT)}")
    versions = {"babylon": package_version("babylonjs"), "babylon_loaders": package_version("babylonjs-loaders")}
    cases = {}
    with tempfile.TemporaryDirectory() as folder, Recorder() as recorder:
        for case in sc.CASES:
            start = time.perf_counter()
            pixels, info = recorder.picture(case.lit_model(folder), case.environment_file, case.camera,
                                            size=sc.SIZE, shadows=case.babylon_shadows())
            if info["babylon"] != versions["babylon"]:
                raise SystemExit(f"the page ran Babylon.js {info['babylon']}, not {versions['babylon']}")
            write_png(case.picture, pixels)
            cases[case.name] = {"picture": case.picture.relative_to(sc.DATA_DIR).as_posix(),
                                "inputs": case.inputs(folder), "webgl_renderer": info["renderer"]}
            print(f"{case.name}: {time.perf_counter() - start:.1f} s")
    document = {
        "description": "Babylon.js's own pictures of the shadow cases (tests/shadow_cases.py), drawn by "
                       "tests/babylon_render/record.py in headless Chromium (WebGL2 on SwiftShader): right-handed "
                       "scene, the file's rest pose, HDRCubeTexture(environment, scene, 256) and the file's "
                       "directional light, a ShadowGenerator with percentage-closer filtering (QUALITY_HIGH) on "
                       "that light, every mesh casting and receiving, a shadow-only BackgroundMaterial ground; "
                       "khr-neutral tone mapping at exposure 1, boneviewer's camera, transparent background, no "
                       "antialiasing. Inputs are recorded by sha256; a picture whose inputs changed must be "
                       "recorded again.",
        "generator": "tests/babylon_render/record_shadows.py", "versions": versions, "cases": cases,
    }
    sc.RECORD_FILE.write_text(json.dumps(document, indent=1) + "\n")
    total = sum(case.picture.stat().st_size for case in sc.CASES)
    print(f"wrote {sc.RECORD_FILE.relative_to(sc.ROOT)} ({len(cases)} cases; pictures {total / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
