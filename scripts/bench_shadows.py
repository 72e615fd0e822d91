"""What shadows cost a frame (issue 45): CesiumMan at 512x512, frames with and without shadows
interleaved (so the machine's load falls on both alike), each timed to the pixels read back;
prints the medians and their ratio (the issue asks for at most 1.3x).

    python scripts/bench_shadows.py [--frames N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def main() -> int:
    from samples import CESIUM_MAN

    from viewer.camera import framed_camera
    from viewer.gltf import load_gltf
    from viewer.options import RenderOptions
    from viewer.render.headless import HeadlessRenderer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=30)
    args = parser.parse_args()
    scene = load_gltf(str(CESIUM_MAN))
    clip = scene.animations[0]
    camera = framed_camera(scene)
    times = {False: [], True: []}
    with HeadlessRenderer((512, 512)) as renderer:
        for shadows in (False, True):  # warm: programs built, maps made
            renderer.render(scene, camera, RenderOptions(shadows=shadows, show_skeleton=False))
        for frame in range(args.frames):
            clip.apply(frame / 30.0 % max(clip.duration, 1e-3))
            scene.prepare()
            for shadows in ((False, True) if frame % 2 == 0 else (True, False)):
                start = time.perf_counter()
                renderer.render(scene, camera, RenderOptions(shadows=shadows, show_skeleton=False))
                times[shadows].append(time.perf_counter() - start)
    without, with_ = statistics.median(times[False]) * 1e3, statistics.median(times[True]) * 1e3
    print(f"CesiumMan 512x512, {args.frames} frames each, interleaved: without shadows {without:.1f} ms, "
          f"with shadows {with_:.1f} ms, ratio {with_ / without:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
