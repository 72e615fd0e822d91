#!/usr/bin/env python3
"""A frame with dual-quaternion skinning against the same frame with linear blend skinning
(issue 46: at most 1.1x), in interleaved rounds.

    .venv/bin/python scripts/bench_skinning.py [--rounds 7] [--frames 20] [--size 512x512]

A frame: the model's first clip sampled at a new time, then drawn headless and read back (the
mesh alone, as `render --no-skeleton --no-grid`), for the GPU paths (uniform array, bone texture)
and the CPU path (numpy skinning and upload); and ``mesh.skinned_positions()`` alone (the
compiled kernel's loop, then numpy's). Each round times ``--frames`` frames of each skinning,
the two in alternating order; the figure is the median over rounds of each round's median, and
the ratio dq / lbs is printed with the 1.1x limit. A benchmark, not a test: it prints what it
measured.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SAMPLES = ROOT / "tests" / "data" / "gltf-samples"
MODELS = {"CesiumMan": SAMPLES / "CesiumMan" / "CesiumMan.glb", "Fox": SAMPLES / "Fox" / "Fox.glb",
          "RobotExpressive": SAMPLES / "RobotExpressive" / "RobotExpressive.glb"}
LIMIT = 1.1


def size(text: str):
    width, height = (int(v) for v in text.lower().split("x"))
    return width, height


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--frames", type=int, default=20)
    parser.add_argument("--size", type=size, default=(512, 512))
    args = parser.parse_args()

    import logging

    logging.getLogger("boneviewer").disabled = True
    from viewer.camera import framed_camera
    from viewer.loaders import load_model
    from viewer.model import native
    from viewer.options import RenderOptions
    from viewer.render.headless import HeadlessRenderer
    from viewer.render.renderer import Renderer

    options = RenderOptions(show_skeleton=False, show_grid=False)
    rows = []
    with HeadlessRenderer(args.size) as headless:
        for name, path in MODELS.items():
            scene = load_model(path)
            clip = scene.animations[0]
            camera = framed_camera(scene)
            counter = [0]

            def pose():
                counter[0] += 1
                clip.apply((counter[0] * 0.037) % max(clip.duration, 1e-3))

            paths = {}
            for label, storage, cpu in (("GPU, uniform array", "uniform", False), ("GPU, bone texture", "texture", False),
                                        ("CPU skinning", "auto", True)):
                renderer = Renderer(headless.ctx, bone_storage=storage, cpu_skinning=cpu)

                def frame(renderer=renderer):
                    pose()
                    headless.target.framebuffer.use()
                    renderer.render(scene, camera, args.size, options)
                    headless.target.read()

                paths[label] = (frame, renderer)

            def positions(use_c):
                def frame():
                    pose()
                    saved = native.ckernel
                    native.ckernel = saved if use_c else None
                    try:
                        for mesh in scene.skinned_meshes:
                            mesh.skinned_positions()
                    finally:
                        native.ckernel = saved
                return frame

            paths["skinned_positions, " + native.name()] = (positions(True), None)
            paths["skinned_positions, numpy"] = (positions(False), None)
            for label, (frame, renderer) in paths.items():
                medians = {"lbs": [], "dq": []}
                for mode in ("lbs", "dq"):  # warm-up: programs built, caches filled
                    scene.set_skinning(mode)
                    for _ in range(3):
                        frame()
                for round_ in range(args.rounds):
                    order = ("lbs", "dq") if round_ % 2 == 0 else ("dq", "lbs")
                    for mode in order:
                        scene.set_skinning(mode)
                        times = []
                        for _ in range(args.frames):
                            started = time.perf_counter()
                            frame()
                            times.append(time.perf_counter() - started)
                        medians[mode].append(statistics.median(times))
                lbs, dq = statistics.median(medians["lbs"]), statistics.median(medians["dq"])
                rows.append((name, label, lbs, dq))
                print(f"{name:16} {label:28} lbs {lbs * 1e3:8.3f} ms   dq {dq * 1e3:8.3f} ms   dq/lbs {dq / lbs:5.2f}x"
                      f"   {'ok' if dq / lbs <= LIMIT else 'OVER ' + str(LIMIT) + 'x'}", flush=True)
                if renderer is not None:
                    renderer.release()
    drawn = [dq / lbs for _, label, lbs, dq in rows if not label.startswith("skinned_positions")]
    print(f"frames drawn: dq/lbs from {min(drawn):.2f}x to {max(drawn):.2f}x (limit {LIMIT}x): "
          f"{'within' if max(drawn) <= LIMIT else 'OVER'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
