"""Benchmark of `boneviewer synth` against the issue's targets; prints the figures (not a test).

    .venv/bin/python scripts/bench_synth.py [--model CesiumMan.glb] [--count 200] [--size 512x512] [--workers 2]

Runs `boneviewer synth MODEL --count N --size 512x512 --workers 2` (every label: images, depth,
parts, annotations.json, index.html) into a fresh folder, then, in the same run, `boneviewer
render MODEL --frames ... --out-dir` writing N plain PNGs of the same model at the same size,
and prints both rates (images per second, the command's whole wall time, start-up included) and
their ratio. The issue's targets: at least 20 labelled images per second with 2 workers, and at
least half of render's rate.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "tests" / "data" / "gltf-samples" / "CesiumMan" / "CesiumMan.glb"


def timed(*arguments: str) -> float:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "viewer.cli", *arguments], capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"boneviewer {arguments[0]} failed ({result.returncode}): {result.stderr.strip()[-500:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=MODEL)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--size", default="512x512")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-synth-") as temp:
        out = Path(temp) / "synth"
        synth_seconds = timed("synth", str(args.model), "--out", str(out), "--count", str(args.count), "--size",
                              args.size, "--workers", str(args.workers))
        written = json.loads((out / "annotations.json").read_text())
        assert len(written["images"]) == args.count
        frames = Path(temp) / "frames"
        step = 0.01  # within one loop of the model's clip: every frame a new pose, as synth's draws
        render_seconds = timed("render", str(args.model), "--frames", f"0:{(args.count - 1) * step:.4f}:{step}",
                               "--out-dir", str(frames), "--size", args.size)
        assert len(list(frames.glob("*.png"))) == args.count
    synth_rate, render_rate = args.count / synth_seconds, args.count / render_seconds
    print(f"model {args.model.name}, {args.count} images at {args.size}")
    print(f"synth, every label, {args.workers} workers: {synth_seconds:6.2f} s  {synth_rate:6.1f} images/s  "
          f"(target >= 20)")
    print(f"render --frames, plain PNGs:        {render_seconds:6.2f} s  {render_rate:6.1f} images/s")
    print(f"ratio synth / render: {synth_rate / render_rate:.2f} (target >= 0.5)")


if __name__ == "__main__":
    main()
