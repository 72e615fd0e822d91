"""FBX and USD against the tools a user would pick instead, timed side by side in one run
(ratios; this machine is shared and noisy, so rounds interleave the two and medians are shown).

    .venv/bin/python scripts/bench_formats.py [--rounds N] [--f3d PYTHON]

1. FBX, process start to the first PNG: ``boneviewer render FILE.fbx --out a.png --size 512x512``
   against f3d 4.0 (``pip install f3d`` in its own venv; its FBX reader is Assimp), default
   settings, the same file, 512x512, through its Python module with an EGL engine (the f3d
   command line needs a display): a fresh process each, from start to the PNG on disk.
2. USD, loading a character: ``viewer.usd.load_usd`` against usd-core itself opening the stage
   and computing every skinned mesh's points once (UsdSkel.Cache, ComputeSkinningTransforms,
   SkinningQuery.ComputeSkinnedPoints), each in a fresh process, timed inside it from before the
   first import to the end (so both pay their imports), and again without the imports.
   The USD files are boneviewer's own exports of glTF samples (written once into a temp folder).

--f3d names the interpreter that has f3d (default: /tmp/f3dvenv/bin/python when there; the FBX
part is skipped, and says so, without one).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FBX_FILES = ["cesiumman.fbx", "fox_zup_cm.fbx", "robot_morphs.fbx"]
USD_SOURCES = ["CesiumMan/CesiumMan.glb", "Fox/Fox.glb", "RobotExpressive/RobotExpressive.glb"]

F3D = """
import sys, time
started = time.perf_counter()
import f3d
f3d.Engine.autoload_plugins()
engine = f3d.Engine.create_egl()
engine.window.size = 512, 512
engine.scene.add(sys.argv[1])
engine.window.render_to_image().save(sys.argv[2])
"""

BONEVIEWER_USD = """
import sys, time
started = time.perf_counter()
from viewer.usd import load_usd
imported = time.perf_counter()
load_usd(sys.argv[1])
done = time.perf_counter()
print(done - started, done - imported)
"""

USDSKEL = """
import sys, time
started = time.perf_counter()
from pxr import Usd, UsdGeom, UsdSkel
imported = time.perf_counter()
stage = Usd.Stage.Open(sys.argv[1])
cache = UsdSkel.Cache()
code = Usd.TimeCode.Default()
for prim in stage.Traverse():
    if prim.IsA(UsdSkel.Root):
        root = UsdSkel.Root(prim)
        cache.Populate(root, Usd.PrimDefaultPredicate)
        for binding in cache.ComputeSkelBindings(root, Usd.PrimDefaultPredicate):
            transforms = cache.GetSkelQuery(binding.GetSkeleton()).ComputeSkinningTransforms(code)
            for query in binding.GetSkinningTargets():
                points = UsdGeom.Mesh(query.GetPrim()).GetPointsAttr().Get(code)
                query.ComputeSkinnedPoints(transforms, points, code)
done = time.perf_counter()
print(done - started, done - imported)
"""


def wall(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - started


def inside(command: list[str]) -> tuple[float, float]:
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    total, after_import = done.stdout.split()[-2:]
    return float(total), float(after_import)


def fbx_part(rounds: int, f3d: str | None, out: Path) -> None:
    if f3d is None:
        print("FBX: f3d not found (pip install f3d into a venv, then --f3d ITS_PYTHON); skipped")
        return
    boneviewer = str(ROOT / ".venv" / "bin" / "boneviewer")
    print(f"FBX, process start to a 512x512 PNG, median of {rounds} interleaved rounds (seconds):")
    print(f"{'file':<22}{'boneviewer':>12}{'f3d':>10}{'ratio':>8}")
    for name in FBX_FILES:
        path = ROOT / "tests" / "data" / "fbx" / name
        ours, theirs = [], []
        for _ in range(rounds):
            ours.append(wall([boneviewer, "render", str(path), "--out", str(out / "b.png"), "--size", "512x512"]))
            theirs.append(wall([f3d, "-c", F3D, str(path), str(out / "f.png")]))
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"{name:<22}{a:>12.3f}{b:>10.3f}{a / b:>8.2f}")


def usd_part(rounds: int, out: Path) -> None:
    from viewer.loaders import load_model
    from viewer.usd.writer import save_usd

    print(f"\nUSD, loading a character, median of {rounds} interleaved rounds, each a fresh process (seconds):")
    print(f"{'file':<22}{'boneviewer':>12}{'usd-core':>10}{'ratio':>8}   without imports: "
          f"{'boneviewer':>10}{'usd-core':>10}{'ratio':>8}")
    python = sys.executable
    for source in USD_SOURCES:
        path = out / (Path(source).stem + ".usdz")
        save_usd(load_model(ROOT / "tests" / "data" / "gltf-samples" / source), path)
        ours, theirs = [], []
        for _ in range(rounds):
            ours.append(inside([python, "-c", BONEVIEWER_USD, str(path)]))
            theirs.append(inside([python, "-c", USDSKEL, str(path)]))
        a, b = (statistics.median(t[0] for t in ours), statistics.median(t[0] for t in theirs))
        c, d = (statistics.median(t[1] for t in ours), statistics.median(t[1] for t in theirs))
        print(f"{path.name:<22}{a:>12.3f}{b:>10.3f}{a / b:>8.2f}   {'':>17}{c:>10.3f}{d:>10.3f}{c / d:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--f3d", help="an interpreter with f3d installed")
    args = parser.parse_args()
    f3d = args.f3d or ("/tmp/f3dvenv/bin/python" if Path("/tmp/f3dvenv/bin/python").exists() else None)
    # Byte-code compiled first, as an installed package has it (pip compiles at install; a
    # checkout under PYTHONDONTWRITEBYTECODE would compile every module in every process).
    import compileall

    compileall.compile_dir(str(ROOT / "viewer"), quiet=1)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        for warm in FBX_FILES[:1]:  # the first process of each pays the disk cache alone
            subprocess.run([str(ROOT / ".venv" / "bin" / "boneviewer"), "info", str(ROOT / "tests/data/fbx" / warm)],
                           capture_output=True)
        fbx_part(args.rounds, f3d, out)
        usd_part(args.rounds, out)
    print(json.dumps({"python": sys.version.split()[0]}))


if __name__ == "__main__":
    main()
