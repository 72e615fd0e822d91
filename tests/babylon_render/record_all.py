"""Re-records Babylon.js's picture of every fidelity case (tests/fidelity_cases.py) into
tests/data/babylon_pictures/<case>.png, and tests/data/babylon_pictures.json with each case's
inputs (the model's files, the environment and the camera by sha256; tone mapping, exposure, size)
and Babylon's version:

    (cd tests/babylon_render && npm ci)       # once: Babylon.js 9.28 (package-lock.json)
    python tests/babylon_render/record_all.py [--only PATTERN ...] [--reframe] [--rasterizer llvmpipe]

--rasterizer llvmpipe: the same cases drawn by Babylon.js on Mesa llvmpipe (Chromium's ANGLE on GL/EGL)
instead of SwiftShader, into tests/data/babylon_pictures_llvmpipe/ and babylon_pictures_llvmpipe.json
(the same inputs' sha256, the rasteriser and the GL renderer string Chromium reports).

--only: cases whose name matches a shell pattern (e.g. 'Fox-*'); the others keep their record.
--reframe: write the samples' camera files again with boneviewer's framing
(tests/data/fidelity_cameras/<model>.json; by default an existing one is kept, since it is an input).
Needs Debian's chromium and Playwright (record.py). About 5 s a picture.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE), str(HERE.parents[1])]

import fidelity_cases as fc  # noqa: E402
from framed_camera import framed_description  # noqa: E402
from record import RASTERIZERS, Recorder, write_png  # noqa: E402


def package_version(name: str) -> str:
    return json.loads((HERE / "node_modules" / name / "package.json").read_text())["version"]


def choose(only) -> list:
    """The cases whose name matches one of the patterns (all without patterns)."""
    return [c for c in fc.all_cases() if not only or any(fnmatch.fnmatchcase(c.name, p) for p in only)]


def frame_cameras(chosen, reframe: bool) -> None:
    """The chosen samples' camera files, written with boneviewer's framing where missing (or all, reframe)."""
    fc.CAMERAS_DIR.mkdir(parents=True, exist_ok=True)
    for model in sorted({c.model for c in chosen if not c.is_scene}):
        path = fc.CAMERAS_DIR / f"{model}.json"
        if reframe or not path.exists():
            framed_description(fc.SAMPLES[model], fc.SIZE).save(path)
            print(f"framed {path.relative_to(fc.ROOT)}")


def record_pictures(recorder, chosen, previous: dict, pictures_dir: Path, check_info, whole: bool) -> dict:
    """Draws each chosen case with ``recorder`` into pictures_dir/<case>.png and returns the record's cases
    (``previous`` ones kept, in all_cases' order) with each picture's inputs and WebGL renderer.
    check_info(info) raises SystemExit when the page ran another version. whole: every case was
    recorded, so pictures of cases that are gone are removed."""
    record_cases = dict(previous)
    with tempfile.TemporaryDirectory() as scenes_dir:
        for number, case in enumerate(chosen, 1):
            start = time.perf_counter()
            model, camera = case.model_and_camera(scenes_dir)
            pixels, info = recorder.picture(model, case.environment_file, camera, case.tone_mapping, case.exposure,
                                            case.size)
            check_info(info)
            picture = pictures_dir / f"{case.name}.png"
            write_png(picture, pixels)
            record_cases[case.name] = {"picture": picture.relative_to(fc.DATA_DIR).as_posix(),
                                       "inputs": case.inputs(scenes_dir), "webgl_renderer": info["renderer"]}
            print(f"[{number}/{len(chosen)}] {case.name}: {time.perf_counter() - start:.1f} s")
    names = [c.name for c in fc.all_cases()]
    if whole:
        for stale in pictures_dir.glob("*.png"):
            if stale.stem not in names:
                stale.unlink()
    return {name: record_cases[name] for name in names if name in record_cases}


def write_record(record_file, document: dict, pictures_dir) -> None:
    record_file.write_text(json.dumps(document, indent=1) + "\n")
    total = sum(p.stat().st_size for p in pictures_dir.glob("*.png"))
    print(f"wrote {record_file.relative_to(fc.ROOT)} ({len(document['cases'])} cases; pictures {total / 1e6:.2f} MB; "
          f"WebGL renderer {', '.join(document['webgl_renderer'])})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="PATTERN", help="re-record only the cases matching these")
    parser.add_argument("--reframe", action="store_true", help="rewrite the samples' camera files")
    parser.add_argument("--rasterizer", default="swiftshader", choices=RASTERIZERS,
                        help="WebGL's rasteriser (default swiftshader, the issue's harness; llvmpipe writes "
                             "the llvmpipe set)")
    args = parser.parse_args(argv)
    pictures_dir, record_file = fc.PICTURES_DIRS[args.rasterizer], fc.RECORD_FILES[args.rasterizer]

    chosen = choose(args.only)
    if not chosen:
        print(f"no case matches {' '.join(args.only)}", file=sys.stderr)
        return 2
    frame_cameras(chosen, args.reframe)

    record = fc.recorded(args.rasterizer) if args.only else {"cases": {}}
    versions = {"babylon": package_version("babylonjs"), "babylon_loaders": package_version("babylonjs-loaders")}
    if args.only and record.get("versions", versions) != versions:
        print(f"note: the other cases were recorded with {record.get('versions')}, these with {versions}",
              file=sys.stderr)

    def check_info(info):
        if info["babylon"] != versions["babylon"]:
            raise SystemExit(f"the page ran Babylon.js {info['babylon']}, not {versions['babylon']}")

    with Recorder(rasterizer=args.rasterizer) as recorder:
        ordered = record_pictures(recorder, chosen, record.get("cases", {}),
                                  pictures_dir, check_info, not args.only)
    where = {"swiftshader": "WebGL2 on SwiftShader",
             "llvmpipe": "WebGL2 on Mesa llvmpipe through ANGLE's GL backend on EGL"}[args.rasterizer]
    document = {
        "description": "Babylon.js's own pictures of the fidelity cases (tests/fidelity_cases.py), drawn by "
                       f"tests/babylon_render/record.py in headless Chromium ({where}): right-handed "
                       "scene, the file's rest pose, HDRCubeTexture(environment, scene, 256) as the only light, "
                       "no skybox, the tone mapping and exposure given (contrast 1), boneviewer's camera, "
                       "transparent background, no antialiasing. Inputs are recorded by sha256; a picture whose "
                       "inputs changed must be recorded again.",
        "generator": "tests/babylon_render/record_all.py"
                     + ("" if args.rasterizer == "swiftshader" else f" --rasterizer {args.rasterizer}"),
        "versions": versions, "cases": ordered,
    }
    document["rasterizer"] = args.rasterizer
    document["webgl_renderer"] = sorted({c["webgl_renderer"] for c in ordered.values()})
    write_record(record_file, document, pictures_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
