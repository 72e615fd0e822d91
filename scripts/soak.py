#!/usr/bin/env python3
"""Soak: render the viewer (scene + panel) headless for many frames, swapping models, and
print resident memory, GL object counts and Python object counts as it goes.

    .venv/bin/python scripts/soak.py [--frames 10000] [--swap-every 250] [--size 640x360]

Not a test: it prints figures (the issue's bar is under 5 MB of resident growth over 10,000
frames with model swaps, measured after the first full cycle of models has warmed caches).
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from viewer.render.headless import OffscreenTarget, create_headless_context  # noqa: E402
from viewer.ui.session import ViewerSession  # noqa: E402

SAMPLES = ROOT / "tests" / "data" / "gltf-samples"
MODELS = [None, SAMPLES / "CesiumMan/CesiumMan.glb", SAMPLES / "Fox/Fox.glb", SAMPLES / "RiggedFigure/RiggedFigure.gltf"]


def resident_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def gl_counter():
    """Count live GL objects by asking the driver which names exist (glIs*)."""
    egl = ctypes.CDLL("libEGL.so.1")
    egl.eglGetProcAddress.restype = ctypes.c_void_p
    kinds = {}
    for kind in ("Buffer", "Texture", "VertexArray", "Program", "Framebuffer", "Renderbuffer"):
        address = egl.eglGetProcAddress(f"glIs{kind}".encode())
        kinds[kind] = ctypes.CFUNCTYPE(ctypes.c_ubyte, ctypes.c_uint)(address)

    def count(limit=4096):
        return {kind: sum(1 for name in range(1, limit) if probe(name)) for kind, probe in kinds.items()}
    return count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=10_000)
    parser.add_argument("--swap-every", type=int, default=250)
    parser.add_argument("--size", default="640x360")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    ctx = create_headless_context()
    target = OffscreenTarget(ctx, size)
    session = ViewerSession(ctx, __import__("viewer.character", fromlist=["x"]).build_character())
    count_gl = gl_counter()
    warm_frame = args.swap_every * len(MODELS) * 3  # one full period of models x paths
    baseline = None
    started = time.perf_counter()
    print(f"{'frame':>7} {'model':>22} {'RSS MB':>8} {'py objs':>8}  GL objects")
    for frame in range(1, args.frames + 1):
        if frame % args.swap_every == 0:
            swap = frame // args.swap_every
            assert session.open_model(MODELS[swap % len(MODELS)]), session.editor.status
            # Every model on every path (uniform array, CPU skinning, bone texture), then repeat.
            path = (swap // len(MODELS)) % 3
            session.editor.display.cpu_skinning, session.editor.display.bone_texture = path == 1, path == 2
        session.frame(size, 1 / 60, target.framebuffer)
        # End the frame as a window's buffer swap (or a read-back) does. Without it llvmpipe
        # keeps every frame's bone uploads queued, and memory climbs for that reason alone.
        ctx.finish()
        if frame == warm_frame:
            gc.collect()
            baseline = resident_mb()
        if frame % 1000 == 0 or frame == args.frames:
            gc.collect()
            counts = count_gl()
            print(f"{frame:7d} {session.model_name:>22} {resident_mb():8.1f} {len(gc.get_objects()):8d}  "
                  + " ".join(f"{k.lower()}s={v}" for k, v in counts.items()), flush=True)
    elapsed = time.perf_counter() - started
    gc.collect()
    final = resident_mb()
    print(f"\n{args.frames} frames in {elapsed:.1f} s ({args.frames / elapsed:.0f} fps at {args.size}), "
          f"{args.frames // args.swap_every} model swaps")
    if baseline is not None:
        growth = final - baseline
        verdict = "under" if growth < 5 else "OVER"
        print(f"resident memory after warm-up (frame {warm_frame}): {baseline:.1f} MB, at the end: {final:.1f} MB, "
              f"growth {growth:+.2f} MB ({verdict} the 5 MB bar)")
    session.release()
    target.release()
    ctx.release()
    return 0


if __name__ == "__main__":
    sys.exit(main())
