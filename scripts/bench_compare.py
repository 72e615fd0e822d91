"""Side by side in one run: the numpy kernel, the compiled kernel and Babylon.js (live, in Node),
for the skeleton update of ``boneviewer bench`` and one animation frame of Fox and CesiumMan;
with ``--pygfx PYTHON``, boneviewer's drawing against pygfx 0.17's, as issue 27 measures it.

    python scripts/bench_compare.py [--rounds 5] [--before DIR] [--pygfx PYTHON [--no-kernels]]

Rounds are interleaved (numpy, C, Babylon, numpy, C, Babylon, ...) and each figure is the median
of the rounds' medians, so a noisy shared machine weighs on all three alike. Babylon runs only
when ``node`` and tests/babylon/node_modules are there; the animation rows only when the glTF
samples of tests/data are (a checkout). With ``--before DIR`` (a copy of an older tree, e.g.
``git archive <commit> | tar -x -C DIR``) the process start to first PNG of both trees is
timed too, interleaved. A benchmark, not a test: it prints what it measured.

``--pygfx PYTHON`` names an interpreter with pygfx 0.17 (not a boneviewer dependency: a venv of
its own, e.g. ``python3 -m venv bench-venv && bench-venv/bin/pip install pygfx==0.17.0
gltflib imageio``; headless wgpu needs a Vulkan driver: Debian's ``mesa-vulkan-drivers``, lavapipe
on a machine without a GPU). Then, in interleaved rounds: CesiumMan animated (its first clip, a
new time each frame), drawn and read back at 512x512 and 1280x720, boneviewer (the mesh alone: no
skeleton overlay, no grid, as pygfx draws it) against pygfx with its own lit material
(scripts/bench_pygfx.py: MeshStandardMaterial lit by the same .hdr as its scene environment, the
same camera), frames per second (medians); and process start to first PNG: ``boneviewer render
MODEL --out x.png`` with the environment cache empty (prefiltering included) and warm, against
pygfx's script loading, lighting and writing the same picture. ``--environment FILE.hdr`` is the
light of both (default: ../shared/pbr/studio.hdr); ``--no-kernels`` leaves out the kernel table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from viewer.bench import (CROWD, REPETITIONS as REPS, SIZES, _median_us, animation_rows, crowd_frame,  # noqa: E402
                          skeleton_frame)
from viewer.model import native  # noqa: E402

CROWD_REPS = 40
BABYLON = ROOT / "tests" / "babylon" / "node_modules" / "@babylonjs" / "core"
SAMPLES = ROOT / "tests" / "data" / "gltf-samples"
MODELS = [SAMPLES / "Fox" / "Fox.glb", SAMPLES / "CesiumMan" / "CesiumMan.glb"]


def ours_round(which: str) -> dict:
    """One round of our skeleton rows with the given kernel (built fresh under it)."""
    saved = native.ckernel
    native.ckernel = saved if which == "C" else None
    try:
        result = {}
        for n in SIZES:
            result[str(n)] = _median_us(skeleton_frame(n)[0], REPS[n], warmup=20)
        result["crowd"] = _median_us(crowd_frame()[0], CROWD_REPS, warmup=3)
        for label, us, _, _ in animation_rows([m for m in MODELS if m.exists()], quick=False):
            result[label] = us
        return result
    finally:
        native.ckernel = saved


def babylon_round() -> dict | None:
    if shutil.which("node") is None or not BABYLON.exists():
        return None
    spec = {"sizes": list(SIZES), "reps": {str(n): r for n, r in REPS.items()}, "crowd": list(CROWD),
            "crowd_reps": CROWD_REPS, "rounds": 1}
    out = subprocess.run(["node", str(ROOT / "scripts" / "bench_babylon.mjs"), str(BABYLON), json.dumps(spec)],
                         capture_output=True, text=True, check=True, timeout=600)
    return {key: values[0] for key, values in json.loads(out.stdout).items()}


def first_png(tree: Path, env_extra: dict, folder: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), **env_extra}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "viewer.cli", "render", "--out", str(folder / "x.png")], check=True,
                   stdout=subprocess.DEVNULL, cwd=folder, env=env)
    return time.perf_counter() - start


# --- against pygfx (issue 27) ---------------------------------------------------------------------
PYGFX_MODEL = SAMPLES / "CesiumMan" / "CesiumMan.glb"
PYGFX_SIZES = ((512, 512), (1280, 720))
FIRST_PNG_SIZE = (800, 600)  # boneviewer render's default size
PYGFX_FRAMES = 60
STUDIO_HDR = ROOT.parent / "shared" / "pbr" / "studio.hdr"


def camera_file(size, folder: Path) -> Path:
    """boneviewer's camera for the model's first clip at ``size`` (framed over the clip, as
    render frames a sequence), written for pygfx: eye, target, near, far and pygfx's fov (which
    spans the mean of the view's width and height, not its height)."""
    from viewer.camera import framed_camera
    from viewer.loaders import load_model

    scene = load_model(PYGFX_MODEL)
    clip = scene.animations[0]
    aspect = size[0] / size[1]
    times = list(np.linspace(0.0, clip.duration, 24))
    camera = framed_camera(scene, aspect=aspect, times=times, pose_at=clip.apply)
    near = max(camera.distance * camera.near_ratio, 1e-4)
    fov = np.degrees(2.0 * np.arctan(np.tan(np.radians(camera.fov_y) / 2.0) * (1.0 + aspect) / 2.0))
    path = folder / f"camera-{size[0]}x{size[1]}.json"
    path.write_text(json.dumps({"eye": [float(v) for v in camera.position], "target": [float(v) for v in camera.target],
                                "fov": float(fov), "near": near, "far": camera.distance * 100.0,
                                "boneviewer": {"yaw": camera.yaw, "pitch": camera.pitch, "distance": camera.distance,
                                               "target": [float(v) for v in camera.target], "fov": camera.fov_y}}))
    return path


class OursFrames:
    """boneviewer's frame: the clip at a new time, prepare(), the mesh drawn and read back."""

    def __init__(self, size, environment: str):
        from viewer.camera import CameraDescription
        from viewer.loaders import load_model
        from viewer.options import RenderOptions
        from viewer.render.headless import HeadlessRenderer

        self.scene = load_model(PYGFX_MODEL)
        self.clip = self.scene.animations[0]
        self.headless = HeadlessRenderer(size)
        self.options = RenderOptions(show_skeleton=False, show_grid=False, environment=environment)
        with tempfile.TemporaryDirectory() as folder:
            saved = json.loads(camera_file(size, Path(folder)).read_text())["boneviewer"]
        self.camera = CameraDescription.from_dict(saved).camera(self.scene, size[0] / size[1])
        self.time = 0.0

    def frame(self, _i=None) -> None:
        self.time = (self.time + 1.0 / 30.0) % self.clip.duration
        self.clip.apply(self.time)
        self.headless.render(self.scene, self.camera, self.options)

    def fps(self, frames: int) -> float:
        for _ in range(10):
            self.frame()
        return 1e6 / _median_us(self.frame, frames, warmup=0)


def pygfx_run(python: str, mode: str, size, third, camera: Path, environment: str) -> dict:
    out = subprocess.run([python, str(ROOT / "scripts" / "bench_pygfx.py"), mode, str(PYGFX_MODEL),
                          f"{size[0]}x{size[1]}", str(third), str(camera), environment],
                         capture_output=True, text=True, timeout=600, env={**os.environ, "XDG_RUNTIME_DIR": "/tmp"})
    if out.returncode != 0:
        raise SystemExit(f"pygfx's side failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def timed_process(command, env=None, cwd=None) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    return time.perf_counter() - start


def against_pygfx(python: str, rounds: int, environment: str) -> None:
    """The frame rates and the first PNG, boneviewer and pygfx in interleaved rounds."""
    fps = {(who, size): [] for who in ("boneviewer", "pygfx") for size in PYGFX_SIZES}
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        cameras = {size: camera_file(size, folder) for size in (*PYGFX_SIZES, FIRST_PNG_SIZE)}
        ours = {size: OursFrames(size, environment) for size in PYGFX_SIZES}
        lit = None
        for _ in range(rounds):
            for size in PYGFX_SIZES:
                fps[("boneviewer", size)].append(ours[size].fps(PYGFX_FRAMES))
                result = pygfx_run(python, "frames", size, PYGFX_FRAMES, cameras[size], environment)
                fps[("pygfx", size)].append(result["fps"])
                lit = result["lit_meshes"]
        for renderer in ours.values():
            renderer.headless.release()
        first = {"boneviewer (cache empty)": [], "boneviewer (cache warm)": [], "pygfx": []}
        # One XDG_CACHE_HOME: Mesa's shader cache stays warm (as pygfx's does in ~/.cache), and
        # "cache empty" removes only boneviewer's own (the prefiltered environments).
        cache = folder / "cache"
        command = [sys.executable, "-m", "viewer.cli", "render", str(PYGFX_MODEL), "--out", str(folder / "ours.png"),
                   "--environment", environment]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(cache)}
        timed_process(command, env)  # Mesa's shader cache filled
        for _ in range(max(rounds, 5)):
            shutil.rmtree(cache / "boneviewer", ignore_errors=True)
            first["boneviewer (cache empty)"].append(timed_process(command, env))
            first["boneviewer (cache warm)"].append(timed_process(command, env))
            first["pygfx"].append(timed_process(
                [python, str(ROOT / "scripts" / "bench_pygfx.py"), "first-png", str(PYGFX_MODEL),
                 f"{FIRST_PNG_SIZE[0]}x{FIRST_PNG_SIZE[1]}", str(folder / "pygfx.png"), str(cameras[FIRST_PNG_SIZE]),
                 environment], {**os.environ, "XDG_RUNTIME_DIR": "/tmp"}))
    print()
    print(f"boneviewer against pygfx 0.17 ({lit} MeshStandardMaterial meshes lit by its scene environment from "
          f"{Path(environment).name}), {rounds} interleaved rounds, medians; load average {os.getloadavg()[0]:.1f}")
    print(f"{PYGFX_MODEL.name}, first clip, a new time each frame, drawn and read back:")
    for size in PYGFX_SIZES:
        a, b = np.median(fps[("boneviewer", size)]), np.median(fps[("pygfx", size)])
        print(f"  {size[0]}x{size[1]}: boneviewer {a:6.1f} fps, pygfx {b:6.1f} fps, ratio {a / b:.2f}x")
    print(f"process start to first PNG ({FIRST_PNG_SIZE[0]}x{FIRST_PNG_SIZE[1]}), {len(first['pygfx'])} runs, median:")
    pygfx_median = float(np.median(first["pygfx"]))
    for label, values in first.items():
        print(f"  {label:26s} {np.median(values):.3f} s  (min {min(values):.3f} s)  "
              f"{np.median(values) / pygfx_median:.2f}x pygfx's")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", type=Path, help="an older tree to time the first PNG against")
    parser.add_argument("--pygfx", metavar="PYTHON", help="an interpreter with pygfx 0.17: draw against it")
    parser.add_argument("--environment", metavar="FILE.hdr", default=str(STUDIO_HDR),
                        help="the light of both sides in the pygfx comparison")
    parser.add_argument("--no-kernels", action="store_true", help="only the pygfx comparison")
    args = parser.parse_args()
    if args.no_kernels:
        if not args.pygfx:
            parser.error("--no-kernels leaves only the pygfx comparison: give --pygfx PYTHON")
        against_pygfx(args.pygfx, args.rounds, args.environment)
        return 0
    if native.ckernel is None:
        print(f"the compiled kernel is not available: {native.describe()}")
        return 1
    rounds = {"numpy": [], "C": [], "Babylon": []}
    for _ in range(args.rounds):
        rounds["numpy"].append(ours_round("numpy"))
        rounds["C"].append(ours_round("C"))
        babylon = babylon_round()
        if babylon is not None:
            rounds["Babylon"].append(babylon)
    median = {which: {key: float(np.median([r[key] for r in results])) for key in results[0]}
              for which, results in rounds.items() if results}
    print(f"Side by side, {args.rounds} interleaved rounds, medians (us per frame); numpy {np.__version__}, "
          f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}")
    header = ["case", "numpy kernel", "C kernel", "numpy/C"]
    if "Babylon" in median:
        header += ["Babylon.js", "C/Babylon", "numpy/Babylon"]
    lines = [header]
    for key in median["C"]:
        label = f"{int(key):,} bones" if key.isdigit() else ("crowd 100 x 100" if key == "crowd" else key)
        a, b = median["numpy"][key], median["C"][key]
        row = [label, f"{a:.1f}", f"{b:.1f}", f"{a / b:.1f}x"]
        if "Babylon" in median:
            c = median["Babylon"].get(key)
            row += ["-", "-", "-"] if c is None else [f"{c:.1f}", f"{b / c:.2f}x", f"{a / c:.2f}x"]
        lines.append(row)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for k, line in enumerate(lines):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))))
        if k == 0:
            print("  ".join("-" * w for w in widths))
    if args.before:
        times = {"before": [], "after (C kernel)": [], "after (BONEVIEWER_KERNEL=numpy)": []}
        with tempfile.TemporaryDirectory() as folder:
            for _ in range(7):
                times["before"].append(first_png(args.before, {}, Path(folder)))
                times["after (C kernel)"].append(first_png(ROOT, {}, Path(folder)))
                times["after (BONEVIEWER_KERNEL=numpy)"].append(first_png(ROOT, {"BONEVIEWER_KERNEL": "numpy"},
                                                                         Path(folder)))
        print()
        print("process start to first PNG (boneviewer render --out x.png), 7 interleaved runs, median:")
        for label, values in times.items():
            print(f"  {label:32s} {np.median(values):.3f} s  (min {min(values):.3f} s)")
    if args.pygfx:
        against_pygfx(args.pygfx, args.rounds, args.environment)
    return 0


if __name__ == "__main__":
    sys.exit(main())
